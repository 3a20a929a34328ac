/*
 * test_structural.c -- tests of server/structural.c: which CRD schemas
 * kube-apiserver refuses, with its field paths and messages (reference
 * §8.2, §8.6). One negative case per rule, and schemas that must pass.
 * (Every accepted CRD of shared/testdata/crds is proven by tests/e2e/crd.sh.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../server/schema.h"

static json_t *js(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);
	cr_assert_not_null(v, "bad JSON %s: %s", text, je.text);
	return v;
}

static void dump(const struct srv_error *err, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < err->n_causes && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "\n  [%s] %s: %s",
					srv_cause_get(err, i).reason,
					srv_cause_get(err, i).field,
					srv_cause_get(err, i).message);
}

static void check(const char *schema, bool status, struct srv_error *err)
{
	json_t *s = js(schema);
	memset(err, 0, sizeof *err);
	srv_schema_check_crd(s, "spec.validation", status, NULL, err);
	json_decref(s);
}

static void ok(const char *schema)
{
	struct srv_error err;
	check(schema, false, &err);
	char buf[8192];
	dump(&err, buf, sizeof buf);
	cr_assert_eq(err.n_causes, 0, "%s: unexpected causes:%s", schema, buf);
}

/* The schema gets exactly this cause among its causes. */
static void bad_st(const char *schema, bool status, const char *reason,
		   const char *field, const char *message)
{
	struct srv_error err;
	check(schema, status, &err);
	char buf[8192];
	dump(&err, buf, sizeof buf);
	for (int i = 0; i < err.n_causes; i++)
		if (!strcmp(srv_cause_get(&err, i).reason, reason) &&
		    !strcmp(srv_cause_get(&err, i).field, field) &&
		    !strcmp(srv_cause_get(&err, i).message, message))
			return;
	cr_assert_fail("%s: want [%s] %s: %s, got:%s", schema, reason, field,
		       message, buf);
}

static void bad(const char *schema, const char *reason, const char *field,
		const char *message)
{
	bad_st(schema, false, reason, field, message);
}

#define ROOT "spec.validation.openAPIV3Schema"

Test(structural, accepts_plain_schemas)
{
	ok("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
	   "\"properties\":{\"replicas\":{\"type\":\"integer\",\"default\":1,"
	   "\"minimum\":0},\"port\":{\"x-kubernetes-int-or-string\":true,"
	   "\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"string\"}]},"
	   "\"any\":{\"x-kubernetes-preserve-unknown-fields\":true},"
	   "\"labels\":{\"type\":\"object\",\"additionalProperties\":"
	   "{\"type\":\"string\"}},\"ports\":{\"type\":\"array\","
	   "\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":"
	   "[\"name\",\"protocol\"],\"items\":{\"type\":\"object\","
	   "\"required\":"
	   "[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"},"
	   "\"protocol\":{\"type\":\"string\",\"default\":\"TCP\"}}}}},"
	   "\"oneOf\":[{\"required\":[\"replicas\"]},{\"required\":[\"port\"]}]"
	   "},"
	   "\"metadata\":{\"type\":\"object\",\"properties\":{\"name\":{"
	   "\"type\":"
	   "\"string\",\"maxLength\":20}}}}}");
	/* x-kubernetes-preserve-unknown-fields at the root needs no type */
	ok("{\"x-kubernetes-preserve-unknown-fields\":true}");
}

Test(structural, type_required)
{
	bad("{\"properties\":{}}", "FieldValueRequired", ROOT ".type",
	    "Required value: must not be empty at the root");
	bad("{\"type\":\"object\",\"properties\":{\"spec\":{\"properties\":{}}}"
	    "}",
	    "FieldValueRequired", ROOT ".properties[spec].type",
	    "Required value: must not be empty for specified object fields");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{}}}}",
	    "FieldValueRequired", ROOT ".properties[l].items.type",
	    "Required value: must not be empty for specified array items");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\"}}}",
	    "FieldValueRequired", ROOT ".properties[l].items",
	    "Required value: must be specified");
}

Test(structural, root_type_and_additional_properties)
{
	bad("{\"type\":\"string\"}", "FieldValueInvalid", ROOT ".type",
	    "Invalid value: \"string\": must be object at the root");
	bad("{\"type\":\"object\",\"additionalProperties\":{\"type\":"
	    "\"string\"}}",
	    "FieldValueForbidden", ROOT ".additionalProperties",
	    "Forbidden: must not be used at the root");
	bad("{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\","
	    "\"properties\":{\"a\":{\"type\":\"string\"}},"
	    "\"additionalProperties\":{\"type\":\"string\"}}}}",
	    "FieldValueForbidden", ROOT ".properties[m].additionalProperties",
	    "Forbidden: additionalProperties and properties are mutual "
	    "exclusive");
	bad("{\"type\":\"object\",\"nullable\":true}", "FieldValueForbidden",
	    "spec.validation.openAPIV3Schema.nullable",
	    "Forbidden: nullable cannot be true at the root");
}

Test(structural, forbidden_keywords)
{
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/x\","
	    "\"type\":\"string\"}}}",
	    "FieldValueForbidden", ROOT ".properties[a].$ref",
	    "Forbidden: $ref is not supported");
	bad("{\"type\":\"object\",\"definitions\":{\"x\":{\"type\":\"string\"}}"
	    "}",
	    "FieldValueForbidden", ROOT ".definitions",
	    "Forbidden: definitions is not supported");
	bad("{\"type\":\"object\",\"id\":\"x\"}", "FieldValueForbidden",
	    ROOT ".id", "Forbidden: id is not supported");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
	    "\"patternProperties\":{\"^x\":{\"type\":\"string\"}}}}}",
	    "FieldValueForbidden", ROOT ".properties[a].patternProperties",
	    "Forbidden: patternProperties is not supported");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"string\"},\"uniqueItems\":true}}}",
	    "FieldValueForbidden", ROOT ".properties[a].uniqueItems",
	    "Forbidden: uniqueItems cannot be set to true since the runtime "
	    "complexity becomes quadratic");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"null\"}}}",
	    "FieldValueForbidden", ROOT ".properties[a].type",
	    "Forbidden: type cannot be set to null, use nullable as an "
	    "alternative");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"int\"}}}",
	    "FieldValueNotSupported", ROOT ".properties[a].type",
	    "Unsupported value: \"int\": supported values: \"array\", "
	    "\"boolean\", \"integer\", \"number\", \"object\", \"string\"");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
	    "\"x-kubernetes-preserve-unknown-fields\":false}}}",
	    "FieldValueInvalid",
	    ROOT ".properties[a].x-kubernetes-preserve-unknown-fields",
	    "Invalid value: false: must be true or undefined");
}

Test(structural, combinators_hold_value_validations_only)
{
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
	    "\"anyOf\":[{\"type\":\"string\"},{\"maxLength\":3}]}}}",
	    "FieldValueForbidden", ROOT ".properties[a].anyOf[0].type",
	    "Forbidden: must be empty to be structural");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
	    "\"allOf\":[{\"default\":\"x\"}]}}}",
	    "FieldValueForbidden", ROOT ".properties[a].allOf[0].default",
	    "Forbidden: must be undefined to be structural");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
	    "\"oneOf\":[{\"nullable\":true}]}}}",
	    "FieldValueForbidden", ROOT ".properties[a].oneOf[0].nullable",
	    "Forbidden: must be false to be structural");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
	    "\"not\":{\"additionalProperties\":{\"type\":\"string\"}}}}}",
	    "FieldValueForbidden",
	    ROOT ".properties[a].not.additionalProperties",
	    "Forbidden: must be undefined to be structural");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
	    "\"anyOf\":[{\"description\":\"d\"}]}}}",
	    "FieldValueForbidden", ROOT ".properties[a].anyOf[0].description",
	    "Forbidden: must be empty to be structural");
	bad("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
	    "\"anyOf\":[{\"x-kubernetes-list-type\":\"set\"}]}}}",
	    "FieldValueForbidden",
	    ROOT ".properties[a].anyOf[0].x-kubernetes-list-type",
	    "Forbidden: must be undefined to be structural");
	bad("{\"type\":\"object\",\"anyOf\":[{\"properties\":{\"metadata\":"
	    "{}}}]}",
	    "FieldValueForbidden", ROOT ".anyOf[0].properties[metadata]",
	    "Forbidden: must not be specified in a nested context");
	/* completeness: what a combinator names, the structure declares */
	bad("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	    "\"object\"}},"
	    "\"anyOf\":[{\"properties\":{\"spec\":{\"properties\":{\"x\":"
	    "{\"minLength\":1}}}}}]}",
	    "FieldValueRequired", ROOT ".properties[spec].properties[x]",
	    "Required value: because it is defined in " ROOT
	    ".anyOf[0].properties[spec].properties[x]");
}

