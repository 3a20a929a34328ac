/*
 * fields.c -- fieldValidation for built-in kinds and their OpenAPI schemas,
 * both from the field tables of pbtab.h (see fields.h).
 *
 * kube decodes a built-in object into its Go struct: a member the struct
 * has no field for is dropped, and with strict decoding recorded as
 * `unknown field "<path>"` (sigs.k8s.io/json for a JSON body, the
 * unstructured converter for a strategic merge patch). The tables list
 * every JSON field of the messages lapis serves, so walking an object
 * against them finds exactly those members. The same walk checks each
 * known member's value against its field's type, as encoding/json (or,
 * for a strategic merge patch, the unstructured converter) would while
 * filling the struct, and words the first error as Go does.
 *
 * Pure, any thread: no globals but the constant tables.
 *
 * Invariants:
 *   1. A path never overflows its buffer: a path longer than PATH_MAX_LEN
 *      is cut (the error text then names a prefix of the path).
 *   2. Recursion follows the tables, which are finite and acyclic, so it
 *      is bounded by their depth whatever the input.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "registry/json.h"
#include "registry/object.h"
#include "tz.h"

/* Paths of unknown fields in error texts; a key longer than this is cut. */
#define PATH_MAX_LEN 1024

/* ------------------------------------------------------------------ */
/* Strict errors                                                        */
/* ------------------------------------------------------------------ */

enum srv_fv srv_fv_mode(const char *value)
{
	if (value && !strcmp(value, "Strict"))
		return SRV_FV_STRICT;
	if (value && !strcmp(value, "Ignore"))
		return SRV_FV_IGNORE;
	return SRV_FV_WARN;
}

void srv_strict_add(struct srv_strict *s, const char *text)
{
	if (!s || s->mode == SRV_FV_IGNORE || s->n >= SRV_STRICT_MAX)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->errs[i], text))
			return;
	char *c = strdup(text);
	if (c) {
		s->mark[s->n] = s->mark_now;
		s->errs[s->n++] = c;
	}
}

void srv_go_quote(const char *in, char *out, size_t size)
{
	static const char named[] = "\a\b\f\n\r\t\v";
	static const char letters[] = "abfnrtv";
	const unsigned char *p = (const unsigned char *)in;
	size_t len = strlen(in), o = 0;

	out[o++] = '"';
	for (size_t i = 0; i < len;) {
		char esc[16];
		uint32_t r;
		size_t w = reg_utf8_seq(p + i, len - i);
		if (!w) { /* a byte that starts no character */
			snprintf(esc, sizeof esc, "\\x%02x", p[i]);
			w = 1;
		} else {
			reg_utf8_decode(p + i, w, &r);
			const char *c =
			    r && r < 0x80 ? strchr(named, (int)r) : NULL;
			if (r == '"' || r == '\\')
				snprintf(esc, sizeof esc, "\\%c", (char)r);
			else if (c)
				snprintf(esc, sizeof esc, "\\%c",
					 letters[c - named]);
			else if (reg_go_isprint(r))
				snprintf(esc, sizeof esc, "%.*s", (int)w,
					 (const char *)p + i);
			else if (r < 0x80)
				snprintf(esc, sizeof esc, "\\x%02x", r);
			else if (r < 0x10000)
				snprintf(esc, sizeof esc, "\\u%04x", r);
			else
				snprintf(esc, sizeof esc, "\\U%08x", r);
		}
		size_t n = strlen(esc);
		if (o + n + 2 > size)
			break; /* no character left in halves */
		memcpy(out + o, esc, n);
		o += n;
		i += w;
	}
	out[o++] = '"';
	out[o] = '\0';
}

void srv_go_string_list(const json_t *l, char *out, size_t size)
{
	size_t at = (size_t)snprintf(out, size, "[]string{");
	size_t i;
	json_t *x;
	json_array_foreach(l, i, x)
	{
		if (at >= size)
			break;
		char q[300];
		srv_go_quote(json_string_value(x) ? json_string_value(x) : "",
			     q, sizeof q);
		at += (size_t)snprintf(out + at, size - at, "%s%s",
				       i ? ", " : "", q);
	}
	if (at < size)
		snprintf(out + at, size - at, "}");
}

void srv_strict_field(struct srv_strict *s, const char *what, const char *path)
{
	if (!s || s->mode == SRV_FV_IGNORE)
		return;
	char q[4 * PATH_MAX_LEN + 3];
	char text[sizeof q + 32];
	srv_go_quote(path, q, sizeof q);
	snprintf(text, sizeof text, "%s %s", what, q);
	srv_strict_add(s, text);
}

char *srv_strict_message(const struct srv_strict *s)
{
	static const char head[] = "strict decoding error: ";

	if (!s || !s->n)
		return NULL;
	size_t len = sizeof head;
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->errs[i]) + 2;
	char *m = malloc(len);
	if (!m)
		return NULL;
	char *p = m;
	memcpy(p, head, sizeof head - 1);
	p += sizeof head - 1;
	for (size_t i = 0; i < s->n; i++) {
		if (i) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		size_t n = strlen(s->errs[i]);
		memcpy(p, s->errs[i], n);
		p += n;
	}
	*p = '\0';
	return m;
}

void srv_strict_free(struct srv_strict *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->errs[i]);
	s->n = 0;
}

/* ------------------------------------------------------------------ */
/* The walker                                                           */
/* ------------------------------------------------------------------ */

/*
 * One pass over a built-in object drops the members its message has no
 * field for (recording each in s) and, with te set, checks the value of
 * every known member against its field's type the way kube's decoder does
 * (fields.h). Two paths grow as it descends: kube's path for unknown
 * fields ("spec.ports[0].foo") and Go's error context for type errors
 * (encoding/json's FieldStack: the JSON names from the root, joined by
 * dots, list indices and map keys left out: "spec.ports.port").
 */
struct walk {
	bool sorted;		      /* members in name order */
	unsigned depth;		      /* messages entered (FIELDS_MAX_DEPTH) */
	/* Inside a JSONSchemaPropsOr* value: its UnmarshalJSON decodes the
	   schema with a plain json.Unmarshal, which drops unknown fields
	   silently, and returns its first type error, which ends the outer
	   decoding with the outer context (the Or field's struct and path,
	   the inner value and type). */
	unsigned in_or;		      /* Or values entered */
	const char *or_struct;	      /* the outermost one's struct */
	size_t or_glen;		      /* and the length of its Go path */
	bool keep;		      /* leave unknown members in place */
	enum srv_decoder dec;	      /* whose type rules and words */
	struct srv_strict *s;	      /* unknown fields, may be NULL */
	struct srv_typeerr *te;	      /* NULL: names only */
	json_t *repl; /* the unstructured converter's value for the one
			 uns_scalar just took (its parent sets it) */
	char path[PATH_MAX_LEN + 1];  /* kube's path of the member */
	char gpath[PATH_MAX_LEN + 1]; /* Go's field path of the member */
};

/* Messages nested deeper than this are not walked (left as they are): the
   recursive tables (JSONSchemaProps) would otherwise recurse as deep as the
   input. A CRD schema nested this deep is refused by its compilation
   (SRV_SCHEMA_MAX_DEPTH is lower). */
#define FIELDS_MAX_DEPTH 512

/* Objects with at most this many members are walked without allocating
   (ObjectMeta, the largest table, has 15 fields; a body's maps rarely
   have more, and a longer one costs one malloc). */
#define KEYS_ON_STACK 32

static void walk_msg(struct walk *w, const struct pb_msg *m, json_t *obj,
		     size_t plen, size_t glen, bool root);

/* path[0..plen) + ".key" (or "key" at the root) into path; returns the new
   length. path has room for PATH_MAX_LEN + 1 bytes. Called for every
   member walked or scanned, hence memcpy rather than snprintf. */
static size_t path_key(char *path, size_t plen, const char *key)
{
	size_t end = plen, n = strlen(key);
	if (plen && end < PATH_MAX_LEN)
		path[end++] = '.';
	if (n > PATH_MAX_LEN - end)
		n = PATH_MAX_LEN - end;
	memcpy(path + end, key, n);
	end += n;
	path[end] = '\0';
	return end;
}

static size_t path_index(char *path, size_t plen, size_t i)
{
	int n = snprintf(path + plen, PATH_MAX_LEN + 1 - plen, "[%zu]", i);
	size_t end = plen + (n > 0 ? (size_t)n : 0);
	return end > PATH_MAX_LEN ? PATH_MAX_LEN : end;
}

static bool known(const struct pb_msg *m, const char *key, bool root)
{
	if (root && (!strcmp(key, "apiVersion") || !strcmp(key, "kind")))
		return true;
	return srv_pb_field(m, key) != NULL;
}

/* ---- Go's names for values and types ---- */

/* Go's word for a JSON value in UnmarshalTypeError: "string", "bool",
   "array", "object", and "number", with its text ("number 1.5") when
   num_text is set, as for integer targets. */
