/*
 * yamljson.c -- YAML bodies to JSON and JSON to YAML, the way kube does it
 * with sigs.k8s.io/yaml over go-yaml v2, on libyaml's event parser and
 * emitter. See yamljson.h.
 *
 * Thread: any. Every call owns its parser or emitter and its trees; the only
 * shared state is a "C" locale object made once (pthread_once) so that
 * number parsing ignores the process locale.
 *
 * Reading (srv_yaml_to_json[_strict]). libyaml hands us events; we build the
 * jansson tree with an explicit stack of open collections (struct frame), so
 * hostile nesting costs heap, not C stack, and stops at YJ_MAX_DEPTH.
 * Invariants:
 *  1. frames[0..n_frames) are the open collections, outermost first. Each
 *     owns its container (new reference). A mapping frame holds at most one
 *     pending key; the next completed node is that key's value.
 *  2. A completed node goes to exactly one place: its parent (append, set,
 *     or merge when the key was "<<") or the document result. Anchored
 *     collections are also referenced from the anchor table and are never
 *     modified after completion; aliases deep-copy them, so the returned
 *     tree never shares a node with itself.
 *  3. Anchored scalars are kept as their event (text, tag, plainness); an
 *     alias decodes them again where it stands, as a key or as a value,
 *     exactly as go-yaml decodes the aliased node again.
 *  4. n_decode and n_alias count nodes the way go-yaml v2's decoder counts
 *     decodeCount and aliasCount (the document, every key and value, and for
 *     an alias the alias plus everything its target holds); the ratio check
 *     runs after every count. Our own caps bound what aliases may add.
 *  5. An anchor is registered when its node starts (so an alias inside it
 *     finds it open: "value contains itself") and filled when it ends, as
 *     go-yaml's parser registers anchors at the node's start.
 *
 * Scalars resolve as go-yaml v2's resolve() (YAML 1.1 booleans y/yes/on...,
 * Go's ParseInt/ParseUint base 0 with underscores removed, Go's ParseFloat,
 * timestamps kept as their text) and then become JSON as sigs.k8s.io/yaml's
 * convertToJSONableObject and encoding/json would make them: uint64 beyond
 * int64 and float64 become reals, ±Inf and NaN are refused, non-string keys
 * take their Go string form (floats at float32 precision, as sigs does).
 *
 * Writing (srv_json_to_yaml). An explicit stack walks the tree and feeds
 * libyaml's emitter the events go-yaml's encoder would: keys sorted by
 * go-yaml's keyList order, strings that would resolve to something else
 * double-quoted, strings with a newline as literal blocks (libyaml then
 * picks the final style, as go-yaml's port of it does).
 */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yamljson.h"

/* Nesting bound: deep enough for any real object (kube's own schemas stop
   far earlier), shallow enough that recursive walkers elsewhere (jansson's
   dump and deep copy) stay well inside a thread stack. */
#define YJ_MAX_DEPTH 1000
/* What aliases may add: 1,000,000 nodes (~100 MB of jansson values at
   worst) and 16 MiB of scalar text. A body is at most 3 MiB
   (MaxRequestBodyBytes), so nothing but aliasing gets near these. */
#define YJ_MAX_ALIAS_NODES 1000000u
#define YJ_MAX_ALIAS_BYTES (16u << 20)
/* go-yaml v2's alias ratio window (decode.go allowedAliasRatio). */
#define YJ_RATIO_LOW 400000.0
#define YJ_RATIO_HIGH 4000000.0

#define LONG_TAG_PREFIX "tag:yaml.org,2002:"

/* ------------------------------------------------------------------------ */
/* Locale-independent number conversion.                                     */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* strtod in the "C" locale; s is NUL-terminated. */
static double c_strtod(const char *s)
{
	pthread_once(&c_locale_once, c_locale_init);
	if (c_locale)
		return strtod_l(s, NULL, c_locale);
	return strtod(s, NULL);
}

