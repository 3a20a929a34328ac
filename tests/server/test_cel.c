/*
 * test_cel.c -- tests of server/cel.c: every rule of the brief against
 * objects that pass and objects that fail, cel-go's error absorption and
 * messages, heterogeneous equality, set and map lists, escaped property
 * names, durations and timestamps, the string and list libraries, compile
 * failures (unknown functions, syntax, nesting) and the step limit.
 *
 * Expected results and messages are what cel-go (as Kubernetes 1.33
 * configures it) gives for the same rule; the vectors are our own.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/cel.h"

/* A test schema node: a type, and for objects named properties. */
struct tnode {
	enum cel_stype type;
	enum cel_ltype lt;
	const char *names[8];
	const struct tnode *props[8];
	const struct tnode *items;
	const struct tnode *addl;
	const char *keys[4]; /* a map list's x-kubernetes-list-map-keys */
};

static const void *t_prop(const void *node, const char *name)
{
	const struct tnode *t = node;
	for (int i = 0; i < 8 && t->names[i]; i++)
		if (!strcmp(t->names[i], name))
			return t->props[i];
	return NULL;
}

static const void *t_items(const void *node)
{
	return ((const struct tnode *)node)->items;
}

static const void *t_addl(const void *node)
{
	return ((const struct tnode *)node)->addl;
}

static enum cel_stype t_type(const void *node)
{
	return ((const struct tnode *)node)->type;
}

static enum cel_ltype t_lt(const void *node)
{
	return ((const struct tnode *)node)->lt;
}

static const char *t_key(const void *node, size_t i)
{
	const struct tnode *t = node;
	return i < 4 ? t->keys[i] : NULL;
}

static const struct cel_schema ops = {t_prop, t_items, t_addl, t_type,
				      t_lt,   NULL,    t_key};

static const struct tnode t_str = {.type = CEL_S_STRING};
static const struct tnode t_int = {.type = CEL_S_INT};
static const struct tnode t_num = {.type = CEL_S_DOUBLE};
static const struct tnode t_dur = {.type = CEL_S_DURATION};
static const struct tnode t_ts = {.type = CEL_S_TIMESTAMP};
static const struct tnode t_bytes = {.type = CEL_S_BYTES};
static const struct tnode t_ios = {.type = CEL_S_INT_OR_STRING};
static const struct tnode t_strset = {
    .type = CEL_S_ARRAY, .lt = CEL_L_SET, .items = &t_str};

/* Compile rule (must compile), evaluate against self (and old), return the
   result with the message in msg. */
static enum cel_result run(const char *rule, const char *self, const char *old,
			   const struct tnode *schema, char *msg,
			   size_t msg_size)
{
	char why[200];
	json_error_t jerr;
	cel_prog *p = cel_compile(rule, why, sizeof why);
	cr_assert(p, "rule %s does not compile: %s", rule, why);
	json_t *s = json_loads(self, JSON_DECODE_ANY, &jerr);
	cr_assert(s, "bad test JSON %s: %s", self, jerr.text);
	json_t *o = NULL;
	if (old) {
		o = json_loads(old, JSON_DECODE_ANY, &jerr);
		cr_assert(o, "bad test JSON %s: %s", old, jerr.text);
	}
	enum cel_result r =
	    cel_eval(p, schema ? &ops : NULL, schema, s, o, msg, msg_size);
	json_decref(o);
	json_decref(s);
	cel_free(p);
	return r;
}

static const char *rname(enum cel_result r)
{
	switch (r) {
	case CEL_TRUE:
		return "true";
	case CEL_FALSE:
		return "false";
	case CEL_ERROR:
		return "error";
	case CEL_UNSUPPORTED:
		return "unsupported";
	}
	return "?";
}

static void expect_s(const char *rule, const char *self, const char *old,
		     const struct tnode *schema, enum cel_result want,
		     const char *want_msg)
{
	char msg[256];
	enum cel_result r = run(rule, self, old, schema, msg, sizeof msg);
	cr_expect_eq(r, want, "%s on %s: %s (%s), want %s", rule, self,
		     rname(r), msg, rname(want));
	if (want_msg)
		cr_expect_str_eq(msg, want_msg, "%s on %s", rule, self);
}

static void yes(const char *rule, const char *self)
{
	expect_s(rule, self, NULL, NULL, CEL_TRUE, NULL);
}

static void no(const char *rule, const char *self)
{
	expect_s(rule, self, NULL, NULL, CEL_FALSE, NULL);
}

static void err(const char *rule, const char *self, const char *msg)
{
	expect_s(rule, self, NULL, NULL, CEL_ERROR, msg);
}

static void bad(const char *rule, const char *want_why)
{
	char why[200];
	cel_prog *p = cel_compile(rule, why, sizeof why);
	cr_expect_null(p, "rule %s compiled", rule);
	cel_free(p);
	cr_expect(why[0], "rule %s failed without saying why", rule);
	if (want_why)
		cr_expect(strstr(why, want_why), "rule %s: why is \"%s\"", rule,
			  why);
}

/* -------------------------------------------------------- real rules */

Test(cel_rules, presence_implications)
{
	const char *r = "!has(self.externalId) || has(self.roleArn)";
	yes(r, "{}");
	yes(r, "{\"externalId\":\"x\",\"roleArn\":\"y\"}");
	no(r, "{\"externalId\":\"x\"}");
	r = "!has(self.topology) || (has(self.mode) && self.mode == "
	    "'Topology')";
	yes(r, "{\"mode\":\"Other\"}");
	yes(r, "{\"topology\":{},\"mode\":\"Topology\"}");
	no(r, "{\"topology\":{},\"mode\":\"Other\"}");
	no(r, "{\"topology\":{}}");
	r = "!(self.type != 'RollingUpdate' && has(self.rollingUpdate))";
	yes(r, "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{}}");
	yes(r, "{\"type\":\"Recreate\"}");
	no(r, "{\"type\":\"Recreate\",\"rollingUpdate\":{}}");
}

Test(cel_rules, transition_rules)
{
	cel_prog *p = cel_compile("self == oldSelf", NULL, 0);
	cr_assert(p);
	cr_expect(cel_uses_old_self(p));
	cel_free(p);
	p = cel_compile("self.a == 1", NULL, 0);
	cr_assert(p);
	cr_expect_not(cel_uses_old_self(p));
	cel_free(p);
	expect_s("self == oldSelf", "{\"a\":[1,2]}", "{\"a\":[1,2]}", NULL,
		 CEL_TRUE, "");
	expect_s("self == oldSelf", "{\"a\":[1,2]}", "{\"a\":[2,1]}", NULL,
		 CEL_FALSE, "");
	expect_s("self == oldSelf", "\"x\"", "\"y\"", NULL, CEL_FALSE, NULL);
	const char *r = "!has(oldSelf.volumeHandle) || has(self.volumeHandle)";
	expect_s(r, "{}", "{}", NULL, CEL_TRUE, NULL);
	expect_s(r, "{\"volumeHandle\":\"v\"}", "{\"volumeHandle\":\"v\"}",
		 NULL, CEL_TRUE, NULL);
	expect_s(r, "{}", "{\"volumeHandle\":\"v\"}", NULL, CEL_FALSE, NULL);
}

Test(cel_rules, exactly_one_of)
{
	const char *r = "(has(self.volumeHandle) && !has(self.snapshotHandle)) "
			"|| (!has(self.volumeHandle) && "
			"has(self.snapshotHandle))";
	yes(r, "{\"volumeHandle\":\"a\"}");
	yes(r, "{\"snapshotHandle\":\"a\"}");
	no(r, "{}");
	no(r, "{\"volumeHandle\":\"a\",\"snapshotHandle\":\"b\"}");
	r = "(has(self.tpp) ? 1 : 0) + (has(self.cloud) ? 1 : 0) + "
	    "(has(self.ngts) ? 1 : 0) == 1";
	yes(r, "{\"cloud\":{}}");
	no(r, "{}");
	no(r, "{\"cloud\":{},\"tpp\":{}}");
	r = "[has(self.universal),has(self.individual)].filter(x,x==true)."
	    "size() == 1";
	yes(r, "{\"universal\":1}");
	no(r, "{\"universal\":1,\"individual\":2}");
	no(r, "{}");
}

Test(cel_rules, string_fields)
{
	const char *r = "self.type != 'CEL' || self.condition != \"\"";
	yes(r, "{\"type\":\"Other\"}");
	yes(r, "{\"type\":\"CEL\",\"condition\":\"x\"}");
	no(r, "{\"type\":\"CEL\",\"condition\":\"\"}");
	err(r, "{\"type\":\"CEL\"}", "no such key: condition");
	r = "!has(self.singular) || self.singular == "
	    "self.singular.lowerAscii()";
	yes(r, "{\"singular\":\"foo\"}");
	no(r, "{\"singular\":\"Foo\"}");
	yes(r, "{}");
	r = "size(self.group) == 0 && self.kind == 'Service'";
	yes(r, "{\"group\":\"\",\"kind\":\"Service\"}");
	no(r, "{\"group\":\"apps\",\"kind\":\"Service\"}");
	no(r, "{\"group\":\"\",\"kind\":\"Pod\"}");
}

Test(cel_rules, replica_bounds)
{
	const char *r = "!has(self.minReplicaCount) || self.minReplicaCount <= "
			"(has(self.maxReplicaCount) ? self.maxReplicaCount : "
			"100)";
	yes(r, "{}");
	yes(r, "{\"minReplicaCount\":5}");
	no(r, "{\"minReplicaCount\":500}");
	yes(r, "{\"minReplicaCount\":5,\"maxReplicaCount\":5}");
	no(r, "{\"minReplicaCount\":6,\"maxReplicaCount\":5}");
}

Test(cel_rules, path_matching)
{
	const char *r = "(self.type in ['Exact','PathPrefix']) ? "
			"!self.value.endsWith('/.') : true";
	yes(r, "{\"type\":\"Exact\",\"value\":\"/a\"}");
	no(r, "{\"type\":\"PathPrefix\",\"value\":\"/a/.\"}");
	yes(r, "{\"type\":\"Regex\",\"value\":\"/a/.\"}");
	r = "(self.type in ['Exact','PathPrefix']) ? "
	    "self.value.matches(r\"\"\"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%]["
	    "0-9a-fA-F]{2})+$\"\"\") : true";
	yes(r, "{\"type\":\"Exact\",\"value\":\"/a/b%20c\"}");
	no(r, "{\"type\":\"Exact\",\"value\":\"/a b\"}");
	no(r, "{\"type\":\"Exact\",\"value\":\"/a%2\"}");
	yes(r, "{\"type\":\"Other\",\"value\":\"/a b\"}");
}

Test(cel_rules, hostnames)
{
	const char *r = "self.all(h, !h.contains('*') ? "
			"h.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-"
			"9]([-a-z0-9]*[a-z0-9])?)*)$') : true)";
	yes(r, "[\"a.example.com\",\"*.x\"]");
	yes(r, "[]");
	no(r, "[\"a.example.com\",\"Bad_Host\"]");
	no(r, "[\"a..b\"]");
	r = "self.all(l, l.protocol in ['TCP', 'UDP'] ? !has(l.hostname) : "
	    "true)";
	yes(r, "[{\"protocol\":\"TCP\"},{\"protocol\":\"HTTP\",\"hostname\":"
	       "\"h\"}]");
	no(r, "[{\"protocol\":\"UDP\",\"hostname\":\"h\"}]");
}

Test(cel_rules, filters_and_nested_all)
{
	const char *r = "(has(self.filters) && self.filters.exists_one(f, "
			"has(f.requestRedirect))) || true";
	yes(r, "{}");
	yes(r, "{\"filters\":[{},{}]}");
	r = "!has(self.cohortName) && has(self.resourceGroups) ? "
	    "self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, "
	    "!has(r.borrowingLimit)))) : true";
	yes(r, "{\"cohortName\":\"c\",\"resourceGroups\":[{\"flavors\":[{"
	       "\"resources\":[{\"borrowingLimit\":1}]}]}]}");
	yes(r, "{\"resourceGroups\":[{\"flavors\":[{\"resources\":[{},{}]},{"
	       "\"resources\":[]}]}]}");
	no(r, "{\"resourceGroups\":[{\"flavors\":[{\"resources\":[{},{"
	      "\"borrowingLimit\":2}]}]}]}");
	r = "self.map(x, x.name).size() == size(self)";
	yes(r, "[{\"name\":\"a\"},{\"name\":\"b\"}]");
	err(r, "[{\"name\":\"a\"},{}]", "no such key: name");
	r = "self.status.conditions.exists(c, c.type == 'Ready' && c.status == "
	    "'True')";
	yes(r, "{\"status\":{\"conditions\":[{\"type\":\"X\",\"status\":"
	       "\"True\"},{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	no(r, "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	      "\"False\"}]}}");
}

Test(cel_rules, duration_bounds)
{
	const char *r = "!(duration(self) < duration('1s') || duration(self) > "
			"duration('24h'))";
	yes(r, "\"1h30m\"");
	yes(r, "\"1s\"");
	yes(r, "\"24h\"");
	no(r, "\"500ms\"");
	no(r, "\"24h0m0.001s\"");
	err(r, "\"soon\"", NULL);
	expect_s("self > duration('1m')", "\"90s\"", NULL, &t_dur, CEL_TRUE,
		 NULL);
	expect_s("self == duration('1.5s')", "\"1500ms\"", NULL, &t_dur,
		 CEL_TRUE, NULL);
	expect_s("self > duration('0s')", "\"x\"", NULL, &t_dur, CEL_ERROR,
		 NULL);
}

/* ------------------------------------------------------- absorption */

Test(cel_errors, and_or_absorb_errors)
{
	yes("self.missing || true", "{}");
	yes("true || self.missing", "{}");
	no("self.missing && false", "{}");
	no("false && self.missing", "{}");
	err("self.missing && true", "{}", "no such key: missing");
	err("true && self.missing", "{}", "no such key: missing");
	err("self.missing || false", "{}", "no such key: missing");
	err("1 || false", "{}", "no such overload");
	yes("1 || true", "{}");
	err("!1", "{}", "no such overload");
	err("1 ? true : false", "{}", "no such overload");
}

Test(cel_errors, macros_absorb_errors)
{
	/* all: false wins over an error, wherever it is */
	no("self.all(x, x.a == 1)", "[{},{\"a\":2}]");
	no("self.all(x, x.a == 1)", "[{\"a\":2},{}]");
	err("self.all(x, x.a == 1)", "[{\"a\":1},{}]", "no such key: a");
	/* exists: true wins */
	yes("self.exists(x, x.a == 1)", "[{},{\"a\":1}]");
	err("self.exists(x, x.a == 1)", "[{\"a\":2},{}]", "no such key: a");
	err("self.exists_one(x, x.a == 1)", "[{\"a\":1},{}]", "no such key: a");
	yes("self.exists_one(x, x == 1)", "[1,2,3]");
	no("self.exists_one(x, x > 1)", "[1,2,3]");
	err("self.filter(x, x.a == 1).size() == 0", "[{}]", "no such key: a");
	err("self.map(x, x / 0).size() == 1", "[1]", "division by zero");
	err("self.all(x, x)", "[1]", "no such overload");
}

