/*
 * test_json.c -- tests of server/registry/json.c: reg_json_load gives what
 * json_loadb gives (tree, key order, types, or the same error) and takes its
 * fast path exactly where it should; reg_json_dump writes json_dumps(...,
 * JSON_COMPACT)'s bytes.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/registry/json.h"

#define ALLF (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* Each input is loaded under every flag set below. */
static const size_t flag_sets[] = {
    0, JSON_REJECT_DUPLICATES, JSON_ALLOW_NUL, JSON_DECODE_ANY, ALLF,
};

/* And these too, for the same results (fast-path expectations: eof_cases). */
static const size_t more_flag_sets[] = {
    JSON_DISABLE_EOF_CHECK,
    JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
    JSON_DISABLE_EOF_CHECK | ALLF,
};

enum path {
	FAST,	/* the fast path takes it under every flag set */
	GIVEUP, /* it gives up under every flag set */
	ANY,	/* fast only with JSON_DECODE_ANY (a bare value) */
	NODUP,	/* fast only without JSON_REJECT_DUPLICATES */
};

struct lcase {
	const char *in;
	size_t len; /* 0: strlen(in) */
	enum path path;
	const char *why;
};

static const struct lcase lcases[] = {
    /* Fast-path constructs. */
    {"{}", 0, FAST, "empty object"},
    {"[]", 0, FAST, "empty array"},
    {" \t\r\n{ \t\r\n} \t\r\n", 0, FAST, "whitespace everywhere"},
    {"{\"a\":1,\"b\":[1,2,3],\"c\":{\"d\":null}}", 0, FAST, "nesting"},
    {"{\"z\":1,\"a\":2,\"m\":3}", 0, FAST, "key order kept"},
    {"[true,false,null]", 0, FAST, "literals"},
    {"[0,-0,1,-1,123456789012345678,-123456789012345678]", 0, FAST,
     "integers, -0"},
    {"[\"\",\"abc\",\"a b ~\\u007f\"]", 0, FAST, "ASCII strings"},
    {"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", 0, FAST, "simple escapes"},
    {"[\"x\\ny\\tz\"]", 0, FAST, "escapes inside text"},
    {"[\"\\u00e9\\u4e2d\\ud83d\\ude00\\u0041\\u001f\"]", 0, FAST,
     "\\u escapes, BMP and surrogate pair"},
    {"[\"\\u00E9\\uABCD\"]", 0, FAST, "\\u with upper-case hex"},
    {"[\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"]", 0, FAST, "raw UTF-8"},
    {"[\"\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80\"]", 0, FAST,
     "UTF-8 edges: U+10FFFF, U+D7FF, U+E000"},
    {"{\"k\\n\\u00e9\":1,\"k\":{\"k\\t\":2}}", 0, FAST, "escaped keys"},
    {"{\"a\":1,\"b\":2,\"a\":3}", 0, NODUP, "duplicate key"},
    {"{\"a\":{\"x\":1},\"a\":[2]}", 0, NODUP, "duplicate key, new type"},
    {"{\"a\\u0062\":1,\"ab\":2}", 0, NODUP, "duplicate key after escape"},
    {"1", 0, ANY, "bare integer"},
    {" \"s\" ", 0, ANY, "bare string"},
    {"true", 0, ANY, "bare true"},
    {"null", 0, ANY, "bare null"},
    {"-5", 0, ANY, "bare negative integer"},

    /* Give-up rules: each also errors in jansson or is its business. */
    {"", 0, GIVEUP, "empty input"},
    {"   ", 0, GIVEUP, "only whitespace"},
    {"[1.5]", 0, GIVEUP, "fraction"},
    {"[1e3]", 0, GIVEUP, "exponent"},
    {"[1E+3]", 0, GIVEUP, "exponent upper case"},
    {"[-0.0]", 0, GIVEUP, "negative zero real"},
    {"[1.]", 0, GIVEUP, "bad fraction"},
    {"[1234567890123456789]", 0, FAST, "19 digits"},
    {"[9223372036854775807,-9223372036854775808]", 0, FAST, "int64 limits"},
    {"[0123]", 0, GIVEUP, "leading zero"},
    {"[-]", 0, GIVEUP, "bare minus"},
    {"[+1]", 0, GIVEUP, "plus sign"},
    {"[1x]", 0, GIVEUP, "letter after number"},
    {"[truex]", 0, GIVEUP, "long word"},
    {"[tru]", 0, GIVEUP, "short word"},
    {"[nul", 0, GIVEUP, "truncated word"},
    {"[\"\\u0000\"]", 0, GIVEUP, "\\u0000 in a value"},
    {"{\"\\u0000\":1}", 0, GIVEUP, "\\u0000 in a key"},
    {"[\"\\ud800\"]", 0, GIVEUP, "lone high surrogate"},
    {"[\"\\udc00\"]", 0, GIVEUP, "lone low surrogate"},
    {"[\"\\ud800\\u0041\"]", 0, GIVEUP, "high surrogate, no low"},
    {"[\"\\u12\"]", 0, GIVEUP, "short \\u"},
    {"[\"\\u12g4\"]", 0, GIVEUP, "bad hex"},
    {"[\"\\x\"]", 0, GIVEUP, "unknown escape"},
    {"[\"\\", 0, GIVEUP, "escape at the end"},
    {"[\"a\nb\"]", 0, GIVEUP, "raw newline"},
    {"[\"a\tb\"]", 0, GIVEUP, "raw tab"},
    {"[\"a\0b\"]", 7, GIVEUP, "raw NUL"},
    {"[\"\x80\"]", 0, GIVEUP, "stray continuation byte"},
    {"[\"\xc0\xaf\"]", 0, GIVEUP, "overlong C0"},
    {"[\"\xe0\x80\xaf\"]", 0, GIVEUP, "overlong 3 bytes"},
    {"[\"\xf0\x80\x80\xaf\"]", 0, GIVEUP, "overlong 4 bytes"},
    {"[\"\xed\xa0\x80\"]", 0, GIVEUP, "surrogate in UTF-8"},
    {"[\"\xf4\x90\x80\x80\"]", 0, GIVEUP, "above U+10FFFF"},
    {"[\"\xf5\x80\x80\x80\"]", 0, GIVEUP, "F5 lead"},
    {"[\"\xc3\"]", 0, GIVEUP, "truncated sequence"},
    {"[\"\xc3", 0, GIVEUP, "truncated at the end"},
    {"[\xc3\xa9]", 0, GIVEUP, "UTF-8 outside a string"},
    {"[\"abc", 0, GIVEUP, "unterminated string"},
    {"{\"a\":1}x", 0, GIVEUP, "trailing garbage"},
    {"{\"a\":1}{}", 0, GIVEUP, "second value"},
    {"{\"a\":1}\0", 8, GIVEUP, "trailing NUL"},
    {"{\"a\" 1}", 0, GIVEUP, "missing colon"},
    {"{\"a\":1,}", 0, GIVEUP, "trailing comma in object"},
    {"[1,]", 0, GIVEUP, "trailing comma in array"},
    {"[1 2]", 0, GIVEUP, "missing comma"},
    {"{a:1}", 0, GIVEUP, "bare key"},
    {"{1:1}", 0, GIVEUP, "number key"},
    {"[", 0, GIVEUP, "unclosed array"},
    {"{\"a\":", 0, GIVEUP, "unclosed object"},
    {"]", 0, GIVEUP, "stray bracket"},
    {"\"s\"x", 0, GIVEUP, "bare string then garbage"},
    {"[\f]", 0, GIVEUP, "form feed is not JSON whitespace"},
    {"\xef\xbb\xbf{}", 0, GIVEUP, "byte order mark"},
};

