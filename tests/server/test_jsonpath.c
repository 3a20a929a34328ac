/*
 * test_jsonpath.c -- server/jsonpath.c against client-go's util/jsonpath:
 * which printer-column paths its parser takes, and the first value each
 * finds (NULL where client-go finds nothing or fails).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "../../server/jsonpath.h"

static const char doc_text[] =
    "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"strimzi.io/cluster\":\"my-"
    "cluster\",\"a\":\"x\"}},"
    "\"spec\":{\"size\":3,\"ratio\":1.5,\"on\":true,\"gone\":null,"
    "\"items\":[{\"name\":\"i0\",\"n\":1},{\"name\":\"i1\",\"n\":5},"
    "{\"name\":\"i2\",\"n\":9}],\"empty\":[],\"words\":\"ab\"},"
    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
    "{\"type\":\"Synced\",\"status\":\"False\",\"reason\":\"R\"}]}}";

static json_t *doc(void)
{
	json_error_t e;
	json_t *d = json_loads(doc_text, 0, &e);
	cr_assert_not_null(d, "%s", e.text);
	return d;
}

/* The first value of column path on the document, as JSON text
   ("<none>" when there is none). */
static char *first(const char *path)
{
	json_t *d = doc();
	struct srv_jsonpath *p = srv_jsonpath_column(path);
	cr_assert_not_null(p, "%s: refused", path);
	json_t *keep = NULL;
	json_t *v = srv_jsonpath_eval_first(p, d, &keep);
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY) : strdup("<none>");
	json_decref(keep);
	srv_jsonpath_free(p);
	json_decref(d);
	return s;
}

static void expect(const char *path, const char *want)
{
	char *got = first(path);
	cr_expect_str_eq(got, want, "%s", path);
	free(got);
}

Test(jsonpath, fields_and_escapes)
{
	expect(".metadata.name", "\"n1\"");
	expect(".metadata.labels.strimzi\\.io/cluster", "\"my-cluster\"");
	expect(".metadata.labels['a']", "\"x\"");
	expect(".metadata.missing.deeper", "<none>");
	expect(".spec.gone", "null");
	expect(".spec.size.x", "<none>");
	expect("$.spec.size", "3");
	expect(".spec.ratio", "1.5");
}

Test(jsonpath, indexes_and_slices)
{
	expect(".spec.items[0].name", "\"i0\"");
	expect(".spec.items[-1].name", "\"i2\"");
	expect(".spec.items[1:].name", "\"i1\"");
	expect(".spec.items[:2].name", "\"i0\"");
	expect(".spec.items[::2].n", "1");
	expect(".spec.items[*].n", "1");
	expect(".spec.items[].name", "\"i0\"");
	expect(".spec.items[2,0].name", "\"i2\"");
	/* out of range, a negative step, indexing a non-list: errors */
	expect(".spec.items[3].name", "<none>");
	expect(".spec.items[::-1].n", "<none>");
	expect(".spec.size[0]", "<none>");
	expect(".spec.empty[0]", "<none>");
	expect(".spec.items[1:1].n", "<none>");
}

Test(jsonpath, filters)
{
	expect(".status.conditions[?(@.type==\"Ready\")].status", "\"True\"");
	expect(".status.conditions[?(@.type=='Synced')].status", "\"False\"");
	expect(".status.conditions[?(@.type == \"Synced\")].reason", "\"R\"");
	expect(".status.conditions[?(@.type!=\"Ready\")].type", "\"Synced\"");
	expect(".status.conditions[?(@.reason)].type", "\"Synced\"");
	expect(".spec.items[?(@.n>1)].name", "\"i1\"");
	expect(".spec.items[?(@.n>=9)].name", "\"i2\"");
	expect(".spec.items[?(@.n<=1)].name", "\"i0\"");
	expect(".spec.items[?(@.n<5)].name", "\"i0\"");
	/* template comparisons refuse mixed types: the whole path fails */
	expect(".spec.items[?(@.n==\"1\")].name", "<none>");
	expect(".spec.items[?(@.n==1.0)].name", "<none>");
	expect(".spec.items[?(@.n=!1)].name", "<none>"); /* no such operator */
	expect(".spec.size[?(@.n)]", "<none>");
}