Test(cel_errors, messages)
{
	err("self.a.b == 1", "{\"a\":{}}", "no such key: b");
	err("self['x'] == 1", "{}", "no such key: x");
	err("self[3] == 1", "[1,2]", "index out of bounds: 3");
	err("self[-1] == 1", "[1,2]", "index out of bounds: -1");
	err("[1,2][2] == 1", "{}", "index '2' out of range in list size '2'");
	err("has(self.a.b)", "{\"a\":\"s\"}",
	    "invalid type for field selection.");
	err("self.a.b == 1", "{\"a\":null}",
	    "invalid type for field selection.");
	err("self + 1 == 0", "9223372036854775807", "integer overflow");
	err("self - 1 == 0", "-9223372036854775808", "integer overflow");
	err("self * 2 == 0", "5000000000000000000", "integer overflow");
	err("-self == 0", "-9223372036854775808", "integer overflow");
	err("self / 0 == 0", "1", "division by zero");
	err("self % 0 == 0", "1", "modulus by zero");
	err("self / -1 == 0", "-9223372036854775808", "integer overflow");
	err("1u - 2u == 0u", "1", "unsigned integer overflow");
	err("self + 1.0 == 2.0", "1", "no such overload");
	err("self < 'a'", "1", "no such overload");
	err("self < [1]", "[1]", "no such overload");
}

/* ------------------------------------------------------- semantics */

Test(cel_values, arithmetic)
{
	yes("7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1", "0");
	yes("7.0 / 2.0 == 3.5", "0");
	yes("1.0 / 0.0 > 1e308", "0");
	yes("2u * 3u == 6u && 7u % 4u == 3u", "0");
	yes("'ab' + 'cd' == 'abcd'", "0");
	yes("[1] + [2, 3] == [1, 2, 3]", "0");
	yes("0x10 == 16 && -0x10 == -16", "0");
	yes("-9223372036854775808 < 0", "0");
	yes("1e3 == 1000.0 && .5 == 0.5 && 1.5e-1 == 0.15", "0");
	/* a double literal of any length: DBL_MAX written out */
	yes("1797693134862315708145274237317043567980705675258449965989174768"
	    "0315726078002853876058955863276687817154045895351438246423432132"
	    "6889464182768467546703537516986049910576551282076245490090389328"
	    "9440758685084551339423045832369032229481658085593321233482747978"
	    "26204144723168738177180919299881250404026184124858368.0 > 1e308",
	    "0");
	yes("self.a + self.b == 3", "{\"a\":1,\"b\":2}");
	yes("(1 + 2) * 3 == 9 && 1 + 2 * 3 == 7", "0");
	yes("(true ? (false ? 1 : 2) : 3) == 2", "0");
	yes("false ? 1 : true ? true : false", "0");
	/* CEL's grammar: the middle of ?: is not itself a ?: */
	bad("true ? false ? 1 : 2 : 3", "expected ':'");
}

Test(cel_values, heterogeneous_equality)
{
	yes("1 == 1.0 && 1u == 1 && 1.0 == 1u", "0");
	yes("1 != 'a' && 'a' != 1 && null != 1 && [] != {}", "0");
	yes("null == null && self.a == null", "{\"a\":null}");
	yes("self == {'a': 1, 'b': [true]}", "{\"b\":[true],\"a\":1}");
	no("self == {'a': 1}", "{\"a\":1,\"b\":2}");
	yes("[1, 'a', [2.0]] == [1.0, 'a', [2u]]", "0");
	no("[1, 2] == [2, 1]", "0");
	yes("1 < 1.5 && 2u > 1 && -1 < 0u && 2.5 >= 2", "0");
	yes("'a' < 'b' && 'B' < 'a' && false < true", "0");
	yes("1 in [1.0, 2] && !(3 in [1, 2]) && 'a' in {'a': 1}", "0");
	yes("'x' in self && !('y' in self)", "{\"x\":1}");
	yes("{1: 'a'}[1.0] == 'a'", "0");
	yes("{'k': 1}.k == 1", "0");
}

Test(cel_values, set_lists_ignore_order)
{
	static const struct tnode set = {
	    .type = CEL_S_ARRAY, .lt = CEL_L_SET, .items = &t_int};
	static const struct tnode atomic = {.type = CEL_S_ARRAY,
					    .items = &t_int};
	static const struct tnode obj = {
	    .type = CEL_S_OBJECT,
	    .names = {"s", "a"},
	    .props = {&set, &atomic},
	};
	expect_s("self.s == [3, 1, 2]", "{\"s\":[1,2,3]}", NULL, &obj, CEL_TRUE,
		 NULL);
	expect_s("self.s == [3, 1, 1]", "{\"s\":[1,2,3]}", NULL, &obj,
		 CEL_FALSE, NULL);
	expect_s("self.a == [3, 1, 2]", "{\"a\":[1,2,3]}", NULL, &obj,
		 CEL_FALSE, NULL);
	expect_s("self == oldSelf", "{\"s\":[1,2,3]}", "{\"s\":[3,2,1]}", &obj,
		 CEL_TRUE, NULL);
	expect_s("self == oldSelf", "{\"a\":[1,2,3]}", "{\"a\":[3,2,1]}", &obj,
		 CEL_FALSE, NULL);
}

Test(cel_values, schema_types)
{
	static const struct tnode obj = {
	    .type = CEL_S_OBJECT,
	    .names = {"n", "i", "d", "t", "b", "x"},
	    .props = {&t_num, &t_int, &t_dur, &t_ts, &t_bytes, &t_ios},
	};
	/* a number is a double even when the JSON is an integer */
	expect_s("self.n == 1.0 && self.n + 0.5 == 1.5", "{\"n\":1}", NULL,
		 &obj, CEL_TRUE, NULL);
	expect_s("self.n + 1 == 2.0", "{\"n\":1}", NULL, &obj, CEL_ERROR,
		 "no such overload");
	/* without a schema it is an int */
	yes("self.n + 1 == 2", "{\"n\":1}");
	/* an integer written 2.0 is an int */
	expect_s("self.i + 1 == 3", "{\"i\":2.0}", NULL, &obj, CEL_TRUE, NULL);
	expect_s("self.d == duration('1m')", "{\"d\":\"60s\"}", NULL, &obj,
		 CEL_TRUE, NULL);
	expect_s("self.t < timestamp('2024-01-01T00:00:00Z')",
		 "{\"t\":\"2023-06-01T10:00:00+02:00\"}", NULL, &obj, CEL_TRUE,
		 NULL);
	expect_s("self.b == b'hi' && size(self.b) == 2", "{\"b\":\"aGk=\"}",
		 NULL, &obj, CEL_TRUE, NULL);
	expect_s("self.x == 'a' || self.x == 3", "{\"x\":3}", NULL, &obj,
		 CEL_TRUE, NULL);
	expect_s("size(self.b) == 2", "{\"b\":\"%%%\"}", NULL, &obj, CEL_ERROR,
		 NULL);
	/* map: additionalProperties, keys unescaped */
	static const struct tnode map = {.type = CEL_S_MAP, .addl = &t_int};
	expect_s("self['a-b'] == 1 && self.all(k, self[k] > 0)",
		 "{\"a-b\":1,\"c\":2}", NULL, &map, CEL_TRUE, NULL);
}

Test(cel_values, escaped_names)
{
	yes("self.foo__dash__bar == 1", "{\"foo-bar\":1}");
	yes("self.__namespace__ == 'ns'", "{\"namespace\":\"ns\"}");
	yes("self.a__dot__b__slash__c == 2", "{\"a.b/c\":2}");
	yes("self.x__underscores__y == 3", "{\"x__y\":3}");
	yes("has(self.__if__) && !has(self.__for__)", "{\"if\":1}");
	yes("self.exists(k, k == 'foo__dash__bar')", "{\"foo-bar\":1}");
	yes("self.exists(k, k == '__namespace__')", "{\"namespace\":1}");
	/* equality compares raw names */
	yes("self == {'foo-bar': 1} && {'foo-bar': 1} == self",
	    "{\"foo-bar\":1}");
	err("self.foo__bogus__ == 1", "{\"foo__bogus__\":1}",
	    "no such key: foo__bogus__");
	/* a reserved word after a '.' is a field (cel-go parses it so, and
	   kube's type provider finds it, Kubernetes 1.31 on); alone it is
	   still refused */
	yes("self.namespace == 'ns' && self.__namespace__ == 'ns'",
	    "{\"namespace\":\"ns\"}");
	yes("has(self.namespace) && !has(self.package) && "
	    "self.?namespace.orValue(0) == 1",
	    "{\"namespace\":1}");
	bad("namespace == 1", "reserved");
	bad("self.in == 1", "field name");
}

Test(cel_values, strings)
{
	yes("size('héllo') == 5 && size(b'h\\xc3\\xa9') == 3", "0");
	yes("'héllo'.size() == 5 && size('日本語') == 3", "0");
	yes("'abc'.contains('b') && 'abc'.startsWith('ab') && "
	    "'abc'.endsWith('bc')",
	    "0");
	yes("'AbC'.lowerAscii() == 'abc' && 'aBc'.upperAscii() == 'ABC'", "0");
	yes("'  x \\t'.trim() == 'x'", "0");
	yes("'a,b,c'.split(',') == ['a', 'b', 'c']", "0");
	yes("'a,b,c'.split(',', 2) == ['a', 'b,c']", "0");
	yes("'abc'.split('') == ['a', 'b', 'c']", "0");
	yes("['a', 'b'].join() == 'ab' && ['a', 'b'].join('-') == 'a-b'", "0");
	yes("'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3", "0");
	yes("'hello'.indexOf('x') == -1 && 'hello'.indexOf('') == 0", "0");
	yes("'héllo'.indexOf('l') == 2 && 'hello'.indexOf('l', 3) == 3", "0");
	err("'hello'.indexOf('l', 9) == 0", "0", "index out of range: 9");
	yes("'aaa'.replace('a', 'b') == 'bbb' && 'aaa'.replace('a', 'b', 1) "
	    "== 'baa'",
	    "0");
	yes("'héllo'.substring(1) == 'éllo' && 'hello'.substring(1, 3) == "
	    "'el'",
	    "0");
	err("'hello'.substring(3, 1) == ''", "0",
	    "invalid substring range. start: 3, end: 1");
	err("'hello'.substring(6) == ''", "0", "index out of range: 6");
	yes("'abc'.charAt(1) == 'b' && 'abc'.charAt(3) == ''", "0");
	yes("matches('abc', 'b') && !'abc'.matches('^b')", "0");
	yes("self.matches(self)", "\"a.c\"");
	/* kube's regex library: Go's FindString / FindAllString */
	yes("'abc 123 def 456'.find('[0-9]+') == '123' && "
	    "'abc'.find('[0-9]+') == ''",
	    "0");
	yes("'karpenter.sh/custom'.find('^([^/]+)').endsWith('karpenter.sh')",
	    "0");
	yes("'a1b22c333'.findAll('[0-9]+') == ['1', '22', '333'] && "
	    "'a1b22c333'.findAll('[0-9]+', 2) == ['1', '22'] && "
	    "'a1b22c333'.findAll('[0-9]+', 0) == [] && "
	    "'a1b22c333'.findAll('[0-9]+', -1).size() == 3 && "
	    "'abc'.findAll('[0-9]') == []",
	    "0");
	/* empty matches: one per position, none right after a match */
	yes("'abc'.findAll('x*') == ['', '', '', ''] && "
	    "'abc'.findAll('b*') == ['', 'b', '']",
	    "0");
	yes("'aXbX'.findAll('^.') == ['a'] && 'héllo'.find('é.') == 'él' && "
	    "'ééé'.findAll('') == ['', '', '', '']",
	    "0");
	yes("self.findAll(self.find('[a-z]')) == ['a', 'a']", "\"a.a\"");
	/* RE2's leftmost-first match, not POSIX's longest (found by an
	   audit); lazy repetitions; Unicode classes and the m flag */
	yes("'v1'.find('v|v1') == 'v' && 'aaa'.find('a+?') == 'a' && "
	    "'<a><b>'.findAll('<.+?>') == ['<a>', '<b>'] && "
	    "'xyz'.find('(?U)y+') == 'y'",
	    "0");
	yes("'a\\nEND'.matches('(?m)^END$') && !'a END'.matches('(?m)^END$') && "
	    "'\u00e9t\u00e9'.matches('^\\\\pL+$') && "
	    "!'b\\x07'.matches('^\\\\PC*$') && "
	    "'Stra\u00dfe 1'.find('\\\\p{Lu}\\\\p{Ll}+') == 'Stra\u00dfe'",
	    "0");
	bad("self.find('(') == ''", "error parsing regexp: missing closing )");
	expect_s("self.find('a') == ''",
		 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
		 NULL, NULL, CEL_FALSE, NULL);
	yes("'a\\'b' == \"a'b\" && '\\x41\\u00e9\\101' == 'Aé' + 'A'", "0");
	yes("r'\\d' == '\\\\d' && '''a\nb''' == 'a\\nb'", "0");
}