static const char *go_what(const json_t *v, bool num_text, char *buf,
			   size_t size)
{
	if (!num_text || !json_is_number(v))
		return reg_go_type(v);
	if (json_is_integer(v)) {
		snprintf(buf, size, "number %" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return buf;
	}
	char f[REG_GO_FLOAT_MAX];
	reg_go_float(json_real_value(v), f);
	snprintf(buf, size, "number %s", f);
	return buf;
}

/* The last component of an OpenAPI package name: Go's package name
   ("io.k8s.api.core.v1" -> "v1"). */
static const char *pkg_name(const char *pkg)
{
	const char *dot = strrchr(pkg, '.');
	return dot ? dot + 1 : pkg;
}

/* The Go type of one value of f (an item, for a repeated field), as
   reflect's Type.String() names it. */
static const char *go_elem_type(const struct pb_field *f, char *buf,
				size_t size)
{
	if (f->go)
		return f->go;
	switch (f->type) {
	case PB_STRING:
		return "string";
	case PB_BYTES:
		return "[]uint8";
	case PB_BOOL:
		return "bool";
	case PB_INT32:
		return "int32";
	case PB_INT64:
		return "int64";
	case PB_MSG:
		snprintf(buf, size, "%s.%s", pkg_name(f->sub->pkg),
			 f->sub->name);
		return buf;
	case PB_TIME:
		return "v1.Time";
	case PB_MICROTIME:
		return "v1.MicroTime";
	case PB_INTORSTR:
		return "intstr.IntOrString";
	case PB_FIELDSV1:
		return "v1.FieldsV1";
	case PB_MAP_STRING:
		return "map[string]string";
	case PB_MAP_BYTES:
		return "map[string][]uint8";
	case PB_DOUBLE:
		return "float64";
	case PB_JSON:
		return "v1.JSON";
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		break; /* the tables name them (f->go) */
	}
	return "";
}

/* The Go type of the whole of f ("[]v1.ServicePort" for a list). */
static const char *go_type(const struct pb_field *f, bool item, char *buf,
			   size_t size)
{
	char e[128];
	const char *t = go_elem_type(f, e, sizeof e);
	const char *wrap = item			 ? ""
			   : (f->flags & PB_REP)	 ? "[]"
			   : (f->flags & PB_MAPV) ? "map[string]"
						 : "";
	if (snprintf(buf, size, "%s%s", wrap, t) >= (int)size)
		buf[0] = '\0'; /* cannot happen: names are short */
	return buf;
}

/* ---- encoding/json's rules (bodies, JSON and merge patch results) ---- */

/*
 * Record Go's UnmarshalTypeError at the current field: "json: cannot
 * unmarshal <what> into Go struct field <Struct>.<path> of type <type>",
 * Struct being the Go struct that holds the innermost field. encoding/json
 * keeps the first such error and decodes on (saveError); an error returned
 * by an UnmarshalJSON method (IntOrString, Time, MicroTime: fatal) ends
 * decoding at once and is reported instead, with the same context.
 */
static void type_error(struct walk *w, bool fatal, const char *what,
		       const struct pb_msg *m, const char *type)
{
	struct srv_typeerr *te = w->te;
	size_t glen = strlen(w->gpath);
	const char *st = m->name;
	if (w->in_or) {
		fatal = true;
		st = w->or_struct;
		glen = w->or_glen;
	}
	if (te->fatal || (te->set && !fatal))
		return;
	snprintf(te->text, sizeof te->text,
		 "json: cannot unmarshal %s into Go struct field %s.%.*s of "
		 "type %s",
		 what, st, (int)glen, w->gpath, type);
	te->set = true;
	te->fatal = fatal;
}

/* An error an UnmarshalJSON method returns as it is (no Go context): it
   ends decoding. */
static void fatal_error(struct walk *w, const char *text)
{
	struct srv_typeerr *te = w->te;
	if (!te || te->fatal)
		return;
	snprintf(te->text, sizeof te->text, "%s", text);
	te->set = true;
	te->fatal = true;
}

/* ---- metav1.Time and MicroTime: Go's time.Parse and Format ---- */

struct sbuf_ {
	char *p;
	size_t n, len;
};

static void sb_add(struct sbuf_ *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && b->len + 1 < b->n; i++)
		b->p[b->len++] = s[i];
	b->p[b->len] = '\0';
}

/* Go's time.quote: bytes outside printable ASCII as \xHH. */
static void time_quote(struct sbuf_ *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	sb_add(b, "\"", 1);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c >= 0x80 || *c < ' ') {
			char x[4] = {'\\', 'x', hex[*c >> 4], hex[*c & 15]};
			sb_add(b, x, 4);
		} else {
			if (*c == '"' || *c == '\\')
				sb_add(b, "\\", 1);
			sb_add(b, (const char *)c, 1);
		}
	}
	sb_add(b, "\"", 1);
}

/* time.ParseError's text: "cannot parse" form (msg NULL) or a message. */
static void time_err(char *out, size_t n, const char *layout, const char *value,
		     const char *value_elem, const char *layout_elem,
		     const char *msg)
{
	struct sbuf_ b = {out, n, 0};
	out[0] = '\0';
	sb_add(&b, "parsing time ", 13);
	time_quote(&b, value);
	if (msg) {
		sb_add(&b, msg, strlen(msg));
		return;
	}
	sb_add(&b, " as ", 4);
	time_quote(&b, layout);
	sb_add(&b, ": cannot parse ", 15);
	time_quote(&b, value_elem);
	sb_add(&b, " as ", 4);
	time_quote(&b, layout_elem);
}

static bool dig(const char *s, size_t i)
{
	return s[i] >= '0' && s[i] <= '9';
}

/* Go's getnum: one or two digits (exactly two when fixed). */
static bool getnum(const char **s, bool fixed, int *out)
{
	const char *p = *s;
	if (!dig(p, 0))
		return false;
	if (!dig(p, 1)) {
		if (fixed)
			return false;
		*out = p[0] - '0';
		*s = p + 1;
		return true;
	}
	*out = (p[0] - '0') * 10 + (p[1] - '0');
	*s = p + 2;
	return true;
}

bool srv_go_time_parse(const char *s, bool micro, long long *unix_sec,
		       long *nsec_out, char *err, size_t err_n)
{
	const char *layout = micro ? "2006-01-02T15:04:05.000000Z07:00"
				   : "2006-01-02T15:04:05Z07:00";
	const char *v = s, *hold;
	long year = 0;
	int mon = 0, day = 0, hour = 0, min = 0, sec = 0;
	long nsec = 0;
	long off = 0;
	const char *range = NULL;
#define LIT(c)                                                                \
	do {                                                                  \
		if (*v != (c)) {                                              \
			char l_[2] = {(c), 0};                                \
			time_err(err, err_n, layout, s, v, l_, NULL);          \
			return false;                                         \
		}                                                             \
		v++;                                                          \
	} while (0)
#define BAD(elem)                                                             \
	do {                                                                  \
		time_err(err, err_n, layout, s, hold, elem, NULL);            \
		return false;                                                 \
	} while (0)
	/* 2006: four characters, an optional sign then digits */
	hold = v;
	if (strlen(v) < 4)
		BAD("2006");
	{
		const char *p = v;
		bool neg = false;
		if (*p == '-' || *p == '+') {
			neg = *p == '-';
			p++;
		}
		if (p == v + 4)
			BAD("2006");
		for (; p < v + 4; p++) {
			if (!dig(p, 0))
				BAD("2006");
			year = year * 10 + (*p - '0');
		}
		if (neg)
			year = -year;
		v += 4;
	}
	LIT('-');
	hold = v;
	if (!getnum(&v, true, &mon))
		BAD("01");
	if (mon < 1 || mon > 12)
		range = "month";
	if (range)
		goto out_of_range;
	LIT('-');
	hold = v;
	if (!getnum(&v, true, &day))
		BAD("02");
	LIT('T');
	hold = v;
	if (!getnum(&v, false, &hour))
		BAD("15");
	if (hour >= 24) {
		range = "hour";
		goto out_of_range;
	}
	LIT(':');
	hold = v;
	if (!getnum(&v, true, &min))
		BAD("04");
	if (min >= 60) {
		range = "minute";
		goto out_of_range;
	}
	LIT(':');
	hold = v;
	if (!getnum(&v, true, &sec))
		BAD("05");
	if (sec >= 60) {
		range = "second";
		goto out_of_range;
	}
	if (micro) {
		hold = v;
		if (strlen(v) < 7 || (*v != '.' && *v != ','))
			BAD(".000000");
		for (int i = 1; i < 7; i++) {
			if (!dig(v, (size_t)i))
				BAD(".000000");
			nsec = nsec * 10 + (v[i] - '0');
		}
		nsec *= 1000;
		v += 7;
	} else if ((v[0] == '.' || v[0] == ',') && dig(v, 1)) {
		size_t n = 1;
		while (dig(v, n))
			n++;
		long scale = 1000000000;
		for (size_t i = 1; i < n && i < 10; i++) {
			scale /= 10;
			nsec += (v[i] - '0') * scale;
		}
		v += n;
	}
	hold = v;
	if (*v == 'Z') {
		v++;
	} else {
		int oh, om;
		const char *h = v + 1, *m = v + 4;
		if (strlen(v) < 6 || v[3] != ':' || !getnum(&h, true, &oh) ||
		    !getnum(&m, true, &om) || (v[0] != '+' && v[0] != '-'))
			BAD("Z07:00");
		if (oh > 24 || om > 60) {
			v += 6;
			range = oh > 24 ? "time zone offset hour"
					: "time zone offset minute";
			goto out_of_range;
		}
		off = (oh * 60L + om) * 60L * (v[0] == '-' ? -1 : 1);
		v += 6;
	}
	if (*v) {
		char m[SRV_TYPEERR_MAX / 2];
		struct sbuf_ b = {m, sizeof m, 0};
		sb_add(&b, ": extra text: ", 14);
		time_quote(&b, v);
		time_err(err, err_n, layout, s, NULL, NULL, m);
		return false;
	}
	if (day < 1 || day > srv_days_in_month(mon, year)) {
		time_err(err, err_n, layout, s, NULL, NULL, ": day out of range");
		return false;
	}
	*unix_sec = srv_days_from_civil(year, mon, day) * 86400LL +
		    hour * 3600LL + min * 60LL + sec - off;
	*nsec_out = nsec;
	return true;
out_of_range:;
	char m[64];
	snprintf(m, sizeof m, ": %s out of range", range);
	time_err(err, err_n, layout, s, NULL, NULL, m);
	return false;
#undef LIT
#undef BAD
}

/* srv_go_time_parse, then the instant as kube's MarshalJSON writes it,
   t.UTC().Format(the same layout), into out. */
