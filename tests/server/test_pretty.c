/*
 * test_pretty.c -- tests of server/pretty.c: kube's pretty-printed JSON.
 * The expected texts are what Go 1.19's json.Indent(dst, src, "", "  ")
 * wrote for the same inputs (the body json.MarshalIndent gives kube's
 * pretty serializer); the inputs are our own.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/pretty.h"

static void indents(const char *in, const char *want)
{
	size_t n = 0;
	char *got = srv_json_indent(in, strlen(in), &n);
	cr_assert(got, "%s: out of memory", in);
	cr_assert_str_eq(got, want, "%s", in);
	cr_assert_eq(n, strlen(want), "%s: length", in);
	/* indenting what is indented changes nothing */
	size_t n2 = 0;
	char *again = srv_json_indent(got, n, &n2);
	cr_assert_str_eq(again, want, "%s: again", in);
	free(again);
	free(got);
}

Test(pretty, indents_as_go)
{
	indents("{}", "{}");
	indents("[]", "[]");
	indents("{\"a\":{},\"b\":[],\"c\":[{}],\"d\":[[]]}",
		"{\n  \"a\": {},\n  \"b\": [],\n  \"c\": [\n    {}\n  ],\n"
		"  \"d\": [\n    []\n  ]\n}");
	indents("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		"\"status\":\"Failure\",\"code\":404}",
		"{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n"
		"  \"metadata\": {},\n  \"status\": \"Failure\",\n"
		"  \"code\": 404\n}");
	/* structure inside strings and escapes are copied as they are */
	indents("{\"s\":\"a\\\"b{c}[d],e:f\",\"t\":\"\\\\\",\"u\":"
		"\"\\u003cx\\u003e\",\"n\":-1.5e+10,\"z\":null,\"y\":true,"
		"\"x\":false}",
		"{\n  \"s\": \"a\\\"b{c}[d],e:f\",\n  \"t\": \"\\\\\",\n"
		"  \"u\": \"\\u003cx\\u003e\",\n  \"n\": -1.5e+10,\n"
		"  \"z\": null,\n  \"y\": true,\n  \"x\": false\n}");
	indents("[1,2,[3,[4,{\"k\":[5]}]]]",
		"[\n  1,\n  2,\n  [\n    3,\n    [\n      4,\n      {\n"
		"        \"k\": [\n          5\n        ]\n      }\n    ]\n"
		"  ]\n]");
	/* whitespace between tokens is dropped */
	indents("  { \"a\" : 1 ,\t\"b\":[ 1 , 2 ] }",
		"{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}");
	indents("\"just a string\"", "\"just a string\"");
	indents("12345", "12345");
	indents("{\"empty key\":\"\",\"\":\"\"}",
		"{\n  \"empty key\": \"\",\n  \"\": \"\"\n}");
	indents("{\"ü\":\"日本\"}", "{\n  \"ü\": \"日本\"\n}");
	indents("", "");
}

/* Not JSON: never read past the end, never crash, something comes out. */
Test(pretty, survives_what_is_not_json)
{
	static const char *bad[] = {
	    "{",      "}}}]]]",	 "[[[",	   "\"open", "\"ends in \\",
	    "{\"a\"", "{\"a\":", ",,,:::", "\\",     "{\"a\":\"\\\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t n = 0;
		char *got = srv_json_indent(bad[i], strlen(bad[i]), &n);
		cr_assert(got, "%s", bad[i]);
		cr_assert_eq(n, strlen(got), "%s", bad[i]);
		free(got);
	}
	/* a length that cuts a string: nothing beyond it is read */
	const char cut[] = "{\"abc\":\"defgh\"}";
	size_t n = 0;
	char *got = srv_json_indent(cut, 9, &n);
	cr_assert_str_eq(got, "{\n  \"abc\": \"d");
	free(got);
}

Test(pretty, go_parse_bool)
{
	static const char *yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *no[] = {"0", "f", "F", "FALSE", "false", "False"};
	static const char *bad[] = {"", "yes", "tRUE", "2", " true", "1 "};
	bool ok;
	for (size_t i = 0; i < 6; i++) {
		cr_assert(srv_go_parse_bool(yes[i], &ok) && ok, "%s", yes[i]);
		cr_assert(!srv_go_parse_bool(no[i], &ok) && ok, "%s", no[i]);
		cr_assert(!srv_go_parse_bool(bad[i], &ok) && !ok, "%s", bad[i]);
	}
}