Test(cel_values, conversions)
{
	yes("int('42') == 42 && int(3.9) == 3 && int(2u) == 2", "0");
	yes("uint(3) == 3u && double(2) == 2.0 && double('1.5') == 1.5", "0");
	yes("string(1) == '1' && string(1.5) == '1.5' && string(true) == "
	    "'true'",
	    "0");
	yes("string(1e6) == '1e+06' && string(100000.0) == '100000'", "0");
	yes("bool('true') && !bool('false') && dyn(1) == 1", "0");
	yes("string(duration('1m30s')) == '90s'", "0");
	yes("string(timestamp('2024-02-29T12:00:00.5+01:00')) == "
	    "'2024-02-29T12:00:00.5+01:00'",
	    "0");
	yes("timestamp('2024-01-02T00:00:00Z') - timestamp('2024-01-01T00:00:"
	    "00Z') == duration('24h')",
	    "0");
	yes("timestamp('2024-01-01T00:00:00Z') + duration('1h') > "
	    "timestamp('2024-01-01T00:59:59Z')",
	    "0");
	yes("duration('-1.5h') == -duration('90m') && duration('1us') == "
	    "duration('1000ns')",
	    "0");
	err("int('x') == 0", "0", NULL);
	err("uint(-1) == 0u", "0", "unsigned integer overflow");
	err("int(1e19) == 0", "0", "integer overflow");
	/* literals are checked when compiled, as cel-go's checker does */
	bad("duration('1x') == duration('1s')", "invalid duration argument");
	bad("duration('1d') > duration('1s')", "invalid duration argument");
	bad("timestamp('2024-02-30T00:00:00Z') == timestamp('2024-02-29T00:00:"
	    "00Z')",
	    "invalid timestamp");
	bad("timestamp('1000-01-01T00:00:00ZZ') == timestamp(0)",
	    "invalid timestamp");
	bad("timestamp(-62135596801) == timestamp(0)", "invalid timestamp");
	/* ... and text from the object when evaluated */
	err("duration(self) == duration('1s')", "\"1x\"",
	    "type conversion error from 'string' to "
	    "'google.protobuf.Duration'");
	/* cel-go's String.ConvertToType drops strconv's error for its own */
	err("int(self) > 0", "\"acd\"",
	    "type conversion error from 'string' to 'int'");
	err("self.all(k, 0 < int(k) && int(k) <= 65535)",
	    "{\"80\": 1, \"acd\": 2}",
	    "type conversion error from 'string' to 'int'");
	err("uint(self) > 0u", "\"-1\"",
	    "type conversion error from 'string' to 'uint'");
	err("double(self) > 0.0", "\"1e\"",
	    "type conversion error from 'string' to 'double'");
	err("bool(self)", "\"yes\"",
	    "type conversion error from 'string' to 'bool'");
	yes("int(self) == -12 && uint('12') == 12u && double('1.5') == 1.5 && "
	    "bool('True')",
	    "\"-12\"");
	/* a timestamp keeps the zone it was written in for string() */
	yes("string(timestamp('2011-08-18T19:03:37.01+01:00')) == "
	    "'2011-08-18T19:03:37.01+01:00'",
	    "0");
	yes("string(timestamp('2011-08-18T19:03:37Z') + duration('1h')) == "
	    "'2011-08-18T20:03:37Z'",
	    "0");
	yes("timestamp('2011-08-18T19:03:37.01+01:00') == "
	    "timestamp('2011-08-18T18:03:37.01Z')",
	    "0");
}

Test(cel_values, list_library)
{
	yes("[1, 2, 2, 3].isSorted() && ![2, 1].isSorted()", "0");
	yes("[1, 2, 3].sum() == 6 && [].sum() == 0 && [1.5, 2.5].sum() == 4.0",
	    "0");
	yes("[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", "0");
	yes("['b', 'a'].min() == 'a'", "0");
	err("[].min() == 0", "0", "min called on empty list");
	yes("[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && "
	    "[1].indexOf(5) == -1",
	    "0");
	yes("self.map(x, x * 2) == [2, 4]", "[1,2]");
	yes("self.map(x, x > 1, x * 10) == [20]", "[1,2]");
	yes("self.filter(k, k.startsWith('a')) == ['ab']",
	    "{\"ab\":1,\"cd\":2}");
	yes("self.all(k, k != 'z') && self.exists_one(k, k == 'ab')",
	    "{\"ab\":1,\"cd\":2}");
	/* the sum of no elements is the zero of the schema's element type
	   (kube's validation_test.go, "stdlib list functions") */
	static const struct tnode durs = {.type = CEL_S_ARRAY,
					  .items = &t_dur};
	expect_s("self.sum() == duration('0')", "[]", NULL, &durs, CEL_TRUE,
		 NULL);
	expect_s("self.sum() == duration('3s')", "[\"1s\",\"2s\"]", NULL,
		 &durs, CEL_TRUE, NULL);
}

/* ------------------------------------------ kube's ip, cidr, url */

#define IPERR(s, why)                                                          \
	"IP Address \"" s "\" parse error during conversion from string: "     \
	"ParseAddr(\"" s "\"): " why
#define CIDRERR(s, why)                                                        \
	"network address parse error during conversion from string: "          \
	"network address parse error during conversion from string: "          \
	"netip.ParsePrefix(\"" s "\"): " why
#define URLERR(s, why)                                                         \
	"URL parse error during conversion from string: parse \"" s "\": " why

Test(cel_ip, real_rules)
{
	/* Gateway API TLSRoute: hostnames are names, not addresses */
	yes("self.all(h, !isIP(h))", "[\"example.com\",\"*.example.org\"]");
	no("self.all(h, !isIP(h))", "[\"example.com\",\"10.0.0.1\"]");
	no("self.all(h, !isIP(h))", "[\"2001:db8::1\"]");
	yes("ip(self).isLoopback() && ip(self).family() == 6", "\"::1\"");
}

Test(cel_ip, is_ip)
{
	yes("isIP('192.168.0.1') && isIP('2001:db8::68') && isIP('::')", "0");
	yes("isIP('::1.2.3.4') && isIP('1:2:3:4:5:6:7:8')", "0");
	/* netip's strict reading: no leading zeros, mapped, zones */
	yes("!isIP('192.168.0.1.0') && !isIP('010.0.0.1') && !isIP('')", "0");
	yes("!isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')", "0");
	yes("!isIP('1.2.3.4/32') && !isIP(' 1.2.3.4') && !isIP('0x1.2.3.4')",
	    "0");
	err("isIP(1)", "0", "no such overload");
}

Test(cel_ip, parse_errors)
{
	err("ip('192.168.0.1.0') == ip('1.2.3.4')", "0",
	    IPERR("192.168.0.1.0", "IPv4 address too long"));
	err("ip('2001:db8:::68') == ip('1.2.3.4')", "0",
	    IPERR("2001:db8:::68", "each colon-separated field must have at "
				   "least one digit (at \":68\")"));
	err("ip('010.1.2.3') == ip('1.2.3.4')", "0",
	    IPERR("010.1.2.3", "IPv4 field has octet with leading zero"));
	err("ip('1.2.3') == ip('1.2.3.4')", "0",
	    IPERR("1.2.3", "IPv4 address too short"));
	err("ip('1.2.3.256') == ip('1.2.3.4')", "0",
	    IPERR("1.2.3.256", "IPv4 field has value >255"));
	err("ip('1.2..3') == ip('1.2.3.4')", "0",
	    IPERR("1.2..3",
		  "IPv4 field must have at least one digit (at \".3\")"));
	err("ip('1.2.3.x') == ip('1.2.3.4')", "0",
	    IPERR("1.2.3.x", "unexpected character (at \"x\")"));
	err("ip('abc') == ip('1.2.3.4')", "0",
	    IPERR("abc", "unable to parse IP"));
	err("ip('') == ip('1.2.3.4')", "0", IPERR("", "unable to parse IP"));
	err("ip('%x') == ip('1.2.3.4')", "0",
	    IPERR("%x", "missing IPv6 address"));
	err("ip('1:2:3:4:5:6:7:8:9') == ip('::')", "0",
	    IPERR("1:2:3:4:5:6:7:8:9",
		  "trailing garbage after address (at \"9\")"));
	err("ip('12345::') == ip('::')", "0",
	    IPERR("12345::", "each colon-separated field must have at most 4 "
			     "hex digits (at \"12345::\")"));
	err("ip('1::2::3') == ip('::')", "0",
	    IPERR("1::2::3", "multiple :: in address (at \":3\")"));
	err("ip('1:2:3:4:5:6:7::8') == ip('::')", "0",
	    IPERR("1:2:3:4:5:6:7::8",
		  "the :: must expand to at least one field of zeros"));
	err("ip('1:2') == ip('::')", "0",
	    IPERR("1:2", "address string too short"));
	err("ip('1:') == ip('::')", "0",
	    IPERR("1:", "colon must be followed by more characters (at "
			"\":\")"));
	err("ip('1::2:3:4:5:6:7:1.2.3.4') == ip('::')", "0",
	    IPERR("1::2:3:4:5:6:7:1.2.3.4",
		  "too many hex fields to fit an embedded IPv4 at the end of "
		  "the address (at \"1.2.3.4\")"));
	err("ip('1:2:1.2.3.4') == ip('::')", "0",
	    IPERR("1:2:1.2.3.4", "embedded IPv4 address must replace the "
				 "final 2 fields of the address (at "
				 "\"1.2.3.4\")"));
	err("ip('fe80::1%') == ip('::')", "0",
	    IPERR("fe80::1%", "zone must be a non-empty string"));
	err("ip('fe80::1%eth0') == ip('::')", "0",
	    "IP address \"fe80::1%eth0\" with zone value is not allowed");
	err("ip('::ffff:1.2.3.4') == ip('::')", "0",
	    "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed");
	/* the text is quoted as Go's %q quotes it */
	err("ip(self) == ip('::')", "\"a\\\"b\\n\"",
	    "IP Address \"a\\\"b\\n\" parse error during conversion from "
	    "string: ParseAddr(\"a\\\"b\\n\"): unable to parse IP");
}

Test(cel_ip, methods)
{
	yes("ip('192.168.0.1').family() == 4 && ip('2001:db8::68').family() "
	    "== 6",
	    "0");
	yes("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && "
	    "!ip('127.0.0.1').isUnspecified() && !ip('::1').isUnspecified()",
	    "0");
	yes("ip('127.0.0.1').isLoopback() && ip('127.255.0.9').isLoopback() "
	    "&& !ip('1.2.3.4').isLoopback() && ip('::1').isLoopback() && "
	    "!ip('2001:db8::abcd').isLoopback()",
	    "0");
	yes("ip('224.0.0.1').isLinkLocalMulticast() && "
	    "!ip('224.0.1.1').isLinkLocalMulticast() && "
	    "ip('ff02::1').isLinkLocalMulticast() && "
	    "ip('ff12::1').isLinkLocalMulticast() && "
	    "!ip('fd00::1').isLinkLocalMulticast()",
	    "0");
	yes("ip('169.254.169.254').isLinkLocalUnicast() && "
	    "!ip('192.168.0.1').isLinkLocalUnicast() && "
	    "ip('fe80::1').isLinkLocalUnicast() && "
	    "ip('febf::1').isLinkLocalUnicast() && "
	    "!ip('fd80::1').isLinkLocalUnicast()",
	    "0");
	yes("ip('192.168.0.1').isGlobalUnicast() && "
	    "ip('10.0.0.1').isGlobalUnicast() && "
	    "!ip('255.255.255.255').isGlobalUnicast() && "
	    "!ip('0.0.0.0').isGlobalUnicast() && "
	    "!ip('224.0.0.1').isGlobalUnicast() && "
	    "!ip('127.0.0.1').isGlobalUnicast() && "
	    "!ip('169.254.0.1').isGlobalUnicast() && "
	    "ip('2001:db8::abcd').isGlobalUnicast() && "
	    "ip('fd00::1').isGlobalUnicast() && "
	    "!ip('ff00::1').isGlobalUnicast() && !ip('::').isGlobalUnicast()",
	    "0");
	err("'1.2.3.4'.family() == 4", "0", "no such overload");
	err("cidr('1.2.3.0/24').family() == 4", "0", "no such overload");
	bad("family(ip('1.2.3.4')) == 4", "not supported");
	bad("ip('1.2.3.4', 1) == ip('1.2.3.4')", "not supported");
	bad("isIP() == true", "not supported");
}

Test(cel_ip, strings_and_equality)
{
	yes("string(ip('2001:DB8:0:0:0:0:0:68')) == '2001:db8::68'", "0");
	yes("string(ip('1:0:0:1:0:0:0:1')) == '1:0:0:1::1' && "
	    "string(ip('::1.2.3.4')) == '::102:304'",
	    "0");
	yes("string(ip('192.168.0.1')) == '192.168.0.1'", "0");
	yes("ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::68') "
	    "&& !ip.isCanonical('2001:DB8::68') && "
	    "!ip.isCanonical('2001:db8:0::68')",
	    "0");
	err("ip.isCanonical('127.0.0.1.0')", "0",
	    IPERR("127.0.0.1.0", "IPv4 address too long"));
	/* the namespaced function wins over a variable named ip */
	yes("self.all(ip, ip.isCanonical(ip))", "[\"10.0.0.1\",\"::1\"]");
	no("self.all(ip, ip.isCanonical(ip))", "[\"::0:1\"]");
	yes("ip('1.2.3.4') == ip('1.2.3.4') && ip('::1') != ip('::2')", "0");
	yes("ip('2001:db8::68') == ip('2001:DB8:0::68')", "0");
	yes("ip('0.0.0.0') != ip('::')", "0");
	yes("[ip('1.2.3.4')] == [ip('1.2.3.4')]", "0");
	/* kube's IP refuses other types; a string just is not equal */
	err("ip('1.2.3.4') == '1.2.3.4'", "0", "no such overload");
	no("'1.2.3.4' == ip('1.2.3.4')", "0");
	err("ip('1.2.3.4') < ip('1.2.3.5')", "0", NULL);
}

