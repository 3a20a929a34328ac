/*
 * test_schema.c -- tests of server/schema.c: compiled CRD schemas pruning,
 * defaulting and validating custom resources.
 *
 * Unit tests per keyword use kube's message texts (reference §2.3, §8.7);
 * the corpus test runs every CRD, example and invalid object of
 * shared/testdata/crds through compile, prune, default and validate and
 * prints one line per document.
 *
 * No test sets .timeout (see test_yamljson.c: Criterion's runner leaks
 * under ASan with overlapping timed tests).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/schema.h"
#include "../../server/yamljson.h"
#include "corpus.h"

/* ------------------------------------------------------------------------ */
/* Helpers.                                                                  */

static json_t *js(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	cr_assert_not_null(v, "bad JSON %s: %s", text, je.text);
	return v;
}

static struct srv_schema *sch(const char *schema_json)
{
	json_t *j = js(schema_json);
	struct srv_error err = {0};
	struct srv_schema *s = NULL;
	lp_err rc = srv_schema_compile(j, &s, &err);
	cr_assert_eq(rc, LP_OK, "compile %s: %s: %s", schema_json,
		     lp_errname(rc), err.message);
	json_decref(j);
	return s;
}

static void dump_causes(const struct srv_error *err, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < err->n_causes && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "\n  [%s] %s: %s",
					srv_cause_get(err, i).reason,
					srv_cause_get(err, i).field,
					srv_cause_get(err, i).message);
}

static void expect_ok(const struct srv_schema *s, const char *obj)
{
	json_t *o = js(obj);
	struct srv_error err = {0};
	lp_err rc = srv_schema_validate(s, o, &err);
	char buf[4096];
	dump_causes(&err, buf, sizeof buf);
	cr_assert_eq(rc, LP_OK, "%s should be valid, got %s:%s", obj,
		     lp_errname(rc), buf);
	json_decref(o);
}

/* obj is invalid with (at least) the cause reason/field/message. */
static void expect_cause(const struct srv_schema *s, const char *obj,
			 const char *reason, const char *field,
			 const char *message)
{
	json_t *o = js(obj);
	struct srv_error err = {0};
	lp_err rc = srv_schema_validate(s, o, &err);
	char buf[4096];
	dump_causes(&err, buf, sizeof buf);
	cr_assert_eq(rc, LP_E_INVALID, "%s should be invalid, got %s", obj,
		     lp_errname(rc));
	cr_assert_str_empty(err.message);
	bool found = false;
	for (int i = 0; i < err.n_causes && !found; i++)
		found = strcmp(srv_cause_get(&err, i).reason, reason) == 0 &&
			strcmp(srv_cause_get(&err, i).field, field) == 0 &&
			strcmp(srv_cause_get(&err, i).message, message) == 0;
	cr_assert(found, "%s: want [%s] %s: %s; got:%s", obj, reason, field,
		  message, buf);
	json_decref(o);
}

static void expect_invalid(const struct srv_schema *s, const char *obj)
{
	json_t *o = js(obj);
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_E_INVALID,
		     "%s should be invalid", obj);
	json_decref(o);
}

static void expect_json_eq(const json_t *got, const char *want)
{
	json_t *w = js(want);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	cr_assert(json_equal(got, w), "got %s, want %s", g, want);
	free(g);
	json_decref(w);
}

struct paths {
	char buf[2048];
};

/* Each path, "^" after one in an embedded resource's metadata. */
static void collect(void *ud, const char *path, bool embedded_meta)
{
	struct paths *p = ud;
	size_t l = strlen(p->buf);
	snprintf(p->buf + l, sizeof p->buf - l, "%s%s%s", l ? "," : "", path,
		 embedded_meta ? "^" : "");
}

/* ------------------------------------------------------------------------ */
/* Compile.                                                                  */

Test(schema_compile, rejects_non_object_and_bad_keyword_types)
{
	struct srv_error err = {0};
	struct srv_schema *s = NULL;
	json_t *j = js("\"x\"");
	cr_assert_eq(srv_schema_compile(j, &s, &err), LP_E_INVALID);
	cr_assert_null(s);
	json_decref(j);

	srv_error_clear(&err);
	j = js("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"string\","
	       "\"maxLength\":\"5\"}}}");
	cr_assert_eq(srv_schema_compile(j, &s, &err), LP_E_BADREQUEST);
	cr_assert_str_eq(err.message,
			 "json: cannot unmarshal string into Go struct field "
			 "JSONSchemaProps.properties.spec.maxLength of type int64");
	cr_assert_null(s);
	json_decref(j);
}

Test(schema_compile, depth_bound)
{
	/* 300 nested properties: refused; 200: fine. */
	for (int depth = 200; depth <= 300; depth += 100) {
		json_t *root = json_object(), *cur = root;
		json_object_set_new(root, "type", json_string("object"));
		for (int i = 0; i < depth; i++) {
			json_t *props = json_object(), *child = json_object();
			json_object_set_new(child, "type", json_string("object"));
			json_object_set_new(props, "a", child);
			json_object_set_new(cur, "properties", props);
			cur = child;
		}
		struct srv_error err = {0};
		struct srv_schema *s = NULL;
		lp_err rc = srv_schema_compile(root, &s, &err);
		if (depth == 200) {
			cr_assert_eq(rc, LP_OK, "%s", err.message);
		} else {
			cr_assert_eq(rc, LP_E_INVALID);
			cr_assert_null(s);
		}
		srv_schema_free(s);
		json_decref(root);
	}
}

Test(schema_compile, rules_and_pattern_warnings)
{
	struct srv_schema *s = sch(
		"{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":\"self.a\"}],"
		"\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
		"\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		"\"pattern\":\"\\\\p{L}+\",\"x-kubernetes-validations\":"
		"[{\"rule\":\"size(self) > 1\",\"message\":\"short\"}]}}}}}}");
	cr_assert_eq(srv_schema_rule_count(s), 2);
	const char *path, *rule, *msg;
	cr_assert(srv_schema_rule(s, 0, &path, &rule, &msg));
	cr_assert_str_eq(path, "");
	cr_assert_str_eq(rule, "self.a");
	cr_assert_null(msg);
	cr_assert(srv_schema_rule(s, 1, &path, &rule, &msg));
	cr_assert_str_eq(path, "spec.l[*]");
	cr_assert_str_eq(msg, "short");
	cr_assert_not(srv_schema_rule(s, 2, &path, &rule, &msg));
	/* \p{L} has no POSIX translation: PCRE2 checks it */
	cr_assert_eq(srv_schema_warning_count(s), 0);
	expect_ok(s, "{\"spec\":{\"l\":[\"\xc3\xa9t\xc3\xa9\"]}}");
	expect_invalid(s, "{\"spec\":{\"l\":[\"123\"]}}");
	srv_schema_free(s);
	/* one Go refuses is not compiled: a warning, and it matches all */
	s = sch("{\"type\":\"object\",\"properties\":{\"x\":"
		"{\"type\":\"string\",\"pattern\":\"(a\"}}}");
	cr_assert_eq(srv_schema_warning_count(s), 1);
	cr_assert_not_null(strstr(srv_schema_warning(s, 0), " at x "));
	expect_ok(s, "{\"x\":\"b\"}");
	srv_schema_free(s);
	srv_schema_free(NULL);
}

/* ------------------------------------------------------------------------ */
/* Validation keywords.                                                      */

#define SPEC(props) \
	"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\"," \
	"\"properties\":{" props "}}}}"

Test(schema_validate, type)
{
	struct srv_schema *s = sch(SPEC(
		"\"replicas\":{\"type\":\"integer\"},\"n\":{\"type\":\"number\"},"
		"\"s\":{\"type\":\"string\"},\"b\":{\"type\":\"boolean\"},"
		"\"o\":{\"type\":\"object\"},\"a\":{\"type\":\"array\"}"));
	expect_ok(s, "{\"spec\":{\"replicas\":3,\"n\":1.5,\"s\":\"x\",\"b\":true,"
		     "\"o\":{},\"a\":[]}}");
	expect_ok(s, "{\"spec\":{\"n\":3}}");
	expect_ok(s, "{\"spec\":{\"replicas\":3.0}}"); /* kube: integral real */
	expect_cause(s, "{\"spec\":{\"replicas\":\"string\"}}",
		     "FieldValueTypeInvalid", "spec.replicas",
		     "Invalid value: \"string\": spec.replicas in body must be of "
		     "type integer: \"string\"");
	expect_cause(s, "{\"spec\":{\"replicas\":3.5}}", "FieldValueTypeInvalid",
		     "spec.replicas",
		     "Invalid value: \"number\": spec.replicas in body must be of "
		     "type integer: \"number\"");
	/* a float64 in kube past +-(2^53 - 1) is no integer, whole or not
	   (an integer literal past int64 decodes to one) */
	expect_ok(s, "{\"spec\":{\"replicas\":9007199254740991.0}}");
	expect_ok(s, "{\"spec\":{\"replicas\":-9007199254740991.0}}");
	expect_cause(
	    s, "{\"spec\":{\"replicas\":1e20}}", "FieldValueTypeInvalid",
	    "spec.replicas",
	    "Invalid value: \"number\": spec.replicas in body must be of "
	    "type integer: \"number\"");
	expect_invalid(s, "{\"spec\":{\"replicas\":9223372036854775808.0}}");
	expect_invalid(s, "{\"spec\":{\"replicas\":-9007199254740993.0}}");
	expect_cause(s, "{\"spec\":{\"b\":null}}", "FieldValueTypeInvalid",
		     "spec.b",
		     "Invalid value: \"null\": spec.b in body must be of type "
		     "boolean: \"null\"");
	expect_invalid(s, "{\"spec\":{\"o\":[]}}");
	expect_invalid(s, "{\"spec\":{\"a\":{}}}");
	expect_invalid(s, "{\"spec\":{\"s\":1}}");
	expect_invalid(s, "{\"spec\":[]}");
	srv_schema_free(s);
}

Test(schema_validate, nullable_and_int_or_string)
{
	struct srv_schema *s = sch(SPEC(
		"\"n\":{\"type\":\"string\",\"nullable\":true},"
		"\"p\":{\"x-kubernetes-int-or-string\":true}"));
	expect_ok(s, "{\"spec\":{\"n\":null,\"p\":80}}");
	expect_ok(s, "{\"spec\":{\"p\":\"http\"}}");
	expect_cause(s, "{\"spec\":{\"p\":true}}", "FieldValueTypeInvalid",
		     "spec.p",
		     "Invalid value: \"boolean\": spec.p in body must be of type "
		     "integer,string: \"boolean\"");
	expect_invalid(s, "{\"spec\":{\"p\":1.5}}");
	expect_invalid(s, "{\"spec\":{\"p\":1e20}}");
	srv_schema_free(s);
}

Test(schema_validate, required)
{
	struct srv_schema *s = sch(
		"{\"type\":\"object\",\"required\":[\"spec\"],\"properties\":{"
		"\"spec\":{\"type\":\"object\",\"required\":[\"a\",\"b\"],"
		"\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"string\"}}}}}");
	expect_ok(s, "{\"spec\":{\"a\":\"x\",\"b\":\"y\"}}");
	expect_cause(s, "{}", "FieldValueRequired", "spec", "Required value");
	expect_cause(s, "{\"spec\":{\"a\":\"x\"}}", "FieldValueRequired",
		     "spec.b", "Required value");
	srv_schema_free(s);
}

Test(schema_validate, enum_values)
{
	struct srv_schema *s = sch(SPEC(
		"\"e\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},"
		"\"i\":{\"type\":\"integer\",\"enum\":[1,2]}"));
	expect_ok(s, "{\"spec\":{\"e\":\"a\",\"i\":2}}");
	expect_cause(s, "{\"spec\":{\"e\":\"x\"}}", "FieldValueNotSupported",
		     "spec.e",
		     "Unsupported value: \"x\": supported values: \"a\", \"b\"");
	expect_cause(s, "{\"spec\":{\"i\":3}}", "FieldValueNotSupported",
		     "spec.i",
		     "Unsupported value: 3: supported values: \"1\", \"2\"");
	srv_schema_free(s);
}

Test(schema_validate, numeric_bounds)
{
	struct srv_schema *s = sch(SPEC(
		"\"replicas\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
		"\"x\":{\"type\":\"number\",\"minimum\":0,\"exclusiveMinimum\":true,"
		"\"maximum\":1.5,\"exclusiveMaximum\":true},"
		"\"m\":{\"type\":\"integer\",\"multipleOf\":5},"
		"\"f\":{\"type\":\"number\",\"multipleOf\":0.1},"
		"\"big\":{\"type\":\"number\",\"maximum\":1000000}"));
	expect_ok(s, "{\"spec\":{\"replicas\":10,\"x\":1.2,\"m\":15,\"f\":0.3}}");
	expect_ok(s, "{\"spec\":{\"replicas\":1}}");
	expect_cause(s, "{\"spec\":{\"replicas\":11}}", "FieldValueInvalid",
		     "spec.replicas",
		     "Invalid value: 11: spec.replicas in body should be less "
		     "than or equal to 10");
	expect_cause(s, "{\"spec\":{\"replicas\":0}}", "FieldValueInvalid",
		     "spec.replicas",
		     "Invalid value: 0: spec.replicas in body should be greater "
		     "than or equal to 1");
	expect_cause(s, "{\"spec\":{\"x\":0}}", "FieldValueInvalid", "spec.x",
		     "Invalid value: 0: spec.x in body should be greater than 0");
	expect_cause(s, "{\"spec\":{\"x\":1.5}}", "FieldValueInvalid", "spec.x",
		     "Invalid value: 1.5: spec.x in body should be less than 1.5");
	expect_cause(s, "{\"spec\":{\"m\":7}}", "FieldValueInvalid", "spec.m",
		     "Invalid value: 7: spec.m in body should be a multiple of 5");
	expect_invalid(s, "{\"spec\":{\"f\":0.35}}");
	/* an integer value meets a bound as an integer (kube-openapi's
	   MaximumInt): printed so, and truncated when it has a fraction */
	expect_cause(s, "{\"spec\":{\"big\":2000000}}", "FieldValueInvalid",
		     "spec.big",
		     "Invalid value: 2000000: spec.big in body should be less "
		     "than or equal to 1000000");
	expect_cause(
	    s, "{\"spec\":{\"big\":2000000.5}}", "FieldValueInvalid",
	    "spec.big",
	    "Invalid value: 2.0000005e+06: spec.big in body should be less "
	    "than or equal to 1e+06");
	expect_cause(s, "{\"spec\":{\"x\":1}}", "FieldValueInvalid", "spec.x",
		     "Invalid value: 1: spec.x in body should be less than 1");
	srv_schema_free(s);
	s = sch(SPEC("\"c\":{\"type\":\"integer\",\"format\":\"int64\","
		     "\"minimum\":-5000000.0,\"maximum\":4294967295.0}"));
	expect_cause(s, "{\"spec\":{\"c\":4294967296}}", "FieldValueInvalid",
		     "spec.c",
		     "Invalid value: 4294967296: spec.c in body should be less "
		     "than or equal to 4294967295");
	expect_cause(
	    s, "{\"spec\":{\"c\":-5000001}}", "FieldValueInvalid", "spec.c",
	    "Invalid value: -5000001: spec.c in body should be greater "
	    "than or equal to -5000000");
	srv_schema_free(s);
}

