/*
 * schema.c -- compiled OpenAPI v3 schemas of CRD versions: pruning,
 * defaulting and validation of custom resources (see schema.h and reference
 * §8.6-§8.8).
 *
 * A schema compiles to a tree of struct node, one per schema object, built
 * once and never written again: every walk below takes it const, so one
 * compiled schema serves any number of threads. Walks over objects recurse
 * only along the tree (properties, items, additionalProperties,
 * combinators), whose depth compile bounds by SRV_SCHEMA_MAX_DEPTH; values
 * below the tree's leaves are visited iteratively or not at all.
 *
 * Patterns and number formatting run in the C.UTF-8 locale, switched per
 * thread with uselocale for the duration of a call (regcomp and regexec of
 * one regex_t must see the same locale; "." then matches one rune).
 *
 * jansson: the tree owns its enum and default values (deep copies); obj
 * passed to the walks is borrowed and only prune/default write into it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "cel.h"
#include "fields.h"
#include "ipaddr.h"
#include "registry/json.h"
#include "resources.h"
#include "schema.h"

/* ------------------------------------------------------------------------ */
/* Growable strings.                                                         */

struct sb {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_grow(struct sb *b, size_t need)
{
	if (b->oom || b->len + need + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + need + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return;
	}
	b->s = s;
	b->cap = cap;
}

static void sb_putn(struct sb *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_putc(struct sb *b, char c)
{
	sb_putn(b, &c, 1);
}

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		sb_putn(b, tmp, (size_t)n);
		return;
	}
	sb_grow(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* The text so far; "" when empty or out of memory. */
static const char *sb_str(const struct sb *b)
{
	return b->s ? b->s : "";
}

static void sb_cut(struct sb *b, size_t len)
{
	if (b->s && len <= b->len) {
		b->len = len;
		b->s[len] = '\0';
	}
}

/* Append a path step: ".key" (or "key" at the start) or "[i]". */
static void path_key(struct sb *b, const char *k)
{
	if (b->len)
		sb_putc(b, '.');
	sb_puts(b, k);
}

static void path_index(struct sb *b, size_t i)
{
	sb_printf(b, "[%zu]", i);
}

/* ------------------------------------------------------------------------ */
/* Go-style value rendering, for messages (reference §2.3).                 */

void srv_go_float(double v, char out[SRV_GO_FLOAT_MAX])
{
	if (isnan(v)) {
		snprintf(out, SRV_GO_FLOAT_MAX, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, SRV_GO_FLOAT_MAX, "%s", v > 0 ? "+Inf" : "-Inf");
		return;
	}
	int prec;
	for (prec = 1; prec < 17; prec++) {
		snprintf(out, SRV_GO_FLOAT_MAX, "%.*e", prec - 1, v);
		if (strtod(out, NULL) == v)
			break;
	}
	snprintf(out, SRV_GO_FLOAT_MAX, "%.*e", prec - 1, v);
	const char *e = strchr(out, 'e');
	int exp = e ? atoi(e + 1) : 0;
	if (exp < -4 || exp >= 6)
		return; /* C's %e spells the exponent as Go: e+06 */
	int frac = prec - 1 - exp;
	snprintf(out, SRV_GO_FLOAT_MAX, "%.*f", frac > 0 ? frac : 0, v);
}

static void go_float(struct sb *b, double v)
{
	char t[SRV_GO_FLOAT_MAX];
	srv_go_float(v, t);
	sb_puts(b, t);
}

/* Go's %q (strconv.Quote) of the n bytes at s. */
static void go_quoten(struct sb *b, const char *s, size_t n)
{
	sb_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s, *end = p + n;
	     p < end; p++) {
		unsigned char c = *p;
		switch (c) {
		case '"': sb_puts(b, "\\\""); break;
		case '\\': sb_puts(b, "\\\\"); break;
		case '\a': sb_puts(b, "\\a"); break;
		case '\b': sb_puts(b, "\\b"); break;
		case '\f': sb_puts(b, "\\f"); break;
		case '\n': sb_puts(b, "\\n"); break;
		case '\r': sb_puts(b, "\\r"); break;
		case '\t': sb_puts(b, "\\t"); break;
		case '\v': sb_puts(b, "\\v"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				sb_printf(b, "\\x%02x", c);
			else
				sb_putc(b, (char)c);
		}
	}
	sb_putc(b, '"');
}

/* Go's %q of a C string. */
static void go_quote(struct sb *b, const char *s)
{
	go_quoten(b, s, strlen(s));
}

static void go_sharp_v(struct sb *b, const json_t *x, int depth);

/* The value of a field error, as kube's ErrorBody prints it: strings
   quoted, numbers and booleans plain, null as null, objects and arrays
   with Go's %#v. */
static void go_value(struct sb *b, const json_t *x)
{
	if (!x || json_is_null(x))
		sb_puts(b, "null");
	else if (json_is_string(x))
		go_quoten(b, json_string_value(x), json_string_length(x));
	else if (json_is_integer(x))
		sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
	else if (json_is_real(x))
		go_float(b, json_real_value(x));
	else if (json_is_true(x))
		sb_puts(b, "true");
	else if (json_is_false(x))
		sb_puts(b, "false");
	else
		go_sharp_v(b, x, 0);
}

char *srv_go_value(const json_t *x)
{
	struct sb b = {0};
	go_value(&b, x);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s ? b.s : strdup("");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void go_sharp_v(struct sb *b, const json_t *x, int depth)
{
	if (b->len > 600) {
		sb_puts(b, "...");
		return;
	}
	if (!x || json_is_null(x)) {
		sb_puts(b, depth ? "interface {}(nil)" : "null");
	} else if (json_is_object(x)) {
		size_t n = json_object_size(x), i = 0;
		const char **keys = malloc((n ? n : 1) * sizeof *keys);
		if (!keys) {
			b->oom = true;
			return;
		}
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)x, k, v)
			keys[i++] = k;
		qsort(keys, n, sizeof *keys, cmp_str);
		sb_puts(b, "map[string]interface {}{");
		for (i = 0; i < n; i++) {
			if (i)
				sb_puts(b, ", ");
			go_quote(b, keys[i]);
			sb_putc(b, ':');
			go_sharp_v(b, json_object_get(x, keys[i]), depth + 1);
		}
		sb_putc(b, '}');
		free(keys);
	} else if (json_is_array(x)) {
		sb_puts(b, "[]interface {}{");
		for (size_t i = 0; i < json_array_size(x); i++) {
			if (i)
				sb_puts(b, ", ");
			go_sharp_v(b, json_array_get(x, i), depth + 1);
		}
		sb_putc(b, '}');
	} else {
		go_value(b, x);
	}
}

/* ------------------------------------------------------------------------ */
/* The compiled tree.                                                        */

enum {
	T_STRING = 1,
	T_INTEGER = 2,
	T_NUMBER = 4,
	T_BOOLEAN = 8,
	T_OBJECT = 16,
	T_ARRAY = 32,
};

enum fmt {
	F_NONE,
	F_INT32,
	F_INT64,
	F_BYTE,
	F_DATE,
	F_DATETIME,
	F_UUID,
	F_UUID3,
	F_UUID4,
	F_UUID5,
	F_IPV4,
	F_IPV6,
	F_CIDR,
	F_HOSTNAME,
	F_EMAIL,
	F_URI,
	F_MAC,
	F_HEXCOLOR,
	F_DURATION,
	F_BSONOBJECTID,
	F_SSN,
	F_RGBCOLOR,
	F_ISBN,
	F_ISBN10,
	F_ISBN13,
	F_CREDITCARD,
	F_PASSWORD,
};

static const struct {
	const char *name;
	enum fmt f;
} formats[] = {
    {"int32", F_INT32},
    {"int64", F_INT64},
    {"byte", F_BYTE},
    {"date", F_DATE},
    {"date-time", F_DATETIME},
    {"datetime", F_DATETIME},
    {"uuid", F_UUID},
    {"uuid3", F_UUID3},
    {"uuid4", F_UUID4},
    {"uuid5", F_UUID5},
    {"ipv4", F_IPV4},
    {"ipv6", F_IPV6},
    {"cidr", F_CIDR},
    {"hostname", F_HOSTNAME},
    {"email", F_EMAIL},
    {"uri", F_URI},
    {"mac", F_MAC},
    {"hexcolor", F_HEXCOLOR},
    {"duration", F_DURATION},
    {"bsonobjectid", F_BSONOBJECTID},
    {"ssn", F_SSN},
    {"rgbcolor", F_RGBCOLOR},
    {"isbn", F_ISBN},
    {"isbn10", F_ISBN10},
    {"isbn13", F_ISBN13},
    {"creditcard", F_CREDITCARD},
    {"password", F_PASSWORD},
};

/* Does kube 1.33 keep the format for validation? Its CRD validator strips
   every format outside its supported list (StripUnsupportedFormats):
   int32, int64, float and double among them. */
static bool kept_format(enum fmt f)
{
	return f != F_NONE && f != F_INT32 && f != F_INT64;
}

/* The format a name gives. kube-openapi's registry names formats without
   their dashes (ip-v4 is ipv4, date-time is datetime) and looks a name up
   the same way; F_NONE for one it does not know. */
static enum fmt find_format(const char *name)
{
	char norm[64];
	size_t k = 0;
	for (const char *q = name; *q; q++) {
		if (*q == '-')
			continue;
		if (k == sizeof norm - 1)
			return F_NONE;
		norm[k++] = *q;
	}
	norm[k] = '\0';
	for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
		if (strcmp(norm, formats[i].name) == 0)
			return formats[i].f;
	return F_NONE;
}

enum addl { ADDL_NONE, ADDL_TRUE, ADDL_FALSE, ADDL_SCHEMA };
enum listtype { LIST_NONE, LIST_ATOMIC, LIST_SET, LIST_MAP };

struct bound {
	bool set, excl, is_int;
	double d;
	json_int_t i;
};

struct prop {
	char *name;
	struct node *n;
};

#define NO_MAX LLONG_MIN

struct node {
	unsigned types;	   /* T_* bits; 0 when type is not given */
	char *type_name;   /* the type keyword, for messages */
	bool nullable, preserve, embedded, int_or_string;
	struct bound min, max;
	bool has_mult;
	double mult;
	long long min_len, min_items, min_props; /* -1: not set */
	/* NO_MAX: not set; a negative one fails every value, as in kube */
	long long max_len, max_items, max_props;
	enum fmt format;
	char *format_name;
	char *pattern;	   /* as written, for messages */
	struct srv_goregex *re; /* NULL: the pattern matches anything */
	json_t *enum_vals; /* array, or NULL */
	json_t *dflt;	   /* NULL when absent or null */
	char **required;
	size_t n_required;
	struct prop *props; /* sorted by name */
	size_t n_props;
	struct node *items;
	enum addl addl;
	struct node *addl_schema;
	struct node **all_of, **any_of, **one_of;
	size_t n_all_of, n_any_of, n_one_of;
	struct node *not_;
	enum listtype list_type;
	bool map_atomic; /* x-kubernetes-map-type: atomic (server-side apply) */
	char **map_keys;
	size_t n_map_keys;
	size_t rule0,
	    n_rules;	  /* its x-kubernetes-validations: s->rules[rule0..] */
	bool rules_below; /* it or a node under it (allOf too) has rules */
};

struct rule {
	char *path, *rule, *message;
	char *field_path; /* fieldPath, normalized ("spec.x"), or NULL */
	char *reason;	  /* reason, or NULL (FieldValueInvalid) */
	cel_prog *prog;	  /* NULL: not evaluated, for why */
	cel_prog *msg_prog; /* messageExpression, or NULL */
	char *why;
	bool uses_old;
	bool opt_old; /* optionalOldSelf: evaluated with no old value too */
};

struct srv_schema {
	struct node *root;
	struct rule *rules;
	size_t n_rules;
	char **warnings;
	size_t n_warnings;
	/* a default at, under or above an embedded resource: it may put
	   into the resource's metadata what ObjectMeta does not know
	   (srv_schema_default prunes again) */
	bool meta_defaults;
};

/* ------------------------------------------------------------------------ */
/* Locale.                                                                   */

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_init(void)
{
	utf8_locale = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	if (!utf8_locale)
		utf8_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Switch this thread to C.UTF-8; returns the locale to restore. */
static locale_t locale_enter(void)
{
	pthread_once(&utf8_once, utf8_init);
	if (!utf8_locale)
		return (locale_t)0;
	return uselocale(utf8_locale);
}

static void locale_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

/* ------------------------------------------------------------------------ */
/* Freeing.                                                                  */

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	free(n->type_name);
	free(n->format_name);
	free(n->pattern);
	srv_goregex_free(n->re);
	json_decref(n->enum_vals);
	json_decref(n->dflt);
	strv_free(n->required, n->n_required);
	for (size_t i = 0; i < n->n_props; i++) {
		free(n->props[i].name);
		node_free(n->props[i].n);
	}
	free(n->props);
	node_free(n->items);
	node_free(n->addl_schema);
	for (size_t i = 0; i < n->n_all_of; i++)
		node_free(n->all_of[i]);
	free(n->all_of);
	for (size_t i = 0; i < n->n_any_of; i++)
		node_free(n->any_of[i]);
	free(n->any_of);
	for (size_t i = 0; i < n->n_one_of; i++)
		node_free(n->one_of[i]);
	free(n->one_of);
	node_free(n->not_);
	strv_free(n->map_keys, n->n_map_keys);
	free(n);
}

void srv_schema_free(struct srv_schema *s)
{
	if (!s)
		return;
	node_free(s->root);
	for (size_t i = 0; i < s->n_rules; i++) {
		free(s->rules[i].path);
		free(s->rules[i].rule);
		free(s->rules[i].message);
		free(s->rules[i].field_path);
		free(s->rules[i].reason);
		free(s->rules[i].why);
		cel_free(s->rules[i].prog);
		cel_free(s->rules[i].msg_prog);
	}
	free(s->rules);
	strv_free(s->warnings, s->n_warnings);
	free(s);
}

/* ------------------------------------------------------------------------ */
/* Pattern translation: Go RE2 syntax to POSIX extended.                     */

static bool is_ere_special(char c)
{
	return c && strchr(".[]()*+?{}|^$\\", c) != NULL;
}

static void re_lit(struct sb *o, char c)
{
	if (is_ere_special(c))
		sb_putc(o, '\\');
	sb_putc(o, c);
}


/* \xHH or \x{H...} after the "\x"; *p advanced. Returns the code point or
   -1. */
static long re_hex(const char **p)
{
	const char *s = *p;
	long v = 0;
	if (*s == '{') {
		s++;
		int n = 0;
		while (reg_hex_digit(*s) >= 0 && n < 8) {
			v = v * 16 + reg_hex_digit(*s++);
			n++;
		}
		if (*s != '}' || n == 0)
			return -1;
		s++;
	} else {
		if (reg_hex_digit(s[0]) < 0 || reg_hex_digit(s[1]) < 0)
			return -1;
		v = reg_hex_digit(s[0]) * 16 + reg_hex_digit(s[1]);
		s += 2;
	}
	*p = s;
	return v;
}

/* A control escape \n \t ... as its byte, or 0. */
static char re_ctl(char e)
{
	switch (e) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'a': return '\a';
	default: return 0;
	}
}

/* One item of a class at *pp: a character (its code point returned, >0)
   or a set such as \d or [:alpha:] (appended to set, returns 0). -1 on
   error. */
static long re_class_atom(const char **pp, struct sb *set, const char **why)
{
	const char *p = *pp;
	int c = (unsigned char)*p;
	if (c >= 0x80) { /* one UTF-8 character (JSON text is valid) */
		uint32_t r;
		*pp = p + reg_utf8_decode((const unsigned char *)p,
					  strnlen(p, 4), &r);
		return (long)r;
	}
	if (c == '[' && p[1] == ':') {
		const char *end = strstr(p + 2, ":]");
		if (!end) {
			*why = "bad character class";
			return -1;
		}
		/* Go's named classes are ASCII; glibc's, in C.UTF-8, Unicode's
		   ([:cntrl:] holds U+0080-U+009F, [:space:] U+2028): written
		   as ASCII ranges. Go has [:word:] too, which glibc lacks. */
		static const char *const named[][2] = {
		    {"alnum", "0-9A-Za-z"},	{"alpha", "A-Za-z"},
		    {"ascii", "\x01-\x7f"},	{"blank", "\t "},
		    {"cntrl", "\x01-\x1f\x7f"}, {"digit", "0-9"},
		    {"graph", "!-~"},		{"lower", "a-z"},
		    {"print", " -~"},		{"punct", "!-/:-@[-`{-~"},
		    {"space", "\t\n\v\f\r "},	{"upper", "A-Z"},
		    {"word", "0-9A-Za-z_"},	{"xdigit", "0-9A-Fa-f"},
		};
		size_t len = (size_t)(end - (p + 2));
		const char *body = NULL;
		for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
			if (strlen(named[i][0]) == len &&
			    !memcmp(named[i][0], p + 2, len))
				body = named[i][1];
		if (body)
			sb_puts(set, body);
		else
			sb_putn(set, p, (size_t)(end + 2 - p));
		*pp = end + 2;
		return 0;
	}
	if (c != '\\') {
		*pp = p + 1;
		return c;
	}
	char e = p[1];
	p += 2;
	*pp = p;
	if (!e) {
		*why = "trailing backslash";
		return -1;
	}
	if (e == 'd') {
		sb_puts(set, "0-9");
		return 0;
	}
	if (e == 'w') {
		sb_puts(set, "A-Za-z0-9_");
		return 0;
	}
	if (e == 's') {
		sb_puts(set, "\t\n\f\r ");
		return 0;
	}
	if (re_ctl(e))
		return (unsigned char)re_ctl(e);
	if (e == 'x') {
		long v = re_hex(pp);
		if (v == 0) {
			/* NUL, which no value holds (a body's \u0000 is
			   refused before any schema, and POSIX patterns are C
			   strings): alone it adds nothing, a range from it
			   starts at \x01 (contour's [^()<>@,;:\x00-\x1f]) */
			const char *q = *pp;
			return q[0] == '-' && q[1] && q[1] != ']' ? 1 : 0;
		}
		if (v < 0 || v > 0x10ffff) {
			*why = "bad \\x escape in a class";
			return -1;
		}
		return v;
	}
	if (isalnum((unsigned char)e)) {
		*why = "unsupported escape in a class";
		return -1;
	}
	return (unsigned char)e;
}

/* Case orbits beyond ASCII, for (?i): the characters one reaches from
   another by Unicode's simple lower and upper case mappings (glibc's, in
   C.UTF-8: the same components as Go's unicode.SimpleFold, e.g. Σ σ ς,
   ẞ ß, É é). Built once: every code point below U+20000 with a mapping
   and every mapping's target, sorted, and each one's component (its
   smallest member), the members of a component adjacent in fold_by. */
struct fold_ent {
	uint32_t cp, root;
};

static struct fold_ent *fold_cp, *fold_by; /* by code point, by root */
static size_t fold_n;
static pthread_once_t fold_once = PTHREAD_ONCE_INIT;

static int fold_cmp_cp(const void *a, const void *b)
{
	uint32_t x = ((const struct fold_ent *)a)->cp,
		 y = ((const struct fold_ent *)b)->cp;
	return x < y ? -1 : x > y;
}

static int fold_cmp_root(const void *a, const void *b)
{
	const struct fold_ent *x = a, *y = b;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return x->cp < y->cp ? -1 : x->cp > y->cp;
}

static struct fold_ent *fold_find(uint32_t cp)
{
	struct fold_ent key = {cp, 0};
	return fold_n ? bsearch(&key, fold_cp, fold_n, sizeof key, fold_cmp_cp)
		      : NULL;
}

static uint32_t fold_root(uint32_t cp)
{
	for (struct fold_ent *e; (e = fold_find(cp)) && e->root != cp;)
		cp = e->root;
	return cp;
}

static void fold_init(void)
{
	pthread_once(&utf8_once, utf8_init);
	locale_t l = utf8_locale;
	if (!l)
		return;
	size_t cap = 4096, n = 0;
	struct fold_ent *v = malloc(cap * sizeof *v);
	for (uint32_t c = 0; v && c < 0x20000; c++) {
		uint32_t lo = (uint32_t)towlower_l((wint_t)c, l),
			 up = (uint32_t)towupper_l((wint_t)c, l);
		uint32_t m[3] = {c, lo, up};
		for (int i = 0; i < 3 && (lo != c || up != c); i++) {
			if (n == cap) {
				struct fold_ent *nv =
				    realloc(v, 2 * cap * sizeof *v);
				if (!nv) {
					free(v);
					v = NULL;
					break;
				}
				v = nv;
				cap *= 2;
			}
			v[n++] = (struct fold_ent){m[i], m[i]};
		}
	}
	if (!v)
		return;
	qsort(v, n, sizeof *v, fold_cmp_cp);
	size_t u = 0; /* one entry per code point */
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1].cp != v[i].cp)
			v[u++] = v[i];
	fold_cp = v;
	fold_n = u;
	/* join each code point with its mappings (union by the smaller
	   root), until nothing changes */
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < u; i++) {
			uint32_t c = v[i].cp;
			uint32_t m[2] = {(uint32_t)towlower_l((wint_t)c, l),
					 (uint32_t)towupper_l((wint_t)c, l)};
			for (int k = 0; k < 2; k++) {
				uint32_t a = fold_root(c), b = fold_root(m[k]);
				struct fold_ent *hi = fold_find(a > b ? a : b);
				if (a == b || !hi)
					continue;
				hi->root = a < b ? a : b;
				again = true;
			}
		}
	}
	fold_by = malloc(u * sizeof *fold_by);
	if (!fold_by)
		return;
	for (size_t i = 0; i < u; i++)
		fold_by[i] = (struct fold_ent){v[i].cp, fold_root(v[i].cp)};
	qsort(fold_by, u, sizeof *fold_by, fold_cmp_root);
}

/* Append to o every other member of cp's case orbit (nothing when it has
   none); returns how many. */
