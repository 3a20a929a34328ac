/*
 * json.c -- see json.h.
 *
 * The loader is a recursive-descent parser over the whole buffer that
 * builds jansson values directly, with the same calls jansson's own parser
 * makes (json_object_setn_new_nocheck, json_stringn_nocheck, ...), so the
 * trees are the same. It accepts a subset of JSON it can judge alone and
 * "gives up" on everything else: it frees what it built and returns to
 * reg_json_load, which then asks json_loadb. Invariants:
 *  1. The fast path returns a tree only for input jansson accepts with the
 *     same flags, and then the tree jansson would build: every construct it
 *     takes is checked against jansson's lexer (src/load.c, v2.14) below.
 *  2. Anything jansson rejects, or that the fast path does not handle
 *     (reals, \u0000, duplicate keys under JSON_REJECT_DUPLICATES, raw
 *     control characters, invalid UTF-8, more than MAX_DEPTH levels,
 *     integers beyond int64, bytes after the value unless
 *     JSON_DISABLE_EOF_CHECK, empty input), gives up, never errors.
 *  3. After the fast path gives up, a NUL byte anywhere in the input is an
 *     error of its own (jansson skips NUL bytes between tokens; Go refuses
 *     them, and server/fields.c's text scans stop at them).
 *
 * The dumper writes into one growing buffer, copying runs of bytes that
 * need no escape with memcpy. It follows jansson's dump_string (escapes
 * \" \\ \b \f \n \r \t, other controls as \u00XX in upper case, '/' and
 * non-ASCII raw, invalid UTF-8 in a value fails the dump) and prints
 * integers as "%" JSON_INTEGER_FORMAT would; reals are printed as Go
 * prints a float64 (reg_go_float), which is where it parts from jansson's
 * "%.17g" with ".0" appended: kube answers 0.1, never 0.10000000000000001.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Nesting the fast loader takes: every document of the CRD corpus fits
   (tests/server/test_json_corpus.c), and it bounds our recursion well
   below any stack. Deeper input goes to jansson, which enforces its own
   limit (JSON_PARSER_MAX_DEPTH, 2048) with its own error. */
#define MAX_DEPTH 64

/* Up to 19 decimal digits fit in a uint64_t (10^19 - 1 < 2^64), so they
   are read without overflow and then compared with json_int_t's range;
   valid JSON integers (no leading zeros) with more digits are all out of
   range, which jansson reports ("too big integer"). */
#define MAX_INT_DIGITS 19
_Static_assert(sizeof(json_int_t) == sizeof(int64_t),
	       "json_int_t is expected to be int64_t (jansson's long long)");

/* Flags the fast loader knows. JSON_ALLOW_NUL changes only the handling of
   \u0000, on which the fast path gives up anyway. JSON_DISABLE_EOF_CHECK
   (the informer's decode of an object's head) is taken for an object or
   array only: jansson reads nothing after its closing bracket, while
   after a bare number or word its lexer reads on (a letter after "true"
   makes it invalid). */
#define FAST_FLAGS                                                             \
	(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL |           \
	 JSON_DISABLE_EOF_CHECK)

/* ------------------------------------------------------------ UTF-8 */

/*
 * Length of the valid UTF-8 sequence at p (at most n bytes), 0 when
 * invalid, by jansson's rules (utf8_check_first, utf8_check_full): lead
 * bytes C2-DF, E0-EF, F0-F4; continuation bytes 80-BF; no overlong forms,
 * no surrogates, nothing above U+10FFFF. p[0] >= 0x80.
 */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char u = p[0];
	size_t count;
	uint32_t cp;
	if (u >= 0xC2 && u <= 0xDF) {
		count = 2;
		cp = u & 0x1F;
	} else if (u >= 0xE0 && u <= 0xEF) {
		count = 3;
		cp = u & 0x0F;
	} else if (u >= 0xF0 && u <= 0xF4) {
		count = 4;
		cp = u & 0x07;
	} else {
		return 0;
	}
	if (count > n)
		return 0;
	for (size_t i = 1; i < count; i++) {
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	if ((count == 3 && cp < 0x800) || (count == 4 && cp < 0x10000))
		return 0;
	return count;
}

/* ------------------------------------------------------------ loader */

/* Byte classes inside a string. */
enum {
	C_PLAIN = 0, /* 0x20-0x7F but '"' and '\\': copied as is */
	C_QUOTE,     /* '"': the end */
	C_ESC,	     /* '\\' */
	C_CTRL,	     /* 0x00-0x1F: jansson rejects, we give up */
	C_HIGH,	     /* 0x80-0xFF: a UTF-8 sequence to check */
};

#define X16(c) c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c
#define P C_PLAIN
/* clang-format off */
static const unsigned char str_class[256] = {
	X16(C_CTRL), /* 0x00 */
	X16(C_CTRL), /* 0x10 */
	P, P, C_QUOTE, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 0x20 */
	X16(P), X16(P), /* 0x30, 0x40 */
	P, P, P, P, P, P, P, P, P, P, P, P, C_ESC, P, P, P, /* 0x50 */
	X16(P), X16(P), /* 0x60, 0x70 */
	X16(C_HIGH), X16(C_HIGH), X16(C_HIGH), X16(C_HIGH), /* 0x80 */
	X16(C_HIGH), X16(C_HIGH), X16(C_HIGH), X16(C_HIGH), /* 0xC0 */
};
/* clang-format on */
#undef P
#undef X16

/*
 * How many bytes from p (up to end) are C_PLAIN: eight at a time while
 * none in a word is a control byte, '"', '\\' or above 0x7F, then one
 * at a time. A byte below 0x80 sets the top bit of its lane in x - 0x20..
 * only when it is below 0x20, and in (x ^ c..) - 0x01.. only when it
 * equals c, borrows aside; a borrow comes only from a lower lane that is
 * itself flagged, so a clear mask means eight plain bytes.
 */
static const unsigned char *plain_run(const unsigned char *p,
				      const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	while (end - p >= 8) {
		uint64_t x;
		memcpy(&x, p, sizeof x);
		uint64_t m = (x - 0x20 * ones) | ((x ^ ('"' * ones)) - ones) |
			     ((x ^ ('\\' * ones)) - ones) | x;
		if (m & high)
			break;
		p += 8;
	}
	while (p < end && str_class[*p] == C_PLAIN)
		p++;
	return p;
}

struct ld {
	const unsigned char *p;	  /* next byte */
	const unsigned char *end; /* one past the last */
	size_t flags;
	char *scratch;	   /* unescaped strings; inline or malloc'd */
	size_t cap;	   /* bytes at scratch */
	char inline_[512]; /* scratch until a longer escaped string */
};