Test(structural, metadata_at_the_root)
{
	ok("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":"
	   "\"object\","
	   "\"properties\":{\"name\":{\"type\":\"string\"},\"generateName\":"
	   "{\"type\":\"string\"}}}}}");
	bad("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":"
	    "\"object\","
	    "\"properties\":{\"labels\":{\"type\":\"object\"}}}}}",
	    "FieldValueForbidden", ROOT ".properties[metadata]",
	    "Forbidden: must not specify anything other than name and "
	    "generateName, but metadata is implicitly specified");
	bad("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":"
	    "\"string\"}}}",
	    "FieldValueInvalid", ROOT ".properties[metadata].type",
	    "Invalid value: \"string\": must be object");
	bad("{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":"
	    "\"integer\"}}}",
	    "FieldValueInvalid", ROOT ".properties[kind].type",
	    "Invalid value: \"integer\": must be string");
	bad("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":"
	    "\"object\","
	    "\"default\":{\"name\":\"x\"}}}}",
	    "FieldValueForbidden", ROOT ".properties[metadata].default",
	    "Forbidden: must not be set in top-level metadata");
}

Test(structural, embedded_resources_and_int_or_string)
{
	bad("{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"string\","
	    "\"x-kubernetes-embedded-resource\":true}}}",
	    "FieldValueInvalid", ROOT ".properties[e].type",
	    "Invalid value: \"string\": must be object if "
	    "x-kubernetes-embedded-resource is true");
	bad("{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"object\","
	    "\"x-kubernetes-embedded-resource\":true}}}",
	    "FieldValueRequired", ROOT ".properties[e].properties",
	    "Required value: must not be empty if "
	    "x-kubernetes-embedded-resource "
	    "is true without x-kubernetes-preserve-unknown-fields");
	bad("{\"type\":\"object\",\"properties\":{\"p\":{"
	    "\"x-kubernetes-int-or-string\":true,"
	    "\"x-kubernetes-preserve-unknown-fields\":true}}}",
	    "FieldValueInvalid",
	    ROOT ".properties[p].x-kubernetes-preserve-unknown-fields",
	    "Invalid value: true: must be false if x-kubernetes-int-or-string "
	    "is "
	    "true");
}

Test(structural, list_types)
{
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":"
	    "\"string\"}}},\"x-kubernetes-list-type\":\"map\","
	    "\"x-kubernetes-list-map-keys\":[\"k\"]}}}",
	    "FieldValueRequired",
	    ROOT ".properties[l].items.properties[k].default",
	    "Required value: this property is in x-kubernetes-list-map-keys, "
	    "so it "
	    "must have a default or be a required property");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\"},\"x-kubernetes-list-map-keys\":"
	    "[\"k\"]}}}",
	    "FieldValueRequired", ROOT ".properties[l].x-kubernetes-list-type",
	    "Required value: must be map if x-kubernetes-list-map-keys is "
	    "non-empty");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\"},\"x-kubernetes-list-type\":"
	    "\"map\"}}}",
	    "FieldValueRequired",
	    ROOT ".properties[l].x-kubernetes-list-map-keys",
	    "Required value: must not be empty if x-kubernetes-list-type is "
	    "map");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"required\":[\"k\"],"
	    "\"properties\":"
	    "{\"k\":{\"type\":\"string\"}}},\"x-kubernetes-list-type\":\"map\","
	    "\"x-kubernetes-list-map-keys\":[\"k\",\"z\"]}}}",
	    "FieldValueInvalid",
	    ROOT ".properties[l].x-kubernetes-list-map-keys",
	    "Invalid value: []string{\"k\", \"z\"}: entries must all be names "
	    "of "
	    "item properties");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"string\"},\"x-kubernetes-list-type\":"
	    "\"map\","
	    "\"x-kubernetes-list-map-keys\":[\"k\"]}}}",
	    "FieldValueInvalid", ROOT ".properties[l].items.type",
	    "Invalid value: \"string\": must be object if parent array's "
	    "x-kubernetes-list-type is map");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"string\"},\"x-kubernetes-list-type\":"
	    "\"bag\"}}}",
	    "FieldValueNotSupported",
	    ROOT ".properties[l].x-kubernetes-list-type",
	    "Unsupported value: \"bag\": supported values: \"atomic\", "
	    "\"set\", "
	    "\"map\"");
	bad("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
	    "\"string\"}}},\"x-kubernetes-list-type\":\"set\"}}}",
	    "FieldValueInvalid",
	    ROOT ".properties[l].items.x-kubernetes-map-type",
	    "Invalid value: \"null\": must be atomic as item of a list with "
	    "x-kubernetes-list-type=set");
	bad("{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\","
	    "\"x-kubernetes-map-type\":\"atomic\"}}}",
	    "FieldValueInvalid", ROOT ".properties[m].type",
	    "Invalid value: \"string\": must be object if "
	    "x-kubernetes-map-type "
	    "is specified");
}

Test(structural, defaults_are_pruned_and_valid)
{
	bad("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	    "\"object\","
	    "\"properties\":{\"a\":{\"type\":\"string\"}},\"default\":{\"a\":"
	    "\"x\","
	    "\"b\":1}}}}",
	    "FieldValueInvalid", ROOT ".properties[spec].default",
	    "Invalid value: map[string]interface {}{\"a\":\"x\", \"b\":1}: "
	    "must not have unknown fields");
	struct srv_error err;
	check(
	    "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\","
	    "\"maximum\":5,\"default\":7}}}",
	    false, &err);
	cr_assert_eq(err.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err, 0).field,
			 ROOT ".properties[n].default");
	cr_assert(strstr(srv_cause_get(&err, 0).message,
			 "should be less than or equal to 5"),
		  "%s", srv_cause_get(&err, 0).message);
}

Test(structural, status_subresource_restricts_the_root)
{
	bad_st(
	    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"spec\"]}],"
	    "\"properties\":{\"spec\":{\"type\":\"object\"}}}",
	    true, "FieldValueInvalid", "spec.validation.openAPIV3Schema",
	    "Invalid value: \"anyOf\": only [Description Type Format Title "
	    "Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
	    "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf "
	    "Required "
	    "Items Properties ExternalDocs Example XPreserveUnknownFields "
	    "XValidations] fields are allowed at the root of the schema if the "
	    "status subresource is enabled");
}

/* x-kubernetes-validations: kube's checks of each rule's texts, and the
   expressions compile (apiextensions validation.go,
   ValidateCustomResourceDefinitionOpenAPISchema). */
#define RULES(list)                                                            \
	"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","  \
	"\"properties\":{\"a\":{\"type\":\"integer\"}},"                       \
	"\"x-kubernetes-validations\":" list "}}}"
#define SPEC_RULE(i, leaf)                                                     \
	ROOT ".properties[spec].x-kubernetes-validations[" #i "]." leaf