static float c_strtof(const char *s)
{
	pthread_once(&c_locale_once, c_locale_init);
	if (c_locale)
		return strtof_l(s, NULL, c_locale);
	return strtof(s, NULL);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Go's strconv.FormatFloat(v, 'g', -1, bits) for finite v: the shortest
 * digits that read back as the same float64 (or float32 when f32), printed
 * as %e when the exponent is < -4 or >= 6 (Go's rule for shortest 'g'),
 * else as %f. out needs 40 bytes.
 */
static void go_format_float(double v, bool f32, char *out, size_t cap)
{
	char tmp[64], digits[24];
	int nd = 0, e10 = 0;

	if (v == 0) {
		snprintf(out, cap, "%s", signbit(v) ? "-0" : "0");
		return;
	}
	float x = (float)v;
	int maxp = f32 ? 9 : 17;
	for (int p = 1; p <= maxp; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, f32 ? (double)x : v);
		/* Rebuild as d.ddde±x with a '.' whatever the locale. */
		nd = 0;
		char *q = tmp;
		while (*q && *q != 'e') {
			if (is_digit(*q) && nd < (int)sizeof digits - 1)
				digits[nd++] = *q;
			q++;
		}
		digits[nd] = '\0';
		e10 = *q == 'e' ? atoi(q + 1) : 0;
		char back[64];
		snprintf(back, sizeof back, "%c.%se%d", digits[0], digits + 1,
			 e10);
		/* back has no sign: compare magnitudes */
		if (f32 ? c_strtof(back) == fabsf(x) : c_strtod(back) == fabs(v))
			break;
	}
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';

	size_t o = 0;
#define PUT(c)                                                                 \
	do {                                                                   \
		if (o + 1 < cap)                                               \
			out[o++] = (c);                                        \
	} while (0)
	if (signbit(v))
		PUT('-');
	if (e10 < -4 || e10 >= 6) {
		PUT(digits[0]);
		if (nd > 1) {
			PUT('.');
			for (int i = 1; i < nd; i++)
				PUT(digits[i]);
		}
		PUT('e');
		PUT(e10 < 0 ? '-' : '+');
		int ae = e10 < 0 ? -e10 : e10;
		if (ae >= 100)
			PUT((char)('0' + ae / 100));
		PUT((char)('0' + ae / 10 % 10));
		PUT((char)('0' + ae % 10));
	} else {
		int dp = e10 + 1; /* digits before the point */
		if (dp > 0) {
			for (int i = 0; i < dp; i++)
				PUT(i < nd ? digits[i] : '0');
		} else {
			PUT('0');
		}
		int decimals = nd - dp > 0 ? nd - dp : 0;
		if (decimals > 0) {
			PUT('.');
			for (int i = 0; i < decimals; i++) {
				int j = dp + i;
				PUT(j >= 0 && j < nd ? digits[j] : '0');
			}
		}
	}
#undef PUT
	out[o] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Scalar resolution, after go-yaml v2 resolve.go.                          */

enum tagk {
	TK_NONE, /* no tag */
	TK_STR,
	TK_BOOL,
	TK_INT,
	TK_FLOAT,
	TK_NULL,
	TK_TIMESTAMP,
	TK_BINARY,
	TK_MERGE,
	TK_OTHER, /* any other tag, "!" included: the text stays a string */
};

static enum tagk tag_kind(const char *tag)
{
	static const struct {
		const char *name;
		enum tagk kind;
	} known[] = {
	    {"str", TK_STR},	   {"bool", TK_BOOL},
	    {"int", TK_INT},	   {"float", TK_FLOAT},
	    {"null", TK_NULL},	   {"timestamp", TK_TIMESTAMP},
	    {"binary", TK_BINARY}, {"merge", TK_MERGE},
	};
	size_t plen = sizeof LONG_TAG_PREFIX - 1;

	if (!tag)
		return TK_NONE;
	if (strncmp(tag, LONG_TAG_PREFIX, plen) != 0)
		return TK_OTHER;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(tag + plen, known[i].name) == 0)
			return known[i].kind;
	return TK_OTHER;
}

static const char *short_tag(enum tagk k)
{
	switch (k) {
	case TK_STR:
		return "!!str";
	case TK_BOOL:
		return "!!bool";
	case TK_INT:
		return "!!int";
	case TK_FLOAT:
		return "!!float";
	case TK_NULL:
		return "!!null";
	case TK_TIMESTAMP:
		return "!!timestamp";
	case TK_BINARY:
		return "!!binary";
	case TK_MERGE:
		return "!!merge";
	case TK_NONE:
	case TK_OTHER:
		break;
	}
	return "!!str";
}

enum rk { RK_NULL, RK_BOOL, RK_INT, RK_UINT, RK_FLOAT, RK_STR, RK_TIMESTAMP };

struct rv {
	enum rk kind;
	bool b;
	int64_t i;
	uint64_t u;
	double f;
};

static enum tagk rk_tag(enum rk k)
{
	switch (k) {
	case RK_NULL:
		return TK_NULL;
	case RK_BOOL:
		return TK_BOOL;
	case RK_INT:
	case RK_UINT:
		return TK_INT;
	case RK_FLOAT:
		return TK_FLOAT;
	case RK_TIMESTAMP:
		return TK_TIMESTAMP;
	case RK_STR:
		break;
	}
	return TK_STR;
}

/* The words go-yaml v2 resolves by table (resolve.go resolveMapList). */
static const struct {
	const char *word;
	enum rk kind;
	int val; /* bool value, or float: 1 +Inf, -1 -Inf, 0 NaN */
} resolve_words[] = {
    {"y", RK_BOOL, 1},	     {"Y", RK_BOOL, 1},	      {"yes", RK_BOOL, 1},
    {"Yes", RK_BOOL, 1},     {"YES", RK_BOOL, 1},     {"true", RK_BOOL, 1},
    {"True", RK_BOOL, 1},    {"TRUE", RK_BOOL, 1},    {"on", RK_BOOL, 1},
    {"On", RK_BOOL, 1},	     {"ON", RK_BOOL, 1},      {"n", RK_BOOL, 0},
    {"N", RK_BOOL, 0},	     {"no", RK_BOOL, 0},      {"No", RK_BOOL, 0},
    {"NO", RK_BOOL, 0},	     {"false", RK_BOOL, 0},   {"False", RK_BOOL, 0},
    {"FALSE", RK_BOOL, 0},   {"off", RK_BOOL, 0},     {"Off", RK_BOOL, 0},
    {"OFF", RK_BOOL, 0},     {"", RK_NULL, 0},	      {"~", RK_NULL, 0},
    {"null", RK_NULL, 0},    {"Null", RK_NULL, 0},    {"NULL", RK_NULL, 0},
    {".nan", RK_FLOAT, 0},   {".NaN", RK_FLOAT, 0},   {".NAN", RK_FLOAT, 0},
    {".inf", RK_FLOAT, 1},   {".Inf", RK_FLOAT, 1},   {".INF", RK_FLOAT, 1},
    {"+.inf", RK_FLOAT, 1},  {"+.Inf", RK_FLOAT, 1},  {"+.INF", RK_FLOAT, 1},
    {"-.inf", RK_FLOAT, -1}, {"-.Inf", RK_FLOAT, -1}, {"-.INF", RK_FLOAT, -1},
};

/* go-yaml's hint table: which first bytes may start a non-string. */
static char resolve_hint(const char *s, size_t n)
{
	if (n == 0)
		return 'N';
	char c = s[0];
	if (c == '+' || c == '-')
		return 'S';
	if (is_digit(c))
		return 'D';
	if (strchr("yYnNtTfFoO~", c) && c != '\0')
		return 'M';
	if (c == '.')
		return '.';
	return 0;
}

/* Go's strconv.ParseUint(s, 0, 64) on s without underscores. */
static bool go_parse_uint0(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;

	if (n == 0)
		return false;
	if (s[0] == '0') {
		char l = n >= 3 ? (char)(s[1] | 0x20) : 0;
		if (l == 'b' || l == 'o' || l == 'x') {
			base = l == 'b' ? 2 : l == 'o' ? 8 : 16;
			s += 2;
			n -= 2;
		} else {
			base = 8;
			s += 1;
			n -= 1;
		}
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (is_digit(c))
			d = (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
			d = (unsigned)((c | 0x20) - 'a' + 10);
		else
			return false;
		if (d >= base)
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false; /* out of range */
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* Go's strconv.ParseInt(s, 0, 64). */
static bool go_parse_int0(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	uint64_t u;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (!go_parse_uint0(s, n, &u))
		return false;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return false;
		*out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		if (u > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)u;
	}
	return true;
}

/* Digits with Go's underscore rule (an underscore sits between digits).
   Advances *i over them; returns the number of digits seen. */
static size_t go_digits(const char *s, size_t n, size_t *i, bool underscores)
{
	size_t nd = 0;
	bool last_us = false;

	while (*i < n) {
		char c = s[*i];
		if (is_digit(c)) {
			nd++;
			last_us = false;
		} else if (c == '_' && underscores && nd > 0 && !last_us) {
			last_us = true;
		} else {
			break;
		}
		(*i)++;
	}
	if (last_us) /* an underscore must be followed by a digit */
		return 0;
	return nd;
}

/*
 * A decimal float: [sign] (digits [. digits?] | . digits) [e [sign] digits],
 * the part of Go's ParseFloat syntax a YAML scalar can reach here (the
 * yamlStyleFloat regexp, or a leading '.' with Go's underscores).
 * Overflow is not a float (Go: ErrRange); underflow is (Go: 0, no error).
 */
static bool go_parse_float(const char *s, size_t n, bool underscores,
			   double *out)
{
	size_t i = 0;
	char buf[128];

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	size_t mant = go_digits(s, n, &i, underscores);
	if (i < n && s[i] == '.') {
		i++;
		/* After '.', underscores restart (the '.' is not a digit). */
		mant += go_digits(s, n, &i, underscores);
	}
	if (mant == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (go_digits(s, n, &i, underscores) == 0)
			return false;
	}
	if (i != n)
		return false;

	/* strtod wants it NUL-terminated and without underscores. */
	char *b = buf;
	if (n >= sizeof buf) {
		b = malloc(n + 1);
		if (!b)
			return false;
	}
	size_t o = 0;
	for (size_t k = 0; k < n; k++)
		if (s[k] != '_')
			b[o++] = s[k];
	b[o] = '\0';
	double v = c_strtod(b);
	if (b != buf)
		free(b);
	if (isinf(v))
		return false;
	*out = v;
	return true;
}

/* Go's time getnum(value, false): one or two digits. */
static bool ts_num(const char *s, size_t n, size_t *i, int *out)
{
	if (*i >= n || !is_digit(s[*i]))
		return false;
	int v = s[(*i)++] - '0';
	if (*i < n && is_digit(s[*i]))
		v = v * 10 + (s[(*i)++] - '0');
	*out = v;
	return true;
}

static int days_in(int month, int year)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30,
				 31, 31, 30, 31, 30, 31};
	if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))
		return 29;
	return dm[month - 1];
}