static void skip_ws(struct ld *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\n' ||
				 *l->p == '\r' || *l->p == '\t'))
		l->p++;
}

static bool scratch_fit(struct ld *l, size_t n)
{
	if (n <= l->cap)
		return true;
	char *s = malloc(n);
	if (!s)
		return false;
	if (l->scratch != l->inline_)
		free(l->scratch);
	l->scratch = s;
	l->cap = n;
	return true;
}

int reg_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits of a \u escape at p (p + 4 <= end), or -1. */
static int32_t hex4(const unsigned char *p)
{
	int32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = reg_hex_digit(p[i]);
		if (h < 0)
			return -1;
		v = (v << 4) | h;
	}
	return v;
}

/*
 * A \u escape at l->p (just after the backslash-u's 'u'): its code point
 * as UTF-8 into out (4 bytes room), advancing l->p; the length, 0 to give
 * up. Gives up on \u0000 (its handling depends on the flags and on
 * whether the string is a key) and on any surrogate jansson would refuse.
 */
static size_t unicode_escape(struct ld *l, char *out)
{
	if (l->end - l->p < 4)
		return 0;
	int32_t cp = hex4(l->p);
	if (cp <= 0)
		return 0;
	l->p += 4;
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return 0;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (l->end - l->p < 6 || l->p[0] != '\\' || l->p[1] != 'u')
			return 0;
		int32_t lo = hex4(l->p + 2);
		if (lo < 0xDC00 || lo > 0xDFFF)
			return 0;
		l->p += 6;
		cp = 0x10000 + (((cp - 0xD800) << 10) | (lo - 0xDC00));
	}
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * The escaped rest of a string whose first `done` bytes (from start) need
 * no unescaping: unescaped into l->scratch. l->p is at the first
 * backslash. False to give up.
 */
static bool unescape(struct ld *l, const unsigned char *start, size_t done,
		     const char **s, size_t *len)
{
	/* An escape never grows: the rest of the input bounds the output. */
	if (!scratch_fit(l, done + (size_t)(l->end - l->p)))
		return false;
	char *o = l->scratch;
	memcpy(o, start, done);
	size_t n = done;
	for (;;) {
		if (l->p >= l->end)
			return false;
		unsigned char c = *l->p;
		switch (str_class[c]) {
		case C_PLAIN:
			o[n++] = (char)c;
			l->p++;
			break;
		case C_QUOTE:
			l->p++;
			*s = o;
			*len = n;
			return true;
		case C_CTRL:
			return false;
		case C_HIGH: {
			size_t k = utf8_seq(l->p, (size_t)(l->end - l->p));
			if (!k)
				return false;
			memcpy(o + n, l->p, k);
			n += k;
			l->p += k;
			break;
		}
		case C_ESC: {
			if (l->end - l->p < 2)
				return false;
			char e = (char)l->p[1];
			l->p += 2;
			switch (e) {
			case '"':
			case '\\':
			case '/':
				o[n++] = e;
				break;
			case 'b':
				o[n++] = '\b';
				break;
			case 'f':
				o[n++] = '\f';
				break;
			case 'n':
				o[n++] = '\n';
				break;
			case 'r':
				o[n++] = '\r';
				break;
			case 't':
				o[n++] = '\t';
				break;
			case 'u': {
				/* \uXXXX (6 bytes) is at most 3 bytes of
				   UTF-8, a surrogate pair (12) 4. */
				size_t k = unicode_escape(l, o + n);
				if (!k)
					return false;
				n += k;
				break;
			}
			default:
				return false;
			}
			break;
		}
		}
	}
}

/*
 * The string at l->p (just after its opening quote): *s and *len, pointing
 * into the input when it has no escapes, else into l->scratch (valid until
 * the next string). False to give up.
 */
static bool scan_string(struct ld *l, const char **s, size_t *len)
{
	const unsigned char *start = l->p;
	for (;;) {
		l->p = plain_run(l->p, l->end);
		if (l->p >= l->end)
			return false;
		switch (str_class[*l->p]) {
		case C_QUOTE:
			*s = (const char *)start;
			*len = (size_t)(l->p - start);
			l->p++;
			return true;
		case C_HIGH: {
			size_t k = utf8_seq(l->p, (size_t)(l->end - l->p));
			if (!k)
				return false;
			l->p += k;
			break;
		}
		case C_ESC:
			return unescape(l, start, (size_t)(l->p - start), s,
					len);
		case C_PLAIN:
		case C_CTRL:
		default:
			return false;
		}
	}
}

/* An integer at l->p ('-' or a digit), or NULL to give up (reals, leading
   zeros, integers beyond json_int_t). */
static json_t *scan_integer(struct ld *l)
{
	bool neg = false;
	if (*l->p == '-') {
		neg = true;
		l->p++;
	}
	const unsigned char *d = l->p;
	uint64_t v = 0;
	while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
		if (l->p - d == MAX_INT_DIGITS)
			return NULL;
		v = v * 10 + (uint64_t)(*l->p - '0');
		l->p++;
	}
	size_t digits = (size_t)(l->p - d);
	if (digits == 0 || (digits > 1 && *d == '0'))
		return NULL;
	if (l->p < l->end && (*l->p == '.' || *l->p == 'e' || *l->p == 'E'))
		return NULL;
	/* json_int_t is int64_t: at most INT64_MAX, at least INT64_MIN,
	   whose magnitude is INT64_MAX + 1. */
	if (v > (uint64_t)INT64_MAX + neg)
		return NULL;
	/* "-0" is the integer 0 for jansson too (strtoll). */
	json_int_t i = neg ? (json_int_t)(0 - v) : (json_int_t)v;
	return json_integer(i);
}

static json_t *parse_value(struct ld *l, int depth);

static json_t *parse_object(struct ld *l, int depth)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	skip_ws(l);
	if (l->p < l->end && *l->p == '}') {
		l->p++;
		return o;
	}
	for (;;) {
		if (l->p >= l->end || *l->p != '"')
			goto fail;
		l->p++;
		const char *k;
		size_t klen;
		if (!scan_string(l, &k, &klen))
			goto fail;
		/* A key in scratch would be overwritten by the value's
		   strings: keep a copy (escaped keys are rare). */
		char *kcopy = NULL;
		if (k == l->scratch) {
			kcopy = malloc(klen ? klen : 1);
			if (!kcopy)
				goto fail;
			memcpy(kcopy, k, klen);
			k = kcopy;
		}
		if ((l->flags & JSON_REJECT_DUPLICATES) &&
		    json_object_getn(o, k, klen)) {
			free(kcopy);
			goto fail;
		}
		skip_ws(l);
		if (l->p >= l->end || *l->p != ':') {
			free(kcopy);
			goto fail;
		}
		l->p++;
		skip_ws(l);
		json_t *v = parse_value(l, depth);
		/* Without JSON_REJECT_DUPLICATES a repeated key's value
		   replaces the earlier one in its place, as in jansson,
		   because this is the call jansson's parser makes. */
		int rc = v ? json_object_setn_new_nocheck(o, k, klen, v) : -1;
		free(kcopy);
		if (rc)
			goto fail;
		skip_ws(l);
		if (l->p >= l->end)
			goto fail;
		if (*l->p == '}') {
			l->p++;
			return o;
		}
		if (*l->p != ',')
			goto fail;
		l->p++;
		skip_ws(l);
	}
