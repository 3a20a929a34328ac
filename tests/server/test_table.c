/*
 * test_table.c -- tests of server/table.c's printer-column cells for custom
 * resources: an integer column over a float value is Go's int64(f) on
 * amd64, as kube computes it, never C's undefined conversion (which UBSan's
 * float-cast-overflow check, on in the ASan build, reports); and the Accept
 * negotiation: goautoneg's clause order, and the conversions and streams kube
 * refuses.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <limits.h>

#include "../../server/table.h"

static const struct srv_column size_col[] = {
    {.name = "Size", .type = "integer", .format = "", .desc = "",
     .jsonpath = ".spec.size"},
    {.name = NULL},
};

static const struct srv_resource widgets = {
    .group = "cols.example.com",
    .version = "v1",
    .resource = "widgets",
    .kind = "Widget",
    .list_kind = "WidgetList",
    .namespaced = true,
    .columns = size_col,
    .custom = true,
};

/* The Size cell of a widget whose spec.size is the JSON text size. */
static json_t *size_cell(const char *size)
{
	char doc[256];
	snprintf(doc, sizeof doc, "[{\"spec\":{\"size\":%s}}]", size);
	json_error_t jerr;
	json_t *items = json_loads(doc, 0, &jerr);
	cr_assert(items, "%s: %s", doc, jerr.text);
	struct srv_neg n = {.out = SRV_OUT_TABLE, .version = "v1"};
	json_t *t = srv_table(&widgets, &n, items, NULL, true);
	json_decref(items);
	json_t *cell = json_incref(
	    json_array_get(json_object_get(json_array_get(
					       json_object_get(t, "rows"), 0),
					   "cells"),
			   0));
	json_decref(t);
	cr_assert(cell, "no cell for %s", size);
	return cell;
}

static void expect_int(const char *size, long long want)
{
	json_t *c = size_cell(size);
	cr_expect(json_is_integer(c), "%s: not an integer", size);
	cr_expect_eq(json_integer_value(c), want, "%s: %lld, want %lld", size,
		     (long long)json_integer_value(c), want);
	json_decref(c);
}

Test(table, integer_column_of_an_integer)
{
	expect_int("3", 3);
	expect_int("-9223372036854775808", LLONG_MIN);
}

Test(table, integer_column_truncates_a_float_toward_zero)
{
	expect_int("3.9", 3);
	expect_int("-3.9", -3);
	expect_int("1e18", 1000000000000000000LL);
	expect_int("-9.223372036854775808e18", LLONG_MIN);
}

/* Beyond int64 Go gives -2^63 on amd64 (C: undefined behaviour). */
Test(table, integer_column_of_a_float_beyond_int64)
{
	expect_int("9.223372036854775808e18", LLONG_MIN);
	expect_int("1e300", LLONG_MIN);
	expect_int("-1e300", LLONG_MIN);
}

Test(table, integer_column_of_a_string_is_null)
{
	json_t *c = size_cell("\"3\"");
	cr_expect(json_is_null(c));
	json_decref(c);
}

static const struct srv_column text_col[] = {
    {.name = "Text", .type = "string", .format = "", .desc = "",
     .jsonpath = ".spec.size"},
    {.name = NULL},
};

static const struct srv_resource texts = {
    .group = "cols.example.com",
    .version = "v1",
    .resource = "texts",
    .kind = "Text",
    .list_kind = "TextList",
    .namespaced = true,
    .columns = text_col,
    .custom = true,
};