static bool go_time(const char *s, bool micro, char *out, size_t out_n,
		    char *err, size_t err_n)
{
	long long t;
	long nsec;
	if (!srv_go_time_parse(s, micro, &t, &nsec, err, err_n))
		return false;
	{
		long long dd = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
		long long rem = t - dd * 86400;
		int64_t y;
		int mo, d;
		srv_civil_from_days(dd, &y, &mo, &d);
		char yb[24];
		if (y >= 0)
			snprintf(yb, sizeof yb, "%04lld", (long long)y);
		else
			snprintf(yb, sizeof yb, "-%04lld", -(long long)y);
		if (micro)
			snprintf(out, out_n, "%s-%02d-%02dT%02lld:%02lld:%02lld.%06ldZ",
				 yb, mo, d, rem / 3600, rem / 60 % 60, rem % 60,
				 nsec / 1000);
		else
			snprintf(out, out_n, "%s-%02d-%02dT%02lld:%02lld:%02lldZ", yb,
				 mo, d, rem / 3600, rem / 60 % 60, rem % 60);
	}
	return true;
}

/* A Time or MicroTime string: normalized in place as kube stores it, or
   Go's parse error, which ends decoding (UnmarshalJSON's error). */
static void check_time(struct walk *w, json_t *v, bool micro)
{
	char out[160];
	struct srv_typeerr *te = w->te;
	char err[SRV_TYPEERR_MAX];
	if (go_time(json_string_value(v), micro, out, sizeof out, err,
		    sizeof err)) {
		if (strcmp(out, json_string_value(v)))
			json_string_set(v, out);
		return;
	}
	if (te->fatal)
		return;
	snprintf(te->text, sizeof te->text, "%s", err);
	te->set = true;
	te->fatal = true;
}

/* Whether a number decodes into an integer of the given width: Go parses
   the text with ParseInt, so a fraction or an exponent fails; the JSON
   Go makes of a YAML body writes an integral float64 without either. */
static bool int_fits(const struct walk *w, const json_t *v, bool bits32)
{
	double d;
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		return !bits32 || (i >= INT32_MIN && i <= INT32_MAX);
	}
	if (!json_is_real(v) || w->dec != SRV_DEC_YAML)
		return false;
	d = json_real_value(v);
	return d == floor(d) && (bits32 ? d >= INT32_MIN && d <= INT32_MAX
					: d >= -9223372036854775808.0 &&
					      d < 9223372036854775808.0);
}

/* ---- []byte: Go's base64.StdEncoding ---- */

static int b64_val(unsigned char c)
{
	return c >= 'A' && c <= 'Z'   ? c - 'A'
	       : c >= 'a' && c <= 'z' ? c - 'a' + 26
	       : c >= '0' && c <= '9' ? c - '0' + 52
	       : c == '+'	      ? 62
	       : c == '/'	      ? 63
				      : -1;
}

/* Past the CRs and LFs at src[si..n), which Go's decoder skips. */
static size_t skip_crlf(const unsigned char *src, size_t n, size_t si)
{
	while (si < n && (src[si] == '\n' || src[si] == '\r'))
		si++;
	return si;
}

/*
 * Decode standard base64 as Go's base64.StdEncoding.Decode does (CR and LF
 * skipped anywhere, padding required): the bytes into out (room for n),
 * their count in *outn; false with the offset Go's CorruptInputError
 * reports in *bad. A port of the rules of Go's decodeQuantum.
 */
static bool go_b64_decode(const unsigned char *src, size_t n,
			  unsigned char *out, size_t *outn, size_t *bad)
{
	size_t si = 0, o = 0;
	while (si < n) {
		int dbuf[4] = {0, 0, 0, 0};
		int dlen = 4;
		for (int j = 0; j < 4; j++) {
			if (si == n) {
				if (j == 0) {
					*outn = o;
					return true;
				}
				*bad = si - (size_t)j; /* padding required */
				return false;
			}
			unsigned char in = src[si++];
			int d = b64_val(in);
			if (d >= 0) {
				dbuf[j] = d;
				continue;
			}
			if (in == '\n' || in == '\r') {
				j--;
				continue;
			}
			if (in != '=' || j < 2) {
				*bad = si - 1;
				return false;
			}
			if (j == 2) { /* "==": the second one next */
				si = skip_crlf(src, n, si);
				if (si == n) {
					*bad = n;
					return false;
				}
				if (src[si] != '=') {
					*bad = si - 1;
					return false;
				}
				si++;
			}
			si = skip_crlf(src, n, si);
			if (si < n) {
				*bad = si; /* trailing garbage */
				return false;
			}
			dlen = j;
			break;
		}
		unsigned val = (unsigned)dbuf[0] << 18 | (unsigned)dbuf[1] << 12 |
			       (unsigned)dbuf[2] << 6 | (unsigned)dbuf[3];
		for (int k = 0; k < dlen - 1; k++)
			out[o++] = (unsigned char)(val >> (16 - 8 * k));
	}
	*outn = o;
	return true;
}

bool srv_base64_ok(const char *s, size_t n)
{
	unsigned char *raw = malloc(n / 4 * 3 + 3);
	size_t outn, bad;
	bool ok = raw && go_b64_decode((const unsigned char *)s, n, raw, &outn,
				       &bad);
	free(raw);
	return ok;
}

/* A []byte string: Go decodes it (an error is saved, the first one wins)
   and kube stores the bytes encoded again, so a valid value is kept in
   that canonical form (no line breaks, zero trailing bits). */
static void check_base64(struct walk *w, json_t *v)
{
	const unsigned char *src = (const unsigned char *)json_string_value(v);
	size_t n = json_string_length(v), outn = 0, bad = 0;
	unsigned char *raw = malloc(n / 4 * 3 + 3);
	if (!raw)
		return;
	if (!go_b64_decode(src, n, raw, &outn, &bad)) {
		struct srv_typeerr *te = w->te;
		if (!te->set && !te->fatal) {
			snprintf(te->text, sizeof te->text,
				 "illegal base64 data at input byte %zu", bad);
			te->set = true;
		}
		free(raw);
		return;
	}
	char *enc = reg_b64(raw, outn);
	if (enc) {
		size_t e = strlen(enc);
		if (e != n || memcmp(enc, src, n))
			json_string_setn(v, enc, e);
		free(enc);
	}
	free(raw);
}

/* Check a scalar value v (not null) of field f of message m. */
static void check_scalar(struct walk *w, const struct pb_msg *m,
			 const struct pb_field *f, enum pb_type t, json_t *v)
{
	char wb[64], tb[160];
	bool ok = false, fatal = false, num_text = false;
	const char *type = NULL;

	switch (t) {
	case PB_STRING:
		ok = json_is_string(v);
		break;
	case PB_BYTES:
		/* a list of numbers decodes into []byte too */
		ok = json_is_string(v) || json_is_array(v);
		type = "[]uint8";
		if (json_is_string(v)) {
			check_base64(w, v);
			return;
		}
		break;
	case PB_BOOL:
		ok = json_is_boolean(v);
		break;
	case PB_INT32:
	case PB_INT64:
		ok = int_fits(w, v, t == PB_INT32);
		num_text = true;
		break;
	case PB_TIME:
	case PB_MICROTIME:
		/* UnmarshalJSON reads a string first, then parses it */
		ok = json_is_string(v);
		fatal = true;
		type = "string";
		if (ok) {
			check_time(w, v, t == PB_MICROTIME);
			return;
		}
		break;
	case PB_INTORSTR:
		/* UnmarshalJSON: a string, else an int32 */
		ok = json_is_string(v) || int_fits(w, v, true);
		fatal = true;
		num_text = true;
		type = "int32";
		break;
	case PB_FIELDSV1:
	case PB_JSON:
		ok = true; /* any JSON, kept raw */
		break;
	case PB_DOUBLE:
		ok = json_is_number(v);
		break;
	case PB_MSG:
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		break;
	}
	if (ok)
		return;
	if (!type)
		type = go_type(f, true, tb, sizeof tb);
	type_error(w, fatal, go_what(v, num_text, wb, sizeof wb), m, type);
}

/* A map<string,string|bytes> value: an object of strings. A null value is
   "": Go's zero string, and for bytes (a ConfigMap's binaryData, a
   Secret's data) what kube's protobuf storage gives back for the nil
   []byte it decoded (generated.pb.go starts each map value at []byte{}),
   so a create's answer and every read show "". */
static void check_map(struct walk *w, const struct pb_msg *m,
		      const struct pb_field *f, json_t *v)
{
	const char *key;
	json_t *x;
	enum pb_type t = f->type == PB_MAP_STRING ? PB_STRING : PB_BYTES;
	json_object_foreach(v, key, x)
	{
		if (json_is_null(x)) {
			json_object_set_new(v, key, json_string(""));
		} else if (!json_is_string(x)) {
			char wb[64];
			type_error(w, false, go_what(x, false, wb, sizeof wb),
				   m, t == PB_STRING ? "string" : "[]uint8");
		} else if (t == PB_BYTES) {
			check_base64(w, x); /* a Secret's data, binaryData */
		}
	}
}

/*
 * The integer Go reads for v, a value of an integer or IntOrString field
 * of a YAML body (new), or NULL: an integral float there reaches Go's
 * decoder without a fraction, so it is stored as the integer kube stores.
 */
static json_t *yaml_int(const struct walk *w, const struct pb_field *f,
			const json_t *v)
{
	if (w->dec != SRV_DEC_YAML || !w->te || !json_is_real(v) ||
	    (f->type != PB_INT32 && f->type != PB_INT64 &&
	     f->type != PB_INTORSTR) ||
	    !int_fits(w, v, f->type != PB_INT64))
		return NULL;
	return json_integer((json_int_t)json_real_value(v));
}

/* Enter a JSONSchemaPropsOr* value of field of m, its Go path ending at
   glen (see struct walk); the outermost one gives errors their context.
   Leave with w->in_or--. */
static void or_enter(struct walk *w, const struct pb_msg *m, size_t glen)
{
	if (!w->in_or++) {
		w->or_struct = m->name;
		w->or_glen = glen;
	}
}

/* A schema inside a JSONSchemaPropsOr* value: unknown fields dropped
   silently. */