fail:
	json_decref(o);
	return NULL;
}

static json_t *parse_array(struct ld *l, int depth)
{
	json_t *a = json_array();
	if (!a)
		return NULL;
	skip_ws(l);
	if (l->p < l->end && *l->p == ']') {
		l->p++;
		return a;
	}
	for (;;) {
		json_t *v = parse_value(l, depth);
		if (!v || json_array_append_new(a, v))
			goto fail;
		skip_ws(l);
		if (l->p >= l->end)
			goto fail;
		if (*l->p == ']') {
			l->p++;
			return a;
		}
		if (*l->p != ',')
			goto fail;
		l->p++;
		skip_ws(l);
	}
fail:
	json_decref(a);
	return NULL;
}

/* A literal word: jansson reads a whole run of letters as one token, so
   "truex" is invalid; the caller's check of the next byte (a separator,
   whitespace or the end) gives up on that. */
static json_t *scan_word(struct ld *l, const char *w, size_t n, json_t *v)
{
	if ((size_t)(l->end - l->p) < n || memcmp(l->p, w, n) != 0)
		return NULL;
	l->p += n;
	return v;
}

/* The value at l->p (no whitespace before it), or NULL to give up. */
static json_t *parse_value(struct ld *l, int depth)
{
	if (l->p >= l->end)
		return NULL;
	switch (*l->p) {
	case '{':
		if (depth >= MAX_DEPTH)
			return NULL;
		l->p++;
		return parse_object(l, depth + 1);
	case '[':
		if (depth >= MAX_DEPTH)
			return NULL;
		l->p++;
		return parse_array(l, depth + 1);
	case '"': {
		l->p++;
		const char *s;
		size_t len;
		if (!scan_string(l, &s, &len))
			return NULL;
		return json_stringn_nocheck(s, len);
	}
	case 't':
		return scan_word(l, "true", 4, json_true());
	case 'f':
		return scan_word(l, "false", 5, json_false());
	case 'n':
		return scan_word(l, "null", 4, json_null());
	default:
		if (*l->p == '-' || (*l->p >= '0' && *l->p <= '9'))
			return scan_integer(l);
		return NULL;
	}
}

/* The fast path: the tree, or NULL to give up; *used: the bytes read (all
   of them unless JSON_DISABLE_EOF_CHECK). */
static json_t *load_fast(const char *p, size_t n, size_t flags, size_t *used)
{
	struct ld l = {
	    .p = (const unsigned char *)p,
	    .end = (const unsigned char *)p + n,
	    .flags = flags,
	};
	l.scratch = l.inline_;
	l.cap = sizeof l.inline_;
	json_t *v = NULL;
	bool eof_check = !(flags & JSON_DISABLE_EOF_CHECK);
	skip_ws(&l);
	if (l.p < l.end && ((eof_check && (flags & JSON_DECODE_ANY)) ||
			    *l.p == '{' || *l.p == '[')) {
		v = parse_value(&l, 0);
		if (v && eof_check) {
			skip_ws(&l);
			if (l.p != l.end) {
				json_decref(v);
				v = NULL;
			}
		}
	}
	if (l.scratch != l.inline_)
		free(l.scratch);
	*used = (size_t)(l.p - (const unsigned char *)p);
	return v;
}

json_t *reg__json_load_fast(const char *p, size_t n, size_t flags)
{
	size_t used;
	if (!p || (flags & ~(size_t)FAST_FLAGS))
		return NULL;
	return load_fast(p, n, flags, &used);
}

/*
 * The JSON text at p with ".0" after every integer beyond int64, so that
 * jansson reads those as reals: a new malloc'd copy in *out, and in *at
 * (new) the offsets in it of the *n_at insertions; false when there is none
 * or no memory. Strings are copied as they are.
 */
static bool bigints_as_reals(const char *p, size_t n, char **out,
			     size_t *out_len, size_t **at, size_t *n_at)
{
	/* each integer that grows has 19 digits or more, and grows by 2 */
	char *o = malloc(n + n / 9 + 3);
	size_t *ins = malloc((n / 19 + 1) * sizeof *ins);
	if (!o || !ins) {
		free(o);
		free(ins);
		return false;
	}
	size_t k = 0, grown = 0;
	for (size_t i = 0; i < n;) {
		char c = p[i];
		if (c == '"') {
			size_t j = i + 1;
			while (j < n && p[j] != '"')
				j += p[j] == '\\' ? 2 : 1;
			j = j < n ? j + 1 : n;
			memcpy(o + k, p + i, j - i);
			k += j - i;
			i = j;
			continue;
		}
		if (c != '-' && (c < '0' || c > '9')) {
			o[k++] = c;
			i++;
			continue;
		}
		size_t j = i + (c == '-'), d = j;
		while (j < n && p[j] >= '0' && p[j] <= '9')
			j++;
		bool integer = j == n || !p[j] || !strchr(".eE", p[j]);
		while (j < n && p[j] && strchr("0123456789.eE+-", p[j]))
			j++;
		memcpy(o + k, p + i, j - i);
		k += j - i;
		/* int64 holds every integer of up to 18 digits and none of
		   20 or more (JSON has no leading zeros) */
		bool big = integer && j - d >= 20;
		if (integer && j - d == 19 && j - i < 24) {
			char t[24];
			memcpy(t, p + i, j - i);
			t[j - i] = 0;
			errno = 0;
			(void)strtoll(t, NULL, 10);
			big = errno == ERANGE;
		}
		if (big) {
			ins[grown++] = k;
			memcpy(o + k, ".0", 2);
			k += 2;
		}
		i = j;
	}
	if (!grown) {
		free(o);
		free(ins);
		return false;
	}
	*out = o;
	*out_len = k;
	*at = ins;
	*n_at = grown;
	return true;
}

/* Integers beyond int64 as reals (json.h): jansson again on the text with
   them spelled as reals, its error's position and column moved back to
   the caller's text. NULL when there were none (*err as it was). */