/* H:M:S[.frac], the "15:4:5.999999999" of go-yaml's layouts. */
static bool ts_time(const char *s, size_t n, size_t *i)
{
	int h, m, sec;

	if (!ts_num(s, n, i, &h) || h >= 24)
		return false;
	if (*i >= n || s[(*i)++] != ':')
		return false;
	if (!ts_num(s, n, i, &m) || m >= 60)
		return false;
	if (*i >= n || s[(*i)++] != ':')
		return false;
	if (!ts_num(s, n, i, &sec) || sec >= 60)
		return false;
	if (*i + 1 < n && (s[*i] == '.' || s[*i] == ',') &&
	    is_digit(s[*i + 1])) {
		(*i)++;
		while (*i < n && is_digit(s[*i]))
			(*i)++;
	}
	return true;
}

/*
 * go-yaml v2's parseTimestamp: Go's time.Parse with the layouts
 * "2006-1-2T15:4:5.999999999Z07:00" (and 't'), "2006-1-2 15:4:5.999999999"
 * and "2006-1-2".
 */
static bool is_timestamp(const char *s, size_t n)
{
	size_t i = 0;
	int year, month, day;

	while (i < n && is_digit(s[i]))
		i++;
	if (i != 4 || i == n || s[i] != '-')
		return false;
	year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
	       (s[3] - '0');
	i = 5;
	if (!ts_num(s, n, &i, &month) || month < 1 || month > 12)
		return false;
	if (i >= n || s[i++] != '-')
		return false;
	if (!ts_num(s, n, &i, &day) || day < 1 || day > days_in(month, year))
		return false;
	if (i == n)
		return true; /* "2006-1-2" */
	if (s[i] == 'T' || s[i] == 't') {
		i++;
		if (!ts_time(s, n, &i) || i >= n)
			return false;
		if (s[i] == 'Z')
			return i + 1 == n;
		if (n - i != 6 || (s[i] != '+' && s[i] != '-') ||
		    s[i + 3] != ':')
			return false;
		if (!is_digit(s[i + 1]) || !is_digit(s[i + 2]) ||
		    !is_digit(s[i + 4]) || !is_digit(s[i + 5]))
			return false;
		int hh = (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
		int mm = (s[i + 4] - '0') * 10 + (s[i + 5] - '0');
		return hh <= 24 && mm <= 60;
	}
	if (s[i] == ' ') {
		/* A space in a Go layout matches a run of spaces. */
		while (i < n && s[i] == ' ')
			i++;
		return ts_time(s, n, &i) && i == n;
	}
	return false;
}

/* go-yaml v2's isBase60Float: such strings are quoted on output. */
static bool is_base60_float(const char *s, size_t n)
{
	size_t i = 0;
	int groups = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i >= n || !is_digit(s[i]))
		return false;
	i++;
	while (i < n && (is_digit(s[i]) || s[i] == '_'))
		i++;
	while (i < n && s[i] == ':') {
		i++;
		if (i + 1 < n && s[i] >= '0' && s[i] <= '5' &&
		    is_digit(s[i + 1]))
			i += 2;
		else if (i < n && is_digit(s[i]))
			i++;
		else
			return false;
		groups++;
	}
	if (!groups)
		return false;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && (is_digit(s[i]) || s[i] == '_'))
			i++;
	}
	return i == n;
}

/*
 * go-yaml v2's resolve(tag, in) for the tags it can resolve (TK_NONE, str,
 * bool, int, float, null, timestamp), without its final tag check.
 */
static void resolve_text(enum tagk tk, const char *s, size_t n, struct rv *r)
{
	memset(r, 0, sizeof *r);
	r->kind = RK_STR;

	char hint = resolve_hint(s, n);
	if (!hint || tk == TK_STR)
		return;
	for (size_t k = 0; k < sizeof resolve_words / sizeof resolve_words[0];
	     k++) {
		const char *w = resolve_words[k].word;
		if (strlen(w) == n && memcmp(w, s, n) == 0) {
			r->kind = resolve_words[k].kind;
			r->b = resolve_words[k].val != 0;
			if (r->kind == RK_FLOAT)
				r->f = resolve_words[k].val > 0	  ? INFINITY
				       : resolve_words[k].val < 0 ? -INFINITY
								  : NAN;
			return;
		}
	}
	if (hint == '.') {
		if (go_parse_float(s, n, true, &r->f))
			r->kind = RK_FLOAT;
		return;
	}
	if (hint != 'D' && hint != 'S')
		return;
	if ((tk == TK_NONE || tk == TK_TIMESTAMP) && is_timestamp(s, n)) {
		r->kind = RK_TIMESTAMP;
		return;
	}
	/* go-yaml drops every underscore before trying the numbers. */
	char small[128], *plain = small;
	if (n >= sizeof small) {
		plain = malloc(n + 1);
		if (!plain)
			return; /* out of memory here only means "a string" */
	}
	size_t pn = 0;
	for (size_t k = 0; k < n; k++)
		if (s[k] != '_')
			plain[pn++] = s[k];
	plain[pn] = '\0';
	if (go_parse_int0(plain, pn, &r->i))
		r->kind = RK_INT;
	else if (go_parse_uint0(plain, pn, &r->u))
		r->kind = RK_UINT;
	else if (go_parse_float(plain, pn, false, &r->f))
		r->kind = RK_FLOAT;
	if (plain != small)
		free(plain);
}

/* Would a plain scalar with this text read back as anything but a string? */
static bool needs_quotes(const char *s, size_t n)
{
	struct rv r;

	resolve_text(TK_NONE, s, n, &r);
	return r.kind != RK_STR || is_base60_float(s, n);
}

/* ------------------------------------------------------------------------ */
/* UTF-8 and base64 helpers.                                                 */

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
   surrogates, at most U+10FFFF), or 0 if invalid. *cp gets the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xC2 && c <= 0xDF) {
		len = 2, v = c & 0x1F, min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3, v = c & 0x0F, min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

/* Replace each byte of invalid UTF-8 with U+FFFD, as Go's encoding/json
   does. Returns a new malloc'd buffer (NUL-terminated) or NULL. */
static char *utf8_sanitize(const char *s, size_t n, size_t *out_len)
{
	char *o = malloc(n * 3 + 1);
	size_t k = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = utf8_seq((const unsigned char *)s + i, n - i, &cp);
		if (l) {
			memcpy(o + k, s + i, l);
			k += l;
			i += l;
		} else {
			memcpy(o + k, "\xEF\xBF\xBD", 3);
			k += 3;
			i++;
		}
	}
	o[k] = '\0';
	*out_len = k;
	return o;
}

static int b64_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Go's base64.StdEncoding.DecodeString: padded, '\r' and '\n' ignored.
   Returns 1 ok, 0 invalid, -1 out of memory. */
