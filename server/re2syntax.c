/*
 * Go's regexp syntax errors (regexp.Compile, Perl flags), for kube's CRD
 * check of a schema's pattern. A parser of the syntax alone: it builds
 * nothing and refuses only what Go's regexp/syntax refuses, naming the
 * same offending text, so a CRD Go accepts is never refused here. Where
 * the check would need the compiled program (size limits), it accepts.
 */
#include "registry/json.h"
#include "schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nested capturing groups Go refuses (its parse tree is then more than
   1000 high); the levels go one past them, deeper nesting of other groups
   is not checked. */
#define MAX_CAPTURES 1000
#define MAX_LEVELS (MAX_CAPTURES + 1)
#define MAX_REPEAT 1000

struct level {
	bool atom;	 /* the top of this level repeats (no '(' or '|') */
	bool capture;	 /* opened by a capturing group */
	long top_prod;	 /* the top atom's product of nested {n,m} counts */
	long max_prod;	 /* the largest product in the level so far */
};

struct re2 {
	char *msg;
	size_t size;
	struct level lv[MAX_LEVELS];
	size_t depth; /* lv[depth] is the current level */
	size_t captures; /* capturing groups open */
};

static bool fail(struct re2 *r, const char *code, const char *from,
		 size_t len)
{
	snprintf(r->msg, r->size, "error parsing regexp: %s: `%.*s`", code,
		 (int)len, from);
	return true;
}

static void push_atom(struct re2 *r, long prod)
{
	struct level *l = &r->lv[r->depth];
	l->atom = true;
	l->top_prod = prod;
	if (prod > l->max_prod)
		l->max_prod = prod;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}


/* Length of one UTF-8 sequence at p (at least 1; JSON text is valid). */
static size_t rune_len(const char *p)
{
	unsigned char c = (unsigned char)*p;
	size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	for (size_t i = 1; i < n; i++)
		if (!p[i])
			return i;
	return n;
}

/* The code point of a UTF-8 sequence (for class range order). */
static long rune_at(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	if (n == 1)
		return u[0];
	long v = u[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++)
		v = (v << 6) | (u[i] & 0x3f);
	return v;
}

/* Go's parseEscape at p ("\\..."): *rune and *end on success. */
static bool escape(struct re2 *r, const char *p, long *rune,
		   const char **end)
{
	const char *t = p + 1;
	if (!*t)
		return !fail(r, "trailing backslash at end of expression", "",
			     0);
	char c = *t;
	size_t cl = rune_len(t);
	t += cl;
	switch (c) {
	case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		if (!is_octal(*t))
			break; /* a backreference */
		/* fall through */
	case '0': {
		long v = c - '0';
		for (int i = 1; i < 3 && is_octal(*t); i++)
			v = v * 8 + (*t++ - '0');
		*rune = v;
		*end = t;
		return true;
	}
	case 'x': {
		if (!*t)
			break;
		if (*t == '{') {
			t++;
			long v = 0;
			int n = 0;
			for (;; t++) {
				if (!*t)
					goto bad;
				if (*t == '}')
					break;
				int h = reg_hex_digit(*t);
				v = v * 16 + h;
				if (h < 0 || v > 0x10ffff) {
					t += rune_len(t);
					goto bad;
				}
				n++;
			}
			t++;
			if (!n)
				break;
			*rune = v;
			*end = t;
			return true;
		}
		int x = reg_hex_digit(*t);
		t += rune_len(t);
		int y = *t ? reg_hex_digit(*t) : -1;
		if (*t)
			t += rune_len(t);
		if (x < 0 || y < 0)
			break;
		*rune = x * 16 + y;
		*end = t;
		return true;
	}
	case 'a': *rune = 7; *end = t; return true;
	case 'f': *rune = 12; *end = t; return true;
	case 'n': *rune = 10; *end = t; return true;
	case 'r': *rune = 13; *end = t; return true;
	case 't': *rune = 9; *end = t; return true;
	case 'v': *rune = 11; *end = t; return true;
	default:
		if ((unsigned char)c < 0x80 &&
		    !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z'))) {
			*rune = (unsigned char)c;
			*end = t;
			return true;
		}
	}
bad:
	return !fail(r, "invalid escape sequence", p, (size_t)(t - p));
}

/* The names Go's regexp/syntax takes in \p{...} (Go 1.24, kube 1.33's:
   Unicode 15.0.0): "Any", unicode.Categories and unicode.Scripts, in
   strcmp order, matched with their case. */