static json_t *load_bigints(const char *p, size_t n, size_t flags,
			    json_error_t *err)
{
	char *t;
	size_t tn, *at, n_at;
	if (!bigints_as_reals(p, n, &t, &tn, &at, &n_at))
		return NULL;
	json_t *v = json_loadb(t, tn, flags, err);
	size_t before = 0, on_line = 0;
	for (size_t i = 0; i < n_at && (int)at[i] < err->position; i++) {
		before++;
		/* the line's start: column counts from it */
		if (err->column > 0 &&
		    (int)at[i] >= err->position - err->column)
			on_line++;
	}
	err->position -= (int)(2 * before);
	if (err->column > 0)
		err->column -= (int)(2 * on_line);
	free(t);
	free(at);
	return v;
}

json_t *reg_json_load(const char *p, size_t n, size_t flags, json_error_t *err)
{
	size_t used = 0;
	json_t *v = NULL;
	if (p && !(flags & ~(size_t)FAST_FLAGS))
		v = load_fast(p, n, flags, &used);
	if (!v) {
		json_error_t local, *e = err ? err : &local;
		/* jansson skips NUL bytes between tokens; Go (and so kube)
		   refuses them, and the field scans stop at them */
		const char *z = p ? memchr(p, '\0', n) : NULL;
		if (z) {
			int line = 1, col = 1;
			for (const char *q = p; q < z; q++, col++)
				if (*q == '\n') {
					line++;
					col = 0;
				}
			snprintf(e->text, sizeof e->text,
				 "invalid character '\\x00' in JSON text");
			e->line = line;
			e->column = col;
			e->position = (int)(z - p);
			strcpy(e->source, "<buffer>");
			return NULL;
		}
		v = json_loadb(p, n, flags, e);
		if (!v && json_error_code(e) == json_error_numeric_overflow &&
		    (!strncmp(e->text, "too big integer", 15) ||
		     !strncmp(e->text, "too big negative integer", 24)))
			v = load_bigints(p, n, flags, e);
		return v;
	}
	if (err) {
		/* What json_loadb leaves after a success: its
		   jsonp_error_init(err, "<buffer>") and the position after
		   the bytes it read. */
		err->text[0] = '\0';
		err->line = -1;
		err->column = -1;
		err->position = (int)used;
		strcpy(err->source, "<buffer>");
	}
	return v;
}

int reg__json_identical(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return a == b;
	if (json_typeof(a) != json_typeof(b) || !json_equal(a, b))
		return 0;
	if (json_is_array(a)) {
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!reg__json_identical(json_array_get(a, i),
						 json_array_get(b, i)))
				return 0;
	} else if (json_is_object(a)) {
		void *i = json_object_iter((json_t *)a);
		void *j = json_object_iter((json_t *)b);
		for (; i && j; i = json_object_iter_next((json_t *)a, i),
			       j = json_object_iter_next((json_t *)b, j)) {
			size_t n = json_object_iter_key_len(i);
			if (n != json_object_iter_key_len(j) ||
			    memcmp(json_object_iter_key(i),
				   json_object_iter_key(j), n) != 0 ||
			    !reg__json_identical(json_object_iter_value(i),
						 json_object_iter_value(j)))
				return 0;
		}
		return !i && !j;
	}
	return 1;
}

/* ------------------------------------------------------------ dumper */

/* Nesting the dumper takes before handing the whole dump to json_dumps:
   deeper than any loaded tree can be (jansson's parser stops at 2048), so
   only a tree built by hand, or a cycle (which jansson detects and fails),
   goes there. */
#define DUMP_MAX_DEPTH 2048

/* The dump's first buffer: most objects fit, the rest double. */
#define DUMP_INITIAL 1024

struct out {
	char *buf;
	size_t len;
	size_t cap;
	bool sorted; /* members in key order (reg_json_dump_sorted) */
	size_t mark; /* reg_json_dump_ordered's mark offset, or SIZE_MAX */
};

enum dump_rc {
	D_OK,
	D_FAIL,	  /* jansson fails too (or out of memory) */
	D_GIVEUP, /* let json_dumps decide */
};

static bool reserve(struct out *o, size_t n)
{
	if (o->cap - o->len >= n)
		return true;
	size_t cap = o->cap * 2;
	if (cap < o->len + n)
		cap = o->len + n;
	char *b = realloc(o->buf, cap);
	if (!b)
		return false;
	o->buf = b;
	o->cap = cap;
	return true;
}

static bool put(struct out *o, const char *s, size_t n)
{
	if (!reserve(o, n))
		return false;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return true;
}

/* What jansson writes for each byte below 0x20, '"' and '\\' (dump_string):
   short escapes where JSON has one, else \u00XX in upper case. */
static const char *const esc_text[0x20] = {
    "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006",
    "\\u0007", "\\b",	  "\\t",     "\\n",	"\\u000B", "\\f",     "\\r",
    "\\u000E", "\\u000F", "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014",
    "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001A", "\\u001B",
    "\\u001C", "\\u001D", "\\u001E", "\\u001F",
};

/* bad: what invalid UTF-8 makes of the dump (see dump_object). */
static enum dump_rc dump_string(struct out *o, const char *str, size_t len,
				enum dump_rc bad)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *end = s + len;
	/* Escapes grow a byte at most 6 times; reserve the plain case. */
	if (!reserve(o, len + 2))
		return D_FAIL;
	o->buf[o->len++] = '"';
	while (s < end) {
		const unsigned char *run = s;
		s = plain_run(s, end);
		if (s > run && !put(o, (const char *)run, (size_t)(s - run)))
			return D_FAIL;
		if (s >= end)
			break;
		unsigned char c = *s;
		const char *e;
		size_t k;
		switch (str_class[c]) {
		case C_QUOTE:
			if (!put(o, "\\\"", 2))
				return D_FAIL;
			s++;
			break;
		case C_ESC:
			if (!put(o, "\\\\", 2))
				return D_FAIL;
			s++;
			break;
		case C_CTRL:
			e = esc_text[c];
			if (!put(o, e, strlen(e)))
				return D_FAIL;
			s++;
			break;
		case C_HIGH:
			k = utf8_seq(s, (size_t)(end - s));
			if (!k)
				return bad;
			if (!put(o, (const char *)s, k))
				return D_FAIL;
			s += k;
			break;
		case C_PLAIN:
		default:
			break;
		}
	}
	return put(o, "\"", 1) ? D_OK : D_FAIL;
}

/* json_int_t in decimal, as "%" JSON_INTEGER_FORMAT prints it. */
static bool dump_integer(struct out *o, json_int_t i)
{
	char b[24];
	char *p = b + sizeof b;
	uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (i < 0)
		*--p = '-';
	return put(o, p, (size_t)(b + sizeof b - p));
}