Test(schema_validate, string_lengths_in_runes)
{
	struct srv_schema *s = sch(SPEC(
		"\"s\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":5}"));
	expect_ok(s, "{\"spec\":{\"s\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}}");
	expect_cause(s, "{\"spec\":{\"s\":\"ab\"}}", "FieldValueInvalid", "spec.s",
		     "Invalid value: \"ab\": spec.s in body should be at least 3 "
		     "chars long");
	expect_cause(s, "{\"spec\":{\"s\":\"abcdef\"}}", "FieldValueTooLong",
		     "spec.s", "Too long: may not be more than 5 bytes");
	srv_schema_free(s);
}

/* kube-openapi's string validator stops at its first failure, in the
   order maxLength, minLength, pattern; a format is checked besides */
Test(schema_validate, string_reports_its_first_failure)
{
	struct srv_schema *s = sch(
	    SPEC("\"h\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":5,"
		 "\"pattern\":\"^[a-z]+$\"},"
		 "\"ip\":{\"type\":\"string\",\"maxLength\":3,"
		 "\"pattern\":\"^[0-9]$\",\"format\":\"ipv4\"}"));
	const char *cases[][3] = {
	    {"{\"spec\":{\"h\":\"\"}}", "FieldValueInvalid",
	     "Invalid value: \"\": spec.h in body should be at least 1 chars "
	     "long"},
	    {"{\"spec\":{\"h\":\"ABCDEFG\"}}", "FieldValueTooLong",
	     "Too long: may not be more than 5 bytes"},
	    {"{\"spec\":{\"h\":\"AB\"}}", "FieldValueInvalid",
	     "Invalid value: \"AB\": spec.h in body should match "
	     "'^[a-z]+$'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		expect_cause(s, cases[i][0], cases[i][1], "spec.h",
			     cases[i][2]);
		json_t *o = js(cases[i][0]);
		struct srv_error err = {0};
		srv_schema_validate(s, o, &err);
		char buf[4096];
		dump_causes(&err, buf, sizeof buf);
		cr_assert_eq(err.n_causes, 1, "%s:%s", cases[i][0], buf);
		json_decref(o);
	}
	/* too long, and not an IPv4 address: two errors, not three */
	json_t *o = js("{\"spec\":{\"ip\":\"abcd\"}}");
	struct srv_error err = {0};
	srv_schema_validate(s, o, &err);
	char buf[4096];
	dump_causes(&err, buf, sizeof buf);
	cr_assert_eq(err.n_causes, 2, "%s", buf);
	cr_assert_str_eq(srv_cause_get(&err, 0).reason, "FieldValueTooLong",
			 "%s", buf);
	cr_assert_str_eq(srv_cause_get(&err, 1).reason, "FieldValueTypeInvalid",
			 "%s", buf);
	json_decref(o);
	srv_schema_free(s);
}

Test(schema_validate, pattern)
{
	struct srv_schema *s = sch(SPEC(
		"\"cronSpec\":{\"type\":\"string\",\"pattern\":"
		"\"^(\\\\d+|\\\\*)(/\\\\d+)?(\\\\s+(\\\\d+|\\\\*)(/\\\\d+)?){4}$\"},"
		"\"w\":{\"type\":\"string\",\"pattern\":\"^[\\\\w.-]+$\"},"
		"\"u\":{\"type\":\"string\",\"pattern\":\"^.{2}$\"},"
		"\"i\":{\"type\":\"string\",\"pattern\":\"(?i)^abc(?:d|e)+?$\"},"
		"\"bad\":{\"type\":\"string\",\"pattern\":\"(\"}"));
	expect_ok(s, "{\"spec\":{\"cronSpec\":\"*/5 * * * *\",\"w\":\"a_b.c-d\","
		     "\"u\":\"\\u00e9\\u00e9\",\"i\":\"ABCde\",\"bad\":\"x\"}}");
	expect_cause(s, "{\"spec\":{\"cronSpec\":\"* * * *\"}}",
		     "FieldValueInvalid", "spec.cronSpec",
		     "Invalid value: \"* * * *\": spec.cronSpec in body should "
		     "match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'");
	expect_invalid(s, "{\"spec\":{\"w\":\"a b\"}}");
	expect_invalid(s, "{\"spec\":{\"u\":\"abc\"}}");
	expect_invalid(s, "{\"spec\":{\"i\":\"abcf\"}}");
	srv_schema_free(s);
}

Test(schema_validate, pattern_flags_are_scoped_as_re2)
{
	/* RE2 scopes (?i) to the rest of its group and (?i:...) to the
	   group; . does not match a newline without (?s); named groups are
	   groups (prometheus-operator's AlertmanagerConfig weekday pattern:
	   "day" stays case-sensitive) */
	struct srv_schema *s = sch(SPEC(
		"\"wd\":{\"type\":\"string\",\"pattern\":\"^((?i)sun|mon|tues|wednes|thurs|fri|satur)day$\"},"
		"\"g\":{\"type\":\"string\",\"pattern\":\"^(?i:ab)c[x-z]$\"},"
		"\"k\":{\"type\":\"string\",\"pattern\":\"^(?i)[b-d]+$\"},"
		"\"dot\":{\"type\":\"string\",\"pattern\":\"^.+$\"},"
		"\"sdot\":{\"type\":\"string\",\"pattern\":\"(?s)^.+$\"},"
		"\"n\":{\"type\":\"string\",\"pattern\":\"^(?P<x>a)(?<y>b)$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"wd\":\"MONday\",\"g\":\"aBcy\",\"k\":\"bCd\","
		     "\"dot\":\"ab\",\"sdot\":\"a\\nb\",\"n\":\"ab\"}}");
	expect_invalid(s, "{\"spec\":{\"wd\":\"MONDAY\"}}");
	expect_invalid(s, "{\"spec\":{\"g\":\"abCy\"}}");
	expect_invalid(s, "{\"spec\":{\"g\":\"abcY\"}}");
	expect_invalid(s, "{\"spec\":{\"k\":\"bE\"}}");
	expect_invalid(s, "{\"spec\":{\"dot\":\"a\\nb\"}}");
	expect_invalid(s, "{\"spec\":{\"n\":\"ba\"}}");
	srv_schema_free(s);
}

Test(schema_validate, pattern_classes)
{
	/* Go RE2 classes whose ], ^ and - POSIX reads differently. */
	struct srv_schema *s = sch(SPEC(
		"\"a\":{\"type\":\"string\",\"pattern\":\"^[0-9a-zA-Z-.]+$\"},"
		"\"b\":{\"type\":\"string\",\"pattern\":\"^[]a]+$\"},"
		"\"c\":{\"type\":\"string\",\"pattern\":\"^[^\\\\]^]+$\"},"
		"\"d\":{\"type\":\"string\",\"pattern\":\"^[a\\\\-z\\\\d]+$\"},"
		"\"e\":{\"type\":\"string\",\"pattern\":\"^x(?i)(abort|warn)?$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"a\":\"my-tenant.1\",\"b\":\"]a]\","
		     "\"c\":\"xy\",\"d\":\"a-z9\",\"e\":\"xWARN\"}}");
	expect_invalid(s, "{\"spec\":{\"a\":\"a_b\"}}");
	expect_invalid(s, "{\"spec\":{\"b\":\"b\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"x]\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"x^\"}}");
	expect_invalid(s, "{\"spec\":{\"d\":\"b\"}}");
	expect_invalid(s, "{\"spec\":{\"e\":\"xfail\"}}");
	srv_schema_free(s);
}

/* {"spec":{"<field>":"<n times c>"}} (malloc'd, with room for 60 more
   bytes), the run starting at *at. */
static char *spec_run(const char *field, char c, size_t n, int *at)
{
	char *obj = malloc(n + 64 + strlen(field));
	cr_assert_not_null(obj);
	*at = sprintf(obj, "{\"spec\":{\"%s\":\"", field);
	memset(obj + *at, c, n);
	strcpy(obj + *at + n, "\"}}");
	return obj;
}

/* Go patterns with no POSIX translation run on PCRE2 with Go's meaning:
   Unicode classes (cilium's "^\PC*$", found by an audit), the m flag, $
   at the very end only, \v a vertical tab alone. */
Test(schema_validate, patterns_on_pcre2)
{
	struct srv_schema *s = sch(SPEC(
	    "\"c\":{\"type\":\"string\",\"pattern\":\"^\\\\PC*$\"},"
	    "\"m\":{\"type\":\"string\",\"pattern\":\"(?m)^b$\"},"
	    "\"d\":{\"type\":\"string\",\"pattern\":\"^\\\\pL+$\"},"
	    "\"v\":{\"type\":\"string\",\"pattern\":\"^\\\\pL\\\\v$\"},"
	    "\"q\":{\"type\":\"string\",\"pattern\":\"\\\\pL\\\\Q)(\"},"
	    "\"u\":{\"type\":\"string\",\"pattern\":\"(?U)^\\\\pLa+$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"c\":\"log me \\u00e9\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"bell \\u0007\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"soft\\u00adhyphen\"}}"); /* Cf */
	expect_ok(s, "{\"spec\":{\"m\":\"a\\nb\\nc\"}}");
	expect_invalid(s, "{\"spec\":{\"m\":\"ab\"}}");
	expect_ok(s, "{\"spec\":{\"d\":\"abc\"}}");
	expect_invalid(s, "{\"spec\":{\"d\":\"abc\\n\"}}");
	expect_ok(s, "{\"spec\":{\"v\":\"x\\u000b\"}}");
	expect_invalid(s, "{\"spec\":{\"v\":\"x\\n\"}}");
	expect_ok(s, "{\"spec\":{\"q\":\"x)(\"}}");
	expect_invalid(s, "{\"spec\":{\"q\":\"x)\"}}");
	expect_ok(s, "{\"spec\":{\"u\":\"baaa\"}}");
	srv_schema_free(s);
	/* a search is one pass, whatever the pattern: 100,000 letters
	   under nested repetitions */
	s = sch(SPEC("\"x\":{\"type\":\"string\",\"pattern\":"
		     "\"\\\\pL((a|aa)+)+c\"}"));
	int o;
	char *big = spec_run("x", 'a', 100000, &o);
	expect_invalid(s, big);
	free(big);
	srv_schema_free(s);
}

/* Patterns glibc would take minutes and gigabytes to compile stay
   unchecked (a warning), at once: a repetition of a repetition and a
   nested repeat count too large (Go refuses both, and kube the CRD), and
   repeated groups holding repetitions nested deeper than 12 (Go takes
   them; glibc's automaton doubles with each level). */
Test(schema_compile, patterns_too_costly_for_glibc)
{
	static const char *const pats[] = {
	    "a+++++++++++++++++++++++++",
	    "(a{1,1000}){1,1000}",
	};
	for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
		char schema[512];
		snprintf(schema, sizeof schema,
			 SPEC("\"x\":{\"type\":\"string\",\"pattern\":\"%s\"}"),
			 pats[i]);
		struct srv_schema *s = sch(schema);
		cr_assert_eq(srv_schema_warning_count(s), 1, "%s", pats[i]);
		expect_ok(s, "{\"spec\":{\"x\":\"b\"}}");
		srv_schema_free(s);
	}
	/* deeper than 12, PCRE2's DFA checks it, in one pass */
	struct srv_schema *s = sch(SPEC("\"x\":{\"type\":\"string\",\"pattern\":"
		     "\"^((((((((((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)"
		     "+)+)+)+)+)+)+)+)+$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0);
	expect_ok(s, "{\"spec\":{\"x\":\"aaaa\"}}");
	expect_invalid(s, "{\"spec\":{\"x\":\"aab\"}}");
	srv_schema_free(s);
	/* twelve levels still compile and match */
	s = sch(SPEC("\"x\":{\"type\":\"string\",\"pattern\":"
		     "\"^((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"x\":\"aaa\"}}");
	expect_invalid(s, "{\"spec\":{\"x\":\"ab\"}}");
	srv_schema_free(s);
}

/* An unanchored pattern is matched in one pass from the start ("^.*(P)",
   or "^(P|.+(Q))" with Q's anchors never matching): prometheus-operator's
   size pattern took 107 s of CPU on these 100,000 digits when glibc tried
   every start position. A ^ inside P keeps Go's meaning after a newline,
   where glibc would let it match. */
Test(schema_validate, pattern_unanchored_long_value_and_newlines)
{
	struct srv_schema *s = sch(SPEC(
		"\"size\":{\"type\":\"string\",\"pattern\":"
		"\"(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$\"},"
		"\"b\":{\"type\":\"string\",\"pattern\":\"b\"},"
		"\"a\":{\"type\":\"string\",\"pattern\":\"x|\\\\Ab\"}"));
	size_t n = 100000;
	int k;
	char *obj = spec_run("size", '1', n, &k);
	expect_invalid(s, obj);
	strcpy(obj + k + n, "GiB\"}}");
	expect_ok(s, obj);
	memcpy(obj + k, "a\\n", 3); /* a newline first: ^0 cannot match */
	expect_ok(s, obj);
	obj[k + 3] = '0';
	strcpy(obj + k + 4, "\"}}");
	expect_invalid(s, obj);
	free(obj);
	expect_ok(s, "{\"spec\":{\"size\":\"0\",\"b\":\"a\\nb\",\"a\":\"bc\"}}");
	expect_ok(s, "{\"spec\":{\"size\":\"a\\n1.5MiB\",\"a\":\"a\\nx\"}}");
	expect_invalid(s, "{\"spec\":{\"size\":\"a\\n0\"}}");
	expect_invalid(s, "{\"spec\":{\"a\":\"a\\nb\"}}");
	expect_invalid(s, "{\"spec\":{\"b\":\"a\\nc\"}}");
	srv_schema_free(s);
}

/* Go folds s with U+017F (long s) and k with U+212A (Kelvin sign) under
   (?i), in literals, classes and ranges (Calico's case-insensitive enums
   and names). */
Test(schema_validate, pattern_case_folding_beyond_ascii)
{
	struct srv_schema *s = sch(SPEC(
		"\"e\":{\"type\":\"string\",\"pattern\":\"^(?i)(insert|append)?$\"},"
		"\"n\":{\"type\":\"string\",\"pattern\":\"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$\"},"
		"\"c\":{\"type\":\"string\",\"pattern\":\"^(?i)[kx]$\"},"
		"\"x\":{\"type\":\"string\",\"pattern\":\"^(?i)[^a-z]$\"},"
		"\"b\":{\"type\":\"string\",\"pattern\":\"^(?i)[b-d]$\"}"));
	expect_ok(s, "{\"spec\":{\"e\":\"IN\u017fERT\",\"n\":\"\u212aube\","
		     "\"c\":\"\u212a\",\"x\":\"1\",\"b\":\"C\"}}");
	expect_invalid(s, "{\"spec\":{\"x\":\"\u017f\"}}");
	expect_invalid(s, "{\"spec\":{\"b\":\"\u212a\"}}");
	expect_invalid(s, "{\"spec\":{\"e\":\"in\u017f\"}}");
	srv_schema_free(s);
}

/* Beyond ASCII, (?i) folds as Go's unicode.SimpleFold: É with é, the
   three sigmas, ẞ with ß, Β in [α-γ], and a negated class leaves the other
   case out too; without (?i) nothing folds. */
Test(schema_validate, pattern_case_folding_unicode)
{
	struct srv_schema *s = sch(SPEC(
	    "\"e\":{\"type\":\"string\",\"pattern\":\"(?i)^\u00e9$\"},"
	    "\"s\":{\"type\":\"string\",\"pattern\":\"(?i)^\u03a3+$\"},"
	    "\"z\":{\"type\":\"string\",\"pattern\":\"(?i)^\u00df$\"},"
	    "\"g\":{\"type\":\"string\",\"pattern\":\"(?i)^[\u03b1-\u03b3]$\"},"
	    "\"n\":{\"type\":\"string\",\"pattern\":\"^(?i)[^\u00e9]$\"},"
	    "\"c\":{\"type\":\"string\",\"pattern\":\"^\u00e9$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(
	    s,
	    "{\"spec\":{\"e\":\"\u00c9\",\"s\":\"\u03c3\u03c2\u03a3\","
	    "\"z\":\"\u1e9e\",\"g\":\"\u0392\",\"n\":\"x\",\"c\":\"\u00e9\"}}");
	expect_invalid(s, "{\"spec\":{\"n\":\"\u00c9\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"\u00c9\"}}");
	expect_invalid(s, "{\"spec\":{\"g\":\"\u0394\"}}");
	expect_invalid(s, "{\"spec\":{\"e\":\"E\"}}");
	srv_schema_free(s);
}

/* Groups nested 300 deep, which Go takes: checked (PCRE2's default nesting
   limit of 250 left such a pattern unchecked). */
Test(schema_validate, pattern_deeply_nested_groups)
{
	static char schema[4096];
	size_t o =
	    (size_t)snprintf(schema, sizeof schema,
			     "{\"type\":\"object\",\"properties\":{"
			     "\"spec\":{\"type\":\"object\",\"properties\":"
			     "{\"g\":{\"type\":\"string\",\"pattern\":\"^");
	for (int i = 0; i < 300; i++)
		schema[o++] = '(';
	schema[o++] = 'a';
	for (int i = 0; i < 300; i++)
		schema[o++] = ')';
	snprintf(schema + o, sizeof schema - o, "$\"}}}}}");
	struct srv_schema *s = sch(schema);
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"g\":\"a\"}}");
	expect_invalid(s, "{\"spec\":{\"g\":\"b\"}}");
	srv_schema_free(s);
}

/* Go's named classes are ASCII ([:cntrl:] holds no U+0085, [:space:] no
   U+2028), [:word:] is one, and a count with a leading zero makes "{"
   literal: each as Go's regexp answers. */
Test(schema_validate, pattern_named_classes_and_counts)
{
	struct srv_schema *s = sch(SPEC(
		"\"c\":{\"type\":\"string\",\"pattern\":\"^[^%[:cntrl:]]+$\"},"
		"\"p\":{\"type\":\"string\",\"pattern\":\"^[[:punct:]]+$\"},"
		"\"w\":{\"type\":\"string\",\"pattern\":\"^[[:word:]]+$\"},"
		"\"s\":{\"type\":\"string\",\"pattern\":\"^[[:space:]]$\"},"
		"\"z\":{\"type\":\"string\",\"pattern\":\"^a{01}$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"c\":\"x\\u0085\\u0080y\",\"p\":\"!/:@[`{~]^-\\\\\","
		     "\"w\":\"a_1\",\"s\":\"\\u000b\",\"z\":\"a{01}\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"a\\u0001\"}}");
	expect_invalid(s, "{\"spec\":{\"p\":\"a\"}}");
	expect_invalid(s, "{\"spec\":{\"p\":\"\\u00bf\"}}");
	expect_invalid(s, "{\"spec\":{\"s\":\"\\u2028\"}}");
	expect_invalid(s, "{\"spec\":{\"z\":\"a\"}}");
	srv_schema_free(s);
}

Test(schema_validate, pattern_class_with_nul)
{
	/* contour's header-name pattern: a range from \x00 (which no value
	   holds) is checked from \x01, not given up on */
	struct srv_schema *s = sch(SPEC(
		"\"h\":{\"type\":\"string\",\"pattern\":"
		"\"^[^()<>@,;:\\\\\\\"\\\\/\\\\[\\\\]?={} \\\\t\\\\x7f\\\\x00-\\\\x1f]+$\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(s, "{\"spec\":{\"h\":\"X-Session-Id\"}}");
	expect_invalid(s, "{\"spec\":{\"h\":\"bad name;=x\"}}");
	expect_invalid(s, "{\"spec\":{\"h\":\"a\\u0001b\"}}");
	srv_schema_free(s);
}

/* Ranges through the characters a POSIX bracket gives meaning to (Go's
   [!#-[\]-~], OpenShift's OAuth scope: '-' and '[' inside #-[, ']' and
   '^' inside ]-~), and ranges of non-ASCII characters, each as Go's
   regexp answers. */
Test(schema_validate, pattern_class_ranges)
{
	struct srv_schema *s = sch(SPEC(
	    "\"o\":{\"type\":\"string\",\"pattern\":\"^[!#-[\\\\]-~]+$\"},"
	    "\"n\":{\"type\":\"string\",\"pattern\":\"^[^!#-[\\\\]-~]$\"},"
	    "\"u\":{\"type\":\"string\",\"pattern\":\"^[\u00e0-\u00ff]+$\"},"
	    "\"i\":{\"type\":\"string\",\"pattern\":\"^(?i)[+-[]+$\"},"
	    "\"x\":{\"type\":\"string\",\"pattern\":\"^[\\\\x{e0}-\\\\x{ff}]$"
	    "\"}"));
	cr_assert_eq(srv_schema_warning_count(s), 0, "%s",
		     srv_schema_warning(s, 0));
	expect_ok(
	    s,
	    "{\"spec\":{\"o\":\"a-[]^~!#Z\",\"n\":\" \","
	    "\"u\":\"\u00e0\u00e9\u00ff\",\"i\":\"A-z[\",\"x\":\"\u00e9\"}}");
	expect_ok(s, "{\"spec\":{\"n\":\"\\\\\"}}");
	expect_invalid(s, "{\"spec\":{\"o\":\"a b\"}}");
	expect_invalid(s, "{\"spec\":{\"o\":\"a\\\"b\"}}");
	expect_invalid(s, "{\"spec\":{\"o\":\"a\\\\b\"}}");
	expect_invalid(s, "{\"spec\":{\"n\":\"^\"}}");
	expect_invalid(s, "{\"spec\":{\"u\":\"\u00dfa\"}}");
	expect_invalid(s, "{\"spec\":{\"u\":\"\u0100\"}}");
	expect_invalid(s, "{\"spec\":{\"i\":\"a\\\\\"}}");
	expect_invalid(s, "{\"spec\":{\"x\":\"e\"}}");
	srv_schema_free(s);
}

/* kube-openapi's formats kube keeps beyond the common ones, and format
   names with dashes (its registry drops them). */
Test(schema_validate, more_formats)
{
	struct srv_schema *s = sch(SPEC(
		"\"d\":{\"type\":\"string\",\"format\":\"duration\"},"
		"\"ip\":{\"type\":\"string\",\"format\":\"ip-v4\"},"
		"\"o\":{\"type\":\"string\",\"format\":\"bsonobjectid\"},"
		"\"n\":{\"type\":\"string\",\"format\":\"ssn\"},"
		"\"c\":{\"type\":\"string\",\"format\":\"rgbcolor\"}"));
	expect_ok(s, "{\"spec\":{\"d\":\"1h30m\",\"ip\":\"10.0.0.1\","
		     "\"o\":\"507f1f77bcf86cd799439011\",\"n\":\"123 45 6789\","
		     "\"c\":\"rgb(0, 128,255)\"}}");
	/* strfmt's own units, found anywhere in the text */
	expect_ok(s, "{\"spec\":{\"d\":\"5 seconds\"}}");
	expect_ok(s, "{\"spec\":{\"d\":\"3d\"}}");
	expect_ok(s, "{\"spec\":{\"d\":\"-1.5h\"}}");
	expect_cause(s, "{\"spec\":{\"d\":\"1xyz\"}}", "FieldValueTypeInvalid",
		     "spec.d",
		     "Invalid value: \"1xyz\": spec.d in body must be of type "
		     "duration: \"1xyz\"");
	expect_invalid(s, "{\"spec\":{\"d\":\"x\"}}");
	expect_invalid(s, "{\"spec\":{\"ip\":\"x\"}}");
	expect_invalid(s, "{\"spec\":{\"o\":\"507f1f77bcf86cd79943901\"}}");
	expect_invalid(s, "{\"spec\":{\"n\":\"12-345-6789\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"rgb(256,0,0)\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"rgb(01,0,0)\"}}");
	srv_schema_free(s);
}

/* govalidator's ISBN and credit card checks, as kube-openapi registers
   them: separators dropped, check digits computed */
Test(schema_validate, isbn_and_creditcard)
{
	struct srv_schema *s = sch(SPEC(
		"\"i\":{\"type\":\"string\",\"format\":\"isbn\"},"
		"\"i10\":{\"type\":\"string\",\"format\":\"isbn10\"},"
		"\"i13\":{\"type\":\"string\",\"format\":\"isbn13\"},"
		"\"cc\":{\"type\":\"string\",\"format\":\"creditcard\"}"));
	static const char *const ok[] = {
	    "{\"i10\":\"3836221195\"}", "{\"i10\":\"3-8362-2119-5\"}",
	    "{\"i10\":\"0-9752298-0-X\"}", "{\"i13\":\"978-3-8362-2119-1\"}",
	    "{\"i\":\"3 8362 2119 5\"}", "{\"i\":\"9783836221191\"}",
	    "{\"cc\":\"4111 1111 1111 1111\"}", "{\"cc\":\"378282246310005\"}",
	    "{\"cc\":\"6011-1111-1111-1117\"}", "{\"cc\":\"30569309025904\"}",
	    "{\"cc\":\"3530111333300000\"}", "{\"cc\":\"5555555555554444\"}",
	    "{\"cc\":\"card 4111111111111111\"}",
	};
	static const char *const bad[] = {
	    "{\"i10\":\"3423214121\"}", "{\"i10\":\"9783836221191\"}",
	    "{\"i13\":\"9783836221190\"}", "{\"i13\":\"3836221195\"}",
	    "{\"i\":\"x\"}", "{\"i10\":\"383622119x\"}",
	    "{\"cc\":\"4111111111111112\"}", "{\"cc\":\"1234567812345678\"}",
	    "{\"cc\":\"\"}",
	};
	char buf[128];
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		snprintf(buf, sizeof buf, "{\"spec\":%s}", ok[i]);
		expect_ok(s, buf);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(buf, sizeof buf, "{\"spec\":%s}", bad[i]);
		expect_invalid(s, buf);
	}
	expect_cause(s, "{\"spec\":{\"cc\":\"1\"}}", "FieldValueTypeInvalid",
		     "spec.cc",
		     "Invalid value: \"1\": spec.cc in body must be of type "
		     "creditcard: \"1\"");
	srv_schema_free(s);
}

Test(schema_validate, formats)
{
	struct srv_schema *s = sch(SPEC(
		"\"i32\":{\"type\":\"integer\",\"format\":\"int32\"},"
		"\"b\":{\"type\":\"string\",\"format\":\"byte\"},"
		"\"d\":{\"type\":\"string\",\"format\":\"date\"},"
		"\"dt\":{\"type\":\"string\",\"format\":\"date-time\"},"
		"\"u\":{\"type\":\"string\",\"format\":\"uuid\"},"
		"\"v4\":{\"type\":\"string\",\"format\":\"ipv4\"},"
		"\"v6\":{\"type\":\"string\",\"format\":\"ipv6\"},"
		"\"c\":{\"type\":\"string\",\"format\":\"cidr\"},"
		"\"h\":{\"type\":\"string\",\"format\":\"hostname\"},"
		"\"e\":{\"type\":\"string\",\"format\":\"email\"},"
		"\"uri\":{\"type\":\"string\",\"format\":\"uri\"},"
		"\"x\":{\"type\":\"string\",\"format\":\"no-such-format\"}"));
	expect_ok(s, "{\"spec\":{\"i32\":2147483647,\"b\":\"aGVsbG8=\","
		     "\"d\":\"2024-02-29\",\"dt\":\"2024-01-02T03:04:05.5+01:00\","
		     "\"u\":\"123e4567-e89b-12d3-a456-426614174000\","
		     "\"v4\":\"10.0.0.1\",\"v6\":\"fe80::1\",\"c\":\"10.0.0.0/8\","
		     "\"h\":\"my-host.example.com\",\"e\":\"a@b.c\","
		     "\"uri\":\"https://x/y?z=1\",\"x\":\"anything\"}}");
	expect_cause(s, "{\"spec\":{\"e\":\"x\"}}", "FieldValueTypeInvalid",
		     "spec.e",
		     "Invalid value: \"x\": spec.e in body must be of type email: "
		     "\"x\"");
	/* kube-openapi checks no range for format int32 */
	expect_ok(s, "{\"spec\":{\"i32\":2147483648}}");
	expect_invalid(s, "{\"spec\":{\"b\":\"a\"}}");
	expect_invalid(s, "{\"spec\":{\"b\":\"\"}}"); /* four at least */
	/* url.ParseRequestURI */
	expect_ok(s, "{\"spec\":{\"uri\":\"/just/a/path\"}}");
	expect_ok(s, "{\"spec\":{\"uri\":\"mailto:a@b.c\"}}");
	expect_ok(s, "{\"spec\":{\"uri\":\"http://[::1]:8080/x\"}}");
	expect_invalid(s, "{\"spec\":{\"uri\":\"example.com\"}}");
	expect_invalid(s, "{\"spec\":{\"uri\":\"\"}}");
	expect_invalid(s, "{\"spec\":{\"uri\":\"http://host:port/\"}}");
	expect_invalid(s, "{\"spec\":{\"uri\":\"://x\"}}");
	expect_invalid(s, "{\"spec\":{\"d\":\"2023-02-29\"}}");
	expect_invalid(s, "{\"spec\":{\"dt\":\"2024-01-02\"}}");
	expect_invalid(s, "{\"spec\":{\"dt\":\"2024-01-02T25:00:00Z\"}}");
	/* kube-openapi's IsDateTime: the zone is required, "t" the only
	   separator, seconds at most 59; the fraction's dot is any
	   character and a third "t" piece is ignored */
	expect_invalid(s, "{\"spec\":{\"dt\":\"2020-01-01T10:00:00\"}}");
	expect_invalid(s, "{\"spec\":{\"dt\":\"2020-01-01 10:00:00Z\"}}");
	expect_invalid(s, "{\"spec\":{\"dt\":\"2020-01-01T10:00:60Z\"}}");
	expect_invalid(s, "{\"spec\":{\"dt\":\"2020-02-30T10:00:00Z\"}}");
	expect_ok(s, "{\"spec\":{\"dt\":\"2020-01-01t10:00:00z\"}}");
	expect_ok(s, "{\"spec\":{\"dt\":\"2020-01-01T10:00:00,123-05:30\"}}");
	expect_ok(s, "{\"spec\":{\"dt\":\"2020-01-01T10:00:00ZTjunk\"}}");
	expect_invalid(s, "{\"spec\":{\"u\":\"123e4567\"}}");
	expect_invalid(s, "{\"spec\":{\"v4\":\"10.0.0.256\"}}");
	expect_invalid(s, "{\"spec\":{\"v6\":\"10.0.0.1\"}}");
	expect_invalid(s, "{\"spec\":{\"c\":\"10.0.0.0/33\"}}");
	expect_invalid(s, "{\"spec\":{\"h\":\"-bad.example\"}}");
	expect_invalid(s, "{\"spec\":{\"uri\":\"bad%zz\"}}");
	srv_schema_free(s);
}

/* Cases where kube-openapi's strfmt (1.33's, run by a differential probe
   against its Go code) answers otherwise than a stricter or looser
   reading would. */
Test(schema_validate, formats_as_kube_openapi)
{
	static const struct {
		const char *format, *value;
		bool ok;
	} cases[] = {
	    /* names are looked up without their dashes */
	    {"u-u-i-d", "xyz", false},
	    {"ip-v4", "1.2.3.4", true},
	    /* each uuid dash optional; uuid4/5 check the variant */
	    {"uuid3", "BCD02E2268F03046A512327CCA9DEF8F", true},
	    {"uuid3", "BCD02E22-68F0-3046-A512-327CCA9DEF8F", true},
	    {"uuid3", "BCD02E2268F04046A512327CCA9DEF8F", false},
	    {"uuid3", "bcd02e2268f03046c512327cca9def8f", true},
	    {"uuid3", "bcd02e22-68f0-3046a512327cca9def8f", true},
	    {"uuid4", "025b0d74-00a2-4048-cf57-227c5111bb34", false},
	    {"uuid4", "025b0d74-00a2-4048-bf57-227c5111bb34", true},
	    {"uuid5", "025b0d7400a25048Af57227c5111bb34", true},
	    /* ParseIPSloppy: leading zeros; a mapped address has a dot */
	    {"ipv4", "0.0.0.01", true},
	    {"ipv4", "0001.2.3.4", true},
	    {"ipv4", "::ffff:1.2.3.4", true},
	    {"ipv4", "::1", false},
	    {"cidr", "10.0.0.0/08", true},
	    {"cidr", "192.168.001.0/24", true},
	    {"cidr", "10.0.0.0/33", false},
	    /* net.ParseMAC's dotted form */
	    {"mac", "0123.4567.89ab", true},
	    {"mac", "0123.4567.89ab.cdef", true},
	    {"mac", "0123.4567.89a", false},
	    /* 11 bytes: both separators */
	    {"ssn", "123-45-6789", true},
	    {"ssn", "123 45-6789", true},
	    {"ssn", "123456789", false},
	    {"ssn", "123-456789", false},
	    /* Go's \s has no \v */
	    {"rgbcolor", "rgb( 1,2 ,\t3)", true},
	    {"rgbcolor", "rgb(\v1,2,3)", false},
	    {"duration", "1\vh", false},
	    {"duration", "9223372036854775808ns", false},
	    {"duration", "99999999999999999999h", false},
	    {"duration", "2562048h", true},
	    {"duration", "-9223372036854775808ns", true},
	    {"duration", "3 days", true},
	    /* one label: a character, maybe '-', then more; dotted: a
	       top-level domain of two letters or more */
	    {"hostname", "+", true},
	    {"hostname", "a=", true},
	    {"hostname", "a-", true},
	    {"hostname", "a-b-c", false},
	    {"hostname", "a.b", false},
	    {"hostname", "a.", false},
	    {"hostname", "xn--p1ai", false},
	    {"hostname", "my-host.example.com", true},
	    {"hostname", "a.b-c.local", true},
	    {"hostname", "\xe2\x80\x8b", false},
	    {"hostname", "\xc3\xa9t\xc3\xa9.fr", true},
	    /* net/mail.ParseAddress */
	    {"email", " a@b", true},
	    {"email", "<a@b>", true},
	    {"email", "John Doe <a@b.c>", true},
	    {"email", "\"a b\"@c", true},
	    {"email", "a@b (comment)", true},
	    {"email", "g: a@b;", true},
	    {"email", "g: a@b, c@d;", false},
	    {"email", "a@[1.2.3.4]", true},
	    {"email", "JOHN DO]E <JOHN@EXAMPLE.COM>", true},
	    {"email", ".a@b", false},
	    {"email", "a@b.", false},
	    {"email", "a..b@c", false},
	    {"email", "a@b;", false},
	    {"email", "a(c)@b", false},
	    {"email", "a@b c", false},
	    {"email", "\"\"@b", false},
	    {"email", "a\xff@b", false},
	    {"email", "John Doe", false},
	    /* url.ParseRequestURI */
	    {"uri", "*", true},
	    {"uri", "http://h?x=%zz", true},
	    {"uri", "rn:%isbn:123", true},
	    {"uri", "http://a b/", false},
	    {"uri", "http://%41/", false},
	    {"uri", "http://%c3%a9/", true},
	    {"uri", "ftp://h %20", false},
	    {"uri", "http://user%:pass@h/", false},
	    {"uri", "http://u{@h/", false},
	    {"uri", "http://[::1]:80]:80/", true},
	    {"uri", "http://h/a%zz", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		cr_expect_eq(
		    srv_schema_format_valid(cases[i].format, cases[i].value),
		    cases[i].ok, "format %s of \"%s\": want %d",
		    cases[i].format, cases[i].value, cases[i].ok);
	/* a 1 MiB value is read once through, not once per character */
	size_t big = 1 << 20;
	char *v = malloc(big + 8);
	cr_assert_not_null(v);
	memset(v, 'a', big);
	strcpy(v + big, "@b.cd");
	cr_expect(srv_schema_format_valid("email", v));
	v[0] = '"';
	strcpy(v + big, "\"@b.cd");
	cr_expect(srv_schema_format_valid("email", v));
	memcpy(v, "John <", 6);
	cr_expect(!srv_schema_format_valid("email", v));
	memcpy(v, "http:/", 6);
	cr_expect(srv_schema_format_valid("uri", v));
	cr_expect(!srv_schema_format_valid("hostname", v));
	cr_expect(!srv_schema_format_valid("duration", v));
	free(v);
}

Test(schema_validate, arrays)
{
	struct srv_schema *s = sch(SPEC(
		"\"l\":{\"type\":\"array\",\"minItems\":2,\"maxItems\":3,"
		"\"items\":{\"type\":\"string\"}}"));
	expect_ok(s, "{\"spec\":{\"l\":[\"a\",\"b\"]}}");
	expect_cause(s, "{\"spec\":{\"l\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}}",
		     "FieldValueTooMany", "spec.l",
		     "Too many: 5: must have at most 3 items");
	expect_cause(s, "{\"spec\":{\"l\":[\"a\"]}}", "FieldValueInvalid",
		     "spec.l",
		     "Invalid value: 1: spec.l in body should "
		     "have at least 2 items");
	expect_cause(s, "{\"spec\":{\"l\":[\"a\",2]}}", "FieldValueTypeInvalid",
		     "spec.l[1]",
		     "Invalid value: \"integer\": spec.l[1] in body must be of type "
		     "string: \"integer\"");
	srv_schema_free(s);
}

/* Under additionalProperties kube-openapi writes a map key dotted, but
   kube's list-type and embedded-resource walks write it as
   field.Path.Key: spec[k] (apiextensions' listtype and objectmeta
   validation_test.go, "additionalProperties"). */
Test(schema_validate, map_keys_in_list_type_and_embedded_paths)
{
	struct srv_schema *s =
	    sch("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
		"\"object\",\"properties\":{\"sets\":{\"type\":\"object\","
		"\"additionalProperties\":{\"type\":\"array\","
		"\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
		"\"string\"}}},\"res\":{\"type\":\"object\","
		"\"additionalProperties\":{\"type\":\"object\","
		"\"x-kubernetes-embedded-resource\":true,"
		"\"x-kubernetes-preserve-unknown-fields\":true}},"
		"\"n\":{\"type\":\"object\",\"additionalProperties\":{"
		"\"type\":\"integer\"}}}}}}");
	expect_cause(s, "{\"spec\":{\"sets\":{\"a.b\":[\"x\",\"x\"]}}}",
		     "FieldValueDuplicate", "spec.sets[a.b][1]",
		     "Duplicate value: \"x\"");
	expect_cause(s, "{\"spec\":{\"res\":{\"foo\":{\"kind\":\"K\"}}}}",
		     "FieldValueRequired", "spec.res[foo].apiVersion",
		     "Required value: must not be empty");
	/* kube-openapi's own errors keep the key dotted */
	expect_cause(s, "{\"spec\":{\"n\":{\"k\":\"x\"}}}",
		     "FieldValueTypeInvalid", "spec.n.k",
		     "Invalid value: \"string\": spec.n.k in body must be of "
		     "type integer: \"string\"");
	srv_schema_free(s);
}

Test(schema_validate, list_types)
{
	struct srv_schema *s = sch(SPEC(
		"\"set\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
		"\"items\":{\"type\":\"string\"}},"
		"\"map\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
		"\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":"
		"\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
		"\"v\":{\"type\":\"integer\"}}}}"));
	expect_ok(s, "{\"spec\":{\"set\":[\"a\",\"b\"],\"map\":[{\"name\":\"a\","
		     "\"v\":1},{\"name\":\"b\",\"v\":1}]}}");
	expect_cause(s, "{\"spec\":{\"set\":[\"a\",\"b\",\"a\"]}}",
		     "FieldValueDuplicate", "spec.set[2]",
		     "Duplicate value: \"a\"");
	expect_cause(s, "{\"spec\":{\"map\":[{\"name\":\"a\",\"v\":1},"
		     "{\"name\":\"a\",\"v\":2}]}}",
		     "FieldValueDuplicate", "spec.map[1]",
		     "Duplicate value: map[string]interface {}{\"name\":\"a\"}");
	srv_schema_free(s);
}

Test(schema_validate, objects)
{
	struct srv_schema *s = sch(SPEC(
		"\"m\":{\"type\":\"object\",\"minProperties\":1,\"maxProperties\":2,"
		"\"additionalProperties\":{\"type\":\"integer\",\"maximum\":5}},"
		"\"closed\":{\"type\":\"object\",\"additionalProperties\":false}"));
	expect_ok(s, "{\"spec\":{\"m\":{\"a\":1,\"b\":5},\"closed\":{}}}");
	expect_cause(s, "{\"spec\":{\"m\":{\"a\":6}}}", "FieldValueInvalid",
		     "spec.m.a",
		     "Invalid value: 6: spec.m.a in body should be less than or "
		     "equal to 5");
	expect_cause(s, "{\"spec\":{\"m\":{\"a\":1,\"b\":2,\"c\":3}}}",
		     "FieldValueTooMany", "spec.m",
		     "Too many: 3: must have at most 2 items");
	expect_cause(s, "{\"spec\":{\"m\":{}}}", "FieldValueInvalid", "spec.m",
		     "Invalid value: 0: spec.m in body "
		     "should have at least 1 properties");
	expect_cause(s, "{\"spec\":{\"closed\":{\"x\":1}}}", "FieldValueInvalid",
		     "spec.closed",
		     "Invalid value: \"x\": spec.closed.x in body is a forbidden "
		     "property");
	srv_schema_free(s);
}

Test(schema_validate, combinators)
{
	struct srv_schema *s = sch(SPEC(
		"\"any\":{\"type\":\"string\",\"anyOf\":[{\"pattern\":\"^a\"},"
		"{\"pattern\":\"^b\"}]},"
		"\"one\":{\"type\":\"integer\",\"oneOf\":[{\"minimum\":0},"
		"{\"maximum\":10}]},"
		"\"all\":{\"type\":\"integer\",\"allOf\":[{\"minimum\":0},"
		"{\"maximum\":10}]},"
		"\"not\":{\"type\":\"string\",\"not\":{\"enum\":[\"no\"]}}"));
	expect_ok(s, "{\"spec\":{\"any\":\"bx\",\"one\":20,\"all\":5,\"not\":\"yes\"}}");
	expect_cause(s, "{\"spec\":{\"any\":\"cx\"}}", "FieldValueInvalid",
		     "spec.any",
		     "Invalid value: \"\": \"spec.any\" must validate at least one "
		     "schema (anyOf)");
	expect_cause(s, "{\"spec\":{\"one\":5}}", "FieldValueInvalid", "spec.one",
		     "Invalid value: \"\": \"spec.one\" must validate one and only "
		     "one schema (oneOf). Found 2 valid alternatives");
	expect_cause(s, "{\"spec\":{\"all\":11}}", "FieldValueInvalid", "spec.all",
		     "Invalid value: 11: spec.all in body should be less than or "
		     "equal to 10");
	expect_cause(s, "{\"spec\":{\"not\":\"no\"}}", "FieldValueInvalid",
		     "spec.not",
		     "Invalid value: \"\": \"spec.not\" must not validate the "
		     "schema (not)");
	srv_schema_free(s);
}

static bool keep_all_but_b(void *ud, const char *path)
{
	(void)ud;
	return strcmp(path, "status.b") != 0;
}

/* kube's status validator: messages from status, composite errors at
   the validator's root, what keep refuses dropped */
Test(schema_validate, custom_resource_options)
{
	struct srv_schema *s = sch(
		"{\"type\":\"object\",\"properties\":{\"status\":{"
		"\"type\":\"object\",\"properties\":{"
		"\"n\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"},"
		"\"any\":{\"type\":\"string\",\"anyOf\":[{\"pattern\":\"^a\"}]}"
		"}}}}");
	json_t *o = js("{\"status\":{\"n\":\"x\",\"b\":\"y\",\"any\":\"z\"}}");
	struct srv_schema_vopts vo = {.keep = keep_all_but_b,
				      .root_composites = true, .sub = "status"};
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate_with(s, o, &err, &vo), LP_E_INVALID);
	char buf[4096];
	dump_causes(&err, buf, sizeof buf);
	cr_assert_eq(err.n_causes, 3, "%s", buf);
	cr_assert_str_eq(srv_cause_get(&err, 0).field, "status", "%s", buf);
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"\": \"any\" must validate at least "
			 "one schema (anyOf)");
	cr_assert_str_eq(srv_cause_get(&err, 1).field, "status.any");
	cr_assert_str_eq(srv_cause_get(&err, 1).message,
			 "Invalid value: \"z\": any in body should match '^a'");
	cr_assert_str_eq(srv_cause_get(&err, 2).field, "status.n");
	cr_assert_str_eq(srv_cause_get(&err, 2).message,
			 "Invalid value: \"string\": n in body must be of type "
			 "integer: \"string\"");
	/* the main resource's validator: root nil, full paths */
	struct srv_error e2 = {0};
	vo.sub = NULL;
	cr_assert_eq(srv_schema_validate_with(s, o, &e2, &vo), LP_E_INVALID);
	cr_assert_str_eq(srv_cause_get(&e2, 0).field, "<nil>");
	cr_assert_str_eq(srv_cause_get(&e2, 0).message,
			 "Invalid value: \"\": \"status.any\" must validate at "
			 "least one schema (anyOf)");
	cr_assert_str_eq(
	    srv_cause_get(&e2, 2).message,
	    "Invalid value: \"string\": status.n in body must be of "
	    "type integer: \"string\"");
	/* a root type error names the empty path, as kube-openapi does */
	json_t *o3 = js("{\"status\":\"x\"}");
	struct srv_error e3 = {0};
	vo.sub = "status";
	cr_assert_eq(srv_schema_validate_with(s, o3, &e3, &vo), LP_E_INVALID);
	cr_assert_str_eq(srv_cause_get(&e3, 0).field, "status");
	cr_assert_str_eq(srv_cause_get(&e3, 0).message,
			 "Invalid value: \"string\":  in body must be of type "
			 "object: \"string\"");
	/* all refused by keep: valid */
	json_t *o4 = js("{\"status\":{\"b\":\"y\"}}");
	struct srv_error e4 = {0};
	cr_assert_eq(srv_schema_validate_with(s, o4, &e4, &vo), LP_OK);
	cr_assert_eq(e4.n_causes, 0);
	json_decref(o);
	json_decref(o3);
	json_decref(o4);
	srv_schema_free(s);
}

Test(schema_validate, embedded_resource)
{
	struct srv_schema *s = sch(SPEC(
		"\"tmpl\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
		"\"x-kubernetes-preserve-unknown-fields\":true}"));
	expect_ok(s, "{\"spec\":{\"tmpl\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}}}");
	expect_cause(s, "{\"spec\":{\"tmpl\":{\"kind\":\"Pod\"}}}",
		     "FieldValueRequired", "spec.tmpl.apiVersion",
		     "Required value: must not be empty");
	expect_cause(s, "{\"spec\":{\"tmpl\":{\"apiVersion\":\"v1\"}}}",
		     "FieldValueRequired", "spec.tmpl.kind",
		     "Required value: must not be empty");
	expect_invalid(s, "{\"spec\":{\"tmpl\":{\"apiVersion\":\"a/b/c\",\"kind\":\"Pod\"}}}");
	srv_schema_free(s);
}

Test(schema_validate, many_errors_are_capped)
{
	struct srv_schema *s = sch(SPEC(
		"\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"));
	json_t *o = js("{\"spec\":{\"l\":[]}}");
	json_t *l = json_object_get(json_object_get(o, "spec"), "l");
	for (int i = 0; i < 1000; i++)
		json_array_append_new(l, json_integer(i));
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_E_INVALID);
	cr_assert_eq(err.n_causes, SRV_MAX_CAUSES);
	json_decref(o);
	srv_schema_free(s);
}

/* ------------------------------------------------------------------------ */
/* Pruning.                                                                  */

Test(schema_prune, unknown_fields)
{
	struct srv_schema *s = sch(
		"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
		"\"properties\":{\"a\":{\"type\":\"string\"},\"items\":{\"type\":"
		"\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"name\":"
		"{\"type\":\"string\"}}}},\"free\":{\"type\":\"object\","
		"\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{"
		"\"known\":{\"type\":\"object\",\"properties\":{}}}},"
		"\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
		"\"object\",\"properties\":{\"k\":{\"type\":\"string\"}}}}}}}}");
	json_t *o = js(
		"{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\","
		"\"bogus\":1},\"status\":{},\"spec\":{\"a\":\"x\",\"foo\":1,"
		"\"items\":[{\"name\":\"a\",\"bar\":2}],\"free\":{\"any\":{\"thing\":1},"
		"\"known\":{\"drop\":1}},\"m\":{\"x\":{\"k\":\"v\",\"z\":1}}}}");
	struct paths p = {{0}};
	srv_schema_prune(s, o, collect, &p);
	expect_json_eq(o, "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":"
			  "{\"name\":\"n\"},\"spec\":{\"a\":\"x\",\"items\":[{\"name\":"
			  "\"a\"}],\"free\":{\"any\":{\"thing\":1},\"known\":{}},"
			  "\"m\":{\"x\":{\"k\":\"v\"}}}}");
	/* Order of keys is jansson's; check as a set. */
	const char *want[] = {"metadata.bogus", "status", "spec.foo",
			      "spec.items[0].bar", "spec.free.known.drop",
			      "spec.m.x.z"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		cr_assert_not_null(strstr(p.buf, want[i]), "%s not in %s",
				   want[i], p.buf);
	cr_assert_eq(strlen(p.buf), strlen("metadata.bogus,status,spec.foo,"
					   "spec.items[0].bar,spec.free.known.drop,"
					   "spec.m.x.z"), "%s", p.buf);
	/* Idempotent. */
	struct paths p2 = {{0}};
	json_t *copy = json_deep_copy(o);
	srv_schema_prune(s, o, collect, &p2);
	cr_assert(json_equal(o, copy));
	cr_assert_str_empty(p2.buf);
	json_decref(copy);
	json_decref(o);
	srv_schema_free(s);
}

Test(schema_prune, embedded_and_root_meta)
{
	struct srv_schema *s = sch(SPEC(
		"\"e\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
		"\"properties\":{\"spec\":{\"type\":\"object\"}}},"
		"\"open\":{\"type\":\"object\",\"additionalProperties\":true}"));
	json_t *o = js("{\"apiVersion\":1,\"kind\":\"K\",\"spec\":{\"e\":{"
		       "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
		       "\"p\",\"x\":1},\"spec\":{\"y\":1},\"other\":1},"
		       "\"open\":{\"a\":1,\"b\":{\"c\":1},\"l\":[[{\"d\":1}]]}}}");
	struct paths p = {{0}};
	srv_schema_prune(s, o, collect, &p);
	/* kube: a non-string root apiVersion is dropped silently; below
	   additionalProperties: true objects lose their keys. */
	expect_json_eq(o, "{\"kind\":\"K\",\"spec\":{\"e\":{\"apiVersion\":\"v1\","
			  "\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{}},"
			  "\"open\":{\"a\":1,\"b\":{},\"l\":[[{}]]}}}");
	const char *want[] = {"spec.e.metadata.x^", "spec.e.spec.y",
			      "spec.e.other", "spec.open.b.c",
			      "spec.open.l[0][0].d"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		cr_assert_not_null(strstr(p.buf, want[i]), "%s not in %s",
				   want[i], p.buf);
	cr_assert_null(strstr(p.buf, "apiVersion"), "%s", p.buf);
	/* only the embedded resource's metadata is objectmeta's to find */
	cr_assert_eq(strchr(p.buf, '^'), strrchr(p.buf, '^'), "%s", p.buf);
	json_decref(o);
	srv_schema_free(s);
	/* a property named metadata that is no resource's is pruning's */
	s = sch(SPEC("\"t\":{\"type\":\"object\",\"properties\":{"
		     "\"metadata\":{\"type\":\"object\",\"properties\":{}}}}"));
	o = js("{\"spec\":{\"t\":{\"metadata\":{\"zq\":1}}}}");
	struct paths p2 = {{0}};
	srv_schema_prune(s, o, collect, &p2);
	cr_assert_str_eq(p2.buf, "spec.t.metadata.zq");
	json_decref(o);
	srv_schema_free(s);
}

/* ------------------------------------------------------------------------ */
/* Defaulting.                                                               */

Test(schema_default, defaults_and_nulls)
{
	struct srv_schema *s = sch(
		"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
		"\"default\":{},\"properties\":{"
		"\"a\":{\"type\":\"string\",\"default\":\"x\"},"
		"\"o\":{\"type\":\"object\",\"default\":{\"in\":1},\"properties\":{"
		"\"in\":{\"type\":\"integer\"},\"deep\":{\"type\":\"integer\","
		"\"default\":7}}},"
		"\"nd\":{\"type\":\"string\"},"
		"\"nn\":{\"type\":\"string\",\"nullable\":true,\"default\":\"d\"},"
		"\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
		"\"default\":{\"z\":0},\"properties\":{\"z\":{\"type\":\"integer\"},"
		"\"w\":{\"type\":\"integer\",\"default\":3}}}},"
		"\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
		"\"object\",\"default\":{},\"properties\":{\"q\":{\"type\":\"string\","
		"\"default\":\"qq\"}}}}}}}}");
	json_t *o = js("{}");
	srv_schema_default(s, o);
	expect_json_eq(o, "{\"spec\":{\"a\":\"x\",\"o\":{\"in\":1,\"deep\":7},"
			  "\"nn\":\"d\"}}");
	json_decref(o);

	o = js("{\"spec\":{\"a\":null,\"nd\":null,\"nn\":null,\"l\":[null,{}],"
	       "\"m\":{\"k1\":null,\"k2\":{\"q\":\"set\"}}}}");
	srv_schema_default(s, o);
	expect_json_eq(o, "{\"spec\":{\"a\":\"x\",\"o\":{\"in\":1,\"deep\":7},"
			  "\"nn\":null,\"l\":[{\"z\":0,\"w\":3},{\"w\":3}],"
			  "\"m\":{\"k1\":{\"q\":\"qq\"},\"k2\":{\"q\":\"set\"}}}}");
	json_t *copy = json_deep_copy(o);
	srv_schema_default(s, o);
	cr_assert(json_equal(o, copy));
	json_decref(copy);
	json_decref(o);
	srv_schema_free(s);
}

/* ------------------------------------------------------------------------ */
/* The real-world corpus.                                                    */

static void append_doc(json_t *doc, void *ud)
{
	json_array_append(ud, doc);
}

/* The non-null YAML documents of a file, as a JSON array; new. */
static json_t *load_docs(const char *dir, const char *file)
{
	json_t *docs = json_array();
	tcorp_each_doc(dir, file, append_doc, docs);
	return docs;
}

static void no_report(void *ud, const char *path, bool embedded_meta)
{
	(void)ud;
	(void)path;
	(void)embedded_meta;
}

struct corpus_stats {
	int checked, failed;
};

/* The schema of group/version kind in crd, or NULL. */
static const json_t *version_schema(const json_t *crd, const char *api_version,
				    const char *kind)
{
	const json_t *spec = json_object_get(crd, "spec");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *ckind = json_string_value(
		json_object_get(json_object_get(spec, "names"), "kind"));
	const char *slash = strchr(api_version, '/');
	if (!group || !ckind || !slash || strcmp(ckind, kind) != 0 ||
	    strlen(group) != (size_t)(slash - api_version) ||
	    strncmp(group, api_version, strlen(group)) != 0)
		return NULL;
	size_t i;
	json_t *ver;
	json_array_foreach(json_object_get(spec, "versions"), i, ver) {
		const char *vn = json_string_value(json_object_get(ver, "name"));
		if (vn && strcmp(vn, slash + 1) == 0)
			return json_object_get(json_object_get(ver, "schema"),
					       "openAPIV3Schema");
	}
	return NULL;
}

static void count_rule_warning(void *ud, const char *text)
{
	(void)text;
	++*(int *)ud;
}

static void check_object(const char *file, size_t di, const json_t *doc,
			 const json_t *crd, const char *crd_file,
			 const char *expect, struct corpus_stats *st)
{
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	if (!av || !kind)
		return;
	const json_t *schema = version_schema(crd, av, kind);
	if (!schema)
		return;
	struct srv_error err = {0};
	struct srv_schema *s = NULL;
	cr_assert_eq(srv_schema_compile(schema, &s, &err), LP_OK, "%s: %s",
		     crd_file, err.message);
	json_t *o = json_deep_copy(doc);
	struct paths unknown = {{0}};
	srv_schema_prune(s, o, collect, &unknown);
	srv_schema_default(s, o);

	/* Prune and default are idempotent. */
	json_t *again = json_deep_copy(o);
	srv_schema_prune(s, again, no_report, NULL);
	srv_schema_default(s, again);
	cr_expect(json_equal(o, again), "%s doc %zu: prune+default not "
		  "idempotent", file, di);
	json_decref(again);

	srv_error_clear(&err);
	lp_err rc = srv_schema_validate(s, o, &err);
	if (rc == LP_OK) {
		/* then the CEL rules, as a create */
		int nw = 0;
		cr_expect_eq(srv_schema_check_rules(s, o, NULL, &err,
						    count_rule_warning, &nw),
			     LP_OK);
		if (err.n_causes)
			rc = LP_E_INVALID;
	}
	char causes[4096];
	dump_causes(&err, causes, sizeof causes);
	bool want_valid = strcmp(expect, "reject") != 0 &&
			  strcmp(expect, "reject-needs-cel") != 0;
	bool ok = want_valid ? rc == LP_OK : rc == LP_E_INVALID;
	printf("corpus: %-4s %s doc %zu (%s %s) vs %s: %s%s%s%s\n",
	       ok ? "ok" : "FAIL", file, di, kind, av, crd_file,
	       rc == LP_OK ? "valid" : lp_errname(rc),
	       unknown.buf[0] ? " [pruned: " : "", unknown.buf,
	       unknown.buf[0] ? "]" : "");
	if (rc != LP_OK)
		printf("%s\n", causes + 1);
	st->checked++;
	if (!ok)
		st->failed++;
	cr_expect(ok, "%s doc %zu: expected %s, got %s:%s", file, di, expect,
		  lp_errname(rc), causes);
	json_decref(o);
	srv_schema_free(s);
}

Test(schema_corpus, crds_examples_invalid)
{
	char *dir = tcorp_dir();
	if (!dir)
		cr_skip("no shared/testdata/crds");
	json_t *index = tcorp_index(dir);
	json_t *files = json_object_get(index, "files");
	json_t *crds = json_object(); /* file -> parsed CRD */
	size_t i;
	json_t *f;
	int n_versions = 0;
	json_array_foreach(files, i, f) {
		const char *role = json_string_value(json_object_get(f, "role"));
		const char *file = json_string_value(json_object_get(f, "file"));
		if (!role || strcmp(role, "crd") != 0)
			continue;
		json_t *docs = load_docs(dir, file);
		cr_assert_eq(json_array_size(docs), 1, "%s", file);
		json_t *crd = json_array_get(docs, 0);
		size_t vi;
		json_t *ver;
		json_array_foreach(json_object_get(json_object_get(crd, "spec"),
						   "versions"), vi, ver) {
			const json_t *schema = json_object_get(
				json_object_get(ver, "schema"), "openAPIV3Schema");
			if (!schema)
				continue;
			struct srv_error err = {0};
			struct srv_schema *s = NULL;
			lp_err rc = srv_schema_compile(schema, &s, &err);
			cr_expect_eq(rc, LP_OK, "%s version %zu: %s", file, vi,
				     err.message);
			printf("corpus: %-4s %s version %s compiled (%zu rules, "
			       "%zu pattern warnings)\n", rc ? "FAIL" : "ok", file,
			       json_string_value(json_object_get(ver, "name")),
			       srv_schema_rule_count(s),
			       srv_schema_warning_count(s));
			for (size_t w = 0; w < srv_schema_warning_count(s); w++)
				printf("  warning: %s\n", srv_schema_warning(s, w));
			srv_schema_free(s);
			n_versions++;
		}
		json_object_set(crds, file, crd);
		json_decref(docs);
	}
	cr_assert_gt(n_versions, 0);

	struct corpus_stats st = {0};
	json_array_foreach(files, i, f) {
		const char *role = json_string_value(json_object_get(f, "role"));
		const char *file = json_string_value(json_object_get(f, "file"));
		const char *expect = json_string_value(json_object_get(f, "expect"));
		if (!role || (strcmp(role, "example") != 0 &&
			      strcmp(role, "invalid") != 0))
			continue;
		json_t *docs = load_docs(dir, file);
		size_t di;
		json_t *doc;
		int matched = 0;
		json_array_foreach(docs, di, doc) {
			size_t ci;
			json_t *cf;
			json_array_foreach(json_object_get(f, "for_crd"), ci, cf) {
				const char *crd_file = json_string_value(cf);
				json_t *crd = json_object_get(crds, crd_file);
				if (!crd)
					continue;
				int before = st.checked;
				check_object(file, di, doc, crd, crd_file, expect,
					     &st);
				matched += st.checked - before;
			}
		}
		cr_expect_gt(matched, 0, "%s: no document matched its CRD", file);
		json_decref(docs);
	}
	printf("corpus: %d object checks, %d failed\n", st.checked, st.failed);
	fflush(stdout);
	json_decref(crds);
	json_decref(index);
	free(dir);
}

/* kube's documented defaulting result (kubernetes/expected/). */
Test(schema_corpus, defaulting_matches_documented_result)
{
	char *dir = tcorp_dir();
	if (!dir)
		cr_skip("no shared/testdata/crds");
	json_t *crds = load_docs(dir, "kubernetes/website__crontab-defaulting.yaml");
	json_t *in = load_docs(dir,
			       "kubernetes/examples/crontab__website-defaulting-input.yaml");
	json_t *want = load_docs(dir,
				 "kubernetes/expected/crontab__website-defaulting-result.yaml");
	const json_t *schema = version_schema(json_array_get(crds, 0),
					      "stable.example.com/v1", "CronTab");
	cr_assert_not_null(schema);
	struct srv_error err = {0};
	struct srv_schema *s = NULL;
	cr_assert_eq(srv_schema_compile(schema, &s, &err), LP_OK);
	json_t *o = json_array_get(in, 0);
	srv_schema_prune(s, o, no_report, NULL);
	srv_schema_default(s, o);
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_OK);
	cr_assert(json_equal(json_object_get(o, "spec"),
			     json_object_get(json_array_get(want, 0), "spec")));
	srv_schema_free(s);
	json_decref(crds);
	json_decref(in);
	json_decref(want);
	free(dir);
}

/* Go's regexp.Compile errors, as kube's CRD check quotes them. */
static void re2_bad(const char *pat, const char *want)
{
	char msg[256];
	cr_assert(srv_re2_error(pat, msg, sizeof msg), "%s should be refused",
		  pat);
	cr_assert_str_eq(msg, want, "%s", pat);
}

Test(re2_syntax, refuses_what_go_refuses)
{
	re2_bad("(a", "error parsing regexp: missing closing ): `(a`");
	re2_bad("a)", "error parsing regexp: unexpected ): `a)`");
	re2_bad("x[a-", "error parsing regexp: missing closing ]: `[a-`");
	re2_bad("[z-a]", "error parsing regexp: invalid character class range: `z-a`");
	re2_bad("[[:foo:]]", "error parsing regexp: invalid character class range: `[:foo:]`");
	re2_bad("*a", "error parsing regexp: missing argument to repetition operator: `*`");
	re2_bad("(|+?)", "error parsing regexp: missing argument to repetition operator: `+?`");
	re2_bad("a**", "error parsing regexp: invalid nested repetition operator: `**`");
	re2_bad("a{2}{3}", "error parsing regexp: invalid nested repetition operator: `{2}{3}`");
	re2_bad("a++", "error parsing regexp: invalid nested repetition operator: `++`");
	re2_bad("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`");
	re2_bad("a{3,2}", "error parsing regexp: invalid repeat count: `{3,2}`");
	re2_bad("(a{100}){20}", "error parsing regexp: invalid repeat count: `{20}`");
	re2_bad("a\\", "error parsing regexp: trailing backslash at end of expression: ``");
	re2_bad("\\Z", "error parsing regexp: invalid escape sequence: `\\Z`");
	re2_bad("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`");
	re2_bad("\\xZ1", "error parsing regexp: invalid escape sequence: `\\xZ1`");
	re2_bad("\\C", "error parsing regexp: invalid escape sequence: `\\C`");
	re2_bad("\\pX", "error parsing regexp: invalid character class range: `\\pX`");
	/* 1,000 capturing groups nested: Go's parse tree is too high; 999,
	   or 1,000 that do not capture, it takes */
	for (int n = 999; n <= 1000; n++) {
		for (int named = 0; named < 3; named++) {
			static char deep[8200];
			static const char *const open[] = {"(", "(?P<n>",
							   "(?:"};
			size_t o = 0, ol = strlen(open[named]);
			for (int i = 0; i < n; i++, o += ol)
				memcpy(deep + o, open[named], ol);
			deep[o++] = 'a';
			for (int i = 0; i < n; i++)
				deep[o++] = ')';
			deep[o] = 0;
			char msg[128];
			bool bad = srv_re2_error(deep, msg, sizeof msg);
			bool want = n == 1000 && named < 2;
			cr_assert_eq(bad, want, "%d %s: %s", n, open[named],
				     bad ? msg : "");
			static const char pre[] = "error parsing regexp: "
						  "expression nests too "
						  "deeply: `(";
			if (want)
				cr_assert(!strncmp(msg, pre, sizeof pre - 1),
					  "%s", msg);
		}
	}
	/* braced names are Go's tables, with their case (Go 1.24) */
	re2_bad("^\\p{Foo}+$", "error parsing regexp: invalid character class range: `\\p{Foo}`");
	re2_bad("\\p{IsGreek}", "error parsing regexp: invalid character class range: `\\p{IsGreek}`");
	re2_bad("\\p{greek}", "error parsing regexp: invalid character class range: `\\p{greek}`");
	re2_bad("[\\p{Letter}]", "error parsing regexp: invalid character class range: `\\p{Letter}`");
	re2_bad("\\P{^LC}", "error parsing regexp: invalid character class range: `\\P{^LC}`");
	re2_bad("\\p{}", "error parsing regexp: invalid character class range: `\\p{}`");
	re2_bad("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
	re2_bad("(?!a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`");
	re2_bad("(?-)", "error parsing regexp: invalid or unsupported Perl syntax: `(?-)`");
	re2_bad("(?P<a-b>x)", "error parsing regexp: invalid named capture: `(?P<a-b>`");
	re2_bad("(?<=a)b", "error parsing regexp: invalid named capture: `(?<=a)b`");
}

Test(re2_syntax, accepts_what_go_accepts)
{
	static const char *const ok[] = {
	    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
	    "^(([0-9]+(\\.[0-9]+)?(ms|s|m|h))+)$",
	    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
	    "[]a]", "[^]a]", "[a-]", "a{,5}", "a{01}", "x{", "}", "]",
	    "(?i)abc", "(?i:a)b", "(?s-i:a.)", "(?P<name>x)", "(?<n_1>x)",
	    "\\Qa*b\\E+", "\\pL\\p{Greek}\\PN\\p{^Han}", "[\\d\\-_.]",
	    "\\x41\\x{1F600}\\101\\0", "^$|^a*?b+?c??d{2,}?$", "(?:)", "()",
	    "a{1000}", "(a{10}){100}", "[[:alpha:][:^digit:]]", "\\A\\b\\B\\z",
	    "é+", "[à-ü]", "a|", "|a", "(a|)", "\\p{Any}\\P{Lu}[\\p{Zs}\\p{Nd}]",
	    "\\p{Old_Uyghur}\\p{Kawi}\\p{Nag_Mundari}\\p{Zanabazar_Square}",
	    "\\p{^Adlam}\\p{Common}\\p{Inherited}",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		char msg[256];
		cr_assert_not(srv_re2_error(ok[i], msg, sizeof msg),
			      "%s refused: %s", ok[i], msg);
	}
}

/* kube-openapi applies limits literally: a factor that is not positive
   or a negative maximum fails every value; an integer value meets the
   factor truncated to an integer (Go's int64()) */
Test(schema_validate, limits_taken_literally)
{
	struct srv_schema *s = sch(SPEC(
		"\"m0\":{\"type\":\"number\",\"multipleOf\":0},"
		"\"mneg\":{\"type\":\"integer\",\"multipleOf\":-2},"
		"\"cents\":{\"type\":\"number\",\"multipleOf\":0.01},"
		"\"half\":{\"type\":\"integer\",\"multipleOf\":2.5},"
		"\"ml\":{\"type\":\"string\",\"maxLength\":-1},"
		"\"one\":{\"type\":\"string\",\"maxLength\":1},"
		"\"mi\":{\"type\":\"array\",\"maxItems\":-1},"
		"\"mi1\":{\"type\":\"array\",\"maxItems\":1},"
		"\"mp\":{\"type\":\"object\",\"maxProperties\":-1}"));
	expect_cause(s, "{\"spec\":{\"m0\":1.5}}", "FieldValueInvalid", "spec.m0",
		     "Invalid value: 0: factor MultipleOf declared for spec.m0 "
		     "must be positive: 0");
	expect_cause(s, "{\"spec\":{\"mneg\":4}}", "FieldValueInvalid",
		     "spec.mneg",
		     "Invalid value: -2: factor MultipleOf declared for spec.mneg "
		     "must be positive: -2");
	expect_ok(s, "{\"spec\":{\"cents\":1.25}}");
	expect_cause(s, "{\"spec\":{\"cents\":3}}", "FieldValueInvalid",
		     "spec.cents",
		     "Invalid value: 0: factor MultipleOf declared for spec.cents "
		     "must be positive: 0");
	expect_ok(s, "{\"spec\":{\"half\":5}}");
	expect_cause(s, "{\"spec\":{\"half\":6}}", "FieldValueInvalid",
		     "spec.half",
		     "Invalid value: 6: spec.half in body should be a multiple "
		     "of 2.5");
	expect_cause(s, "{\"spec\":{\"ml\":\"\"}}", "FieldValueTooLong",
		     "spec.ml", "Too long: value is too long");
	expect_cause(s, "{\"spec\":{\"one\":\"ab\"}}", "FieldValueTooLong",
		     "spec.one", "Too long: may not be more than 1 bytes");
	expect_cause(s, "{\"spec\":{\"mi\":[]}}", "FieldValueTooMany", "spec.mi",
		     "Too many: 0: has too many items");
	expect_cause(s, "{\"spec\":{\"mi1\":[1,2]}}", "FieldValueTooMany",
		     "spec.mi1", "Too many: 2: must have at most 1 items");
	expect_cause(s, "{\"spec\":{\"mp\":{\"a\":1}}}", "FieldValueTooMany",
		     "spec.mp", "Too many: 1: has too many items");
	srv_schema_free(s);
}

/* kube-openapi's type validator when a format is given: strings and
   arrays pass unless the type is numeric, other values must have the
   type or their Go value's format */
Test(schema_validate, type_with_format)
{
	struct srv_schema *s = sch(SPEC(
		"\"dt\":{\"type\":\"string\",\"format\":\"date-time\"},"
		"\"r\":{\"type\":\"integer\",\"format\":\"int32\"},"
		"\"d\":{\"type\":\"number\",\"format\":\"double\"},"
		"\"f\":{\"type\":\"string\",\"format\":\"float64\"}"));
	expect_ok(s, "{\"spec\":{\"dt\":[\"x\"]}}");
	expect_ok(s, "{\"spec\":{\"d\":3,\"r\":2.0}}");
	/* kube 1.33 strips the formats it does not support (int32,
	   double, float64 among them) before it validates: a float64 is no
	   string, and 1.5 no integer in the type's words */
	expect_cause(
	    s, "{\"spec\":{\"f\":1.5}}", "FieldValueTypeInvalid", "spec.f",
	    "Invalid value: \"number\": spec.f in body must be of type "
	    "string: \"number\"");
	expect_cause(s, "{\"spec\":{\"dt\":5}}", "FieldValueTypeInvalid",
		     "spec.dt",
		     "Invalid value: \"int64\": spec.dt in body must be of type "
		     "date-time: \"int64\"");
	expect_cause(s, "{\"spec\":{\"dt\":true}}", "FieldValueTypeInvalid",
		     "spec.dt",
		     "Invalid value: \"\": spec.dt in body must be of type "
		     "date-time: \"\"");
	expect_cause(
	    s, "{\"spec\":{\"r\":1.5}}", "FieldValueTypeInvalid", "spec.r",
	    "Invalid value: \"number\": spec.r in body must be of type "
	    "integer: \"number\"");
	expect_cause(s, "{\"spec\":{\"r\":\"x\"}}", "FieldValueTypeInvalid",
		     "spec.r",
		     "Invalid value: \"string\": spec.r in body must be of type "
		     "integer: \"string\"");
	expect_cause(s, "{\"spec\":{\"dt\":\"x\"}}", "FieldValueTypeInvalid",
		     "spec.dt",
		     "Invalid value: \"x\": spec.dt in body must be of type "
		     "date-time: \"x\"");
	srv_schema_free(s);
	/* password is a format kube keeps (any string); a number fails
	   the format's check first. After a type error the enum still
	   speaks, as every kube-openapi validator runs. */
	s = sch(
	    SPEC("\"p\":{\"type\":\"string\",\"format\":\"password\"},"
		 "\"e\":{\"type\":\"string\",\"enum\":[\"crun\",\"runc\"]}"));
	expect_ok(s, "{\"spec\":{\"p\":\"x\"}}");
	expect_cause(s, "{\"spec\":{\"p\":5}}", "FieldValueTypeInvalid",
		     "spec.p",
		     "Invalid value: \"int64\": spec.p in body must be of type "
		     "password: \"int64\"");
	expect_cause(
	    s, "{\"spec\":{\"e\":1234}}", "FieldValueTypeInvalid", "spec.e",
	    "Invalid value: \"integer\": spec.e in body must be of type "
	    "string: \"integer\"");
	expect_cause(s, "{\"spec\":{\"e\":1234}}", "FieldValueNotSupported",
		     "spec.e",
		     "Unsupported value: 1234: supported values: \"crun\", "
		     "\"runc\"");
	srv_schema_free(s);
}

/* ------------------------------------------------------------------------ */
/* x-kubernetes-validations rules (srv_schema_check_rules, cel.c).           */

struct warnings {
	int n;
	char last[512];
};

static void collect_warning(void *ud, const char *text)
{
	struct warnings *w = ud;
	w->n++;
	snprintf(w->last, sizeof w->last, "%s", text);
}

/* obj (and old, or NULL) against s's rules: the causes in err. */
static void rules(struct srv_schema *s, const char *obj, const char *old,
		  struct srv_error *err, struct warnings *w)
{
	json_t *o = js(obj), *p = old ? js(old) : NULL;
	cr_assert_eq(srv_schema_check_rules(s, o, p, err, collect_warning, w),
		     LP_OK);
	json_decref(o);
	json_decref(p);
}

static const char *rules_schema =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
    "\"x-kubernetes-validations\":["
    "{\"rule\":\"!has(self.min) || self.min <= self.max\",\"message\":\" min "
    "above max \"},"
    "{\"rule\":\"self.mode == oldSelf.mode\",\"message\":\"mode is "
    "immutable\"},"
    "{\"rule\":\"self.q.size() >= size(self.q, self.q)\"}],"
    "\"properties\":{\"min\":{\"type\":\"integer\"},\"max\":{\"type\":"
    "\"integer\"},"
    "\"mode\":{\"type\":\"string\"},\"q\":{\"type\":\"string\"},"
    "\"n\":{\"type\":\"number\",\"x-kubernetes-validations\":[{\"rule\":\"self "
    "> 1\","
    "\"reason\":\"FieldValueForbidden\",\"message\":\"n > 1\"}]},"
    "\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"},\"port\":{\"type\":"
    "\"integer\"}},"
    "\"x-kubernetes-validations\":[{\"rule\":\"self.port == oldSelf.port\"}]}},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
    "\"x-kubernetes-validations\":[{\"rule\":\"self.size() < "
    "4\",\"fieldPath\":\"\"}]}}}}}}";

Test(schema_rules, failures_are_kube_causes)
{
	struct srv_schema *s = sch(rules_schema);
	struct srv_error err = {0};
	struct warnings w = {0};
	rules(s,
	      "{\"spec\":{\"min\":2,\"max\":1,\"n\":0.5,\"tags\":[\"ok\","
	      "\"long!\"]}}",
	      NULL, &err, &w);
	cr_assert_eq(err.n_causes, 3);
	cr_assert_str_eq(srv_cause_get(&err, 0).field, "spec");
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"object\": min above max");
	cr_assert_str_eq(srv_cause_get(&err, 1).field, "spec.n");
	cr_assert_str_eq(srv_cause_get(&err, 1).reason, "FieldValueForbidden");
	cr_assert_str_eq(srv_cause_get(&err, 1).message, "Forbidden: n > 1");
	cr_assert_str_eq(srv_cause_get(&err, 2).field, "spec.tags[1]");
	cr_assert_str_eq(
	    srv_cause_get(&err, 2).message,
	    "Invalid value: \"string\": failed rule: self.size() < 4");
	/* the rule outside the subset: one warning, with why */
	cr_assert_eq(w.n, 1);
	cr_assert_str_eq(
	    w.last,
	    "spec: x-kubernetes-validations rule was not evaluated (function "
	    "'size' is not supported with 2 arguments): self.q.size() >= "
	    "size(self.q, self.q)");
	srv_schema_free(s);
}

Test(schema_rules, runtime_errors_and_blocking)
{
	struct srv_schema *s = sch(rules_schema);
	struct srv_error err = {0};
	struct warnings w = {0};
	rules(s, "{\"spec\":{\"min\":1}}", NULL, &err, &w);
	cr_assert_eq(err.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"object\": no such key: max "
			 "evaluating rule: min above max");
	/* a blocking error first: no rule runs */
	struct srv_error err2 = {0};
	srv_error_cause(&err2, "FieldValueRequired", "spec.max",
			"Required value");
	rules(s, "{\"spec\":{\"min\":2,\"max\":1}}", NULL, &err2, &w);
	cr_assert_eq(err2.n_causes, 2);
	cr_assert_str_eq(srv_cause_get(&err2, 1).field, "<nil>");
	cr_assert_str_eq(srv_cause_get(&err2, 1).message,
			 "Invalid value: \"null\": some validation rules were "
			 "not checked because the object was invalid; correct "
			 "the existing errors to complete validation");
	srv_schema_free(s);
}

Test(schema_rules, transition_rules_and_ratcheting)
{
	struct srv_schema *s = sch(rules_schema);
	struct srv_error err = {0};
	struct warnings w = {0};
	/* on create, no oldSelf: transition rules do not run */
	rules(s,
	      "{\"spec\":{\"mode\":\"a\",\"ports\":[{\"name\":\"h\",\"port\":1}"
	      "]}}",
	      NULL, &err, &w);
	cr_assert_eq(err.n_causes, 0);
	/* an update changing mode, and a map-list item's port (correlated
	   by key, whatever its index) */
	rules(s,
	      "{\"spec\":{\"mode\":\"b\",\"ports\":[{\"name\":\"x\",\"port\":5}"
	      ",{\"name\":\"h\",\"port\":2}]}}",
	      "{\"spec\":{\"mode\":\"a\",\"ports\":[{\"name\":\"h\",\"port\":1}"
	      "]}}",
	      &err, &w);
	cr_assert_eq(err.n_causes, 2);
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"object\": mode is immutable");
	cr_assert_str_eq(srv_cause_get(&err, 1).field, "spec.ports[1]");
	/* ratcheting: an unchanged failing value is a warning, with the
	   error's text; a changed one is an error */
	struct srv_error err2 = {0};
	struct warnings w2 = {0};
	rules(s,
	      "{\"spec\":{\"mode\":\"a\",\"tags\":[\"toolong\"],\"min\":3,"
	      "\"max\":1}}",
	      "{\"spec\":{\"mode\":\"a\",\"tags\":[\"toolong\"],\"min\":3,"
	      "\"max\":2}}",
	      &err2, &w2);
	cr_assert_eq(err2.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err2, 0).field, "spec");
	cr_assert_eq(w2.n, 2); /* the tag, and the rule not evaluated */
	struct srv_error err3 = {0};
	struct warnings w3 = {0};
	rules(s, "{\"spec\":{\"mode\":\"a\",\"tags\":[\"toolong\"]}}",
	      "{\"spec\":{\"mode\":\"a\",\"tags\":[\"toolong\"]}}", &err3, &w3);
	cr_assert_eq(err3.n_causes, 0);
	cr_assert_eq(w3.n, 2);
	srv_schema_free(s);
}

/* The object's own apiVersion and kind never ratchet (kube's
   ratchetingOptions.key: both sides are converted to the request's
   version); an embedded resource's do, and transition rules on them still
   see oldSelf (apiextensions' TestRatcheting, "typemeta fields are not
   ratcheted"). */
Test(schema_rules, typemeta_not_ratcheted)
{
	struct srv_schema *s = sch(
	    "{\"type\":\"object\",\"properties\":{"
	    "\"apiVersion\":{\"type\":\"string\",\"x-kubernetes-validations\":"
	    "[{\"rule\":\"self == 'v1'\"},{\"rule\":\"self == oldSelf\","
	    "\"message\":\"same\"}]},"
	    "\"kind\":{\"type\":\"string\",\"x-kubernetes-validations\":"
	    "[{\"rule\":\"self == 'Pod'\"}]},"
	    "\"sub\":{\"type\":\"object\",\"properties\":{\"kind\":{"
	    "\"type\":\"string\",\"x-kubernetes-validations\":[{\"rule\":"
	    "\"self == 'Pod'\"}]}}}}}");
	struct srv_error err = {0};
	struct warnings w = {0};
	const char *obj = "{\"apiVersion\":\"v2\",\"kind\":\"Baz\",\"sub\":{"
			  "\"kind\":\"Baz\"}}";
	rules(s, obj, obj, &err, &w);
	cr_assert_eq(err.n_causes, 2);
	cr_assert_str_eq(srv_cause_get(&err, 0).field, "apiVersion");
	cr_assert_str_eq(
	    srv_cause_get(&err, 0).message,
	    "Invalid value: \"string\": failed rule: self == 'v1'");
	cr_assert_str_eq(srv_cause_get(&err, 1).field, "kind");
	cr_assert_eq(w.n, 1); /* sub.kind ratchets */
	struct srv_error err2 = {0};
	struct warnings w2 = {0};
	rules(s, "{\"apiVersion\":\"v1\"}", "{\"apiVersion\":\"v0\"}", &err2,
	      &w2);
	cr_assert_eq(err2.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err2, 0).message,
			 "Invalid value: \"string\": same");
	srv_schema_free(s);
}

/* optionalOldSelf: the rule also runs with no old value, oldSelf then
   optional.none(), else optional.of the old value (kube's
   validationActivationWithOldSelf). */
Test(schema_rules, optional_old_self)
{
	struct srv_schema *s = sch(
	    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	    "\"object\",\"x-kubernetes-validations\":["
	    "{\"rule\":\"oldSelf.hasValue() || self.mode == 'init'\","
	    "\"message\":\"created in init\",\"optionalOldSelf\":true},"
	    "{\"rule\":\"self.mode == oldSelf.mode\",\"message\":\"same "
	    "mode\",\"optionalOldSelf\":false}],"
	    "\"properties\":{\"mode\":{\"type\":\"string\"},"
	    "\"replicas\":{\"type\":\"integer\",\"x-kubernetes-validations\":"
	    "[{\"rule\":\"self >= oldSelf.orValue(0)\",\"message\":\"no "
	    "shrinking\",\"optionalOldSelf\":true}]}}}}}");
	struct srv_error err = {0};
	struct warnings w = {0};
	/* a create runs both optional rules (and not the plain transition
	   rule) */
	rules(s, "{\"spec\":{\"mode\":\"x\",\"replicas\":-1}}", NULL, &err, &w);
	cr_assert_eq(err.n_causes, 2);
	cr_assert_str_eq(srv_cause_get(&err, 0).field, "spec");
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"object\": created in init");
	cr_assert_str_eq(srv_cause_get(&err, 1).field, "spec.replicas");
	cr_assert_str_eq(srv_cause_get(&err, 1).message,
			 "Invalid value: \"integer\": no shrinking");
	cr_assert_eq(w.n, 0);
	struct srv_error ok = {0};
	rules(s, "{\"spec\":{\"mode\":\"init\",\"replicas\":1}}", NULL, &ok,
	      &w);
	cr_assert_eq(ok.n_causes, 0);
	/* an update: oldSelf holds the old value */
	struct srv_error err2 = {0};
	rules(s, "{\"spec\":{\"mode\":\"init\",\"replicas\":2}}",
	      "{\"spec\":{\"mode\":\"init\",\"replicas\":3}}", &err2, &w);
	cr_assert_eq(err2.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err2, 0).field, "spec.replicas");
	/* a field newly set on an update: no old value for it */
	struct srv_error err3 = {0};
	rules(s, "{\"spec\":{\"mode\":\"run\",\"replicas\":-2}}",
	      "{\"spec\":{\"mode\":\"run\"}}", &err3, &w);
	cr_assert_eq(err3.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err3, 0).field, "spec.replicas");
	struct srv_error ok2 = {0};
	rules(s, "{\"spec\":{\"mode\":\"run\",\"replicas\":4}}",
	      "{\"spec\":{\"mode\":\"run\"}}", &ok2, &w);
	cr_assert_eq(ok2.n_causes, 0);
	cr_assert_eq(w.n, 0);
	srv_schema_free(s);
}