/* The two loads of one input agree: trees, or errors (text, place). */
static void expect_same_load(const char *in, size_t len, size_t flags,
			     const char *why)
{
	json_error_t e1, e2;
	memset(&e1, 0x5a, sizeof e1);
	memset(&e2, 0x5a, sizeof e2);
	json_t *a = reg_json_load(in, len, flags, &e1);
	if (!a && memchr(in, '\0', len)) {
		/* where the two part: a NUL byte, which jansson may skip */
		cr_assert_null(a, "%s", why);
		cr_assert_str_eq(e1.text,
				 "invalid character '\\x00' in JSON text");
		return;
	}
	json_t *b = json_loadb(in, len, flags, &e2);
	cr_assert_eq(!a, !b, "%s (flags %zx): reg_json_load %s, json_loadb %s",
		     why, flags, a ? "a tree" : "NULL", b ? "a tree" : "NULL");
	cr_assert(reg__json_identical(a, b), "%s (flags %zx): trees differ",
		  why, flags);
	cr_assert_str_eq(e1.text, e2.text, "%s", why);
	cr_assert_str_eq(e1.source, e2.source, "%s", why);
	cr_assert_eq(e1.line, e2.line, "%s", why);
	cr_assert_eq(e1.column, e2.column, "%s", why);
	cr_assert_eq(e1.position, e2.position, "%s", why);
	cr_assert_eq(json_error_code(&e1), json_error_code(&e2), "%s", why);
	if (a && (json_is_object(a) || json_is_array(a))) {
		size_t n;
		char *d1 = reg_json_dump(a, &n);
		char *d2 = json_dumps(b, JSON_COMPACT);
		cr_assert(d1 && d2, "%s", why);
		cr_assert(reg__json_dump_matches(d1, d2), "%s: %s vs %s", why,
			  d1, d2);
		cr_assert_eq(n, strlen(d1));
		free(d1);
		free(d2);
	}
	json_decref(a);
	json_decref(b);
}