static void walk_or_schema(struct walk *w, const struct pb_msg *m,
			   const struct pb_field *f, json_t *v, size_t plen,
			   size_t glen)
{
	struct srv_strict *s = w->s;
	or_enter(w, m, glen);
	w->s = NULL;
	walk_msg(w, f->sub, v, plen, glen, false);
	w->s = s;
	w->in_or--;
}

/* A value of a JSONSchemaPropsOr* field (apiextensions v1 marshal.go): an
   object is a schema; OrBool takes true and false and refuses anything
   else; OrArray takes a list of schemas, OrStringArray a list of strings,
   and both ignore other values. */
static void walk_or(struct walk *w, const struct pb_msg *m,
		    const struct pb_field *f, json_t *v, size_t plen,
		    size_t glen)
{
	if (json_is_object(v)) {
		walk_or_schema(w, m, f, v, plen, glen);
		return;
	}
	if (f->type == PB_OR_BOOL) {
		if (!json_is_boolean(v) && w->te)
			fatal_error(w, "boolean or JSON schema expected");
		return;
	}
	if (!json_is_array(v))
		return;
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x)
	{
		size_t ilen = path_index(w->path, plen, i);
		if (json_is_object(x) && f->type == PB_OR_ARRAY) {
			walk_or_schema(w, m, f, x, ilen, glen);
		} else if (!json_is_null(x) && w->te &&
			   !(f->type == PB_OR_STRARRAY && json_is_string(x))) {
			char wb[64];
			or_enter(w, m, glen);
			type_error(w, true, go_what(x, false, wb, sizeof wb), m,
				   f->type == PB_OR_ARRAY ? "v1.JSONSchemaProps"
							  : "string");
			w->in_or--;
		}
		w->path[plen] = '\0';
	}
}

/*
 * The value v of a known member for field f of message m (an item of a
 * repeated field or a value of a map field when item is set): its type
 * when w->te is set, then the walk inside it. w->path ends at plen and
 * w->gpath at glen. Null is always accepted: encoding/json leaves the zero
 * value (and no UnmarshalJSON of a table's types refuses it).
 */
static void walk_value(struct walk *w, const struct pb_msg *m,
		       const struct pb_field *f, json_t *v, bool item,
		       size_t plen, size_t glen)
{
	char wb[64], tb[160];
	if (json_is_null(v))
		return;
	if ((f->flags & (PB_REP | PB_MAPV)) && !item) {
		bool rep = f->flags & PB_REP;
		if (rep ? !json_is_array(v) : !json_is_object(v)) {
			if (w->te)
				type_error(w, false,
					   go_what(v, false, wb, sizeof wb), m,
					   go_type(f, false, tb, sizeof tb));
			return;
		}
		if (!w->te && f->type != PB_MSG && f->type != PB_OR_BOOL &&
		    f->type != PB_OR_ARRAY && f->type != PB_OR_STRARRAY)
			return;
		if (!rep) {
			const char *key;
			json_t *x;
			json_object_foreach(v, key, x)
			{
				size_t klen = path_key(w->path, plen, key);
				walk_value(w, m, f, x, true, klen, glen);
				w->path[plen] = '\0';
			}
			return;
		}
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			size_t ilen = path_index(w->path, plen, i);
			json_t *iv = yaml_int(w, f, x);
			if (iv && !json_array_set_new(v, i, iv))
				x = iv;
			walk_value(w, m, f, x, true, ilen, glen);
			w->path[plen] = '\0';
		}
		return;
	}
	bool obj = json_is_object(v);
	if (f->type == PB_MSG && obj) {
		walk_msg(w, f->sub, v, plen, glen, false);
		return;
	}
	if (f->type == PB_OR_BOOL || f->type == PB_OR_ARRAY ||
	    f->type == PB_OR_STRARRAY) {
		walk_or(w, m, f, v, plen, glen);
		return;
	}
	if (!w->te)
		return;
	if ((f->type == PB_MAP_STRING || f->type == PB_MAP_BYTES) && obj)
		check_map(w, m, f, v);
	else if (f->type == PB_MSG || f->type == PB_MAP_STRING ||
		 f->type == PB_MAP_BYTES)
		type_error(w, false, go_what(v, false, wb, sizeof wb), m,
			   go_type(f, item, tb, sizeof tb));
	else
		check_scalar(w, m, f, f->type, v);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void walk_msg(struct walk *w, const struct pb_msg *m, json_t *obj,
		     size_t plen, size_t glen, bool root)
{
	size_t n = json_object_size(obj);
	if (!n || w->depth >= FIELDS_MAX_DEPTH)
		return;
	w->depth++;
	const char *on_stack[KEYS_ON_STACK];
	const char **keys =
	    n <= KEYS_ON_STACK ? on_stack : malloc(n * sizeof *keys);
	if (!keys) {
		w->depth--;
		return; /* out of memory: leave the object as it is */
	}
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) keys[k++] = key;
	if (w->sorted)
		qsort(keys, k, sizeof *keys, cmp_keys);

	size_t n_unknown = 0;
	for (size_t i = 0; i < k; i++) {
		size_t klen = path_key(w->path, plen, keys[i]);
		const struct pb_field *f = srv_pb_field(m, keys[i]);
		if (!f && !known(m, keys[i], root)) {
			srv_strict_field(w->s, "unknown field", w->path);
			/* keep unknown keys at the front for deletion below */
			const char *t = keys[n_unknown];
			keys[n_unknown++] = keys[i];
			keys[i] = t;
		} else if (f) {
			/* Go's path is only needed to word a type error */
			size_t gk =
			    w->te ? path_key(w->gpath, glen, keys[i]) : glen;
			json_t *x = json_object_get(obj, keys[i]);
			json_t *iv = yaml_int(w, f, x);
			/* replacing keeps the key (keys[i] stays valid) */
			if (iv && !json_object_set_new(obj, keys[i], iv))
				x = iv;
			walk_value(w, m, f, x, false, klen, gk);
			w->gpath[glen] = '\0';
		}
		w->path[plen] = '\0';
	}
	/* Deleting frees only the deleted key's own string. */
	for (size_t i = 0; i < n_unknown && !w->keep; i++)
		json_object_del(obj, keys[i]);
	if (keys != on_stack)
		free(keys);
	w->depth--;
}

/* ---- the unstructured converter's rules (strategic merge patches) ---- */

/*
 * runtime.DefaultUnstructuredConverter fills the Go struct from the map
 * the patch made, field by field in the struct's order (the tables'
 * order), and stops at the first error. Its texts name Go's types of the
 * map's values (string, int64, float64, bool, map[string]interface {},
 * []interface {}) or their kinds, with no field path; IntOrString, Time
 * and MicroTime re-encode the value to JSON and decode it with their
 * UnmarshalJSON, whose errors carry no context either.
 */

const char *srv_go_type_of(const json_t *v, bool json_numbers)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return json_numbers ? "float64" : "int64";
	case JSON_REAL:
		return "float64";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_OBJECT:
		return "map[string]interface {}";
	case JSON_ARRAY:
		return "[]interface {}";
	case JSON_NULL:
		break;
	}
	return "<nil>";
}

/* reflect's Kind of an unstructured value. */
static const char *uns_type(const json_t *v, bool kind)
{
	(void)kind;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "map";
	case JSON_ARRAY:
		return "slice";
	case JSON_NULL:
		return "nil";
	case JSON_STRING:
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
		break;
	}
	return srv_go_type_of(v, false);
}

static bool uns_msg(struct walk *w, const struct pb_msg *m, json_t *obj);

static bool uns_error(struct walk *w, const char *fmt, const char *a,
		      const char *b)
{
	snprintf(w->te->text, sizeof w->te->text, fmt, a, b);
	w->te->set = true;
	return false;
}

/* A number through UnmarshalJSON into an int32 (IntOrString): Go writes
   the float64 first, so an integral one reads back. */
static bool uns_int32_json(struct walk *w, json_t *v)
{
	char num[48], what[64];
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i >= INT32_MIN && i <= INT32_MAX)
			return true;
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, i);
	} else {
		double d = json_real_value(v);
		reg_go_float(d, num);
		if (!strpbrk(num, ".e") && d >= INT32_MIN && d <= INT32_MAX)
			return true;
	}
	snprintf(what, sizeof what, "number %s", num);
	return uns_error(w,
			 "json: cannot unmarshal %s into Go value of type %s",
			 what, "int32");
}