static int b64_decode(const char *s, size_t n, char **out, size_t *out_len)
{
	char *clean = malloc(n + 1), *o = malloc(n / 4 * 3 + 4);
	size_t cn = 0, k = 0;
	int rc = 0;

	if (!clean || !o) {
		rc = -1;
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\r' && s[i] != '\n')
			clean[cn++] = s[i];
	if (cn % 4)
		goto done;
	for (size_t i = 0; i < cn; i += 4) {
		int v[4], pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = clean[i + j];
			if (c == '=' && i + 4 == cn && j >= 2) {
				v[j] = 0;
				pad++;
			} else if (pad || (v[j] = b64_val(c)) < 0) {
				goto done;
			}
		}
		uint32_t q = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
			     (uint32_t)v[2] << 6 | (uint32_t)v[3];
		o[k++] = (char)(q >> 16);
		if (pad < 2)
			o[k++] = (char)(q >> 8);
		if (pad < 1)
			o[k++] = (char)q;
	}
	o[k] = '\0';
	*out = o;
	*out_len = k;
	o = NULL;
	rc = 1;
done:
	free(clean);
	free(o);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Reading: the context.                                                     */

struct stats {
	uint64_t nodes; /* go-yaml decode count of the subtree */
	uint64_t bytes; /* scalar text, keys included */
	int height;	/* collection levels below and including it */
};

/* How a completed node came to be: merge keys care. */
enum origin {
	O_SCALAR,
	O_MAP,
	O_SEQ,
	O_ALIAS_SCALAR,
	O_ALIAS_MAP,
	O_ALIAS_SEQ
};

struct anchor {
	bool open;     /* its collection has started but not ended */
	bool scalar;   /* kept as text (invariant 3) */
	json_t *value; /* collections: the completed value, new */
	char *text;    /* scalars: the event's text, malloc'd */
	size_t text_len;
	char *tag;  /* scalars: the event's tag or NULL, malloc'd */
	bool plain; /* scalars: plain_implicit */
	struct stats st;
};

struct frame {
	json_t *coll; /* object or array under construction, new */
	bool is_map;
	long anchor;	/* its anchor's index, or -1 */
	int line0;	/* 0-based line where it starts */
	bool has_key;	/* a mapping's pending key is set */
	bool key_merge; /* ... and it is the merge key "<<" */
	char *key;	/* the pending key as a JSON key, malloc'd */
	size_t key_len;
	bool key_is_str; /* the YAML key was a string (for messages) */
	struct stats st; /* of the children so far (height: max child) */
};

struct ctx {
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_ev;
	bool strict;
	struct srv_error *err;
	lp_err rc;

	struct frame *frames;
	size_t n_frames, cap_frames;
	struct anchor *anchors;
	size_t n_anchors, cap_anchors;
	json_t *anchor_index; /* anchor name -> index in anchors, new */

	uint64_t n_decode; /* invariant 4 */
	uint64_t n_alias;
	uint64_t alias_bytes;

	json_t *result; /* the document, new, once complete */
	bool done;

	char dups[1024]; /* strict mode: "line N: key ... already set" */
	size_t dups_len;
	int n_dups;
};

static lp_err fail(struct ctx *c, lp_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static lp_err fail(struct ctx *c, lp_err code, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof msg, fmt, ap) >= (int)sizeof msg)
		srv_cut_utf8(msg);
	va_end(ap);
	if (c->rc == LP_OK) {
		c->rc = code;
		srv_error_set(c->err, code, "%s", msg);
	}
	return c->rc;
}

static lp_err fail_nomem(struct ctx *c)
{
	return fail(c, LP_E_NOMEM, "out of memory");
}

/* A message about the node at a 0-based libyaml line. */
#define fail_at(c, line0, fmt, ...)                                            \
	fail((c), LP_E_BADREQUEST, "yaml: line %d: " fmt, (int)(line0) + 1,    \
	     __VA_ARGS__)

/* The libyaml error, worded and positioned as go-yaml's parser.fail(). */
static lp_err fail_parser(struct ctx *c)
{
	yaml_parser_t *p = &c->parser;
	size_t line = 0;

	if (p->error == YAML_MEMORY_ERROR)
		return fail_nomem(c);
	if (p->problem_mark.line != 0) {
		line = p->problem_mark.line;
		if (p->error == YAML_SCANNER_ERROR)
			line++;
	} else if (p->context_mark.line != 0) {
		line = p->context_mark.line;
	}
	const char *msg = p->problem && *p->problem
			      ? p->problem
			      : "unknown problem parsing YAML content";
	if (line)
		return fail(c, LP_E_BADREQUEST, "yaml: line %zu: %s", line,
			    msg);
	return fail(c, LP_E_BADREQUEST, "yaml: %s", msg);
}

/* Go's %#v of a key, for the strict messages. */
static void go_quote(const char *s, size_t n, bool as_string, char *out,
		     size_t cap)
{
	size_t o = 0;

#define PUTC(ch)                                                               \
	do {                                                                   \
		if (o + 1 < cap)                                               \
			out[o++] = (ch);                                       \
	} while (0)
	if (!as_string) {
		for (size_t i = 0; i < n; i++)
			PUTC(s[i]);
		out[o] = '\0';
		return;
	}
	PUTC('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		const char *esc = NULL;
		char hex[8];
		switch (ch) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\r':
			esc = "\\r";
			break;
		default:
			if (ch < 0x20 || ch == 0x7f) {
				snprintf(hex, sizeof hex, "\\x%02x", ch);
				esc = hex;
			}
		}
		if (esc)
			for (; *esc; esc++)
				PUTC(*esc);
		else
			PUTC((char)ch);
	}
	PUTC('"');
	out[o] = '\0';
	if (o + 1 >= cap) /* full: the cut may be inside a character */
		srv_cut_utf8(out);
#undef PUTC
}

static void add_dup(struct ctx *c, int line0, const char *key, size_t key_len,
		    bool is_str)
{
	char shown[256];
	go_quote(key, key_len, is_str, shown, sizeof shown);
	int w = snprintf(c->dups + c->dups_len, sizeof c->dups - c->dups_len,
			 "\n  line %d: key %s already set in map", line0 + 1,
			 shown);
	if (w > 0 && (size_t)w < sizeof c->dups - c->dups_len)
		c->dups_len += (size_t)w;
	else /* no room: not a part of the line, which may end mid-UTF-8 */
		c->dups[c->dups_len] = 0;
	c->n_dups++;
}

/* Count one decoded node (and `alias` more from an alias expansion) and
   apply go-yaml's ratio rule and our caps (invariant 4). */