static size_t re_fold_orbit(struct sb *o, uint32_t cp)
{
	pthread_once(&fold_once, fold_init);
	if (!fold_by || !fold_find(cp))
		return 0;
	uint32_t root = fold_root(cp);
	/* the component's first member in fold_by */
	size_t lo = 0, hi = fold_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fold_by[mid].root < root)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = 0;
	for (size_t i = lo; i < fold_n && fold_by[i].root == root; i++) {
		if (fold_by[i].cp == cp)
			continue;
		char u[4];
		sb_putn(o, u, reg_utf8_encode(u, fold_by[i].cp));
		k++;
	}
	return k;
}

/* Go's case folding takes two letters beyond ASCII into the orbits of
   ASCII ones: s, S and U+017F (long s); k, K and U+212A (Kelvin sign).
   Added to body when the range lo-hi holds s or k in either case. */
static void re_fold_beyond(struct sb *body, int lo, int hi)
{
	if ((lo <= 's' && 's' <= hi) || (lo <= 'S' && 'S' <= hi))
		sb_puts(body, "\xc5\xbf");
	if ((lo <= 'k' && 'k' <= hi) || (lo <= 'K' && 'K' <= hi))
		sb_puts(body, "\xe2\x84\xaa");
}

/* The other case's part of the range lo-hi (ASCII letters), added to body
   for a case-insensitive class. */
static void re_fold_range(struct sb *body, int lo, int hi)
{
	re_fold_beyond(body, lo, hi);
	int a = lo > 'a' ? lo : 'a', b = hi < 'z' ? hi : 'z';
	if (a <= b) {
		sb_putc(body, (char)(a - 32));
		sb_putc(body, '-');
		sb_putc(body, (char)(b - 32));
	}
	a = lo > 'A' ? lo : 'A';
	b = hi < 'Z' ? hi : 'Z';
	if (a <= b) {
		sb_putc(body, (char)(a + 32));
		sb_putc(body, '-');
		sb_putc(body, (char)(b + 32));
	}
}

/* The characters that mean something in a POSIX bracket, in order, and
   which of them a class holds (written apart, where they are literal). */
static const char bracket_specials[] = "-[]^";

struct bracket {
	struct sb body;
	bool has[sizeof bracket_specials - 1];
};

static void bracket_rune(struct sb *o, long c)
{
	char u[4];
	sb_putn(o, u, reg_utf8_encode(u, (uint32_t)c));
}

/* Non-ASCII characters a bracket lists one by one: glibc's C.UTF-8
   refuses a range of them (REG_ECOLLATE). */
#define BRACKET_MAX_LISTED 1024

/* lo-hi into b: the runs between the bracket's special characters as
   ranges, the specials themselves apart (Go's [#-[] holds '-' and '['),
   non-ASCII characters listed. false when they are too many to list. */
static bool bracket_range(struct bracket *b, long lo, long hi)
{
	if (hi > 0x7f) {
		long from = lo > 0x80 ? lo : 0x80;
		if (hi - from >= BRACKET_MAX_LISTED)
			return false;
		for (long c = from; c <= hi; c++)
			bracket_rune(&b->body, c);
		if (lo > 0x7f)
			return true;
		hi = 0x7f;
	}
	for (size_t i = 0; i < sizeof b->has; i++) {
		long sp = (unsigned char)bracket_specials[i];
		if (sp < lo || sp > hi)
			continue;
		b->has[i] = true;
		if (sp > lo)
			bracket_range(b, lo, sp - 1);
		lo = sp + 1;
	}
	if (lo <= hi) {
		bracket_rune(&b->body, lo);
		if (hi > lo) {
			sb_putc(&b->body, '-');
			bracket_rune(&b->body, hi);
		}
	}
	return true;
}

static bool re_class(const char **pp, struct sb *o, bool icase,
		     const char **why)
{
	const char *p = *pp;
	bool neg = false;
	struct bracket br = {{0}, {false}};
	bool ok = true, first = true;
	if (*p == '^') {
		neg = true;
		p++;
	}
	for (;;) {
		if (!*p) {
			*why = "missing closing ]";
			ok = false;
			break;
		}
		if (*p == ']' && !first) {
			p++;
			break;
		}
		first = false;
		long lo = re_class_atom(&p, &br.body, why), hi = lo;
		if (lo < 0) {
			ok = false;
			break;
		}
		if (lo == 0)
			continue;
		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			hi = re_class_atom(&p, &br.body, why);
			if (hi <= 0 || hi < lo) {
				if (hi >= 0)
					*why = "unsupported class range";
				ok = false;
				break;
			}
		}
		if (!bracket_range(&br, lo, hi)) {
			*why = "unsupported class range";
			ok = false;
			break;
		}
		if (icase && lo < 0x80)
			re_fold_range(&br.body, (int)lo,
				      hi < 0x80 ? (int)hi : 0x7f);
		/* the other cases of the non-ASCII ones (listed one by one) */
		for (long c = lo > 0x80 ? lo : 0x80; icase && c <= hi; c++)
			re_fold_orbit(&br.body, (uint32_t)c);
	}
	struct sb *body = &br.body;
	bool dash = br.has[0], lbr = br.has[1], rbr = br.has[2],
	     caret = br.has[3];
	if (ok && body->oom)
		ok = false;
	if (ok) {
		if (!neg && !rbr && !dash && !lbr && body->len == 0 && caret) {
			sb_puts(o, "\\^");
		} else if (!neg && !rbr && !caret && !dash && !lbr &&
			   body->len == 0) {
			*why = "empty class";
			ok = false;
		} else {
			/* ']' first, '[' where no ':', '.' or '=' follows,
			   '^' not first, '-' last */
			sb_putc(o, '[');
			if (neg)
				sb_putc(o, '^');
			if (rbr)
				sb_putc(o, ']');
			sb_puts(o, sb_str(body));
			if (lbr)
				sb_putc(o, '[');
			if (caret)
				sb_putc(o, '^');
			if (dash)
				sb_putc(o, '-');
			sb_putc(o, ']');
		}
	}
	free(body->s);
	*pp = p;
	return ok;
}

/* A repetition {n}, {n,} or {n,m} at p? Returns its length or 0. As Go,
   a count of two digits or more that starts with 0 makes none: the "{" is
   then literal. */
static size_t re_repeat_len(const char *p)
{
	const char *s = p + 1;
	if (!isdigit((unsigned char)*s) ||
	    (s[0] == '0' && isdigit((unsigned char)s[1])))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	if (*s == ',') {
		s++;
		if (s[0] == '0' && isdigit((unsigned char)s[1]))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s != '}')
		return 0;
	return (size_t)(s + 1 - p);
}

/* RE2's flags i (case-insensitive) and s (. matches \n), scoped to the
   rest of their group as RE2 scopes them: POSIX has no such scopes, so
   the translation spells them out (a letter under i is [aA], a . without
   s is [^\n], RE2's default). */
struct reflags {
	bool i, s;
};
#define RE_MAX_DEPTH 64

/* Flags at p ("(?" already read): "i", "s", "-i", ... up to ':' or ')'.
   Returns the length of the flags and terminator, 0 when unsupported. */
static size_t re_flags(const char *p, struct reflags *f)
{
	bool neg = false;
	const char *q = p;
	for (; *q && *q != ':' && *q != ')'; q++) {
		if (*q == '-' && !neg) {
			neg = true;
		} else if (*q == 'i') {
			f->i = !neg;
		} else if (*q == 's') {
			f->s = !neg;
		} else {
			return 0;
		}
	}
	/* "(?:" has no flags; "(?)" is an error */
	if (!*q || (q == p && *q == ')'))
		return 0;
	return (size_t)(q + 1 - p);
}

static bool re_translate(const char *p, struct sb *o, int *cflags, bool *caret,
			 const char **why)
{
	struct reflags cur = {false, false}, stack[RE_MAX_DEPTH];
	size_t depth = 0;
	bool rep = false; /* the last item was a repetition */
	/* per open group: how deep repeated groups holding repetitions nest
	   inside it, and whether it holds a repetition */
	int nest[RE_MAX_DEPTH + 1] = {0}, closed = 0;
	bool has_rep[RE_MAX_DEPTH + 1] = {false}, closed_rep = false;
	(void)cflags;
	while (*p) {
		char c = *p;
		/* Go refuses a repetition of a repetition (a**, a+{2}; a lazy
		   a*? is one), and glibc would build an automaton that grows
		   with the power of their count: a 25-fold a+ takes minutes
		   and gigabytes to compile */
		bool is_rep = c == '*' || c == '+' || c == '?' ||
			      (c == '{' && re_repeat_len(p));
		if (is_rep && rep) {
			*why = "invalid nested repetition operator";
			return false;
		}
		if (is_rep) {
			has_rep[depth] = true;
			/* a repeated group that holds a repetition: glibc's
			   automaton doubles with each such level (20 take
			   seconds, 25 minutes); Go's does not */
			if (closed_rep && p[-1] == ')' &&
			    closed + 1 > nest[depth])
				nest[depth] = closed + 1;
			if (nest[depth] > 12) {
				*why = "repeated groups nested too deep";
				return false;
			}
		}
		rep = is_rep;
		if (c == '\\') {
			char e = p[1];
			if (!e) {
				*why = "trailing backslash";
				return false;
			}
			p += 2;
			switch (e) {
			case 'd': sb_puts(o, "[0-9]"); break;
			case 'D': sb_puts(o, "[^0-9]"); break;
			case 'w': sb_puts(o, "[A-Za-z0-9_]"); break;
			case 'W': sb_puts(o, "[^A-Za-z0-9_]"); break;
			case 's': sb_puts(o, "[\t\n\f\r ]"); break;
			case 'S': sb_puts(o, "[^\t\n\f\r ]"); break;
			case 'A': sb_putc(o, '^'); *caret = true; break;
			case 'z': sb_putc(o, '$'); break;
			case 'b': sb_puts(o, "\\b"); break;
			case 'B': sb_puts(o, "\\B"); break;
			case 'x': {
				long v = re_hex(&p);
				if (v <= 0 || v > 0x10ffff) {
					*why = "bad \\x escape";
					return false;
				}
				if (v < 0x80) {
					re_lit(o, (char)v);
				} else {
					char u[5];
					int n;
					if (v < 0x800) {
						u[0] = (char)(0xc0 | (v >> 6));
						n = 1;
					} else if (v < 0x10000) {
						u[0] = (char)(0xe0 | (v >> 12));
						u[1] = (char)(0x80 | ((v >> 6) & 0x3f));
						n = 2;
					} else {
						u[0] = (char)(0xf0 | (v >> 18));
						u[1] = (char)(0x80 | ((v >> 12) & 0x3f));
						u[2] = (char)(0x80 | ((v >> 6) & 0x3f));
						n = 3;
					}
					u[n++] = (char)(0x80 | (v & 0x3f));
					sb_putc(o, '(');
					sb_putn(o, u, (size_t)n);
					sb_putc(o, ')');
				}
				break;
			}
			default:
				if (re_ctl(e)) {
					sb_putc(o, re_ctl(e));
				} else if (isalnum((unsigned char)e)) {
					*why = "unsupported escape";
					return false;
				} else {
					re_lit(o, e);
				}
			}
			continue;
		}
		if (c == '[') {
			p++;
			if (!re_class(&p, o, cur.i, why))
				return false;
			continue;
		}
		if (c == '(') {
			if (depth == RE_MAX_DEPTH) {
				*why = "nested too deep";
				return false;
			}
			struct reflags outer = cur;
			p++;
			if (*p == '?') {
				p++;
				if (*p == 'P' && p[1] == '<') {
					p++; /* (?P<name>...) */
				}
				if (*p == '<') { /* a named group */
					const char *e = strchr(p, '>');
					if (!e) {
						*why = "invalid named capture";
						return false;
					}
					p = e + 1;
				} else {
					size_t n = re_flags(p, &cur);
					if (!n) {
						*why = "unsupported group flags";
						return false;
					}
					p += n;
					if (p[-1] == ')')
						continue; /* (?i): the rest of the group */
				}
			}
			stack[depth++] = outer;
			nest[depth] = 0;
			has_rep[depth] = false;
			sb_putc(o, '(');
			continue;
		}
		if (c == ')') {
			closed = nest[depth];
			closed_rep = has_rep[depth];
			if (depth) {
				cur = stack[--depth];
				if (closed > nest[depth])
					nest[depth] = closed;
				has_rep[depth] |= closed_rep;
			}
			sb_putc(o, ')');
			p++;
			continue;
		}
		if (c == '.') {
			sb_puts(o, cur.s ? "." : "[^\n]");
			p++;
			continue;
		}
		if (c == '^')
			*caret = true;
		if (cur.i && isalpha((unsigned char)c)) {
			char u[4] = {'[', c, (char)(c ^ 32), 0};
			sb_puts(o, u);
			re_fold_beyond(o, c, c);
			sb_putc(o, ']');
			p++;
			continue;
		}
		if (c == '{') {
			size_t n = re_repeat_len(p);
			if (!n) {
				sb_puts(o, "\\{");
				p++;
				continue;
			}
			sb_putn(o, p, n);
			p += n;
			if (*p == '?')
				p++; /* lazy: same matches for a yes/no test */
			continue;
		}
		if (c == '}') {
			sb_puts(o, "\\}");
			p++;
			continue;
		}
		if (cur.i && (unsigned char)c >= 0x80) {
			/* a letter beyond ASCII: its case orbit, as Go folds */
			uint32_t r;
			size_t n = reg_utf8_decode((const unsigned char *)p,
						   strnlen(p, 4), &r);
			struct sb alt = {0};
			if (re_fold_orbit(&alt, r)) {
				sb_putc(o, '[');
				sb_putn(o, p, n);
				sb_putn(o, alt.s, alt.len);
				sb_putc(o, ']');
			} else {
				sb_putn(o, p, n);
			}
			free(alt.s);
			p += n;
			continue;
		}
		sb_putc(o, c);
		p++;
		if ((c == '*' || c == '+' || c == '?') && *p == '?')
			p++;
	}
	return !o->oom;
}

/* ------------------------------------------------------------------------ */
/* Compiling.                                                                */

struct cctx {
	struct srv_schema *s;
	struct srv_error *err;
	struct sb spath; /* schema path, for keyword type errors */
	struct sb dpath; /* data path, for rules */
	lp_err rc;
};

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "bool";
	case JSON_NULL: return "null";
	}
	return "?";
}

static lp_err bad_kw(struct cctx *c, const char *kw, const json_t *v,
		     const char *gotype)
{
	c->rc = srv_error_set(c->err, LP_E_BADREQUEST,
			      "json: cannot unmarshal %s into Go struct field "
			      "JSONSchemaProps.%s%s%s of type %s",
			      json_kind(v), sb_str(&c->spath),
			      c->spath.len ? "." : "", kw, gotype);
	return c->rc;
}

static lp_err nomem(struct cctx *c)
{
	c->rc = srv_error_set(c->err, LP_E_NOMEM, "out of memory");
	return c->rc;
}

/* Keyword getters: absent and null leave *out alone and succeed. */
static lp_err kw_bool(struct cctx *c, const json_t *js, const char *kw,
		      bool *out)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_boolean(v))
		return bad_kw(c, kw, v, "bool");
	*out = json_is_true(v);
	return LP_OK;
}

static lp_err kw_int(struct cctx *c, const json_t *js, const char *kw,
		     long long *out)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_integer(v))
		return bad_kw(c, kw, v, "int64");
	*out = json_integer_value(v);
	return LP_OK;
}

static lp_err kw_str(struct cctx *c, const json_t *js, const char *kw,
		     char **out)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_string(v))
		return bad_kw(c, kw, v, "string");
	*out = strdup(json_string_value(v));
	return *out ? LP_OK : nomem(c);
}

static lp_err kw_num(struct cctx *c, const json_t *js, const char *kw,
		     struct bound *b)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_number(v))
		return bad_kw(c, kw, v, "float64");
	b->set = true;
	b->d = json_number_value(v);
	b->is_int = json_is_integer(v);
	if (b->is_int)
		b->i = json_integer_value(v);
	return LP_OK;
}

static lp_err kw_strv(struct cctx *c, const json_t *js, const char *kw,
		      char ***out, size_t *n_out)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_array(v))
		return bad_kw(c, kw, v, "[]string");
	size_t n = json_array_size(v);
	char **sv = calloc(n ? n : 1, sizeof *sv);
	if (!sv)
		return nomem(c);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(v, i);
		if (!json_is_string(e)) {
			strv_free(sv, i);
			return bad_kw(c, kw, e, "string");
		}
		sv[i] = strdup(json_string_value(e));
		if (!sv[i]) {
			strv_free(sv, i);
			return nomem(c);
		}
	}
	*out = sv;
	*n_out = n;
	return LP_OK;
}

static lp_err compile_node(struct cctx *c, const json_t *js,
			   struct node **out, int depth);

/* Compile js[kw] (a schema) at schema path step kw. */
static lp_err compile_child(struct cctx *c, const json_t *js, const char *step,
			    struct node **out, int depth)
{
	size_t sl = c->spath.len;
	path_key(&c->spath, step);
	lp_err rc = compile_node(c, js, out, depth + 1);
	sb_cut(&c->spath, sl);
	return rc;
}

static lp_err compile_list(struct cctx *c, const json_t *js, const char *kw,
			   struct node ***out, size_t *n_out, int depth)
{
	const json_t *v = json_object_get(js, kw);
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_array(v))
		return bad_kw(c, kw, v, "[]v1.JSONSchemaProps");
	size_t n = json_array_size(v);
	struct node **nv = calloc(n ? n : 1, sizeof *nv);
	if (!nv)
		return nomem(c);
	*out = nv;
	*n_out = n;
	for (size_t i = 0; i < n; i++) {
		lp_err rc = compile_child(c, json_array_get(v, i), kw, &nv[i],
					  depth);
		if (rc)
			return rc;
	}
	return LP_OK;
}

static int cmp_prop(const void *a, const void *b)
{
	return strcmp(((const struct prop *)a)->name,
		      ((const struct prop *)b)->name);
}

static lp_err add_warning(struct cctx *c, const char *pattern, const char *why)
{
	struct sb w = {0};
	sb_puts(&w, "pattern ");
	go_quote(&w, pattern);
	sb_printf(&w, " at %s%s is not checked: %s",
		  c->dpath.len ? "" : "<root>", sb_str(&c->dpath), why);
	char **v = realloc(c->s->warnings,
			   (c->s->n_warnings + 1) * sizeof *v);
	if (!v || w.oom) {
		if (v)
			c->s->warnings = v;
		free(w.s);
		return nomem(c);
	}
	c->s->warnings = v;
	v[c->s->n_warnings++] = w.s;
	return LP_OK;
}

/* The end of the bracket expression at p (its "["), as regcomp reads the
   ones re_class writes; NULL if it does not end. */
static const char *posix_bracket_end(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p && *p != ']'; p++) {
		if (p[0] == '[' &&
		    (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *e = p + 2;
			while (*e && !(e[0] == p[1] && e[1] == ']'))
				e++;
			if (!*e)
				return NULL;
			p = e + 1;
		}
	}
	return *p ? p + 1 : NULL;
}

/* Copy the POSIX expression x into q with every ^ anchor (one that is
   neither escaped nor in a bracket) made a byte 0xFF, which no value holds
   (values are UTF-8), so it never matches. false when x does not parse. */
static bool posix_never_bol(const char *x, struct sb *q)
{
	while (*x) {
		if (*x == '\\' && x[1]) {
			sb_putn(q, x, 2);
			x += 2;
		} else if (*x == '[') {
			const char *e = posix_bracket_end(x);
			if (!e)
				return false;
			sb_putn(q, x, (size_t)(e - x));
			x = e;
		} else if (*x == '^') {
			sb_putc(q, '\xff');
			x++;
		} else {
			sb_putc(q, *x++);
		}
	}
	return true;
}

/*
 * Compile n's pattern P. glibc's regexec looks for an unanchored match by
 * trying each start position in turn, each try running to the value's end
 * at worst: time that grows with the square of the value (prometheus-
 * operator's size pattern "(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$"
 * took 107 s of CPU on 100,000 digits). The same question, is there a
 * match anywhere, asked from the start alone is one pass: "^.*(P)".
 * One catch: after a ".*" that crossed a newline, glibc lets a "^" inside
 * P match there (it must not without REG_NEWLINE). So a P with a ^ anchor
 * (from ^ or \A) is asked "^(P|.+(Q))": P at the start, or Q after it,
 * where Q is P with its anchors made never to match, as Go's ^ never
 * matches past the start.
 *
 * pat is one Go's regexp takes. false with *why when it cannot be
 * translated or regcomp refuses it; *oom on out of memory.
 */
static bool pattern_regcomp(const char *pat, regex_t *re, const char **why,
			    bool *oom)
{
	struct sb o = {0}, w = {0}, q = {0};
	int cflags = REG_EXTENDED | REG_NOSUB;
	bool caret = false, ok = false;
	*why = "cannot be translated";
	if (re_translate(pat, &o, &cflags, &caret, why)) {
		if (!caret) {
			sb_puts(&w, "^.*(");
			sb_puts(&w, sb_str(&o));
			sb_putc(&w, ')');
		} else if (posix_never_bol(sb_str(&o), &q)) {
			sb_puts(&w, "^(");
			sb_puts(&w, sb_str(&o));
			sb_puts(&w, "|.+(");
			sb_puts(&w, sb_str(&q));
			sb_puts(&w, "))");
		} else {
			sb_puts(&w, sb_str(&o)); /* slow but right */
		}
		if (!w.oom && regcomp(re, sb_str(&w), cflags) == 0)
			ok = true;
		else
			*why = "POSIX regcomp refused it";
	}
	*oom = o.oom || w.oom || q.oom;
	free(o.s);
	free(w.s);
	free(q.s);
	if (*oom && ok) {
		regfree(re);
		ok = false;
	}
	return ok;
}