/* One scalar value (not null) of f; false when it stopped. */
static bool uns_scalar(struct walk *w, const struct pb_field *f, enum pb_type t,
		       json_t *v)
{
	char tb[160];
	const char *dt = t == f->type	  ? go_type(f, true, tb, sizeof tb)
			 : t == PB_STRING ? "string"
					  : "[]uint8";
	switch (t) {
	case PB_STRING:
		if (json_is_string(v))
			return true;
		if (json_is_integer(v)) /* Go converts ints to strings */
			return uns_error(w, "cannot convert %s to %s", "int64",
					 dt);
		return uns_error(w, "unrecognized type: %s%s", "string", "");
	case PB_BYTES:
		/* a string goes through json.Unmarshal into []byte: Go's
		   base64, stored re-encoded */
		if (json_is_string(v)) {
			check_base64(w, v);
			return !w->te->set;
		}
		if (json_is_array(v))
			return true;
		return uns_error(w, "cannot restore slice from %s%s",
				 uns_type(v, true), "");
	case PB_BOOL:
		if (json_is_boolean(v))
			return true;
		return uns_error(w, "unrecognized type: %s%s", "bool", "");
	case PB_INT32:
	case PB_INT64: {
		const char *k = t == PB_INT32 ? "int32" : "int64";
		if (json_is_integer(v)) {
			/* Go's conversion keeps the low 32 bits */
			if (t == PB_INT32)
				json_integer_set(
				    v,
				    (int32_t)(uint32_t)json_integer_value(v));
			return true;
		}
		if (json_is_real(v)) {
			double d = json_real_value(v);
			if (d != floor(d))
				return uns_error(w, "cannot convert float64 to %s%s",
						 k, "");
			/* reflect's Convert, as Go compiles it on amd64: to
			   int64, the minimum when out of range, and an int32
			   keeps the low 32 bits (3e9 is -1294967296, 1e300 is
			   0), which validation then judges: a real was kept
			   whole and stored beyond the field's range */
			int64_t i = d >= -0x1p63 && d < 0x1p63 ? (int64_t)d
								: INT64_MIN;
			if (t == PB_INT32)
				i = (int32_t)(uint32_t)(uint64_t)i;
			w->repl = json_integer(i);
			return true;
		}
		return uns_error(w, "unrecognized type: %s%s", k, "");
	}
	case PB_TIME:
	case PB_MICROTIME: {
		char wb[64];
		/* UnmarshalJSON parses the string: normalized in place as
		   kube stores it, or Go's parse error */
		if (json_is_string(v)) {
			check_time(w, v, t == PB_MICROTIME);
			return !w->te->set;
		}
		return uns_error(
		    w, "json: cannot unmarshal %s into Go value of type %s",
		    go_what(v, false, wb, sizeof wb), "string");
	}
	case PB_INTORSTR: {
		char wb[64];
		if (json_is_string(v))
			return true;
		if (json_is_number(v))
			return uns_int32_json(w, v);
		return uns_error(
		    w, "json: cannot unmarshal %s into Go value of type %s",
		    go_what(v, false, wb, sizeof wb), "int32");
	}
	case PB_DOUBLE:
		if (json_is_number(v))
			return true;
		return uns_error(w, "unrecognized type: %s%s", "float64", "");
	case PB_FIELDSV1:
	case PB_JSON:
	case PB_MSG:
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		break;
	}
	return true;
}

/* Put the value uns_scalar converted (w->repl) in its place: member key
   of object parent, or item i of array parent. */
static void uns_take_repl(struct walk *w, json_t *parent, const char *key,
			  size_t i)
{
	if (!w->repl)
		return;
	if (key)
		json_object_set_new(parent, key, w->repl);
	else
		json_array_set_new(parent, i, w->repl);
	w->repl = NULL;
}

static bool uns_value(struct walk *w, const struct pb_field *f, json_t *v,
		      bool item)
{
	if (json_is_null(v))
		return true;
	if ((f->flags & PB_MAPV) && !item) {
		if (!json_is_object(v))
			return uns_error(w, "cannot restore map from %s%s",
					 uns_type(v, true), "");
		const char *key;
		json_t *x;
		json_object_foreach(v, key, x)
		{
			if (!uns_value(w, f, x, true))
				return false;
			uns_take_repl(w, v, key, 0);
		}
		return true;
	}
	if ((f->flags & PB_REP) && !item) {
		if (!json_is_array(v))
			return uns_error(w, "cannot restore slice from %s%s",
					 uns_type(v, true), "");
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			if (!uns_value(w, f, x, true))
				return false;
			uns_take_repl(w, v, NULL, i);
		}
		return true;
	}
	switch (f->type) {
	case PB_MSG:
		if (!json_is_object(v))
			return uns_error(w, "cannot restore struct from: %s%s",
					 uns_type(v, true), "");
		if (w->depth >= FIELDS_MAX_DEPTH)
			return true;
		w->depth++;
		bool ok = uns_msg(w, f->sub, v);
		w->depth--;
		return ok;
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		/* through the type's UnmarshalJSON (walk_or words its
		   errors; the JSON walk that follows finds them) */
		return true;
	case PB_MAP_STRING:
	case PB_MAP_BYTES: {
		if (!json_is_object(v))
			return uns_error(w, "cannot restore map from %s%s",
					 uns_type(v, true), "");
		const char *key;
		json_t *x;
		enum pb_type t =
		    f->type == PB_MAP_STRING ? PB_STRING : PB_BYTES;
		json_object_foreach(v, key, x)
		{
			if (json_is_null(x) && t == PB_STRING)
				json_object_set_new(v, key, json_string(""));
			else if (!json_is_null(x) && !uns_scalar(w, f, t, x))
				return false;
		}
		return true;
	}
	case PB_STRING:
	case PB_BYTES:
	case PB_BOOL:
	case PB_INT32:
	case PB_INT64:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
	case PB_DOUBLE:
	case PB_JSON:
		break;
	}
	return uns_scalar(w, f, f->type, v);
}

static bool uns_msg(struct walk *w, const struct pb_msg *m, json_t *obj)
{
	for (size_t i = 0; i < m->n_fields; i++) {
		const struct pb_field *f = &m->fields[i];
		json_t *v = json_object_get(obj, f->json);
		if (v && !uns_value(w, f, v, false))
			return false;
		uns_take_repl(w, obj, f->json, 0);
	}
	return true;
}

/* ---- entry points ---- */

void srv_fields_prune(const struct pb_msg *m, json_t *obj, const char *prefix,
		      bool sorted, struct srv_strict *s)
{
	struct walk w = {.sorted = sorted, .s = s};
	snprintf(w.path, sizeof w.path, "%s", prefix ? prefix : "");
	w.gpath[0] = '\0';
	if (json_is_object(obj))
		walk_msg(&w, m, obj, strlen(w.path), 0, false);
}

/* The walk of srv_builtin_check and srv_builtin_typecheck. */
static bool check(const char *kind, const char *api_version, json_t *obj,
		  struct walk *w)
{
	const struct pb_msg *m = srv_pb_kind_msg(kind, api_version);
	if (w->te)
		w->te->set = w->te->fatal = false;
	if (!m)
		return false;
	w->path[0] = w->gpath[0] = '\0';
	if (!json_is_object(obj))
		return true;
	if (w->te && w->dec == SRV_DEC_UNSTRUCTURED) {
		/* its own order; the names-only walk follows */
		uns_msg(w, m, obj);
		w->te = NULL;
	}
	walk_msg(w, m, obj, 0, 0, true);
	return true;
}

bool srv_builtin_check(const char *kind, const char *api_version, json_t *obj,
		       bool sorted, enum srv_decoder dec, struct srv_strict *s,
		       struct srv_typeerr *te)
{
	struct walk w = {.sorted = sorted, .dec = dec, .s = s, .te = te};
	return check(kind, api_version, obj, &w);
}

bool srv_builtin_typecheck(const char *kind, const char *api_version,
			   json_t *obj, bool sorted, enum srv_decoder dec,
			   struct srv_typeerr *te)
{
	struct walk w = {.sorted = sorted, .keep = true, .dec = dec, .te = te};
	return check(kind, api_version, obj, &w);
}

bool srv_builtin_has_table(const char *kind, const char *api_version)
{
	return srv_pb_kind_msg(kind, api_version) != NULL;
}

bool srv_object_meta_typecheck(json_t *md, bool typed,
				struct srv_typeerr *te)
{
	/* a custom resource's metadata is re-encoded from a map before it
	   is decoded: its keys come in sorted order, at every level */
	struct walk w = {.keep = true, .dec = SRV_DEC_JSON, .te = te,
			 .sorted = !typed};
	te->set = te->fatal = false;
	w.path[0] = '\0';
	/* Go names the path from the value decoded: the object, or the
	   metadata alone */
	snprintf(w.gpath, sizeof w.gpath, "%s", typed ? "metadata" : "");
	if (json_is_object(md))
		walk_msg(&w, srv_pb_object_meta(), md, 0, strlen(w.gpath),
			 false);
	return !te->set;
}

bool srv_delete_options_typecheck(json_t *opts, struct srv_typeerr *te)
{
	struct walk w = {.keep = true, .dec = SRV_DEC_JSON, .te = te};
	te->set = te->fatal = false;
	if (json_is_object(opts))
		walk_msg(&w, srv_pb_delete_options(), opts, 0, 0, true);
	return !te->set;
}

bool srv_builtin_prune(const char *kind, const char *api_version, json_t *obj,
		       bool sorted, struct srv_strict *s)
{
	return srv_builtin_check(kind, api_version, obj, sorted, SRV_DEC_JSON,
				 s, NULL);
}

/* ---- what encoding/json leaves out (omitempty) ---- */

/* Go's zero value of a scalar field, or a null that decodes to it. */
static bool zero_scalar(const struct pb_field *f, const json_t *v)
{
	switch (f->type) {
	case PB_STRING:
	case PB_BYTES:
		return json_is_null(v) ||
		       (json_is_string(v) && json_string_length(v) == 0);
	case PB_BOOL:
		return json_is_null(v) || json_is_false(v);
	case PB_INT32:
	case PB_INT64:
		return json_is_null(v) ||
		       (json_is_integer(v) && json_integer_value(v) == 0) ||
		       (json_is_real(v) && json_real_value(v) == 0.0);
	case PB_MSG:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
	case PB_DOUBLE: /* pointers in the tables: never O */
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		break; /* structs and maps: not scalars */
	}
	return false;
}

static void omit_msg(const struct pb_msg *m, json_t *obj, unsigned depth);

/* The JSON of a value scalar's Go zero value, NULL for other types. */
static json_t *zero_of(enum pb_type t)
{
	if (t == PB_STRING || t == PB_BYTES)
		return json_string("");
	if (t == PB_BOOL)
		return json_false();
	if (t == PB_INT32 || t == PB_INT64)
		return json_integer(0);
	return NULL;
}

/* Inside one value of f: the messages it holds. */
static void omit_value(const struct pb_field *f, json_t *v, unsigned depth)
{
	size_t j;
	json_t *x;
	if (!f->sub)
		return; /* scalars and maps of strings */
	if (json_is_object(v))
		omit_msg(f->sub, v, depth);
	else if (f->type == PB_OR_ARRAY && json_is_array(v))
		json_array_foreach(v, j, x)
		{
			if (json_is_object(x))
				omit_msg(f->sub, x, depth);
		}
}

/* Recursion follows the tables and, for the recursive ones, the object,
   up to FIELDS_MAX_DEPTH messages. */