/* Integers beyond int64, which jansson refuses, load as reals, as Go reads
   them (json.h); reg_json_dump writes them back as Go does. */
Test(json_load, integers_beyond_int64_load_as_reals)
{
	static const struct {
		const char *in, *dump;
	} cases[] = {
	    {"[99999999999999999999]", "[100000000000000000000]"},
	    {"[9223372036854775808]", "[9223372036854776000]"},
	    {"[-9223372036854775809]", "[-9223372036854776000]"},
	    {"{\"s\":\"12345678901234567890\",\"n\":12345678901234567890}",
	     "{\"s\":\"12345678901234567890\",\"n\":12345678901234567000}"},
	    {"[1e2,9223372036854775807,-123456789012345678901234,0.5]",
	     "[100,9223372036854775807,-1.2345678901234569e+23,0.5]"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		json_error_t e;
		json_t *a = reg_json_load(cases[i].in, strlen(cases[i].in),
					  JSON_REJECT_DUPLICATES, &e);
		cr_assert_not_null(a, "%s: %s", cases[i].in, e.text);
		cr_assert_eq(e.position, (int)strlen(cases[i].in));
		char *d = reg_json_dump(a, NULL);
		cr_assert_str_eq(d, cases[i].dump);
		/* 100 reads back an integer, which dumps the same */
		json_t *back = reg_json_load(d, strlen(d), 0, NULL);
		char *d2 = reg_json_dump(back, NULL);
		cr_assert_str_eq(d2, d, "%s reads back", d);
		free(d2);
		free(d);
		json_decref(back);
		json_decref(a);
	}
	/* An error after one is placed in the caller's text. */
	const char *bad = "[99999999999999999999, 1, x]";
	json_error_t e;
	cr_assert_null(reg_json_load(bad, strlen(bad), 0, &e));
	cr_assert_eq(e.position, 27, "%d", e.position);
	cr_assert_eq(e.column, 27, "%d", e.column);
	cr_assert(strstr(e.text, "invalid token"), "%s", e.text);
}

static bool want_fast(enum path p, size_t flags)
{
	switch (p) {
	case FAST:
		return true;
	case GIVEUP:
		return false;
	case ANY:
		return flags & JSON_DECODE_ANY;
	case NODUP:
		return !(flags & JSON_REJECT_DUPLICATES);
	}
	return false;
}

Test(json_load, each_case_matches_jansson_under_every_flag_set)
{
	for (size_t i = 0; i < sizeof lcases / sizeof *lcases; i++) {
		const struct lcase *c = &lcases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets;
		     f++)
			expect_same_load(c->in, len, flag_sets[f], c->why);
		for (size_t f = 0;
		     f < sizeof more_flag_sets / sizeof *more_flag_sets; f++)
			expect_same_load(c->in, len, more_flag_sets[f], c->why);
	}
}

/* JSON_DISABLE_EOF_CHECK: an object or array is taken whatever follows it;
   a bare value never (jansson's lexer reads on after it). */