/*
 * A Go pattern that has no POSIX translation (\p{..} and \P{..}, the m and
 * U flags) runs on PCRE2 instead, as does every find(): PCRE2 takes the
 * leftmost-first match, RE2's, where POSIX takes the longest. On PCRE2 a
 * Go pattern means the same but for these: PCRE2's \v is any vertical
 * space, Go's a vertical tab, so it is written \x{0B}; $ matches only at
 * the end (PCRE2_DOLLAR_ENDONLY), as Go's without the m flag, but in a
 * pattern that sets the m flag somewhere, where a $ outside its reach also
 * matches before a final newline; and \s also matches a vertical tab,
 * which Go's does not. A search (find false) is
 * one pass of PCRE2's DFA matcher over "\A(?s:.*)(?:P)": it never
 * backtracks, so no pattern takes more than time in the value's length
 * times the pattern's. A find() backtracks, within a match limit (a
 * search past it finds nothing); cel.c bounds what it searches.
 */
struct srv_goregex {
	bool posix; /* re; else pc */
	regex_t re;
	pcre2_code *pc;
};

/* How many steps a find() may take (PCRE2's default is ten million). */
#define FIND_MATCH_LIMIT 1000000

/* Does pat turn on the m flag anywhere ("(?m)", "(?im:", ...)? */
static bool sets_multiline(const char *pat)
{
	for (const char *p = strstr(pat, "(?"); p; p = strstr(p + 2, "(?")) {
		const char *f = p + 2;
		while (*f && strchr("imsU", *f))
			if (*f++ == 'm')
				return true;
	}
	return false;
}

static pcre2_code *pcre_compile_go(const char *pat, bool find, bool *oom)
{
	struct sb o = {0};
	bool quoted = false;
	if (!find)
		sb_puts(&o, "\\A(?s:.*)(?:");
	for (const char *p = pat; *p; p++) {
		if (quoted) {
			if (p[0] == '\\' && p[1] == 'E')
				quoted = false, sb_putc(&o, *p++);
			sb_putc(&o, *p);
		} else if (p[0] == '\\' && p[1] == 'Q') {
			quoted = true;
			sb_putc(&o, *p++);
			sb_putc(&o, *p);
		} else if (p[0] == '\\' && p[1] == 'v') {
			sb_puts(&o, "\\x{0B}");
			p++;
		} else if (p[0] == '\\' && p[1]) {
			sb_putc(&o, *p++);
			sb_putc(&o, *p);
		} else {
			sb_putc(&o, *p);
		}
	}
	if (!find)
		sb_puts(&o, quoted ? "\\E)" : ")");
	*oom = o.oom;
	if (o.oom)
		return NULL;
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	if (!cc) {
		free(o.s);
		*oom = true;
		return NULL;
	}
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	/* Go takes groups nested up to its parse tree's height of 1000;
	   PCRE2 stops at 250 by default */
	pcre2_set_parens_nest_limit(cc, 1000);
	int code;
	PCRE2_SIZE at;
	/* PCRE2 10.42's DFA matcher keeps DOLLAR_ENDONLY under (?m) */
	uint32_t opts = PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C |
			(sets_multiline(pat) ? 0 : PCRE2_DOLLAR_ENDONLY);
	pcre2_code *pc = pcre2_compile((PCRE2_SPTR)sb_str(&o), o.len, opts,
				       &code, &at, cc);
	*oom = !pc && code == PCRE2_ERROR_HEAPLIMIT;
	pcre2_compile_context_free(cc);
	free(o.s);
	return pc;
}

/* A new goregex of pat (see above), in this thread's C.UTF-8 locale; NULL
   with *why (static) or *oom. */
static struct srv_goregex *goregex_new(const char *pat, bool find,
				       const char **why, bool *oom)
{
	struct srv_goregex *g = calloc(1, sizeof *g);
	*oom = !g;
	if (!g)
		return NULL;
	const char *pwhy = "cannot be translated";
	char gomsg[8];
	/* what Go refuses is not compiled (kube refuses it first; a nested
	   repeat count such as (a{1,1000}){1,1000} would take glibc
	   gigabytes) */
	if (srv_re2_error(pat, gomsg, sizeof gomsg)) {
		pwhy = "Go's regexp refuses it";
	} else if (!find &&
		   (g->posix = pattern_regcomp(pat, &g->re, &pwhy, oom))) {
		return g;
	} else if (!*oom) {
		g->pc = pcre_compile_go(pat, find, oom);
		if (g->pc)
			return g;
		pwhy = "PCRE2 refused it";
	}
	*why = *oom ? "out of memory" : pwhy;
	free(g);
	return NULL;
}

/* The n bytes at s as a new C string, each NUL in them as c; NULL: no
   memory. */
static char *nul_as(const char *s, size_t n, char c)
{
	char *o = malloc(n + 1);
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		o[i] = s[i] ? s[i] : c;
	o[n] = '\0';
	return o;
}

/* Is there a match of g (compiled for a search) anywhere in the n bytes
   at s (a NUL among them is a character as any other, as in Go)? In this
   thread's C.UTF-8 locale. A PCRE2 search that fails (out of memory, its
   DFA's workspace past a megabyte) answers yes, as a pattern not checked
   does. */
static bool goregex_search(const struct srv_goregex *g, const char *s, size_t n)
{
	if (g->posix) {
		/* glibc's REG_STARTEND: the range, not strlen, bounds it. Its
		   POSIX syntax has "." refuse a NUL, which Go's takes: a NUL
		   is searched as \x01, which "." and the classes take as they
		   take a NUL in Go (a pattern names neither: regcomp reads a
		   C string) */
		regmatch_t range = {.rm_so = 0, .rm_eo = (regoff_t)n};
		if (!memchr(s, '\0', n))
			return regexec(&g->re, s, 1, &range, REG_STARTEND) == 0;
		char *c = nul_as(s, n, '\x01');
		if (!c)
			return true;
		bool m = regexec(&g->re, c, 1, &range, REG_STARTEND) == 0;
		free(c);
		return m;
	}
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		return true;
	int small[512], *ws = small;
	size_t wn = sizeof small / sizeof *small;
	int rc;
	for (;;) {
		rc = pcre2_dfa_match(g->pc, (PCRE2_SPTR)s, n, 0,
				     PCRE2_NO_UTF_CHECK | PCRE2_DFA_SHORTEST,
				     md, NULL, ws, wn);
		if (rc != PCRE2_ERROR_DFA_WSSIZE || wn >= 1 << 18)
			break;
		int *bigger = malloc(wn * 4 * sizeof *bigger);
		if (!bigger)
			break;
		if (ws != small)
			free(ws);
		ws = bigger;
		wn *= 4;
	}
	if (ws != small)
		free(ws);
	pcre2_match_data_free(md);
	return rc != PCRE2_ERROR_NOMATCH;
}

static lp_err compile_pattern(struct cctx *c, struct node *n)
{
	const char *why;
	bool oom;
	n->re = goregex_new(n->pattern, false, &why, &oom);
	if (oom)
		return nomem(c);
	if (!n->re)
		return add_warning(c, n->pattern, why);
	return LP_OK;
}

struct srv_goregex *srv_goregex_compile(const char *pattern, bool find,
					const char **why)
{
	bool oom;
	locale_t prev = locale_enter();
	struct srv_goregex *g = goregex_new(pattern, find, why, &oom);
	locale_leave(prev);
	return g;
}

bool srv_goregex_search(const struct srv_goregex *g, const char *s, size_t n)
{
	locale_t prev = locale_enter();
	bool m = goregex_search(g, s, n);
	locale_leave(prev);
	return m;
}

bool srv_goregex_find(const struct srv_goregex *g, const char *s, size_t len,
		      size_t from, size_t *so, size_t *eo)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(g->pc,
								     NULL);
	pcre2_match_context *mc = pcre2_match_context_create(NULL);
	int rc = PCRE2_ERROR_NOMEMORY;
	if (md && mc) {
		pcre2_set_match_limit(mc, FIND_MATCH_LIMIT);
		rc = pcre2_match(g->pc, (PCRE2_SPTR)s, len, from,
				 PCRE2_NO_UTF_CHECK, md, mc);
	}
	if (rc >= 0) {
		const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		*so = ov[0];
		*eo = ov[1];
	}
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	return rc >= 0;
}

void srv_goregex_free(struct srv_goregex *g)
{
	if (g) {
		if (g->posix)
			regfree(&g->re);
		pcre2_code_free(g->pc);
		free(g);
	}
}

/* The step from schema node cur (JSON, may be NULL) to the member named
   p[0..k): a property's schema (*key false), or additionalProperties'
   (*key true: kube's ValidFieldPath takes a map's member as a Key). */
static const json_t *fp_member(const json_t *cur, const char *p, size_t k,
			       bool *key)
{
	const json_t *props = json_object_get(cur, "properties");
	const json_t *sub =
	    json_is_object(props) ? json_object_getn(props, p, k) : NULL;
	*key = false;
	if (sub)
		return sub;
	const json_t *ap = json_object_get(cur, "additionalProperties");
	if (json_is_object(ap)) {
		*key = true;
		return ap;
	}
	return NULL;
}

/* kube's normalized fieldPath, as its field.Path prints it: ".a.b" and
   ".a['b']" name a.b, a member of a map (additionalProperties) is "[k]",
   "[2]" stays; js is the schema the rule is on. NULL (the rule's own
   path) when there is none or it is not of that simple form. */
static char *field_path_norm(const char *fp, const json_t *js)
{
	struct sb o = {0};
	const char *p = fp;
	const json_t *cur = js;
	while (*p) {
		const char *name;
		size_t k;
		if (*p == '.') {
			k = strcspn(++p, ".[");
			if (!k)
				goto bad;
			name = p;
			p += k;
		} else if (p[0] == '[' && (p[1] == '\'' || p[1] == '"')) {
			const char *e = strchr(p + 2, p[1]);
			if (!e || e[1] != ']')
				goto bad;
			name = p + 2;
			k = (size_t)(e - p - 2);
			p = e + 2;
		} else if (p[0] == '[') {
			size_t n = strspn(p + 1, "0123456789");
			if (!n || p[1 + n] != ']')
				goto bad;
			sb_putn(&o, p, n + 2);
			p += n + 2;
			cur = json_object_get(cur, "items");
			continue;
		} else {
			goto bad;
		}
		bool key;
		cur = fp_member(cur, name, k, &key);
		if (key) {
			sb_putc(&o, '[');
			sb_putn(&o, name, k);
			sb_putc(&o, ']');
		} else {
			if (o.len)
				sb_putc(&o, '.');
			sb_putn(&o, name, k);
		}
	}
	if (!o.len || o.oom)
		goto bad;
	return o.s;
bad:
	free(o.s);
	return NULL;
}

/* Compile r's rule (the x-kubernetes-validations item js) for cel.c; a
   rule it cannot take keeps prog NULL and says why. true on out of
   memory. */
static bool compile_cel(struct rule *r, const json_t *js, const json_t *node)
{
	char why[256] = "";
	const json_t *fp = json_object_get(js, "fieldPath");
	const json_t *reason = json_object_get(js, "reason");
	if (json_is_string(fp) && json_string_length(fp) &&
	    !(r->field_path = field_path_norm(json_string_value(fp), node)))
		snprintf(why, sizeof why, "fieldPath %s is not supported",
			 json_string_value(fp));
	if (json_is_string(reason) && json_string_length(reason) &&
	    !(r->reason = strdup(json_string_value(reason))))
		return true;
	if (!why[0] && r->rule[0]) {
		r->prog = cel_compile(r->rule, why, sizeof why);
		if (!r->prog && strcmp(why, "out of memory") == 0)
			return true;
		if (r->prog)
			r->uses_old = cel_uses_old_self(r->prog);
		/* kube refuses optionalOldSelf on a rule without oldSelf */
		if (r->uses_old &&
		    json_is_true(json_object_get(js, "optionalOldSelf"))) {
			cel_set_optional_old_self(r->prog);
			r->opt_old = true;
		}
	}
	/* a messageExpression lapis cannot compile leaves the message */
	const json_t *me = json_object_get(js, "messageExpression");
	if (r->prog && json_is_string(me) && json_string_length(me)) {
		char mwhy[64];
		r->msg_prog =
		    cel_compile(json_string_value(me), mwhy, sizeof mwhy);
		if (!r->msg_prog && strcmp(mwhy, "out of memory") == 0)
			return true;
	}
	return !r->prog && r->rule[0] && !(r->why = strdup(why));
}

static lp_err compile_rules(struct cctx *c, struct node *n, const json_t *js)
{
	const json_t *v = json_object_get(js, "x-kubernetes-validations");
	n->rule0 = c->s->n_rules;
	if (!v || json_is_null(v))
		return LP_OK;
	if (!json_is_array(v))
		return bad_kw(c, "x-kubernetes-validations", v,
			      "v1.ValidationRules");
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *r = json_array_get(v, i);
		if (!json_is_object(r))
			return bad_kw(c, "x-kubernetes-validations", r,
				      "v1.ValidationRule");
		const json_t *rule = json_object_get(r, "rule");
		const json_t *msg = json_object_get(r, "message");
		struct rule *rv = realloc(c->s->rules,
					  (c->s->n_rules + 1) * sizeof *rv);
		if (!rv)
			return nomem(c);
		c->s->rules = rv;
		struct rule *nr = &rv[c->s->n_rules];
		*nr = (struct rule){0};
		c->s->n_rules++;
		nr->path = strdup(sb_str(&c->dpath));
		nr->rule = strdup(json_is_string(rule) ?
					  json_string_value(rule) : "");
		nr->message = json_is_string(msg) ?
				      strdup(json_string_value(msg)) : NULL;
		if (!nr->path || !nr->rule || (json_is_string(msg) && !nr->message))
			return nomem(c);
		n->n_rules++;
		if (compile_cel(nr, r, js))
			return nomem(c);
	}
	return LP_OK;
}

static const struct {
	const char *name;
	unsigned bit;
} type_names[] = {
	{"string", T_STRING},	{"integer", T_INTEGER}, {"number", T_NUMBER},
	{"boolean", T_BOOLEAN}, {"object", T_OBJECT},	{"array", T_ARRAY},
};

static lp_err compile_node(struct cctx *c, const json_t *js,
			   struct node **out, int depth)
{
	lp_err rc;
	if (depth > SRV_SCHEMA_MAX_DEPTH) {
		c->rc = srv_error_set(c->err, LP_E_INVALID,
				      "schema nests deeper than %d levels at %s",
				      SRV_SCHEMA_MAX_DEPTH, sb_str(&c->spath));
		return c->rc;
	}
	if (!json_is_object(js)) {
		if (depth == 0) {
			c->rc = srv_error_set(c->err, LP_E_INVALID,
					      "openAPIV3Schema must be an object");
			return c->rc;
		}
		return bad_kw(c, "", js, "v1.JSONSchemaProps");
	}
	struct node *n = calloc(1, sizeof *n);
	if (!n)
		return nomem(c);
	*out = n;
	n->min_len = n->min_items = n->min_props = -1;
	n->max_len = n->max_items = n->max_props = NO_MAX;

	if ((rc = kw_str(c, js, "type", &n->type_name)))
		return rc;
	if (n->type_name) {
		for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
			if (strcmp(n->type_name, type_names[i].name) == 0)
				n->types = type_names[i].bit;
	}
	bool excl_min = false, excl_max = false;
	if ((rc = kw_bool(c, js, "nullable", &n->nullable)) ||
	    (rc = kw_bool(c, js, "x-kubernetes-preserve-unknown-fields",
			  &n->preserve)) ||
	    (rc = kw_bool(c, js, "x-kubernetes-embedded-resource",
			  &n->embedded)) ||
	    (rc = kw_bool(c, js, "x-kubernetes-int-or-string",
			  &n->int_or_string)) ||
	    (rc = kw_bool(c, js, "exclusiveMinimum", &excl_min)) ||
	    (rc = kw_bool(c, js, "exclusiveMaximum", &excl_max)) ||
	    (rc = kw_num(c, js, "minimum", &n->min)) ||
	    (rc = kw_num(c, js, "maximum", &n->max)) ||
	    (rc = kw_int(c, js, "minLength", &n->min_len)) ||
	    (rc = kw_int(c, js, "maxLength", &n->max_len)) ||
	    (rc = kw_int(c, js, "minItems", &n->min_items)) ||
	    (rc = kw_int(c, js, "maxItems", &n->max_items)) ||
	    (rc = kw_int(c, js, "minProperties", &n->min_props)) ||
	    (rc = kw_int(c, js, "maxProperties", &n->max_props)) ||
	    (rc = kw_str(c, js, "format", &n->format_name)) ||
	    (rc = kw_str(c, js, "pattern", &n->pattern)) ||
	    (rc = kw_strv(c, js, "required", &n->required, &n->n_required)) ||
	    (rc = kw_strv(c, js, "x-kubernetes-list-map-keys", &n->map_keys,
			  &n->n_map_keys)))
		return rc;
	n->min.excl = excl_min;
	n->max.excl = excl_max;
	struct bound mult = {0};
	if ((rc = kw_num(c, js, "multipleOf", &mult)))
		return rc;
	if (mult.set) {
		n->has_mult = true;
		n->mult = mult.d;
	}
	if (n->format_name)
		n->format = find_format(n->format_name);
	char *lt = NULL;
	if ((rc = kw_str(c, js, "x-kubernetes-list-type", &lt)))
		return rc;
	if (lt) {
		if (strcmp(lt, "set") == 0)
			n->list_type = LIST_SET;
		else if (strcmp(lt, "map") == 0)
			n->list_type = LIST_MAP;
		else if (strcmp(lt, "atomic") == 0)
			n->list_type = LIST_ATOMIC;
		free(lt);
	}
	char *mt = NULL;
	if ((rc = kw_str(c, js, "x-kubernetes-map-type", &mt)))
		return rc;
	if (mt) {
		n->map_atomic = strcmp(mt, "atomic") == 0;
		free(mt);
	}

	const json_t *v = json_object_get(js, "enum");
	if (v && !json_is_null(v)) {
		if (!json_is_array(v))
			return bad_kw(c, "enum", v, "[]v1.JSON");
		if (!(n->enum_vals = json_deep_copy(v)))
			return nomem(c);
	}
	v = json_object_get(js, "default");
	if (v && !json_is_null(v) && !(n->dflt = json_deep_copy(v)))
		return nomem(c);

	if ((rc = compile_rules(c, n, js)))
		return rc;
	if (n->pattern && (rc = compile_pattern(c, n)))
		return rc;

	size_t dl = c->dpath.len;
	v = json_object_get(js, "properties");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return bad_kw(c, "properties", v,
				      "map[string]v1.JSONSchemaProps");
		size_t np = json_object_size(v);
		n->props = calloc(np ? np : 1, sizeof *n->props);
		if (!n->props)
			return nomem(c);
		const char *k;
		json_t *pv;
		json_object_foreach((json_t *)v, k, pv) {
			struct prop *p = &n->props[n->n_props];
			if (!(p->name = strdup(k)))
				return nomem(c);
			n->n_props++;
			size_t sl = c->spath.len;
			path_key(&c->spath, "properties");
			path_key(&c->dpath, k);
			rc = compile_child(c, pv, k, &p->n, depth);
			sb_cut(&c->spath, sl);
			sb_cut(&c->dpath, dl);
			if (rc)
				return rc;
		}
		qsort(n->props, n->n_props, sizeof *n->props, cmp_prop);
	}
	v = json_object_get(js, "items");
	if (v && json_is_object(v)) {
		sb_puts(&c->dpath, "[*]");
		rc = compile_child(c, v, "items", &n->items, depth);
		sb_cut(&c->dpath, dl);
		if (rc)
			return rc;
	} else if (v && !json_is_null(v) && !json_is_array(v)) {
		return bad_kw(c, "items", v, "v1.JSONSchemaPropsOrArray");
	}
	v = json_object_get(js, "additionalProperties");
	if (v && json_is_boolean(v)) {
		n->addl = json_is_true(v) ? ADDL_TRUE : ADDL_FALSE;
	} else if (v && json_is_object(v)) {
		n->addl = ADDL_SCHEMA;
		path_key(&c->dpath, "*");
		rc = compile_child(c, v, "additionalProperties",
				   &n->addl_schema, depth);
		sb_cut(&c->dpath, dl);
		if (rc)
			return rc;
	} else if (v && !json_is_null(v)) {
		return bad_kw(c, "additionalProperties", v,
			      "v1.JSONSchemaPropsOrBool");
	}
	if ((rc = compile_list(c, js, "allOf", &n->all_of, &n->n_all_of,
			       depth)) ||
	    (rc = compile_list(c, js, "anyOf", &n->any_of, &n->n_any_of,
			       depth)) ||
	    (rc = compile_list(c, js, "oneOf", &n->one_of, &n->n_one_of,
			       depth)))
		return rc;
	v = json_object_get(js, "not");
	if (v && !json_is_null(v) &&
	    (rc = compile_child(c, v, "not", &n->not_, depth)))
		return rc;
	n->rules_below = n->n_rules || (n->items && n->items->rules_below) ||
			 (n->addl_schema && n->addl_schema->rules_below);
	for (size_t i = 0; i < n->n_props; i++)
		n->rules_below |= n->props[i].n->rules_below;
	for (size_t i = 0; i < n->n_all_of; i++)
		n->rules_below |= n->all_of[i]->rules_below;
	return LP_OK;
}

/* Is there a default at, under or above an embedded resource (inside: n
   is under one)? *emb_below: n or a node under it is embedded. */
static bool meta_defaults(const struct node *n, bool inside, int depth,
			  bool *emb_below)
{
	*emb_below = false;
	if (!n || depth > SRV_SCHEMA_MAX_DEPTH + 2)
		return false;
	inside |= n->embedded;
	bool found = false, below = false, b;
	for (size_t i = 0; i < n->n_props; i++) {
		found |= meta_defaults(n->props[i].n, inside, depth + 1, &b);
		below |= b;
	}
	found |= meta_defaults(n->items, inside, depth + 1, &b);
	below |= b;
	if (n->addl == ADDL_SCHEMA) {
		found |= meta_defaults(n->addl_schema, inside, depth + 1, &b);
		below |= b;
	}
	*emb_below = n->embedded || below;
	return found || (n->dflt && (inside || below));
}