static const char *const unicode_names[] = {
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Any", "Arabic", "Armenian",
    "Avestan", "Balinese", "Bamum", "Bassa_Vah", "Batak", "Bengali",
    "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid", "C",
    "Canadian_Aboriginal", "Carian", "Caucasian_Albanian", "Cc", "Cf",
    "Chakma", "Cham", "Cherokee", "Chorasmian", "Co", "Common", "Coptic", "Cs",
    "Cuneiform", "Cypriot", "Cypro_Minoan", "Cyrillic", "Deseret",
    "Devanagari", "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs",
    "Elbasan", "Elymaic", "Ethiopic", "Georgian", "Glagolitic", "Gothic",
    "Grantha", "Greek", "Gujarati", "Gunjala_Gondi", "Gurmukhi", "Han",
    "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana",
    "Imperial_Aramaic", "Inherited", "Inscriptional_Pahlavi",
    "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada", "Katakana",
    "Kawi", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer", "Khojki",
    "Khudawadi", "L", "Lao", "Latin", "Lepcha", "Limbu", "Linear_A",
    "Linear_B", "Lisu", "Ll", "Lm", "Lo", "Lt", "Lu", "Lycian", "Lydian", "M",
    "Mahajani", "Makasar", "Malayalam", "Mandaic", "Manichaean", "Marchen",
    "Masaram_Gondi", "Mc", "Me", "Medefaidrin", "Meetei_Mayek",
    "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Mn",
    "Modi", "Mongolian", "Mro", "Multani", "Myanmar", "N", "Nabataean",
    "Nag_Mundari", "Nandinagari", "Nd", "New_Tai_Lue", "Newa", "Nko", "Nl",
    "No", "Nushu", "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki",
    "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic",
    "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic",
    "Old_Uyghur", "Oriya", "Osage", "Osmanya", "P", "Pahawh_Hmong",
    "Palmyrene", "Pau_Cin_Hau", "Pc", "Pd", "Pe", "Pf", "Phags_Pa",
    "Phoenician", "Pi", "Po", "Ps", "Psalter_Pahlavi", "Rejang", "Runic", "S",
    "Samaritan", "Saurashtra", "Sc", "Sharada", "Shavian", "Siddham",
    "SignWriting", "Sinhala", "Sk", "Sm", "So", "Sogdian", "Sora_Sompeng",
    "Soyombo", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa",
    "Tai_Le", "Tai_Tham", "Tai_Viet", "Takri", "Tamil", "Tangsa", "Tangut",
    "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta", "Toto",
    "Ugaritic", "Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi",
    "Z", "Zanabazar_Square", "Zl", "Zp", "Zs",
};

static int name_cmp(const void *key, const void *elem)
{
	const char *k = key, *e = *(const char *const *)elem;
	return strcmp(k, e);
}

/* \p and \P: a one-letter name is a general category, a braced one (its
   negation with ^) one of unicode_names. *end past it; false with r->msg
   set. */
static bool unicode_class(struct re2 *r, const char *p, const char **end)
{
	const char *t = p + 2;
	if (*t != '{') {
		size_t n = *t ? rune_len(t) : 0;
		if (!n || !strchr("CLMNPSZ", *t))
			return !fail(r, "invalid character class range", p,
				     (size_t)(t + n - p));
		*end = t + n;
		return true;
	}
	const char *close = strchr(t, '}');
	if (!close)
		return !fail(r, "invalid character class range", p, strlen(p));
	const char *name = t + 1;
	if (*name == '^')
		name++;
	char key[64];
	size_t n = (size_t)(close - name);
	if (n && n < sizeof key) {
		memcpy(key, name, n);
		key[n] = 0;
	}
	if (!n || n >= sizeof key ||
	    !bsearch(key, unicode_names,
		     sizeof unicode_names / sizeof unicode_names[0],
		     sizeof unicode_names[0], name_cmp))
		return !fail(r, "invalid character class range", p,
			     (size_t)(close + 1 - p));
	*end = close + 1;
	return true;
}

static bool perl_class(const char *p)
{
	return p[0] == '\\' && p[1] && strchr("dDsSwW", p[1]);
}

static const char *const posix_names[] = {
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
    "lower", "print", "punct", "space", "upper", "word", "xdigit"};

/* One character of a class at *t, an escape or a rune: its code point
   in *rune, *t past it. */
static bool class_char(struct re2 *r, const char **t, long *rune)
{
	if (**t == '\\')
		return escape(r, *t, rune, t);
	size_t n = rune_len(*t);
	*rune = rune_at(*t, n);
	*t += n;
	return true;
}