/* kube's messageExpression: the failure says what it evaluates to,
   trimmed; the message when it fails, is no string, is empty or has a
   line break. */
Test(schema_rules, message_expression)
{
	struct srv_schema *s =
	    sch("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
		"\"object\","
		"\"properties\":{\"n\":{\"type\":\"integer\"}},"
		"\"x-kubernetes-validations\":["
		"{\"rule\":\"self.n < "
		"3\",\"message\":\"m1\",\"messageExpression\":\"' n is ' + "
		"string(self.n) + ' '\"},"
		"{\"rule\":\"self.n < "
		"4\",\"message\":\"m2\",\"messageExpression\":\"self.nope\"},"
		"{\"rule\":\"self.n < "
		"5\",\"message\":\"m3\",\"messageExpression\":\"self.n\"},"
		"{\"rule\":\"self.n < 6\",\"messageExpression\":\"'a\\\\nb'\"},"
		"{\"rule\":\"self.n < "
		"7\",\"message\":\"m5\",\"messageExpression\":\"'  '\"}]}}}");
	struct srv_error err = {0};
	struct warnings w = {0};
	rules(s, "{\"spec\":{\"n\":9}}", NULL, &err, &w);
	cr_assert_eq(err.n_causes, 5);
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"object\": n is 9");
	cr_assert_str_eq(srv_cause_get(&err, 1).message,
			 "Invalid value: \"object\": m2");
	cr_assert_str_eq(srv_cause_get(&err, 2).message,
			 "Invalid value: \"object\": m3");
	cr_assert_str_eq(srv_cause_get(&err, 3).message,
			 "Invalid value: \"object\": failed rule: self.n < 6");
	cr_assert_str_eq(srv_cause_get(&err, 4).message,
			 "Invalid value: \"object\": m5");
	cr_assert_eq(w.n, 0);
	srv_schema_free(s);
}