static const struct lcase eof_cases[] = {
    {"{\"a\":1}x", 0, FAST, "garbage after an object"},
    {" [1,2] ]]", 0, FAST, "brackets after an array"},
    {"{}{}", 0, FAST, "a second object"},
    {"{} \xff\xfe", 0, FAST, "invalid UTF-8 after the object"},
    {"{\"a\":{\"b\":[]}},\"x\":1}", 0, FAST, "the informer's case"},
    {"{\"a\":1", 0, GIVEUP, "unclosed object"},
    {"1x", 0, GIVEUP, "bare number then letter"},
    {"truex", 0, GIVEUP, "bare word then letter"},
    {"\"s\" x", 0, GIVEUP, "bare string"},
    {"", 0, GIVEUP, "empty"},
};

Test(json_load, disable_eof_check_takes_objects_and_arrays_only)
{
	for (size_t i = 0; i < sizeof eof_cases / sizeof *eof_cases; i++) {
		const struct lcase *c = &eof_cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		for (size_t f = 0;
		     f < sizeof more_flag_sets / sizeof *more_flag_sets; f++) {
			size_t flags = more_flag_sets[f];
			json_t *v = reg__json_load_fast(c->in, len, flags);
			cr_assert_eq(v != NULL, c->path == FAST,
				     "%s (flags %zx): fast path %s", c->why,
				     flags, v ? "took it" : "gave up");
			json_decref(v);
			expect_same_load(c->in, len, flags, c->why);
		}
	}
}

Test(json_load, fast_path_takes_and_gives_up_where_it_should)
{
	for (size_t i = 0; i < sizeof lcases / sizeof *lcases; i++) {
		const struct lcase *c = &lcases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets;
		     f++) {
			json_t *v =
			    reg__json_load_fast(c->in, len, flag_sets[f]);
			cr_assert_eq(v != NULL,
				     want_fast(c->path, flag_sets[f]),
				     "%s (flags %zx): fast path %s", c->why,
				     flag_sets[f], v ? "took it" : "gave up");
			json_t *j = json_loadb(c->in, len, flag_sets[f], NULL);
			if (v)
				cr_assert(reg__json_identical(v, j), "%s",
					  c->why);
			json_decref(v);
			json_decref(j);
		}
	}
}

Test(json_load, other_flags_and_null_go_to_jansson)
{
	json_error_t e;
	cr_assert_null(reg__json_load_fast("{}", 2, JSON_DECODE_INT_AS_REAL));
	cr_assert_null(reg__json_load_fast("[1]", 3, JSON_DECODE_INT_AS_REAL));
	json_t *v = reg_json_load("[1]", 3, JSON_DECODE_INT_AS_REAL, NULL);
	cr_assert(json_is_real(json_array_get(v, 0)));
	json_decref(v);
	v = reg_json_load("{}x", 3, JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert(json_is_object(v));
	json_decref(v);
	cr_assert_null(reg_json_load(NULL, 0, 0, &e));
	cr_assert_str_eq(e.text, "wrong arguments");
}

Test(json_load, duplicate_key_replaces_in_place)
{
	json_t *v = reg_json_load("{\"a\":1,\"b\":2,\"a\":3}", 19, 0, NULL);
	cr_assert_not_null(v);
	const char *k = json_object_iter_key(json_object_iter(v));
	cr_assert_str_eq(k, "a");
	cr_assert_eq(json_integer_value(json_object_get(v, "a")), 3);
	cr_assert_eq(json_object_size(v), 2);
	json_decref(v);
	json_error_t e;
	cr_assert_null(reg_json_load("{\"a\":1,\"b\":2,\"a\":3}", 19,
				     JSON_REJECT_DUPLICATES, &e));
	cr_assert(strstr(e.text, "duplicate object key"), "%s", e.text);
}

/* n levels of arrays, or of objects {"a":...}, around a 1. */
static char *nested(int n, bool objects)
{
	char *s = malloc((size_t)n * 6 + 2);
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		memcpy(s + k, objects ? "{\"a\":" : "[", objects ? 5 : 1);
		k += objects ? 5 : 1;
	}
	s[k++] = '1';
	for (int i = 0; i < n; i++)
		s[k++] = objects ? '}' : ']';
	s[k] = 0;
	return s;
}