lp_err srv_schema_compile(const json_t *openapi_v3_schema,
			  struct srv_schema **out, struct srv_error *err)
{
	struct cctx c = {.err = err};
	c.s = calloc(1, sizeof *c.s);
	if (!c.s)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	locale_t old = locale_enter();
	lp_err rc = compile_node(&c, openapi_v3_schema, &c.s->root, 0);
	locale_leave(old);
	bool emb;
	if (!rc)
		c.s->meta_defaults = meta_defaults(c.s->root, false, 0, &emb);
	if (!rc && (c.spath.oom || c.dpath.oom))
		rc = nomem(&c);
	free(c.spath.s);
	free(c.dpath.s);
	if (rc) {
		srv_schema_free(c.s);
		return rc;
	}
	*out = c.s;
	return LP_OK;
}

size_t srv_schema_rule_count(const struct srv_schema *s)
{
	return s ? s->n_rules : 0;
}

bool srv_schema_rule(const struct srv_schema *s, size_t i, const char **path,
		     const char **rule, const char **message)
{
	if (!s || i >= s->n_rules)
		return false;
	*path = s->rules[i].path;
	*rule = s->rules[i].rule;
	*message = s->rules[i].message;
	return true;
}

/* ------------------------------------------------------------------------ */
/* x-kubernetes-validations rules (kube's schema/cel Validator).             */

static const struct node *find_prop(const struct node *n, const char *k);

/* The schema of member k of an object at n: its property, else
   additionalProperties' schema; NULL for none (n NULL too). */
static const struct node *member_node(const struct node *n, const char *k)
{
	if (!n)
		return NULL;
	const struct node *p = find_prop(n, k);
	return p ? p : n->addl == ADDL_SCHEMA ? n->addl_schema : NULL;
}

static const void *cel_prop(const void *node, const char *name)
{
	return find_prop(node, name);
}

static const void *cel_items(const void *node)
{
	return ((const struct node *)node)->items;
}

static const void *cel_addl(const void *node)
{
	const struct node *n = node;
	return n->addl == ADDL_SCHEMA ? n->addl_schema : NULL;
}

/* kube's SchemaDeclType, as far as values are concerned */
static enum cel_stype cel_type(const void *node)
{
	const struct node *n = node;
	if (n->int_or_string)
		return CEL_S_INT_OR_STRING;
	if (n->types == T_STRING)
		return n->format == F_BYTE	 ? CEL_S_BYTES
		       : n->format == F_DURATION ? CEL_S_DURATION
		       : n->format == F_DATE || n->format == F_DATETIME
			   ? CEL_S_TIMESTAMP
			   : CEL_S_STRING;
	if (n->types == T_INTEGER)
		return CEL_S_INT;
	if (n->types == T_NUMBER)
		return CEL_S_DOUBLE;
	if (n->types == T_BOOLEAN)
		return CEL_S_BOOL;
	if (n->types == T_ARRAY)
		return CEL_S_ARRAY;
	if (n->types == T_OBJECT) {
		if (n->addl == ADDL_SCHEMA)
			return CEL_S_MAP;
		return n->n_props || !n->preserve ? CEL_S_OBJECT : CEL_S_ANY;
	}
	return CEL_S_ANY;
}

static enum cel_ltype cel_list_type(const void *node)
{
	const struct node *n = node;
	return n->list_type == LIST_SET	  ? CEL_L_SET
	       : n->list_type == LIST_MAP ? CEL_L_MAP
					  : CEL_L_ATOMIC;
}

static const char *cel_map_key(const void *node, size_t i)
{
	const struct node *n = node;
	return n->list_type == LIST_MAP && i < n->n_map_keys ? n->map_keys[i]
							     : NULL;
}

static const struct cel_schema cel_ops = {
    cel_prop, cel_items, cel_addl, cel_type, cel_list_type, NULL, cel_map_key};

struct rctx {
	const struct srv_schema *s;
	struct srv_error *err;
	void (*warn)(void *ud, const char *text);
	void *ud;
	bool *unevaluated; /* per rule */
	char **rt_why;	   /* per rule: why evaluating it stopped short */
	bool stop;	   /* the cost limit was reached */
	uint64_t budget;   /* steps left for this object's rules */
	struct sb path;	   /* kube's field path of the value */
	struct sb text;	   /* scratch */
	bool no_ratchet;   /* an unchanged value's failures are errors */
};

/* The item of the map list old whose keys equal item's (kube's
   MakeMapList(...).Get), or NULL. */
static const json_t *map_list_old(const struct node *n, const json_t *item,
				  const json_t *old)
{
	if (n->list_type != LIST_MAP || !n->n_map_keys || !json_is_array(old) ||
	    !json_is_object(item))
		return NULL;
	for (size_t i = 0; i < json_array_size(old); i++) {
		const json_t *o = json_array_get(old, i);
		bool same = json_is_object(o);
		for (size_t k = 0; same && k < n->n_map_keys; k++) {
			const json_t *a = json_object_get(item, n->map_keys[k]);
			const json_t *b = json_object_get(o, n->map_keys[k]);
			same = (!a && !b) || (a && b && json_equal(a, b));
		}
		if (same)
			return o;
	}
	return NULL;
}

/* kube's CorrelatedObject.CachedDeepEqual (apiserver's cel/common), which
   decides what ratchets: v and old equal as ratcheting sees them, n being
   v's schema. Objects member by member, each member needing a schema (a
   property, or additionalProperties'), else they differ; a map list's
   items paired with the old ones by their keys, in any order; any other
   list (a set too), and scalars, as they are (Go's reflect.DeepEqual: 1
   and 1.0 differ). */
static bool corr_deep_equal(const struct node *n, const json_t *v,
			    const json_t *old, int depth)
{
	if (!v || !old)
		return !v && !old;
	if (json_is_array(v) != json_is_array(old) ||
	    json_is_object(v) != json_is_object(old))
		return false;
	if (depth > SRV_SCHEMA_MAX_DEPTH + 2)
		return json_equal(v, old);
	if (json_is_array(v)) {
		if (json_array_size(v) != json_array_size(old))
			return false;
		if (!n || n->list_type != LIST_MAP)
			return json_equal(v, old);
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *it = json_array_get(v, i);
			const json_t *o = map_list_old(n, it, old);
			if (!o || !n->items ||
			    !corr_deep_equal(n->items, it, o, depth + 1))
				return false;
		}
		return true;
	}
	if (json_is_object(v)) {
		if (json_object_size(v) != json_object_size(old))
			return false;
		const char *k;
		json_t *cv;
		json_object_foreach((json_t *)v, k, cv)
		{
			const json_t *ov = json_object_get(old, k);
			const struct node *p = member_node(n, k);
			if (!ov || !p || !corr_deep_equal(p, cv, ov, depth + 1))
				return false;
		}
		return true;
	}
	return json_equal(v, old);
}

bool srv_schema_corr_equal(const struct srv_schema_node *n, const json_t *v,
			   const json_t *old)
{
	return corr_deep_equal((const struct node *)n, v, old, 0);
}

/* One failed rule as kube's fieldErrorForReason words it: the cause, or
   with ratchet the warning kube gives instead (the error's text). */
static void rule_failed(struct rctx *x, const struct node *n,
			const struct rule *r, const char *body, bool ratchet)
{
	size_t pl = x->path.len;
	if (r->field_path) {
		if (x->path.len && r->field_path[0] != '[')
			sb_putc(&x->path, '.');
		sb_puts(&x->path, r->field_path);
	}
	const char *field = x->path.len ? sb_str(&x->path) : "<nil>";
	const char *reason = "FieldValueInvalid";
	struct sb *t = &x->text;
	sb_cut(t, 0);
	const char *type = n->type_name ? n->type_name : "";
	if (r->reason && strcmp(r->reason, "FieldValueRequired") == 0) {
		reason = r->reason;
		sb_printf(t, "Required value: %s", body);
	} else if (r->reason && strcmp(r->reason, "FieldValueForbidden") == 0) {
		reason = r->reason;
		sb_printf(t, "Forbidden: %s", body);
	} else if (r->reason && strcmp(r->reason, "FieldValueDuplicate") == 0) {
		reason = r->reason;
		sb_puts(t, "Duplicate value: ");
		go_quote(t, type);
	} else {
		sb_puts(t, "Invalid value: ");
		go_quote(t, type);
		sb_printf(t, ": %s", body);
	}
	if (!t->oom) {
		if (ratchet) {
			struct sb w = {0};
			sb_printf(&w, "%s: %s", field, sb_str(t));
			if (!w.oom)
				x->warn(x->ud, w.s);
			free(w.s);
		} else {
			srv_error_cause(x->err, reason, field, "%s", sb_str(t));
		}
	}
	sb_cut(&x->path, pl);
}

const char *srv_trim_space(const char *s, size_t n, size_t *len)
{
	static const char ws[] = " \t\n\r\v\f";
	while (n && memchr(ws, *s, sizeof ws - 1))
		s++, n--;
	while (n && memchr(ws, s[n - 1], sizeof ws - 1))
		n--;
	*len = n;
	return s;
}

/* Does r have a message that is not all spaces? */
static bool has_message(const struct rule *r)
{
	size_t n;
	return r->message &&
	       (srv_trim_space(r->message, strlen(r->message), &n), n);
}

/* Trimmed text of a rule's message, or of the rule (kube's
   ruleErrorString), into a new string; NULL on out of memory. */
static char *rule_error_string(const struct rule *r)
{
	const char *t = has_message(r) ? r->message : r->rule;
	size_t n;
	t = srv_trim_space(t, strlen(t), &n);
	return strndup(t, n);
}

/* kube's evalMessageExpression: r's messageExpression on v, trimmed, into
   b; false (b left empty) when there is none or kube would fall back to
   the message: an error, no string, an empty one, a line break, more than
   5 KiB. */
static bool message_expression(const struct rule *r, const struct node *n,
			       const json_t *v, const json_t *old, struct sb *b)
{
	if (!r->msg_prog)
		return false;
	char out[5 * 1024 + 64];
	size_t len;
	enum cel_result res =
	    cel_eval_string(r->msg_prog, &cel_ops, n, v,
			    r->uses_old ? old : NULL, out, sizeof out, &len);
	if (res != CEL_TRUE || len >= sizeof out || strlen(out) != len)
		return false;
	size_t tl;
	const char *t = srv_trim_space(out, len, &tl);
	if (!tl || tl > 5 * 1024 || memchr(t, '\n', tl))
		return false;
	sb_putn(b, t, tl);
	return true;
}

/* The nearest value that has an old one (kube's correlated object), and
   whether the two are equal, found when first asked. */
struct corr {
	const struct node *n; /* the value's schema (not an allOf's) */
	const json_t *v, *old;
	int eq; /* -1: not known yet */
};

static bool corr_equal(struct corr *c)
{
	if (!c)
		return false;
	if (c->eq < 0)
		c->eq = corr_deep_equal(c->n, c->v, c->old, 0);
	return c->eq;
}

/* kube's validateExpressions: the rules of node n on v (not null), old
   its correlated old value or NULL; when near (v's, or its nearest
   ancestor's, correlation) is equal, a failure of a rule without oldSelf
   is a warning (kube's shouldRatchetError). */
static void rules_eval(struct rctx *x, const struct node *n, const json_t *v,
		       const json_t *old, struct corr *near)
{
	for (size_t i = n->rule0; i < n->rule0 + n->n_rules && !x->stop; i++) {
		const struct rule *r = &x->s->rules[i];
		if (!r->prog) {
			if (r->why)
				x->unevaluated[i] = true;
			continue;
		}
		if (r->uses_old && !old && !r->opt_old)
			continue;
		char msg[512];
		enum cel_result res = cel_eval_budget(
		    r->prog, &cel_ops, n, v, r->uses_old ? old : NULL,
		    &x->budget, msg, sizeof msg);
		if (res == CEL_TRUE)
			continue;
		if (res == CEL_UNSUPPORTED) {
			x->unevaluated[i] = true;
			if (!x->rt_why[i] && msg[0])
				x->rt_why[i] = strdup(msg);
			continue;
		}
		char *es = rule_error_string(r);
		if (!es) {
			x->text.oom = true;
			return;
		}
		if (res == CEL_FALSE) {
			struct sb b = {0};
			if (!message_expression(r, n, v, old, &b))
				sb_printf(
				    &b, "%s%s",
				    has_message(r) ? "" : "failed rule: ", es);
			if (!b.oom)
				rule_failed(x, n, r, b.s,
					    !r->uses_old && !x->no_ratchet &&
						corr_equal(near));
			x->text.oom |= b.oom;
			free(b.s);
			free(es);
			continue;
		}
		/* a runtime error, in kube's words; the two limits end the
		   object's rules */
		struct sb *t = &x->text;
		sb_cut(t, 0);
		sb_puts(t, "Invalid value: ");
		go_quote(t, n->type_name ? n->type_name : "");
		if (strcmp(msg, CEL_BUDGET_MSG) == 0) {
			sb_printf(t, ": %s", msg);
			x->stop = true;
		} else if (strncmp(msg, "no such overload", 16) == 0) {
			sb_printf(t,
				  ": '%s': call arguments did not match a "
				  "supported operator, function or macro "
				  "signature for rule: %s",
				  msg, es);
		} else if (strncmp(msg, CEL_COST_MSG,
				   sizeof CEL_COST_MSG - 1) == 0) {
			sb_printf(
			    t,
			    ": '%s': no further validation rules will be run "
			    "due to call cost exceeds limit for rule: %s",
			    msg, es);
			x->stop = true;
		} else {
			sb_printf(t, ": %s evaluating rule: %s", msg, es);
		}
		srv_error_cause(x->err, "FieldValueInvalid",
				x->path.len ? sb_str(&x->path) : "<nil>", "%s",
				sb_str(t));
		free(es);
	}
}

/* kube's Validator.validate: the rules of n on v, then allOf's, then
   the values inside, in the object's order. near: the nearest ancestor
   with an old value, or NULL; main: v's own schema, which n is unless n
   is one of its allOf's (kube correlates values through the main schema
   alone), and own: v's correlation when an allOf's walk shares it. */
static void rules_walk(struct rctx *x, const struct node *n,
		       const struct node *main, const json_t *v,
		       const json_t *old, struct corr *near, struct corr *own,
		       int depth)
{
	if (!n || !n->rules_below || !v || json_is_null(v) || x->stop ||
	    depth > SRV_SCHEMA_MAX_DEPTH + 2)
		return;
	struct corr here = {main, v, old, -1};
	struct corr *mine = own ? own : old ? &here : near;
	rules_eval(x, n, v, old, mine);
	for (size_t i = 0; i < n->n_all_of; i++)
		rules_walk(x, n->all_of[i], main, v, old, near,
			   old ? mine : NULL, depth + 1);
	size_t pl = x->path.len;
	if (json_is_array(v) && n->items) {
		const struct node *mi = main ? main->items : NULL;
		for (size_t i = 0; i < json_array_size(v) && !x->stop; i++) {
			const json_t *it = json_array_get(v, i);
			path_index(&x->path, i);
			rules_walk(x, n->items, mi, it,
				   map_list_old(n, it, old), mine, NULL,
				   depth + 1);
			sb_cut(&x->path, pl);
		}
	} else if (json_is_object(v)) {
		const char *k;
		json_t *cv;
		json_object_foreach((json_t *)v, k, cv)
		{
			const json_t *ov = json_is_object(old)
					       ? json_object_get(old, k)
					       : NULL;
			const struct node *p = find_prop(n, k);
			if (n->addl != ADDL_SCHEMA && !p)
				continue;
			const struct node *mp = member_node(main, k);
			/* kube's fldPath.Key(k) for a map's values: "[k]" */
			if (n->addl == ADDL_SCHEMA) {
				sb_printf(&x->path, "[%s]", k);
				rules_walk(x, n->addl_schema, mp, cv, ov, mine,
					   NULL, depth + 1);
				sb_cut(&x->path, pl);
			}
			if (p) {
				/* the object's own apiVersion and kind never
				   ratchet: both sides are converted to the
				   request's (kube's ratchetingOptions.key) */
				static struct corr never = {.eq = 0};
				bool tm = depth == 0 && !near &&
					  (!strcmp(k, "apiVersion") ||
					   !strcmp(k, "kind"));
				path_key(&x->path, k);
				rules_walk(x, p, mp, cv, ov, mine,
					   tm && ov ? &never : NULL, depth + 1);
				sb_cut(&x->path, pl);
			}
			if (x->stop)
				break;
		}
	}
}

/* kube's hasBlockingErr: these schema errors keep the rules from running */
static bool blocking_cause(const struct srv_error *err)
{
	static const char *const blocking[] = {
	    "FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong",
	    "FieldValueTooMany", "FieldValueTypeInvalid"};
	for (int i = 0; i < err->n_causes; i++)
		for (size_t k = 0; k < sizeof blocking / sizeof *blocking; k++)
			if (strcmp(srv_cause_get(err, i).reason, blocking[k]) ==
			    0)
				return true;
	return false;
}

static lp_err check_rules(const struct srv_schema *s, const json_t *obj,
			  const json_t *old, bool ratchet,
			  struct srv_error *err,
			  void (*warn)(void *ud, const char *text), void *ud)
{
	if (!s || !s->n_rules)
		return LP_OK;
	struct rctx x = {.s = s,
			 .err = err,
			 .warn = warn,
			 .ud = ud,
			 .no_ratchet = !ratchet,
			 .budget =
			     10000000}; /* celconfig.RuntimeCELCostBudget */
	x.unevaluated = calloc(s->n_rules, sizeof *x.unevaluated);
	x.rt_why = calloc(s->n_rules, sizeof *x.rt_why);
	if (!x.unevaluated || !x.rt_why) {
		free(x.unevaluated);
		free(x.rt_why);
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	}
	if (blocking_cause(err)) {
		srv_error_cause(
		    err, "FieldValueInvalid", "<nil>",
		    "Invalid value: \"null\": some validation rules were not "
		    "checked because the object was invalid; correct the "
		    "existing errors to complete validation");
	} else {
		locale_t lo = locale_enter();
		rules_walk(&x, s->root, s->root, obj, old, NULL, NULL, 0);
		locale_leave(lo);
	}
	bool oom = x.path.oom || x.text.oom;
	for (size_t i = 0; i < s->n_rules && !oom; i++) {
		const struct rule *r = &s->rules[i];
		if (!x.unevaluated[i])
			continue;
		sb_cut(&x.text, 0);
		sb_printf(&x.text,
			  "%s%sx-kubernetes-validations rule was not evaluated "
			  "(%s): %s",
			  r->path, r->path[0] ? ": " : "",
			  r->why	? r->why
			  : x.rt_why[i] ? x.rt_why[i]
					: "",
			  r->rule);
		/* a rule written over several lines: one line, as a
		   Warning's text has no control characters */
		for (size_t j = 0; !x.text.oom && j < x.text.len; j++)
			if ((unsigned char)x.text.s[j] < 0x20)
				x.text.s[j] = ' ';
		if (!x.text.oom)
			warn(ud, sb_str(&x.text));
		oom = x.text.oom;
	}
	free(x.unevaluated);
	for (size_t i = 0; x.rt_why && i < s->n_rules; i++)
		free(x.rt_why[i]);
	free(x.rt_why);
	free(x.path.s);
	free(x.text.s);
	return oom ? srv_error_set(err, LP_E_NOMEM, "out of memory") : LP_OK;
}

lp_err srv_schema_check_rules(const struct srv_schema *s, const json_t *obj,
			      const json_t *old, struct srv_error *err,
			      void (*warn)(void *ud, const char *text),
			      void *ud)
{
	return check_rules(s, obj, old, true, err, warn, ud);
}

static void drop_warning(void *ud, const char *text)
{
	(void)ud;
	(void)text;
}

lp_err srv_schema_check_default_rules(const struct srv_schema *s,
				      const json_t *def, struct srv_error *err)
{
	int before = err->n_causes;
	lp_err rc = check_rules(s, def, def, false, err, drop_warning, NULL);
	if (rc || err->n_causes > before)
		return rc;
	return check_rules(s, def, NULL, false, err, drop_warning, NULL);
}

size_t srv_schema_warning_count(const struct srv_schema *s)
{
	return s ? s->n_warnings : 0;
}

const char *srv_schema_warning(const struct srv_schema *s, size_t i)
{
	return s && i < s->n_warnings ? s->warnings[i] : NULL;
}

/* ------------------------------------------------------------------------ */
/* Lookups and comparisons.                                                  */