size_t reg_go_float(double x, char out[REG_GO_FLOAT_MAX])
{
	/* The shortest %e text that reads back: the correctly rounded
	   p-digit decimal is the nearest one, so it reads back whenever any
	   p-digit decimal does. */
	char e[REG_GO_FLOAT_MAX];
	for (int p = 1; p <= 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	char *ep = strchr(e, 'e');
	int exp = ep ? atoi(ep + 1) : 0;
	if (ep)
		*ep = '\0';
	double a = fabs(x);
	int n;
	if (a != 0 && (a < 1e-6 || a >= 1e21)) {
		n = snprintf(out, REG_GO_FLOAT_MAX, "%se%c%d", e,
			     exp < 0 ? '-' : '+', abs(exp));
		return (size_t)n;
	}
	/* e is "[-]d[.ddd]": its digits, with the point exp places on */
	char digits[24];
	int nd = 0;
	for (const char *p = e; *p && nd < (int)sizeof digits - 1; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	n = 0;
	if (signbit(x))
		out[n++] = '-';
	if (exp < 0) {
		/* |x| >= 1e-6 here, so at most 6 zeros and 17 digits */
		out[n++] = '0';
		out[n++] = '.';
		for (int i = -1; i > exp; i--)
			out[n++] = '0';
		for (int i = 0; i < nd; i++)
			out[n++] = digits[i];
	} else {
		/* below 1e21: at most 21 digits before the point */
		for (int i = 0; i < nd || i <= exp; i++) {
			if (i == exp + 1)
				out[n++] = '.';
			out[n++] = i < nd ? digits[i] : '0';
		}
	}
	out[n] = '\0';
	return (size_t)n;
}

bool reg_json_has_nul(const json_t *v)
{
	const char *key;
	size_t klen, i;
	json_t *m;
	switch (json_typeof(v)) {
	case JSON_STRING:
		return strlen(json_string_value(v)) != json_string_length(v);
	case JSON_OBJECT:
		json_object_keylen_foreach((json_t *)v, key, klen, m)
		{
			if (strlen(key) != klen || reg_json_has_nul(m))
				return true;
		}
		return false;
	case JSON_ARRAY:
		json_array_foreach(v, i, m)
		{
			if (reg_json_has_nul(m))
				return true;
		}
		return false;
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return false;
	}
	return false;
}

const char *reg_go_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_NULL:
		return "null";
	case JSON_INTEGER:
	case JSON_REAL:
		break;
	}
	return "number";
}

static enum dump_rc dump_real(struct out *o, const json_t *v)
{
	char b[REG_GO_FLOAT_MAX];
	double x = json_real_value(v);
	if (!isfinite(x))
		return D_FAIL; /* as jansson: no JSON text for it */
	size_t n = reg_go_float(x, b);
	return put(o, b, n) ? D_OK : D_FAIL;
}

static enum dump_rc dump_value(struct out *o, const json_t *v, int depth);

struct member {
	const char *key;
	size_t len;
	const json_t *v;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int d = memcmp(x->key, y->key, n);
	return d ? d : (x->len > y->len) - (x->len < y->len);
}

static enum dump_rc dump_member(struct out *o, const char *key, size_t len,
				const json_t *v, int depth);

/* Members in byte order of their keys, as Go encodes a map. */
static enum dump_rc dump_object_sorted(struct out *o, const json_t *v,
				       int depth)
{
	size_t n = json_object_size(v), i = 0;
	struct member *m = malloc((n ? n : 1) * sizeof *m);
	if (!m)
		return D_FAIL;
	for (void *it = json_object_iter((json_t *)v); it && i < n;
	     it = json_object_iter_next((json_t *)v, it), i++)
		m[i] = (struct member){json_object_iter_key(it),
				       json_object_iter_key_len(it),
				       json_object_iter_value(it)};
	qsort(m, i, sizeof *m, cmp_member);
	enum dump_rc rc = put(o, "{", 1) ? D_OK : D_FAIL;
	for (size_t k = 0; k < i && !rc; k++) {
		if (k && !put(o, ",", 1))
			rc = D_FAIL;
		else
			rc = dump_member(o, m[k].key, m[k].len, m[k].v, depth);
	}
	free(m);
	if (!rc && !put(o, "}", 1))
		rc = D_FAIL;
	return rc;
}

static enum dump_rc dump_member(struct out *o, const char *key, size_t len,
				const json_t *v, int depth)
{
	enum dump_rc rc = dump_string(o, key, len, D_GIVEUP);
	if (rc)
		return rc;
	if (!put(o, ":", 1))
		return D_FAIL;
	return dump_value(o, v, depth + 1);
}

static enum dump_rc dump_object(struct out *o, const json_t *v, int depth)
{
	if (o->sorted)
		return dump_object_sorted(o, v, depth);
	void *it = json_object_iter((json_t *)v);
	if (!put(o, "{", 1))
		return D_FAIL;
	bool first = true;
	while (it) {
		if (!first && !put(o, ",", 1))
			return D_FAIL;
		first = false;
		/* jansson ignores a key's failure to dump and goes on, with
		   part of the key written and no closing quote: a key that
		   is not UTF-8 (only the _nocheck setters make one) goes
		   to json_dumps for those same bytes. */
		enum dump_rc rc =
		    dump_member(o, json_object_iter_key(it),
				json_object_iter_key_len(it),
				json_object_iter_value(it), depth);
		if (rc)
			return rc;
		it = json_object_iter_next((json_t *)v, it);
	}
	return put(o, "}", 1) ? D_OK : D_FAIL;
}

static enum dump_rc dump_array(struct out *o, const json_t *v, int depth)
{
	size_t n = json_array_size(v);
	if (!put(o, "[", 1))
		return D_FAIL;
	for (size_t i = 0; i < n; i++) {
		if (i && !put(o, ",", 1))
			return D_FAIL;
		enum dump_rc rc =
		    dump_value(o, json_array_get(v, i), depth + 1);
		if (rc)
			return rc;
	}
	return put(o, "]", 1) ? D_OK : D_FAIL;
}