Test(json_load, nests_64_levels_on_the_fast_path_and_hands_on_deeper)
{
	for (int objects = 0; objects < 2; objects++) {
		for (int n = 63; n <= 66; n++) {
			char *s = nested(n, objects);
			json_t *v = reg__json_load_fast(s, strlen(s), 0);
			cr_assert_eq(v != NULL, n <= 64, "%d levels: %s", n,
				     v ? "fast" : "gave up");
			json_decref(v);
			expect_same_load(s, strlen(s), 0, "nesting");
			v = reg_json_load(s, strlen(s), 0, NULL);
			cr_assert_not_null(v, "%d levels", n);
			json_decref(v);
			free(s);
		}
	}
}

Test(json_load, long_escaped_string_outgrows_the_inline_scratch)
{
	size_t n = 5000;
	char *in = malloc(n * 2 + 8);
	size_t k = 0;
	in[k++] = '[';
	in[k++] = '"';
	for (size_t i = 0; i < n; i++) {
		in[k++] = '\\';
		in[k++] = i % 2 ? 'n' : 't';
	}
	in[k++] = '"';
	in[k++] = ']';
	json_t *v = reg__json_load_fast(in, k, 0);
	cr_assert_not_null(v);
	cr_assert_eq(json_string_length(json_array_get(v, 0)), n);
	json_decref(v);
	expect_same_load(in, k, 0, "long escaped string");
	free(in);
}

/* ------------------------------------------------------------ dump */

static void expect_same_dump(const json_t *v, const char *why)
{
	size_t n = 12345;
	char *d1 = reg_json_dump(v, &n);
	char *d2 = json_dumps(v, JSON_COMPACT);
	cr_assert_eq(!d1, !d2, "%s: reg_json_dump %s, json_dumps %s", why,
		     d1 ? d1 : "NULL", d2 ? d2 : "NULL");
	if (d1) {
		cr_assert(reg__json_dump_matches(d1, d2), "%s: %s vs %s", why,
			  d1, d2);
		cr_assert_eq(n, strlen(d1), "%s", why);
	}
	free(d1);
	free(d2);
}

static json_t *arr1(json_t *v)
{
	json_t *a = json_array();
	json_array_append_new(a, v);
	return a;
}

Test(json_dump, strings_escape_as_jansson_does)
{
	char all[0x81];
	for (int i = 0; i < 0x80; i++)
		all[i] = (char)(i + 1 == 0x80 ? 0x7f : i + 1);
	all[0x80] = 0;
	json_t *a = json_array();
	json_array_append_new(a, json_stringn(all, 0x80));
	json_array_append_new(a, json_stringn("a\0b", 3));
	json_array_append_new(a, json_string("/path/to\\x\"q\""));
	json_array_append_new(
	    a, json_string("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"));
	json_array_append_new(a, json_string(""));
	expect_same_dump(a, "escapes");
	json_decref(a);
}

Test(json_dump, invalid_utf8_fails_like_jansson)
{
	static const char *const bad[] = {
	    "\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	    "\xc3", "ok\xff",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_t *a = arr1(json_stringn_nocheck(bad[i], strlen(bad[i])));
		char *d = reg_json_dump(a, NULL);
		cr_assert_null(d, "case %zu", i);
		expect_same_dump(a, "invalid UTF-8");
		json_decref(a);
		json_t *o = json_object();
		json_object_setn_new_nocheck(o, bad[i], strlen(bad[i]),
					     json_true());
		/* jansson writes part of such a key and goes on. */
		expect_same_dump(o, "invalid UTF-8 key");
		json_decref(o);
	}
}

Test(json_dump, numbers_and_literals)
{
	json_t *a = json_array();
	static const json_int_t ints[] = {
	    0, 1, -1, 9, 10, 1234567890, INT64_MAX, INT64_MIN, -100};
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
		json_array_append_new(a, json_integer(ints[i]));
	static const double reals[] = {0.0, -0.0,  1.5,	 1e300, -2.5e-300,
				       0.1, 100.0, 1e22, 3.0e-5};
	for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
		json_array_append_new(a, json_real(reals[i]));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	json_array_append_new(a, json_object());
	json_array_append_new(a, json_array());
	expect_same_dump(a, "numbers");
	json_decref(a);
}