static const struct node *find_prop(const struct node *n, const char *k)
{
	size_t lo = 0, hi = n->n_props;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(k, n->props[mid].name);
		if (d == 0)
			return n->props[mid].n;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* The walking API of schema.h: struct srv_schema_node is struct node. */
const struct srv_schema_node *srv_schema_root(const struct srv_schema *s)
{
	return s ? (const struct srv_schema_node *)s->root : NULL;
}

const struct srv_schema_node *
srv_schema_prop(const struct srv_schema_node *sn, const char *name)
{
	return (const struct srv_schema_node *)member_node(
	    (const struct node *)sn, name);
}

const json_t *srv_schema_old_item(const struct srv_schema_node *sn,
				  const json_t *item, const json_t *old)
{
	const struct node *n = (const struct node *)sn;
	if (!n || !item || !json_is_array(old))
		return NULL;
	return map_list_old(n, item, old);
}

bool srv_schema_declares(const struct srv_schema_node *sn, const char *name)
{
	const struct node *n = (const struct node *)sn;
	return n && find_prop(n, name);
}

bool srv_schema_preserves(const struct srv_schema_node *sn)
{
	const struct node *n = (const struct node *)sn;
	return n && n->preserve;
}

const struct srv_schema_node *
srv_schema_items(const struct srv_schema_node *sn)
{
	const struct node *n = (const struct node *)sn;
	return n ? (const struct srv_schema_node *)n->items : NULL;
}

const json_t *srv_schema_default_of(const struct srv_schema_node *sn)
{
	const struct node *n = (const struct node *)sn;
	return n ? n->dflt : NULL;
}

enum srv_smd srv_schema_smd(const struct srv_schema_node *sn, bool *open,
			    bool *embedded)
{
	const struct node *n = (const struct node *)sn;
	*open = false;
	*embedded = n && n->embedded;
	if (!n)
		return SRV_SMD_ANY;
	if (n->int_or_string)
		return SRV_SMD_UNTYPED;
	if (n->embedded) {
		/* the builder declares apiVersion, kind and metadata there */
		*open = n->preserve || n->addl == ADDL_TRUE;
		return SRV_SMD_MAP;
	}
	switch (n->types) {
	case T_OBJECT:
		*open = n->preserve || n->addl == ADDL_TRUE;
		/* an object declaring nothing is schemaconv's untyped value */
		if (!n->n_props && n->addl != ADDL_SCHEMA)
			return SRV_SMD_ANY;
		return SRV_SMD_MAP;
	case T_ARRAY:
		return SRV_SMD_LIST;
	case T_STRING:
		return SRV_SMD_STRING;
	case T_INTEGER:
	case T_NUMBER:
		return SRV_SMD_NUMERIC;
	case T_BOOLEAN:
		return SRV_SMD_BOOL;
	default:
		return SRV_SMD_ANY;
	}
}

bool srv_schema_map_atomic(const struct srv_schema_node *sn)
{
	const struct node *n = (const struct node *)sn;
	return n && n->map_atomic;
}

enum srv_schema_list srv_schema_list_kind(const struct srv_schema_node *sn,
					  const char *const **keys,
					  size_t *n_keys)
{
	const struct node *n = (const struct node *)sn;
	*keys = NULL;
	*n_keys = 0;
	if (!n)
		return SRV_SLIST_ATOMIC;
	if (n->list_type == LIST_SET)
		return SRV_SLIST_SET;
	if (n->list_type == LIST_MAP && n->n_map_keys) {
		*keys = (const char *const *)n->map_keys;
		*n_keys = n->n_map_keys;
		return SRV_SLIST_MAP;
	}
	return SRV_SLIST_ATOMIC;
}

bool srv_json_value_eq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_object(a)) {
		if (json_object_size(a) != json_object_size(b))
			return false;
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)a, k, v) {
			const json_t *w = json_object_get(b, k);
			if (!w || !srv_json_value_eq(v, w))
				return false;
		}
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!srv_json_value_eq(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	return json_equal(a, b);
}

static bool has_default(const struct node *n)
{
	return n && n->dflt;
}

/* ------------------------------------------------------------------------ */
/* Formats.                                                                  */

/* Go regexp's \s: ASCII space, \t, \n, \f and \r (not \v). */
static bool go_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (reg_hex_digit(s[i]) < 0)
			return false;
	return true;
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int num2(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* YYYY-MM-DD; returns the length consumed (10) or 0. */
static size_t parse_date(const char *s)
{
	if (strlen(s) < 10 || !digits(s, 4) || s[4] != '-' ||
	    !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
		return 0;
	int y = num2(s) * 100 + num2(s + 2), m = num2(s + 5), d = num2(s + 8);
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (m == 2 && d == 29 && !leap)
		return 0;
	return 10;
}

/* kube-openapi's strfmt.IsDateTime: lowercased and split at "t", the first
   piece a date, the second (a third is ignored) matching
   ^HH:MM:SS(.[0-9]+)?(z|[+-]HH:MM)$ (the "." any character) with hours
   at most 23 and minutes and seconds at most 59; the zone is required. */
static bool dt_zone(const char *z, const char *end)
{
	if (end - z == 1)
		return *z == 'z' || *z == 'Z';
	return end - z == 6 && (*z == '+' || *z == '-') && digits(z + 1, 2) &&
	       z[3] == ':' && digits(z + 4, 2);
}

static bool is_datetime(const char *s)
{
	if (strlen(s) < 4)
		return false;
	const char *t = strpbrk(s, "tT");
	if (!t || t - s != 10 || parse_date(s) != 10)
		return false;
	const char *p = t + 1, *end = strpbrk(p, "tT");
	if (!end)
		end = p + strlen(p);
	if (end - p < 9 || !digits(p, 2) || p[2] != ':' || !digits(p + 3, 2) ||
	    p[5] != ':' || !digits(p + 6, 2))
		return false;
	if (num2(p) > 23 || num2(p + 3) > 59 || num2(p + 6) > 59)
		return false;
	p += 8;
	if (dt_zone(p, end))
		return true;
	/* (.[0-9]+): any one character, then digits, then the zone */
	const char *d = p + 1;
	while (d < end && isdigit((unsigned char)*d))
		d++;
	return d > p + 1 && dt_zone(d, end);
}

/* kube-openapi's UUID patterns: five groups of hex digits, in either
   case, each dash between them optional; uuid3/4/5 name the version
   digit, and uuid4/5 the variant (8, 9, a or b). */
static bool is_uuid(const char *s, char version)
{
	static const size_t groups[] = {8, 4, 4, 4, 12};
	for (int i = 0; i < 5; i++) {
		if (i && *s == '-')
			s++;
		if (strlen(s) < groups[i] || !all_hex(s, groups[i]))
			return false;
		if (i == 2 && version && s[0] != version)
			return false;
		if (i == 3 && (version == '4' || version == '5') &&
		    !strchr("89abAB", s[0]))
			return false;
		s += groups[i];
	}
	return !*s;
}

static bool is_base64(const char *s)
{
	/* govalidator.IsBase64's pattern needs one group of four at least */
	size_t n = strlen(s), pad = 0;
	if (n == 0 || n % 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad || !(isalnum((unsigned char)c) || c == '+' || c == '/'))
			return false;
	}
	return pad <= 2;
}

/* kube-openapi's isIPv4: ParseIPSloppy (leading zeros allowed) takes
   it, and it has a dot (an IPv4-mapped IPv6 address counts). */
static bool is_ipv4(const char *s)
{
	struct srv_ip ip;
	return strchr(s, '.') && srv_ip_parse(s, &ip);
}

static bool is_ipv6(const char *s)
{
	struct in6_addr a;
	return strchr(s, ':') && inet_pton(AF_INET6, s, &a) == 1;
}

/* kube-openapi's isCIDR: ParseCIDRSloppy. */
static bool is_cidr(const char *s)
{
	struct srv_ip ip;
	int bits;
	return srv_cidr_parse(s, &ip, &bits);
}

/* Outside ASCII, what kube-openapi's hostname pattern takes as a letter
   or symbol (\p{L}, \p{S}); letter false asks for a letter only (a
   top-level domain). Without Unicode's tables this knows the ranges of
   spaces, controls, format characters and punctuation that are neither,
   and the symbol blocks; the rest counts as letters. Invalid UTF-8 is
   U+FFFD, a symbol, as Go reads it. */
static bool hn_wide(uint32_t c, bool symbol_ok)
{
	if (c < 0xa0 || c == 0xa0 || c == 0xad || c == 0xa1 || c == 0xa7 ||
	    c == 0xab || c == 0xb6 || c == 0xb7 || c == 0xbb || c == 0xbf ||
	    (c >= 0x2000 && c <= 0x206f) || (c >= 0x2e00 && c <= 0x2e7f) ||
	    (c >= 0x3000 && c <= 0x3003) || (c >= 0x3008 && c <= 0x3011) ||
	    (c >= 0x3014 && c <= 0x301f) || (c >= 0xfe10 && c <= 0xfe1f) ||
	    (c >= 0xfe30 && c <= 0xfe4f) || c == 0xfefd || c == 0xfefe ||
	    c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb))
		return false;
	bool symbol = (c >= 0xa2 && c <= 0xa6) || c == 0xa8 || c == 0xa9 ||
		      c == 0xac || (c >= 0xae && c <= 0xb1) || c == 0xb4 ||
		      c == 0xb8 || c == 0xd7 || c == 0xf7 ||
		      (c >= 0x2100 && c <= 0x2bff) ||
		      (c >= 0x1f000 && c <= 0x1faff) || c == 0xfffd;
	return symbol_ok || !symbol;
}

/* A character of a label: [a-zA-Z0-9\p{S}\p{L}]. */
static bool hn_label_char(uint32_t c)
{
	if (c < 0x80)
		return isalnum((int)c) || (c && strchr("$+<=>^`|~", (int)c));
	return hn_wide(c, true);
}

/* A character of a top-level domain: [a-zA-Z\p{L}]. */
static bool hn_tld_char(uint32_t c)
{
	return c < 0x80 ? isalpha((int)c) != 0 : hn_wide(c, false);
}

/* kube-openapi's IsHostname: one label (a character, an optional '-',
   then up to 62 more), or labels each ending in '.' (1-63 characters, a
   '-' only inside) and a top-level domain of 2-63 letters; then at most
   255 bytes, and 63 bytes between dots. */
static bool is_hostname(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 255)
		return false;
	uint32_t cp[256];
	size_t ncp = 0;
	for (size_t i = 0; i < n;) {
		size_t w = reg_utf8_seq((const unsigned char *)s + i, n - i);
		if (w)
			reg_utf8_decode((const unsigned char *)s + i, n - i,
					&cp[ncp]);
		else
			cp[ncp] = 0xfffd, w = 1;
		ncp++;
		i += w;
	}
	/* byte lengths between dots */
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		if ((size_t)((dot ? dot : s + n) - p) > 63)
			return false;
		if (!dot)
			break;
		p = dot + 1;
	}
	bool has_dot = memchr(s, '.', n) != NULL;
	if (!has_dot) {
		if (!hn_label_char(cp[0]))
			return false;
		size_t i = 1;
		if (i < ncp && cp[i] == '-')
			i++;
		if (ncp - i > 62)
			return false;
		for (; i < ncp; i++)
			if (!hn_label_char(cp[i]))
				return false;
		return true;
	}
	/* the top-level domain: after the last dot */
	size_t t = ncp;
	while (t > 0 && cp[t - 1] != '.')
		t--;
	if (ncp - t < 2 || ncp - t > 63)
		return false;
	for (size_t i = t; i < ncp; i++)
		if (!hn_tld_char(cp[i]))
			return false;
	/* the labels before it, each ending in its dot */
	for (size_t i = 0; i < t;) {
		size_t j = i;
		while (cp[j] != '.')
			j++;
		size_t len = j - i;
		if (len == 0 || len > 63 || !hn_label_char(cp[i]) ||
		    !hn_label_char(cp[j - 1]))
			return false;
		for (size_t k = i + 1; k + 1 < j; k++)
			if (cp[k] != '-' && !hn_label_char(cp[k]))
				return false;
		i = j + 1;
	}
	return true;
}

/* kube-openapi's IsEmail is Go's net/mail.ParseAddress: one address,
   "local@domain" or "phrase <local@domain>" (or a group of one), with
   spaces, tabs and (comments) around. The parser below follows its
   grammar; encoded words (RFC 2047) in a phrase are taken as plain
   atoms. */
struct mailp {
	const char *s;
};

/* The next character's width, its code point in *r; 0 at the end, and
   an invalid sequence is width 1 with r U+FFFD. */
static size_t mail_rune(const char *s, uint32_t *r)
{
	if (!*s)
		return 0;
	/* a sequence is at most 4 bytes: no strlen per character */
	return reg_utf8_decode((const unsigned char *)s, strnlen(s, 4), r);
}

static bool mail_bad_utf8(const char *s)
{
	return (unsigned char)*s >= 0x80 &&
	       !reg_utf8_seq((const unsigned char *)s, strnlen(s, 4));
}

static bool mail_vchar(uint32_t r)
{
	return (r >= '!' && r <= '~') || r >= 0x80;
}

/* Go's isAtext: a phrase's atoms (permissive) also take the specials
   ()[];@\, but never <>": */
static bool mail_atext(uint32_t r, bool permissive)
{
	if (r == '.')
		return true;
	if (r < 0x80 && strchr("()[];@\\,", (int)r))
		return permissive;
	if (r < 0x80 && strchr("<>\":", (int)r))
		return false;
	return mail_vchar(r);
}

static void mail_skip_space(struct mailp *p)
{
	while (*p->s == ' ' || *p->s == '\t')
		p->s++;
}

/* After '(': a comment to its matching ')'; false when unclosed. */
static bool mail_comment(struct mailp *p)
{
	int depth = 1;
	while (*p->s && depth) {
		if (*p->s == '\\' && p->s[1])
			p->s++;
		else if (*p->s == '(')
			depth++;
		else if (*p->s == ')')
			depth--;
		p->s++;
	}
	return depth == 0;
}

static bool mail_skip_cfws(struct mailp *p)
{
	mail_skip_space(p);
	while (*p->s == '(') {
		p->s++;
		if (!mail_comment(p))
			return false;
		mail_skip_space(p);
	}
	return true;
}

/* An atom (dot: dots allowed; strict: no leading, trailing or double
   dot); its length, 0 on failure. */
static size_t mail_atom(struct mailp *p, bool strict)
{
	const char *b = p->s;
	uint32_t r;
	size_t w;
	while ((w = mail_rune(p->s, &r))) {
		if (mail_bad_utf8(p->s)) {
			p->s = b;
			return 0;
		}
		if (!mail_atext(r, !strict))
			break;
		p->s += w;
	}
	size_t n = (size_t)(p->s - b);
	if (!n || (strict &&
		   (b[0] == '.' || b[n - 1] == '.' || memmem(b, n, "..", 2)))) {
		p->s = b;
		return 0;
	}
	return n;
}

/* A quoted string at '"'; its content's length in *n; false when bad. */
static bool mail_quoted(struct mailp *p, size_t *n)
{
	const char *q = p->s + 1;
	bool esc = false;
	*n = 0;
	for (;;) {
		uint32_t r;
		size_t w = mail_rune(q, &r);
		if (!w || mail_bad_utf8(q))
			return false;
		if (esc) {
			if (!mail_vchar(r) && r != ' ' && r != '\t')
				return false;
			esc = false;
			++*n;
		} else if (r == '"') {
			break;
		} else if (r == '\\') {
			esc = true;
		} else if (mail_vchar(r) || r == ' ' || r == '\t') {
			++*n;
		} else {
			return false;
		}
		q += w;
	}
	p->s = q + 1;
	return true;
}

/* local@domain; on failure p is left where it was. */
static bool mail_addr_spec(struct mailp *p)
{
	struct mailp orig = *p;
	size_t n;
	mail_skip_space(p);
	if (*p->s == '"' ? !mail_quoted(p, &n) || !n : !mail_atom(p, true))
		goto bad;
	if (*p->s != '@')
		goto bad;
	p->s++;
	mail_skip_space(p);
	if (!*p->s)
		goto bad;
	if (*p->s == '[') {
		/* a domain literal: an IP address */
		const char *b = ++p->s;
		while (*p->s && *p->s != ']') {
			uint32_t r;
			size_t w = mail_rune(p->s, &r);
			if (mail_bad_utf8(p->s) || !mail_vchar(r) || r == '[' ||
			    r == '\\')
				goto bad;
			p->s += w;
		}
		char ip[64];
		struct srv_ip a;
		size_t len = (size_t)(p->s - b);
		if (*p->s != ']' || len >= sizeof ip)
			goto bad;
		memcpy(ip, b, len);
		ip[len] = 0;
		/* Go's net.ParseIP: strict, no leading zeros */
		if (!srv_ip_parse(ip, &a) || !a.strict)
			goto bad;
		p->s++;
	} else if (!mail_atom(p, true)) {
		goto bad;
	}
	return true;
bad:
	*p = orig;
	return false;
}

/* A phrase of words (atoms, dots allowed, or quoted strings); false with
   no word. */
static bool mail_phrase(struct mailp *p)
{
	int words = 0;
	for (;;) {
		if (words && !mail_skip_cfws(p))
			return false;
		mail_skip_space(p);
		if (!*p->s)
			break;
		size_t n;
		if (*p->s == '"' ? !mail_quoted(p, &n) : !mail_atom(p, false))
			break;
		words++;
	}
	return words > 0;
}

/* Go's parseAddress: the number of addresses read (a group may hold
   none or several), -1 on failure. */
static int mail_address(struct mailp *p, bool group)
{
	mail_skip_space(p);
	if (!*p->s)
		return -1;
	if (mail_addr_spec(p)) {
		mail_skip_space(p);
		if (*p->s == '(') {
			p->s++;
			if (!mail_comment(p))
				return -1;
		}
		return 1;
	}
	if (*p->s != '<' && !mail_phrase(p))
		return -1;
	mail_skip_space(p);
	if (group && *p->s == ':') {
		p->s++;
		int n = 0;
		mail_skip_space(p);
		if (*p->s == ';') {
			p->s++;
			return mail_skip_cfws(p) ? 0 : -1;
		}
		for (;;) {
			mail_skip_space(p);
			int k = mail_address(p, false);
			if (k < 0 || !mail_skip_cfws(p))
				return -1;
			n += k;
			if (*p->s == ';') {
				p->s++;
				return mail_skip_cfws(p) ? n : -1;
			}
			if (*p->s != ',')
				return -1;
			p->s++;
		}
	}
	if (*p->s != '<')
		return -1;
	p->s++;
	if (!mail_addr_spec(p) || *p->s != '>')
		return -1;
	p->s++;
	return 1;
}

static bool is_email(const char *s)
{
	struct mailp p = {s};
	return mail_address(&p, true) == 1 && mail_skip_cfws(&p) && !*p.s;
}

/* Valid %XX escapes in [p, e); in a host (Go's encodeHost) an escape
   must be of a byte from 0x80 up, or %25, and an ASCII byte must be one
   Go leaves unescaped there. */
static bool uri_escapes(const char *p, const char *e, bool host)
{
	for (; p < e; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '%') {
			if (e - p < 3 || reg_hex_digit(p[1]) < 0 ||
			    reg_hex_digit(p[2]) < 0)
				return false;
			if (host && reg_hex_digit(p[1]) < 8 &&
			    strncmp(p, "%25", 3))
				return false;
			p += 2;
		} else if (host && c < 0x80 && !isalnum(c) &&
			   !strchr("-_.~!$&'()*+,;=:[]<>\"", c)) {
			return false;
		}
	}
	return true;
}

/* Go's validUserinfo: ASCII letters, digits and -._:~!$&'()*+,;=%@. */
static bool uri_userinfo(const char *p, const char *e)
{
	for (; p < e; p++)
		if (!isalnum((unsigned char)*p) &&
		    !strchr("-._:~!$&'()*+,;=%@", *p))
			return false;
	return true;
}

/* Go's url.ParseRequestURI, which kube-openapi's uri format uses: "*",
   or text without control bytes: a scheme (then anything opaque, unless a
   '/' follows) or an absolute path; the query after '?' unchecked; an
   authority after "scheme://" with a valid userinfo, host characters and
   escapes, and a numeric port; valid escapes in the path. */
static bool is_uri(const char *s)
{
	if (!strcmp(s, "*"))
		return true;
	if (!*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	const char *rest = s;
	if (*s == ':')
		return false; /* missing protocol scheme */
	bool scheme = false;
	if (isalpha((unsigned char)*s)) {
		const char *p = s + 1;
		while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' ||
		       *p == '.')
			p++;
		if (*p == ':') {
			rest = p + 1;
			scheme = true;
		}
	}
	const char *end = rest + strcspn(rest, "?"); /* the query is not
							checked */
	if (*rest != '/')
		return scheme; /* opaque after a scheme; else not for a
				  request */
	const char *path = rest;
	if (scheme && rest[1] == '/') {
		/* an authority: [userinfo@]host[:port] */
		const char *a = rest + 2, *ae = a + strcspn(a, "/?");
		const char *at = NULL;
		for (const char *p = a; p < ae; p++)
			if (*p == '@')
				at = p;
		if (at && !(uri_userinfo(a, at) && uri_escapes(a, at, false)))
			return false;
		const char *h = at ? at + 1 : a, *he = ae;
		if (*h == '[') {
			/* Go takes the last ']' */
			const char *rb = NULL;
			for (const char *p = h; p < ae; p++)
				if (*p == ']')
					rb = p;
			if (!rb)
				return false;
			if (rb + 1 < ae) {
				if (rb[1] != ':')
					return false;
				he = rb + 1;
			}
		} else {
			for (const char *p = h; p < ae; p++)
				if (*p == ':')
					he = p;
		}
		for (const char *p = he < ae ? he + 1 : ae; p < ae; p++)
			if (!isdigit((unsigned char)*p))
				return false;
		if (!uri_escapes(h, he, true))
			return false;
		path = ae;
	}
	return uri_escapes(path, end, false);
}

/* Go's net.ParseMAC: 6, 8 or 20 octets as pairs of hex digits split by
   ':' or '-', or as groups of four split by '.'. */
static bool is_mac(const char *s)
{
	size_t n = strlen(s);
	if (n == 14 || n == 19 || n == 49) {
		for (size_t i = 0; i < n; i++)
			if (i % 5 == 4 ? s[i] != '.' : reg_hex_digit(s[i]) < 0)
				return false;
		return true;
	}
	if (n != 17 && n != 23 && n != 59)
		return false;
	char sep = s[2];
	if (sep != ':' && sep != '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (i % 3 == 2) {
			if (s[i] != sep)
				return false;
		} else if (reg_hex_digit(s[i]) < 0) {
			return false;
		}
	}
	return true;
}

static bool is_hexcolor(const char *s)
{
	size_t n = strlen(s);
	/* ^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$ */
	if (s[0] == '#') {
		s++;
		n--;
	}
	return (n == 3 || n == 6) && all_hex(s, n);
}

/* Go's time.ParseDuration: [-+]? then one or more decimal numbers, each
   with a unit (ns, us, µs, μs, ms, s, m, h); "0" alone. */