static enum dump_rc dump_value(struct out *o, const json_t *v, int depth)
{
	if (!v)
		return D_FAIL;
	if (depth > DUMP_MAX_DEPTH)
		return D_GIVEUP;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return dump_object(o, v, depth);
	case JSON_ARRAY:
		return dump_array(o, v, depth);
	case JSON_STRING:
		/* jansson fails the whole dump on a value that is not
		   UTF-8. */
		return dump_string(o, json_string_value(v),
				   json_string_length(v), D_FAIL);
	case JSON_INTEGER:
		return dump_integer(o, json_integer_value(v)) ? D_OK : D_FAIL;
	case JSON_REAL:
		return dump_real(o, v);
	case JSON_TRUE:
		return put(o, "true", 4) ? D_OK : D_FAIL;
	case JSON_FALSE:
		return put(o, "false", 5) ? D_OK : D_FAIL;
	case JSON_NULL:
		return put(o, "null", 4) ? D_OK : D_FAIL;
	}
	return D_FAIL;
}

/* json_dumps' result, moved into a malloc'd buffer: it is allocated with
   jansson's allocator, which json_set_alloc_funcs may have replaced. */
static char *dump_slow(const json_t *v, size_t flags, size_t *len)
{
	char *s = json_dumps(v, JSON_COMPACT | flags);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n + 1);
		if (len)
			*len = n;
	}
	json_free_t jfree;
	json_get_alloc_funcs(NULL, &jfree);
	jfree(s);
	return r;
}

/* Dump v into a new buffer, members in key order when sorted; what the
   fast dumper gives up on goes to json_dumps with slow_flags. */
static char *dump_new(const json_t *v, bool sorted, size_t slow_flags,
		      size_t *len)
{
	struct out o = {
	    .buf = malloc(DUMP_INITIAL), .cap = DUMP_INITIAL, .sorted = sorted};
	if (!o.buf)
		return NULL;
	enum dump_rc rc = dump_value(&o, v, 0);
	if (rc == D_OK && put(&o, "", 1)) {
		if (len)
			*len = o.len - 1;
		return o.buf;
	}
	free(o.buf);
	return rc == D_GIVEUP ? dump_slow(v, slow_flags, len) : NULL;
}

char *reg_json_dump(const json_t *v, size_t *len)
{
	if (!json_is_object(v) && !json_is_array(v))
		return NULL;
	return dump_new(v, false, 0, len);
}

static bool key_is(const char *key, size_t len, const char *name)
{
	return name && strlen(name) == len && !memcmp(key, name, len);
}

static enum dump_rc dump_object_ordered(struct out *o, const json_t *v,
					int depth,
					const struct reg_json_order *ord);

/* The member at iterator it of an ordered object, after a comma unless it
   is the first. */
static enum dump_rc dump_member_ordered(struct out *o, void *it, bool first,
					int depth,
					const struct reg_json_order *ord)
{
	const char *key = json_object_iter_key(it);
	size_t len = json_object_iter_key_len(it);
	const json_t *val = json_object_iter_value(it);
	if (!first && !put(o, ",", 1))
		return D_FAIL;
	if (!ord->child_order || !json_is_object(val) ||
	    !key_is(key, len, ord->child)) {
		if (!key_is(key, len, ord->mark))
			return dump_member(o, key, len, val, depth);
		enum dump_rc rc = dump_string(o, key, len, D_GIVEUP);
		if (rc)
			return rc;
		if (!put(o, ":", 1))
			return D_FAIL;
		o->mark = o->len;
		return dump_value(o, val, depth + 1);
	}
	enum dump_rc rc = dump_string(o, key, len, D_GIVEUP);
	if (rc)
		return rc;
	if (!put(o, ":", 1))
		return D_FAIL;
	return dump_object_ordered(o, val, depth + 1, ord->child_order);
}

static enum dump_rc dump_object_ordered(struct out *o, const json_t *v,
					int depth,
					const struct reg_json_order *ord)
{
	if (ord->n_keys > REG_JSON_ORDER_MAX)
		return D_GIVEUP;
	void *first[REG_JSON_ORDER_MAX]; /* the members already written */
	size_t n_first = 0;
	enum dump_rc rc = put(o, "{", 1) ? D_OK : D_FAIL;
	for (size_t i = 0; i < ord->n_keys && !rc; i++) {
		void *it = json_object_iter_at((json_t *)v, ord->keys[i]);
		if (!it)
			continue;
		rc = dump_member_ordered(o, it, !n_first, depth, ord);
		first[n_first++] = it;
	}
	bool none = !n_first;
	size_t n_rest = 0, n = json_object_size(v);
	/* a sorted dump's members the listed keys leave */
	struct member *rest =
	    o->sorted ? malloc((n ? n : 1) * sizeof *rest) : NULL;
	if (o->sorted && !rest)
		rc = D_FAIL;
	for (void *it = json_object_iter((json_t *)v); it && !rc;
	     it = json_object_iter_next((json_t *)v, it)) {
		size_t k = 0;
		while (k < n_first && first[k] != it)
			k++;
		if (k < n_first)
			continue;
		if (rest && n_rest < n) {
			rest[n_rest++] =
			    (struct member){json_object_iter_key(it),
					    json_object_iter_key_len(it),
					    json_object_iter_value(it)};
			continue;
		}
		rc = dump_member_ordered(o, it, none, depth, ord);
		none = false;
	}
	if (rest) {
		qsort(rest, n_rest, sizeof *rest, cmp_member);
		for (size_t k = 0; k < n_rest && !rc; k++) {
			rc = dump_member_ordered(
			    o, json_object_key_to_iter(rest[k].key), none,
			    depth, ord);
			none = false;
		}
		free(rest);
	}
	if (!rc && !put(o, "}", 1))
		rc = D_FAIL;
	return rc;
}

char *reg_json_dump_ordered(const json_t *v, const struct reg_json_order *ord,
			    size_t *len, size_t *mark_off)
{
	if (!json_is_object(v))
		return NULL;
	struct out o = {.buf = malloc(DUMP_INITIAL),
			.cap = DUMP_INITIAL,
			.sorted = ord->sorted,
			.mark = SIZE_MAX};
	if (!o.buf)
		return NULL;
	if (dump_object_ordered(&o, v, 0, ord) == D_OK && put(&o, "", 1)) {
		*len = o.len - 1;
		*mark_off = o.mark;
		return o.buf;
	}
	free(o.buf);
	return NULL;
}

char *reg_json_dump_sorted(const json_t *v, size_t *len)
{
	if (!v)
		return NULL;
	return dump_new(v, true, JSON_SORT_KEYS | JSON_ENCODE_ANY, len);
}