static lp_err count_nodes(struct ctx *c, int line0, uint64_t plain,
			  const struct stats *alias)
{
	c->n_decode += plain;
	if (alias) {
		c->n_decode += alias->nodes;
		c->n_alias += alias->nodes;
		c->alias_bytes += alias->bytes;
		if (c->n_alias > YJ_MAX_ALIAS_NODES ||
		    c->alias_bytes > YJ_MAX_ALIAS_BYTES)
			return fail(
			    c, LP_E_BADREQUEST,
			    "yaml: document contains excessive aliasing");
		if (c->n_frames + (size_t)alias->height > YJ_MAX_DEPTH)
			return fail_at(c, line0, "exceeded max depth of %d",
				       YJ_MAX_DEPTH);
	}
	double d = (double)c->n_decode, a = (double)c->n_alias, allowed;
	if (c->n_alias > 100 && c->n_decode > 1000) {
		if (d <= YJ_RATIO_LOW)
			allowed = 0.99;
		else if (d >= YJ_RATIO_HIGH)
			allowed = 0.10;
		else
			allowed =
			    0.99 - 0.89 * ((d - YJ_RATIO_LOW) /
					   (YJ_RATIO_HIGH - YJ_RATIO_LOW));
		if (a / d > allowed)
			return fail(
			    c, LP_E_BADREQUEST,
			    "yaml: document contains excessive aliasing");
	}
	return LP_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading: scalars.                                                         */

/* A decoded scalar: a typed value, or text (borrowed or owned). */
struct scalar {
	struct rv v;
	const char *s;
	size_t len;
	char *owned; /* set when s was made here (!!binary) */
};

/*
 * go-yaml v2 decoder.scalar() into an interface{}: untagged quoted scalars
 * are strings; tagged or plain ones resolve, and a resolved value that does
 * not fit the tag is an error; timestamps keep their text; !!binary is
 * base64-decoded; unknown tags leave the text as a string.
 */
static lp_err decode_scalar(struct ctx *c, const char *text, size_t len,
			    const char *tag, bool plain_implicit, int line0,
			    struct scalar *out)
{
	enum tagk tk = tag_kind(tag);

	memset(out, 0, sizeof *out);
	out->v.kind = RK_STR;
	out->s = text;
	out->len = len;
	if (tk == TK_NONE && !plain_implicit)
		return LP_OK;
	if (tk == TK_BINARY) {
		char *raw;
		size_t raw_len;
		int r = b64_decode(text, len, &raw, &raw_len);
		if (r < 0)
			return fail_nomem(c);
		if (r == 0)
			return fail_at(
			    c, line0, "%s",
			    "!!binary value contains invalid base64 data");
		out->owned = utf8_sanitize(raw, raw_len, &out->len);
		free(raw);
		if (!out->owned)
			return fail_nomem(c);
		out->s = out->owned;
		return LP_OK;
	}
	if (tk == TK_MERGE || tk == TK_OTHER)
		return LP_OK;

	resolve_text(tk, text, len, &out->v);
	enum tagk rt = rk_tag(out->v.kind);
	if (tk == TK_FLOAT && out->v.kind == RK_INT) {
		out->v.kind = RK_FLOAT;
		out->v.f = (double)out->v.i;
	} else if (tk != TK_NONE && tk != TK_STR && tk != rt) {
		return fail_at(c, line0, "cannot decode %s `%.*s` as a %s",
			       short_tag(rt), (int)(len > 200 ? 200 : len),
			       text, short_tag(tk));
	}
	if (out->v.kind == RK_TIMESTAMP)
		out->v.kind = RK_STR;
	return LP_OK;
}

/* The scalar as a JSON value, as encoding/json writes Go's value. */
static lp_err scalar_to_json(struct ctx *c, const struct scalar *sc,
			     json_t **out)
{
	json_t *v = NULL;

	switch (sc->v.kind) {
	case RK_NULL:
		v = json_null();
		break;
	case RK_BOOL:
		v = json_boolean(sc->v.b);
		break;
	case RK_INT:
		v = json_integer(sc->v.i);
		break;
	case RK_UINT:
		/* kube reads a number beyond int64 as a float64. */
		v = json_real((double)sc->v.u);
		break;
	case RK_FLOAT:
		if (isnan(sc->v.f))
			return fail(c, LP_E_BADREQUEST,
				    "json: unsupported value: NaN");
		if (isinf(sc->v.f))
			return fail(c, LP_E_BADREQUEST,
				    "json: unsupported value: %s",
				    sc->v.f > 0 ? "+Inf" : "-Inf");
		v = json_real(sc->v.f);
		break;
	case RK_STR:
	case RK_TIMESTAMP:
		v = json_stringn(sc->s, sc->len);
		break;
	}
	if (!v)
		return fail_nomem(c);
	*out = v;
	return LP_OK;
}

/* The scalar as a JSON object key, as sigs.k8s.io/yaml converts keys. */
static lp_err scalar_to_key(struct ctx *c, const struct scalar *sc, int line0,
			    char **key, size_t *key_len)
{
	char buf[64];
	const char *s = buf;
	size_t n = 0;

	switch (sc->v.kind) {
	case RK_NULL:
		return fail(c, LP_E_BADREQUEST,
			    "yaml: line %d: unsupported map key of type: "
			    "%%!s(<nil>), key: <nil>",
			    line0 + 1);
	case RK_UINT:
		return fail(c, LP_E_BADREQUEST,
			    "yaml: line %d: unsupported map key of type: "
			    "uint64, key: 0x%llx",
			    line0 + 1, (unsigned long long)sc->v.u);
	case RK_BOOL:
		s = sc->v.b ? "true" : "false";
		n = strlen(s);
		break;
	case RK_INT:
		n = (size_t)snprintf(buf, sizeof buf, "%lld",
				     (long long)sc->v.i);
		break;
	case RK_FLOAT: {
		float f = (float)sc->v.f;
		if (isnan(f))
			s = ".nan";
		else if (isinf(f))
			s = f > 0 ? ".inf" : "-.inf";
		else
			go_format_float(sc->v.f, true, buf, sizeof buf);
		n = strlen(s);
		break;
	}
	case RK_STR:
	case RK_TIMESTAMP:
		s = sc->s;
		n = sc->len;
		break;
	}
	if (memchr(s, '\0', n))
		return fail_at(
		    c, line0, "%s",
		    "a mapping key with a NUL character is not supported");
	char *k = malloc(n + 1);
	if (!k)
		return fail_nomem(c);
	memcpy(k, s, n);
	k[n] = '\0';
	*key = k;
	*key_len = n;
	return LP_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading: the tree.                                                        */

static void stats_add(struct stats *into, const struct stats *child)
{
	into->nodes += child->nodes;
	into->bytes += child->bytes;
	if (child->height > into->height)
		into->height = child->height;
}

/* Merge the mapping m (an object) into the top frame, go-yaml style: every
   key of m is set, overriding what is there (invariant 2: values move). */
static lp_err merge_object(struct ctx *c, struct frame *f, json_t *m, int line0)
{
	const char *k;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach(m, k, klen, v)
	{
		if (c->strict && json_object_getn(f->coll, k, klen))
			add_dup(c, line0, k, klen, true);
		if (json_object_setn(f->coll, k, klen, v))
			return fail_nomem(c);
	}
	return LP_OK;
}

/* Hand a completed node to its parent or make it the document (takes v). */
static lp_err deliver(struct ctx *c, json_t *v, const struct stats *st,
		      enum origin orig, int line0)
{
	if (c->n_frames == 0) {
		c->result = v;
		c->done = true;
		return LP_OK;
	}
	struct frame *f = &c->frames[c->n_frames - 1];
	stats_add(&f->st, st);
	if (!f->is_map) {
		if (json_array_append_new(f->coll, v))
			return fail_nomem(c);
		return LP_OK;
	}
	/* A mapping's value (keys never get here: see key_scalar). */
	lp_err rc = LP_OK;
	if (f->key_merge) {
		if (orig == O_MAP || orig == O_ALIAS_MAP) {
			rc = merge_object(c, f, v, line0);
		} else if (orig == O_SEQ) {
			size_t n = json_array_size(v);
			for (size_t i = n; i-- > 0 && rc == LP_OK;) {
				json_t *m = json_array_get(v, i);
				if (!json_is_object(m))
					rc = fail_at(
					    c, line0, "%s",
					    "map merge requires map or "
					    "sequence of maps as the value");
				else
					rc = merge_object(c, f, m, line0);
			}
		} else {
			rc = fail_at(c, line0, "%s",
				     "map merge requires map or sequence of "
				     "maps as the value");
		}
		json_decref(v);
	} else {
		if (c->strict && json_object_getn(f->coll, f->key, f->key_len))
			add_dup(c, line0, f->key, f->key_len, f->key_is_str);
		if (json_object_setn_new(f->coll, f->key, f->key_len, v))
			rc = fail_nomem(c);
	}
	free(f->key);
	f->key = NULL;
	f->has_key = false;
	f->key_merge = false;
	return rc;
}

static bool at_key(const struct ctx *c)
{
	return c->n_frames > 0 && c->frames[c->n_frames - 1].is_map &&
	       !c->frames[c->n_frames - 1].has_key;
}

/* A scalar (from an event or an aliased anchor) in key position. */
static lp_err key_scalar(struct ctx *c, const char *text, size_t len,
			 const char *tag, bool plain, int line0)
{
	struct frame *f = &c->frames[c->n_frames - 1];
	struct scalar sc;
	lp_err rc;

	rc = decode_scalar(c, text, len, tag, plain, line0, &sc);
	if (rc == LP_OK)
		rc = scalar_to_key(c, &sc, line0, &f->key, &f->key_len);
	free(sc.owned);
	if (rc != LP_OK)
		return rc;
	f->has_key = true;
	f->key_merge = false;
	f->key_is_str = sc.v.kind == RK_STR;
	f->st.nodes += 1;
	f->st.bytes += f->key_len;
	return LP_OK;
}

static lp_err anchor_new(struct ctx *c, const char *name, long *idx)
{
	if (c->n_anchors == c->cap_anchors) {
		size_t cap = c->cap_anchors ? c->cap_anchors * 2 : 16;
		struct anchor *a = realloc(c->anchors, cap * sizeof *a);
		if (!a)
			return fail_nomem(c);
		c->anchors = a;
		c->cap_anchors = cap;
	}
	long i = (long)c->n_anchors;
	if (json_object_set_new(c->anchor_index, name, json_integer(i)))
		return fail_nomem(c);
	memset(&c->anchors[i], 0, sizeof c->anchors[i]);
	c->anchors[i].open = true;
	c->n_anchors++;
	*idx = i;
	return LP_OK;
}

static lp_err anchor_scalar(struct ctx *c, const char *name, const char *text,
			    size_t len, const char *tag, bool plain)
{
	long i;
	lp_err rc = anchor_new(c, name, &i);
	if (rc != LP_OK)
		return rc;
	struct anchor *a = &c->anchors[i];
	a->scalar = true;
	a->plain = plain;
	a->text = malloc(len + 1);
	a->tag = tag ? strdup(tag) : NULL;
	if (!a->text || (tag && !a->tag))
		return fail_nomem(c);
	memcpy(a->text, text, len);
	a->text[len] = '\0';
	a->text_len = len;
	a->st.nodes = 1;
	a->st.bytes = len;
	a->st.height = 0;
	a->open = false;
	return LP_OK;
}

static lp_err on_scalar(struct ctx *c, const yaml_event_t *ev)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	bool plain = ev->data.scalar.plain_implicit;
	int line0 = (int)ev->start_mark.line;
	lp_err rc;

	if (ev->data.scalar.anchor) {
		rc = anchor_scalar(c, (const char *)ev->data.scalar.anchor,
				   text, len, tag, plain);
		if (rc != LP_OK)
			return rc;
	}
	if (at_key(c)) {
		/* go-yaml's isMerge: never decoded, never counted. */
		if (len == 2 && memcmp(text, "<<", 2) == 0 &&
		    (plain || tag_kind(tag) == TK_MERGE)) {
			struct frame *f = &c->frames[c->n_frames - 1];
			f->has_key = true;
			f->key_merge = true;
			return LP_OK;
		}
		rc = count_nodes(c, line0, 1, NULL);
		if (rc == LP_OK)
			rc = key_scalar(c, text, len, tag, plain, line0);
		return rc;
	}
	rc = count_nodes(c, line0, 1, NULL);
	if (rc != LP_OK)
		return rc;
	struct scalar sc;
	json_t *v = NULL;
	rc = decode_scalar(c, text, len, tag, plain, line0, &sc);
	if (rc == LP_OK)
		rc = scalar_to_json(c, &sc, &v);
	free(sc.owned);
	if (rc != LP_OK)
		return rc;
	struct stats st = {1, len, 0};
	return deliver(c, v, &st, O_SCALAR, line0);
}

static lp_err on_alias(struct ctx *c, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	int line0 = (int)ev->start_mark.line;
	json_t *ix = json_object_get(c->anchor_index, name);
	lp_err rc;

	if (!ix)
		return fail_at(c, line0, "unknown anchor '%s' referenced",
			       name);
	struct anchor *a = &c->anchors[json_integer_value(ix)];
	if (a->open)
		return fail_at(c, line0, "anchor '%s' value contains itself",
			       name);
	if (at_key(c) && !a->scalar)
		return fail_at(c, line0, "invalid map key: %s",
			       json_is_object(a->value) ? "a mapping"
							: "a sequence");
	rc = count_nodes(c, line0, 1, &a->st);
	if (rc != LP_OK)
		return rc;
	if (at_key(c))
		return key_scalar(c, a->text, a->text_len, a->tag, a->plain,
				  line0);

	struct stats st = a->st;
	st.nodes += 1;
	if (a->scalar) {
		struct scalar sc;
		json_t *v = NULL;
		rc = decode_scalar(c, a->text, a->text_len, a->tag, a->plain,
				   line0, &sc);
		if (rc == LP_OK)
			rc = scalar_to_json(c, &sc, &v);
		free(sc.owned);
		if (rc != LP_OK)
			return rc;
		return deliver(c, v, &st, O_ALIAS_SCALAR, line0);
	}
	json_t *v = json_deep_copy(a->value);
	if (!v)
		return fail_nomem(c);
	return deliver(c, v, &st, json_is_object(v) ? O_ALIAS_MAP : O_ALIAS_SEQ,
		       line0);
}

static lp_err on_start(struct ctx *c, const yaml_event_t *ev, bool is_map)
{
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor
					   : ev->data.sequence_start.anchor;
	int line0 = (int)ev->start_mark.line;
	lp_err rc;

	if (at_key(c))
		return fail_at(c, line0, "invalid map key: %s",
			       is_map ? "a mapping" : "a sequence");
	if (c->n_frames >= YJ_MAX_DEPTH)
		return fail_at(c, line0, "exceeded max depth of %d",
			       YJ_MAX_DEPTH);
	rc = count_nodes(c, line0, 1, NULL);
	if (rc != LP_OK)
		return rc;
	if (c->n_frames == c->cap_frames) {
		size_t cap = c->cap_frames ? c->cap_frames * 2 : 16;
		struct frame *fr = realloc(c->frames, cap * sizeof *fr);
		if (!fr)
			return fail_nomem(c);
		c->frames = fr;
		c->cap_frames = cap;
	}
	struct frame *f = &c->frames[c->n_frames];
	memset(f, 0, sizeof *f);
	f->anchor = -1;
	f->line0 = line0;
	f->is_map = is_map;
	f->coll = is_map ? json_object() : json_array();
	if (!f->coll)
		return fail_nomem(c);
	c->n_frames++;
	if (anchor) {
		rc = anchor_new(c, (const char *)anchor, &f->anchor);
		if (rc != LP_OK)
			return rc;
	}
	return LP_OK;
}

static lp_err on_end(struct ctx *c, const yaml_event_t *ev)
{
	if (c->n_frames == 0)
		return fail_at(c, ev->start_mark.line, "%s",
			       "unexpected end of a collection");
	struct frame *f = &c->frames[c->n_frames - 1];
	int line0 = f->line0;
	if (f->is_map && f->has_key) /* libyaml always pairs them */
		return fail_at(c, ev->start_mark.line, "%s",
			       "mapping key without a value");
	json_t *coll = f->coll;
	struct stats st = f->st;
	long anchor = f->anchor;
	bool is_map = f->is_map;
	st.nodes += 1;
	st.height += 1;
	f->coll = NULL;
	c->n_frames--;
	if (anchor >= 0) {
		struct anchor *a = &c->anchors[anchor];
		a->value = json_incref(coll);
		a->st = st;
		a->open = false;
	}
	return deliver(c, coll, &st, is_map ? O_MAP : O_SEQ, line0);
}

/* Next event into c->ev (the previous one is released). */
static lp_err next_event(struct ctx *c)
{
	if (c->have_ev) {
		yaml_event_delete(&c->ev);
		c->have_ev = false;
	}
	if (!yaml_parser_parse(&c->parser, &c->ev))
		return fail_parser(c);
	c->have_ev = true;
	return LP_OK;
}

static lp_err on_node_event(struct ctx *c)
{
	const yaml_event_t *ev = &c->ev;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return on_scalar(c, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(c, ev);
	case YAML_MAPPING_START_EVENT:
		return on_start(c, ev, true);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(c, ev, false);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return on_end(c, ev);
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		break;
	}
	return fail_at(c, ev->start_mark.line, "%s",
		       "unexpected event in a document");
}

static void ctx_free(struct ctx *c)
{
	if (c->have_ev)
		yaml_event_delete(&c->ev);
	yaml_parser_delete(&c->parser);
	for (size_t i = 0; i < c->n_frames; i++) {
		json_decref(c->frames[i].coll);
		free(c->frames[i].key);
	}
	free(c->frames);
	for (size_t i = 0; i < c->n_anchors; i++) {
		json_decref(c->anchors[i].value);
		free(c->anchors[i].text);
		free(c->anchors[i].tag);
	}
	free(c->anchors);
	json_decref(c->anchor_index);
	json_decref(c->result);
}

static lp_err yaml_to_json(const char *buf, size_t len, bool strict,
			   json_t **out, struct srv_error *err)
{
	struct ctx *c = calloc(1, sizeof *c);
	lp_err rc;

	if (!c)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	c->strict = strict;
	c->err = err;
	if (!yaml_parser_initialize(&c->parser)) {
		free(c);
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	}
	/* go-yaml feeds "\n" for empty input; libyaml takes empty as is. */
	yaml_parser_set_input_string(&c->parser,
				     (const unsigned char *)(len ? buf : "\n"),
				     len ? len : 1);
	c->anchor_index = json_object();
	if (!c->anchor_index) {
		rc = fail_nomem(c);
		goto fail;
	}

	if ((rc = next_event(c)) != LP_OK) /* STREAM_START */
		goto fail;
	if ((rc = next_event(c)) != LP_OK)
		goto fail;
	if (c->ev.type == YAML_STREAM_END_EVENT) {
		/* No document at all: YAMLToJSON gives "null". */
		c->result = json_null();
		goto done;
	}
	/* DOCUMENT_START; go-yaml counts the document node itself. */
	c->n_decode = 1;
	while (!c->done) {
		if ((rc = next_event(c)) != LP_OK)
			goto fail;
		if ((rc = on_node_event(c)) != LP_OK)
			goto fail;
	}
	/* the first document alone, as go-yaml v2's Unmarshal reads it:
	   what follows is not parsed */
done:
	if (c->n_dups) {
		rc = fail(c, LP_E_BADREQUEST, "yaml: unmarshal errors:%s",
			  c->dups);
		goto fail;
	}
	*out = c->result;
	c->result = NULL;
	ctx_free(c);
	free(c);
	return LP_OK;
fail:
	if (c->rc == LP_OK) /* cannot happen: every failure goes via fail() */
		rc = fail(c, LP_E_BADREQUEST, "yaml: invalid document");
	rc = c->rc;
	ctx_free(c);
	free(c);
	return rc;
}

lp_err srv_yaml_to_json(const char *buf, size_t len, json_t **out,
			struct srv_error *err)
{
	return yaml_to_json(buf, len, false, out, err);
}

lp_err srv_yaml_to_json_strict(const char *buf, size_t len, json_t **out,
			       struct srv_error *err)
{
	return yaml_to_json(buf, len, true, out, err);
}

/* ------------------------------------------------------------------------ */
/* Writing.                                                                  */

struct obuf {
	char *p;
	size_t len, cap;
};

static int obuf_write(void *data, unsigned char *buf, size_t size)
{
	struct obuf *o = data;

	if (o->len + size + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		while (cap < o->len + size + 1)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (!p)
			return 0;
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, buf, size);
	o->len += size;
	return 1;
}

/*
 * unicode.IsLetter, approximated: exact for ASCII and Latin-1; above that
 * everything is a letter but combining marks, the punctuation and symbol
 * blocks (U+2000-U+2BFF, U+3000-U+303F), private use, variation selectors,
 * fullwidth punctuation and the emoji planes. Kubernetes keys are ASCII.
 */
static bool go_is_letter(uint32_t r)
{
	if (r < 0x80)
		return (r | 0x20) >= 'a' && (r | 0x20) <= 'z';
	if (r < 0xC0)
		return r == 0xAA || r == 0xB5 || r == 0xBA;
	if (r < 0x100)
		return r != 0xD7 && r != 0xF7;
	if ((r >= 0x300 && r <= 0x36F) || (r >= 0x2000 && r <= 0x2BFF) ||
	    (r >= 0x3000 && r <= 0x303F) || (r >= 0xE000 && r <= 0xF8FF) ||
	    (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xFF00 && r <= 0xFF20) ||
	    (r >= 0xFF3B && r <= 0xFF40) || (r >= 0xFF5B && r <= 0xFF65) ||
	    (r >= 0x1F000 && r <= 0x1FAFF))
		return false;
	return true;
}

struct ekey {
	const char *k;
	size_t len;
	json_t *v;
};

static uint32_t rune_at(const char *s, size_t n, size_t i, size_t *w)
{
	uint32_t cp;
	size_t l = utf8_seq((const unsigned char *)s + i, n - i, &cp);
	if (!l) {
		*w = 1;
		return 0xFFFD;
	}
	*w = l;
	return cp;
}

/* go-yaml v2 keyList.Less for two string keys (sorter.go). */
static bool go_key_less(const struct ekey *x, const struct ekey *y)
{
	const char *a = x->k, *b = y->k;
	size_t an = x->len, bn = y->len, i = 0, j = 0;
	size_t ra_n = 0, rb_n = 0;

	while (i < an && j < bn) {
		size_t wa, wb;
		uint32_t ra = rune_at(a, an, i, &wa);
		uint32_t rb = rune_at(b, bn, j, &wb);
		if (ra == rb) {
			i += wa;
			j += wb;
			ra_n++;
			rb_n++;
			continue;
		}
		bool al = go_is_letter(ra), bl = go_is_letter(rb);
		if (al && bl)
			return ra < rb;
		if (al || bl)
			return bl;
		/* Digit runs compare as numbers (Go's int64, wrapping). */
		uint64_t av = 0, bv = 0;
		if (ra == '0' || rb == '0') {
			for (size_t k = i; k-- > 0 && is_digit(a[k]);) {
				if (a[k] != '0') {
					av = bv = 1;
					break;
				}
			}
		}
		size_t ai = i, bi = j;
		while (ai < an && is_digit(a[ai]))
			av = av * 10 + (uint64_t)(a[ai++] - '0');
		while (bi < bn && is_digit(b[bi]))
			bv = bv * 10 + (uint64_t)(b[bi++] - '0');
		if (av != bv)
			return (int64_t)av < (int64_t)bv;
		if (ai - i != bi - j)
			return ai - i < bi - j;
		return ra < rb;
	}
	/* One is a prefix of the other: fewer runes first. */
	while (i < an) {
		size_t w;
		rune_at(a, an, i, &w);
		i += w;
		ra_n++;
	}
	while (j < bn) {
		size_t w;
		rune_at(b, bn, j, &w);
		j += w;
		rb_n++;
	}
	return ra_n < rb_n;
}

/* Merge sort: stable and safe with any comparator (go-yaml's is not a
   strict weak order in every corner). */
static void sort_keys(struct ekey *k, struct ekey *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_keys(k, tmp, h);
	sort_keys(k + h, tmp, n - h);
	size_t i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = go_key_less(&k[j], &k[i]) ? k[j++] : k[i++];
	while (i < h)
		tmp[o++] = k[i++];
	while (j < n)
		tmp[o++] = k[j++];
	memcpy(k, tmp, n * sizeof *k);
}

struct eframe {
	json_t *v;	   /* the container, borrowed from the document */
	struct ekey *keys; /* objects: sorted keys, malloc'd */
	size_t i, n;
};

struct emitter {
	yaml_emitter_t em;
	struct eframe *stack;
	size_t n, cap;
};

static bool emit_scalar(struct emitter *e, const char *s, size_t len,
			yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (len > INT32_MAX)
		return false;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
					  (int)len, 1, 1, style))
		return false;
	return yaml_emitter_emit(&e->em, &ev);
}