/* A class at p ("[..."): *end past its ']'. */
static bool char_class(struct re2 *r, const char *p, const char **end)
{
	const char *t = p + 1;
	if (*t == '^')
		t++;
	bool first = true;
	while (!*t || *t != ']' || first) {
		first = false;
		if (t[0] == '[' && t[1] == ':') {
			const char *e = strstr(t + 2, ":]");
			if (e) {
				const char *n = t + 2;
				if (*n == '^')
					n++;
				bool known = false;
				for (size_t i = 0; i < sizeof posix_names /
						       sizeof *posix_names; i++)
					known |= strlen(posix_names[i]) ==
							 (size_t)(e - n) &&
						 !strncmp(posix_names[i], n,
							  (size_t)(e - n));
				if (!known)
					return !fail(r,
						     "invalid character class range",
						     t, (size_t)(e + 2 - t));
				t = e + 2;
				continue;
			}
		}
		if (t[0] == '\\' && (t[1] == 'p' || t[1] == 'P')) {
			if (!unicode_class(r, t, &t))
				return false;
			continue;
		}
		if (perl_class(t)) {
			t += 2;
			continue;
		}
		const char *rng = t;
		long lo, hi;
		if (!*t)
			return !fail(r, "missing closing ]", p, strlen(p));
		if (!class_char(r, &t, &lo))
			return false;
		hi = lo;
		if (t[0] == '-' && t[1] && t[1] != ']') {
			t++;
			if (!class_char(r, &t, &hi))
				return false;
			if (hi < lo)
				return !fail(r, "invalid character class range",
					     rng, (size_t)(t - rng));
		}
	}
	*end = t + 1;
	return true;
}

/* Go's parseInt: digits without a leading zero; -1 when too big. */
static bool repeat_int(const char **s, long *v)
{
	const char *t = *s;
	if (*t < '0' || *t > '9')
		return false;
	if (t[0] == '0' && t[1] >= '0' && t[1] <= '9')
		return false;
	long n = 0;
	for (; *t >= '0' && *t <= '9'; t++)
		n = n < 0 || n >= 100000000 ? -1 : n * 10 + (*t - '0');
	*v = n;
	*s = t;
	return true;
}

/* "{n}", "{n,}", "{n,m}" at p: its end, or NULL when '{' is a literal. */
static const char *repeat_braces(const char *p, long *min, long *max)
{
	const char *s = p + 1;
	if (!repeat_int(&s, min) || !*s)
		return NULL;
	if (*s != ',') {
		*max = *min;
	} else {
		s++;
		if (!*s)
			return NULL;
		if (*s == '}') {
			*max = -1;
		} else {
			if (!repeat_int(&s, max))
				return NULL;
			if (*max < 0)
				*min = -1;
		}
	}
	return *s == '}' ? s + 1 : NULL;
}

/* A repetition operator from op to end (its lazy '?' included);
   last is where the repetition just before it began, or NULL. */
static bool repetition(struct re2 *r, const char *op, const char **end,
		       const char *last, long max_count)
{
	const char *after = *end;
	if (*after == '?')
		after++;
	*end = after;
	if (last)
		return !fail(r, "invalid nested repetition operator", last,
			     (size_t)(after - last));
	struct level *l = &r->lv[r->depth];
	if (!l->atom)
		return !fail(r, "missing argument to repetition operator", op,
			     (size_t)(after - op));
	if (max_count < 0) /* *, +, ? */
		return true;
	long prod = max_count ? max_count * l->top_prod : 1;
	if (max_count && prod > MAX_REPEAT)
		return !fail(r, "invalid repeat count", op,
			     (size_t)(after - op));
	push_atom(r, prod);
	return true;
}