int reg__json_dump_matches(const char *ours, const char *jansson)
{
	if (!strcmp(ours, jansson))
		return 1;
	/* Read as doubles, 1 and 1.0 are one number; an integer beyond
	   2^53 loses the same digits on both sides. */
	json_t *a =
	    json_loads(ours, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
	json_t *b =
	    json_loads(jansson, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
	int same = a && b && json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

/* ------------------------------------------------------------------ */
/* Go's encoding/json syntax check                                      */
/* ------------------------------------------------------------------ */

const char *reg_json_string_end(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++) {
		q = memchr(q, '"', (size_t)(end - q));
		if (!q)
			return NULL;
		size_t bs = 0;
		while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
			bs++;
		if (bs % 2 == 0)
			return q;
	}
	return NULL;
}

size_t reg_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

size_t reg_utf8_encode(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t reg_utf8_decode(const unsigned char *s, size_t n, uint32_t *r)
{
	size_t w = reg_utf8_seq(s, n);
	if (w == 0) {
		*r = 0xfffd;
		return 1;
	}
	uint32_t v = w == 1 ? s[0] : s[0] & (0x7fu >> w);
	for (size_t i = 1; i < w; i++)
		v = (v << 6) | (s[i] & 0x3fu);
	*r = v;
	return w;
}

char *reg_utf8_copy(const char *s, size_t n, size_t *len)
{
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	char *b = malloc(3 * n + 1);
	if (!b)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = reg_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0) {
			memcpy(b + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(b + o, s + i, k);
			o += k;
			i += k;
		}
	}
	b[o] = '\0';
	if (len)
		*len = o;
	return b;
}

/* The code point of the \u escape at s[0..5] (s[0] the backslash), or -1
   where there is no such escape among the m bytes. */
static long u_escape(const char *s, size_t m)
{
	if (m < 6 || s[0] != '\\' || s[1] != 'u')
		return -1;
	long v = 0;
	for (int i = 2; i < 6; i++) {
		int d = reg_hex_digit((unsigned char)s[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

int reg_json_go_strings(const char *p, size_t n, char **out, size_t *len)
{
	/* called only for a body that failed to load: one pass, which
	   tells at its end whether anything changed */
	if (n > (SIZE_MAX - 1) / 3)
		return -1;
	char *b = malloc(3 * n + 1);
	if (!b)
		return -1;
	size_t o = 0;
	bool in_str = false, changed = false;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		if (!in_str) {
			in_str = c == '"';
			b[o++] = (char)c;
			i++;
			continue;
		}
		if (c == '"') {
			in_str = false;
			b[o++] = (char)c;
			i++;
		} else if (c == '\\') {
			long u = u_escape(p + i, n - i);
			if (u < 0xd800 || u > 0xdfff) {
				/* an ordinary escape and the byte after it */
				size_t k = u >= 0 ? 6 : (i + 1 < n ? 2 : 1);
				memcpy(b + o, p + i, k);
				o += k;
				i += k;
				continue;
			}
			long lo = u_escape(p + i + 6, n - i - 6);
			if (u <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
				memcpy(b + o, p + i, 12);
				o += 12;
				i += 12;
			} else {
				memcpy(b + o, "\\ufffd", 6);
				o += 6;
				i += 6;
				changed = true;
			}
		} else {
			size_t k =
			    reg_utf8_seq((const unsigned char *)p + i, n - i);
			if (k == 0) {
				memcpy(b + o, "\xef\xbf\xbd", 3);
				o += 3;
				i++;
				changed = true;
			} else {
				memcpy(b + o, p + i, k);
				o += k;
				i += k;
			}
		}
	}
	if (!changed) {
		free(b);
		return 0;
	}
	b[o] = '\0';
	*out = b;
	*len = o;
	return 1;
}

/*
 * The byte c as encoding/json's quoteChar shows it: strconv.Quote of the
 * code point c between single quotes ('x', '\x01', '\n', '\\', '\u0085',
 * 'é'), with ' and " as themselves. out has room for 9 bytes.
 */
static void go_quote_char(unsigned char c, char out[9])
{
	static const char esc[] = "\a\b\f\n\r\t\v";
	static const char let[] = "abfnrtv";
	const char *e = c ? strchr(esc, c) : NULL;

	if (c == '\'') {
		strcpy(out, "'\\''");
	} else if (c == '\\') {
		strcpy(out, "'\\\\'");
	} else if (e) {
		snprintf(out, 9, "'\\%c'", let[e - esc]);
	} else if (c < 0x20 || c == 0x7f) {
		snprintf(out, 9, "'\\x%02x'", c);
	} else if (c < 0x80) {
		snprintf(out, 9, "'%c'", c);
	} else if (c <= 0xa0 || c == 0xad) {
		/* C1 controls, no-break space, soft hyphen: not IsPrint */
		snprintf(out, 9, "'\\u%04x'", c);
	} else {
		snprintf(out, 9, "'%c%c'", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
	}
}

/* encoding/json's maxNestingDepth */
#define GO_MAX_DEPTH 10000

enum go_st {
	GS_VALUE,	  /* stateBeginValue */
	GS_VALUE_OR_END,  /* stateBeginValueOrEmpty, after '[' */
	GS_KEY_OR_END,	  /* stateBeginStringOrEmpty, after '{' */
	GS_KEY,		  /* stateBeginString, after ',' in an object */
	GS_END,		  /* stateEndValue */
	GS_TOP_END,	  /* stateEndTop */
	GS_STR, GS_ESC, GS_U1, GS_U2, GS_U3, GS_U4,
	GS_NEG, GS_INT0, GS_INT, GS_DOT, GS_FRAC, GS_E, GS_ESIGN, GS_EXP,
	GS_LIT,		  /* inside true, false or null */
};

int reg_go_json_check(const char *text, size_t n, char *msg, size_t cap)
{
	/* One bit a level: 1 an object, 0 an array; key says whether the
	   innermost object waits for a key's colon (parseObjectKey) rather
	   than a value's comma (parseObjectValue). */
	unsigned char stack[GO_MAX_DEPTH / 8 + 2];
	size_t depth = 0;
	bool key = false;
	enum go_st st = GS_VALUE;
	const char *lit = NULL, *lit_name = NULL;
	const unsigned char *p = (const unsigned char *)text;
	const char *ctx = NULL;
	unsigned char bad = 0;

#define IS_OBJ(d) (stack[(d) / 8] >> ((d) % 8) & 1)
	/* Go's eof() feeds one space after the last byte: "1." ends in
	   "invalid character ' ' after decimal point ...", "[1" in an
	   unexpected end. */
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = i < n ? p[i] : ' ';
		bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
	again:
		switch (st) {
		case GS_VALUE_OR_END:
			if (space)
				continue;
			if (c == ']') {
				st = GS_END;
				goto again;
			}
			st = GS_VALUE;
			/* fall through */
		case GS_VALUE:
			if (space)
				continue;
			if (c == '{' || c == '[') {
				if (depth >= GO_MAX_DEPTH) {
					snprintf(msg, cap, "exceeded max depth");
					return 0;
				}
				if (c == '{')
					stack[depth / 8] |= (unsigned char)(1u << depth % 8);
				else
					stack[depth / 8] &= (unsigned char)~(1u << depth % 8);
				depth++;
				key = c == '{';
				st = c == '{' ? GS_KEY_OR_END : GS_VALUE_OR_END;
			} else if (c == '"') {
				st = GS_STR;
			} else if (c == '-') {
				st = GS_NEG;
			} else if (c == '0') {
				st = GS_INT0;
			} else if (c >= '1' && c <= '9') {
				st = GS_INT;
			} else if (c == 't' || c == 'f' || c == 'n') {
				lit_name = c == 't' ? "true" : c == 'f' ? "false" : "null";
				lit = lit_name + 1;
				st = GS_LIT;
			} else {
				ctx = "looking for beginning of value";
				goto fail;
			}
			continue;
		case GS_KEY_OR_END:
			if (space)
				continue;
			if (c == '}') {
				key = false;
				st = GS_END;
				goto again;
			}
			st = GS_KEY;
			/* fall through */
		case GS_KEY:
			if (space)
				continue;
			if (c != '"') {
				ctx = "looking for beginning of object key string";
				goto fail;
			}
			st = GS_STR;
			continue;
		case GS_END:
			if (depth == 0) {
				st = GS_TOP_END;
				goto again;
			}
			if (space)
				continue;
			if (IS_OBJ(depth - 1) && key) {
				if (c != ':') {
					ctx = "after object key";
					goto fail;
				}
				key = false;
				st = GS_VALUE;
			} else if (IS_OBJ(depth - 1)) {
				if (c == ',') {
					key = true;
					st = GS_KEY;
				} else if (c == '}') {
					depth--;
					key = false;
				} else {
					ctx = "after object key:value pair";
					goto fail;
				}
			} else {
				if (c == ',') {
					st = GS_VALUE;
				} else if (c == ']') {
					depth--;
					key = false;
				} else {
					ctx = "after array element";
					goto fail;
				}
			}
			continue;
		case GS_TOP_END:
			if (!space) {
				ctx = "after top-level value";
				goto fail;
			}
			continue;
		case GS_STR:
			if (c == '"')
				st = GS_END;
			else if (c == '\\')
				st = GS_ESC;
			else if (c < 0x20) {
				ctx = "in string literal";
				goto fail;
			}
			continue;
		case GS_ESC:
			if (c == 'u') {
				st = GS_U1;
			} else if (c && strchr("bfnrt\\/\"", c)) {
				st = GS_STR;
			} else {
				ctx = "in string escape code";
				goto fail;
			}
			continue;
		case GS_U1:
		case GS_U2:
		case GS_U3:
		case GS_U4:
			if (reg_hex_digit(c) < 0) {
				ctx = "in \\u hexadecimal character escape";
				goto fail;
			}
			st = st == GS_U4 ? GS_STR : st + 1;
			continue;
		case GS_NEG:
			if (c == '0') {
				st = GS_INT0;
			} else if (c >= '1' && c <= '9') {
				st = GS_INT;
			} else {
				ctx = "in numeric literal";
				goto fail;
			}
			continue;
		case GS_INT:
			if (c >= '0' && c <= '9')
				continue;
			/* fall through */
		case GS_INT0:
			if (c == '.') {
				st = GS_DOT;
			} else if (c == 'e' || c == 'E') {
				st = GS_E;
			} else {
				st = GS_END;
				goto again;
			}
			continue;
		case GS_DOT:
			if (c < '0' || c > '9') {
				ctx = "after decimal point in numeric literal";
				goto fail;
			}
			st = GS_FRAC;
			continue;
		case GS_FRAC:
			if (c >= '0' && c <= '9')
				continue;
			if (c == 'e' || c == 'E') {
				st = GS_E;
				continue;
			}
			st = GS_END;
			goto again;
		case GS_E:
			st = GS_ESIGN;
			if (c == '+' || c == '-')
				continue;
			/* fall through */
		case GS_ESIGN:
			if (c < '0' || c > '9') {
				ctx = "in exponent of numeric literal";
				goto fail;
			}
			st = GS_EXP;
			continue;
		case GS_EXP:
			if (c >= '0' && c <= '9')
				continue;
			st = GS_END;
			goto again;
		case GS_LIT:
			if (c != (unsigned char)*lit) {
				char q[9];
				bad = c;
				go_quote_char(bad, q);
				snprintf(msg, cap,
					 "invalid character %s in literal %s (expecting '%c')",
					 q, lit_name, *lit);
				return 0;
			}
			if (!*++lit)
				st = GS_END;
			continue;
		}
		continue;
	fail:
		bad = c;
		char q[9];
		go_quote_char(bad, q);
		snprintf(msg, cap, "invalid character %s %s", q, ctx);
		return 0;
	}
#undef IS_OBJ
	if (st != GS_TOP_END) {
		snprintf(msg, cap, "unexpected end of JSON input");
		return 0;
	}
	return 1;
}

/*
 * Go's unicode.IsPrint: for a non-ASCII scalar, letters, marks, numbers,
 * punctuation and symbols print; controls, format characters, separators,
 * private use and unassigned code points do not. Without Unicode's tables
 * this knows the non-printing blocks and the format and space characters
 * by range; other unassigned code points are taken as printing (they
 * change how a bad key is quoted, or which characters of a User-Agent a
 * field manager keeps).
 */
bool reg_go_isprint(uint32_t r)
{
	static const uint32_t no[][2] = {
	    {0x0080, 0x00a0},	{0x00ad, 0x00ad},    {0x0600, 0x0605},
	    {0x061c, 0x061c},	{0x06dd, 0x06dd},    {0x070f, 0x070f},
	    {0x0890, 0x0891},	{0x08e2, 0x08e2},    {0x180e, 0x180e},
	    {0x1680, 0x1680},	{0x2000, 0x200f},    {0x2028, 0x202f},
	    {0x205f, 0x2064},	{0x2066, 0x206f},    {0x3000, 0x3000},
	    {0xd800, 0xf8ff},	{0xfdd0, 0xfdef},    {0xfeff, 0xfeff},
	    {0xfff0, 0xfffb},	{0x110bd, 0x110bd},  {0x110cd, 0x110cd},
	    {0x13430, 0x1343f}, {0x1bca0, 0x1bca3},  {0x1d173, 0x1d17a},
	    {0xe0000, 0xe00ff}, {0xe01f0, 0x10ffff},
	};
	if (r < 0x80)
		return r >= 0x20 && r < 0x7f;
	if ((r & 0xfffe) == 0xfffe)
		return false;
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (r >= no[i][0] && r <= no[i][1])
			return false;
	return true;
}