static bool go_duration(const char *s)
{
	const uint64_t lim = (uint64_t)1 << 63;
	bool neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	if (!strcmp(s, "0"))
		return true;
	if (!*s)
		return false;
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {{"ns", 1},		  {"us", 1000},
		     {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000},
		     {"ms", 1000000},	  {"s", 1000000000},
		     {"m", 60000000000},  {"h", 3600000000000}};
	uint64_t d = 0;
	while (*s) {
		/* Go's leadingInt and leadingFraction: the integer part must
		   fit; fraction digits past what fits are dropped */
		bool digits = false;
		uint64_t v = 0, f = 0;
		double scale = 1;
		while (*s >= '0' && *s <= '9') {
			if (v > lim / 10)
				return false;
			v = v * 10 + (uint64_t)(*s++ - '0');
			if (v > lim)
				return false;
			digits = true;
		}
		if (*s == '.') {
			bool over = false;
			s++;
			while (*s >= '0' && *s <= '9') {
				uint64_t c = (uint64_t)(*s++ - '0');
				digits = true;
				if (over || f > (lim - 1) / 10 ||
				    f * 10 + c > lim) {
					over = true;
					continue;
				}
				f = f * 10 + c;
				scale *= 10;
			}
		}
		if (!digits)
			return false;
		size_t best = 0;
		uint64_t unit = 0;
		for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
			size_t ul = strlen(units[i].name);
			if (!strncmp(s, units[i].name, ul) && ul > best &&
			    !(s[ul] && s[ul] != '.' &&
			      !(s[ul] >= '0' && s[ul] <= '9'))) {
				best = ul;
				unit = units[i].ns;
			}
		}
		if (!best)
			return false;
		s += best;
		if (v > lim / unit)
			return false;
		v *= unit;
		if (f > 0) {
			v += (uint64_t)((double)f * ((double)unit / scale));
			if (v > lim)
				return false;
		}
		d += v;
		if (d > lim)
			return false;
	}
	return neg || d <= lim - 1;
}

bool srv_strfmt_duration_units(const char *s, int64_t *ns, char *err,
			       size_t err_n)
{
	static const uint64_t mult[] = {1ULL,
					1000ULL,
					1000000ULL,
					1000000000ULL,
					60000000000ULL,
					3600000000000ULL,
					86400000000000ULL,
					604800000000000ULL};
	static const char *const groups[][4] = {
	    {"ns", "nano", NULL},	  {"us", "\xc2\xb5s", "micro", NULL},
	    {"ms", "milli", NULL},	  {"s", "sec", NULL},
	    {"m", "min", NULL},		  {"h", "hr", "hour", NULL},
	    {"d", "day", NULL},		  {"w", "wk", "week", NULL}};
	bool ok = false;
	uint64_t sum = 0; /* Go's time.Duration arithmetic wraps */
	for (const char *p = s; *p;) {
		if (!(*p >= '0' && *p <= '9')) {
			p++;
			continue;
		}
		const char *digits = p;
		/* strconv.Atoi of the count: past int64 fails the whole
		   value, when a unit follows */
		uint64_t count = 0;
		bool big = false;
		while (*p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p++ - '0');
			if (count > ((uint64_t)INT64_MAX - d) / 10)
				big = true;
			else
				count = count * 10 + d;
		}
		while (go_space(*p))
			p++;
		char unit[64];
		size_t ul = 0;
		while (ul < sizeof unit - 2 &&
		       (isalpha((unsigned char)*p) ||
			((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] == 0xb5))) {
			if ((unsigned char)*p == 0xc2) {
				unit[ul++] = *p++;
				unit[ul++] = *p++;
			} else {
				unit[ul++] = (char)tolower((unsigned char)*p++);
			}
		}
		unit[ul] = '\0';
		if (!ul)
			continue;
		if (big) {
			int dl = 0;
			while (digits[dl] >= '0' && digits[dl] <= '9')
				dl++;
			snprintf(err, err_n,
				 "strconv.Atoi: parsing \"%.*s\": value out of "
				 "range",
				 dl, digits);
			return false;
		}
		for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
			size_t last = 0;
			while (groups[g][last + 1])
				last++;
			for (size_t i = 0; groups[g][i]; i++)
				if (!strcasecmp(groups[g][i], unit) ||
				    (i == last &&
				     !strncmp(unit, groups[g][i],
					      strlen(groups[g][i])))) {
					ok = true;
					sum += count * mult[g];
				}
		}
	}
	if (!ok) {
		snprintf(err, err_n, "unable to parse %s as duration", s);
		return false;
	}
	*ns = (int64_t)sum;
	return true;
}

/* kube-openapi's strfmt.IsDuration: Go's ParseDuration, else the units
   srv_strfmt_duration_units reads. */
static bool is_duration(const char *s)
{
	int64_t ns;
	char err[8];
	return go_duration(s) ||
	       srv_strfmt_duration_units(s, &ns, err, sizeof err);
}

/* govalidator's IsSSN: ^\d{3}[- ]?\d{2}[- ]?\d{4}$, and 11 bytes long,
   so both separators are there. */
static bool is_ssn(const char *s)
{
	if (strlen(s) != 11)
		return false;
	int groups[] = {3, 2, 4};
	for (int g = 0; g < 3; g++) {
		for (int i = 0; i < groups[g]; i++, s++)
			if (!(*s >= '0' && *s <= '9'))
				return false;
		if (g < 2 && (*s == '-' || *s == ' '))
			s++;
	}
	return !*s;
}

/* govalidator's IsISBN: spaces and dashes dropped, then ten digits (the
   last may be X) with the mod-11 sum, or thirteen with the EAN check
   digit. */
static bool is_isbn(const char *s, int version)
{
	char d[16];
	size_t n = 0;
	for (; *s; s++) {
		if (strchr("\t\n\f\r -", *s))
			continue;
		if (n == sizeof d - 1)
			return false;
		d[n++] = *s;
	}
	d[n] = '\0';
	if (version == 10) {
		if (n != 10 || !digits(d, 9) ||
		    !((d[9] >= '0' && d[9] <= '9') || d[9] == 'X'))
			return false;
		int sum = 0;
		for (int i = 0; i < 9; i++)
			sum += (i + 1) * (d[i] - '0');
		sum += 10 * (d[9] == 'X' ? 10 : d[9] - '0');
		return sum % 11 == 0;
	}
	if (n != 13 || !digits(d, 13))
		return false;
	int sum = 0;
	for (int i = 0; i < 12; i++)
		sum += (i % 2 ? 3 : 1) * (d[i] - '0');
	return d[12] - '0' == (10 - sum % 10) % 10;
}

/* govalidator's IsCreditCard: the digits alone (everything else is
   dropped) must start as a known issuer's, be of its length and pass
   Luhn's check. */
static bool is_creditcard(const char *s)
{
	char d[32];
	size_t n = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (n == sizeof d - 1)
			return false;
		d[n++] = *s;
	}
	d[n] = '\0';
	bool ok = (d[0] == '4' && (n == 13 || n == 16)) ||
		  (d[0] == '5' && d[1] >= '1' && d[1] <= '5' && n == 16) ||
		  (n == 16 && (!memcmp(d, "6011", 4) || !memcmp(d, "65", 2))) ||
		  (d[0] == '3' && (d[1] == '4' || d[1] == '7') && n == 15) ||
		  (d[0] == '3' && ((d[1] == '0' && d[2] >= '0' && d[2] <= '5') ||
				   d[1] == '6' || d[1] == '8') && n == 14) ||
		  (n == 15 && (!memcmp(d, "2131", 4) || !memcmp(d, "1800", 4))) ||
		  (n == 16 && !memcmp(d, "35", 2));
	if (!ok)
		return false;
	int sum = 0;
	bool dbl = false;
	for (size_t i = n; i-- > 0; dbl = !dbl) {
		int v = d[i] - '0';
		if (dbl)
			v = v * 2 >= 10 ? v * 2 % 10 + 1 : v * 2;
		sum += v;
	}
	return sum % 10 == 0;
}

/* rgb(N, N, N), each 0-255 without a leading zero, spaces around */
static bool is_rgbcolor(const char *s)
{
	if (strncmp(s, "rgb(", 4))
		return false;
	s += 4;
	for (int i = 0; i < 3; i++) {
		while (go_space(*s))
			s++;
		const char *d = s;
		while (*s >= '0' && *s <= '9')
			s++;
		size_t n = (size_t)(s - d);
		if (!n || n > 3 || (n > 1 && *d == '0') || atoi(d) > 255)
			return false;
		while (go_space(*s))
			s++;
		if (*s != (i < 2 ? ',' : ')'))
			return false;
		s++;
	}
	return !*s;
}

/* The formats kube-openapi does not check: any string is one. */
static bool format_unchecked(enum fmt f)
{
	return f == F_NONE || f == F_PASSWORD || f == F_INT32 || f == F_INT64;
}

static bool format_ok(enum fmt f, const char *s)
{
	switch (f) {
	case F_BYTE: return is_base64(s);
	case F_DATE: return parse_date(s) == 10 && !s[10];
	case F_DATETIME: return is_datetime(s);
	case F_UUID: return is_uuid(s, 0);
	case F_UUID3: return is_uuid(s, '3');
	case F_UUID4: return is_uuid(s, '4');
	case F_UUID5: return is_uuid(s, '5');
	case F_IPV4: return is_ipv4(s);
	case F_IPV6: return is_ipv6(s);
	case F_CIDR: return is_cidr(s);
	case F_HOSTNAME: return is_hostname(s);
	case F_EMAIL: return is_email(s);
	case F_URI: return is_uri(s);
	case F_MAC: return is_mac(s);
	case F_HEXCOLOR: return is_hexcolor(s);
	case F_DURATION: return is_duration(s);
	case F_BSONOBJECTID: return strlen(s) == 24 && all_hex(s, 24);
	case F_SSN: return is_ssn(s);
	case F_RGBCOLOR: return is_rgbcolor(s);
	case F_ISBN: return is_isbn(s, 10) || is_isbn(s, 13);
	case F_ISBN10: return is_isbn(s, 10);
	case F_ISBN13: return is_isbn(s, 13);
	case F_CREDITCARD: return is_creditcard(s);
	case F_NONE:
	case F_PASSWORD:
	case F_INT32:
	case F_INT64: return true;
	}
	return true;
}

bool srv_schema_format_valid(const char *format, const char *s)
{
	return format_ok(find_format(format), s);
}

/* ------------------------------------------------------------------------ */
/* Validation.                                                               */

/* Cap on stored causes per list; further ones are only counted. */
#define MAX_KEPT 256

/* A cause found, kept until the stages are put in order. */
struct vcause {
	char reason[40];
	char *field, *message; /* owned */
};

struct causes {
	struct vcause *v;
	unsigned char *cls; /* each cause's stage, CLS_* */
	size_t n, cap;
	size_t total; /* including those not kept */
};

/* The stages kube's customResourceStrategy.Validate appends in order: the
   schema's (and ObjectMeta's, before), embedded resources', list-type
   uniqueness. */
enum { CLS_SCHEMA, CLS_EMBEDDED, CLS_LISTTYPE, CLS_N };

/* The additionalProperties keys a validation path holds, at most this
   many recorded (deeper ones stay dotted). */
#define MAX_AKEYS 32

struct vctx {
	struct causes *cs;
	struct sb path;
	/* where each map key under additionalProperties starts in path (its
	   '.') and its length: kube-openapi writes them dotted, but kube's
	   list-type and embedded-resource walks as field.Path.Key, "[k]" */
	size_t akey_at[MAX_AKEYS], akey_len[MAX_AKEYS];
	int n_akeys;
	bool oom;
	unsigned char cls; /* the stage the causes added now belong to */
	const char *sub; /* the field messages name paths from ("status") */
	long mc_left;	 /* match_count's visits left (nested combinators
			    would otherwise multiply them) */
};

/* A cause's cls bit: a composite (anyOf, oneOf, allOf, not) error. */
#define CLS_COMPOSITE 0x80

/* The path a cause added now names, into out (n bytes): v's, with the
   map keys under additionalProperties as "[k]" for the list-type and
   embedded-resource checks (kube's field.Path.Key there). false when it
   was cut. */
static bool cause_path(const struct vctx *v, char *out, size_t n)
{
	const char *p = sb_str(&v->path);
	bool keyed = v->cls == CLS_LISTTYPE || v->cls == CLS_EMBEDDED;
	size_t o = 0, at = 0;
	for (int i = 0; keyed && i < v->n_akeys && o < n; i++) {
		size_t k = v->akey_at[i], dot = k < v->path.len && p[k] == '.';
		int w = snprintf(out + o, n - o, "%.*s[%.*s]", (int)(k - at),
				 p + at, (int)v->akey_len[i], p + k + dot);
		o += w > 0 ? (size_t)w : 0;
		at = k + dot + v->akey_len[i];
	}
	return o < n && snprintf(out + o, n - o, "%s", p + at) < (int)(n - o);
}

__attribute__((format(printf, 3, 4)))
static void add_cause(struct vctx *v, const char *reason, const char *fmt,
		      ...)
{
	struct causes *cs = v->cs;
	cs->total++;
	if (cs->n >= MAX_KEPT)
		return;
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 8;
		struct vcause *nv = realloc(cs->v, cap * sizeof *nv);
		if (nv)
			cs->v = nv;
		unsigned char *nc = nv ? realloc(cs->cls, cap) : NULL;
		if (!nv || !nc) {
			v->oom = true;
			return;
		}
		cs->cls = nc;
		cs->cap = cap;
	}
	/* a long path or message is cut between runes, never in one */
	char field[SRV_CAUSE_FIELD_MAX];
	if (!cause_path(v, field, sizeof field))
		srv_cut_utf8(field);
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	char *f = n >= 0 ? strdup(field) : NULL;
	if (!f) {
		free(n >= 0 ? msg : NULL);
		v->oom = true;
		return;
	}
	if (n >= SRV_CAUSE_MESSAGE_MAX) {
		msg[SRV_CAUSE_MESSAGE_MAX - 1] = 0;
		srv_cut_utf8(msg);
	}
	cs->cls[cs->n] = v->cls;
	struct vcause *c = &cs->v[cs->n++];
	snprintf(c->reason, sizeof c->reason, "%s", reason);
	c->field = f;
	c->message = msg;
}

static void vcauses_free(struct vcause *v, size_t from, size_t n)
{
	for (size_t i = from; i < n; i++) {
		free(v[i].field);
		free(v[i].message);
	}
	free(v);
}

static void causes_free(struct causes *c)
{
	vcauses_free(c->v, 0, c->n);
	free(c->cls);
	memset(c, 0, sizeof *c);
}

/* Move the causes of src to the end of dst; src is emptied. */
static void causes_merge(struct vctx *v, struct causes *dst,
			 struct causes *src)
{
	struct causes *keep = v->cs;
	v->cs = dst;
	size_t i = 0; /* those from i on are not moved */
	for (; i < src->n; i++) {
		if (dst->n >= MAX_KEPT)
			break;
		if (dst->n == dst->cap) {
			size_t cap = dst->cap ? dst->cap * 2 : 8;
			struct vcause *nv = realloc(dst->v, cap * sizeof *nv);
			if (nv)
				dst->v = nv;
			unsigned char *nc = nv ? realloc(dst->cls, cap) : NULL;
			if (!nv || !nc) {
				v->oom = true;
				break;
			}
			dst->cls = nc;
			dst->cap = cap;
		}
		dst->cls[dst->n] = src->cls[i];
		dst->v[dst->n++] = src->v[i];
	}
	dst->total += src->total;
	v->cs = keep;
	vcauses_free(src->v, i, src->n);
	free(src->cls);
	memset(src, 0, sizeof *src);
}