/* A map's values are named as kube's fldPath.Key names them: [key]. */
Test(schema_rules, map_values_by_key)
{
	struct srv_schema *s =
	    sch("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
		"\"object\","
		"\"properties\":{\"labels\":{\"type\":\"object\","
		"\"additionalProperties\":"
		"{\"type\":\"string\",\"x-kubernetes-validations\":[{\"rule\":"
		"\"self != 'x'\"}]}}}}}}");
	struct srv_error err = {0};
	struct warnings w = {0};
	rules(s, "{\"spec\":{\"labels\":{\"ok\":\"y\",\"a.b\":\"x\"}}}", NULL,
	      &err, &w);
	cr_assert_eq(err.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err, 0).field, "spec.labels[a.b]");
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Invalid value: \"string\": failed rule: self != 'x'");
	srv_schema_free(s);
}

/* kube's RuntimeCELCostBudget: one object's rules share 10 million steps;
   past them, one cause and no further rule. Each item's rule here takes
   about 100,000 steps (10^4 innermost evaluations), under the per-call
   limit; 200 items need twice the budget. */
Test(schema_rules, cost_budget_per_object)
{
	const char *ten = "[0,1,2,3,4,5,6,7,8,9]";
	char rule[512];
	snprintf(rule, sizeof rule,
		 "%s.all(a, %s.all(b, %s.all(c, %s.all(d, a + b + c + d + self "
		 ">= 0))))",
		 ten, ten, ten, ten);
	char schema[1024];
	snprintf(
	    schema, sizeof schema,
	    "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"integer\",\"x-kubernetes-validations\":"
	    "[{\"rule\":\"%s\"}]}}}}",
	    rule);
	struct srv_schema *s = sch(schema);
	char obj[2048] = "{\"l\":[0";
	for (int i = 1; i < 200; i++)
		strcat(obj, ",0");
	strcat(obj, "]}");
	struct srv_error err = {0};
	struct warnings w = {0};
	rules(s, obj, NULL, &err, &w);
	cr_assert_eq(err.n_causes, 1);
	cr_assert(strncmp(srv_cause_get(&err, 0).field, "l[", 2) == 0, "%s",
		  srv_cause_get(&err, 0).field);
	cr_assert_str_eq(
	    srv_cause_get(&err, 0).message,
	    "Invalid value: \"integer\": validation failed due to running out "
	    "of cost budget, no further validation rules will be run");
	/* 50 items fit */
	struct srv_error err2 = {0};
	rules(s, "{\"l\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
	      NULL, &err2, &w);
	cr_assert_eq(err2.n_causes, 0);
	srv_schema_free(s);
}