Test(jsonpath, wildcards_and_recursion)
{
	expect(".metadata.*", "\"n1\"");
	expect("..name", "\"n1\"");
	expect(".spec..n", "1");
	expect(".spec.words.*", "97");
}

/* Recursive descents gather a value, then its descendants in pre-order;
   chained ones on a deep object pass JSONPATH_MAX_VALUES and fail, where
   they once took seconds of CPU per Table row (300 levels: millions of
   values). */
Test(jsonpath, recursion_order_and_bound)
{
	json_error_t e;
	json_t *d = json_loads("{\"spec\":{\"b\":{\"a\":{\"x\":1}},"
			       "\"a\":{\"a\":2}}}",
			       0, &e);
	cr_assert(d);
	struct srv_jsonpath *p = srv_jsonpath_column(".spec..a");
	cr_assert(p);
	json_t *keep = NULL;
	json_t *v = srv_jsonpath_eval_first(p, d, &keep);
	char *t = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
	cr_expect(t && !strcmp(t, "{\"a\": 2}"), "%s", t ? t : "(none)");
	free(t);
	json_decref(keep);
	srv_jsonpath_free(p);
	json_decref(d);

	json_t *deep = json_integer(1);
	for (int i = 0; i < 300; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "a", deep);
		deep = o;
	}
	d = json_object();
	json_object_set_new(d, "spec", deep);
	p = srv_jsonpath_column(".spec..a..a..a");
	cr_assert(p);
	keep = NULL;
	v = srv_jsonpath_eval_first(p, d, &keep);
	cr_expect_null(v, "a chained descent over 300 levels is cut off");
	json_decref(keep);
	srv_jsonpath_free(p);
	p = srv_jsonpath_column(".spec..a");
	v = srv_jsonpath_eval_first(p, d, &keep);
	cr_expect(json_is_object(v),
		  "one descent over 300 levels still answers");
	json_decref(keep);
	srv_jsonpath_free(p);
	json_decref(d);
}

Test(jsonpath, template_values)
{
	expect("\"lit\"", "\"lit\"");
	expect(".spec.range", "<none>");
	/* identifiers are for templates (range/end): an error here */
	expect("range", "<none>");
	struct srv_jsonpath *p = srv_jsonpath_parse("x{.metadata.name}", NULL, 0);
	cr_assert_not_null(p);
	json_t *d = doc(), *keep = NULL;
	json_t *v = srv_jsonpath_eval_first(p, d, &keep);
	cr_expect(json_is_string(v) && !strcmp(json_string_value(v), "x"),
		  "the first part is the text");
	cr_expect_eq(v, keep, "a template's own text is the caller's to free");
	json_decref(keep);
	json_decref(d);
	srv_jsonpath_free(p);
	d = doc();
	cr_expect_null(srv_jsonpath_first(d, "\"lit\""),
		       "srv_jsonpath_first returns only values of the document");
	cr_expect_eq(json_integer_value(srv_jsonpath_first(d, ".spec.size")), 3);
	json_decref(d);
}

Test(jsonpath, parse_errors)
{
	static const char *const bad[] = {
	    ".a[",	       ".a[?(@.x==1]", ".a[1:2:3:4]", ".a[x]",
	    ".a[?(@.b=~1)]", ".a[\"b\"]",    ".a[-]",	      "....a",
	    ".a[?(@.x=='y)]", ".a['b",	      "1.2.3",	      ".a\n.b",
	    ".a[0,b]",	       "\"\\q\"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct srv_jsonpath *p = srv_jsonpath_column(bad[i]);
		cr_expect_null(p, "%s: client-go refuses it", bad[i]);
		srv_jsonpath_free(p);
	}
	char err[64];
	cr_expect_null(srv_jsonpath_parse("{.a", err, sizeof err));
	cr_expect_str_eq(err, "unclosed action");
	static const char *const good[] = {
	    ".a",    ".",	  "..a",	".a[*]",     ".a[?(@.b)]",
	    ".a[0]", ".a[-1:]", ".a['b','c']", ".a\\.b", "@.a",
	    ".a b",  "-1",	  "true",	".a[ 1 , 2 ]", ".a#", "..a..b",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		struct srv_jsonpath *p = srv_jsonpath_column(good[i]);
		cr_expect_not_null(p, "%s: client-go takes it", good[i]);
		srv_jsonpath_free(p);
	}
}