/* Reals as Go's encoding/json writes a float64, which is what kube-apiserver
   answers for a custom resource's numbers. */
Test(json_dump, reals_as_go_writes_them)
{
	static const struct {
		double x;
		const char *go;
	} cases[] = {
	    {0.1, "0.1"},
	    {0.3, "0.3"},
	    {1.0, "1"},
	    {1000.0, "1000"},
	    {-0.0, "-0"},
	    {0.0, "0"},
	    {3.14159, "3.14159"},
	    {-2.5, "-2.5"},
	    {1e20, "100000000000000000000"},
	    {1e21, "1e+21"},
	    {1.2345678901234567e19, "12345678901234567000"},
	    {1.5e-7, "1.5e-7"},
	    {1e-6, "0.000001"},
	    {1e-10, "1e-10"},
	    {1.7976931348623157e308, "1.7976931348623157e+308"},
	    {5e-324, "5e-324"},
	    {123456.789, "123456.789"},
	    {0.000123, "0.000123"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char b[REG_GO_FLOAT_MAX];
		size_t n = reg_go_float(cases[i].x, b);
		cr_assert_str_eq(b, cases[i].go, "%.17g", cases[i].x);
		cr_assert_eq(n, strlen(cases[i].go));
		json_t *a = arr1(json_real(cases[i].x));
		char *d = reg_json_dump(a, NULL);
		char want[64];
		snprintf(want, sizeof want, "[%s]", cases[i].go);
		cr_assert_str_eq(d, want);
		free(d);
		json_decref(a);
	}
}

/* Go's encoding of a map[string]interface{} tree: keys in byte order at
   every level, reals in Go's form, any value at the top. */
Test(json_dump, sorted_as_go_encodes_maps)
{
	json_t *v = json_loads("{\"b\":{\"z\":1,\"a\":[{\"y\":0.1,\"x\":null}]},"
			       "\"a\":1.0,\"\u00e9\":true,\"A\":\"s\"}",
			       0, NULL);
	cr_assert_not_null(v);
	size_t n;
	char *d = reg_json_dump_sorted(v, &n);
	cr_assert_str_eq(d, "{\"A\":\"s\",\"a\":1,\"b\":{\"a\":[{\"x\":null,"
			    "\"y\":0.1}],\"z\":1},\"\xc3\xa9\":true}");
	cr_assert_eq(n, strlen(d));
	free(d);
	json_decref(v);
	json_t *s = json_string("x");
	d = reg_json_dump_sorted(s, NULL);
	cr_assert_str_eq(d, "\"x\"");
	free(d);
	json_decref(s);
}

Test(json_dump, object_order_after_edits)
{
	json_t *o = json_object();
	json_object_set_new(o, "z", json_integer(1));
	json_object_set_new(o, "a", json_integer(2));
	json_object_set_new(o, "m", json_integer(3));
	json_object_del(o, "a");
	json_object_set_new(o, "a", json_integer(4));
	json_object_set_new(o, "z", json_string("replaced"));
	json_object_setn_new(o, "k\0ey", 4, json_null());
	expect_same_dump(o, "order");
	json_decref(o);
}

Test(json_dump, only_objects_and_arrays)
{
	json_t *s = json_string("x");
	cr_assert_null(reg_json_dump(s, NULL));
	json_decref(s);
	cr_assert_null(reg_json_dump(NULL, NULL));
}

Test(json_dump, deep_tree_goes_to_jansson)
{
	json_t *root = json_array();
	json_t *cur = root;
	for (int i = 0; i < 3000; i++) {
		json_t *n = json_array();
		json_array_append_new(cur, n);
		cur = n;
	}
	expect_same_dump(root, "3000 levels");
	json_decref(root);
}

Test(json_dump, buffer_grows_past_the_first_block)
{
	json_t *o = json_object();
	char key[16];
	for (int i = 0; i < 500; i++) {
		snprintf(key, sizeof key, "key%03d", i);
		json_object_set_new(o, key, json_string("a value\twith\"esc"));
	}
	expect_same_dump(o, "big object");
	json_decref(o);
}

/* jansson skips NUL bytes between tokens; Go refuses them, and the field
   scans of a body (server/fields.c) stop at them. */
Test(json_load, nul_bytes_are_refused_issue3)
{
	static const char text[] = "{\"a\":\n[1\0]}";
	json_error_t e;
	cr_assert_null(reg_json_load(text, sizeof text - 1, 0, &e));
	cr_expect_str_eq(e.text, "invalid character '\\x00' in JSON text");
	cr_expect_eq(e.line, 2);
	cr_expect_eq(e.column, 3);
	cr_expect_eq(e.position, 8);
	cr_assert_null(reg_json_load("{}\0", 3, 0, &e));
	json_t *v = reg_json_load("{\"a\":\"\\u0000\"}", 14, JSON_ALLOW_NUL,
				  &e);
	cr_expect_not_null(v, "an escaped NUL is a string's character");
	json_decref(v);
}

/* reg_go_json_check against Go 1.24's encoding/json checkValid: the texts
   of its SyntaxError for each state of the scanner. */
static void go_check(const char *in, size_t n, const char *want)
{
	char msg[128];
	int ok = reg_go_json_check(in, n, msg, sizeof msg);
	if (!want) {
		cr_expect(ok, "%s: refused (%s)", in, msg);
		return;
	}
	cr_expect(!ok, "%s: accepted", in);
	if (!ok)
		cr_expect_str_eq(msg, want, "%s", in);
}
#define GO_CHECK(in, want) go_check(in, sizeof in - 1, want)

Test(go_json_check, valid_values)
{
	GO_CHECK("{}", NULL);
	GO_CHECK(" \t\r\n[ ] ", NULL);
	GO_CHECK("{\"a\":[1,-0,0.5,1e9,2E-3,-1.5e+2,true,false,null,\"\\u00e9\\n\"]}", NULL);
	GO_CHECK("\"\xff\xfe\"", NULL); /* Go takes any byte >= 0x20 in a string */
	GO_CHECK("7", NULL);
	GO_CHECK("null", NULL);
}

Test(go_json_check, syntax_errors)
{
	GO_CHECK("", "unexpected end of JSON input");
	GO_CHECK("   ", "unexpected end of JSON input");
	GO_CHECK("{\"a\":", "unexpected end of JSON input");
	GO_CHECK("[1", "unexpected end of JSON input");
	GO_CHECK("\"abc", "unexpected end of JSON input");
	GO_CHECK("xyz", "invalid character 'x' looking for beginning of value");
	GO_CHECK("{\"a\":}", "invalid character '}' looking for beginning of value");
	GO_CHECK("[1,]", "invalid character ']' looking for beginning of value");
	GO_CHECK("{,}", "invalid character ',' looking for beginning of object key string");
	GO_CHECK("{\"a\":1,}", "invalid character '}' looking for beginning of object key string");
	GO_CHECK("{\"a\" 1}", "invalid character '1' after object key");
	GO_CHECK("{\"a\":1 \"b\"}", "invalid character '\"' after object key:value pair");
	GO_CHECK("[1 2]", "invalid character '2' after array element");
	GO_CHECK("{} x", "invalid character 'x' after top-level value");
	GO_CHECK("{}{}", "invalid character '{' after top-level value");
	GO_CHECK("\"a\x01\"", "invalid character '\\x01' in string literal");
	GO_CHECK("\"\\q\"", "invalid character 'q' in string escape code");
	GO_CHECK("\"\\u12G4\"", "invalid character 'G' in \\u hexadecimal character escape");
	GO_CHECK("-x", "invalid character 'x' in numeric literal");
	GO_CHECK("1.x", "invalid character 'x' after decimal point in numeric literal");
	GO_CHECK("1e+x", "invalid character 'x' in exponent of numeric literal");
	GO_CHECK("tru}", "invalid character '}' in literal true (expecting 'e')");
	GO_CHECK("fals", "invalid character ' ' in literal false (expecting 'e')");
	GO_CHECK("nul", "invalid character ' ' in literal null (expecting 'l')");
	GO_CHECK("01", "invalid character '1' after top-level value");
	/* at the end Go's scanner is fed one space */
	GO_CHECK("1.", "invalid character ' ' after decimal point in numeric literal");
	GO_CHECK("-", "invalid character ' ' in numeric literal");
	GO_CHECK("1e", "invalid character ' ' in exponent of numeric literal");
	GO_CHECK("\"\\", "invalid character ' ' in string escape code");
}

Test(go_json_check, quoted_characters)
{
	GO_CHECK("'", "invalid character '\\'' looking for beginning of value");
	GO_CHECK("\\", "invalid character '\\\\' looking for beginning of value");
	GO_CHECK("{\"a\":1}\n\t\x7f", "invalid character '\\x7f' after top-level value");
	GO_CHECK("\x0b", "invalid character '\\v' looking for beginning of value");
	GO_CHECK("{}\0", "invalid character '\\x00' after top-level value");
	GO_CHECK("\x85", "invalid character '\\u0085' looking for beginning of value");
	GO_CHECK("\xa0", "invalid character '\\u00a0' looking for beginning of value");
	GO_CHECK("\xad", "invalid character '\\u00ad' looking for beginning of value");
	GO_CHECK("\xe9", "invalid character '\xc3\xa9' looking for beginning of value");
	GO_CHECK("\xff", "invalid character '\xc3\xbf' looking for beginning of value");
}

Test(go_json_check, depth_limit)
{
	size_t n = 10001;
	char *deep = malloc(2 * n);
	cr_assert_not_null(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	char msg[64];
	cr_expect(!reg_go_json_check(deep, 2 * n, msg, sizeof msg));
	cr_expect_str_eq(msg, "exceeded max depth");
	cr_expect(reg_go_json_check(deep + 1, 2 * n - 2, msg, sizeof msg),
		  "10,000 levels are Go's limit, not past it");
	free(deep);
}

Test(utf8_seq, valid_and_invalid_starts)
{
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"a", 1), 1);
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xc3\xa9", 2), 2);
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xc3", 1), 0);
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xc0\xaf", 2), 0, "overlong");
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3), 0, "surrogate");
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	cr_expect_eq(reg_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80", 4), 0, "past U+10FFFF");
}