Test(cel_cidr, parse)
{
	yes("isCIDR('192.168.0.0/24') && isCIDR('2001:db8::/32') && "
	    "isCIDR('10.0.0.1/32') && isCIDR('::/0')",
	    "0");
	yes("!isCIDR('192.168.0.0/33') && !isCIDR('192.168.0.0') && "
	    "!isCIDR('::ffff:1.2.3.4/120') && !isCIDR('10.0.0.0/08') && "
	    "!isCIDR('010.0.0.0/8') && !isCIDR('fe80::%eth0/64')",
	    "0");
	err("cidr('192.168.0.0/') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("192.168.0.0/", "bad bits after slash: \"\""));
	err("cidr('2001:db8::/') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("2001:db8::/", "bad bits after slash: \"\""));
	err("cidr('10.0.0.0/033') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("10.0.0.0/033", "bad bits after slash: \"033\""));
	err("cidr('10.0.0.0/+8') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("10.0.0.0/+8", "bad bits after slash: \"+8\""));
	err("cidr('10.0.0.0/33') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("10.0.0.0/33", "prefix length out of range"));
	err("cidr('::/129') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("::/129", "prefix length out of range"));
	err("cidr('10.0.0.0') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("10.0.0.0", "no '/'"));
	err("cidr('10.0.0/8') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("10.0.0/8",
		    "ParseAddr(\"10.0.0\"): IPv4 address too short"));
	err("cidr('fe80::%eth0/64') == cidr('1.0.0.0/8')", "0",
	    CIDRERR("fe80::%eth0/64",
		    "IPv6 zones cannot be present in a prefix"));
	err("cidr('::ffff:1.2.3.4/120') == cidr('1.0.0.0/8')", "0",
	    "network address parse error during conversion from string: "
	    "IPv4-mapped IPv6 address \"::ffff:1.2.3.4/120\" is not allowed");
	err("cidr(1) == cidr('1.0.0.0/8')", "0", "no such overload");
}

Test(cel_cidr, methods)
{
	yes("cidr('10.0.0.0/8').containsIP('10.1.2.3') && "
	    "cidr('10.0.0.0/8').containsIP(ip('10.255.255.255')) && "
	    "!cidr('10.0.0.0/8').containsIP('11.0.0.1') && "
	    "cidr('0.0.0.0/0').containsIP('255.255.255.255') && "
	    "!cidr('::/0').containsIP('1.2.3.4') && "
	    "cidr('2001:db8::/33').containsIP('2001:db8:7fff::1') && "
	    "!cidr('2001:db8::/33').containsIP('2001:db8:8000::1')",
	    "0");
	/* an unmasked prefix contains by its first bits */
	yes("cidr('10.1.2.3/8').containsIP('10.9.9.9')", "0");
	/* kube answers an unparsable address with no such overload */
	err("cidr('10.0.0.0/8').containsIP('10.0.0.256')", "0",
	    "no such overload");
	yes("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && "
	    "cidr('10.0.0.0/8').containsCIDR(cidr('10.0.0.0/8')) && "
	    "!cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8') && "
	    "!cidr('10.0.0.0/8').containsCIDR('2001:db8::/32') && "
	    "cidr('::/0').containsCIDR('2001:db8::/32') && "
	    "!cidr('10.0.0.0/8').containsCIDR('11.0.0.0/16')",
	    "0");
	err("cidr('10.0.0.0/8').containsCIDR('x')", "0",
	    CIDRERR("x", "no '/'"));
	err("cidr('10.0.0.0/8').containsCIDR(1)", "0", "no such overload");
	yes("cidr('192.168.1.5/24').ip() == ip('192.168.1.5') && "
	    "cidr('192.168.1.5/24').ip().family() == 4",
	    "0");
	yes("string(cidr('192.168.1.5/24').masked()) == '192.168.0.0/24' || "
	    "string(cidr('192.168.1.5/24').masked()) == '192.168.1.0/24'",
	    "0");
	yes("cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24') && "
	    "cidr('10.1.255.255/20').masked() == cidr('10.1.240.0/20') && "
	    "cidr('2001:db8::1/33').masked() == cidr('2001:db8::/33') && "
	    "cidr('1.2.3.4/0').masked() == cidr('0.0.0.0/0') && "
	    "cidr('1.2.3.4/32').masked() == cidr('1.2.3.4/32')",
	    "0");
	yes("cidr('10.0.0.0/8').prefixLength() == 8 && "
	    "cidr('::/0').prefixLength() == 0",
	    "0");
	yes("string(cidr('2001:DB8::/32')) == '2001:db8::/32' && "
	    "string(cidr('10.0.0.1/8')) == '10.0.0.1/8'",
	    "0");
	/* equality compares the address as written and the length */
	yes("cidr('10.0.0.1/8') != cidr('10.0.0.0/8') && cidr('10.0.0.0/8') "
	    "== cidr('10.0.0.0/8') && cidr('10.0.0.0/8') != "
	    "cidr('10.0.0.0/9')",
	    "0");
	err("cidr('10.0.0.0/8') == ip('10.0.0.0')", "0", "no such overload");
	err("ip('10.0.0.0').containsIP('10.0.0.0')", "0", "no such overload");
	err("'10.0.0.0/8'.prefixLength() == 8", "0", "no such overload");
	bad("containsIP(cidr('10.0.0.0/8'), '10.0.0.1')", "not supported");
	yes("self.all(c, isCIDR(c) && cidr(c).prefixLength() >= 16)",
	    "[\"10.0.0.0/16\",\"fd00::/64\"]");
}

Test(cel_url, real_rules)
{
	/* istio */
	yes("isURL(self.jwksUri)",
	    "{\"jwksUri\":\"https://example.com/.well-known/jwks.json\"}");
	no("isURL(self.jwksUri)", "{\"jwksUri\":\"example.com/jwks\"}");
	yes("url(self).getScheme() in ['http','https']",
	    "\"https://example.com/jwks\"");
	no("url(self).getScheme() in ['http','https']",
	   "\"ftp://example.com/\"");
	err("url(self).getScheme() in ['http','https']", "\"example.com\"",
	    URLERR("example.com", "invalid URI for request"));
}

Test(cel_url, is_url)
{
	yes("isURL('https://example.com:8443/a/b?x=1&x=2&y') && "
	    "isURL('http://example.com') && isURL('/absolute/path') && "
	    "isURL('/') && isURL('*') && isURL('http://[::1]:80/x')",
	    "0");
	/* Go's ParseRequestURI: a scheme makes anything else opaque */
	yes("isURL('mailto:a@b.c') && isURL('localhost:8080') && "
	    "isURL('urn:x:y')",
	    "0");
	yes("!isURL('example.com') && !isURL('relative/path') && !isURL('') "
	    "&& !isURL('://x') && !isURL('1http://x') && !isURL('#frag')",
	    "0");
	yes("!isURL('http://[::1/x') && !isURL('http://a b.com/') && "
	    "!isURL('http://host:port/') && !isURL('http://a/%zz') && "
	    "!isURL('http://us er@a/') && !isURL('http://a/\\t')",
	    "0");
	/* ParseRequestURI reads a '#' as part of the path */
	yes("!isURL('http://a/b#%zz') && isURL('http://a/b#c')", "0");
	err("isURL(1)", "0", "no such overload");
}

Test(cel_url, parse_errors)
{
	err("url('') == url('/')", "0", URLERR("", "empty url"));
	err("url('example.com').getHost() == ''", "0",
	    URLERR("example.com", "invalid URI for request"));
	err("url('://x').getHost() == ''", "0",
	    URLERR("://x", "missing protocol scheme"));
	err("url('http://[::1/x').getHost() == ''", "0",
	    URLERR("http://[::1/x", "missing ']' in host"));
	err("url('http://a:b/').getHost() == ''", "0",
	    URLERR("http://a:b/", "invalid port \":b\" after host"));
	err("url('http://[::1]x/').getHost() == ''", "0",
	    URLERR("http://[::1]x/", "invalid port \"x\" after host"));
	err("url('http://a/%zz').getHost() == ''", "0",
	    URLERR("http://a/%zz", "invalid URL escape \"%zz\""));
	err("url('http://a/%4').getHost() == ''", "0",
	    URLERR("http://a/%4", "invalid URL escape \"%4\""));
	err("url('http://a%41/').getHost() == ''", "0",
	    URLERR("http://a%41/", "invalid URL escape \"%41\""));
	err("url('http://a b/').getHost() == ''", "0",
	    URLERR("http://a b/", "invalid character \" \" in host name"));
	err("url('http://us er@a/').getHost() == ''", "0",
	    URLERR("http://us er@a/", "net/url: invalid userinfo"));
	err("url('http://u%zz@a/').getHost() == ''", "0",
	    URLERR("http://u%zz@a/", "invalid URL escape \"%zz\""));
	err("url(self).getHost() == ''", "\"http://a/\\u0001\"",
	    URLERR("http://a/\\x01",
		   "net/url: invalid control character in URL"));
	err("url('http://a/b#%zz').getHost() == ''", "0",
	    URLERR("http://a/b#%zz", "invalid URL escape \"%zz\""));
	err("url(1) == url('/')", "0", "no such overload");
}

Test(cel_url, methods)
{
	yes("url('HTTPS://Example.com').getScheme() == 'https'", "0");
	yes("url('/p').getScheme() == '' && url('/p').getHost() == ''", "0");
	yes("url('https://user:pw@Example.com:8443/p').getHost() == "
	    "'Example.com:8443' && "
	    "url('https://user:pw@Example.com:8443/p').getHostname() == "
	    "'Example.com' && "
	    "url('https://user:pw@Example.com:8443/p').getPort() == '8443'",
	    "0");
	yes("url('http://[::1]:80/').getHost() == '[::1]:80' && "
	    "url('http://[::1]:80/').getHostname() == '::1' && "
	    "url('http://[::1]:80/').getPort() == '80' && "
	    "url('http://[::1]/').getHostname() == '::1' && "
	    "url('http://[::1]/').getPort() == ''",
	    "0");
	yes("url('http://example.com/').getPort() == '' && "
	    "url('http://example.com:/').getPort() == '' && "
	    "url('http://example.com:/').getHost() == 'example.com:'",
	    "0");
	yes("url('http://[fe80::1%25en0]:8080/').getHostname() == "
	    "'fe80::1%en0'",
	    "0");
	/* a request URI with no scheme has no host: //a/b is a path */
	yes("url('//a/b').getHost() == 'a' || url('//a/b').getEscapedPath() "
	    "== '//a/b'",
	    "0");
	yes("url('https://example.com/a%20b/c').getEscapedPath() == "
	    "'/a%20b/c' && url('https://example.com/a b').getEscapedPath() == "
	    "'/a%20b' && url('https://example.com').getEscapedPath() == '' && "
	    "url('/p?x').getEscapedPath() == '/p' && "
	    "url('https://e.com/%7Efoo').getEscapedPath() == '/%7Efoo' && "
	    "url('https://e.com/p#frag').getEscapedPath() == '/p' && "
	    "url('*').getEscapedPath() == '*'",
	    "0");
	yes("url('https://e.com/a\"b').getEscapedPath() == '/a%22b'", "0");
	yes("url('mailto:a@b.c').getScheme() == 'mailto' && "
	    "url('mailto:a@b.c').getHost() == '' && "
	    "url('mailto:a@b.c').getEscapedPath() == ''",
	    "0");
	yes("url('https://e.com/?x=1&x=2&y=a+b&z=%41&k&a;b=1&=v&&w=%zz')."
	    "getQuery() == {'x': ['1', '2'], 'y': ['a b'], 'z': ['A'], 'k': "
	    "[''], '': ['v']}",
	    "0");
	yes("url('https://e.com/').getQuery() == {} && "
	    "url('https://e.com/?').getQuery() == {}",
	    "0");
	yes("url('https://e.com/?b=2&a=1&b=3').getQuery()['b'] == ['2', '3']",
	    "0");
	yes("size(url('/p?q=1#f=2').getQuery()) == 1", "0");
	err("'http://a/'.getHost() == ''", "0", "no such overload");
	err("url('http://a/') == 'http://a/'", "0", "no such overload");
	expect_s("url('http://a/') == url('http://a/')", "0", NULL, NULL,
		 CEL_UNSUPPORTED, NULL);
	bad("getHost(url('http://a/')) == ''", "not supported");
}

/* ------------------------------------------ duration, time accessors */

Test(cel_time, duration_accessors)
{
	yes("duration('90m').getHours() == 1 && duration('90m').getMinutes() "
	    "== 90 && duration('90m').getSeconds() == 5400 && "
	    "duration('90m').getMilliseconds() == 5400000",
	    "0");
	yes("duration('-90m').getHours() == -1 && "
	    "duration('-1.5s').getSeconds() == -1 && "
	    "duration('-1.5s').getMilliseconds() == -1500",
	    "0");
	yes("duration('1.5s').getSeconds() == 1 && "
	    "duration('1.5s').getMilliseconds() == 1500 && "
	    "duration('999us').getMilliseconds() == 0 && "
	    "duration('59m59s').getHours() == 0",
	    "0");
	/* metallb's connectTime */
	const char *r = "duration(self.connectTime).getSeconds() >= 1 && "
			"duration(self.connectTime).getMilliseconds() % 1000 "
			"== 0";
	yes(r, "{\"connectTime\":\"5s\"}");
	no(r, "{\"connectTime\":\"1500ms\"}");
	no(r, "{\"connectTime\":\"500ms\"}");
	expect_s("self.getMinutes() == 2", "\"2m30s\"", NULL, &t_dur, CEL_TRUE,
		 NULL);
	err("duration('1h').getHours('UTC') == 1", "0", "no such overload");
	err("duration('1h').getFullYear() == 1", "0", "no such overload");
	err("'1h'.getHours() == 1", "0", "no such overload");
	bad("getHours(duration('1h')) == 1", "not supported");
}

Test(cel_time, timestamp_accessors)
{
	const char *t = "timestamp('2024-03-05T13:14:15.678Z')";
	char rule[512];
	snprintf(rule, sizeof rule,
		 "%1$s.getFullYear() == 2024 && %1$s.getMonth() == 2 && "
		 "%1$s.getDayOfMonth() == 4 && %1$s.getDate() == 5 && "
		 "%1$s.getDayOfWeek() == 2 && %1$s.getDayOfYear() == 64",
		 t);
	yes(rule, "0");
	snprintf(rule, sizeof rule,
		 "%1$s.getHours() == 13 && %1$s.getMinutes() == 14 && "
		 "%1$s.getSeconds() == 15 && %1$s.getMilliseconds() == 678",
		 t);
	yes(rule, "0");
	/* in UTC, whatever zone the text was written in */
	yes("timestamp('2024-01-01T01:00:00+02:00').getHours() == 23 && "
	    "timestamp('2024-01-01T01:00:00+02:00').getFullYear() == 2023 && "
	    "timestamp('2024-01-01T01:00:00+02:00').getDayOfYear() == 364",
	    "0");
	yes("timestamp('1969-12-31T23:59:59Z').getDayOfWeek() == 3 && "
	    "timestamp('1969-12-31T23:59:59Z').getFullYear() == 1969 && "
	    "timestamp('0001-01-01T00:00:00Z').getDayOfWeek() == 1 && "
	    "timestamp('9999-12-31T23:59:59Z').getDayOfYear() == 364",
	    "0");
	yes("timestamp('2023-12-31T00:00:00Z').getDayOfYear() == 364 && "
	    "timestamp('2024-12-31T00:00:00Z').getDayOfYear() == 365 && "
	    "timestamp('2024-12-31T00:00:00Z').getMonth() == 11",
	    "0");
	expect_s("self.getDate() == 29 && self.getMonth() == 1",
		 "\"2024-02-29T10:00:00Z\"", NULL, &t_ts, CEL_TRUE, NULL);
	err("timestamp('2024-01-01T00:00:00Z').getFullYear(1) == 1", "0",
	    "no such overload");
}

Test(cel_time, time_zones)
{
	const char *t = "timestamp('2024-01-01T23:30:00Z')";
	char rule[512];
	snprintf(rule, sizeof rule,
		 "%1$s.getHours('+01:00') == 0 && %1$s.getDate('+01:00') == 2 "
		 "&& %1$s.getFullYear('+01:00') == 2024 && "
		 "%1$s.getHours('-00:45') == 22 && "
		 "%1$s.getMinutes('-00:45') == 45 && "
		 "%1$s.getHours('UTC') == 23 && %1$s.getHours('') == 23",
		 t);
	yes(rule, "0");
	snprintf(rule, sizeof rule,
		 "%1$s.getDayOfWeek('+05:30') == 2 && "
		 "%1$s.getDayOfWeek('-05:30') == 1 && "
		 "%1$s.getMinutes('+5:30') == 0 && %1$s.getHours('05:30') == 5",
		 t);
	yes(rule, "0");
	err("timestamp('2024-01-01T00:00:00Z').getHours('+xx:00') == 1", "0",
	    "strconv.Atoi: parsing \"+xx\": invalid syntax");
	err("timestamp('2024-01-01T00:00:00Z').getHours('+01:') == 1", "0",
	    "strconv.Atoi: parsing \"\": invalid syntax");
	err("timestamp('2024-01-01T00:00:00Z').getHours("
	    "'99999999999999999999:00') == 1",
	    "0",
	    "strconv.Atoi: parsing \"99999999999999999999\": value out of "
	    "range");
	/* a zone by name, from the system's zone files as Go reads them */
	yes("timestamp('2024-01-01T00:00:00Z').getHours('America/New_York') "
	    "== 19 && timestamp('2024-01-01T00:00:00Z')"
	    ".getDayOfMonth('America/New_York') == 30",
	    "0");
	err("timestamp('2024-01-01T00:00:00Z').getHours('Nope/Zone') == 1", "0",
	    "unknown time zone Nope/Zone");
	err("timestamp('2024-01-01T00:00:00Z').getHours('../x') == 1", "0",
	    "time: invalid location name");
	expect_s("timestamp('2024-01-01T00:00:00Z').getHours(self) == 1",
		 "\"Europe/Paris\"", NULL, NULL, CEL_TRUE, NULL);
	expect_s("timestamp('2024-01-01T00:00:00Z').getHours(self) == 1",
		 "\"+01:00\"", NULL, NULL, CEL_TRUE, NULL);
}

/* ------------------------------------------------------------ semver */

Test(cel_semver, kube_library_examples)
{
	/* the cases of kube's library/semver_test.go */
	yes("semver('1.2.3') == semver('1.2.3')", "{}");
	no("semver('1.2.3') == semver('1.0.0')", "{}");
	err("semver('v1.0') == semver('1.0.0')", "{}",
	    "No Major.Minor.Patch elements found");
	err("semver('v1.0.0') == semver('1.0.0')", "{}",
	    "Invalid character(s) found in major number \"v1\"");
	yes("isSemver('1.2.3-beta.1+build.1')", "{}");
	no("isSemver('') || isSemver('v1.0.0') || isSemver(' 1.0.0') || "
	   "isSemver('1. 0.0') || isSemver('1.0.0 ') || isSemver('01.01.01') "
	   "|| isSemver('1') || isSemver('1.1')",
	   "{}");
	no("isSemver('', true) || isSemver(' 1.0.0', true) || "
	   "isSemver('1. 0.0', true) || isSemver('1.0.0 ', true)",
	   "{}");
	yes("isSemver('v1.0.0', true) && isSemver('01.01.01', true) && "
	    "isSemver('1', true) && isSemver('1.1', true)",
	    "{}");
	err("isSemver([1, 2, 3])", "{}", "no such overload");
	yes("semver('v01.01', true) == semver('1.1.0')", "{}");
	yes("semver('1.0.0').isLessThan(semver('1.2.3'))", "{}");
	no("semver('1.0.0').isLessThan(semver('1.0.0'))", "{}");
	yes("semver('1.2.3').isGreaterThan(semver('1.0.0'))", "{}");
	no("semver('1.0.0').isGreaterThan(semver('1.0.0'))", "{}");
	yes("semver('1.2.3').compareTo(semver('1.2.3')) == 0", "{}");
	yes("semver('1.0.0').compareTo(semver('1.2.3')) == -1", "{}");
	yes("semver('1.2.3').compareTo(semver('1.0.0')) == 1", "{}");
	yes("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && "
	    "semver('1.2.3').patch() == 3",
	    "{}");
}

Test(cel_semver, precedence_and_errors)
{
	/* semver.org's example order, as blang compares: each is less
	   than the next */
	yes("['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', "
	    "'1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', "
	    "'1.0.0', '1.0.1', '1.1.0', '2.0.0'].map(v, semver(v))"
	    ".transformList(i, v, i == 0 || "
	    "['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', "
	    "'1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', "
	    "'1.0.0', '1.0.1', '1.1.0', '2.0.0'].map(v, semver(v))[i - 1]"
	    ".isLessThan(v)).all(b, b)",
	    "{}");
	yes("semver('1.0.0-beta.11').isGreaterThan(semver('1.0.0-beta.2'))",
	    "{}");
	/* build metadata has no precedence */
	yes("semver('1.2.3+a') == semver('1.2.3+b.c')", "{}");
	yes("semver('1.2.3-x-y.Z').compareTo(semver('1.2.3-x-y.a')) == -1",
	    "{}");
	yes("semver('18446744073709551615.0.0').major() == -1", "{}");
	err("semver('18446744073709551616.0.0').major() == 1", "{}",
	    "strconv.ParseUint: parsing \"18446744073709551616\": value out "
	    "of range");
	err("semver('') == semver('1.0.0')", "{}", "Version string empty");
	err("semver('1.2') == semver('1.0.0')", "{}",
	    "No Major.Minor.Patch elements found");
	err("semver('1.02.3') == semver('1.0.0')", "{}",
	    "Minor number must not contain leading zeroes \"02\"");
	err("semver('1.2.3.4') == semver('1.0.0')", "{}",
	    "Invalid character(s) found in patch number \"3.4\"");
	err("semver('1.2.3-') == semver('1.0.0')", "{}", "Prerelease is empty");
	err("semver('1.2.3-01') == semver('1.0.0')", "{}",
	    "Numeric PreRelease version must not contain leading zeroes "
	    "\"01\"");
	err("semver('1.2.3-a_b') == semver('1.0.0')", "{}",
	    "Invalid character(s) found in prerelease \"a_b\"");
	err("semver('1.2.3+') == semver('1.0.0')", "{}",
	    "Build meta data is empty");
	err("semver('1.2.3+a..b') == semver('1.0.0')", "{}",
	    "Build meta data is empty");
	err("semver('1..3') == semver('1.0.0')", "{}",
	    "strconv.ParseUint: parsing \"\": invalid syntax");
	/* kube's normalization */
	yes("semver('v1.2.03-rc.1', true) == semver('1.2.3-rc.1')", "{}");
	yes("semver('1.00.0-beta', true).minor() == 0", "{}");
	yes("semver('1.2.0-x', true) == semver('1.2.0-x') && "
	    "semver('1.2.00-x', true) == semver('1.2.0-x')",
	    "{}");
	err("semver('1.2-rc', true) == semver('1.0.0')", "{}",
	    "short version cannot contain PreRelease/Build meta data");
	err("semver('v', true) == semver('1.0.0')", "{}",
	    "strconv.ParseUint: parsing \"\": invalid syntax");
	/* kube's Semver compares only with a Semver */
	err("semver('1.0.0') == '1.0.0'", "{}", "no such overload");
	err("semver('1.0.0').isLessThan(quantity('1'))", "{}",
	    "no such overload");
	err("quantity('1').isLessThan(semver('1.0.0'))", "{}",
	    "no such overload");
	/* a rule reading the object */
	yes("isSemver(self.v, true) && semver(self.v, true).major() >= 2",
	    "{\"v\": \"v2.1\"}");
}

/* -------------------------------------------------------------- type() */

static const struct tnode t_nstrmap = {.type = CEL_S_MAP, .addl = &t_str};
static const struct tnode t_typed = {
    .type = CEL_S_OBJECT,
    .names = {"i", "n", "s", "b", "d", "t", "io", "m"},
    .props = {&t_int, &t_num, &t_str, &t_bytes, &t_dur, &t_ts, &t_ios,
	      &t_nstrmap}};

static void yes_t(const char *rule, const char *self)
{
	expect_s(rule, self, NULL, &t_typed, CEL_TRUE, NULL);
}

Test(cel_type, literals_and_values)
{
	yes("type(1) == int && type(1u) == uint && type(1.0) == double && "
	    "type('a') == string && type(b'a') == bytes && type(true) == bool "
	    "&& type(null) == null_type && type([1]) == list && "
	    "type({'a': 1}) == map",
	    "{}");
	yes("type(type(1)) == type && type(int) == type", "{}");
	yes("type(duration('1s')) == google.protobuf.Duration && "
	    "type(timestamp('2024-01-01T00:00:00Z')) == "
	    "google.protobuf.Timestamp",
	    "{}");
	/* kube's libraries' types */
	yes("type(ip('192.168.0.1')) == net.IP && "
	    "type(cidr('2001:db8::/32').ip()) == net.IP && "
	    "type(cidr('10.0.0.0/8')) == net.CIDR && "
	    "type(quantity('1Gi')) == kubernetes.Quantity && "
	    "type(semver('1.0.0')) == kubernetes.Semver && "
	    "type(url('https://a')) == kubernetes.URL && "
	    "type(optional.of(1)) == optional_type",
	    "{}");
	no("type(1) == string", "{}");
	no("type(1) == 1", "{}");
	yes("type(1) != uint && [int, string].exists(t, t == type('x'))", "{}");
	/* a macro variable shadows a type name */
	yes("[1, 2].all(int, int > 0)", "{}");
	/* untyped JSON: whole numbers are ints, as kube reads them */
	yes("type(self.a) == int && type(self.b) == double && "
	    "type(self.c) == string && type(self.d) == list && "
	    "type(self.e) == map && type(self.f) == bool",
	    "{\"a\": 1, \"b\": 1.5, \"c\": \"x\", \"d\": [], \"e\": {}, "
	    "\"f\": true}");
	err("type(self.missing) == int", "{}", "no such key: missing");
}

Test(cel_type, schema_types)
{
	/* kube's validation_test.go: a whole number in a number field is a
	   double; int-or-string is what the value is */
	yes_t("type(self.i) == int && type(self.n) == double && self.n == 1.0 "
	      "&& type(self.s) == string && type(self.b) == bytes && "
	      "type(self.d) == google.protobuf.Duration && "
	      "type(self.t) == google.protobuf.Timestamp",
	      "{\"i\": 1, \"n\": 1, \"s\": \"x\", \"b\": \"YQ==\", "
	      "\"d\": \"1s\", \"t\": \"2024-01-01T00:00:00Z\"}");
	yes_t("type(self.io) == int ? self.io == 1 : self.io == '25%'",
	      "{\"io\": 1}");
	yes_t("type(self.io) == string && self.io == '25%'",
	      "{\"io\": \"25%\"}");
	/* a declared object is kube's object type, not a map; a map is */
	yes_t("type(self) != map && type(self.m) == map && "
	      "type(self) == type(self)",
	      "{\"m\": {}}");
}

/* cel-go's strings.quote (ext.Strings version 1 on, which kube 1.33 has) */
Test(cel_strings, quote)
{
	yes("strings.quote('a') == '\"a\"'", "{}");
	yes("strings.quote('x\\ny\\t') == '\"x\\\\ny\\\\t\"'", "{}");
	yes("strings.quote('a\"b\\\\c') == '\"a\\\\\"b\\\\\\\\c\"'", "{}");
	yes("strings.quote('\u00e9\u2603') == '\"\u00e9\u2603\"'", "{}");
	yes("strings.quote(self.s) == '\"a\\\\ab\"'", "{\"s\": \"a\\u0007b\"}");
	err("strings.quote(1) == ''", "{}", "no such overload");
}

/* cel-go's string.format (its formatting.go, which kube 1.33's strings
   library v2 runs; x/text prints %f and %e for en_US) */
Test(cel_strings, format)
{
	static const char *const rows[][2] = {
	    {"'no substitution'.format([])", "no substitution"},
	    {"'%s and %d'.format(['a', 1])", "a and 1"},
	    {"'%% and %%'.format([])", "% and %"},
	    {"'%d %s %f %s %s'.format([1, 'abc', 1.0, duration('1m'), "
	     "timestamp('2000-01-01T00:00:00.000Z')])",
	     "1 abc 1.000000 60s 2000-01-01T00:00:00Z"},
	    {"'%.3f'.format([1.2345])", "1.234"},
	    {"'%f'.format([1234567.5])", "1,234,567.500000"},
	    {"'%.0f'.format([-999.5])", "-1,000"},
	    {"'%f %f %f'.format(['NaN', 'Infinity', '-Infinity'])",
	     "NaN \u221e -\u221e"},
	    {"'%e'.format([3.14])", "3.140000\u00d710\u2070\u2070"},
	    {"'%.6e'.format([1052.032911275])", "1.052033\u00d710\u2070\u00b3"},
	    {"'%.2e'.format([-0.000123])", "-1.23\u00d710\u207b\u2070\u2074"},
	    {"'%e'.format([1e100])", "1.000000\u00d710\u00b9\u2070\u2070"},
	    {"'%b %b %b %b'.format([7, -5, uint(64), true])",
	     "111 -101 1000000 1"},
	    {"'%o %o %o'.format([7, 8, -11])", "7 10 -13"},
	    {"'%x is %X'.format([30, 30])", "1e is 1E"},
	    {"'%x'.format([-30])", "-1e"},
	    {"'%x %X'.format(['Hello', b'\\x00z'])", "48656c6c6f 007A"},
	    {"'%s'.format([2.71])", "2.71"},
	    {"'%s'.format([0.000000002])", "2e-09"},
	    {"'%s'.format([[2.71, 0.000000002]])", "[2.710000, 0.000000]"},
	    {"'%s'.format([double('NaN')])", "NaN"},
	    {"'%s'.format([[double('Inf'), double('-Inf')]])",
	     "[\"+Inf\", \"-Inf\"]"},
	    {"'%s %s %s'.format([null, true, b'xyz'])", "null true xyz"},
	    {"'%s'.format([type('a')])", "string"},
	    {"'%s'.format([duration('2ns')])", "0.000000002s"},
	    {"'%s'.format([['abc', 3.14, null, [9, 8], "
	     "timestamp('2023-02-03T23:31:20Z'), duration('1h')]])",
	     "[\"abc\", 3.140000, null, [9, 8], "
	     "timestamp(\"2023-02-03T23:31:20Z\"), duration(\"3600s\")]"},
	    {"'%s'.format([{'key1': b'xyz', 'key5': null, 'key3': 2.5, "
	     "'key2': duration('2h'), 'key4': true}])",
	     "{\"key1\":b\"xyz\", \"key2\":duration(\"7200s\"), "
	     "\"key3\":2.500000, \"key4\":true, \"key5\":null}"},
	    {"'%s'.format([{1: 'a', true: 'b'}])", "{1:\"a\", true:\"b\"}"},
	    {"'%s'.format([['a\"b\\n']])", "[\"a\\\"b\\n\"]"},
	    {"'%.2d'.format([5])", "5"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		/* the expected text as a CEL raw string: no escapes */
		char rule[512];
		snprintf(rule, sizeof rule, "%s == r'''%s'''", rows[i][0],
			 rows[i][1]);
		yes(rule, "{}");
	}
	/* an object from JSON formats as a map */
	yes("'%s'.format([self]) == '{\"a\":1, \"b\":[\"x\"]}'",
	    "{\"b\": [\"x\"], \"a\": 1}");
	err("'%d'.format([self.s])", "{\"s\": \"x\"}",
	    "error during formatting: decimal clause can only be used on "
	    "integers, was given string");
	err("'%f'.format([self.a])", "{\"a\": 1}",
	    "error during formatting: fixed-point clause can only be used on "
	    "doubles, was given int");
	err("'%s %s'.format([self.a])", "{\"a\": 1}", "index 1 out of range");
	err("'%s %'.format([self.a, 2])", "{\"a\": 1}",
	    "unexpected end of string");
	err("'%z'.format([self.a])", "{\"a\": 1}",
	    "could not parse formatting clause: unrecognized formatting "
	    "clause \"z\"");
	err("'%.3'.format([self.a])", "{\"a\": 1}",
	    "could not parse formatting clause: error while parsing "
	    "precision: could not find end of precision specifier");
	err("'%.f'.format([self.a])", "{\"a\": 1}",
	    "could not parse formatting clause: error while parsing "
	    "precision: error while converting precision to integer: "
	    "strconv.Atoi: parsing \"\": invalid syntax");
	err("'%s'.format([[ip(self.s)]])", "{\"s\": \"1.2.3.4\"}",
	    "error during formatting: no formatting function for net.IP");
	err("'%s'.format([ip(self.s)])", "{\"s\": \"1.2.3.4\"}",
	    "error during formatting: string clause can only be used on "
	    "strings, bools, bytes, ints, doubles, maps, lists, types, "
	    "durations, and timestamps, was given net.IP");
}

/* --------------------------------------------------------- compiling */

Test(cel_compile, unsupported_and_bad)
{
	/* cel-go's checker: the namespace is an undeclared name, checked
	   before the function */
	bad("strings.nope('a') == ''",
	    "undeclared reference to 'strings' (in container '')");
	bad("self.nope('a') == ''",
	    "undeclared reference to 'nope' (in container '')");
	bad("math.abs(-1) == 1",
	    "undeclared reference to 'math' (in container '')");
	bad("self.format(1, 2)",
	    "function 'format' is not supported with 2 arguments");
	bad("format.nope()",
	    "undeclared reference to 'format' (in container '')");
	bad("format.dns1123Label(1)", "takes no arguments");
	bad("self.?a() == 1", "unexpected '('");
	bad("has(self.?a)", "has()");
	bad("self.?1 == 1", "expected a field name");
	bad("self.a == ", "syntax error at");
	bad("(self.a == 1", "expected ')'");
	bad("self.a = 1", "syntax error");
	bad("other == 1", "undeclared reference to 'other'");
	bad("has(self)", "has()");
	bad("self.all(1, true)", "simple name");
	bad("self.matches('(')", "invalid matches argument");
	bad("'abc", "unterminated");
	bad("'\\q'", "bad escape");
	bad("99999999999999999999 == 1", "out of range");
	bad("9223372036854775808 == 1", "out of range");
	bad("18446744073709551616u == 0u", "out of range");
	bad("size(1, 2) == 1", "not supported");
	bad("", "unexpected end");
	bad("x.y", "undeclared reference");
	bad("Foo{a: 1}", "not supported");
	bad("self.a == 1 2", "extraneous input '2' expecting <EOF>");
}

/* strconv.ParseUint takes every literal up to 2^64-1, the last nine
   included (found by an audit: lapis refused 18446744073709551610u and up). */
Test(cel_compile, uint_literal_limit)
{
	yes("18446744073709551615u > 18446744073709551610u", "0");
	yes("uint('18446744073709551615') == 18446744073709551615u", "0");
	err("uint('18446744073709551616') == 0u", "0",
	    "type conversion error from 'string' to 'uint'");
	yes("-9223372036854775808 < 9223372036854775807", "0");
}

Test(cel_compile, macro_variables_scope)
{
	yes("self.all(x, self.exists(y, x == y))", "[1,2]");
	yes("self.all(self, self > 0)", "[1,2]");
	bad("self.all(x, true) && x == 1", "undeclared reference to 'x'");
	yes("[[1, 2], [3]].all(x, x.all(x, x > 0))", "0");
}

Test(cel_compile, nesting_bounded)
{
	/* 300 parentheses: refused, not a stack overflow */
	char deep[1000];
	size_t n = 0;
	for (int i = 0; i < 300; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	for (int i = 0; i < 300; i++)
		deep[n++] = ')';
	deep[n] = 0;
	bad(deep, "nested too deeply");
	/* a long && chain is balanced and compiles */
	size_t big = 4000 * 12 + 16;
	char *chain = malloc(big);
	cr_assert(chain);
	chain[0] = 0;
	for (int i = 0; i < 4000; i++)
		strcat(chain, i ? " && self.a" : "self.a");
	yes(chain, "{\"a\":true}");
	/* ten thousand unary operators: refused */
	for (size_t i = 0; i < 10000; i++)
		chain[i] = '!';
	strcpy(chain + 10000, "true");
	bad(chain, "nested too deeply");
	/* a long selection chain: refused */
	strcpy(chain, "self");
	for (int i = 0; i < 400; i++)
		strcat(chain, ".a");
	bad(chain, "nested too deeply");
	free(chain);
}

/* ----------------------------------------------------------- limits */

Test(cel_limits, step_limit)
{
	/* 1000 x 1000 x 20 steps */
	char self[8000];
	size_t n = 0;
	self[n++] = '[';
	for (int i = 0; i < 1000; i++)
		n += (size_t)snprintf(self + n, sizeof self - n, "%s%d",
				      i ? "," : "", i);
	self[n++] = ']';
	self[n] = 0;
	expect_s("self.all(x, self.all(y, self.all(z, x + y + z >= 0)))", self,
		 NULL, NULL, CEL_ERROR,
		 "operation cancelled: actual cost limit exceeded");
	/* the limit is not absorbed */
	expect_s("self.exists(x, self.exists(y, self.exists(z, x + y + z < "
		 "0))) || true",
		 self, NULL, NULL, CEL_ERROR,
		 "operation cancelled: actual cost limit exceeded");
	/* strings that quadruple at each level stop too */
	char rule[2000] = "[self]";
	for (int i = 0; i < 14; i++) {
		char v = (char)('a' + i);
		n = strlen(rule);
		snprintf(rule + n, sizeof rule - n,
			 ".all(%c, [%c + %c + %c + %c]", v, v, v, v, v);
	}
	n = strlen(rule);
	snprintf(rule + n, sizeof rule - n, ".all(z, size(z) > 0)");
	for (int i = 0; i < 14; i++)
		strcat(rule, ")");
	expect_s(rule, "\"0123456789012345678901234567890123456789\"", NULL,
		 NULL, CEL_ERROR,
		 "operation cancelled: actual cost limit exceeded");
}

Test(cel_limits, unsupported_regex_at_runtime)
{
	char msg[200];
	/* a pattern that is not a literal: checked when evaluated */
	enum cel_result r =
	    run("'abc'.matches(self)", "\"(\"", NULL, NULL, msg, sizeof msg);
	cr_expect_eq(r, CEL_ERROR, "%s", msg);
	r = run("'abc'.matches(self)", "\"a(?=b)\"", NULL, NULL, msg,
		sizeof msg);
	cr_expect(r == CEL_UNSUPPORTED || r == CEL_ERROR, "%s: %s", rname(r),
		  msg);
	cr_expect(msg[0]);
}

Test(cel_limits, result_not_bool_is_false)
{
	no("1", "0");
	no("'true'", "0");
	no("self", "{}");
	yes("self", "true");
	expect_s("self.a", "{\"a\":1}", NULL, NULL, CEL_FALSE, "");
}

Test(cel_limits, object_null_fields_absent)
{
	static const struct tnode obj = {
	    .type = CEL_S_OBJECT,
	    .names = {"a"},
	    .props = {&t_str},
	};
	expect_s("!has(self.a)", "{\"a\":null}", NULL, &obj, CEL_TRUE, NULL);
	expect_s("self.a == 'x'", "{\"a\":null}", NULL, &obj, CEL_ERROR,
		 "no such key: a");
	expect_s("self.a == 'x'", "{\"a\":1}", NULL, &obj, CEL_ERROR, NULL);
}

Test(cel_limits, transition_rule_without_old_self)
{
	char msg[200];
	cel_prog *p = cel_compile("self == oldSelf", NULL, 0);
	json_t *s = json_integer(1);
	cr_assert(p && s);
	cr_expect_eq(cel_eval(p, NULL, NULL, s, NULL, msg, sizeof msg),
		     CEL_ERROR);
	cr_expect(msg[0]);
	/* a zero-sized message buffer is never written */
	cr_expect_eq(cel_eval(p, NULL, NULL, s, s, NULL, 0), CEL_TRUE);
	json_decref(s);
	cel_free(p);
	cel_free(NULL);
}

Test(cel_limits, has_on_bad_data_is_an_error)
{
	static const struct tnode obj = {
	    .type = CEL_S_OBJECT,
	    .names = {"d"},
	    .props = {&t_dur},
	};
	expect_s("has(self.d)", "{\"d\":\"later\"}", NULL, &obj, CEL_ERROR,
		 NULL);
	expect_s("has(self.d)", "{\"d\":\"1s\"}", NULL, &obj, CEL_TRUE, "");
	err("uint(-0.5) == 0u", "0", "unsigned integer overflow");
	err("int(-9223372036854775808.0) == 0", "0", "integer overflow");
}

Test(cel_limits, messages_are_one_line_and_cut_safely)
{
	char msg[15];
	/* "no such key: é" needs 16 bytes: the é is left out whole */
	enum cel_result r =
	    run("self['é'] == 1", "{}", NULL, NULL, msg, sizeof msg);
	cr_expect_eq(r, CEL_ERROR);
	cr_expect_str_eq(msg, "no such key: ");
	char big[200];
	r = run("self['a\\nb'] == 1", "{}", NULL, NULL, big, sizeof big);
	cr_expect_str_eq(big, "no such key: a b");
}

/* kube's own escaping cases (apiextensions-apiserver schema/cel
   validation_test.go, "escaping"), run against our schema. */
Test(cel_values, kube_escaping_cases)
{
	static const char *const names[] = {
	    "true",   "false",	  "null",  "in",      "as",	   "break",
	    "const",  "continue", "else",  "for",     "function",  "if",
	    "import", "let",	  "loop",  "package", "namespace", "return",
	    "var",    "void",	  "while",
	};
	char obj[2048] = "{";
	size_t n = 1;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		n += (size_t)snprintf(obj + n, sizeof obj - n, "\"%s\":%zu,",
				      names[i], i + 1);
	snprintf(obj + n, sizeof obj - n,
		 "\"int\":101,\"type\":110,\"self\":201,\"all\":203,"
		 "\"size\":\"204\",\"_true\":301,\"dot.dot\":401,"
		 "\"dash-dash\":402,\"slash/slash\":403,"
		 "\"underscore_underscore\":404,"
		 "\"doubleunderscore__doubleunderscore\":405}");
	char rule[100];
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(rule, sizeof rule, "self.__%s__ == %zu", names[i],
			 i + 1);
		yes(rule, obj);
	}
	yes("self.int == 101 && self.type == 110 && self.self == 201", obj);
	yes("self.all == 203 && self.size == '204' && self._true == 301", obj);
	yes("self.__true__ != 301", obj);
	yes("self.dot__dot__dot == 401 && self.dash__dash__dash == 402", obj);
	yes("self.slash__slash__slash == 403", obj);
	yes("self.underscore_underscore == 404", obj);
	yes("self.doubleunderscore__underscores__doubleunderscore == 405", obj);
	bad("self.true == 1", "mismatched input 'true' expecting IDENTIFIER");
	err("self.__illegal__ == 301", obj, "no such key: __illegal__");
	/* and unescaped, after a '.', every reserved word CEL's lexer reads
	   as an identifier */
	for (size_t i = 4; i < sizeof names / sizeof *names; i++) {
		snprintf(rule, sizeof rule, "self.%s == %zu", names[i], i + 1);
		yes(rule, obj);
	}
	static const struct tnode typed = {.type = CEL_S_OBJECT,
					   .names = {"namespace", "if"},
					   .props = {&t_str, &t_int}};
	expect_s("self.namespace == 'n' && self.if == 2 && "
		 "self.__namespace__ == 'n'",
		 "{\"namespace\":\"n\",\"if\":2}", NULL, &typed, CEL_TRUE,
		 NULL);
	/* map keys are not escaped */
	static const struct tnode map = {.type = CEL_S_MAP, .addl = &t_int};
	static const struct tnode root = {
	    .type = CEL_S_OBJECT, .names = {"m"}, .props = {&map}};
	expect_s("self.m['@'] == 1 && self.m['9'] == 2 && self.m['int'] == 3 "
		 "&& self.m['./-'] == 4 && self.m['👑'] == 5",
		 "{\"m\":{\"@\":1,\"9\":2,\"int\":3,\"./-\":4,\"👑\":5}}", NULL,
		 &root, CEL_TRUE, NULL);
}

/* kube's "listMaps with unsupported identity characters" case: a map-list
   compares equal in any order. */
Test(cel_values, kube_map_list_equality)
{
	static const struct tnode elem = {
	    .type = CEL_S_OBJECT,
	    .names = {"k!", "k."},
	    .props = {&t_str, &t_str},
	};
	static const struct tnode ml = {
	    .type = CEL_S_ARRAY, .lt = CEL_L_MAP, .items = &elem};
	static const struct tnode lists = {.type = CEL_S_ARRAY, .items = &ml};
	static const struct tnode root = {
	    .type = CEL_S_OBJECT, .names = {"objs"}, .props = {&lists}};
	const char *obj =
	    "{\"objs\":[[{\"k!\":\"a\",\"k.\":\"1\"},{\"k!\":\"b\",\"k.\":"
	    "\"2\"}],"
	    "[{\"k!\":\"b\",\"k.\":\"2\"},{\"k!\":\"a\",\"k.\":\"1\"}],"
	    "[{\"k!\":\"b\",\"k.\":\"2\"},{\"k!\":\"c\",\"k.\":\"1\"}],"
	    "[{\"k!\":\"b\",\"k.\":\"2\"},{\"k!\":\"a\",\"k.\":\"3\"}]]}";
	expect_s("self.objs[0] == self.objs[1] && self.objs[0][0].k__dot__ == "
		 "'1' && self.objs[0] != self.objs[2] && self.objs[0] != "
		 "self.objs[3]",
		 obj, NULL, &root, CEL_TRUE, NULL);
	bad("self.objs[0][0].k! == '1'", "syntax error");
}

/* kube's "listMaps" case: + on a map list merges by its keys, the right
   side's item replacing the left's of the same key (unstructuredMapList's
   Add), and the result compares as a map list, in any order */
Test(cel_values, kube_map_list_add)
{
	static const struct tnode elem = {
	    .type = CEL_S_OBJECT,
	    .names = {"k", "v"},
	    .props = {&t_str, &t_str},
	};
	static const struct tnode ml = {.type = CEL_S_ARRAY,
					.lt = CEL_L_MAP,
					.items = &elem,
					.keys = {"k"}};
	static const struct tnode lists = {.type = CEL_S_ARRAY, .items = &ml};
	static const struct tnode root = {
	    .type = CEL_S_OBJECT, .names = {"objs"}, .props = {&lists}};
	const char *obj = "{\"objs\":[[{\"k\":\"a\",\"v\":\"1\"},{\"k\":\"b\","
			  "\"v\":\"2\"}],[{\"k\":\"b\",\"v\":\"3\"},{\"k\":"
			  "\"a\",\"v\":\"1\"}],[{\"k\":\"c\",\"v\":\"4\"}]]}";
	expect_s("self.objs[0] + self.objs[1] == self.objs[1]", obj, NULL,
		 &root, CEL_TRUE, NULL);
	expect_s("self.objs[1] + [self.objs[0][0], self.objs[0][1]] == "
		 "self.objs[0]",
		 obj, NULL, &root, CEL_TRUE, NULL);
	expect_s("size(self.objs[0] + self.objs[2]) == 3 && "
		 "size(self.objs[0] + self.objs[1]) == 2",
		 obj, NULL, &root, CEL_TRUE, NULL);
	expect_s("(self.objs[0] + self.objs[1])[1].v == '3'", obj, NULL, &root,
		 CEL_TRUE, NULL);
}

/* kube's "unicode strings" and "numeric comparisons" cases (but
   format(), which is outside the subset). */
Test(cel_values, kube_string_and_number_cases)
{
	static const char *const str_rules[] = {
	    "self.val1.startsWith('Rook')",
	    "!self.val1.startsWith('knight')",
	    "self.val1.contains('takes')",
	    "!self.val1.contains('gives')",
	    "self.val1.endsWith('👑')",
	    "!self.val1.endsWith('pawn')",
	    "self.val1.matches('^[^0-9]*$')",
	    "!self.val1.matches('^[0-9]*$')",
	    "size(self.val1) == 12",
	    "self.val1.charAt(3) == 'k'",
	    "self.val1.indexOf('o') == 1",
	    "self.val1.indexOf('o', 2) == 2",
	    "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
	    "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
	    "self.val1.split(' ') == ['Rook', 'takes', '👑']",
	    "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
	    "self.val1.substring(5) == 'takes 👑'",
	    "self.val1.substring(0, 4) == 'Rook'",
	    "self.val1.substring(4, 10).trim() == 'takes'",
	    "self.val1.upperAscii() == 'ROOK TAKES 👑'",
	    "self.val1.lowerAscii() == 'rook takes 👑'",
	    "self.val1 == self.val2 && self.val1 == 'Rook takes 👑'",
	};
	static const struct tnode s = {
	    .type = CEL_S_OBJECT,
	    .names = {"val1", "val2"},
	    .props = {&t_str, &t_str},
	};
	for (size_t i = 0; i < sizeof str_rules / sizeof *str_rules; i++)
		expect_s(
		    str_rules[i],
		    "{\"val1\":\"Rook takes 👑\",\"val2\":\"Rook takes 👑\"}",
		    NULL, &s, CEL_TRUE, "");
	static const char *const num_rules[] = {
	    "double(self.val1) < self.val4",
	    "double(self.val2) == self.val4",
	    "double(self.val3) >= self.val4",
	    "self.val1 < int(self.val4)",
	    "self.val2 == int(self.val4)",
	    "self.val3 > int(self.val7)",
	    "double(self.val2) == self.val7",
	    "self.val1 < self.val4",
	    "self.val1 <= self.val4",
	    "self.val2 <= self.val4",
	    "self.val2 >= self.val4",
	    "self.val3 > self.val7",
	    "5 < 10.0",
	    "15 > 10.0",
	    "self.val1 < 10.0",
	    "self.val3 > 10.0",
	    "10 == int(10.0)",
	    "double(10) == 10.0",
	};
	static const struct tnode nums = {
	    .type = CEL_S_OBJECT,
	    .names = {"val1", "val2", "val3", "val4", "val7"},
	    .props = {&t_int, &t_int, &t_int, &t_num, &t_num},
	};
	for (size_t i = 0; i < sizeof num_rules / sizeof *num_rules; i++)
		expect_s(num_rules[i],
			 "{\"val1\":5,\"val2\":10,\"val3\":15,\"val4\":10.0,"
			 "\"val7\":10}",
			 NULL, &nums, CEL_TRUE, "");
	/* kube's bytes case */
	static const struct tnode b = {
	    .type = CEL_S_OBJECT,
	    .names = {"val1", "val2"},
	    .props = {&t_bytes, &t_bytes},
	};
	expect_s("self.val1 == self.val2 && self.val1 == b'AB' && self.val1 == "
		 "bytes('AB') && self.val1 == b'\\x41\\x42' && size(self.val1) "
		 "== 2",
		 "{\"val1\":\"QUI=\",\"val2\":\"QUI=\"}", NULL, &b, CEL_TRUE,
		 "");
	/* kube's listSets case: + is the union */
	static const struct tnode sets = {
	    .type = CEL_S_OBJECT,
	    .names = {"val1", "val2"},
	    .props = {&t_strset, &t_strset},
	};
	static const char *const set_rules[] = {
	    "self.val1 == ['c', 'b', 'a']",
	    "self.val1 == self.val2",
	    "'a' in self.val1",
	    "self.val2[0] in self.val1",
	    "!('x' in self.val1)",
	    "self.val1 + self.val2 == ['a', 'b', 'c']",
	    "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
	    "self.val1 + ['c', 'd'] == ['d', 'c', 'b', 'a']",
	    "self.val1.join('-') == 'a-b-c'",
	    "self.val1.join() == 'abc'",
	};
	for (size_t i = 0; i < sizeof set_rules / sizeof *set_rules; i++)
		expect_s(set_rules[i],
			 "{\"val1\":[\"a\",\"b\",\"c\"],\"val2\":[\"a\",\"c\","
			 "\"b\"]}",
			 NULL, &sets, CEL_TRUE, "");
	/* kube's conversions case, for dates and times */
	static const struct tnode times = {
	    .type = CEL_S_OBJECT,
	    .names = {"val8", "val9", "val10", "val11", "val12", "val13"},
	    .props = {&t_str, &t_dur, &t_str, &t_ts, &t_str, &t_ts},
	};
	static const char *const time_rules[] = {
	    "duration(self.val8) == self.val9",
	    "string(self.val9) == self.val8",
	    "timestamp(self.val10) == self.val11",
	    "string(self.val11) == self.val10",
	    "timestamp(self.val12) == self.val13",
	    "string(self.val13) == self.val12",
	};
	for (size_t i = 0; i < sizeof time_rules / sizeof *time_rules; i++)
		expect_s(time_rules[i],
			 "{\"val8\":\"3723.004s\",\"val9\":\"1h2m3s4ms\","
			 "\"val10\":\"2011-08-18T19:03:37.01+01:00\","
			 "\"val11\":\"2011-08-18T19:03:37.01+01:00\","
			 "\"val12\":\"2011-08-18T00:00:00Z\","
			 "\"val13\":\"2011-08-18\"}",
			 NULL, &times, CEL_TRUE, "");
	/* kube's integer overflow and division cases */
	static const struct tnode ints = {
	    .type = CEL_S_OBJECT, .names = {"val1"}, .props = {&t_int}};
	expect_s("self.val1 + 1 == 0", "{\"val1\":9223372036854775807}", NULL,
		 &ints, CEL_ERROR, "integer overflow");
	expect_s("1 / 0 == 1 / 0", "{}", NULL, &ints, CEL_ERROR,
		 "division by zero");
	bad("self.val1.matches(')')", "invalid matches argument");
}

/* cel-go's two-variable comprehensions (ext.TwoVarComprehensions), which
   Kubernetes 1.33 enables; the examples of its documentation. */
Test(cel_values, two_variable_comprehensions)
{
	yes("[1, 2, 3].all(i, j, i < j)", "0");
	no("{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)", "0");
	yes("{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, "
	    "vals.all(v, v.startsWith(k)))",
	    "0");
	yes("{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, "
	    "k.startsWith('good') || v.endsWith('bye'))",
	    "0");
	no("[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)", "0");
	no("[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)", "0");
	yes("[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)", "0");
	yes("{'i': 0, 'j': 1, 'k': 2}.exists_one(i, v, i == 'l' || v == 1)",
	    "0");
	yes("[1, 2, 3].transformList(i, v, (i * v) + v) == [1, 4, 9]", "0");
	yes("[1, 2, 3].transformList(i, v, i % 2 == 0, (i * v) + v) == [1, 9]",
	    "0");
	yes("{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, "
	    "k).size() == 2",
	    "0");
	yes("[1, 2, 3].transformMap(i, v, (i * v) + v) == {0: 1, 1: 4, 2: 9}",
	    "0");
	yes("[1, 2, 3].transformMap(i, v, i % 2 == 0, (i * v) + v) == {0: 1, "
	    "2: 9}",
	    "0");
	yes("{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': "
	    "'hello!'}",
	    "0");
	yes("{'greeting': 'hello'}.transformMapEntry(k, v, {v: k}) == "
	    "{'hello': 'greeting'}",
	    "0");
	yes("[1, 2, 3].transformMapEntry(i, v, {v: i}) == {1: 0, 2: 1, 3: 2}",
	    "0");
	err("{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, "
	    "v, {v: k}).size() == 1",
	    "0", "insert failed: key aloha already exists");
	/* kube's map cases */
	static const struct tnode map = {.type = CEL_S_MAP, .addl = &t_int};
	static const struct tnode root = {
	    .type = CEL_S_OBJECT, .names = {"val"}, .props = {&map}};
	static const char *const rules[] = {
	    "self.val.all(k, v, v > 0)",
	    "self.val.exists(k, v, v == 2)",
	    "self.val.existsOne(k, v, v == 2)",
	    "self.val.transformMap(k, v, v > 1, v + 1).size() == 1",
	    "self.val.transformMap(k, v, v + 1).size() == 2",
	    "self.val.transformMapEntry(k, v, v > 1, {k + '2': v + 1}).size() "
	    "== 1",
	    "self.val.transformMapEntry(k, v, {k + '2': v + 1}).size() == 2",
	    "self.val.all(k, self.val[k] > 0)",
	    "self.val.map(k, self.val[k]).exists(v, v == 1)",
	};
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		expect_s(rules[i], "{\"val\":{\"b\":1,\"d\":2}}", NULL, &root,
			 CEL_TRUE, "");
	bad("[1].all(i, 1, true)", "simple name");
	bad("self.val.all(k, v, true) && v", "undeclared reference to 'v'");
}

/* ----------------------------------------------------- optional types */

Test(cel_optional, selection_and_index)
{
	yes("self.?a.orValue(1) == 1", "{}");
	yes("self.?a.orValue(1) == 5", "{\"a\":5}");
	/* a selection after an optional one is optional too */
	yes("self.?a.b.orValue(0) == 0", "{\"a\":{}}");
	yes("self.?a.b.orValue(0) == 2", "{\"a\":{\"b\":2}}");
	yes("self.?a.?b.orValue(0) == 2", "{\"a\":{\"b\":2}}");
	yes("!self.?a.hasValue()", "{}");
	yes("self.?a.hasValue()", "{\"a\":1}");
	err("self.?a.value() == 1", "{}", "optional.none() dereference");
	yes("self.l[?5].orValue(9) == 9", "{\"l\":[1]}");
	yes("self.l[?-1].orValue(9) == 9", "{\"l\":[1]}");
	yes("self.l[?0].value() == 1", "{\"l\":[1]}");
	yes("self.m[?'k'].orValue('') == 'v'", "{\"m\":{\"k\":\"v\"}}");
	yes("self.m[?'x'].orValue('') == ''", "{\"m\":{\"k\":\"v\"}}");
	yes("self.?a[0].orValue(7) == 7", "{\"a\":[]}");
	yes("self.?a[?0].orValue(7) == 3", "{\"a\":[3]}");
	/* nothing to select from a scalar: none, as cel-go's presence
	   test */
	yes("!self.?a.?b.hasValue()", "{\"a\":1}");
	err("self.l[?'x'].hasValue()", "{\"l\":[1]}",
	    "unsupported index type 'string' in list");
	/* or and orValue evaluate the alternative only when needed */
	yes("self.?a.or(optional.of(2)).value() == 2", "{}");
	yes("self.?a.or(optional.of(2)).value() == 1", "{\"a\":1}");
	yes("self.?a.orValue(1 / 0) == 1", "{\"a\":1}");
	err("self.?a.orValue(1 / 0) == 1", "{}", "division by zero");
}

Test(cel_optional, constructors_and_equality)
{
	yes("optional.of(1) == optional.of(1)", "{}");
	no("optional.of(1) == optional.of(2)", "{}");
	no("optional.of(1) == optional.none()", "{}");
	yes("optional.none() == optional.none()", "{}");
	no("optional.of(1) == 1", "{}");
	no("1 == optional.of(1)", "{}");
	yes("optional.of(1) != 1", "{}");
	yes("optional.ofNonZeroValue('') == optional.none()", "{}");
	yes("optional.ofNonZeroValue([]) == optional.none()", "{}");
	yes("optional.ofNonZeroValue({}) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(0.0) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(0u) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(false) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(null) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(duration('0s')) == optional.none()", "{}");
	yes("optional.ofNonZeroValue(1).value() == 1", "{}");
	/* a list or map of the object is no Zeroer in kube */
	yes("optional.ofNonZeroValue(self.l).hasValue()", "{\"l\":[]}");
	yes("optional.of(optional.none()).hasValue()", "{}");
	yes("optional.ofNonZeroValue(optional.none()).hasValue()", "{}");
	/* kube's types answer "no such overload" to any other type */
	err("ip('1.2.3.4') == optional.of(1)", "{}", "no such overload");
	no("1 == optional.of(1)", "{}");
}

Test(cel_optional, literals_and_lists)
{
	yes("[1, ?optional.none(), ?optional.of(3)] == [1, 3]", "{}");
	yes("[?self.?a, ?self.?b] == [2]", "{\"b\":2}");
	yes("{?'a': optional.none(), ?'b': optional.of(2)} == {'b': 2}", "{}");
	yes("{?'a': self.?a} == {}", "{}");
	err("[?1] == [1]", "{}",
	    "cannot initialize optional list element from non-optional "
	    "value 1");
	err("{?'a': 2} == {}", "{}",
	    "cannot initialize optional entry 'a' from non-optional value 2");
	yes("[1, 2].first() == optional.of(1)", "{}");
	yes("[1, 2].last().value() == 2", "{}");
	yes("[].first() == optional.none()", "{}");
	yes("optional.unwrap([optional.of(1), optional.none()]) == [1]", "{}");
	yes("[optional.none(), optional.of('x')].unwrapOpt() == ['x']", "{}");
	err("optional.unwrap([1]) == [1]", "{}", "value 1 is not optional");
	yes("self.?a.optMap(x, x * 2).orValue(0) == 4", "{\"a\":2}");
	yes("self.?a.optMap(x, x * 2) == optional.none()", "{}");
	yes("self.?a.optFlatMap(x, x.?b).orValue(0) == 5", "{\"a\":{\"b\":5}}");
	yes("self.?a.optFlatMap(x, x.?b) == optional.none()", "{\"a\":{}}");
	err("self.optMap(x, x) == 1", "{}", "no such overload");
}

/* ------------------------------------------------- sets and formats */

Test(cel_sets, contains_equivalent_intersects)
{
	yes("sets.contains([1, 2, 3], [1, 2])", "{}");
	no("sets.contains([1], [1, 2])", "{}");
	yes("sets.contains([1], [])", "{}");
	yes("sets.contains([1.0], [1])", "{}");
	yes("sets.equivalent([1, 2], [2, 1, 1])", "{}");
	no("sets.equivalent([1], [1, 2])", "{}");
	no("sets.equivalent([1, 2], [1])", "{}");
	yes("sets.intersects([1, 2], [2, 3])", "{}");
	no("sets.intersects([1], [])", "{}");
	yes("sets.contains(self.a, ['x'])", "{\"a\":[\"y\",\"x\"]}");
	err("sets.contains(1, [1])", "{}", "no such overload");
}

Test(cel_format, constant_and_named_formats)
{
	yes("format.dns1123Label().validate('abc') == optional.none()", "{}");
	yes("format.dns1123Label().validate('a.b').value() == "
	    "['must not contain dots']",
	    "{}");
	yes("format.dns1123Label().validate('A').value() == ['a lowercase RFC "
	    "1123 label must consist of lower case alphanumeric characters or "
	    "\\'-\\', and must start and end with an alphanumeric character "
	    "(e.g. \\'my-name\\',  or \\'123-abc\\', regex used for validation "
	    "is \\'[a-z0-9]([-a-z0-9]*[a-z0-9])?\\')']",
	    "{}");
	yes("format.dns1123Label().validate(self.s).value()[0] == "
	    "'must be no more than 63 characters'",
	    "{\"s\":"
	    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaa\"}");
	/* a prefix may end in '-' (kube masks it) */
	yes("format.dns1123LabelPrefix().validate('abc-') == optional.none()",
	    "{}");
	yes("format.dns1123Label().validate('abc-').hasValue()", "{}");
	yes("format.dns1035Label().validate('1a').hasValue()", "{}");
	yes("format.dns1035Label().validate('a1') == optional.none()", "{}");
	yes("format.dns1123Subdomain().validate('a.b-c') == optional.none()",
	    "{}");
	yes("format.qualifiedName().validate('example.com/a_b') == "
	    "optional.none()",
	    "{}");
	yes("format.qualifiedName().validate('a/b/c').hasValue()", "{}");
	yes("format.labelValue().validate('') == optional.none()", "{}");
	yes("format.labelValue().validate('-a').hasValue()", "{}");
	yes("format.uri().validate('https://x.example/p?q=1') == "
	    "optional.none()",
	    "{}");
	yes("format.uri().validate('x').value() == "
	    "['parse \"x\": invalid URI for request']",
	    "{}");
	yes("format.uuid().validate('nope') == "
	    "optional.of(['does not match the UUID format'])",
	    "{}");
	yes("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000') == "
	    "optional.none()",
	    "{}");
	yes("format.byte().validate('!!').value() == ['invalid base64']", "{}");
	yes("format.date().validate('2024-13-01').value() == ['invalid date']",
	    "{}");
	yes("format.datetime().validate('2024-01-02T03:04:05Z') == "
	    "optional.none()",
	    "{}");
	yes("format.named('dns1123Label').hasValue()", "{}");
	yes("!format.named('nope').hasValue()", "{}");
	yes("format.named('labelValue').value().validate('ok') == "
	    "optional.none()",
	    "{}");
	yes("format.named('uri') == optional.of(format.uri())", "{}");
	no("format.uri() == format.uuid()", "{}");
	err("format.uri() == 1", "{}", "no such overload");
}

/* ------------------------------------------------------- quantities */

static const struct tnode t_qobj = {
    .type = CEL_S_OBJECT, .names = {"mem", "cpu"}, .props = {&t_str, &t_ios}};

static void yes_q(const char *rule, const char *self)
{
	expect_s(rule, self, NULL, &t_qobj, CEL_TRUE, NULL);
}

Test(cel_quantity, kube_library_examples)
{
	/* the examples of kube's library/quantity.go */
	yes("quantity('200M').compareTo(quantity('0.2G')) == 0", "{}");
	yes("quantity('50M').compareTo(quantity('50Mi')) == -1", "{}");
	yes("quantity('50Mi').compareTo(quantity('50M')) == 1", "{}");
	yes("quantity('150Mi').isGreaterThan(quantity('100Mi'))", "{}");
	no("quantity('50Mi').isGreaterThan(quantity('100Mi'))", "{}");
	yes("quantity('50M').isLessThan(quantity('100M'))", "{}");
	yes("quantity('50k').add(quantity('20k')) == quantity('70k')", "{}");
	yes("quantity('50k').add(20) == quantity('50020')", "{}");
	yes("quantity('50k').sub(quantity('20k')) == quantity('30k')", "{}");
	yes("quantity('50k').sub(20000) == quantity('30k')", "{}");
	yes("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == "
	    "quantity('20')",
	    "{}");
	yes("quantity('50000000G').isInteger()", "{}");
	yes("quantity('50k').asInteger() == 50000", "{}");
	yes("quantity('50k').sub(20000).asApproximateFloat() == 30000.0", "{}");
	no("quantity('9999999999999999999999999999999999999G').isInteger()",
	   "{}");
	err("quantity('9999999999999999999999999999999999999G').asInteger() "
	    "== 1",
	    "{}", "cannot convert value to integer");
	yes("isQuantity('1.3G') && isQuantity('1.3Gi') && "
	    "isQuantity('10000k')",
	    "{}");
	no("isQuantity('1,3G') || isQuantity('200K') || isQuantity('Three') "
	   "|| isQuantity('20Mo') || isQuantity('10Mm')",
	   "{}");
	/* Go's parser reads a bare suffix as 0 of it (the library's
	   comment says otherwise; its code does not) */
	yes("isQuantity('Mi') && quantity('Mi').sign() == 0", "{}");
	err("quantity('10Mo') == quantity('1')", "{}",
	    "quantities must match the regular expression "
	    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	err("quantity('10Mm') == quantity('1')", "{}",
	    "unable to parse quantity's suffix");
	yes("quantity('-1').sign() == -1 && quantity('0').sign() == 0", "{}");
	err("quantity('200K') == quantity('1')", "{}",
	    "unable to parse quantity's suffix");
	err("quantity('Three') == quantity('1')", "{}",
	    "quantities must match the regular expression "
	    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	/* add and sub give kube's *Quantity: == takes it on the left
	   only */
	err("quantity('70k') == quantity('50k').add(quantity('20k'))", "{}",
	    "no such overload");
	yes("quantity('70k').compareTo(quantity('50k').add(20000)) == 0", "{}");
	/* a Quantity compares with no other type */
	err("quantity('1') == 1", "{}", "no such overload");
	no("1 == quantity('1')", "{}");
	err("quantity('1') < quantity('2')", "{}", "no such overload");
}

Test(cel_quantity, from_the_object)
{
	yes_q("quantity(self.mem).isLessThan(quantity('1Gi'))",
	      "{\"mem\":\"512Mi\"}");
	yes_q("!quantity(self.mem).isLessThan(quantity('1Gi'))",
	      "{\"mem\":\"1024Mi\"}");
	/* an int-or-string is dyn: a string parses, an int does not */
	yes_q("quantity(string(self.cpu)).compareTo(quantity('500m')) == 1",
	      "{\"cpu\":2}");
	yes_q("quantity(self.cpu).compareTo(quantity('500m')) == 0",
	      "{\"cpu\":\"0.5\"}");
	expect_s("quantity(self.cpu).sign() == 1", "{\"cpu\":2}", NULL, &t_qobj,
		 CEL_ERROR, "no such overload");
}

/* cel_compile_checked: text kube would refuse (invalid) against CEL kube
   compiles that lapis does not take (unsupported). */
static void invalid(const char *rule, bool want)
{
	char why[200];
	bool inv = !want;
	cel_prog *p = cel_compile_checked(rule, why, sizeof why, &inv, NULL);
	cr_expect_null(p, "rule %s compiled", rule);
	cel_free(p);
	cr_expect_eq(inv, want, "rule %s: invalid %d, want %d (%s)", rule, inv,
		     want, why);
}

Test(cel_compile, invalid_or_outside_the_subset)
{
	invalid("self.a ==", true);
	invalid("(self.a", true);
	invalid("other == 1", true);
	invalid("self.all(1, true)", true);
	invalid("has(self)", true);
	invalid("self.matches('(')", true);
	invalid("duration('1x') > duration('1s')", true);
	invalid("9223372036854775808 == 1", true);
	invalid("format.dns1123Label(1)", true);
	invalid("size(1, 2) == 1", false);
	bool inv = true;
	cel_prog *p = cel_compile_checked("self.a == 1", NULL, 0, &inv, NULL);
	cr_assert_not_null(p);
	cr_expect(!inv);
	cel_free(p);
}

/* find() over a string past its bound is not evaluated (regexec's search
   could take seconds), while matches() still is. */
Test(cel_values, find_on_a_long_string_is_not_evaluated)
{
	size_t n = 5000;
	char *self = malloc(n + 3);
	cr_assert_not_null(self);
	self[0] = '"';
	memset(self + 1, 'a', n);
	self[n + 1] = '"';
	self[n + 2] = 0;
	expect_s("self.find('b') == ''", self, NULL, NULL, CEL_UNSUPPORTED,
		 NULL);
	expect_s("self.findAll('a').size() > 0", self, NULL, NULL,
		 CEL_UNSUPPORTED, NULL);
	expect_s("self.matches('b')", self, NULL, NULL, CEL_FALSE, NULL);
	self[4096 + 1] = '"';
	self[4096 + 2] = 0;
	expect_s("self.find('a+').size() == 4096", self, NULL, NULL, CEL_TRUE,
		 NULL);
	free(self);
}

/* cel-go's display of an error's place: line and column (runes, from 1),
   the source line (tabs as spaces), dots to the column, full-width ones
   under wide runes, and a caret (full-width under a wide rune). */
Test(cel_compile, error_display)
{
	char out[256];
	cel_error_display("self.b > 0", 4, "undefined field 'b'", out,
			  sizeof out);
	cr_assert_str_eq(out, ":1:5: undefined field 'b'\n | self.b > 0\n"
			      " | ....^");
	cel_error_display("true &&\n\tself.x", 13, "m", out, sizeof out);
	cr_assert_str_eq(out, ":2:6: m\n |  self.x\n | .....^");
	cel_error_display("'\xc3\xa9' == x", 8, "m", out, sizeof out);
	cr_assert_str_eq(out, ":1:8: m\n | '\xc3\xa9' == x\n"
			      " | .\xef\xbc\x8e.....^");
	cel_error_display("a\xc3\xa9", 1, "m", out, sizeof out);
	cr_assert_str_eq(out, ":1:2: m\n | a\xc3\xa9\n | .\xef\xbc\xbe");
	/* a cut never halves a rune */
	char small[14];
	cel_error_display("\xc3\xa9\xc3\xa9\xc3\xa9", 0, "mm", small,
			  sizeof small);
	cr_assert_str_eq(small, ":1:1: mm\n | ");
	/* positions from the compiler and the field check */
	char why[128];
	size_t at = 0;
	bool inv;
	cr_assert_null(
	    cel_compile_checked("self.a ==", why, sizeof why, &inv, &at));
	cr_assert_eq(at, 9);
	cr_assert_str_eq(why, "Syntax error: unexpected end of expression");
	cr_assert_null(
	    cel_compile_checked("1 + y", why, sizeof why, &inv, &at));
	cr_assert_eq(at, 4);
	cr_assert_str_eq(why, "undeclared reference to 'y' (in container '')");
	/* more after a whole expression: ANTLR's words at cel-go's `start:
	   expr EOF` (kube's validation_test.go, "self.objs[0][0].k!") */
	cr_assert_null(
	    cel_compile_checked("self.a! == 1", why, sizeof why, &inv, &at));
	cr_assert_eq(at, 6);
	cr_assert_str_eq(why,
			 "Syntax error: mismatched input '!' expecting <EOF>");
	cr_assert_null(
	    cel_compile_checked("self.a 'b'", why, sizeof why, &inv, &at));
	cr_assert_eq(at, 7);
	cr_assert_str_eq(
	    why, "Syntax error: extraneous input ''b'' expecting <EOF>");
	/* a find() pattern Go's regexp refuses fails building the program
	   (kube's "program instantiation failed"), with Go's error alone;
	   matches() fails the checker at its argument */
	cr_assert_null(cel_compile_checked("self.find(')') == ''", why,
					   sizeof why, &inv, &at));
	cr_assert(inv);
	cr_assert_eq(at, CEL_PROGRAM_POS);
	cr_assert_str_eq(why, "error parsing regexp: unexpected ): `)`");
	cr_assert_null(cel_compile_checked("self.matches(')')", why, sizeof why,
					   &inv, &at));
	cr_assert_eq(at, 13);
	cr_assert_str_eq(why, "invalid matches argument");
	/* without a place asked for, the text says where */
	cr_assert_null(
	    cel_compile_checked("self.a ==", why, sizeof why, &inv, NULL));
	cr_assert_str_eq(why,
			 "syntax error at 9: unexpected end of expression");
}