static void omit_msg(const struct pb_msg *m, json_t *obj, unsigned depth)
{
	if (depth >= FIELDS_MAX_DEPTH)
		return;
	for (size_t i = 0; i < m->n_fields; i++) {
		const struct pb_field *f = &m->fields[i];
		json_t *v = json_object_get(obj, f->json);
		if (!v)
			continue;
		bool drop = false;
		if (json_is_null(v) && (f->flags & PB_PTR)) {
			/* Go's nil pointer; written null without omitempty */
			drop = !(f->flags & PB_KEEPEMPTY);
		} else if (f->flags & PB_REP) {
			drop = !(f->flags & PB_KEEPEMPTY) &&
			       (json_is_null(v) ||
				(json_is_array(v) && json_array_size(v) == 0));
			size_t j;
			json_t *x;
			if (json_is_array(v))
				json_array_foreach(v, j, x)
					omit_value(f, x, depth + 1);
		} else if ((f->flags & PB_MAPV) || f->type == PB_MAP_STRING ||
			   f->type == PB_MAP_BYTES) {
			drop = json_is_null(v) ||
			       (json_is_object(v) && json_object_size(v) == 0);
			const char *key;
			json_t *x;
			if ((f->flags & PB_MAPV) && json_is_object(v))
				json_object_foreach(v, key, x)
					omit_value(f, x, depth + 1);
		} else if (f->type == PB_MSG && json_is_null(v)) {
			/* a value struct: decoding null leaves Go's zero
			   struct, which encoding/json writes {} (omitempty
			   never drops a struct) */
			json_object_set_new(obj, f->json, json_object());
		} else if (f->type == PB_MSG || f->type == PB_OR_BOOL ||
			   f->type == PB_OR_ARRAY ||
			   f->type == PB_OR_STRARRAY) {
			omit_value(f, v, depth + 1);
		} else if ((f->type == PB_TIME || f->type == PB_MICROTIME) &&
			   json_is_string(v) &&
			   !strcmp(json_string_value(v),
				   f->type == PB_TIME
				       ? "0001-01-01T00:00:00Z"
				       : "0001-01-01T00:00:00.000000Z")) {
			/* Time's and MicroTime's MarshalJSON write the zero
			   time as null; kube answers from the stored bytes,
			   where a pointer's null decodes to nil, left out */
			if (f->flags & PB_PTR)
				drop = true;
			else
				json_object_set_new(obj, f->json, json_null());
		} else if (json_is_null(v) && !(f->flags & PB_OMITZERO)) {
			/* a value scalar without omitempty: null leaves the
			   zero value, which is written */
			json_t *z = zero_of(f->type);
			if (z)
				json_object_set_new(obj, f->json, z);
		} else {
			drop = (f->flags & PB_OMITZERO) && zero_scalar(f, v);
		}
		if (drop)
			json_object_del(obj, f->json);
	}
}

void srv_builtin_omitempty(const char *kind, const char *api_version,
			   json_t *obj)
{
	if (!json_is_object(obj))
		return;
	const struct pb_msg *m =
	    kind && api_version ? srv_pb_kind_msg(kind, api_version) : NULL;
	if (m) {
		omit_msg(m, obj, 0);
		return;
	}
	json_t *md = json_object_get(obj, "metadata");
	if (json_is_object(md))
		omit_msg(srv_pb_object_meta(), md, 0);
}

/* ------------------------------------------------------------------ */
/* OpenAPI v3 schemas                                                   */
/* ------------------------------------------------------------------ */

#define REF_PREFIX "#/components/schemas/"
#define INTORSTR_NAME "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
#define TIME_NAME "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
#define MICROTIME_NAME "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
#define FIELDSV1_NAME "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"

static bool add_msg_schema(const struct pb_msg *m, json_t *schemas);

static void msg_name(const struct pb_msg *m, char *buf, size_t n)
{
	snprintf(buf, n, "%s.%s", m->pkg, m->name);
}

static json_t *ref_to(const char *name)
{
	char ref[320];
	snprintf(ref, sizeof ref, REF_PREFIX "%s", name);
	return json_pack("{s:s}", "$ref", ref);
}

/* apiextensions' JSON and JSONSchemaPropsOr* types: a named schema of
   their own with kube's description and no type (any JSON, or either
   form); the schema they wrap is published beside them. */
static json_t *wrapper_schema(const struct pb_field *f, json_t *schemas)
{
	static const struct {
		enum pb_type t;
		const char *name, *desc;
	} w[] = {
	    {PB_JSON, "JSON",
	     "JSON represents any valid JSON value. These types are "
	     "supported: bool, int64, float64, string, []interface{}, "
	     "map[string]interface{} and nil."},
	    {PB_OR_BOOL, "JSONSchemaPropsOrBool",
	     "JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean "
	     "value. Defaults to true for the boolean property."},
	    {PB_OR_ARRAY, "JSONSchemaPropsOrArray",
	     "JSONSchemaPropsOrArray represents a value that can either be a "
	     "JSONSchemaProps or an array of JSONSchemaProps. Mainly here for "
	     "serialization purposes."},
	    {PB_OR_STRARRAY, "JSONSchemaPropsOrStringArray",
	     "JSONSchemaPropsOrStringArray represents a JSONSchemaProps or a "
	     "string array."},
	};
	/* the package of the message that holds the field: JSON's own has
	   no sub; the Or types' sub is JSONSchemaProps, in that package */
	static const char pkg[] =
	    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1";
	char name[256];
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		if (w[i].t != f->type)
			continue;
		snprintf(name, sizeof name, "%s.%s", pkg, w[i].name);
		if (f->sub && !add_msg_schema(f->sub, schemas))
			return NULL;
		if (!json_object_get(schemas, name) &&
		    json_object_set_new(schemas, name,
					json_pack("{s:s}", "description",
						  w[i].desc)))
			return NULL;
		return ref_to(name);
	}
	return NULL;
}

/* The schema of one value of f (an item, for a repeated field). */
static json_t *value_schema(const struct pb_field *f, json_t *schemas)
{
	char name[256];

	switch (f->type) {
	case PB_STRING:
		return json_pack("{s:s}", "type", "string");
	case PB_BYTES:
		return json_pack("{s:s,s:s}", "type", "string", "format",
				 "byte");
	case PB_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case PB_INT32:
		return json_pack("{s:s,s:s}", "type", "integer", "format",
				 "int32");
	case PB_INT64:
		return json_pack("{s:s,s:s}", "type", "integer", "format",
				 "int64");
	case PB_MSG:
		if (!add_msg_schema(f->sub, schemas))
			return NULL;
		msg_name(f->sub, name, sizeof name);
		return ref_to(name);
	case PB_TIME:
	case PB_MICROTIME: {
		/* named, as kube's meta/v1 Time and MicroTime */
		bool micro = f->type == PB_MICROTIME;
		const char *tn = micro ? MICROTIME_NAME : TIME_NAME;
		if (!json_object_get(schemas, tn) &&
		    json_object_set_new(
			schemas, tn,
			json_pack(
			    "{s:s,s:s,s:s}", "description",
			    micro ? "MicroTime is a timestamp kept to the "
				    "microsecond, in RFC 3339 form with six "
				    "fractional digits."
				  : "Time is a timestamp kept to the second, "
				    "in RFC 3339 form.",
			    "type", "string", "format", "date-time")))
			return NULL;
		return ref_to(tn);
	}
	case PB_INTORSTR:
		/* kube's IntOrString in v3 (its OpenAPIV3OneOfTypes): no
		   type of its own, one of integer and string, so kubectl
		   explain names it <IntOrString> */
		if (!json_object_get(schemas, INTORSTR_NAME) &&
		    json_object_set_new(
			schemas, INTORSTR_NAME,
			json_pack("{s:s,s:[{s:s},{s:s}],s:s}", "description",
				  "IntOrString is a type that can hold an "
				  "int32 or a string.",
				  "oneOf", "type", "integer", "type", "string",
				  "format", "int-or-string")))
			return NULL;
		return ref_to(INTORSTR_NAME);
	case PB_FIELDSV1:
		/* named, as kube's meta/v1 FieldsV1, so kubectl explain
		   names it <FieldsV1> */
		if (!json_object_get(schemas, FIELDSV1_NAME) &&
		    json_object_set_new(
			schemas, FIELDSV1_NAME,
			json_pack("{s:s,s:s}", "description",
				  "FieldsV1 is the set of fields a manager "
				  "owns, as a JSON tree: \"f:<name>\" for a "
				  "field, \"k:<keys>\" and \"v:<value>\" "
				  "for list items, \"i:<index>\" for an item "
				  "by position, and \".\" for the node "
				  "itself.",
				  "type", "object")))
			return NULL;
		return ref_to(FIELDSV1_NAME);
	case PB_MAP_STRING:
		return json_pack("{s:s,s:{s:s,s:s}}", "type", "object",
				 "additionalProperties", "type", "string",
				 "default", "");
	case PB_MAP_BYTES:
		return json_pack("{s:s,s:{s:s,s:s}}", "type", "object",
				 "additionalProperties", "type", "string",
				 "format", "byte");
	case PB_DOUBLE:
		return json_pack("{s:s,s:s}", "type", "number", "format",
				 "double");
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		return wrapper_schema(f, schemas);
	}
	return NULL;
}

/* A reference as kube's OpenAPI v3 writes one beside other keywords: in
   an allOf of one, which kubectl explain names by the referenced type
   (<IntOrString>, <Time>, <ObjectMeta>) where it would resolve a bare
   $ref and print that type's own type. */
static json_t *wrap_ref(json_t *v)
{
	if (!v || !json_object_get(v, "$ref"))
		return v;
	return json_pack("{s:[o]}", "allOf", v);
}