/* A oneOf (or anyOf) with no valid branch reports the failures of the
   branch kube-openapi counts the most validators in (MatchCount), not of
   the one with the fewest errors: Gateway API's addresses, whose
   IPAddress branch fails deeper than the other's not. */
Test(schema_validate, combinator_best_branch)
{
	struct srv_schema *s = sch(SPEC(
	    "\"one\":{\"type\":\"object\",\"properties\":{"
	    "\"type\":{\"type\":\"string\"},\"value\":{\"type\":\"string\"}},"
	    "\"oneOf\":[{\"properties\":{\"type\":{\"enum\":[\"IPAddress\"]},"
	    "\"value\":{\"anyOf\":[{\"format\":\"ipv4\"},{\"format\":\"ipv6\"}]"
	    "}}},"
	    "{\"properties\":{\"type\":{\"not\":{\"enum\":[\"IPAddress\"]}}}}]"
	    "}"));
	expect_ok(s, "{\"spec\":{\"one\":{\"type\":\"IPAddress\",\"value\":\"1."
		     "2.3.4\"}}}");
	expect_ok(
	    s, "{\"spec\":{\"one\":{\"type\":\"Hostname\",\"value\":\"x\"}}}");
	expect_cause(s,
		     "{\"spec\":{\"one\":{\"type\":\"IPAddress\",\"value\":\"1."
		     "2.3.4:80\"}}}",
		     "FieldValueTypeInvalid", "spec.one.value",
		     "Invalid value: \"1.2.3.4:80\": spec.one.value in body "
		     "must be of type ipv4: \"1.2.3.4:80\"");
	json_t *o = js("{\"spec\":{\"one\":{\"type\":\"IPAddress\",\"value\":"
		       "\"1.2.3.4:80\"}}}");
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_E_INVALID);
	for (int i = 0; i < err.n_causes; i++)
		cr_assert_null(strstr(srv_cause_get(&err, i).message, "(not)"),
			       "%s", srv_cause_get(&err, i).message);
	json_decref(o);
	srv_schema_free(s);
}

