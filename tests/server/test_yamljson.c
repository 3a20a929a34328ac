/*
 * test_yamljson.c -- tests of server/yamljson.c: YAML bodies read as kube's
 * sigs.k8s.io/yaml (go-yaml v2) reads them, JSON written as kube writes it,
 * and the two round-tripping.
 *
 * Expected values for scalars, keys, merges and error messages were taken
 * from kubectl 1.32 (which decodes kubeconfig files with the same
 * sigs.k8s.io/yaml YAMLToJSON) and its YAML printer (JSONToYAML).
 *
 * No test sets .timeout: Criterion 2.4.1's runner leaks 48 bytes when two
 * timed tests overlap under --jobs=2, which fails the ASan stage; CTest's
 * per-executable TIMEOUT is the safety net instead.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/yamljson.h"
#include "support.h"

/* ------------------------------------------------------------------------ */
/* Helpers.                                                                  */

static json_t *parse_ok(const char *yaml)
{
	struct srv_error err = {0};
	json_t *out = NULL;
	lp_err rc = srv_yaml_to_json(yaml, strlen(yaml), &out, &err);
	cr_assert_eq(rc, LP_OK, "parsing\n%s\nfailed: %s: %s", yaml,
		     lp_errname(rc), err.message);
	cr_assert_not_null(out);
	return out;
}

static void expect_json(const char *yaml, const char *want_json)
{
	json_error_t je;
	json_t *want = json_loads(want_json, JSON_DECODE_ANY, &je);
	cr_assert_not_null(want, "bad expectation %s: %s", want_json, je.text);
	json_t *got = parse_ok(yaml);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	cr_assert(json_equal(got, want), "YAML\n%s\ngave %s\nwant %s", yaml, g,
		  want_json);
	free(g);
	json_decref(got);
	json_decref(want);
}

/* The value of key "v" in the document "v: <text>". */
static void expect_scalar(const char *text, const char *want_json)
{
	char yaml[512], want[512];
	snprintf(yaml, sizeof yaml, "v: %s\n", text);
	snprintf(want, sizeof want, "{\"v\": %s}", want_json);
	expect_json(yaml, want);
}

static void expect_err_mode(const char *yaml, size_t len, bool strict,
			    const char *want_msg)
{
	struct srv_error err = {0};
	json_t *sentinel = json_string("untouched"), *out = sentinel;
	lp_err rc = strict ? srv_yaml_to_json_strict(yaml, len, &out, &err)
			   : srv_yaml_to_json(yaml, len, &out, &err);
	cr_assert_eq(rc, LP_E_BADREQUEST, "YAML\n%.200s\ngave %s, not an error",
		     yaml, lp_errname(rc));
	cr_assert_eq(out, sentinel, "out written on failure");
	cr_assert_eq(err.code, LP_E_BADREQUEST);
	cr_assert_neq(err.message[0], '\0');
	if (want_msg)
		cr_assert_str_eq(err.message, want_msg, "YAML\n%.200s", yaml);
	json_decref(sentinel);
}

static void expect_err(const char *yaml, const char *want_msg)
{
	expect_err_mode(yaml, strlen(yaml), false, want_msg);
}

/* srv_json_to_yaml of the JSON text, checked byte for byte. */
static void expect_yaml(const char *json_text, const char *want_yaml)
{
	json_error_t je;
	json_t *doc = json_loads(json_text, JSON_DECODE_ANY, &je);
	cr_assert_not_null(doc, "bad JSON %s: %s", json_text, je.text);
	size_t len = 0;
	char *y = srv_json_to_yaml(doc, &len);
	cr_assert_not_null(y);
	cr_assert_eq(len, strlen(y));
	cr_assert_str_eq(y, want_yaml, "JSON %s", json_text);
	free(y);
	json_decref(doc);
}

/* emit, parse back, compare: the property every document must have. */
static void expect_roundtrip(const json_t *doc)
{
	size_t len = 0;
	char *y = srv_json_to_yaml(doc, &len);
	cr_assert_not_null(y);
	cr_assert_eq(len, strlen(y));
	struct srv_error err = {0};
	json_t *back = NULL;
	lp_err rc = srv_yaml_to_json(y, len, &back, &err);
	char *want = json_dumps(doc, JSON_ENCODE_ANY | JSON_SORT_KEYS);
	cr_assert_eq(rc, LP_OK, "emitted YAML\n%s\nof %s\ndoes not parse: %s",
		     y, want, err.message);
	char *got = json_dumps(back, JSON_ENCODE_ANY | JSON_SORT_KEYS);
	cr_assert(json_equal(back, doc),
		  "round trip changed\n%s\ninto\n%s\nvia YAML\n%s", want, got,
		  y);
	free(want);
	free(got);
	free(y);
	json_decref(back);
}

/* ------------------------------------------------------------------------ */
/* Scalars.                                                                  */

Test(yaml_scalars, null_words_and_empty_are_null)
{
	expect_scalar("null", "null");
	expect_scalar("Null", "null");
	expect_scalar("NULL", "null");
	expect_scalar("~", "null");
	expect_scalar("", "null");
	expect_scalar("nULL", "\"nULL\"");
}