/* "Invalid value: <v>: " where <v> is the rendered value. */
static void invalid(struct vctx *v, const json_t *x, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void invalid(struct vctx *v, const json_t *x, const char *fmt, ...)
{
	struct sb val = {0};
	if (x)
		go_value(&val, x);
	else
		sb_puts(&val, "\"\"");
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	add_cause(v, "FieldValueInvalid", "Invalid value: %s: %s",
		  sb_str(&val), tmp);
	v->oom |= val.oom;
	free(val.s);
}

static const char *value_type(const json_t *x)
{
	switch (json_typeof(x)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "null";
}

/* Math without libm (lapis_srv does not link it). */
static double dabs(double d)
{
	return d < 0 ? -d : d;
}

/* Nearest integer; every double from 2^52 up is one already. */
static double dround(double d)
{
	if (dabs(d) >= 4503599627370496.0)
		return d;
	return (double)(long long)(d + (d < 0 ? -0.5 : 0.5));
}

static bool real_is_integral(double d)
{
	if (!isfinite(d))
		return false;
	return dabs(d) >= 4503599627370496.0 || d == (double)(long long)d;
}

/* Whether a number decoded as a float64 passes kube-openapi's integer
   type (swag.IsFloat64AJSONInteger): whole and within +-(2^53 - 1), so
   that 1e20 or 9223372036854775808 (past int64, a float64 in kube) is
   not an integer. */
static bool real_is_json_integer(double d)
{
	return real_is_integral(d) && dabs(d) <= 9007199254740991.0;
}

static bool type_ok(const struct node *n, const json_t *x)
{
	if (n->int_or_string)
		return json_is_string(x) || json_is_integer(x) ||
		       (json_is_real(x) &&
			real_is_json_integer(json_real_value(x)));
	if (!n->types)
		return true;
	switch (json_typeof(x)) {
	case JSON_OBJECT: return n->types & T_OBJECT;
	case JSON_ARRAY: return n->types & T_ARRAY;
	case JSON_STRING: return n->types & T_STRING;
	case JSON_INTEGER: return n->types & (T_INTEGER | T_NUMBER);
	case JSON_REAL:
		return (n->types & T_NUMBER) ||
		       ((n->types & T_INTEGER) &&
			real_is_json_integer(json_real_value(x)));
	case JSON_TRUE:
	case JSON_FALSE: return n->types & T_BOOLEAN;
	case JSON_NULL: return false;
	}
	return false;
}

static const char *path_or_root(const struct vctx *v)
{
	const char *p = sb_str(&v->path);
	size_t n = v->sub ? strlen(v->sub) : 0;
	if (!n || strncmp(p, v->sub, n) != 0 || (p[n] && p[n] != '.'))
		return p;
	return p[n] ? p + n + 1 : "";
}

static void type_error(struct vctx *v, const struct node *n, const json_t *x)
{
	const char *actual = value_type(x);
	const char *want = n->int_or_string ? "integer,string" :
			   n->type_name ? n->type_name : "";
	add_cause(v, "FieldValueTypeInvalid",
		  "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
		  actual, path_or_root(v), want, actual);
}

static void check_enum(struct vctx *v, const struct node *n, const json_t *x)
{
	if (!n->enum_vals)
		return;
	size_t i;
	json_t *e;
	/* kube-openapi compares by reflection and skips null enum values:
	   null never matches */
	json_array_foreach(n->enum_vals, i, e)
		if (!json_is_null(e) && srv_json_value_eq(e, x))
			return;
	struct sb b = {0};
	sb_puts(&b, "Unsupported value: ");
	go_value(&b, x);
	sb_puts(&b, ": supported values: ");
	json_array_foreach(n->enum_vals, i, e) {
		if (i)
			sb_puts(&b, ", ");
		if (json_is_string(e)) {
			go_quote(&b, json_string_value(e));
		} else {
			char *s = json_dumps(e, JSON_ENCODE_ANY | JSON_COMPACT);
			go_quote(&b, s ? s : "");
			free(s);
		}
	}
	add_cause(v, "FieldValueNotSupported", "%s", sb_str(&b));
	v->oom |= b.oom;
	free(b.s);
}

static size_t utf8_runes(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* maxLength, minLength, pattern: the first that fails is the one error,
   as kube-openapi's string validator returns at its first failure (the
   format is a validator of its own, so its error comes besides). */
static void check_string(struct vctx *v, const struct node *n, const json_t *x)
{
	const char *s = json_string_value(x);
	size_t len = json_string_length(x);
	long long runes = n->max_len != NO_MAX || n->min_len >= 0
			      ? (long long)utf8_runes(s, len)
			      : 0;
	if (n->max_len != NO_MAX && runes > n->max_len) {
		if (n->max_len < 0)
			add_cause(v, "FieldValueTooLong",
				  "Too long: value is too long");
		else
			/* apimachinery 1.33's field.TooLong: "bytes" even
			   for 1 (1.34 says "1 byte") */
			add_cause(v, "FieldValueTooLong",
				  "Too long: may not be more than %lld bytes",
				  n->max_len);
	} else if (n->min_len >= 0 && runes < n->min_len)
		invalid(v, x, "%s in body should be at least %lld chars long",
			path_or_root(v), n->min_len);
	else if (n->re && !goregex_search(n->re, s, len))
		invalid(v, x, "%s in body should match '%s'", path_or_root(v),
			n->pattern);
	/* every format kube checks refuses a NUL (Go's parsers and anchored
	   regexes); those it does not check take anything */
	bool fmt_ok = strlen(s) == len ? format_ok(n->format, s)
				       : format_unchecked(n->format);
	if (!fmt_ok) {
		struct sb b = {0};
		go_quoten(&b, s, len);
		add_cause(v, "FieldValueTypeInvalid",
			  "Invalid value: %s: %s in body must be of type %s: %s",
			  sb_str(&b), path_or_root(v), n->format_name,
			  sb_str(&b));
		free(b.s);
	}
}

/* <0, 0, >0 as x compares to bound b. */
static int cmp_bound(const json_t *x, const struct bound *b)
{
	if (json_is_integer(x) && b->is_int) {
		json_int_t i = json_integer_value(x);
		return i < b->i ? -1 : i > b->i;
	}
	double d = json_number_value(x);
	return d < b->d ? -1 : d > b->d;
}

/* The bound b of node n as kube-openapi applies it to value x
   (MaximumNativeType, MinimumNativeType): to an integer, Go's int64() of
   it (which truncates a fraction), compared and printed as an integer,
   unless n is an integer whose bound is no int64 (IsValueValidAgainstRange;
   kube strips the int32/int64 formats first); else as the number it is. */
static struct bound int_bound(const struct node *n, const json_t *x,
			      const struct bound *b)
{
	struct bound r = *b;
	bool int_type = n->type_name && !strcmp(n->type_name, "integer");
	if (json_is_integer(x) && !b->is_int && dabs(b->d) < 9.2e18 &&
	    (!int_type || real_is_integral(b->d))) {
		r.is_int = true;
		r.i = (json_int_t)b->d;
	}
	return r;
}

static void bound_text(struct sb *bs, const json_t *x, const struct bound *b)
{
	if (json_is_integer(x) && b->is_int)
		sb_printf(bs, "%lld", (long long)b->i);
	else
		go_float(bs, b->d);
}

/* kube-openapi's multipleOf: an integer value is checked against the
   factor converted to an integer (Go's int64(), which truncates), unless
   the schema says integer and the factor has a fraction; a factor that
   is not positive fails every value. */
static void check_multiple(struct vctx *v, const struct node *n,
			   const json_t *x, struct sb *bs)
{
	bool int_type = n->type_name && !strcmp(n->type_name, "integer");
	if (json_is_integer(x) && (!int_type || real_is_integral(n->mult))) {
		long long f = dabs(n->mult) < 9.2e18 ? (long long)n->mult
						     : LLONG_MIN;
		if (f <= 0) {
			json_t *fv = json_integer(f);
			invalid(v, fv, "factor MultipleOf declared for %s must be positive: %lld",
				path_or_root(v), f);
			json_decref(fv);
		} else if (json_integer_value(x) % f != 0) {
			invalid(v, x, "%s in body should be a multiple of %lld",
				path_or_root(v), f);
		}
		return;
	}
	go_float(bs, n->mult);
	if (n->mult <= 0) {
		json_t *fv = json_real(n->mult);
		invalid(v, fv, "factor MultipleOf declared for %s must be positive: %s",
			path_or_root(v), sb_str(bs));
		json_decref(fv);
		return;
	}
	double q = json_number_value(x) / n->mult;
	double tol = 1e-9 * (dabs(q) > 1.0 ? dabs(q) : 1.0);
	if (!isfinite(q) || dabs(q - dround(q)) > tol)
		invalid(v, x, "%s in body should be a multiple of %s",
			path_or_root(v), sb_str(bs));
}

/* In kube-openapi's order: multipleOf, minimum, maximum. */
static void check_number(struct vctx *v, const struct node *n, const json_t *x)
{
	struct sb bs = {0};
	if (n->has_mult) {
		check_multiple(v, n, x, &bs);
		sb_cut(&bs, 0);
	}
	if (n->min.set) {
		struct bound b = int_bound(n, x, &n->min);
		int c = cmp_bound(x, &b);
		if (c < 0 || (c == 0 && b.excl)) {
			bound_text(&bs, x, &b);
			invalid(v, x, "%s in body should be greater than %s%s",
				path_or_root(v), b.excl ? "" : "or equal to ",
				sb_str(&bs));
			sb_cut(&bs, 0);
		}
	}
	if (n->max.set) {
		struct bound b = int_bound(n, x, &n->max);
		int c = cmp_bound(x, &b);
		if (c > 0 || (c == 0 && b.excl)) {
			bound_text(&bs, x, &b);
			invalid(v, x, "%s in body should be less than %s%s",
				path_or_root(v), b.excl ? "" : "or equal to ",
				sb_str(&bs));
			sb_cut(&bs, 0);
		}
	}
	/* format int32/int64 bound nothing: kube-openapi's type validator
	   accepts any integer for them (and float/double any number) */
	v->oom |= bs.oom;
	free(bs.s);
}

static void duplicate(struct vctx *v, const json_t *shown)
{
	struct sb b = {0};
	go_value(&b, shown);
	add_cause(v, "FieldValueDuplicate", "Duplicate value: %s", sb_str(&b));
	v->oom |= b.oom;
	free(b.s);
}

/* The map-list key of item it: {key: value, ...} of the keys it has (a
   key left out is not a null one: kube's unspecifiedKeyValue, shown as
   an empty map); new. */
static json_t *map_key_of(const struct node *n, const json_t *it)
{
	json_t *k = json_object();
	if (!k)
		return NULL;
	for (size_t j = 0; j < n->n_map_keys; j++) {
		json_t *kv = json_is_object(it) ?
				     json_object_get(it, n->map_keys[j]) : NULL;
		if (kv)
			json_object_set_new(k, n->map_keys[j], json_incref(kv));
	}
	return k;
}

static void check_list_type(struct vctx *v, const struct node *n,
			    const json_t *x)
{
	size_t len = json_array_size(x), pl = v->path.len;
	unsigned char cls = v->cls;
	v->cls = CLS_LISTTYPE;
	/* kube's validateListSet and validateListMap name a value's second
	   occurrence only */
	if (n->list_type == LIST_SET) {
		for (size_t i = 1; i < len; i++) {
			const json_t *a = json_array_get(x, i);
			size_t seen = 0;
			for (size_t j = 0; j < i; j++)
				seen += srv_json_value_eq(a, json_array_get(x, j));
			if (seen == 1) {
				path_index(&v->path, i);
				duplicate(v, a);
				sb_cut(&v->path, pl);
			}
		}
	} else if (n->list_type == LIST_MAP && n->n_map_keys) {
		json_t **keys = calloc(len ? len : 1, sizeof *keys);
		if (!keys) {
			v->oom = true;
			return;
		}
		for (size_t i = 0; i < len; i++) {
			keys[i] = map_key_of(n, json_array_get(x, i));
			if (!keys[i])
				v->oom = true;
		}
		for (size_t i = 1; i < len; i++) {
			size_t seen = 0;
			for (size_t j = 0; keys[i] && j < i; j++)
				seen += keys[j] && srv_json_value_eq(keys[i], keys[j]);
			if (seen == 1) {
				path_index(&v->path, i);
				duplicate(v, keys[i]);
				sb_cut(&v->path, pl);
			}
		}
		for (size_t i = 0; i < len; i++)
			json_decref(keys[i]);
		free(keys);
	}
	v->cls = cls;
}

static bool dns1035_label(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63 || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = (char)tolower((unsigned char)s[i]);
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return s[n - 1] != '-';
}

/* kube's ValidatePathSegmentName: what an embedded resource's name (and,
   as a prefix, generateName) may be. NULL when fine. */
static const char *path_segment_msg(const char *s, bool prefix)
{
	if (!prefix && !strcmp(s, "."))
		return "may not be '.'";
	if (!prefix && !strcmp(s, ".."))
		return "may not be '..'";
	if (strchr(s, '/'))
		return "may not contain '/'";
	if (strchr(s, '%'))
		return "may not contain '%'";
	return NULL;
}

static bool dns1123_label(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
		      s[i] == '-'))
			return false;
	return true;
}

/* One member of an embedded resource's metadata (v->path at metadata),
   checked by fn-like rules with kube's texts. */
static void meta_invalid(struct vctx *v, const char *member, const json_t *x,
			 const char *msg)
{
	size_t pl = v->path.len;
	path_key(&v->path, member);
	invalid(v, x, "%s", msg);
	sb_cut(&v->path, pl);
}

/* meta_invalid for each of kube's IsQualifiedName complaints about k
   (shown as shown). */
static void meta_qname(struct vctx *v, const char *member, const char *shown,
		       const char *k)
{
	const char *msgs[4];
	int n = srv_qname_problems(k, msgs);
	json_t *kj = n ? json_string(shown) : NULL;
	for (int i = 0; i < n; i++)
		meta_invalid(v, member, kj, msgs[i]);
	json_decref(kj);
}

/*
 * kube validates an embedded resource's metadata with ValidateObjectMeta
 * (objectmeta.validateEmbeddedResource): a name and generateName that are
 * path segments (an empty name is fine), a DNS-1123 label for a namespace,
 * qualified names for label and annotation keys and finalizers, label
 * values. v->path is at the metadata.
 */
static void check_embedded_meta(struct vctx *v, const json_t *md)
{
	static const char *const segs[] = {"name", "generateName"};
	for (size_t i = 0; i < 2; i++) {
		const json_t *x = json_object_get(md, segs[i]);
		const char *msg = NULL;
		if (json_is_string(x) && !reg_json_has_nul(x)) {
			msg = path_segment_msg(json_string_value(x), i);
		} else if (json_is_string(x)) {
			/* a path segment may hold a NUL: it is judged by
			   its '/' and '%' alone, which a copy keeps */
			char *c = nul_as(json_string_value(x),
					 json_string_length(x), 'x');
			if (!c) {
				v->oom = true;
				return;
			}
			msg = path_segment_msg(c, i);
			free(c);
		}
		if (msg)
			meta_invalid(v, segs[i], x, msg);
	}
	/* a NUL fails a DNS label, a label value and a qualified name */
	const json_t *ns = json_object_get(md, "namespace");
	if (json_is_string(ns) && *json_string_value(ns) &&
	    (reg_json_has_nul(ns) || !dns1123_label(json_string_value(ns))))
		meta_invalid(v, "namespace", ns,
			     SRV_MSG_DNS_LABEL);
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)json_object_get(md, "labels"), k, x)
	{
		meta_qname(v, "labels", k, k);
		if (json_is_string(x) &&
		    (reg_json_has_nul(x) ||
		     !srv_is_label_value(json_string_value(x))))
			meta_invalid(v, "labels", x, SRV_MSG_LABEL_VALUE);
	}
	json_object_foreach((json_t *)json_object_get(md, "annotations"), k, x)
	{
		char low[320];
		size_t i = 0;
		for (; k[i] && i < sizeof low - 1; i++)
			low[i] = (char)tolower((unsigned char)k[i]);
		low[i] = '\0';
		meta_qname(v, "annotations", k, k[i] ? k : low);
	}
	size_t i;
	json_array_foreach((json_t *)json_object_get(md, "finalizers"), i, x)
	{
		/* ValidateFinalizers names the list, not the item; a NUL
		   is judged as another character a name may not hold */
		if (json_is_string(x) && reg_json_has_nul(x)) {
			char *c = nul_as(json_string_value(x),
					 json_string_length(x), '\x01');
			if (!c) {
				v->oom = true;
				return;
			}
			meta_qname(v, "finalizers", c, c);
			free(c);
		} else if (json_is_string(x)) {
			meta_qname(v, "finalizers", json_string_value(x),
				   json_string_value(x));
		}
	}
}

static void check_embedded(struct vctx *v, const json_t *x)
{
	size_t pl = v->path.len;
	unsigned char cls = v->cls;
	v->cls = CLS_EMBEDDED;
	const json_t *av = json_object_get(x, "apiVersion");
	path_key(&v->path, "apiVersion");
	/* absent: Required; present and empty: Invalid (kube's
	   validateEmbeddedResource) */
	if (!av) {
		add_cause(v, "FieldValueRequired", "Required value: must not be empty");
	} else if (json_is_string(av) && !*json_string_value(av)) {
		invalid(v, av, "must not be empty");
	} else if (!json_is_string(av)) {
		invalid(v, av, "must be a string");
	} else {
		const char *s = json_string_value(av), *sl = strchr(s, '/');
		if (sl && (sl == s || !sl[1] || strchr(sl + 1, '/')))
			invalid(v, av, "unexpected GroupVersion string: %s", s);
	}
	sb_cut(&v->path, pl);
	const json_t *kind = json_object_get(x, "kind");
	path_key(&v->path, "kind");
	if (!kind) {
		add_cause(v, "FieldValueRequired", "Required value: must not be empty");
	} else if (json_is_string(kind) && !*json_string_value(kind)) {
		invalid(v, kind, "must not be empty");
	} else if (!json_is_string(kind)) {
		invalid(v, kind, "must be a string");
	} else {
		char low[64];
		const char *s = json_string_value(kind);
		size_t i;
		for (i = 0; s[i] && i < sizeof low - 1; i++)
			low[i] = (char)tolower((unsigned char)s[i]);
		low[i] = '\0';
		if (strlen(s) > 63 || !dns1035_label(low))
			invalid(v, kind,
				"may have mixed case, but should otherwise match: "
				"a DNS-1035 label must consist of lower case "
				"alphanumeric characters or '-', start with an "
				"alphabetic character, and end with an "
				"alphanumeric character (e.g. 'my-name',  or "
				"'abc-123', regex used for validation is "
				"'[a-z]([-a-z0-9]*[a-z0-9])?')");
	}
	sb_cut(&v->path, pl);
	const json_t *md = json_object_get(x, "metadata");
	if (md && !json_is_object(md) && !json_is_null(md)) {
		path_key(&v->path, "metadata");
		invalid(v, md, "must be an object");
		sb_cut(&v->path, pl);
	} else if (json_is_object(md)) {
		path_key(&v->path, "metadata");
		check_embedded_meta(v, md);
		sb_cut(&v->path, pl);
	}
	v->cls = cls;
}

static void validate_node(struct vctx *v, const struct node *n,
			  const json_t *x);

/* Validate x against sub into a fresh list; returns its error count. */
static size_t try_node(struct vctx *v, const struct node *sub,
		       const json_t *x, struct causes *into)
{
	struct causes *keep = v->cs;
	v->cs = into;
	validate_node(v, sub, x);
	v->cs = keep;
	return into->total;
}

/*
 * kube-openapi's Result.MatchCount of x against n: how many validators
 * applied on the way down (SchemaValidator counts one per validator that
 * applies and one of its own; the type, number and slice validators and
 * the schema-props one add one more each). Among the failing branches of
 * an anyOf or oneOf, kube reports the one with the highest count: the
 * branch whose checks went deepest.
 */
static long match_count(struct vctx *v, const struct node *n, const json_t *x,
			int depth);

static bool branch_ok(struct vctx *v, const struct node *b, const json_t *x)
{
	if (v->mc_left <= 0)
		return false;
	v->mc_left--;
	struct causes c = {0};
	bool ok = try_node(v, b, x, &c) == 0;
	causes_free(&c);
	return ok;
}

/* The MatchCount an anyOf's or oneOf's branches add: the first valid
   branch's (*ok counts the valid ones, stopping at the first with
   first_only), else the highest of the failing ones before any valid. */
static long branches_count(struct vctx *v, struct node *const *br, size_t nb,
			   const json_t *x, int depth, bool first_only,
			   size_t *ok)
{
	long best = -1, first = -1;
	*ok = 0;
	for (size_t i = 0; i < nb && !(first_only && *ok); i++) {
		long c = match_count(v, br[i], x, depth + 1);
		if (branch_ok(v, br[i], x)) {
			if (!(*ok)++)
				first = c;
		} else if (!*ok && c > best) {
			best = c;
		}
	}
	return *ok ? first : best;
}

static long props_count(struct vctx *v, const struct node *n, const json_t *x,
			int depth)
{
	long mc = 1; /* schemaPropsValidator's own */
	size_t ok;
	if (n->n_any_of)
		mc += branches_count(v, n->any_of, n->n_any_of, x, depth, true,
				     &ok);
	if (n->n_one_of) {
		long c = branches_count(v, n->one_of, n->n_one_of, x, depth,
					false, &ok);
		mc += ok <= 1 ? c : 0;
	}
	for (size_t i = 0; i < n->n_all_of; i++)
		mc += match_count(v, n->all_of[i], x, depth + 1);
	return mc;
}

static long match_count(struct vctx *v, const struct node *n, const json_t *x,
			int depth)
{
	if (!x || json_is_null(x))
		return 1; /* the type validator's own */
	if (depth > SRV_SCHEMA_MAX_DEPTH + 2 || v->mc_left <= 0)
		return 0;
	v->mc_left--;
	long mc = 1; /* SchemaValidator's own */
	if (n->type_name || n->format_name)
		mc += 2;
	mc += props_count(v, n, x, depth) + 1;
	mc += 1; /* the common (enum) validator */
	if (json_is_string(x))
		mc += 1 + (n->format != F_NONE);
	else if (json_is_number(x))
		mc += 2;
	else if (json_is_array(x)) {
		mc += 2;
		for (size_t i = 0; n->items && i < json_array_size(x); i++)
			mc += match_count(v, n->items, json_array_get(x, i),
					  depth + 1);
	} else if (json_is_object(x)) {
		mc += 1;
		const char *k;
		json_t *cv;
		json_object_foreach((json_t *)x, k, cv)
		{
			const struct node *p = find_prop(n, k);
			if (p)
				mc += match_count(v, p, cv, depth + 1);
			else if (n->addl == ADDL_SCHEMA)
				mc += match_count(v, n->addl_schema, cv,
						  depth + 1);
		}
	}
	return mc;
}

/* A composite (anyOf, oneOf, allOf, not) error: kube-openapi's is not a
   field error, so kube gives it its validator's root path. */
__attribute__((format(printf, 2, 3)))
static void composite(struct vctx *v, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	unsigned char cls = v->cls;
	v->cls |= CLS_COMPOSITE;
	invalid(v, NULL, "%s", tmp);
	v->cls = cls;
}

/* kube-openapi's anyOf and oneOf loop: x against each branch, stopping
   at the first valid one with first_only; returns how many are valid,
   with the causes of the failing branch counted highest (MatchCount)
   before any valid one in *best. */
static size_t try_branches(struct vctx *v, struct node *const *br, size_t nb,
			   const json_t *x, bool first_only,
			   struct causes *best)
{
	long best_mc = -1;
	size_t ok = 0;
	for (size_t i = 0; i < nb && !(first_only && ok); i++) {
		struct causes c = {0};
		if (try_node(v, br[i], x, &c) == 0) {
			ok++;
		} else if (!ok) {
			long mc = match_count(v, br[i], x, 0);
			if (mc > best_mc) {
				causes_free(best);
				*best = c;
				best_mc = mc;
				continue;
			}
		}
		causes_free(&c);
	}
	return ok;
}

static void check_combinators(struct vctx *v, const struct node *n,
			      const json_t *x)
{
	if (!n->n_all_of && !n->n_any_of && !n->n_one_of && !n->not_)
		return;
	struct sb q = {0};
	go_quote(&q, path_or_root(v));
	if (n->n_all_of) {
		size_t ok = 0;
		struct causes acc = {0};
		for (size_t i = 0; i < n->n_all_of; i++) {
			struct causes c = {0};
			if (try_node(v, n->all_of[i], x, &c) == 0)
				ok++;
			causes_merge(v, &acc, &c);
		}
		if (ok != n->n_all_of) {
			/* kube-openapi merges the sub-schemas' results
			   before it adds its own */
			causes_merge(v, v->cs, &acc);
			composite(v, "%s must validate all the schemas (allOf)%s",
				sb_str(&q), ok ? "" : ". None validated");
		}
		causes_free(&acc);
	}
	if (n->n_any_of) {
		struct causes best = {0};
		if (!try_branches(v, n->any_of, n->n_any_of, x, true, &best)) {
			composite(v, "%s must validate at least one schema (anyOf)",
				sb_str(&q));
			causes_merge(v, v->cs, &best);
		}
		causes_free(&best);
	}
	if (n->n_one_of) {
		struct causes best = {0};
		size_t ok =
		    try_branches(v, n->one_of, n->n_one_of, x, false, &best);
		if (ok != 1) {
			char more[64];
			if (ok == 0)
				snprintf(more, sizeof more, "Found none valid");
			else
				snprintf(more, sizeof more,
					 "Found %zu valid alternatives", ok);
			composite(v,
				"%s must validate one and only one schema (oneOf). %s",
				sb_str(&q), more);
			if (ok == 0)
				causes_merge(v, v->cs, &best);
		}
		causes_free(&best);
	}
	if (n->not_) {
		struct causes c = {0};
		if (try_node(v, n->not_, x, &c) == 0)
			composite(v, "%s must not validate the schema (not)",
				sb_str(&q));
		causes_free(&c);
	}
	v->oom |= q.oom;
	free(q.s);
}

/* field.TooMany, for maxItems and maxProperties (apimachinery v0.33's
   words) */
static void too_many(struct vctx *v, size_t n, long long max)
{
	if (max < 0)
		add_cause(v, "FieldValueTooMany",
			  "Too many: %zu: has too many items", n);
	else
		add_cause(v, "FieldValueTooMany",
			  "Too many: %zu: must have at most %lld items", n,
			  max); /* 1.33's field.TooMany: "1 items" too */
}

static void validate_object(struct vctx *v, const struct node *n,
			    const json_t *x)
{
	size_t pl = v->path.len, np = json_object_size(x);
	/* kube-openapi's object validator: the counts, the keys no property
	   declares, the declared properties, then the required ones */
	if (n->min_props >= 0 && (long long)np < n->min_props) {
		/* kube-openapi shows the count (TooFewProperties) */
		json_t *cnt = json_integer((json_int_t)json_object_size(x));
		invalid(v, cnt,
			"%s in body should have at least %lld properties",
			path_or_root(v), n->min_props);
		json_decref(cnt);
	}
	if (n->max_props != NO_MAX && (long long)np > n->max_props)
		too_many(v, np, n->max_props);
	if (n->addl == ADDL_SCHEMA || n->addl == ADDL_FALSE) {
		const char *k;
		json_t *pv;
		json_object_foreach((json_t *)x, k, pv) {
			if (find_prop(n, k))
				continue;
			if (n->addl == ADDL_FALSE) {
				/* PropertyNotAllowed shows the key */
				json_t *kj = json_string(k);
				invalid(v, kj, "%s%s%s in body is a forbidden property",
					path_or_root(v), pl ? "." : "", k);
				json_decref(kj);
				continue;
			}
			bool rec = v->n_akeys < MAX_AKEYS;
			if (rec) {
				v->akey_at[v->n_akeys] = v->path.len;
				v->akey_len[v->n_akeys++] = strlen(k);
			}
			path_key(&v->path, k);
			validate_node(v, n->addl_schema, pv);
			sb_cut(&v->path, pl);
			v->n_akeys -= rec;
		}
	}
	/* declared properties in schema (name) order: kube's in Go's map
	   order, which differs from run to run */
	for (size_t i = 0; i < n->n_props; i++) {
		const json_t *pv = json_object_get(x, n->props[i].name);
		if (!pv)
			continue;
		path_key(&v->path, n->props[i].name);
		validate_node(v, n->props[i].n, pv);
		sb_cut(&v->path, pl);
	}
	for (size_t i = 0; i < n->n_required; i++) {
		if (!json_object_get(x, n->required[i])) {
			path_key(&v->path, n->required[i]);
			add_cause(v, "FieldValueRequired", "Required value");
			sb_cut(&v->path, pl);
		}
	}
	if (n->embedded)
		check_embedded(v, x);
}