/* How structured-merge-diff types each node, as kube's type converter
   reads the CRD's published schema. */
Test(schema_smd, types_as_the_type_converter_reads_them)
{
	struct srv_schema *s =
	    sch("{\"type\":\"object\",\"properties\":{"
		"\"s\":{\"type\":\"string\"},\"i\":{\"type\":\"integer\"},"
		"\"n\":{\"type\":\"number\"},\"b\":{\"type\":\"boolean\"},"
		"\"ios\":{\"x-kubernetes-int-or-string\":true},"
		"\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
		"\"bare\":{\"type\":\"object\"},"
		"\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-"
		"fields\":true},"
		"\"semi\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-"
		"fields\":true,"
		"\"properties\":{\"a\":{\"type\":\"string\"}}},"
		"\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
		"\"integer\"}},"
		"\"emb\":{\"type\":\"object\",\"x-kubernetes-embedded-"
		"resource\":true,"
		"\"x-kubernetes-preserve-unknown-fields\":true},"
		"\"any\":{\"x-kubernetes-preserve-unknown-fields\":true}}}");
	const struct srv_schema_node *r = srv_schema_root(s);
	bool open, emb;
	struct {
		const char *name;
		enum srv_smd want;
		bool open, emb;
	} cases[] = {
	    {"s", SRV_SMD_STRING, false, false},
	    {"i", SRV_SMD_NUMERIC, false, false},
	    {"n", SRV_SMD_NUMERIC, false, false},
	    {"b", SRV_SMD_BOOL, false, false},
	    {"ios", SRV_SMD_UNTYPED, false, false},
	    {"l", SRV_SMD_LIST, false, false},
	    {"bare", SRV_SMD_ANY, false, false},
	    {"free", SRV_SMD_ANY, true, false},
	    {"semi", SRV_SMD_MAP, true, false},
	    {"m", SRV_SMD_MAP, false, false},
	    {"emb", SRV_SMD_MAP, true, true},
	    {"any", SRV_SMD_ANY, false, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct srv_schema_node *n =
		    srv_schema_prop(r, cases[i].name);
		cr_assert_not_null(n, "%s", cases[i].name);
		enum srv_smd got = srv_schema_smd(n, &open, &emb);
		cr_assert_eq(got, cases[i].want, "%s: %d", cases[i].name, got);
		cr_assert_eq(open, cases[i].open, "%s: open", cases[i].name);
		cr_assert_eq(emb, cases[i].emb, "%s: embedded", cases[i].name);
	}
	cr_assert_eq(srv_schema_smd(r, &open, &emb), SRV_SMD_MAP);
	cr_assert_not(open);
	/* an undeclared member of the additionalProperties map reads its
	   schema */
	const struct srv_schema_node *mv =
	    srv_schema_prop(srv_schema_prop(r, "m"), "anything");
	cr_assert_eq(srv_schema_smd(mv, &open, &emb), SRV_SMD_NUMERIC);
	cr_assert_eq(srv_schema_smd(NULL, &open, &emb), SRV_SMD_ANY);
	srv_schema_free(s);
}

/* kube lists every cause (apierrors.NewInvalid takes the whole list): 60
   bad members give 60 causes, each naming its own field, and a long
   message is kept whole. */
Test(schema, every_cause_is_kept)
{
	struct srv_schema *s =
	    sch("{\"type\":\"object\",\"additionalProperties\":"
		"{\"type\":\"integer\",\"maximum\":5}}");
	json_t *o = json_object();
	for (int i = 0; i < 60; i++) {
		char k[16];
		snprintf(k, sizeof k, "k%02d", i);
		json_object_set_new(o, k, json_integer(100 + i));
	}
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_E_INVALID);
	cr_assert_eq(err.n_causes, 60);
	for (int i = 0; i < 60; i++) {
		char f[16];
		snprintf(f, sizeof f, "k%02d", i);
		struct srv_cause c = srv_cause_get(&err, i);
		cr_assert_str_eq(c.field, f);
		cr_assert_str_eq(c.reason, "FieldValueInvalid");
		cr_assert(strstr(c.message, "less than or equal to 5"), "%s",
			  c.message);
	}
	json_decref(o);
	srv_schema_free(s);
	/* 4,000 bytes of message in one cause, beside a short one */
	static char big[4001];
	memset(big, 'm', 4000);
	srv_error_clear(&err);
	srv_error_cause(&err, "FieldValueInvalid", "a", "%s", big);
	srv_error_cause(&err, "FieldValueRequired", "b", "Required value");
	cr_assert_eq(err.n_causes, 2);
	cr_assert_eq(strlen(srv_cause_get(&err, 0).message), 4000);
	cr_assert_str_eq(srv_cause_get(&err, 1).message, "Required value");
	/* causes past what the text holds are dropped whole */
	srv_error_clear(&err);
	for (int i = 0; i < 20; i++)
		srv_error_cause(&err, "FieldValueInvalid", "a", "%s", big);
	cr_assert_lt(err.n_causes, 20);
	cr_assert_gt(err.n_causes, 5);
	for (int i = 0; i < err.n_causes; i++)
		cr_assert_eq(strlen(srv_cause_get(&err, i).message), 4000);
}