static json_t *field_schema(const struct pb_field *f, json_t *schemas)
{
	json_t *v = wrap_ref(value_schema(f, schemas));
	if (v && (f->flags & PB_MAPV))
		return json_pack("{s:s,s:o}", "type", "object",
				 "additionalProperties", v);
	if (!v || !(f->flags & PB_REP))
		return v;
	json_t *a = json_pack("{s:s,s:o}", "type", "array", "items", v);
	if (a && (f->flags & PB_MERGE)) {
		json_object_set_new(a, "x-kubernetes-patch-strategy",
				    json_string("merge"));
		if (f->merge_key)
			json_object_set_new(a, "x-kubernetes-patch-merge-key",
					    json_string(f->merge_key));
	}
	return a;
}

/* The served kinds' fields of a string type kube marks +enum: its OpenAPI
   lists the values (sorted, as k8s.io/api's generated OpenAPI; the two
   deprecated ServiceExternalTrafficPolicyType constants repeat theirs),
   which kubectl explain prints as ENUM. */
static const struct enum_field {
	const char *msg, *field, *dflt;
	const char *values[5];
} enum_fields[] = {
    {"ServiceSpec",
     "type",
     NULL,
     {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}},
    {"ServiceSpec",
     "externalTrafficPolicy",
     NULL,
     {"Cluster", "Cluster", "Local", "Local"}},
    {"ServiceSpec", "internalTrafficPolicy", NULL, {"Cluster", "Local"}},
    {"ServiceSpec",
     "ipFamilyPolicy",
     NULL,
     {"PreferDualStack", "RequireDualStack", "SingleStack"}},
    {"ServiceSpec", "sessionAffinity", NULL, {"ClientIP", "None"}},
    {"ServicePort", "protocol", "TCP", {"SCTP", "TCP", "UDP"}},
    {"EndpointPort", "protocol", NULL, {"SCTP", "TCP", "UDP"}},
    {"PortStatus", "protocol", "", {"SCTP", "TCP", "UDP"}},
    {"NamespaceStatus", "phase", NULL, {"Active", "Terminating"}},
};

/* Add f's enum (and default) to its schema p, for a core/v1 message. */
static bool add_enum(const struct pb_msg *m, const struct pb_field *f,
		     json_t *p)
{
	if (strcmp(m->pkg, "io.k8s.api.core.v1"))
		return true;
	for (size_t i = 0; i < sizeof enum_fields / sizeof enum_fields[0];
	     i++) {
		const struct enum_field *e = &enum_fields[i];
		if (strcmp(e->msg, m->name) || strcmp(e->field, f->json))
			continue;
		json_t *a = json_array();
		size_t nv = sizeof e->values / sizeof e->values[0];
		for (size_t k = 0; a && k < nv && e->values[k]; k++)
			if (json_array_append_new(a,
						  json_string(e->values[k]))) {
				json_decref(a);
				return false;
			}
		if (!a || json_object_set_new(p, "enum", a))
			return false;
		return !e->dflt ||
		       !json_object_set_new(p, "default", json_string(e->dflt));
	}
	return true;
}

/* Fill props and required of m's schema from its table. */
static bool fill_props(const struct pb_msg *m, json_t *props, json_t *required,
		       json_t *schemas)
{
	for (size_t i = 0; i < m->n_fields; i++) {
		const struct pb_field *f = &m->fields[i];
		json_t *p = field_schema(f, schemas);
		if (!p || !add_enum(m, f, p) ||
		    json_object_set_new(props, f->json, p))
			return false;
		if ((f->flags & PB_REQUIRED) &&
		    json_array_append_new(required, json_string(f->json)))
			return false;
	}
	return true;
}

/* Add m's schema (and those it refers to) unless already there. */
static bool add_msg_schema(const struct pb_msg *m, json_t *schemas)
{
	char name[256];
	msg_name(m, name, sizeof name);
	if (json_object_get(schemas, name))
		return true;
	json_t *sch = json_object(), *props = json_object(),
	       *req = json_array();
	/* Placed first so that a message met again while filling refers
	   to it instead of recursing. */
	if (!sch || !props || !req || json_object_set_new(schemas, name, sch)) {
		json_decref(props);
		json_decref(req);
		return false;
	}
	bool ok = fill_props(m, props, req, schemas);
	json_object_set_new(sch, "type", json_string("object"));
	/* a message without fields (CustomResourceSubresourceStatus) has
	   no properties, as kube-openapi leaves an empty map out */
	if (json_object_size(props))
		json_object_set_new(sch, "properties", props);
	else
		json_decref(props);
	if (json_array_size(req))
		json_object_set_new(sch, "required", req);
	else
		json_decref(req);
	return ok;
}

bool srv_object_meta_openapi(json_t *schemas)
{
	return add_msg_schema(srv_pb_object_meta(), schemas);
}

bool srv_builtin_openapi(const char *group, const char *version,
			 const char *kind, json_t *schemas)
{
	char av[300], name[256], desc[256];
	if (group[0])
		snprintf(av, sizeof av, "%s/%s", group, version);
	else
		snprintf(av, sizeof av, "%s", version);
	const struct pb_msg *m = srv_pb_kind_msg(kind, av);
	if (!m || !add_msg_schema(m, schemas))
		return false;
	msg_name(m, name, sizeof name);
	json_t *sch = json_object_get(schemas, name);
	json_t *props = json_object_get(sch, "properties");
	snprintf(desc, sizeof desc, "%s is a %s object served by lapis.", kind,
		 kind);
	json_object_set_new(sch, "description", json_string(desc));
	json_object_set_new(
	    props, "apiVersion",
	    json_pack("{s:s,s:s}", "description",
		      "APIVersion defines the versioned schema of this "
		      "representation of an object.",
		      "type", "string"));
	json_object_set_new(
	    props, "kind",
	    json_pack("{s:s,s:s}", "description",
		      "Kind is a string value representing the REST "
		      "resource this object represents.",
		      "type", "string"));
	json_object_set_new(sch, "x-kubernetes-group-version-kind",
			    json_pack("[{s:s,s:s,s:s}]", "group", group, "kind",
				      kind, "version", version));
	return true;
}

/* ------------------------------------------------------------------ */
/* Duplicate fields in a JSON text                                      */
/* ------------------------------------------------------------------ */

/*
 * jansson keeps the last of repeated keys and cannot say where they were,
 * so the duplicates come from a pass over the text, after jansson accepted
 * it (the scanner still checks every bound and stops on anything odd). It
 * follows sigs.k8s.io/json's strict decoding: in document order, a known
 * field of a struct seen twice is `duplicate field "<path>"`, a member no
 * field takes is `unknown field "<path>"` (reported once however often it
 * comes), a repeated map key is a duplicate. Unknown members are not
 * entered. Generic mode (custom resources, decoded into a map) treats
 * every object as a map, at any depth.
 */
struct scan {
	const char *p, *end;
	struct srv_strict *s;
	unsigned depth; /* objects and arrays entered (FIELDS_MAX_DEPTH) */
	bool jp;	/* a JSON patch's operations: "json patch ..." */
	char path[PATH_MAX_LEN + 1];
	bool bad; /* stopped: malformed or out of memory */
};

static void sc_ws(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' ||
				   *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

static bool sc_is(struct scan *sc, char c)
{
	sc_ws(sc);
	return sc->p < sc->end && *sc->p == c;
}

static void sc_skip_string(struct scan *sc)
{
	const char *q =
	    reg_json_string_end(sc->p + 1, sc->end); /* past the quote */
	if (q) {
		sc->p = q + 1;
	} else {
		sc->p = sc->end;
		sc->bad = true;
	}
}

/* One value of any kind, without looking inside (no recursion). */
static void sc_skip(struct scan *sc)
{
	size_t depth = 0;
	do {
		sc_ws(sc);
		if (sc->p >= sc->end) {
			sc->bad = true;
			return;
		}
		char c = *sc->p;
		if (c == '"') {
			sc_skip_string(sc);
		} else if (c == '{' || c == '[') {
			depth++;
			sc->p++;
		} else if (c == '}' || c == ']') {
			if (depth == 0) {
				sc->bad = true;
				return;
			}
			depth--;
			sc->p++;
		} else if (c == ',' || c == ':') {
			sc->p++;
		} else {
			/* a literal; a NUL byte (which strchr would find) or
			   any other byte that ends none stops the scan */
			const char *from = sc->p;
			while (sc->p < sc->end && *sc->p &&
			       !strchr(",:]} \t\r\n", *sc->p))
				sc->p++;
			if (sc->p == from) {
				sc->bad = true;
				return;
			}
		}
	} while (depth > 0 && !sc->bad);
}

static unsigned hexval(char c)
{
	return c >= '0' && c <= '9'   ? (unsigned)(c - '0')
	       : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
	       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
				      : 16;
}

static bool sc_hex4(struct scan *sc, uint32_t *v)
{
	if (sc->end - sc->p < 4)
		return false;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned h = hexval(sc->p[i]);
		if (h > 15)
			return false;
		*v = *v << 4 | h;
	}
	sc->p += 4;
	return true;
}

/* A key, unescaped (new, NUL-terminated; a \u0000 ends it early, which at
   worst misses a duplicate of a key jansson could not hold anyway). */