static void validate_node(struct vctx *v, const struct node *n,
			  const json_t *x)
{
	if (!n)
		return;
	/* kube-openapi runs every validator whatever the type validator
	   said: after a type error the enum's and the composites' still
	   come (the kind-specific ones have nothing of a mistyped value) */
	if (json_is_null(x)) {
		if (!n->nullable && (n->types || n->int_or_string))
			type_error(v, n, x);
		check_enum(v, n, x);
		return;
	}
	if (n->types && kept_format(n->format)) {
		/* kube-openapi's type validator with a format: a string or
		   an array passes it unless the type is numeric; any other
		   value must have the type or the format of its Go value,
		   and then the type (an integral number for an integer) */
		bool numeric = n->types & (T_INTEGER | T_NUMBER);
		if (json_is_string(x) || json_is_array(x)) {
			if (!numeric)
				goto typed;
		} else {
			const char *gf = json_is_integer(x) ? "int64"
					 : json_is_real(x)  ? "float64"
							    : "";
			if (!type_ok(n, x) && strcmp(gf, n->format_name)) {
				add_cause(v, "FieldValueTypeInvalid",
					  "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
					  gf, path_or_root(v), n->format_name, gf);
				goto mistyped;
			}
		}
	}
	if (!type_ok(n, x)) {
		type_error(v, n, x);
		goto mistyped;
	}
typed:
	/* kube-openapi's validators in its order: type, the composites
	   (schemaProps), string, format, number, slice, enum (common), object
	 */
	check_combinators(v, n, x);
	if (json_is_string(x)) {
		check_string(v, n, x);
	} else if (json_is_number(x)) {
		check_number(v, n, x);
	} else if (json_is_array(x)) {
		size_t len = json_array_size(x), pl = v->path.len;
		if (n->items) {
			for (size_t i = 0; i < len; i++) {
				path_index(&v->path, i);
				validate_node(v, n->items, json_array_get(x, i));
				sb_cut(&v->path, pl);
			}
		}
		if (n->min_items >= 0 && (long long)len < n->min_items) {
			/* kube-openapi shows the count (TooFewItems) */
			json_t *cnt = json_integer((json_int_t)len);
			invalid(v, cnt,
				"%s in body should have at least %lld items",
				path_or_root(v), n->min_items);
			json_decref(cnt);
		}
		if (n->max_items != NO_MAX && (long long)len > n->max_items)
			too_many(v, len, n->max_items);
		check_list_type(v, n, x);
	}
	check_enum(v, n, x);
	if (json_is_object(x))
		validate_object(v, n, x);
	return;
mistyped:
	check_combinators(v, n, x);
	check_enum(v, n, x);
}

/* ------------------------------------------------------------------------ */
/* Coercion: kube's objectmeta.Coerce in the decoder.                        */

static const char *go_json_kind(const json_t *x)
{
	switch (json_typeof(x)) {
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_ARRAY: return "array";
	case JSON_TRUE:
	case JSON_FALSE: return "bool";
	case JSON_OBJECT:
	case JSON_NULL: break;
	}
	return "object";
}

/* Where coerce_node says what failed, field.Invalid(path, x, why)'s
   text: msg gets "<path>: Invalid value: ...", or, with field set, the
   path goes there and msg starts at "Invalid value". */
struct coerce_out {
	char *msg, *field;
	size_t size, fsize;
};

static void coerce_error(struct sb *path, const json_t *x, const char *why,
			 const struct coerce_out *out)
{
	struct sb val = {0};
	go_value(&val, x);
	if (out->field)
		snprintf(out->field, out->fsize, "%s", sb_str(path));
	snprintf(out->msg, out->size, "%s%sInvalid value: %s: %s",
		 out->field ? "" : sb_str(path), out->field ? "" : ": ",
		 sb_str(&val), why);
	free(val.s);
}

static bool coerce_node(const struct node *n, json_t *x, struct sb *path,
			const struct coerce_out *out)
{
	if (!n)
		return false;
	size_t pl = path->len;
	if (json_is_object(x)) {
		if (n->embedded) {
			static const char *const tm[] = {"apiVersion", "kind"};
			for (size_t i = 0; i < 2; i++) {
				const json_t *t = json_object_get(x, tm[i]);
				if (t && !json_is_string(t)) {
					path_key(path, tm[i]);
					coerce_error(path, t,
						     "must be a string", out);
					return true;
				}
			}
			json_t *md = json_object_get(x, "metadata");
			struct srv_typeerr te = {0};
			bool bad = false;
			if (md && !json_is_null(md) && !json_is_object(md)) {
				snprintf(te.text, sizeof te.text,
					 "json: cannot unmarshal %s into Go value of type v1.ObjectMeta",
					 go_json_kind(md));
				bad = true;
			} else if (json_is_object(md)) {
				bad = !srv_object_meta_typecheck(md, false, &te);
			}
			if (bad) {
				path_key(path, "metadata");
				coerce_error(path, md, te.text, out);
				return true;
			}
		}
		const char *k;
		json_t *v;
		json_object_foreach(x, k, v) {
			const struct node *sub = find_prop(n, k);
			if (sub) {
				path_key(path, k);
			} else if (n->addl_schema) {
				sub = n->addl_schema;
				sb_printf(path, "[%s]", k);
			}
			if (sub && coerce_node(sub, v, path, out))
				return true;
			sb_cut(path, pl);
		}
	} else if (json_is_array(x) && n->items) {
		size_t i;
		json_t *v;
		json_array_foreach(x, i, v) {
			path_index(path, i);
			if (coerce_node(n->items, v, path, out))
				return true;
			sb_cut(path, pl);
		}
	}
	return false;
}

bool srv_schema_coerce(const struct srv_schema *s, json_t *obj, char *msg,
		       size_t size)
{
	struct sb path = {0};
	bool bad = false;
	const struct coerce_out out = {.msg = msg, .size = size};
	/* the root's own metadata is the caller's (ObjectMeta decoding) */
	if (json_is_object(obj) && s->root) {
		const char *k;
		json_t *v;
		json_object_foreach(obj, k, v) {
			if (!strcmp(k, "metadata"))
				continue;
			const struct node *sub = find_prop(s->root, k);
			path_key(&path, k);
			if (sub && (bad = coerce_node(sub, v, &path, &out)))
				break;
			sb_cut(&path, 0);
		}
	}
	free(path.s);
	return bad;
}

bool srv_schema_coerce_value(const struct srv_schema *s, json_t *obj,
			     char *field, size_t fsize, char *msg, size_t msize)
{
	struct sb path = {0};
	const struct coerce_out out = {
	    .msg = msg, .size = msize, .field = field, .fsize = fsize};
	bool bad = s->root && coerce_node(s->root, obj, &path, &out);
	free(path.s);
	return bad;
}

lp_err srv_schema_validate(const struct srv_schema *s, const json_t *obj,
			   struct srv_error *err)
{
	return srv_schema_validate_with(s, obj, err, NULL);
}

/* Does x break a list type (x-kubernetes-list-type set or map) anywhere?
   kube's ValidateListSetsAndMaps on an update's old object. */
static bool list_types_broken(const struct srv_schema *s, const json_t *x)
{
	struct causes cs = {0};
	struct vctx v = {.cs = &cs, .mc_left = 100000};
	validate_node(&v, s->root, x);
	bool bad = false;
	for (size_t i = 0; i < cs.n && !bad; i++)
		bad = (cs.cls[i] & ~CLS_COMPOSITE) == CLS_LISTTYPE;
	causes_free(&cs);
	free(v.path.s);
	return bad;
}

lp_err srv_schema_validate_with(const struct srv_schema *s, const json_t *obj,
				struct srv_error *err,
				const struct srv_schema_vopts *o)
{
	static const struct srv_schema_vopts none;
	if (!o)
		o = &none;
	struct causes cs = {0};
	struct vctx v = {.cs = &cs, .sub = o->sub, .mc_left = 100000};
	locale_t old = locale_enter();
	validate_node(&v, s->root, obj);
	/* an update's list-type errors all count, unless the old object
	   already broke a list type: then none does (kube ratchets them as
	   one, not by field) */
	bool any_list = false;
	for (size_t i = 0; o->old && i < cs.n && !any_list; i++)
		any_list = (cs.cls[i] & ~CLS_COMPOSITE) == CLS_LISTTYPE;
	bool lists_ok = !any_list || !list_types_broken(s, o->old);
	locale_leave(old);
	lp_err rc = LP_OK;
	int before = err->n_causes;
	/* kube's defaulting validation: the embedded resources' causes
	   alone when there are any, else the schema's */
	bool emb_only = false;
	for (size_t i = 0; o->defaulting && i < cs.n && !emb_only; i++)
		emb_only = (cs.cls[i] & ~CLS_COMPOSITE) == CLS_EMBEDDED;
	/* Causes by stage (the caller's between the schema's and the
	   embedded resources'), each in order, exact duplicates dropped. */
	for (int cls = 0; cls < CLS_N; cls++) {
		if (o->defaulting &&
		    (cls == CLS_LISTTYPE || emb_only != (cls == CLS_EMBEDDED)))
			continue;
		if (cls == CLS_EMBEDDED && o->after_schema) {
			int n0 = err->n_causes, kept = n0;
			o->after_schema(o->ud, err);
			for (int i = n0; i < err->n_causes; i++)
				if (!o->keep ||
				    o->keep(o->ud, srv_cause_get(err, i).field))
					err->causes[kept++] = err->causes[i];
			err->n_causes = kept;
		}
		if (cls == CLS_LISTTYPE && !lists_ok)
			continue;
		for (size_t i = 0; i < cs.n; i++) {
			const struct vcause *c = &cs.v[i];
			if ((cs.cls[i] & ~CLS_COMPOSITE) != cls)
				continue;
			/* kube ratchets the schema's errors by field; embedded
			   resources' never, list types' above */
			if (cls == CLS_SCHEMA && o->keep &&
			    !o->keep(o->ud, c->field))
				continue;
			bool dup = false;
			for (size_t j = 0; j < i && !dup; j++)
				dup = cs.cls[j] == cs.cls[i] &&
				      strcmp(cs.v[j].field, c->field) == 0 &&
				      strcmp(cs.v[j].reason, c->reason) == 0 &&
				      strcmp(cs.v[j].message, c->message) == 0;
			if (dup)
				continue;
			const char *field = c->field;
			if (o->root_composites && (cs.cls[i] & CLS_COMPOSITE))
				field = o->sub ? o->sub : "<nil>";
			srv_error_cause(err, c->reason, field, "%s", c->message);
		}
	}
	if (err->n_causes > before || cs.total > cs.n)
		rc = srv_error_set(err, LP_E_INVALID, "%s", "");
	else if (v.oom || v.path.oom)
		rc = srv_error_set(err, LP_E_NOMEM, "out of memory");
	causes_free(&cs);
	free(v.path.s);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Pruning.                                                                  */

struct pctx {
	void (*unknown)(void *ud, const char *path, bool embedded_meta);
	void *ud;
	struct sb path;
	bool keep_meta; /* a resource's metadata stays whole (kube's Prune
			   alone, without ObjectMeta's coercion) */
};

static void report_as(struct pctx *p, const char *k, bool embedded_meta)
{
	if (!p->unknown)
		return;
	size_t pl = p->path.len;
	path_key(&p->path, k);
	p->unknown(p->ud, sb_str(&p->path), embedded_meta);
	sb_cut(&p->path, pl);
}

static void report(struct pctx *p, const char *k)
{
	report_as(p, k, false);
}

static bool is_meta_field(const char *k)
{
	return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 ||
	       strcmp(k, "metadata") == 0;
}

static const char *const object_meta_fields[] = {
	"name", "generateName", "namespace", "selfLink", "uid",
	"resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields",
};

/* metadata keeps only ObjectMeta's fields. */
/* Whether a metadata member is what ObjectMeta's JSON encoding leaves
   out (omitempty, a zero creationTimestamp): null, "", 0, {} or []. */
static bool meta_empty(const char *k, const json_t *v)
{
	if (json_is_null(v))
		return true;
	if (json_is_string(v))
		return !*json_string_value(v);
	if (json_is_object(v))
		return json_object_size(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	/* deletionGracePeriodSeconds is a pointer: its 0 stays */
	return json_is_integer(v) && !json_integer_value(v) &&
	       strcmp(k, "deletionGracePeriodSeconds");
}

/*
 * Metadata as kube's objectmeta coercion leaves it (it goes through
 * ObjectMeta): unknown members dropped, a null value in labels or
 * annotations read as "", and, in an embedded resource (re-encoded from
 * the struct), the members the encoding leaves out gone.
 */
static void prune_meta(struct pctx *p, json_t *md)
{
	size_t pl = p->path.len;
	bool embedded = pl > 0;
	static const char *const maps[] = {"labels", "annotations"};
	for (size_t i = 0; i < 2; i++) {
		json_t *m = json_object_get(md, maps[i]);
		const char *mk;
		json_t *mv;
		json_object_foreach(m, mk, mv)
		{
			if (json_is_null(mv))
				json_object_set_new(m, mk, json_string(""));
		}
	}
	path_key(&p->path, "metadata");
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(md, tmp, k, v) {
		bool known = false;
		for (size_t i = 0; i < sizeof object_meta_fields /
					       sizeof *object_meta_fields; i++)
			known |= strcmp(k, object_meta_fields[i]) == 0;
		if (!known) {
			report_as(p, k, embedded);
			json_object_del(md, k);
		} else if (embedded && meta_empty(k, v)) {
			json_object_del(md, k);
		}
	}
	sb_cut(&p->path, pl);
}

/* Prune below the schema: every object loses all its keys; arrays of
   arrays are walked with an explicit stack, not recursion. */
static void prune_nil(struct pctx *p, json_t *x)
{
	struct frame {
		json_t *a;
		size_t i, pl;
	} *st = NULL;
	size_t n = 0, cap = 0, orig = p->path.len;
	json_t *cur = x;
	for (;;) {
		if (json_is_object(cur)) {
			const char *k;
			json_t *v;
			void *tmp;
			json_object_foreach_safe(cur, tmp, k, v) {
				report(p, k);
				json_object_del(cur, k);
			}
		} else if (json_is_array(cur) && json_array_size(cur)) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 8;
				struct frame *ns = realloc(st, nc * sizeof *ns);
				if (!ns)
					break; /* out of memory: stop pruning */
				st = ns;
				cap = nc;
			}
			st[n++] = (struct frame){cur, 0, p->path.len};
		}
		/* Next element to visit. */
		cur = NULL;
		while (n) {
			struct frame *f = &st[n - 1];
			if (f->i < json_array_size(f->a)) {
				sb_cut(&p->path, f->pl);
				path_index(&p->path, f->i);
				cur = json_array_get(f->a, f->i++);
				break;
			}
			sb_cut(&p->path, f->pl);
			n--;
		}
		if (!cur)
			break;
	}
	sb_cut(&p->path, orig);
	free(st);
}

static void prune_node(struct pctx *p, const struct node *n, json_t *x,
		       bool resource);

/* Under x-kubernetes-preserve-unknown-fields: unknown keys stay; declared
   ones are still pruned inside. */
static void skip_prune(struct pctx *p, const struct node *n, json_t *x,
		       bool resource)
{
	if (!n)
		return;
	size_t pl = p->path.len;
	if (json_is_object(x)) {
		const char *k;
		json_t *v;
		json_object_foreach(x, k, v) {
			if (resource && is_meta_field(k)) {
				if (strcmp(k, "metadata") == 0 &&
				    json_is_object(v) && !p->keep_meta)
					prune_meta(p, v);
				continue;
			}
			const struct node *sub = find_prop(n, k);
			if (!sub && n->addl == ADDL_NONE)
				continue;
			path_key(&p->path, k);
			if (sub)
				prune_node(p, sub, v, sub->embedded);
			else
				prune_node(p, n->addl_schema, v,
					   n->addl_schema && n->addl_schema->embedded);
			sb_cut(&p->path, pl);
		}
	} else if (json_is_array(x) && n->items) {
		for (size_t i = 0; i < json_array_size(x); i++) {
			path_index(&p->path, i);
			skip_prune(p, n->items, json_array_get(x, i),
				   n->items->embedded);
			sb_cut(&p->path, pl);
		}
	}
}

static void prune_node(struct pctx *p, const struct node *n, json_t *x,
		       bool resource)
{
	if (!n) {
		prune_nil(p, x);
		return;
	}
	if (n->preserve) {
		skip_prune(p, n, x, resource);
		return;
	}
	size_t pl = p->path.len;
	if (json_is_object(x)) {
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(x, tmp, k, v) {
			/* kube's Prune alone keeps a resource's apiVersion,
			   kind and metadata whatever they hold; served, a
			   wrong type is ObjectMeta's coercion to drop */
			if (resource && p->keep_meta && is_meta_field(k))
				continue;
			if (resource) {
				if ((strcmp(k, "apiVersion") == 0 ||
				     strcmp(k, "kind") == 0) &&
				    json_is_string(v))
					continue;
				if (strcmp(k, "metadata") == 0 &&
				    json_is_object(v)) {
					if (!p->keep_meta)
						prune_meta(p, v);
					continue;
				}
			}
			const struct node *sub = find_prop(n, k);
			if (sub || n->addl != ADDL_NONE) {
				if (!sub)
					sub = n->addl_schema;
				path_key(&p->path, k);
				prune_node(p, sub, v, sub && sub->embedded);
				sb_cut(&p->path, pl);
				continue;
			}
			/* kube does not report the root's own meta fields. */
			if (!is_meta_field(k) || pl > 0)
				report(p, k);
			json_object_del(x, k);
		}
	} else if (json_is_array(x)) {
		for (size_t i = 0; i < json_array_size(x); i++) {
			path_index(&p->path, i);
			prune_node(p, n->items, json_array_get(x, i),
				   n->items && n->items->embedded);
			sb_cut(&p->path, pl);
		}
	}
}

void srv_schema_prune(const struct srv_schema *s, json_t *obj,
		      void (*unknown)(void *ud, const char *path,
				      bool embedded_meta),
		      void *ud)
{
	struct pctx p = {.unknown = unknown, .ud = ud};
	prune_node(&p, s->root, obj, true);
	free(p.path.s);
}

void srv_schema_prune_plain(const struct srv_schema *s, json_t *obj,
			    bool resource_root)
{
	struct pctx p = {.keep_meta = true};
	prune_node(&p, s->root, obj, resource_root);
	free(p.path.s);
}

/* ------------------------------------------------------------------------ */
/* Null handling and defaulting.                                             */

static void drop_nulls(const struct node *n, json_t *x)
{
	if (!n)
		return;
	if (json_is_object(x)) {
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(x, tmp, k, v) {
			/* kube's getSchemaForField: the property, else the
			   additionalProperties schema */
			const struct node *sub = find_prop(n, k);
			if (!sub && n->addl == ADDL_SCHEMA)
				sub = n->addl_schema;
			if (!sub)
				continue;
			if (json_is_null(v) && !sub->nullable && !has_default(sub))
				json_object_del(x, k);
			else
				drop_nulls(sub, v);
		}
	} else if (json_is_array(x)) {
		for (size_t i = 0; i < json_array_size(x); i++)
			drop_nulls(n->items, json_array_get(x, i));
	}
}

static bool non_nullable_null(const json_t *x, const struct node *n)
{
	return json_is_null(x) && n && !n->nullable && n->dflt;
}

static void apply_defaults(const struct node *n, json_t *x)
{
	if (!n)
		return;
	if (json_is_object(x)) {
		for (size_t i = 0; i < n->n_props; i++) {
			const struct node *sub = n->props[i].n;
			if (!sub->dflt)
				continue;
			json_t *cur = json_object_get(x, n->props[i].name);
			if (!cur || non_nullable_null(cur, sub))
				json_object_set_new(x, n->props[i].name,
						    json_deep_copy(sub->dflt));
		}
		const char *k;
		json_t *v;
		json_object_foreach(x, k, v) {
			const struct node *sub = find_prop(n, k);
			if (sub) {
				apply_defaults(sub, v);
			} else if (n->addl == ADDL_SCHEMA) {
				sub = n->addl_schema;
				if (non_nullable_null(v, sub)) {
					/* Replacing the value of the current
					   key keeps the iteration valid. */
					json_object_set_new(x, k,
							    json_deep_copy(sub->dflt));
					v = json_object_get(x, k);
				}
				apply_defaults(sub, v);
			}
		}
	} else if (json_is_array(x)) {
		for (size_t i = 0; i < json_array_size(x); i++) {
			if (non_nullable_null(json_array_get(x, i), n->items))
				json_array_set_new(x, i,
						   json_deep_copy(n->items->dflt));
			apply_defaults(n->items, json_array_get(x, i));
		}
	}
}

void srv_schema_default(const struct srv_schema *s, json_t *obj)
{
	drop_nulls(s->root, obj);
	srv_schema_default_keep_nulls(s, obj);
}

void srv_schema_default_keep_nulls(const struct srv_schema *s, json_t *obj)
{
	apply_defaults(s->root, obj);
	/* kube's storage decoder coerces an embedded resource's metadata to
	   ObjectMeta on every read, so what a default put there beyond it
	   never shows */
	if (s->meta_defaults)
		srv_schema_prune(s, obj, NULL, NULL);
}