/* go-yaml's encoder.stringv: literal when multi-line, double-quoted when
   plain would read as another type, else plain (libyaml may still quote). */
static bool emit_string(struct emitter *e, const char *s, size_t len)
{
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

	if (memchr(s, '\n', len))
		style = YAML_LITERAL_SCALAR_STYLE;
	else if (needs_quotes(s, len))
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	return emit_scalar(e, s, len, style);
}

/* Emit v: a scalar's event, or a container's start event plus a frame. */
static bool emit_value(struct emitter *e, json_t *v)
{
	char buf[48];
	yaml_event_t ev;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		struct ekey *keys = NULL, *tmp = NULL;
		const char *k;
		size_t klen;
		json_t *val;
		if (n) {
			keys = malloc(n * sizeof *keys);
			tmp = malloc(n * sizeof *tmp);
			if (!keys || !tmp) {
				free(keys);
				free(tmp);
				return false;
			}
			json_object_keylen_foreach(v, k, klen, val)
			{
				keys[i].k = k;
				keys[i].len = klen;
				keys[i].v = val;
				i++;
			}
			sort_keys(keys, tmp, n);
			free(tmp);
		}
		if (e->n == e->cap) {
			size_t cap = e->cap ? e->cap * 2 : 16;
			struct eframe *s = realloc(e->stack, cap * sizeof *s);
			if (!s) {
				free(keys);
				return false;
			}
			e->stack = s;
			e->cap = cap;
		}
		e->stack[e->n++] = (struct eframe){v, keys, 0, n};
		if (!yaml_mapping_start_event_initialize(
			&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
			return false;
		return yaml_emitter_emit(&e->em, &ev);
	}
	case JSON_ARRAY:
		if (e->n == e->cap) {
			size_t cap = e->cap ? e->cap * 2 : 16;
			struct eframe *s = realloc(e->stack, cap * sizeof *s);
			if (!s)
				return false;
			e->stack = s;
			e->cap = cap;
		}
		e->stack[e->n++] =
		    (struct eframe){v, NULL, 0, json_array_size(v)};
		if (!yaml_sequence_start_event_initialize(
			&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE))
			return false;
		return yaml_emitter_emit(&e->em, &ev);
	case JSON_STRING:
		return emit_string(e, json_string_value(v),
				   json_string_length(v));
	case JSON_INTEGER:
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return emit_scalar(e, buf, strlen(buf),
				   YAML_PLAIN_SCALAR_STYLE);
	case JSON_REAL: {
		double d = json_real_value(v);
		if (!isfinite(d)) /* jansson never holds these */
			return false;
		go_format_float(d, false, buf, sizeof buf - 2);
		/* Keep it a real when read back (Go would print 1 for 1.0). */
		if (!strpbrk(buf, ".e"))
			strcat(buf, ".0");
		return emit_scalar(e, buf, strlen(buf),
				   YAML_PLAIN_SCALAR_STYLE);
	}
	case JSON_TRUE:
		return emit_scalar(e, "true", 4, YAML_PLAIN_SCALAR_STYLE);
	case JSON_FALSE:
		return emit_scalar(e, "false", 5, YAML_PLAIN_SCALAR_STYLE);
	case JSON_NULL:
		return emit_scalar(e, "null", 4, YAML_PLAIN_SCALAR_STYLE);
	}
	return false;
}