static char *sc_key(struct scan *sc)
{
	if (!sc_is(sc, '"')) {
		sc->bad = true;
		return NULL;
	}
	const char *start = ++sc->p;
	const char *stop = reg_json_string_end(start, sc->end);
	if (!stop) {
		sc->p = sc->end;
		sc->bad = true;
		return NULL;
	}
	sc->p = stop + 1;
	/* unescaped UTF-8 is never longer than its escaped form */
	size_t n = (size_t)(stop - start);
	char *k = malloc(n + 1);
	if (!k) {
		sc->bad = true;
		return NULL;
	}
	if (!memchr(start, '\\', n)) {
		memcpy(k, start, n);
		k[n] = '\0';
		return k;
	}
	/* only p and end: the path buffer stays untouched (1 KiB) */
	struct scan in;
	in.p = start;
	in.end = stop;
	size_t o = 0;
	while (in.p < in.end) {
		char c = *in.p++;
		if (c != '\\') {
			k[o++] = c;
			continue;
		}
		c = in.p < in.end ? *in.p++ : 0;
		uint32_t cp, lo;
		switch (c) {
		case 'b':
			k[o++] = '\b';
			break;
		case 'f':
			k[o++] = '\f';
			break;
		case 'n':
			k[o++] = '\n';
			break;
		case 'r':
			k[o++] = '\r';
			break;
		case 't':
			k[o++] = '\t';
			break;
		case 'u':
			if (!sc_hex4(&in, &cp))
				cp = 0xfffd;
			if (cp >= 0xd800 && cp < 0xdc00 && in.end - in.p >= 6 &&
			    in.p[0] == '\\' && in.p[1] == 'u') {
				in.p += 2;
				if (sc_hex4(&in, &lo) && lo >= 0xdc00 &&
				    lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				else
					cp = 0xfffd;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			o += reg_utf8_encode(k + o, cp);
			break;
		default:
			k[o++] = c;
			break; /* \" \\ \/ */
		}
	}
	k[o] = '\0';
	return k;
}

static void sc_msg(struct scan *sc, const struct pb_msg *m, size_t plen,
		   bool root);
static void sc_map(struct scan *sc, size_t plen, bool generic,
		   const struct pb_field *vf);

/* `duplicate field "<path to the parent>.<name>"`. Out of line, so that
   its path buffer is not in every frame of the recursive scan. */
static __attribute__((noinline)) void sc_dup(struct scan *sc, size_t plen,
					     const char *name)
{
	char p2[PATH_MAX_LEN + 1];
	memcpy(p2, sc->path, plen);
	p2[plen] = '\0';
	path_key(p2, plen, name);
	srv_strict_field(
	    sc->s, sc->jp ? "json patch duplicate field" : "duplicate field",
	    p2);
}

/* Enter an object or array: false (and the value skipped whole) past
   FIELDS_MAX_DEPTH, which bounds the stack the recursion takes; the
   caller then leaves sc->depth as it was. */
static bool sc_enter(struct scan *sc)
{
	if (sc->depth >= FIELDS_MAX_DEPTH) {
		sc_skip(sc);
		return false;
	}
	sc->depth++;
	return true;
}

/* Any value in generic mode: objects are maps, arrays are walked. */
static void sc_any(struct scan *sc, size_t plen)
{
	if (sc_is(sc, '{')) {
		sc_map(sc, plen, true, NULL);
	} else if (sc_is(sc, '[')) {
		if (!sc_enter(sc))
			return;
		sc->p++;
		for (size_t i = 0; !sc->bad && !sc_is(sc, ']'); i++) {
			if (i && sc_is(sc, ','))
				sc->p++;
			size_t ilen = path_index(sc->path, plen, i);
			sc_any(sc, ilen);
			sc->path[plen] = '\0';
		}
		if (!sc->bad)
			sc->p++;
		sc->depth--;
	} else {
		sc_skip(sc);
	}
}

/* One value of a known field f (an item or a map value of a list or map
   field). A JSONSchemaPropsOr* value is decoded by a plain json.Unmarshal
   (walk_or): nothing in it is reported. */
static void sc_elem(struct scan *sc, const struct pb_field *f, size_t plen)
{
	switch (f->type) {
	case PB_MSG:
		if (sc_is(sc, '{'))
			sc_msg(sc, f->sub, plen, false);
		else
			sc_skip(sc);
		return;
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
		if (sc_is(sc, '{'))
			sc_map(sc, plen, false, NULL);
		else
			sc_skip(sc);
		return;
	case PB_STRING:
	case PB_BYTES:
	case PB_BOOL:
	case PB_INT32:
	case PB_INT64:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
	case PB_DOUBLE:
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		sc_skip(sc);
		return;
	}
}

/* The value of a known field f: a list or map of its values, or one. */
static void sc_field(struct scan *sc, const struct pb_field *f, size_t plen)
{
	if ((f->flags & PB_MAPV) && sc_is(sc, '{')) {
		sc_map(sc, plen, false, f);
		return;
	}
	if (!(f->flags & PB_REP) || !sc_is(sc, '[')) {
		if (f->flags & (PB_REP | PB_MAPV))
			sc_skip(sc);
		else
			sc_elem(sc, f, plen);
		return;
	}
	sc->p++;
	for (size_t i = 0; !sc->bad && !sc_is(sc, ']'); i++) {
		if (i && sc_is(sc, ','))
			sc->p++;
		size_t ilen = path_index(sc->path, plen, i);
		sc_elem(sc, f, ilen);
		sc->path[plen] = '\0';
	}
	if (!sc->bad)
		sc->p++;
}

/* Before a member: the comma between members, then the key. NULL at the
   closing brace (consumed) or when stopped. */
static char *sc_member(struct scan *sc, bool first)
{
	if (sc_is(sc, '}')) {
		sc->p++;
		return NULL;
	}
	if (!first) {
		if (!sc_is(sc, ',')) {
			sc->bad = true;
			return NULL;
		}
		sc->p++;
	}
	char *k = sc_key(sc);
	if (k && !sc_is(sc, ':')) {
		sc->bad = true;
		free(k);
		return NULL;
	}
	if (k)
		sc->p++;
	return k;
}

static void sc_msg(struct scan *sc, const struct pb_msg *m, size_t plen,
		   bool root)
{
	uint64_t seen = 0;  /* by field index; tables have < 62 fields */
	unsigned tseen = 0; /* root: apiVersion 1, kind 2 */
	if (!sc_enter(sc))
		return;
	sc->p++; /* { */
	for (bool first = true; !sc->bad; first = false) {
		char *k = sc_member(sc, first);
		if (!k)
			break;
		size_t klen = path_key(sc->path, plen, k);
		const struct pb_field *f = srv_pb_field(m, k);
		unsigned t = !root			? 0
			     : !strcmp(k, "apiVersion") ? 1
			     : !strcmp(k, "kind")	? 2
							: 0;
		if (f || t) {
			uint64_t bit = f ? (uint64_t)1 << (f - m->fields) : 0;
			bool dup = f ? (seen & bit) != 0 : (tseen & t) != 0;
			seen |= bit;
			tseen |= t;
			if (dup) /* kube names it from the parent path */
				sc_dup(sc, plen, f ? f->json : k);
			if (f)
				sc_field(sc, f, klen);
			else
				sc_skip(sc);
		} else {
			srv_strict_field(sc->s, "unknown field", sc->path);
			sc_skip(sc);
		}
		sc->path[plen] = '\0';
		free(k);
	}
	sc->depth--;
}

/* A map: repeated keys are duplicates; its values any JSON (generic), of
   field vf's type (a PB_MAPV field), or skipped. */
static void sc_map(struct scan *sc, size_t plen, bool generic,
		   const struct pb_field *vf)
{
	if (!sc_enter(sc))
		return;
	json_t *keys = json_object(); /* the keys seen, as a set */
	if (!keys) {
		sc->bad = true;
		sc->depth--;
		return;
	}
	sc->p++; /* { */
	for (bool first = true; !sc->bad; first = false) {
		char *k = sc_member(sc, first);
		if (!k)
			break;
		if (json_object_get(keys, k))
			sc_dup(sc, plen, k);
		else
			json_object_set_new(keys, k, json_null());
		size_t klen = path_key(sc->path, plen, k);
		if (generic)
			sc_any(sc, klen);
		else if (vf)
			sc_elem(sc, vf, klen);
		else
			sc_skip(sc);
		sc->path[plen] = '\0';
		free(k);
	}
	json_decref(keys);
	sc->depth--;
}

/* One operation of a JSON patch, as kube decodes it into its jsonPatchOp
   (op, path, from, value): repeated and unknown members in the body's
   order, and repeated keys inside a value (an interface{} to Go). */
static void sc_patch_op(struct scan *sc, size_t plen)
{
	static const char *const names[] = {"op", "path", "from", "value"};
	unsigned seen = 0;
	if (!sc_enter(sc))
		return;
	sc->p++; /* { */
	for (bool first = true; !sc->bad; first = false) {
		char *k = sc_member(sc, first);
		if (!k)
			break;
		size_t klen = path_key(sc->path, plen, k);
		int f = -1;
		for (int i = 0; i < 4 && f < 0; i++)
			if (!strcmp(k, names[i]))
				f = i;
		if (f < 0) {
			srv_strict_field(sc->s, "json patch unknown field",
					 sc->path);
			sc_skip(sc);
		} else {
			if (seen & (1u << f))
				sc_dup(sc, plen, k);
			seen |= 1u << f;
			if (f == 3)
				sc_any(sc, klen);
			else
				sc_skip(sc);
		}
		sc->path[plen] = '\0';
		free(k);
	}
	sc->depth--;
}

void srv_json_patch_scan(const char *text, size_t len, struct srv_strict *s)
{
	if (!s || s->mode == SRV_FV_IGNORE)
		return;
	struct scan sc = {.p = text, .end = text + len, .s = s, .jp = true};
	if (!sc_is(&sc, '[') || !sc_enter(&sc))
		return;
	sc.p++;
	for (size_t i = 0; !sc.bad && !sc_is(&sc, ']'); i++) {
		if (i && sc_is(&sc, ','))
			sc.p++;
		size_t ilen = path_index(sc.path, 0, i);
		if (sc_is(&sc, '{'))
			sc_patch_op(&sc, ilen);
		else
			sc_skip(&sc);
		sc.path[0] = '\0';
	}
}

bool srv_builtin_scan_json(const char *kind, const char *api_version,
			   const char *text, size_t len, struct srv_strict *s)
{
	const struct pb_msg *m =
	    kind ? srv_pb_kind_msg(kind, api_version) : NULL;
	if (kind && !m)
		return false;
	if (!s || s->mode == SRV_FV_IGNORE)
		return true;
	struct scan sc = {.p = text, .end = text + len, .s = s};
	if (m && sc_is(&sc, '{'))
		sc_msg(&sc, m, 0, true);
	else if (!m)
		sc_any(&sc, 0);
	return true;
}