/* Perl groups and flags at p ("(?"): *end past them. */
static bool perl_group(struct re2 *r, const char *p, const char **end,
		       bool *opened)
{
	*opened = false;
	bool named = p[2] == '<' || (p[2] == 'P' && p[3] == '<');
	if (named) {
		const char *gt = strchr(p, '>');
		if (!gt)
			return !fail(r, "invalid named capture", p, strlen(p));
		const char *name = p + (p[2] == '<' ? 3 : 4);
		bool ok = name < gt;
		for (const char *c = name; c < gt; c++)
			ok &= (unsigned char)*c >= 0x80 || *c == '_' ||
			      (*c >= '0' && *c <= '9') ||
			      (*c >= 'a' && *c <= 'z') ||
			      (*c >= 'A' && *c <= 'Z');
		if (!ok)
			return !fail(r, "invalid named capture", p,
				     (size_t)(gt + 1 - p));
		*opened = true;
		*end = gt + 1;
		return true;
	}
	const char *t = p + 2;
	bool neg = false, saw = false;
	while (*t) {
		char c = *t;
		t += rune_len(t);
		if (c == 'i' || c == 'm' || c == 's' || c == 'U') {
			saw = true;
		} else if (c == '-') {
			if (neg)
				break;
			neg = true;
			saw = false;
		} else if (c == ':' || c == ')') {
			if (neg && !saw)
				break;
			*opened = c == ':';
			*end = t;
			return true;
		} else {
			break;
		}
	}
	return !fail(r, "invalid or unsupported Perl syntax", p,
		     (size_t)(t - p));
}

static bool open_level(struct re2 *r, bool capture)
{
	if (r->depth + 1 >= MAX_LEVELS)
		return false;
	r->lv[++r->depth] = (struct level){.capture = capture};
	r->captures += capture;
	return true;
}

bool srv_re2_error(const char *pattern, char *msg, size_t size)
{
	struct re2 *r = calloc(1, sizeof *r);
	if (!r)
		return false; /* unchecked, as Go's limits are */
	r->msg = msg;
	r->size = size;
	const char *t = pattern, *last = NULL;
	bool bad = false;
	while (*t && !bad) {
		const char *repeat = NULL, *start = t;
		switch (*t) {
		case '(':
			if (t[1] == '?') {
				bool opened;
				if (!perl_group(r, t, &t, &opened)) {
					bad = true;
					break;
				}
				/* a named group captures */
				bool named =
				    start[2] == '<' ||
				    (start[2] == 'P' && start[3] == '<');
				if (opened && !open_level(r, named))
					goto give_up;
			} else {
				if (!open_level(r, true))
					goto give_up;
				t++;
			}
			if (r->captures >= MAX_CAPTURES) {
				bad = fail(r, "expression nests too deeply",
					   pattern, strlen(pattern));
				break;
			}
			break;
		case '|': {
			struct level *l = &r->lv[r->depth];
			l->atom = false;
			t++;
			break;
		}
		case ')': {
			if (!r->depth) {
				bad = fail(r, "unexpected )", pattern,
					   strlen(pattern));
				break;
			}
			long prod = r->lv[r->depth].max_prod;
			r->captures -= r->lv[r->depth].capture;
			r->depth--;
			push_atom(r, prod ? prod : 1);
			t++;
			break;
		}
		case '[':
			if (!char_class(r, t, &t))
				bad = true;
			else
				push_atom(r, 1);
			break;
		case '*':
		case '+':
		case '?':
			t++;
			bad = !repetition(r, start, &t, last, -1);
			repeat = start;
			break;
		case '{': {
			long min, max;
			const char *e = repeat_braces(t, &min, &max);
			if (!e) {
				push_atom(r, 1); /* a literal '{' */
				t++;
				break;
			}
			if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT ||
			    (max >= 0 && min > max)) {
				bad = fail(r, "invalid repeat count", t,
					   (size_t)(e - t));
				break;
			}
			t = e;
			bad = !repetition(r, start, &t, last,
					  max < 0 ? min : max);
			repeat = start;
			break;
		}
		case '\\': {
			char e = t[1];
			if (e == 'A' || e == 'b' || e == 'B' || e == 'z') {
				push_atom(r, 1);
				t += 2;
				break;
			}
			if (e == 'C') {
				bad = fail(r, "invalid escape sequence", t, 2);
				break;
			}
			if (e == 'Q') {
				const char *q = strstr(t + 2, "\\E");
				const char *qe = q ? q : t + strlen(t);
				if (qe > t + 2)
					push_atom(r, 1);
				t = q ? q + 2 : qe;
				break;
			}
			if (e == 'p' || e == 'P') {
				if (!unicode_class(r, t, &t))
					bad = true;
				else
					push_atom(r, 1);
				break;
			}
			if (perl_class(t)) {
				push_atom(r, 1);
				t += 2;
				break;
			}
			long rune;
			if (!escape(r, t, &rune, &t))
				bad = true;
			else
				push_atom(r, 1);
			break;
		}
		default:
			push_atom(r, 1);
			t += rune_len(t);
		}
		last = repeat;
	}
	if (!bad && r->depth)
		bad = fail(r, "missing closing )", pattern, strlen(pattern));
	free(r);
	return bad;
give_up:
	free(r);
	return false;
}