/* The Text cell of an object whose spec.size is the JSON text v. */
static void expect_text(const char *v, const char *want)
{
	char doc[256];
	snprintf(doc, sizeof doc, "[{\"spec\":{\"size\":%s}}]", v);
	json_error_t jerr;
	json_t *items = json_loads(doc, 0, &jerr);
	cr_assert(items, "%s: %s", doc, jerr.text);
	struct srv_neg n = {.out = SRV_OUT_TABLE, .version = "v1"};
	json_t *t = srv_table(&texts, &n, items, NULL, true);
	json_decref(items);
	json_t *cell = json_array_get(
	    json_object_get(json_array_get(json_object_get(t, "rows"), 0),
			    "cells"),
	    0);
	cr_expect_str_eq(json_string_value(cell) ? json_string_value(cell)
						 : "(not a string)",
			 want, "%s", v);
	json_decref(t);
}

/* A string column prints a scalar that is not a string as Go's %v and an
   object or a list as JSON (client-go 1.33's JSONPath printer). */
Test(table, string_column_prints_values_as_go)
{
	expect_text("\"plain\"", "plain");
	expect_text("5", "5");
	expect_text("3.7", "3.7");
	expect_text("0.1", "0.1");
	expect_text("3.0", "3");
	expect_text("-2.5", "-2.5");
	expect_text("0.0001", "0.0001");
	expect_text("0.00001", "1e-05");
	expect_text("123456.5", "123456.5");
	expect_text("1234567.5", "1.2345675e+06");
	expect_text("1.5e300", "1.5e+300");
	expect_text("true", "true");
	/* client-go 1.33's printer writes objects and lists as JSON */
	expect_text("{\"n\":1,\"k\":\"v<\"}", "{\"k\":\"v\\u003c\",\"n\":1}");
	expect_text("[\"p\",\"q\",{\"a\":[1,2.5,1234567.5,1e-7,3.0]}]",
		    "[\"p\",\"q\",{\"a\":[1,2.5,1234567.5,1e-7,3]}]");
	expect_text("{}", "{}");
	expect_text("[]", "[]");
}

/* ------------------------------------------------------------ negotiation */

static lp_err neg(const char *accept, bool list, struct srv_neg *n)
{
	struct srv_error err;
	srv_error_clear(&err);
	return srv_negotiate(accept, NULL, list, false, n, &err);
}

Test(negotiate, clauses_are_taken_by_q_as_goautoneg_sorts_them)
{
	struct srv_neg n;
	cr_assert_eq(
	    neg("application/yaml;q=0.5, application/json;q=0.9", false, &n),
	    LP_OK);
	cr_assert_not(n.yaml);
	cr_assert_eq(
	    neg("application/json;q=0.1, application/yaml;q=0.9", false, &n),
	    LP_OK);
	cr_assert(n.yaml);
	cr_assert_eq(
	    neg("application/yaml;q=0, application/json;q=0.1", false, &n),
	    LP_OK);
	cr_assert_not(n.yaml);
	/* equal q: the order sent; a concrete type before a wildcard */
	cr_assert_eq(neg("application/yaml, application/json", false, &n),
		     LP_OK);
	cr_assert(n.yaml);
	cr_assert_eq(neg("*/*, application/yaml", false, &n), LP_OK);
	cr_assert(n.yaml);
	cr_assert_eq(neg("application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5, "
			 "application/"
			 "json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
			 true, &n),
		     LP_OK);
	cr_assert_eq(n.out, SRV_OUT_PARTIAL);
}

Test(negotiate,
     conversion_and_stream_parameters_kube_cannot_serve_are_not_acceptable)
{
	struct srv_neg n;
	static const char *const bad[] = {
	    "application/json;as=",
	    "application/json;v=v1",
	    "application/json;g=meta.k8s.io",
	    "application/json;as=Table;g=example.com;v=v1",
	    "application/json;stream=bogus",
	    "application/yaml;stream=watch"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(neg(bad[i], false, &n), LP_E_NOTACCEPTABLE, "%s",
			     bad[i]);
	cr_assert_eq(neg("application/json;stream=watch", false, &n), LP_OK);
	cr_assert_eq(
	    neg("application/json;g=meta.k8s.io, application/json", false, &n),
	    LP_OK);
	cr_assert_eq(n.out, SRV_OUT_PLAIN);
}