static bool emit_doc(struct emitter *e, const json_t *doc)
{
	yaml_event_t ev;

	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return false;
	if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return false;
	/* The emitter only reads the tree; the cast drops const for
	   jansson's iteration macros. */
	if (!emit_value(e, (json_t *)doc))
		return false;
	while (e->n) {
		struct eframe *f = &e->stack[e->n - 1];
		if (f->i == f->n) {
			bool is_map = json_is_object(f->v);
			free(f->keys);
			e->n--;
			if (is_map ? !yaml_mapping_end_event_initialize(&ev)
				   : !yaml_sequence_end_event_initialize(&ev))
				return false;
			if (!yaml_emitter_emit(&e->em, &ev))
				return false;
			continue;
		}
		json_t *child;
		if (f->keys) {
			struct ekey *k = &f->keys[f->i++];
			/* A plain "<<" key would read back as a merge key;
			   go-yaml writes it plain anyway, we quote it. */
			bool merge_like = k->len == 2 && !memcmp(k->k, "<<", 2);
			if (merge_like
				? !emit_scalar(e, k->k, k->len,
					       YAML_DOUBLE_QUOTED_SCALAR_STYLE)
				: !emit_string(e, k->k, k->len))
				return false;
			child = k->v;
		} else {
			child = json_array_get(f->v, f->i++);
		}
		if (!emit_value(e, child))
			return false;
	}
	if (!yaml_document_end_event_initialize(&ev, 1) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return false;
	/* As go-yaml's encoder.finish(): no "..." after an open-ended
	   scalar at the end of the stream. */
	e->em.open_ended = 0;
	if (!yaml_stream_end_event_initialize(&ev) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return false;
	return yaml_emitter_flush(&e->em);
}

char *srv_json_to_yaml(const json_t *doc, size_t *len)
{
	struct emitter e;
	struct obuf o = {0};
	bool ok;

	if (!doc)
		return NULL;
	memset(&e, 0, sizeof e);
	if (!yaml_emitter_initialize(&e.em))
		return NULL;
	yaml_emitter_set_output(&e.em, obuf_write, &o);
	yaml_emitter_set_unicode(&e.em, 1);
	yaml_emitter_set_indent(&e.em, 2);
	yaml_emitter_set_width(&e.em, 80);
	yaml_emitter_set_break(&e.em, YAML_LN_BREAK);
	ok = emit_doc(&e, doc);
	yaml_emitter_delete(&e.em);
	for (size_t i = 0; i < e.n; i++)
		free(e.stack[i].keys);
	free(e.stack);
	if (!ok || !o.p) {
		free(o.p);
		return NULL;
	}
	o.p[o.len] = '\0';
	*len = o.len;
	return o.p;
}