/* GO_STRINGS(in, want): reg_json_go_strings rewrites in to want (NULL:
   nothing to change). */
#define GO_STRINGS(in, want)                                                   \
	do {                                                                   \
		char *o_ = NULL;                                               \
		size_t n_ = 0;                                                 \
		int rc_ = reg_json_go_strings(in, sizeof(in) - 1, &o_, &n_);   \
		if (!(want)) {                                                 \
			cr_expect_eq(rc_, 0, "%s changed", in);                \
		} else {                                                       \
			cr_expect_eq(rc_, 1, "%s unchanged", in);              \
			if (rc_ == 1)                                          \
				cr_expect_str_eq(o_, (want) ? (want) : "");    \
			free(o_);                                              \
		}                                                              \
	} while (0)

Test(go_strings, invalid_utf8_and_lone_surrogates_become_fffd)
{
	const char *none = NULL;
	GO_STRINGS("{\"a\":\"plain \\u00e9 \xc3\xa9\"}", none);
	GO_STRINGS("{\"a\":\"\\ud83d\\ude00\"}", none);
	GO_STRINGS("{\"a\":\"x\xffy\"}", "{\"a\":\"x\xef\xbf\xbdy\"}");
	/* an overlong form and an encoded surrogate: one per byte */
	GO_STRINGS("[\"\xc0\x80\"]", "[\"\xef\xbf\xbd\xef\xbf\xbd\"]");
	GO_STRINGS("[\"\xed\xa0\x80\"]",
		   "[\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"]");
	GO_STRINGS("[\"\\ud800z\"]", "[\"\\ufffdz\"]");
	/* a low one alone, then a valid pair read on its own */
	GO_STRINGS("[\"\\udc00\\ud800\\udc00\"]",
		   "[\"\\ufffd\\ud800\\udc00\"]");
	/* a high one before a non-surrogate escape */
	GO_STRINGS("[\"\\uD800\\u0041\"]", "[\"\\ufffd\\u0041\"]");
	/* an escaped backslash is no escape of u; quotes inside stay */
	GO_STRINGS("[\"\\\\ud800\", \"\\\"\\ud800\"]",
		   "[\"\\\\ud800\", \"\\\"\\ufffd\"]");
	/* outside strings nothing changes (the parser refuses it) */
	GO_STRINGS("[1,\xff]", none);
	/* keys too */
	GO_STRINGS("{\"k\xfe\":1}", "{\"k\xef\xbf\xbd\":1}");
}