/* kube-openapi's order at one node: type, the composites, string (length,
   pattern), format, number, slice (items, then counts), enum, object (the
   keys no property declares, the properties, then the required ones).
   A oneOf's message comes before its best branch's errors. Properties go
   in name order (kube's in Go's map order, which varies). */
Test(schema, causes_in_kube_openapi_order)
{
	struct srv_schema *s = sch(
	    "{\"type\":\"object\",\"oneOf\":[{\"required\":[\"a\"]},"
	    "{\"required\":[\"b\"]}],\"required\":[\"r\"],\"properties\":{"
	    "\"s\":{\"type\":\"string\",\"maxLength\":3,\"pattern\":"
	    "\"^[a-z]+$\",\"enum\":[\"ab\",\"abcdef1\"]},"
	    "\"l\":{\"type\":\"array\",\"minItems\":3,\"items\":"
	    "{\"type\":\"integer\",\"maximum\":1}}},"
	    "\"additionalProperties\":{\"type\":\"integer\"}}");
	json_t *o = js("{\"s\":\"AB\",\"l\":[5],\"x\":\"no\"}");
	struct srv_error err = {0};
	cr_assert_eq(srv_schema_validate(s, o, &err), LP_E_INVALID);
	static const char *const want[][2] = {
	    {"", "must validate one and only one schema (oneOf). Found none valid"},
	    {"a", "Required value"},
	    {"x", "in body must be of type integer"},
	    {"l[0]", "should be less than or equal to 1"},
	    {"l", "should have at least 3 items"},
	    {"s", "should match '^[a-z]+$'"},
	    {"s", "Unsupported value: \"AB\""},
	    {"r", "Required value"},
	};
	char buf[4096];
	dump_causes(&err, buf, sizeof buf);
	cr_assert_eq(err.n_causes, 8, "%s", buf);
	for (int i = 0; i < 8; i++) {
		struct srv_cause c = srv_cause_get(&err, i);
		cr_assert(!strcmp(c.field, want[i][0]) ||
			      (!*want[i][0] && !strcmp(c.field, "<nil>")),
			  "cause %d: %s", i, buf);
		cr_assert(strstr(c.message, want[i][1]), "cause %d: %s", i, buf);
	}
	json_decref(o);
	srv_schema_free(s);
}