Test(structural, validation_rules)
{
	ok(RULES("[{\"rule\":\"self.a > 0\",\"message\":\"m\","
		 "\"reason\":\"FieldValueForbidden\",\"fieldPath\":\".a\"}]"));
	/* CEL outside lapis's subset compiles in kube: accepted */
	ok(RULES("[{\"rule\":\"timestamp('2000-01-01T00:00:00Z')."
		 "getHours('Europe/Paris') == 1\"}]"));
	ok(RULES("[{\"rule\":\"self.a == oldSelf.value().a\","
		 "\"optionalOldSelf\":true}]"));
	bad(RULES("[{\"rule\":\" \\t\"}]"), "FieldValueRequired",
	    SPEC_RULE(0, "rule"), "Required value: rule is not specified");
	bad(RULES("[{\"rule\":\"true\",\"message\":\" \"}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "message"),
	    "Invalid value: \" \": message must be non-empty if specified");
	bad(RULES("[{\"rule\":\"true\",\"message\":\"a\\nb\"}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "message"),
	    "Invalid value: \"a\\nb\": message must not contain line breaks");
	bad(RULES("[{\"rule\":\"true ||\\nfalse\"}]"), "FieldValueRequired",
	    SPEC_RULE(0, "message"),
	    "Required value: message must be specified if rule contains line "
	    "breaks");
	bad(RULES("[{\"rule\":\"true\",\"messageExpression\":\" \"}]"),
	    "FieldValueRequired", SPEC_RULE(0, "messageExpression"),
	    "Required value: messageExpression must be non-empty if "
	    "specified");
	bad(RULES("[{\"rule\":\"true\"},{\"rule\":\"true\",\"reason\":\"x\"}]"),
	    "FieldValueNotSupported", SPEC_RULE(1, "reason"),
	    "Unsupported value: \"x\": supported values: "
	    "\"FieldValueDuplicate\", \"FieldValueForbidden\", "
	    "\"FieldValueInvalid\", \"FieldValueRequired\"");
	bad(RULES("[{\"rule\":\"true\",\"fieldPath\":\" \"}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "fieldPath"),
	    "Invalid value: \" \": fieldPath must be non-empty if specified");
	/* a fieldPath names a property or map key of the rule's node, in
	   kube's cel.ValidFieldPath forms */
	ok(RULES("[{\"rule\":\"true\",\"fieldPath\":\"['a']\"}]"));
	static const char *const bad_paths[] = {
	    ".b", "a", ".a[0]", ".a.b", ".", "['a'", "[a]", ".a]", "['b']"};
	for (size_t i = 0; i < sizeof bad_paths / sizeof *bad_paths; i++) {
		char schema[512], want[128];
		snprintf(schema, sizeof schema,
			 RULES("[{\"rule\":\"true\",\"fieldPath\":\"%s\"}]"),
			 bad_paths[i]);
		snprintf(
		    want, sizeof want,
		    "Invalid value: \"%s\": fieldPath must be a valid path",
		    bad_paths[i]);
		bad(schema, "FieldValueInvalid", SPEC_RULE(0, "fieldPath"),
		    want);
	}
	/* through maps (any key) and nested properties, escapes unquoted */
	ok("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
	   "\"properties\":{\"m\":{\"type\":\"object\","
	   "\"additionalProperties\":"
	   "{\"type\":\"object\",\"properties\":{\"it's\":{\"type\":\"string\"}"
	   "}}}},"
	   "\"x-kubernetes-validations\":[{\"rule\":\"true\",\"fieldPath\":"
	   "\".m.anykey['it\\\\'s']\"},{\"rule\":\"true\",\"fieldPath\":"
	   "\".m['x.y']\"}]}}}");
	bad(RULES("[{\"rule\":\"self.a ==\"}]"), "FieldValueInvalid",
	    SPEC_RULE(0, "rule"),
	    "Invalid value: apiextensions.ValidationRule{Rule:\"self.a ==\", "
	    "Message:\"\", MessageExpression:\"\", "
	    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
	    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
	    "failed: ERROR: <input>:1:10: Syntax error: unexpected end of "
	    "expression\n | self.a ==\n | .........^");
	bad(RULES("[{\"rule\":\"x.a == 1\"}]"), "FieldValueInvalid",
	    SPEC_RULE(0, "rule"),
	    "Invalid value: apiextensions.ValidationRule{Rule:\"x.a == 1\", "
	    "Message:\"\", MessageExpression:\"\", "
	    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
	    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
	    "failed: ERROR: <input>:1:1: undeclared reference to 'x' (in "
	    "container '')\n | x.a == 1\n | ^");
	bad(RULES("[{\"rule\":\"true\",\"messageExpression\":\"'a' +\"}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "messageExpression"),
	    "Invalid value: apiextensions.ValidationRule{Rule:\"true\", "
	    "Message:\"\", MessageExpression:\"'a' +\", "
	    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
	    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: messageExpression "
	    "compilation failed: ERROR: <input>:1:6: Syntax error: unexpected "
	    "end of expression\n | 'a' +\n | .....^");
	bad(RULES("[{\"rule\":\"self.a > 0\",\"optionalOldSelf\":false}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "optionalOldSelf"),
	    "Invalid value: false: may not be set if oldSelf is not used in "
	    "rule");
	/* a bad regex literal and a bad duration literal are compile
	   errors in kube too */
	bad(RULES("[{\"rule\":\"'a'.matches('(')\"}]"), "FieldValueInvalid",
	    SPEC_RULE(0, "rule"),
	    "Invalid value: "
	    "apiextensions.ValidationRule{Rule:\"'a'.matches('(')"
	    "\", Message:\"\", MessageExpression:\"\", "
	    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
	    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
	    "failed: ERROR: <input>:1:13: invalid matches argument\n"
	    " | 'a'.matches('(')\n"
	    " | ............^");
	/* a bad duration literal, at its argument (kube's
	   validation_test.go: <input>:1:10) */
	bad(RULES("[{\"rule\":\"duration('1d') > duration('1s')\"}]"),
	    "FieldValueInvalid", SPEC_RULE(0, "rule"),
	    "Invalid value: "
	    "apiextensions.ValidationRule{Rule:\"duration('1d') > "
	    "duration('1s')\", Message:\"\", MessageExpression:\"\", "
	    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
	    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
	    "failed: ERROR: <input>:1:10: invalid duration "
	    "argument\n | duration('1d') > duration('1s')\n | .........^");
}

/* oldSelf only where old and new values pair up: not under the items of a
   list other than a map list (kube's forbidOldSelfValidations, naming the
   outermost such list). */
Test(structural, transition_rules_need_correlatable_nodes)
{
#define LIST(lt, item)                                                         \
	"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","  \
	"\"properties\":{\"l\":{\"type\":\"array\",\"maxItems\":64" lt         \
	",\"items\":" item "}}}}}"
#define ITEM(rule)                                                             \
	"{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"},"    \
	"\"a\":{\"type\":\"string\",\"maxLength\":64,"                     \
	"\"x-kubernetes-validations\":[{\"rule\":\"" rule "\"}]}},"            \
	"\"required\":[\"k\"]}"
#define L_PATH ROOT ".properties[spec].properties[l]"
#define A_RULE L_PATH ".items.properties[a].x-kubernetes-validations[0].rule"
	/* a map list pairs its items by key */
	ok(LIST(",\"x-kubernetes-list-type\":\"map\","
		"\"x-kubernetes-list-map-keys\":[\"k\"]",
		ITEM("self == oldSelf")));
	/* and a rule that does not use oldSelf may be anywhere */
	ok(LIST("", ITEM("self != 'x'")));
	/* an atomic list (the default) cannot */
	bad(LIST("", ITEM("self == oldSelf")), "FieldValueInvalid", A_RULE,
	    "Invalid value: \"self == oldSelf\": oldSelf cannot be used on the "
	    "uncorrelatable portion of the schema within " L_PATH);
	bad(LIST(",\"x-kubernetes-list-type\":\"atomic\"",
		 ITEM("self == oldSelf")),
	    "FieldValueInvalid", A_RULE,
	    "Invalid value: \"self == oldSelf\": oldSelf cannot be used on the "
	    "uncorrelatable portion of the schema within " L_PATH);
	/* nor a set */
	bad(LIST(",\"x-kubernetes-list-type\":\"set\"",
		 "{\"type\":\"string\",\"x-kubernetes-validations\":[{\"rule\":"
		 "\"self == oldSelf\"}]}"),
	    "FieldValueInvalid",
	    L_PATH ".items.x-kubernetes-validations[0].rule",
	    "Invalid value: \"self == oldSelf\": oldSelf cannot be used on the "
	    "uncorrelatable portion of the schema within " L_PATH);
	/* a map list inside an atomic list: the outer list is named */
	bad("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	    "\"object\","
	    "\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"array\",\"x-kubernetes-list-type\":\"map\","
	    "\"x-kubernetes-list-map-keys\":[\"k\"],\"items\":" ITEM(
		"oldSelf != self") "}}}}}}",
	    "FieldValueInvalid",
	    L_PATH
	    ".items.items.properties[a].x-kubernetes-validations[0].rule",
	    "Invalid value: \"oldSelf != self\": oldSelf cannot be used on the "
	    "uncorrelatable portion of the schema within " L_PATH);
	/* the list itself may compare itself with its old value */
	ok("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
	   "\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":"
	   "\"string\"},\"x-kubernetes-validations\":[{\"rule\":"
	   "\"self.size() >= oldSelf.size()\"}]}}}}}");
#undef LIST
#undef ITEM
}

/* cel-go sizes no string() conversion but bytes': a concatenation with
   one is the largest size, past every limit, so kube refuses
   `'invalid attempts: ' + string(self.attempts)` (kubernetes#124234), and
   apiextensions' "rule invalidated by messageExpression exceeding per-CRD
   estimated cost limit" */
Test(structural, unsized_concatenation_cost)
{
	static const char *const schema =
	    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	    "\"object\",\"properties\":{\"attempts\":{\"type\":\"integer\"}},"
	    "\"x-kubernetes-validations\":[{\"rule\":\"self.attempts >= 0\","
	    "\"messageExpression\":\"'invalid attempts: ' + "
	    "string(self.attempts)\"}]}}}";
	struct srv_error err = {0};
	check(schema, false, &err);
	cr_assert_eq(err.n_causes, 3);
	cr_assert_str_eq(srv_cause_get(&err, 0).field,
			 ROOT ".properties[spec]."
			      "x-kubernetes-validations[0]."
			      "messageExpression");
	cr_assert(strstr(srv_cause_get(&err, 0).message,
			 "Forbidden: estimated messageExpression cost exceeds "
			 "budget by factor of more than 100x"));
	cr_assert_str_eq(srv_cause_get(&err, 1).message,
			 "Forbidden: contributed to estimated rule cost total "
			 "exceeding cost limit for entire OpenAPIv3 schema");
	cr_assert_str_eq(srv_cause_get(&err, 2).field, ROOT);
	/* a string whose size kube knows concatenates at its size */
	ok("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	   "\"object\",\"properties\":{\"s\":{\"type\":\"string\","
	   "\"maxLength\":10}},\"x-kubernetes-validations\":[{\"rule\":"
	   "\"true\",\"messageExpression\":\"'s is ' + self.s\"}]}}}");
}

/* kube's checker on a rule's result: a bool; a messageExpression's: a
   string. Known here from the form and the schema; dyn is let through. */
Test(structural, validation_rule_result_types)
{
#define TYPED(rule, mexp)                                                      \
	"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","  \
	"\"properties\":{\"n\":{\"type\":\"integer\"},\"b\":{\"type\":"        \
	"\"boolean\"},\"s\":{\"type\":\"string\"},\"t\":{\"type\":"            \
	"\"string\",\"format\":\"date-time\"},\"ios\":{"                       \
	"\"x-kubernetes-int-or-string\":true},\"l\":{\"type\":"                \
	"\"array\",\"items\":{\"type\":\"boolean\"}}},"                        \
	"\"x-kubernetes-validations\":[{\"rule\":\"" rule "\"" mexp "}]}}}"
	static const char *const good[] = {
	    TYPED("self.b", ""),
	    TYPED("self.n > 0 ? self.b : false", ""),
	    TYPED("self.l[0]", ""),
	    TYPED("self.l.all(x, x)", ""),
	    TYPED("self.s.startsWith('a')", ""),
	    TYPED("self.ios", ""),
	    TYPED("self.n > 0", ",\"messageExpression\":\"'n is %d'.format("
				"[self.n])\""),
	    TYPED("self.n > 0", ",\"messageExpression\":\"self.s\""),
	    TYPED("self.n > 0", ",\"messageExpression\":\"self.ios\""),
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		ok(good[i]);
	static const struct {
		const char *schema, *rule, *mexp;
	} bad_rules[] = {
	    {TYPED("self.n + 1", ""), "self.n + 1", NULL},
	    {TYPED("self.s", ""), "self.s", NULL},
	    {TYPED("self", ""), "self", NULL},
	    {TYPED("self.l", ""), "self.l", NULL},
	    {TYPED("size(self.s)", ""), "size(self.s)", NULL},
	    {TYPED("self.s.lowerAscii()", ""), "self.s.lowerAscii()", NULL},
	    {TYPED("self.l.map(x, x)", ""), "self.l.map(x, x)", NULL},
	    {TYPED("self.n > 0 ? 'a' : 'b'", ""), "self.n > 0 ? 'a' : 'b'",
	     NULL},
	    {TYPED("self.n > 0", ",\"messageExpression\":\"1\""), "self.n > 0",
	     "1"},
	    {TYPED("self.n > 0", ",\"messageExpression\":\"self.t\""),
	     "self.n > 0", "self.t"},
	};
	for (size_t i = 0; i < sizeof bad_rules / sizeof *bad_rules; i++) {
		char want[1024];
		snprintf(
		    want, sizeof want,
		    "Invalid value: apiextensions.ValidationRule{Rule:\"%s\", "
		    "Message:\"\", MessageExpression:\"%s\", "
		    "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
		    "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: %s",
		    bad_rules[i].rule,
		    bad_rules[i].mexp ? bad_rules[i].mexp : "",
		    bad_rules[i].mexp
			? "messageExpression must evaluate to a string"
			: "cel expression must evaluate to a bool");
		bad(bad_rules[i].schema, "FieldValueInvalid",
		    bad_rules[i].mexp ? SPEC_RULE(0, "messageExpression")
				      : SPEC_RULE(0, "rule"),
		    want);
	}
#undef TYPED
}

Test(structural, validation_rules_after_schema_errors)
{
	/* kube compiles no rule of a node with schema errors at or below
	   it: only the schema error */
	struct srv_error err;
	check("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
	      "\"object\",\"properties\":{\"a\":{}},"
	      "\"x-kubernetes-validations\":[{\"rule\":\"self.a ==\"}]}}}",
	      false, &err);
	char buf[8192];
	dump(&err, buf, sizeof buf);
	cr_assert_eq(err.n_causes, 1, "causes:%s", buf);
	cr_assert_str_eq(srv_cause_get(&err, 0).field,
			 ROOT ".properties[spec]"
			      ".properties[a].type",
			 "causes:%s", buf);
}

#define FIELDS(rules_at_root, spec_props, spec_rules)                          \
	"{\"type\":\"object\",\"x-kubernetes-validations\":" rules_at_root     \
	",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":"       \
	"{" spec_props "},\"x-kubernetes-validations\":" spec_rules "}}}"
/* The rule, at the root or on spec, is refused: field is undefined, the
   error at column col (cel-go's: a selection's '.', has()'s '('). */
static void undefined(bool at_root, const char *rule, const char *field,
		      int col)
{
	static const char props[] =
	    "\"a\":{\"type\":\"integer\"},\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"properties\":{\"n\":{"
	    "\"type\":\"integer\"}}}},"
	    "\"raw\":{\"x-kubernetes-preserve-unknown-fields\":true},"
	    "\"free\":{\"type\":\"object\","
	    "\"x-kubernetes-preserve-unknown-fields\":true}";
	char schema[2048], r[512], msg[1024];
	snprintf(r, sizeof r, "[{\"rule\":\"%s\"}]", rule);
	snprintf(schema, sizeof schema,
		 "{\"type\":\"object\",\"x-kubernetes-validations\":%s,"
		 "\"properties\":{\"spec\":{\"type\":\"object\","
		 "\"properties\":{%s},\"x-kubernetes-validations\":%s}}}",
		 at_root ? r : "[]", props, at_root ? "[]" : r);
	snprintf(msg, sizeof msg,
		 "Invalid value: apiextensions.ValidationRule{Rule:\"%s\", "
		 "Message:\"\", MessageExpression:\"\", "
		 "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
		 "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
		 "failed: ERROR: <input>:1:%d: undefined field '%s'\n | %s\n | "
		 "%.*s^",
		 rule, col, field, rule, col - 1,
		 "..............................");
	bad(schema, "FieldValueInvalid",
	    at_root ? ROOT ".x-kubernetes-validations[0].rule"
		    : SPEC_RULE(0, "rule"),
	    msg);
}

/* kube's type checker: a field the schema does not declare to CEL */
Test(structural, validation_rules_undefined_fields)
{
	const char *props =
	    "\"a\":{\"type\":\"integer\"},\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	    "\"integer\"}}}},\"m\":{\"type\":\"object\","
	    "\"additionalProperties\":{\"type\":\"string\"}},"
	    "\"e\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":"
	    "true,"
	    "\"x-kubernetes-preserve-unknown-fields\":true}";
	char buf[2048];
	/* declared fields, a map's keys, macro variables, a resource root's
	   apiVersion, kind, metadata.name and metadata.generateName (also
	   of an embedded resource), dyn values */
	const char *good[] = {
	    "self.a > 0 && has(self.a)",
	    "self.l.all(x, x.n > 0) && self.l[0].n > 0",
	    "self.m.anykey == 'x' && self.m.all(k, self.m[k] != '')",
	    "self.e.kind == 'Pod' && self.e.metadata.name != '' && "
	    "has(self.e.apiVersion)",
	    "self.l.exists(i, x, x.n == i)",
	    "self.?a.orValue(1) == 1",
	    "[{'q': 1}].all(x, x.q == 1)",
	    "oldSelf.a == self.a",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		snprintf(buf, sizeof buf,
			 "{\"type\":\"object\",\"properties\":{\"spec\":{"
			 "\"type\":\"object\",\"properties\":{%s},"
			 "\"x-kubernetes-validations\":[{\"rule\":\"%s\"}]}}}",
			 props, good[i]);
		ok(buf);
	}
	ok(FIELDS("[{\"rule\":\"self.metadata.name.startsWith('x') && "
		  "has(self.metadata.generateName) && self.kind != '' && "
		  "self.apiVersion != '' && self.spec.a > 0\"}]",
		  "\"a\":{\"type\":\"integer\"}", "[]"));
	undefined(false, "self.b > 0", "b", 5);
	undefined(false, "has(self.b)", "b", 4);
	undefined(false, "self.l.all(x, x.zz > 0)", "zz", 16);
	undefined(false, "self.l[0].zz > 0", "zz", 10);
	/* cel-go's checkOptSelect looks the field up as a select does */
	undefined(false, "self.?zz.orValue(1) == 1", "zz", 5);
	undefined(false, "self.l[0].?zz.hasValue()", "zz", 10);
	/* a property with no type is not declared to CEL at all, nor are
	   unknown fields of an object that keeps them */
	undefined(false, "has(self.raw)", "raw", 4);
	undefined(false, "has(self.free.x)", "x", 4);
	/* at a resource root, metadata is name and generateName only */
	undefined(true, "self.metadata.labels.size() > 0", "labels", 14);
	undefined(true, "self.status.x == 1", "status", 5);
	/* a long rule keeps its caret lines, as kube's message does */
	char rule[6000], schema[8192];
	snprintf(rule, sizeof rule, "%s",
		 "self.a > 0 && self.a > 1 && self.a > 2 && self.a > 3 && "
		 "self.a > 4 && self.a > 5 && self.a > 6 && self.a > 7 && "
		 "self.a > 8 && self.a > 9 && self.a > 10 && self.zz > 11");
	snprintf(
	    schema, sizeof schema,
	    FIELDS("[]", "\"a\":{\"type\":\"integer\"}", "[{\"rule\":\"%s\"}]"),
	    rule);
	struct srv_error err;
	check(schema, false, &err);
	cr_assert_eq(err.n_causes, 1);
	const char *m = srv_cause_get(&err, 0).message;
	cr_assert(strstr(m, "compilation failed: ERROR: <input>:1:160: "
			    "undefined field 'zz'\n | self.a > 0 && "),
		  "%s", m);
	cr_assert(strstr(m, "..^"), "%s", m);
	/* one too long for them in one cause: the whole rule, the place */
	size_t o = 0;
	for (int i = 0; i < 300; i++)
		o += (size_t)snprintf(rule + o, sizeof rule - o,
				      "self.a != %d && ", i);
	snprintf(rule + o, sizeof rule - o, "self.zz > 1");
	snprintf(
	    schema, sizeof schema,
	    FIELDS("[]", "\"a\":{\"type\":\"integer\"}", "[{\"rule\":\"%s\"}]"),
	    rule);
	check(schema, false, &err);
	cr_assert_eq(err.n_causes, 1);
	m = srv_cause_get(&err, 0).message;
	cr_assert(strstr(m, "self.a != 299 && self.zz > 1\", Message:"), "%s",
		  m);
	cr_assert(strstr(m, "undefined field 'zz'"), "%s", m);
	cr_assert_null(strchr(m, '\n'), "%s", m);
}

/* The properties the type tests' rules read, on spec. */
#define TYPE_PROPS                                                             \
	"\"a\":{\"type\":\"integer\"},\"d\":{\"type\":\"number\"},"            \
	"\"s\":{\"type\":\"string\",\"maxLength\":1000},"                      \
	"\"b\":{\"type\":\"boolean\"},"                                        \
	"\"i\":{\"x-kubernetes-int-or-string\":true},"                         \
	"\"t\":{\"type\":\"string\",\"format\":\"date-time\"},"                \
	"\"o\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"          \
	"\"string\"}}},"                                                       \
	"\"ls\":{\"type\":\"array\",\"maxItems\":10,\"items\":{\"type\":"      \
	"\"string\",\"maxLength\":10}},"                                       \
	"\"l\":{\"type\":\"array\",\"maxItems\":100,\"items\":{"               \
	"\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}}," \
	"\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"       \
	"\"string\"}}"

/* The rule on spec (optionalOldSelf set when opt) is accepted. */
static void typed_ok_as(const char *rule, bool opt)
{
	char schema[2048];
	snprintf(schema, sizeof schema,
		 FIELDS("[]", TYPE_PROPS, "[{\"rule\":\"%s\"%s}]"), rule,
		 opt ? ",\"optionalOldSelf\":true" : "");
	ok(schema);
}

static void typed_ok(const char *rule)
{
	typed_ok_as(rule, false);
}

/* The rule on spec (optionalOldSelf set when opt) is refused by kube's
   checker with msg, located at column col (from 1) with cel-go's caret
   line. */
static void mistyped_as(const char *rule, bool opt, int col, const char *msg)
{
	char schema[2048], want[2048];
	snprintf(schema, sizeof schema,
		 FIELDS("[]", TYPE_PROPS, "[{\"rule\":\"%s\"%s}]"), rule,
		 opt ? ",\"optionalOldSelf\":true" : "");
	snprintf(want, sizeof want,
		 "Invalid value: apiextensions.ValidationRule{Rule:\"%s\", "
		 "Message:\"\", MessageExpression:\"\", "
		 "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
		 "FieldPath:\"\", OptionalOldSelf:(*bool)(%s)}: compilation "
		 "failed: ERROR: <input>:1:%d: %s\n | %s\n | %.*s^",
		 rule, opt ? "0xc000a1b2c8" : "nil", col, msg, rule, col - 1,
		 "........................................");
	bad(schema, "FieldValueInvalid", SPEC_RULE(0, "rule"), want);
}

static void mistyped(const char *rule, int col, const char *msg)
{
	mistyped_as(rule, false, col, msg);
}

static void mistyped_opt(const char *rule, int col, const char *msg)
{
	mistyped_as(rule, true, col, msg);
}

static void typed_opt_ok(const char *rule)
{
	typed_ok_as(rule, true);
}

/* optionalOldSelf: kube declares oldSelf optional_type(<self's type>), so
   using it as the value itself is a type error at CRD write
   (apiextensions' TestOptionalOldSelfIsOptionalType); its own methods,
   ==, and selecting or indexing within it are not. */
Test(structural, optional_old_self_is_typed)
{
	static const char *const good[] = {
	    "!oldSelf.hasValue() || oldSelf.value().a <= self.a",
	    "oldSelf.orValue(self).s == self.s",
	    "oldSelf.a.orValue(0) <= self.a",
	    "oldSelf.ls.orValue([]).all(x, x in self.ls)",
	    "oldSelf == optional.of(self) || oldSelf != optional.none()",
	    "type(oldSelf) != int && oldSelf.ls[0].orValue('') != 'x'",
	    "oldSelf.optMap(o, o.a).orValue(0) < 5",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		typed_opt_ok(good[i]);
	mistyped_opt("oldSelf.a + self.a > 5", 11,
		     "found no matching overload for '_+_' applied to "
		     "'(optional_type(int), int)'");
	mistyped_opt("oldSelf.s == 'foo'", 11,
		     "found no matching overload for '_==_' applied to "
		     "'(optional_type(string), string)'");
	mistyped_opt("oldSelf.ls.all(x, x == x)", 8,
		     "expression of type 'optional_type(list(string))' cannot "
		     "be range of a comprehension");
	mistyped_opt("oldSelf.ls[0] == 'foo'", 15,
		     "found no matching overload for '_==_' applied to "
		     "'(optional_type(string), string)'");
	mistyped_opt("oldSelf.ls.x == 'foo'", 11,
		     "type 'list(string)' does not support field selection");
	mistyped_opt("oldSelf.a.orValue('x') == 1", 18,
		     "found no matching overload for 'orValue' applied to "
		     "'optional_type(int).(string)'");
	mistyped_opt("size(oldSelf.ls) > 0", 5,
		     "found no matching overload for 'size' applied to "
		     "'(optional_type(list(string)))'");
}

/* kube's checker on operators and functions (cel-go's overloads, with
   kube's CrossTypeNumericComparisons and HomogeneousAggregateLiterals),
   as apiextensions' validation_test.go expects it */
Test(structural, validation_rules_types)
{
	static const char *const good[] = {
	    "self.s != '' && self.a >= 1 && self.d > 0.5",
	    "self.a < 1.5 && self.d >= 1 && 1u < self.a",
	    "self.o == null || self.o.x == 'y'",
	    "self.i == 1 || self.i == 'a'",
	    "self.m['k'] == 'v' && 'k' in self.m && self.m.k == 'v'",
	    "self.ls + ['a'] == self.ls || self.ls == [] || {} == self.m",
	    "self.l.all(x, x.n > 0) && self.l.map(x, x.n).all(n, n < 5)",
	    "self.ls.exists(s, s.startsWith('x')) && size(self.ls) > 0",
	    "int(self.s) == 1 || string(self.a) == '1' || self.s.size() == 1",
	    "self.t == self.t && (self.b ? 1 : 2) == 1",
	    "[1, 2].all(x, x > 0) && ['a', 'b'].exists(x, x == 'a')",
	    "!self.b && -self.a < 0 && -self.d < 0.0",
	    "self.a % 2 == 0 && self.s + 'x' != 'y' && self.a * 2 / 3 - 1 > 0",
	    "self.s.matches('^a') && self.s.split(',').all(x, x != '')",
	    "dyn(self.a) == 'x' || self.ls[0] == 'x'",
	    "oldSelf.a == self.a && oldSelf == self",
	    "self.s.split(',', 2).join('-') == self.s.replace('a', 'b', 1)",
	    "self.s.substring(1, 2) == self.s.charAt(0) && self.ls.join() != "
	    "''",
	    /* kube's libraries, their types as their functions take them */
	    "quantity(self.s).isLessThan(quantity('1Gi')) && "
	    "quantity(self.s).add(1).sign() == 1",
	    "isQuantity(self.s) && quantity(self.s) == quantity('1')",
	    "cidr(self.s).containsIP(ip('1.2.3.4')) && "
	    "cidr(self.s).containsIP('1.2.3.4') && cidr(self.s).ip().family() "
	    "== 4",
	    "url(self.s).getHost() == 'x' && "
	    "!format.dns1123Label().validate(self.s).hasValue()",
	    "!format.named('dns1123Label').value().validate(self.s).hasValue()",
	    /* format()'s list may mix types (cel-go exempts it) */
	    "'%d %s %f'.format([self.a, self.s, 1.5]) != '' && "
	    "'%s %s'.format([[1, 'a'], {'k': 1, 'j': 'v'}]) != ''",
	    "'%s %s %s'.format([self.ls, self.m, self.o]) != '' && "
	    "'%d %x'.format([self.i, self.s]) != ''",
	    "self.s.format(['x', 1]) != ''",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		typed_ok(good[i]);
	/* cel-go's stringFormatValidator: a literal format string given a
	   list literal */
	mistyped("'%d'.format(['a']) == ''", 14,
		 "error during formatting: decimal clause can only be used on "
		 "integers, was given string");
	mistyped("'%s'.format([[quantity('1')]])", 23,
		 "error during formatting: string clause can only be used on "
		 "strings, bools, bytes, ints, doubles, maps, lists, types, "
		 "durations, and timestamps, was given kubernetes.Quantity");
	mistyped("'%s'.format([1, 2]) == ''", 12,
		 "too many arguments supplied to string.format (expected 1, "
		 "got 2)");
	mistyped("'%s %s'.format([1]) == ''", 15, "index 1 out of range");
	mistyped("'%e'.format([self.b]) == ''", 18,
		 "error during formatting: scientific clause can only be used "
		 "on doubles, was given bool");
	/* a literal keyword after '.': ANTLR's words, as cel-go's tests
	   have them */
	mistyped("self.true == 1", 6,
		 "Syntax error: mismatched input 'true' expecting IDENTIFIER");
	mistyped("self.b && self.null", 16,
		 "Syntax error: mismatched input 'null' expecting IDENTIFIER");
	/* kube's authorization library is not in a CRD rule's environment */
	mistyped("authorizer.path('/healthz').check('get').allowed()", 1,
		 "undeclared reference to 'authorizer' (in container '')");
	mistyped("self.a == 1 && request.userInfo.username == ''", 16,
		 "undeclared reference to 'request' (in container '')");
	mistyped("'x'.format(self.s) == ''", 11,
		 "found no matching overload for 'format' applied to "
		 "'string.(string)'");
	mistyped("['a', 'b'].sum() == 'c'", 15,
		 "found no matching overload for 'sum' applied to "
		 "'list(string).()'");
	mistyped("quantity(self.s) < quantity('1')", 18,
		 "found no matching overload for '_<_' applied to "
		 "'(kubernetes.Quantity, kubernetes.Quantity)'");
	mistyped(
	    "quantity(self.a) == quantity('1')", 9,
	    "found no matching overload for 'quantity' applied to '(int)'");
	mistyped("quantity(self.s).isLessThan(self.s)", 28,
		 "found no matching overload for 'isLessThan' applied to "
		 "'kubernetes.Quantity.(string)'");
	mistyped("self.s == quantity('1')", 8,
		 "found no matching overload for '_==_' applied to '(string, "
		 "kubernetes.Quantity)'");
	mistyped("ip(self.s).family() == 'x'", 21,
		 "found no matching overload for '_==_' applied to '(int, "
		 "string)'");
	mistyped("cidr(self.s).containsCIDR(ip('1.2.3.4'))", 26,
		 "found no matching overload for 'containsCIDR' applied to "
		 "'net.CIDR.(net.IP)'");
	mistyped("self.s == null", 8,
		 "found no matching overload for '_==_' applied to '(string, "
		 "null)'");
	mistyped("self.s != null", 8,
		 "found no matching overload for '_!=_' applied to '(string, "
		 "null)'");
	mistyped("self.a == 'abc'", 8,
		 "found no matching overload for '_==_' applied to '(int, "
		 "string)'");
	mistyped("self.d == 1", 8,
		 "found no matching overload for '_==_' applied to '(double, "
		 "int)'");
	mistyped("self.a + 1.5 > 0", 8,
		 "found no matching overload for '_+_' applied to '(int, "
		 "double)'");
	mistyped("self == 201", 6,
		 "found no matching overload for '_==_' applied to '(object, "
		 "int)'");
	mistyped("self.s < 1", 8,
		 "found no matching overload for '_<_' applied to '(string, "
		 "int)'");
	mistyped("self.a in ['x']", 8,
		 "found no matching overload for '@in' applied to '(int, "
		 "list(string))'");
	mistyped("self.a in self.s", 8,
		 "found no matching overload for '@in' applied to '(int, "
		 "string)'");
	mistyped("self.ls == [1]", 9,
		 "found no matching overload for '_==_' applied to "
		 "'(list(string), list(int))'");
	mistyped("[1, 'a', false].size() == 3", 5,
		 "expected type 'int' but found 'string'");
	mistyped("{'k1': 'a', 'k2': 1}.size() == 2", 19,
		 "expected type 'string' but found 'int'");
	mistyped("size(self.a) > 0", 5,
		 "found no matching overload for 'size' applied to '(int)'");
	mistyped("self.a.size() > 0", 12,
		 "found no matching overload for 'size' applied to 'int.()'");
	mistyped("self.a.startsWith('x')", 18,
		 "found no matching overload for 'startsWith' applied to "
		 "'int.(string)'");
	mistyped("self.s.endsWith(1)", 16,
		 "found no matching overload for 'endsWith' applied to "
		 "'string.(int)'");
	mistyped("self.s.substring('1') == ''", 17,
		 "found no matching overload for 'substring' applied to "
		 "'string.(string)'");
	mistyped("self.l.map(x, x.n).join(',') == ''", 24,
		 "found no matching overload for 'join' applied to "
		 "'list(int).(string)'");
	mistyped("self.a.split(',').size() > 0", 13,
		 "found no matching overload for 'split' applied to "
		 "'int.(string)'");
	mistyped("self.s.size > 0", 7,
		 "type 'string' does not support field selection");
	mistyped("self.l.n > 0", 7,
		 "type 'list(object)' does not support field selection");
	mistyped("self.s[0] == 'a'", 7,
		 "found no matching overload for '_[_]' applied to '(string, "
		 "int)'");
	mistyped("self.ls['x'] == 'a'", 8,
		 "found no matching overload for '_[_]' applied to "
		 "'(list(string), string)'");
	mistyped("!self.a", 1,
		 "found no matching overload for '!_' applied to '(int)'");
	mistyped("-self.s == 'x'", 1,
		 "found no matching overload for '-_' applied to '(string)'");
	mistyped("self.a && true", 5, "expected type 'bool' but found 'int'");
	mistyped("true || 'x'", 9, "expected type 'bool' but found 'string'");
	mistyped("self.a ? true : false", 8,
		 "found no matching overload for '_?_:_' applied to '(int, "
		 "bool, bool)'");
	mistyped("(self.b ? 1 : 'x') == 1", 9,
		 "found no matching overload for '_?_:_' applied to '(bool, "
		 "int, string)'");
	mistyped("self.l.all(x, x.n == 'a')", 19,
		 "found no matching overload for '_==_' applied to '(int, "
		 "string)'");
	mistyped("self.a.all(x, x > 0)", 5,
		 "expression of type 'int' cannot be range of a comprehension "
		 "(must be list, map, or dynamic)");
	mistyped("self.a == oldSelf.s", 8,
		 "found no matching overload for '_==_' applied to '(int, "
		 "string)'");
	/* an optional oldSelf (optionalOldSelf) is not self's type */
	ok(FIELDS("[]", TYPE_PROPS,
		  "[{\"rule\":\"oldSelf.orValue(self) == self\","
		  "\"optionalOldSelf\":true}]"));
	/* of several, the first in the text */
	mistyped("self.s == 1 && self.a == 's'", 8,
		 "found no matching overload for '_==_' applied to '(string, "
		 "int)'");
}

/* kube's cost estimate of a rule on a schema (apiextensions'
   TestCostEstimation table: the schema, the rule, kube's MaxCost), and
   whether lapis's floor models it exactly. */
static void cost_case(const char *schema, const char *rule, double kube,
		      bool exact)
{
	json_error_t je;
	json_t *s = json_loads(schema, 0, &je);
	cr_assert_not_null(s, "%s: %s", schema, je.text);
	bool is_exact;
	double floor = srv_rule_cost_floor(s, rule, false, &is_exact);
	json_decref(s);
	cr_assert_geq(floor, 0, "%s on %s does not compile", rule, schema);
	cr_assert_leq(floor, kube, "%s on %s: floor %.0f over kube's %.0f",
		      rule, schema, floor, kube);
	/* what lapis calls exact is kube's figure */
	cr_assert(!is_exact || floor == kube, "%s on %s: %.0f, kube %.0f", rule,
		  schema, floor, kube);
	cr_assert_eq(is_exact, exact, "%s on %s: exact %d", rule, schema,
		     is_exact);
}

#define ARR(t, extra)                                                          \
	"{\"type\":\"array\",\"items\":{\"type\":\"" t "\"}" extra "}"
#define MAP(t, extra)                                                          \
	"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"" t         \
	"\"}" extra "}"
#define STR(extra) "{\"type\":\"string\"" extra "}"

/* lapis's floor never passes kube's estimate, and meets it where lapis
   models it all */
Test(structural, rule_cost_floor_under_kube)
{
	cost_case(ARR("number", ""), "self.all(x, true)", 4718591, true);
	cost_case(ARR("number", ",\"maxItems\":10"), "self.all(x, true)", 32,
		  true);
	cost_case(ARR("string", ""), "self.all(x, true)", 3145727, true);
	cost_case(ARR("string", ",\"maxItems\":20"), "self.all(x, true)", 62,
		  true);
	cost_case(ARR("boolean", ""), "self.all(x, true)", 1887437, true);
	cost_case("{\"type\":\"array\",\"items\":{\"type\":\"object\","
		  "\"properties\":{\"required\":{\"type\":\"string\"},"
		  "\"optional\":{\"type\":\"string\"}},"
		  "\"required\":[\"required\"]}}",
		  "self.all(x, true)", 555128, true);
	cost_case(MAP("number", ""), "self.all(x, true)", 1348169, true);
	cost_case(MAP("number", ",\"maxProperties\":10"), "self.all(x, true)",
		  32, true);
	cost_case(MAP("string", ""), "self.all(x, true)", 1179647, true);
	/* kube's table leaves the cost of has() unchecked (0); its
	   TestCelEstimatedCostStability prices has(self.val1) at 1: self */
	cost_case(MAP("number", ""), "has(self.x)", 1, true);
	cost_case(STR(""), "self.contains('test')", 314574, true);
	cost_case(STR(",\"maxLength\":10"), "self.contains('test')", 5, true);
	cost_case(STR(""), "self.startsWith('test')", 2, true);
	cost_case(STR(""), "self.endsWith('test')", 2, true);
	cost_case(STR(""), "size(self + \"hello\") > size(\"hello\")", 314578,
		  true);
	cost_case(STR(",\"maxLength\":4"),
		  "size(self + \"hello\") > size(\"hello\")", 7, true);
	cost_case(ARR("number", ""), "self[1] == 0.0", 2, true);
	cost_case(ARR("string", ""), "self[1] == self[1]", 314577, true);
	cost_case(ARR("number", ",\"maxItems\":10"),
		  "self.all(x, self.all(y, true))", 352, true);
	cost_case(ARR("number", ",\"maxItems\":10"),
		  "self.all(x, self.all(y, self.all(z, true)))", 3552, true);
	cost_case(STR(""), "self.matches(\"x\")", 314574, true);
	cost_case(STR(",\"maxLength\":50"), "self.matches(\"x\")", 22, true);
	cost_case(STR(""), "\"\".matches(\"(((((((((())))))))))[0-9]\")", 7,
		  true);
	cost_case(STR(""), "self.matches(\"\")", 1, true);
	cost_case(STR(""), "self == \"x\"", 2, true);
	cost_case(STR(",\"maxLength\":0"), "self == \"x\"", 1, true);
	cost_case(ARR("number", ",\"maxItems\":6291456"),
		  "self.all(x, x == 0.0)", 25165826, true);
	cost_case(ARR("integer", ""), "self[0] == 5", 2, true);
	cost_case(MAP("integer", ""), "oldSelf.size() == self.size()", 5, true);
	cost_case(MAP("string\",\"format\":\"date-time", ""),
		  "self[\"a\"] == self[\"b\"]", 8, true);
	cost_case(MAP("string\",\"format\":\"duration", ""),
		  "self[\"c\"] == self[\"d\"]", 8, true);
	cost_case(STR(",\"enum\":[\"A\",\"B\",\"C\",\"LongValue\"]"),
		  "self.contains('A')", 2, true);
	cost_case(STR(",\"enum\":[\"A\",\"B\",\"C\",\"LongValue\"],"
		      "\"maxLength\":1000"),
		  "self.contains('A')", 401, true);
	cost_case(STR(""), "self.lowerAscii() == 'lower!'", 314575, true);
	cost_case(STR(",\"maxLength\":10"), "self.lowerAscii() == 'lower!'", 6,
		  true);
}

#define LISTMAP                                                                \
	"{\"type\":\"object\",\"properties\":{\"listMap\":{\"type\":"          \
	"\"array\","                                                           \
	"\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":["  \
	"\"k\"],"                                                              \
	"\"items\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":"      \
	"\"string\"},\"v\":{\"type\":\"string\"},\"v2\":{\"type\":\"string\"}" \
	"}}}}}"
#define OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"

/* Rows of apiextensions' TestCelEstimatedCostStability (Kubernetes
   1.33): the macros, presence tests, the libraries; and of apiserver's
   library cost tests, whose arguments are literals */
Test(structural, rule_cost_macros_and_libraries)
{
	cost_case(LISTMAP, "self.listMap.exists(m, m.k.endsWith('1'))", 7340028,
		  true);
	cost_case(LISTMAP, "self.listMap.exists_one(m, m.k == 'a3')", 5242879,
		  true);
	cost_case(LISTMAP, "size(self.listMap.filter(m, m.k == 'a1')) == 1",
		  16777215, true);
	/* a variable over a computed list is sized as self is (kube's
	   sizeEstimator skips a path's first step): here 0, so == costs 0 */
	cost_case(LISTMAP, "self.listMap.map(m, m.v).exists(v, v == 'b1')",
		  19922939, true);
	cost_case(LISTMAP,
		  "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() "
		  "== 1",
		  18874365, true);
	cost_case(OBJ("\"array\":{\"type\":\"array\",\"items\":{\"type\":"
		      "\"integer\"}}"),
		  "self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == "
		  "60)",
		  53477367, true);
	cost_case(OBJ("\"val\":" MAP("integer", "")),
		  "self.val.exists_one(k, self.val[k] == 2)", 2696338, true);
	cost_case(OBJ("\"val1\":" MAP("string", "")), "'k1' in self.val1", 3,
		  true);
	cost_case(OBJ("\"a1\":" OBJ("\"b1\":" OBJ("\"c1\":{\"type\":"
						  "\"integer\"}"))),
		  "has(self.a1.b1.c1)", 3, true);
	cost_case(OBJ("\"val1\":{\"type\":\"integer\"}"),
		  "type(self.val1) == int", 4, true);
	cost_case(OBJ("\"val1\":{\"type\":\"string\",\"format\":\"duration\"}"),
		  "self.val1.getHours() == 1", 4, true);
	cost_case(OBJ("\"val1\":{\"type\":\"string\",\"format\":\"duration\"}"),
		  "self.val1 == duration('1h2m') + duration('3s4ms')", 6, true);
	cost_case(OBJ("\"val1\":{\"type\":\"string\"}"),
		  "self.val1.indexOf('o') == 1", 314576, true);
	cost_case(OBJ("\"val4\":{\"type\":\"number\"}"),
		  "string(self.val4) == '10.5'", 4, true);
	cost_case(OBJ("\"val6\":{\"type\":\"string\"},\"val7\":{\"type\":"
		      "\"string\",\"format\":\"byte\"}"),
		  "bytes(self.val6) == self.val7", 629150, true);
	cost_case(OBJ("\"val1\":{\"type\":\"string\"}"),
		  "isQuantity(self.val1)", 314575, true);
	cost_case(OBJ("\"val1\":{\"type\":\"string\"},\"val2\":{\"type\":"
		      "\"string\"}"),
		  "quantity(self.val1).isLessThan(quantity(self.val2))", 629151,
		  true);
	cost_case(OBJ(""),
		  "quantity(\"200M\") == quantity(\"0.2G\") && "
		  "quantity(\"0.2G\") == quantity(\"200M\")",
		  6, true);
	cost_case(OBJ(""),
		  "quantity(\"200M\").compareTo(quantity(\"0.2G\")) == 0", 4,
		  true);
	cost_case(OBJ(""), "ip('192.168.0.1').family() == 4", 4, true);
	cost_case(OBJ(""), "ip('192.168.0.1') == ip('192.168.0.1')", 5, true);
	cost_case(OBJ(""),
		  "ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8,
		  true);
	cost_case(OBJ(""),
		  "cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))",
		  11, true);
	cost_case(OBJ(""), "cidr('192.168.0.0/16').containsIP('192.169.0.1')",
		  8, true);
	cost_case(OBJ(""), "url('https:://kubernetes.io/').getScheme() == 'x'",
		  5, true);
	/* an optional field: _?._ 1, orValue 1, a string kube cannot size
	   against 'a' */
	cost_case(OBJ("\"o\":" OBJ("\"f\":{\"type\":\"string\"}")),
		  "self.o.?f.orValue('v') == 'a'", 5, true);
	cost_case(
	    OBJ("\"val1\":{\"type\":\"string\"}"),
	    "self.val1.replace(' ', 'x') == 'Rookxtakesx\xf0\x9f\x91\x91'",
	    629150, true);
	cost_case(
	    OBJ("\"val1\":{\"type\":\"string\"}"),
	    "self.val1.split(' ', 2) == ['Rook', 'takes \xf0\x9f\x91\x91']",
	    629159, true);
	/* two-variable comprehensions (apiserver's library cost tests) */
	cost_case(OBJ(""), "{'a': 1, 'b': 2}.all(k, v, v > 0)", 41, true);
	cost_case(OBJ(""), "{'a': 1, 'b': 2}.exists(k, v, v > 0)", 43, true);
	cost_case(OBJ(""), "{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 40, true);
	cost_case(OBJ(""), "{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71,
		  true);
	cost_case(OBJ(""), "{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)",
		  75, true);
	cost_case(OBJ(""),
		  "{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131,
		  true);
	cost_case(OBJ(""),
		  "{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})",
		  135, true);
	cost_case(OBJ(""), "[1, 2].all(i, v, v > 0)", 21, true);
	/* cel-go's sets: one list's size times the other's (equivalent
	   twice), and 1 */
	cost_case(OBJ("\"l\":" ARR("string", ",\"maxItems\":10")),
		  "sets.contains(self.l, ['a', 'b'])", 33, true);
	cost_case(OBJ(""), "sets.contains([1, 2, 3, 4], [2, 3])", 29, true);
	cost_case(OBJ(""), "sets.equivalent([1], [1, 1])", 25, true);
	cost_case(OBJ("\"l\":" ARR("string", ",\"maxItems\":10")),
		  "sets.equivalent(self.l, ['a'])", 33, true);
	/* an embedded resource's kind and metadata.name, which kube adds
	   as strings without maxLength */
	cost_case(OBJ("\"embedded\":{\"type\":\"object\","
		      "\"x-kubernetes-embedded-resource\":true}"),
		  "self.embedded.kind == 'Pod'", 4, true);
	cost_case(OBJ("\"embedded\":{\"type\":\"object\","
		      "\"x-kubernetes-embedded-resource\":true}"),
		  "self.embedded.metadata.generateName == 'pickItForMe'", 6,
		  true);
	/* optMap: the target twice, a bind's empty range, three calls */
	cost_case(OBJ(""),
		  "optional.of([1, 2, 3, 4, 5]).optMap(v, v.size()).hasValue()",
		  38, true);
	/* what lapis does not model stays a floor: here the size of v, an
	   optional's string */
	cost_case(OBJ(""),
		  "optional.of('a').optMap(v, v == 'value').hasValue()", 18,
		  false);
	cost_case(OBJ(""), "type(self) == type(self)", 1844674407370955264.0,
		  false);
}

/* kube refuses a rule whose estimate passes its budget; lapis refuses it
   where its floor passes the budget a hundredfold, with kube's words */
Test(structural, rules_over_cost_budget)
{
	static const char msg[] =
	    "Forbidden: estimated rule cost exceeds budget by factor of more "
	    "than 100x (try simplifying the rule, or adding maxItems, "
	    "maxProperties, and maxLength where arrays, maps, and strings are "
	    "declared)";
	/* O(n^2) over an unbounded list */
	bad(FIELDS("[]", "\"l\":{\"type\":\"array\",\"items\":{\"type\":"
			 "\"integer\"}}",
		   "[{\"rule\":\"self.l.all(x, self.l.all(y, x <= y))\"}]"),
	    "FieldValueForbidden", SPEC_RULE(0, "rule"), msg);
	/* a regex over unbounded strings of an unbounded list: the rule's
	   cost times how often its node can occur */
	bad(FIELDS("[]",
		   "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		   "\"x-kubernetes-validations\":[{\"rule\":"
		   "\"self.matches('^[a-z]+$')\"}]}}",
		   "[]"),
	    "FieldValueForbidden",
	    ROOT ".properties[spec].properties[l].items.x-kubernetes-"
		 "validations[0].rule",
	    msg);
	/* past the whole schema's limit a hundredfold too: the costliest
	   rules are named, then the schema */
	const char *quadratic = FIELDS(
	    "[]", "\"l\":{\"type\":\"array\",\"items\":{\"type\":"
		  "\"integer\"}}",
	    "[{\"rule\":\"self.l.all(x, self.l.all(y, x <= y))\"}]");
	bad(quadratic, "FieldValueForbidden", SPEC_RULE(0, "rule"),
	    "Forbidden: contributed to estimated rule cost total exceeding "
	    "cost limit for entire OpenAPIv3 schema");
	bad(quadratic, "FieldValueForbidden", ROOT,
	    "Forbidden: x-kubernetes-validations estimated rule cost total "
	    "for entire OpenAPIv3 schema exceeds budget by factor of more "
	    "than 100x (try simplifying the rule, or adding maxItems, "
	    "maxProperties, and maxLength where arrays, maps, and strings are "
	    "declared)");
	/* where lapis's figure is kube's own, the factor is kube's too: a
	   regex over strings of 64 runes (256 bytes), each string one of as
	   many as a request holds */
	static const char by[] =
	    "Forbidden: estimated rule cost exceeds budget by factor of %s "
	    "(try simplifying the rule, or adding maxItems, maxProperties, "
	    "and maxLength where arrays, maps, and strings are declared)";
	char want[512];
	snprintf(want, sizeof want, by, "5.6x");
	bad(FIELDS("[]",
		   "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		   "\"maxLength\":64,\"x-kubernetes-validations\":[{\"rule\":"
		   "\"self.matches('^[a-z]+$')\"}]}}",
		   "[]"),
	    "FieldValueForbidden",
	    ROOT ".properties[spec].properties[l].items.x-kubernetes-"
		 "validations[0].rule",
	    want);
	/* under 1.5x, six decimals (Go's %f): (2 + 3 x 3) x 1048576 */
	snprintf(want, sizeof want, by, "1.153434x");
	bad(FIELDS("[]",
		   "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		   "\"maxLength\":6,\"x-kubernetes-validations\":[{\"rule\":"
		   "\"self.contains(self)\"}]}}",
		   "[]"),
	    "FieldValueForbidden",
	    ROOT ".properties[spec].properties[l].items.x-kubernetes-"
		 "validations[0].rule",
	    want);
	/* exists() over 1048576 strings of 64 runes: 2 + 1 + (4 + 1 +
	   26 x 2) each, 5.98 times the budget */
	snprintf(want, sizeof want, by, "6.0x");
	bad(FIELDS(
		"[]",
		"\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		"\"maxLength\":64}}",
		"[{\"rule\":\"self.l.exists(x, x.contains('abcdefghijk'))\"}]"),
	    "FieldValueForbidden", SPEC_RULE(0, "rule"), want);
	/* a quantity parsed from each of 1048576 unbounded strings:
	   2 + 1 + (3 + 1 + 314573) each */
	snprintf(want, sizeof want, by, "more than 100x");
	bad(FIELDS("[]",
		   "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
		   "[{\"rule\":\"self.l.all(x, isQuantity(x))\"}]"),
	    "FieldValueForbidden", SPEC_RULE(0, "rule"), want);
	/* and (2 + 2 x 2) x 1048576 is under the budget */
	ok(FIELDS("[]",
		  "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
		  "\"maxLength\":5,\"x-kubernetes-validations\":[{\"rule\":"
		  "\"self.contains(self)\"}]}}",
		  "[]"));
	/* bounded, the same rules pass */
	ok(FIELDS("[]",
		  "\"l\":{\"type\":\"array\",\"maxItems\":100,\"items\":{\"type\":"
		  "\"integer\"}}",
		  "[{\"rule\":\"self.l.all(x, self.l.all(y, x <= y))\"}]"));
	ok(FIELDS("[]",
		  "\"l\":{\"type\":\"array\",\"maxItems\":100,\"items\":{"
		  "\"type\":\"string\",\"maxLength\":63,"
		  "\"x-kubernetes-validations\":[{\"rule\":"
		  "\"self.matches('^[a-z]+$')\"}]}}",
		  "[]"));
	/* a messageExpression is judged alone */
	bad(FIELDS("[]",
		   "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
		   "[{\"rule\":\"true\",\"messageExpression\":\"self.l.map(x, "
		   "self.l.map(y, x + y)).size() > 0 ? 'a' : 'b'\"}]"),
	    "FieldValueForbidden", SPEC_RULE(0, "messageExpression"),
	    "Forbidden: estimated messageExpression cost exceeds budget by "
	    "factor of more than 100x (try simplifying the rule, or adding "
	    "maxItems, maxProperties, and maxLength where arrays, maps, and "
	    "strings are declared)");
}

/* Schema with rule on spec checked as an update from a CRD whose one
   version's schema is old_schema (NULL: a create). */
static int causes_after(const char *rule, const char *old_schema)
{
	char schema[2048];
	snprintf(schema, sizeof schema,
		 FIELDS("[]", TYPE_PROPS, "[{\"rule\":\"%s\"}]"), rule);
	json_t *s = js(schema);
	json_t *old = NULL;
	if (old_schema)
		old = json_pack("{s:{s:[{s:{s:o}}]}}", "spec", "versions",
				"schema", "openAPIV3Schema", js(old_schema));
	struct srv_error err;
	memset(&err, 0, sizeof err);
	srv_schema_check_crd(s, "spec.validation", false, old, &err);
	json_decref(s);
	json_decref(old);
	return err.n_causes;
}

/* kube 1.33 compiles a rule the CRD did not have before the update for
   compatibility version 1.32, before its semver library; one it had (in
   any version, at any node, as a rule) with every library. */
Test(structural, semver_only_in_stored_rules)
{
	const char *rule = "semver(self.s).isLessThan(semver('1.0.0')) && "
			   "semver(self.s, true).major() > 0";
	mistyped(rule, 7, "undeclared reference to 'semver' (in container '')");
	mistyped("isSemver(self.s)", 9,
		 "undeclared reference to 'isSemver' (in container '')");
	mistyped("self.a.major() == 1", 13,
		 "undeclared reference to 'major' (in container '')");
	char old[2048];
	snprintf(old, sizeof old,
		 "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
		 "\"array\",\"items\":{\"type\":\"string\",\"x-kubernetes-"
		 "validations\":[{\"rule\":\"%s\"}]}}}}",
		 rule);
	cr_expect_eq(causes_after(rule, old), 0,
		     "a rule the old CRD had is a stored expression");
	cr_expect_eq(causes_after(rule, NULL), 1);
	snprintf(old, sizeof old,
		 "{\"type\":\"object\",\"x-kubernetes-validations\":[{"
		 "\"rule\":\"true\",\"messageExpression\":\"%s\"}]}",
		 rule);
	cr_expect_eq(causes_after(rule, old), 1,
		     "the old CRD's messageExpressions are not its rules");
	cr_expect_eq(causes_after(rule, "{\"type\":\"object\"}"), 1);
}