Test(yaml_scalars, yaml11_booleans_resolve_like_go_yaml_v2)
{
	const char *t[] = {"y",	   "Y",	   "yes", "Yes", "YES", "true",
			   "True", "TRUE", "on",  "On",	 "ON"};
	const char *f[] = {"n",	    "N",     "no",  "No",  "NO", "false",
			   "False", "FALSE", "off", "Off", "OFF"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		expect_scalar(t[i], "true");
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		expect_scalar(f[i], "false");
	/* Mixed case is not in go-yaml's table. */
	expect_scalar("yEs", "\"yEs\"");
	expect_scalar("tRUE", "\"tRUE\"");
}

Test(yaml_scalars, integers_in_every_go_base)
{
	expect_scalar("0", "0");
	expect_scalar("-0", "0");
	expect_scalar("42", "42");
	expect_scalar("+42", "42");
	expect_scalar("-17", "-17");
	expect_scalar("1_000", "1000");
	expect_scalar("1__", "1");
	expect_scalar("0x1F", "31");
	expect_scalar("0X1F", "31");
	expect_scalar("+0x1F", "31");
	expect_scalar("-0x10", "-16");
	expect_scalar("0o17", "15");
	expect_scalar("0O17", "15");
	expect_scalar("017", "15");
	expect_scalar("0b101", "5");
	expect_scalar("-0b101", "-5");
	expect_scalar("9223372036854775807", "9223372036854775807");
	expect_scalar("-9223372036854775808", "-9223372036854775808");
	/* Not numbers after all. */
	expect_scalar("0x", "\"0x\"");
	expect_scalar("0o", "\"0o\"");
	expect_scalar("0b2", "\"0b2\"");
	expect_scalar("+", "\"+\"");
	expect_scalar("_1", "\"_1\"");
	expect_scalar("1:20", "\"1:20\"");
}

Test(yaml_scalars, numbers_beyond_int64_become_reals_as_kube_reads_them)
{
	expect_scalar("9223372036854775808", "9223372036854775808.0");
	expect_scalar("18446744073709551615", "18446744073709551615.0");
	expect_scalar("-9223372036854775809", "-9223372036854775809.0");
	expect_scalar("123456789012345678901234567890",
		      "1.2345678901234568e29");
	json_t *v = parse_ok("v: 18446744073709551615");
	cr_assert(json_is_real(json_object_get(v, "v")));
	json_decref(v);
}

Test(yaml_scalars, floats_follow_go_parse_float)
{
	expect_scalar("1.5", "1.5");
	expect_scalar("0.1", "0.1");
	expect_scalar("-.5e3", "-500.0");
	expect_scalar("1.", "1.0");
	expect_scalar(".5", "0.5");
	expect_scalar(".5E3", "500.0");
	expect_scalar("1e3", "1000.0");
	expect_scalar("1_0.5_5", "10.55");
	expect_scalar(".5_0", "0.5");
	expect_scalar(".5e1_0", "5000000000.0");
	/* A leading zero that is not octal is a float in go-yaml. */
	expect_scalar("08", "8.0");
	/* Underflow is zero, overflow is not a number at all. */
	expect_scalar("1e-400", "0.0");
	expect_scalar("1e400", "\"1e400\"");
	expect_scalar("._5", "\"._5\"");
	expect_scalar(".5_", "\".5_\"");
	json_t *v = parse_ok("v: 1.0");
	cr_assert(json_is_real(json_object_get(v, "v")));
	json_decref(v);
}

Test(yaml_scalars, infinity_and_nan_cannot_be_json)
{
	expect_err("v: .inf", "json: unsupported value: +Inf");
	expect_err("v: -.Inf", "json: unsupported value: -Inf");
	expect_err("v: +.INF", "json: unsupported value: +Inf");
	expect_err("v: .nan", "json: unsupported value: NaN");
	expect_scalar(".nAn", "\".nAn\"");
	expect_scalar("Infinity", "\"Infinity\"");
}

Test(yaml_scalars, timestamps_stay_their_text)
{
	expect_scalar("2001-12-14", "\"2001-12-14\"");
	expect_scalar("2001-12-14t21:59:43.10-05:00",
		      "\"2001-12-14t21:59:43.10-05:00\"");
	expect_scalar("2001-12-14 21:59:43.10", "\"2001-12-14 21:59:43.10\"");
	expect_scalar("2001-13-14", "\"2001-13-14\"");
}

Test(yaml_scalars, quoted_and_block_scalars_are_strings)
{
	expect_scalar("\"true\"", "\"true\"");
	expect_scalar("'123'", "\"123\"");
	expect_scalar("\"null\"", "\"null\"");
	expect_scalar("''", "\"\"");
	expect_scalar("\"0x1F\"", "\"0x1F\"");
	expect_json("v: |\n  123\n", "{\"v\": \"123\\n\"}");
	expect_json("v: >-\n  true\n", "{\"v\": \"true\"}");
}

Test(yaml_scalars, escapes_and_folding)
{
	expect_json("a: \"dq \\t \\u00e9 \\x41 \\N \\_ \\L\"\n"
		    "b: 'sq ''x'''\n"
		    "c: plain\n  multi\n   line\n",
		    "{\"a\": \"dq \\t \\u00e9 A \\u0085 \\u00a0 \\u2028\","
		    " \"b\": \"sq 'x'\", \"c\": \"plain multi line\"}");
	expect_json(
	    "a: |\n  x\n   y\n\n  z\n\n"
	    "b: >\n  folded\n  text\n\n  para\n"
	    "c: |+\n  keep\n\n"
	    "d: >-\n  strip\n  me\n",
	    "{\"a\": \"x\\n y\\n\\nz\\n\", \"b\": \"folded text\\npara\\n\","
	    " \"c\": \"keep\\n\\n\", \"d\": \"strip me\"}");
}

Test(yaml_scalars, explicit_tags_are_honoured)
{
	expect_scalar("!!float 1", "1.0");
	expect_scalar("!!int \"12\"", "12");
	expect_scalar("!!int 0x10", "16");
	expect_scalar("!!bool yes", "true");
	expect_scalar("!!str", "\"\"");
	expect_scalar("!!str 0x10", "\"0x10\"");
	expect_scalar("!!str true", "\"true\"");
	expect_scalar("!!null \"\"", "null");
	expect_scalar("!!timestamp 2001-12-14", "\"2001-12-14\"");
	expect_scalar("! 12", "\"12\"");
	expect_scalar("!foo 12", "\"12\"");
	expect_scalar("!!map 12", "\"12\"");
	expect_scalar("!<tag:yaml.org,2002:int> 12", "12");
	expect_scalar("!foo {x: 1}", "{\"x\": 1}");
	expect_scalar("!!set {a, b}", "{\"a\": null, \"b\": null}");
}

Test(yaml_scalars, a_tag_the_text_does_not_fit_is_an_error)
{
	expect_err("v: !!int x",
		   "yaml: line 1: cannot decode !!str `x` as a !!int");
	expect_err("v: !!int 1.5",
		   "yaml: line 1: cannot decode !!float `1.5` as a !!int");
	expect_err("v: !!float 18446744073709551615",
		   "yaml: line 1: cannot decode !!int `18446744073709551615` "
		   "as a !!float");
	expect_err("v: !!bool 1",
		   "yaml: line 1: cannot decode !!int `1` as a !!bool");
	expect_err("v: !!null x",
		   "yaml: line 1: cannot decode !!str `x` as a !!null");
	expect_err("v: !!timestamp 12",
		   "yaml: line 1: cannot decode !!int `12` as a !!timestamp");
}

Test(yaml_scalars, binary_is_decoded_and_bad_utf8_replaced)
{
	expect_scalar("!!binary aGVsbG8=", "\"hello\"");
	expect_json("v: !!binary |\n  aGVs\n  bG8=\n", "{\"v\": \"hello\"}");
	expect_scalar("!!binary \"/w==\"", "\"\\ufffd\"");
	expect_scalar("!!binary \"\"", "\"\"");
	expect_err("v: !!binary aGVs\n  bG8=",
		   "yaml: line 1: !!binary value contains invalid base64 data");
	expect_err("v: !!binary aGVsbG8", NULL);
	expect_err("v: !!binary a===", NULL);
	/* NUL survives in a value. */
	json_t *v = parse_ok("v: !!binary AGE=");
	cr_assert_eq(json_string_length(json_object_get(v, "v")), 2);
	json_decref(v);
}

/* ------------------------------------------------------------------------ */
/* Keys.                                                                     */

Test(yaml_keys, non_string_keys_take_their_go_string_form)
{
	expect_json(
	    "1: a\ntrue: b\n1.5: c\n0x10: d\n",
	    "{\"1\": \"a\", \"true\": \"b\", \"1.5\": \"c\", \"16\": \"d\"}");
	/* y and n are booleans, even as keys. */
	expect_json("y: 1\nn: 2\n", "{\"true\": 1, \"false\": 2}");
	/* Float keys print at float32 precision, as sigs.k8s.io/yaml does. */
	expect_json("0.1: b\n3.14159265358979: c\n1e10: d\n.inf: e\n"
		    "-.inf: f\n.nan: g\n1e39: h\n18446744073709551616: i\n",
		    "{\"0.1\": \"b\", \"3.1415927\": \"c\", \"1e+10\": \"d\","
		    " \".inf\": \"h\", \"-.inf\": \"f\", \".nan\": \"g\","
		    " \"1.8446744e+19\": \"i\"}");
	/* negative ones too: the shortest digits of their magnitude */
	expect_json("-0.1: a\n-1.1: b\n-1e-7: c\n-9223372036854775809: d\n",
		    "{\"-0.1\": \"a\", \"-1.1\": \"b\", \"-1e-07\": \"c\","
		    " \"-9.223372e+18\": \"d\"}");
	expect_json("2001-12-14: date\n", "{\"2001-12-14\": \"date\"}");
	expect_json("\"<<\": {a: 1}\n", "{\"<<\": {\"a\": 1}}");
	expect_json("!!str <<: {a: 1}\n", "{\"<<\": {\"a\": 1}}");
}

Test(yaml_keys, keys_that_json_cannot_hold_are_errors)
{
	expect_err("~: 1", "yaml: line 1: unsupported map key of type: "
			   "%!s(<nil>), key: <nil>");
	expect_err("a: 1\n: 2", NULL);
	expect_err("18446744073709551615: 1",
		   "yaml: line 1: unsupported map key of type: uint64, key: "
		   "0xffffffffffffffff");
	expect_err("? [1]\n: 2", "yaml: line 1: invalid map key: a sequence");
	expect_err("? {a: 1}\n: 2", "yaml: line 1: invalid map key: a mapping");
	expect_err("a: &x [1]\n*x : 2",
		   "yaml: line 2: invalid map key: a sequence");
	expect_err("\"a\\0b\": 1", NULL);
}

Test(yaml_keys, repeated_keys_keep_the_last_value)
{
	expect_json("a: 1\nb: 2\na: 3\n", "{\"a\": 3, \"b\": 2}");
	/* 1 and "1" are one JSON key. */
	expect_json("1: int\n\"1\": str\n", "{\"1\": \"str\"}");
}

/* Whether s is valid UTF-8 (jansson's check: what a Status needs). */
static bool utf8_ok(const char *s)
{
	json_t *j = json_string(s);
	json_decref(j);
	return j != NULL;
}

Test(yaml_keys, strict_messages_cut_short_stay_utf8)
{
	/* Many repeats of keys of two-, three- and four-byte characters fill
	   the message past every buffer it goes through (a key's quoted form,
	   the list of repeats, the message): each cut must fall between
	   characters (fuzz/regress/yaml-duplicate-keys-message-cut-mid-utf8) */
	static const char *const chars[] = {"\xc9\x83", "\xe2\x82\xac",
					    "\xf0\x9f\x98\x80"};
	for (size_t c = 0; c < 3; c++) {
		for (size_t shift = 0; shift < 4; shift++) {
			static char y[65536];
			size_t n = 0;
			for (int rep = 0; rep < 2; rep++)
				for (int k = 0; k < 40; k++) {
					n += (size_t)snprintf(
					    y + n, sizeof y - n, "%.*s",
					    (int)shift, "abc");
					for (int i = 0; i < 10 + k * 2; i++)
						n += (size_t)snprintf(
						    y + n, sizeof y - n, "%s",
						    chars[c]);
					n += (size_t)snprintf(
					    y + n, sizeof y - n, "%d: 1\n", k);
				}
			cr_assert_lt(n, sizeof y - 1);
			struct srv_error err = {0};
			json_t *out = NULL;
			cr_assert_eq(srv_yaml_to_json_strict(y, n, &out, &err),
				     LP_E_BADREQUEST);
			cr_assert(!strncmp(err.message,
					   "yaml: unmarshal errors:", 23));
			cr_assert(utf8_ok(err.message),
				  "char %zu shift %zu: %s", c, shift,
				  err.message);
		}
	}
}

Test(srv_error, messages_cut_to_fit_end_between_characters)
{
	static char big[40000]; /* longer than any of the buffers */
	for (size_t shift = 0; shift < 4; shift++) {
		size_t n = shift;
		memset(big, 'x', shift);
		while (n + 4 < sizeof big) {
			memcpy(big + n, "\xf0\x9f\x98\x80", 4);
			n += 4;
		}
		big[n] = 0;
		struct srv_error err = {0};
		srv_error_set(&err, LP_E_BADREQUEST, "%s", big);
		cr_assert(utf8_ok(err.message), "shift %zu", shift);
		cr_assert_gt(strlen(err.message), sizeof err.message - 5);
		srv_error_cause(&err, big, big, "%s", big);
		cr_assert(utf8_ok(srv_cause_get(&err, 0).reason) &&
			      utf8_ok(srv_cause_get(&err, 0).field) &&
			      utf8_ok(srv_cause_get(&err, 0).message),
			  "shift %zu", shift);
		/* a short text is left alone, a cut one loses only the
		   incomplete character */
		srv_error_set(&err, LP_E_BADREQUEST, "a\xc9\x83");
		cr_assert_str_eq(err.message, "a\xc9\x83");
		char s[] = "ab\xe2\x82";
		srv_cut_utf8(s);
		cr_assert_str_eq(s, "ab");
	}
}

Test(yaml_keys, strict_mode_reports_every_repeat_like_go_yaml)
{
	expect_err_mode("a: 1\na: 2", 9, true,
			"yaml: unmarshal errors:\n"
			"  line 2: key \"a\" already set in map");
	const char *y = "m:\n  x: 1\n  z: 2\n  x:\n    deep: 1\n  z: 3\n";
	expect_err_mode(y, strlen(y), true,
			"yaml: unmarshal errors:\n"
			"  line 5: key \"x\" already set in map\n"
			"  line 6: key \"z\" already set in map");
	y = "1: a\n1: b\n";
	expect_err_mode(y, strlen(y), true,
			"yaml: unmarshal errors:\n"
			"  line 2: key 1 already set in map");
	/* go-yaml v2 counts overriding a merged key as a repeat. */
	y = "base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n";
	expect_err_mode(y, strlen(y), true, NULL);

	/* Without repeats strict mode gives the same tree. */
	struct srv_error err = {0};
	json_t *out = NULL;
	y = "a: 1\nb: [1, {c: 2}]\n";
	cr_assert_eq(srv_yaml_to_json_strict(y, strlen(y), &out, &err), LP_OK,
		     "%s", err.message);
	json_t *want =
	    json_loads("{\"a\": 1, \"b\": [1, {\"c\": 2}]}", 0, NULL);
	cr_assert(json_equal(out, want));
	json_decref(want);
	json_decref(out);
}

/* ------------------------------------------------------------------------ */
/* Anchors, aliases, merges.                                                 */

Test(yaml_anchors, aliases_expand_to_independent_copies)
{
	json_t *v = parse_ok("a: &x {b: &y [1, 2], c: *y}\nd: *x\n");
	json_t *want = json_loads("{\"a\": {\"b\": [1, 2], \"c\": [1, 2]},"
				  " \"d\": {\"b\": [1, 2], \"c\": [1, 2]}}",
				  0, NULL);
	cr_assert(json_equal(v, want));
	/* The copies share nothing: changing one leaves the others. */
	json_array_append_new(json_object_get(json_object_get(v, "d"), "b"),
			      json_integer(3));
	cr_assert_eq(
	    json_array_size(json_object_get(json_object_get(v, "a"), "b")), 2);
	cr_assert_eq(
	    json_array_size(json_object_get(json_object_get(v, "d"), "c")), 2);
	json_decref(want);
	json_decref(v);
}

Test(yaml_anchors, scalar_aliases_decode_again_where_they_stand)
{
	expect_json("a: &x 1\n*x : 2\n", "{\"a\": 1, \"1\": 2}");
	expect_json("a: &t yes\nb: *t\n*t : k\n",
		    "{\"a\": true, \"b\": true, \"true\": \"k\"}");
	/* An anchored .inf is fine as a key, not as a value. */
	expect_json("&a .inf : 1\n", "{\".inf\": 1}");
	expect_err("&a .inf : 1\nb: *a\n", "json: unsupported value: +Inf");
}

Test(yaml_anchors, redefined_anchors_follow_go_yaml)
{
	expect_json("a: &x 1\nb: *x\nc: &x 2\nd: *x\n",
		    "{\"a\": 1, \"b\": 1, \"c\": 2, \"d\": 2}");
	/* The inner definition, made after the outer one started, wins. */
	expect_json("a: &x [&x 1, *x]\nb: *x\n", "{\"a\": [1, 1], \"b\": 1}");
}

Test(yaml_anchors, bad_aliases_are_errors)
{
	expect_err("a: *x", "yaml: line 1: unknown anchor 'x' referenced");
	expect_err("a: &x [*x]",
		   "yaml: line 1: anchor 'x' value contains itself");
	expect_err("a: &x {b: *x}",
		   "yaml: line 1: anchor 'x' value contains itself");
}

Test(yaml_anchors, merge_keys_follow_go_yaml_v2_order)
{
	expect_json(
	    "base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  z: 3\n",
	    "{\"base\": {\"x\": 1, \"z\": 2}, \"m\": {\"x\": 1, \"z\": 3}}");
	/* A merge overrides keys set before it. */
	expect_json("a: 1\n<<: {a: 2, b: 3}\n", "{\"a\": 2, \"b\": 3}");
	/* In a list of maps the first one wins. */
	expect_json("<<: [{a: 1}, {a: 2, b: 2}]\nb: 3\n",
		    "{\"a\": 1, \"b\": 3}");
	expect_json("- &a {x: 1}\n- <<: [*a, {w: 2}]\n  z: 3\n",
		    "[{\"x\": 1}, {\"x\": 1, \"w\": 2, \"z\": 3}]");
	expect_json("!!merge \"<<\": {a: 1}\n", "{\"a\": 1}");
	/* Nested merges inside the merged map are already applied. */
	expect_json("a: &a {p: 1}\nb: &b {<<: *a, q: 2}\nc: {<<: *b}\n",
		    "{\"a\": {\"p\": 1}, \"b\": {\"p\": 1, \"q\": 2},"
		    " \"c\": {\"p\": 1, \"q\": 2}}");
}

Test(yaml_anchors, merging_a_non_map_is_an_error)
{
	const char *msg =
	    "map merge requires map or sequence of maps as the value";
	char want[128];
	snprintf(want, sizeof want, "yaml: line 1: %s", msg);
	expect_err("<<: 1", want);
	expect_err("<<:", want);
	expect_err("<<: [1]", want);
	expect_err("<<: [[{a: 1}]]", want);
	snprintf(want, sizeof want, "yaml: line 2: %s", msg);
	expect_err("x: &a 1\n<<: *a", want);
	snprintf(want, sizeof want, "yaml: line 3: %s", msg);
	/* An alias to a sequence is not a sequence of maps to go-yaml. */
	expect_err("seq: &s [{a: 1}]\nm:\n  <<: *s", want);
}

/* ------------------------------------------------------------------------ */
/* Bounds.                                                                   */

static char *laughs(int levels, int fanout)
{
	size_t cap = (size_t)levels * (size_t)fanout * 8 + 256, o = 0;
	char *s = malloc(cap);
	cr_assert_not_null(s);
	o += (size_t)sprintf(s + o, "l0: &l0 [");
	for (int j = 0; j < fanout; j++)
		o += (size_t)sprintf(s + o, "%slol", j ? "," : "");
	o += (size_t)sprintf(s + o, "]\n");
	for (int i = 1; i < levels; i++) {
		o += (size_t)sprintf(s + o, "l%d: &l%d [", i, i);
		for (int j = 0; j < fanout; j++)
			o += (size_t)sprintf(s + o, "%s*l%d", j ? "," : "",
					     i - 1);
		o += (size_t)sprintf(s + o, "]\n");
	}
	return s;
}

Test(yaml_bounds, billion_laughs_is_refused_quickly)
{
	char *s = laughs(10, 10);
	expect_err(s, "yaml: document contains excessive aliasing");
	free(s);
	s = laughs(40, 2);
	expect_err(s, "yaml: document contains excessive aliasing");
	free(s);
}

Test(yaml_bounds, modest_aliasing_is_fine)
{
	char *s = laughs(3, 5); /* 5 + 25 + 125 expanded leaves */
	json_t *v = parse_ok(s);
	cr_assert_eq(json_array_size(json_object_get(v, "l2")), 5);
	json_decref(v);
	free(s);
}

Test(yaml_bounds, aliases_may_add_at_most_16_mib_of_text)
{
	size_t big = 1u << 20;
	char *s = malloc(big + 4096);
	cr_assert_not_null(s);
	size_t o = (size_t)sprintf(s, "a: &a ");
	memset(s + o, 'x', big);
	o += big;
	o += (size_t)sprintf(s + o, "\nb: [");
	size_t head = o;
	for (int i = 0; i < 15; i++)
		o += (size_t)sprintf(s + o, "%s*a", i ? "," : "");
	sprintf(s + o, "]\n");
	json_t *v = parse_ok(s); /* 15 MiB from aliases */
	cr_assert_eq(json_array_size(json_object_get(v, "b")), 15);
	json_decref(v);
	o = head;
	for (int i = 0; i < 17; i++)
		o += (size_t)sprintf(s + o, "%s*a", i ? "," : "");
	sprintf(s + o, "]\n");
	expect_err(s, "yaml: document contains excessive aliasing");
	free(s);
}

Test(yaml_bounds, aliases_may_add_at_most_a_million_nodes)
{
	/* A million plain nodes keep the alias ratio allowed, so only the
	   node cap can refuse the alias that doubles them. */
	size_t n = 1000000;
	char *s = malloc(2 * n + 64);
	cr_assert_not_null(s);
	size_t o = (size_t)sprintf(s, "a: &a [");
	for (size_t i = 0; i < n; i++) {
		s[o++] = '0';
		s[o++] = ',';
	}
	o--;
	o += (size_t)sprintf(s + o, "]\nb: *a\n");
	expect_err(s, "yaml: document contains excessive aliasing");
	free(s);
}

static char *nested(int depth, const char *open, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc((size_t)depth * (lo + lc) + 1), *p = s;
	cr_assert_not_null(s);
	for (int i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	for (int i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

Test(yaml_bounds, nesting_stops_at_1000)
{
	char *s = nested(1000, "[", "]");
	json_t *v = parse_ok(s);
	json_decref(v);
	free(s);
	s = nested(1001, "[", "]");
	expect_err(s, "yaml: line 1: exceeded max depth of 1000");
	free(s);
	s = nested(1001, "{a: ", "}");
	expect_err(s, "yaml: line 1: exceeded max depth of 1000");
	free(s);
	/* Unclosed and very deep: refused at the bound, no crash. */
	s = nested(200000, "[", "");
	expect_err(s, "yaml: line 1: exceeded max depth of 1000");
	free(s);
}

Test(yaml_bounds, an_alias_cannot_nest_past_the_bound)
{
	char *inner = nested(600, "[", "]");
	char *outer = nested(500, "[", "]");
	size_t cap = strlen(inner) + strlen(outer) + 64;
	char *s = malloc(cap);
	cr_assert_not_null(s);
	/* "a: &d [[...]]" then "b:" + 499 levels + "*d" */
	int o = snprintf(s, cap, "a: &d %s\nb: ", inner);
	memcpy(s + o, outer, 499);
	o += 499;
	o += sprintf(s + o, "*d");
	memcpy(s + o, outer + 500, 499);
	o += 499;
	s[o] = '\0';
	expect_err(s, "yaml: line 2: exceeded max depth of 1000");
	free(s);
	free(inner);
	free(outer);
}

/* ------------------------------------------------------------------------ */
/* Documents and syntax errors.                                              */

Test(yaml_docs, empty_input_and_comments_are_null)
{
	struct srv_error err = {0};
	json_t *v = NULL;
	cr_assert_eq(srv_yaml_to_json("", 0, &v, &err), LP_OK);
	cr_assert(json_is_null(v));
	json_decref(v);
	expect_json("# nothing here\n\n", "null");
	expect_json("---\n", "null");
	expect_json("--- \n...\n", "null");
}

Test(yaml_docs, json_is_yaml)
{
	expect_json("{\"json\": true, \"n\": null, \"arr\": [1, 2.5, \"x\"],"
		    " \"nested\": {\"a\": {}}, \"esc\": \"\\u00e9\\n\"}",
		    "{\"json\": true, \"n\": null, \"arr\": [1, 2.5, \"x\"],"
		    " \"nested\": {\"a\": {}}, \"esc\": \"\\u00e9\\n\"}");
	expect_json("[1, 2, 3]", "[1, 2, 3]");
	expect_json("\"just a string\"", "\"just a string\"");
	expect_json("42", "42");
}

/* go-yaml v2's Unmarshal reads the first document and no further */
Test(yaml_docs, the_first_document_alone)
{
	expect_json("---\na: 1\n", "{\"a\": 1}");
	expect_json("a: 1\n---\n", "{\"a\": 1}");
	expect_json("a: 1\n...\n---\n# trailing\n---\n", "{\"a\": 1}");
	expect_json("%YAML 1.1\n---\na: 1\n", "{\"a\": 1}");
	expect_json("a: 1\n---\nb: 2\n", "{\"a\": 1}");
	expect_json("a: 1\n--- ~\n", "{\"a\": 1}");
	expect_json("a: 1\n--- \"\"\n", "{\"a\": 1}");
	expect_json("a: 1\n---\nb: [\n", "{\"a\": 1}");
	expect_json("---\n---\na: 1\n", "null");
}

Test(yaml_docs, syntax_errors_read_as_go_yaml_words_them)
{
	expect_err(
	    "a: 1\n\tb: 2",
	    "yaml: line 2: found a tab character that violates indentation");
	expect_err("a:\n\t- tab",
		   "yaml: line 2: found character that cannot start any token");
	expect_err("a: \"abc\nb: 1",
		   "yaml: line 2: found unexpected end of stream");
	expect_err("a: 'unclosed", "yaml: found unexpected end of stream");
	expect_err("a: b: c",
		   "yaml: mapping values are not allowed in this context");
	expect_err(
	    "key: value\n  bad: indent",
	    "yaml: line 2: mapping values are not allowed in this context");
	expect_err("- a\nb: 1",
		   "yaml: line 1: did not find expected '-' indicator");
	expect_err("a:\n  b: 1\n c: 2",
		   "yaml: line 2: did not find expected key");
	expect_err("a: 1\nb: [1, 2\nc: 3",
		   "yaml: line 2: did not find expected ',' or ']'");
	expect_err("a: 1\nb: {x: 1",
		   "yaml: line 2: did not find expected ',' or '}'");
	expect_err("a: 1\n\nb:\n  - 1\n  -2\n  - 3",
		   "yaml: line 6: could not find expected ':'");
	expect_err("a: [}", "yaml: did not find expected node content");
	expect_err("a: @foo",
		   "yaml: found character that cannot start any token");
	expect_err("a: \"\\q\"", "yaml: found unknown escape character");
	expect_err("a: \"\\uD800\"",
		   "yaml: found invalid Unicode character escape code");
	expect_err("%FOO bar\n---\na: 1", "yaml: found unknown directive name");
}

Test(yaml_docs, bytes_that_are_not_text_are_errors)
{
	expect_err_mode("a: \xff\xfe", 5, false, NULL);
	expect_err_mode("a: \xc3", 4, false, NULL);
	expect_err_mode("a: b\0c", 6, false, NULL);
	expect_err_mode("a: \x01", 4, false, NULL);
}

/* jansson's allocations fail from the Nth on (STYLE §4.7). */
static long oom_left;

static void *oom_malloc(size_t n)
{
	if (oom_left-- <= 0)
		return NULL;
	return malloc(n);
}

Test(yaml_docs, out_of_memory_anywhere_fails_cleanly)
{
	const char *y = "a: &a {x: [1, 2.5, ~, 'q'], y: !!str 3}\n"
			"b: *a\nc:\n  <<: *a\n  z: \"t\"\nd: [*a, {e: f}]\n";
	json_t *want = parse_ok(y);
	bool done = false;
	for (long n = 0; !done; n++) {
		struct srv_error err = {0};
		json_t *out = NULL;
		oom_left = n;
		json_set_alloc_funcs(oom_malloc, free);
		lp_err rc = srv_yaml_to_json(y, strlen(y), &out, &err);
		json_set_alloc_funcs(malloc, free);
		if (rc == LP_OK) {
			cr_assert(json_equal(out, want));
			json_decref(out);
			done = true;
		} else {
			cr_assert_eq(rc, LP_E_NOMEM, "%ld: %s", n, err.message);
			cr_assert_null(out);
		}
		cr_assert_lt(n, 10000);
	}
	json_decref(want);
}

/* ------------------------------------------------------------------------ */
/* Realistic manifests.                                                      */

Test(yaml_real, configmap_with_block_scalars_and_comments)
{
	expect_json(
	    "# A ConfigMap with the usual suspects.\n"
	    "apiVersion: v1\n"
	    "kind: ConfigMap\n"
	    "metadata:\n"
	    "  name: game-config\n"
	    "  namespace: default\n"
	    "  labels:\n"
	    "    app.kubernetes.io/name: game   # trailing comment\n"
	    "    tier: \"1\"\n"
	    "  annotations: {note: \"flow style\", enabled: \"true\"}\n"
	    "data:\n"
	    "  game.properties: |\n"
	    "    enemies=aliens\n"
	    "    lives=3\n"
	    "  ui.properties: >\n"
	    "    color.good=purple\n"
	    "    color.bad=yellow\n"
	    "\n"
	    "    allow.textmode=true\n"
	    "  player_initial_lives: \"3\"\n"
	    "  empty: \"\"\n"
	    "  version: '1.0'\n"
	    "binaryData:\n"
	    "  blob: aGVsbG8=\n",
	    "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\","
	    " \"metadata\": {\"name\": \"game-config\", \"namespace\": "
	    "\"default\","
	    "  \"labels\": {\"app.kubernetes.io/name\": \"game\", \"tier\": "
	    "\"1\"},"
	    "  \"annotations\": {\"note\": \"flow style\", \"enabled\": "
	    "\"true\"}},"
	    " \"data\": {\"game.properties\": \"enemies=aliens\\nlives=3\\n\","
	    "  \"ui.properties\": \"color.good=purple color.bad=yellow\\n"
	    "allow.textmode=true\\n\","
	    "  \"player_initial_lives\": \"3\", \"empty\": \"\", \"version\": "
	    "\"1.0\"},"
	    " \"binaryData\": {\"blob\": \"aGVsbG8=\"}}");
}

Test(yaml_real, service_with_mixed_styles_and_a_trailing_separator)
{
	expect_json(
	    "apiVersion: v1\n"
	    "kind: Service\n"
	    "metadata:\n"
	    "  name: my-service\n"
	    "spec:\n"
	    "  type: NodePort\n"
	    "  selector: &sel\n"
	    "    app: MyApp\n"
	    "  ports:\n"
	    "    - name: http\n"
	    "      protocol: TCP\n"
	    "      port: 80\n"
	    "      targetPort: 9376\n"
	    "      nodePort: 30007\n"
	    "    - {name: https, protocol: TCP, port: 443, targetPort: 8443}\n"
	    "  sessionAffinity: None\n"
	    "  externalIPs: [10.0.0.1, \"10.0.0.2\"]\n"
	    "  ipFamilies:\n"
	    "  - IPv4\n"
	    "---\n",
	    "{\"apiVersion\": \"v1\", \"kind\": \"Service\","
	    " \"metadata\": {\"name\": \"my-service\"},"
	    " \"spec\": {\"type\": \"NodePort\", \"selector\": {\"app\": "
	    "\"MyApp\"},"
	    "  \"ports\": [{\"name\": \"http\", \"protocol\": \"TCP\", "
	    "\"port\": 80,"
	    "   \"targetPort\": 9376, \"nodePort\": 30007},"
	    "   {\"name\": \"https\", \"protocol\": \"TCP\", \"port\": 443,"
	    "   \"targetPort\": 8443}],"
	    "  \"sessionAffinity\": \"None\","
	    "  \"externalIPs\": [\"10.0.0.1\", \"10.0.0.2\"],"
	    "  \"ipFamilies\": [\"IPv4\"]}}");
}

Test(yaml_real, crd_schema_with_anchors_merges_and_yaml11_words)
{
	expect_json(
	    "apiVersion: apiextensions.k8s.io/v1\n"
	    "kind: CustomResourceDefinition\n"
	    "metadata:\n"
	    "  name: crontabs.stable.example.com\n"
	    "spec:\n"
	    "  group: stable.example.com\n"
	    "  scope: Namespaced\n"
	    "  names:\n"
	    "    plural: crontabs\n"
	    "    singular: crontab\n"
	    "    kind: CronTab\n"
	    "    shortNames: [ct]\n"
	    "  versions:\n"
	    "    - name: v1\n"
	    "      served: yes\n"
	    "      storage: true\n"
	    "      schema:\n"
	    "        openAPIV3Schema:\n"
	    "          type: object\n"
	    "          properties:\n"
	    "            spec:\n"
	    "              type: object\n"
	    "              properties:\n"
	    "                cronSpec: &str\n"
	    "                  type: string\n"
	    "                  pattern: '^(\\d+|\\*)(/\\d+)?$'\n"
	    "                image: *str\n"
	    "                replicas:\n"
	    "                  type: integer\n"
	    "                  minimum: 1\n"
	    "                  default: 1\n"
	    "                ratio: {type: number, default: 0.5}\n"
	    "                mode:\n"
	    "                  <<: *str\n"
	    "                  enum: [\"on\", \"off\", yes, no]\n"
	    "      additionalPrinterColumns:\n"
	    "      - name: Spec\n"
	    "        type: string\n"
	    "        jsonPath: .spec.cronSpec\n"
	    "        description: >-\n"
	    "          The cron spec defining the\n"
	    "          interval a CronJob is run\n",
	    "{\"apiVersion\": \"apiextensions.k8s.io/v1\","
	    " \"kind\": \"CustomResourceDefinition\","
	    " \"metadata\": {\"name\": \"crontabs.stable.example.com\"},"
	    " \"spec\": {\"group\": \"stable.example.com\", \"scope\": "
	    "\"Namespaced\","
	    "  \"names\": {\"plural\": \"crontabs\", \"singular\": \"crontab\","
	    "   \"kind\": \"CronTab\", \"shortNames\": [\"ct\"]},"
	    "  \"versions\": [{\"name\": \"v1\", \"served\": true, "
	    "\"storage\": true,"
	    "   \"schema\": {\"openAPIV3Schema\": {\"type\": \"object\","
	    "    \"properties\": {\"spec\": {\"type\": \"object\", "
	    "\"properties\": {"
	    "     \"cronSpec\": {\"type\": \"string\", \"pattern\": "
	    "\"^(\\\\d+|\\\\*)(/\\\\d+)?$\"},"
	    "     \"image\": {\"type\": \"string\", \"pattern\": "
	    "\"^(\\\\d+|\\\\*)(/\\\\d+)?$\"},"
	    "     \"replicas\": {\"type\": \"integer\", \"minimum\": 1, "
	    "\"default\": 1},"
	    "     \"ratio\": {\"type\": \"number\", \"default\": 0.5},"
	    "     \"mode\": {\"type\": \"string\", \"pattern\": "
	    "\"^(\\\\d+|\\\\*)(/\\\\d+)?$\","
	    "      \"enum\": [\"on\", \"off\", true, false]}}}}}},"
	    "   \"additionalPrinterColumns\": [{\"name\": \"Spec\", \"type\": "
	    "\"string\","
	    "    \"jsonPath\": \".spec.cronSpec\","
	    "    \"description\": \"The cron spec defining the interval a "
	    "CronJob is run\"}]}]}}");
}

/* ------------------------------------------------------------------------ */
/* Writing.                                                                  */

Test(yaml_emit, negative_floats_print_their_shortest_digits)
{
	expect_yaml("{\"a\": -0.1, \"b\": [-1.1, -0.3], \"c\": -1e-7}",
		    "a: -0.1\nb:\n- -1.1\n- -0.3\nc: -1e-07\n");
}

Test(yaml_emit, objects_print_like_kubectl)
{
	expect_yaml("{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\","
		    " \"metadata\": {\"name\": \"x\", \"labels\": {\"b\": "
		    "\"2\", \"a\": \"true\"}},"
		    " \"data\": {\"k\": \"line1\\nline2\\n\", \"empty\": \"\", "
		    "\"n\": \"123\"},"
		    " \"list\": [{\"a\": 1, \"b\": [1, 2]}, [], {}, [[1]]], "
		    "\"z\": null,"
		    " \"f\": 1.5, \"r\": 2.0, \"big\": 1e21, \"t\": true}",
		    "apiVersion: v1\n"
		    "big: 1e+21\n"
		    "data:\n"
		    "  empty: \"\"\n"
		    "  k: |\n"
		    "    line1\n"
		    "    line2\n"
		    "  \"n\": \"123\"\n"
		    "f: 1.5\n"
		    "kind: ConfigMap\n"
		    "list:\n"
		    "- a: 1\n"
		    "  b:\n"
		    "  - 1\n"
		    "  - 2\n"
		    "- []\n"
		    "- {}\n"
		    "- - - 1\n"
		    "metadata:\n"
		    "  labels:\n"
		    "    a: \"true\"\n"
		    "    b: \"2\"\n"
		    "  name: x\n"
		    "r: 2.0\n"
		    "t: true\n"
		    "z: null\n");
}

Test(yaml_emit, scalars_at_the_root)
{
	expect_yaml("{}", "{}\n");
	expect_yaml("[]", "[]\n");
	expect_yaml("null", "null\n");
	expect_yaml("42", "42\n");
	expect_yaml("-7", "-7\n");
	expect_yaml("\"plain root\"", "plain root\n");
	expect_yaml("\"true\"", "\"true\"\n");
	expect_yaml("\"multi\\nroot\"", "|-\n  multi\n  root\n");
	expect_yaml("\"multi\\nroot\\n\"", "|\n  multi\n  root\n");
}

Test(yaml_emit, keys_sort_in_go_yaml_order)
{
	expect_yaml(
	    "{\"k10\": 1, \"k9\": 2, \"K\": 3, \"_\": 4, \"1\": 5,"
	    " \"a\": 6, \"k09\": 7, \"k009\": 8, \"a1b\": 9, \"a01b\": 10,"
	    " \"a-b\": 11, \"a.b\": 12, \"a_b\": 13, \"A\": 14, \"\": 15,"
	    " \"\\u00e9\": 16}",
	    "\"\": 15\n"
	    "_: 4\n"
	    "\"1\": 5\n"
	    "A: 14\n"
	    "K: 3\n"
	    "a: 6\n"
	    "a-b: 11\n"
	    "a.b: 12\n"
	    "a_b: 13\n"
	    "a1b: 9\n"
	    "a01b: 10\n"
	    "k9: 2\n"
	    "k09: 7\n"
	    "k009: 8\n"
	    "k10: 1\n"
	    "é: 16\n");
}

Test(yaml_emit, strings_are_quoted_when_plain_would_change_them)
{
	expect_yaml(
	    "[\"true\", \"123\", \"\", \"a: b\", \"- x\", \"#c\", \" lead\","
	    " \"trail \", \"1:20\", \"x #y\", \"@a\", \"%a\", \"`a\","
	    " \"null\", \"~\", \"y\", \"0x1F\", \"1e3\", \"2001-12-14\","
	    " \"\\u00e9\", \"a\\tb\", \"\\u0001\", \"1_000\", \"Yes\", \"yEs\","
	    " \"<<\", \"=\", \"+\", \"-\", \".5\", \"._5\", \"2001-02-29\"]",
	    "- \"true\"\n"
	    "- \"123\"\n"
	    "- \"\"\n"
	    "- 'a: b'\n"
	    "- '- x'\n"
	    "- '#c'\n"
	    "- ' lead'\n"
	    "- 'trail '\n"
	    "- \"1:20\"\n"
	    "- 'x #y'\n"
	    "- '@a'\n"
	    "- '%a'\n"
	    "- '`a'\n"
	    "- \"null\"\n"
	    "- \"~\"\n"
	    "- \"y\"\n"
	    "- \"0x1F\"\n"
	    "- \"1e3\"\n"
	    "- \"2001-12-14\"\n"
	    "- é\n"
	    "- \"a\\tb\"\n"
	    "- \"\\x01\"\n"
	    "- \"1_000\"\n"
	    "- \"Yes\"\n"
	    "- yEs\n"
	    "- <<\n"
	    "- =\n"
	    "- +\n"
	    "- '-'\n"
	    "- \".5\"\n"
	    "- ._5\n"
	    "- 2001-02-29\n");
}

Test(yaml_emit, multi_line_strings_are_literal_blocks)
{
	expect_yaml(
	    "{\"a\": \"x\\n  y\", \"b\": \"  lead\\nx\", \"c\": \"keep\\n\\n\","
	    " \"d\": \"trailing \\nspace\", \"e\": \"a\\r\\nb\"}",
	    "a: |-\n"
	    "  x\n"
	    "    y\n"
	    "b: |2-\n"
	    "    lead\n"
	    "  x\n"
	    "c: |+\n"
	    "  keep\n"
	    "\n"
	    "d: \"trailing \\nspace\"\n"
	    "e: \"a\\r\\nb\"\n");
}

Test(yaml_emit, long_plain_strings_fold_at_80_columns)
{
	expect_yaml(
	    "[\"sentence one is here. sentence two is also here and it keeps"
	    " on going and going until the line is long\"]",
	    "- sentence one is here. sentence two is also here and it keeps"
	    " on going and going\n"
	    "  until the line is long\n");
}

Test(yaml_emit, reals_print_shortest_and_stay_reals)
{
	expect_yaml("[1.5, 1e21, 1234567.5, 0.000001, 1e-7, 0.1, 123456.789,"
		    " 2.0, 100000.0, -0.0, 1.7976931348623157e308, 5e-324]",
		    "- 1.5\n"
		    "- 1e+21\n"
		    "- 1.2345675e+06\n"
		    "- 1e-06\n"
		    "- 1e-07\n"
		    "- 0.1\n"
		    "- 123456.789\n"
		    "- 2.0\n"
		    "- 100000.0\n"
		    "- -0.0\n"
		    "- 1.7976931348623157e+308\n"
		    "- 5e-324\n");
}

Test(yaml_emit, strings_with_nul_survive)
{
	json_t *doc = json_pack("{s:s#}", "k", "a\0b", (int)3);
	cr_assert_not_null(doc);
	expect_roundtrip(doc);
	json_decref(doc);
}

/* ------------------------------------------------------------------------ */
/* Round trips.                                                              */

static const char *tricky[] = {
    "",
    " ",
    "  ",
    "\n",
    "\n\n",
    "a\n",
    "a\n\n",
    "\na",
    " a",
    "a ",
    "a\n ",
    " \na",
    "a \nb",
    "a\tb",
    "\t",
    "\r",
    "a\r\nb",
    "true",
    "yes",
    "Y",
    "n",
    "off",
    "null",
    "Null",
    "~",
    "<<",
    "123",
    "-0",
    "0x1F",
    "0o17",
    "017",
    "08",
    "1e3",
    ".5",
    "1_000",
    "1:20",
    "1:20:30.5",
    "2001-12-14",
    "2001-12-14 21:59:43.10",
    "- a",
    "-",
    "--",
    "---",
    "...",
    "? a",
    "?",
    ":",
    "a:",
    ": a",
    "a: b",
    "a:b",
    "a #b",
    "#a",
    "a#",
    "[",
    "]",
    "{",
    "}",
    ",",
    "a,b",
    "&a",
    "*a",
    "!a",
    "!!str",
    "|",
    "|-",
    ">",
    ">+",
    "'",
    "\"",
    "''",
    "\"\"",
    "%",
    "@",
    "`",
    "\\",
    "\\n",
    "é",
    "日本語",
    "😀",
    "\xc2\x85",
    "\xe2\x80\xa8",
    "\xe2\x80\xa9",
    "\xef\xbb\xbf"
    "bom",
    "\x01",
    "\x7f",
    "\xc2\xa0",
    "a\xc2\xa0",
    "x\n  y\n",
    "  lead\nx",
    "trailing \nspace",
    "tab\tin\nmulti",
    "# comment\nx",
    "a: b\nc",
    "key: |\n  v",
    "long line long line long line long line long line long line long "
    "line long line long line long line long line long line",
    "wordwordwordwordwordwordwordwordwordwordwordwordwordwordwordwordword"
    "wordwordwordwordwordwordword and more words after the long one here",
    "two  spaces  between  words  in  a  string  long  enough  to  fold "
    "over  the  eighty  column  limit  of  the  emitter",
    "a\n\n\nb\n\n",
    "\n\nleading breaks",
    " \n ",
    "x\n\t\ty",
};

Test(yaml_roundtrip, tricky_strings_as_values_and_keys)
{
	for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		json_t *doc = json_pack("{s:s, s:[s], s:{s:s}}", "v", tricky[i],
					"l", tricky[i], "m", tricky[i], "x");
		cr_assert_not_null(doc, "%zu", i);
		expect_roundtrip(doc);
		json_decref(doc);
		doc = json_string(tricky[i]);
		expect_roundtrip(doc);
		json_decref(doc);
	}
}

static json_t *rand_string(uint64_t *st, bool key)
{
	static const char *frag[] = {
	    "a",
	    "b",
	    "z",
	    "A",
	    " ",
	    "  ",
	    "\n",
	    "\t",
	    ":",
	    ": ",
	    "#",
	    " #",
	    "-",
	    "- ",
	    "'",
	    "\"",
	    "\\",
	    ",",
	    "[",
	    "]",
	    "{",
	    "}",
	    "&",
	    "*",
	    "!",
	    "|",
	    ">",
	    "%",
	    "@",
	    "`",
	    "?",
	    "~",
	    "0",
	    "1",
	    "9",
	    ".",
	    "_",
	    "e",
	    "x",
	    "o",
	    "b",
	    "+",
	    "yes",
	    "no",
	    "on",
	    "true",
	    "null",
	    "é",
	    "日",
	    "😀",
	    "\xc2\x85",
	    "\xe2\x80\xa8",
	    "\xef\xbb\xbf",
	    "\r",
	    "\x01",
	    "---",
	    "...",
	    "<<",
	    "0x",
	    "1e5",
	    "2001-12-14",
	    "\xc2\xa0",
	    "lorem ipsum dolor sit amet ",
	};
	size_t nfrag = sizeof frag / sizeof frag[0];
	char buf[512];
	size_t o = 0;
	int parts = (int)(ts_rand(st) % 8);
	for (int i = 0; i < parts; i++) {
		const char *f = frag[ts_rand(st) % nfrag];
		size_t l = strlen(f);
		if (o + l >= sizeof buf)
			break;
		memcpy(buf + o, f, l);
		o += l;
	}
	if (!key && ts_rand(st) % 16 == 0) /* an occasional NUL */
		buf[o++] = '\0';
	return json_stringn(buf, o);
}

static json_t *rand_value(uint64_t *st, int depth)
{
	unsigned kind = (unsigned)(ts_rand(st) % (depth > 5 ? 6 : 9));
	switch (kind) {
	case 0:
		return json_null();
	case 1:
		return json_boolean(ts_rand(st) & 1);
	case 2: {
		uint64_t r = ts_rand(st);
		switch (r % 4) {
		case 0:
			return json_integer((json_int_t)(r >> 2) % 100);
		case 1:
			return json_integer(-(json_int_t)((r >> 2) % 100000));
		default:
			return json_integer((json_int_t)ts_rand(st));
		}
	}
	case 3: {
		uint64_t r = ts_rand(st);
		double d;
		switch (r % 4) {
		case 0:
			d = (double)(int64_t)(r >> 8) / 1024.0;
			break;
		case 1:
			d = (double)((r >> 8) % 1000); /* integral reals */
			break;
		case 2: {
			uint64_t bits = ts_rand(st);
			memcpy(&d, &bits, sizeof d);
			if (!isfinite(d))
				d = 0.25;
			break;
		}
		default:
			d = ((double)(r >> 11) / 9007199254740992.0) *
			    (r & 1024 ? 1e-300 : 1e300);
		}
		return json_real(d);
	}
	case 4:
	case 5:
		return rand_string(st, false);
	case 6:
	case 7: {
		json_t *o = json_object();
		int n = (int)(ts_rand(st) % 6);
		for (int i = 0; i < n; i++) {
			json_t *k = rand_string(st, true);
			json_object_setn_new(o, json_string_value(k),
					     json_string_length(k),
					     rand_value(st, depth + 1));
			json_decref(k);
		}
		return o;
	}
	default: {
		json_t *a = json_array();
		int n = (int)(ts_rand(st) % 6);
		for (int i = 0; i < n; i++)
			json_array_append_new(a, rand_value(st, depth + 1));
		return a;
	}
	}
}

Test(yaml_roundtrip, random_documents_survive_emit_and_parse)
{
	uint64_t st = ts_seed("yaml_roundtrip.random", 0x9a31);
	int n = 3000;
	for (int i = 0; i < n; i++) {
		json_t *doc = rand_value(&st, 0);
		cr_assert_not_null(doc);
		expect_roundtrip(doc);
		json_decref(doc);
	}
}

/* Bad input never crashes, hangs or leaks; what parses re-emits to the
   same tree. */
Test(yaml_roundtrip, mutated_documents_parse_or_fail_cleanly)
{
	static const char *seeds[] = {
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	    "  labels: {a: \"1\", b: yes}\ndata:\n  k: |\n    v\n    w\n"
	    "  j: >-\n    folded\n    text\n",
	    "a: &a {x: [1, 2.5, ~, 'q'], y: !!str 3}\nb: *a\nc:\n  <<: *a\n"
	    "  z: \"\\u00e9\\t\"\n- bad\n",
	    "- [a, {b: c}, [d]]\n- ? k\n  : v\n- !!binary aGVsbG8=\n"
	    "- 0x1F\n- 1e3\n- .inf\n",
	    "{\"json\": [1, 2, {\"x\": null}], \"s\": \"a\\nb\"}",
	};
	static const char alphabet[] = "-:?[]{},&*!|>'\"%@#\n\t \\.0aZ~<";
	uint64_t st = ts_seed("yaml_roundtrip.mutate", 0x3a7e);
	int n = 4000;
	char buf[1024];
	for (int i = 0; i < n; i++) {
		const char *seed = seeds[ts_rand(&st) % 4];
		size_t len = strlen(seed);
		memcpy(buf, seed, len);
		int muts = 1 + (int)(ts_rand(&st) % 4);
		for (int m = 0; m < muts; m++) {
			size_t at = len ? ts_rand(&st) % len : 0;
			switch (ts_rand(&st) % 4) {
			case 0: /* replace */
				if (len)
					buf[at] =
					    alphabet[ts_rand(&st) %
						     (sizeof alphabet - 1)];
				break;
			case 1: /* delete */
				if (len) {
					memmove(buf + at, buf + at + 1,
						len - at - 1);
					len--;
				}
				break;
			case 2: /* insert */
				if (len + 1 < sizeof buf) {
					memmove(buf + at + 1, buf + at,
						len - at);
					buf[at] =
					    alphabet[ts_rand(&st) %
						     (sizeof alphabet - 1)];
					len++;
				}
				break;
			default: /* a raw byte */
				if (len)
					buf[at] = (char)(ts_rand(&st) & 0xff);
			}
		}
		struct srv_error err = {0};
		json_t *out = NULL;
		bool strict = ts_rand(&st) & 1;
		lp_err rc = strict
				? srv_yaml_to_json_strict(buf, len, &out, &err)
				: srv_yaml_to_json(buf, len, &out, &err);
		if (rc != LP_OK) {
			cr_assert_eq(rc, LP_E_BADREQUEST, "%s on %.*s",
				     lp_errname(rc), (int)len, buf);
			cr_assert_null(out);
			cr_assert_neq(err.message[0], '\0');
			continue;
		}
		cr_assert_not_null(out);
		expect_roundtrip(out);
		json_decref(out);
	}
}

/* kube's ErrorList.ToAggregate says a repeated cause once in the message
   (two rules failing with one message); details keep both. */
Test(srv_error, invalid_says_a_repeated_cause_once)
{
	struct srv_error err = {0};
	srv_error_cause(&err, "FieldValueInvalid", "spec.r",
			"Invalid value: \"object\": only one");
	srv_error_cause(&err, "FieldValueInvalid", "spec.r",
			"Invalid value: \"object\": only one");
	srv_error_invalid(&err, "Thing", "ex.com", "t");
	cr_assert_eq(err.n_causes, 2);
	cr_assert_str_eq(err.message, "Thing.ex.com \"t\" is invalid: spec.r: "
				      "Invalid value: \"object\": only one");
	srv_error_cause(&err, "FieldValueRequired", "spec.q", "Required value");
	srv_error_invalid(&err, "Thing", "ex.com", "t");
	cr_assert_str_eq(
	    err.message,
	    "Thing.ex.com \"t\" is invalid: [spec.r: Invalid value: "
	    "\"object\": only one, spec.q: Required value]");
}
