/*
 * test_openapiv2.c -- server/openapiv2.c: a Swagger 2.0 JSON document as
 * gnostic's openapi_v2.Document in protobuf. The bytes are read back with a
 * small wire reader here and checked field by field (the numbers of
 * OpenAPIv2.proto), as kubectl 1.27's query parameter verifier walks them:
 * paths -> path item -> patch -> parameters -> query parameter name, and
 * the x-kubernetes-group-version-kind extension as YAML; and the
 * definitions, each v3 schema in the v2 form kube publishes and kubectl's
 * v2 reader (kube-openapi's proto package) accepts.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../server/openapiv2.h"

struct span {
	const uint8_t *p;
	size_t n;
};

static bool varint(struct span *s, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; sh < 64 && s->n; sh += 7) {
		uint8_t b = *s->p++;
		s->n--;
		*v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The k-th (0-based) occurrence of field `field` in message m: its bytes
   (wire type 2) or, for wire type 0, its value in *val. Fails the test on
   malformed wire data. */
static bool find(struct span m, unsigned field, int k, struct span *out,
		 uint64_t *val)
{
	while (m.n) {
		uint64_t tag, len = 0;
		cr_assert(varint(&m, &tag), "truncated tag");
		unsigned wt = (unsigned)(tag & 7);
		cr_assert(wt == 0 || wt == 1 || wt == 2, "wire type %u", wt);
		if (wt == 0) {
			cr_assert(varint(&m, &len), "truncated varint");
		} else if (wt == 1) { /* fixed64: its 8 bytes as a span */
			cr_assert(m.n >= 8, "truncated fixed64");
			len = 8;
		} else {
			cr_assert(varint(&m, &len) && len <= m.n, "bad length");
		}
		if ((tag >> 3) == field && k-- == 0) {
			if (wt != 0)
				*out = (struct span){m.p, (size_t)len};
			else if (val)
				*val = len;
			return true;
		}
		if (wt != 0) {
			m.p += len;
			m.n -= len;
		}
	}
	return false;
}

static struct span sub(struct span m, unsigned field, int k)
{
	struct span out = {0};
	cr_assert(find(m, field, k, &out, NULL), "no field %u #%d", field, k);
	return out;
}

static bool str_is(struct span s, const char *want)
{
	return s.n == strlen(want) && !memcmp(s.p, want, s.n);
}

static json_t *doc(void)
{
	json_error_t e;
	json_t *d = json_loads(
	    "{\"swagger\":\"2.0\",\"info\":{\"title\":\"Kubernetes\","
	    "\"version\":\"v1.33.0\"},\"paths\":{"
	    "\"/api/v1/namespaces/{namespace}/configmaps/{name}\":{"
	    "\"get\":{\"x-kubernetes-action\":\"get\"},"
	    "\"patch\":{\"consumes\":[\"application/merge-patch+json\"],"
	    "\"parameters\":[{\"name\":\"fieldValidation\",\"in\":\"query\","
	    "\"type\":\"string\",\"uniqueItems\":true},"
	    "{\"name\":\"body\",\"in\":\"body\"},"
	    "{\"name\":\"name\",\"in\":\"path\",\"type\":\"string\","
	    "\"required\":true}],"
	    "\"responses\":{\"200\":{\"description\":\"OK\"}},"
	    "\"x-kubernetes-action\":\"patch\","
	    "\"x-kubernetes-group-version-kind\":{\"group\":\"\","
	    "\"kind\":\"ConfigMap\",\"version\":\"v1\"}}}},"
	    "\"definitions\":{}}",
	    0, &e);
	cr_assert_not_null(d, "%s", e.text);
	return d;
}

Test(openapiv2, document_fields)
{
	json_t *d = doc();
	size_t n = 0;
	unsigned char *b = srv_openapi_v2_pb(d, &n);
	json_decref(d);
	cr_assert_not_null(b);
	struct span m = {b, n};
	cr_assert(str_is(sub(m, 1, 0), "2.0"));
	struct span info = sub(m, 2, 0);
	cr_assert(str_is(sub(info, 1, 0), "Kubernetes"));
	cr_assert(str_is(sub(info, 2, 0), "v1.33.0"));
	struct span paths = sub(m, 8, 0);
	struct span named = sub(paths, 2, 0);
	cr_assert(str_is(sub(named, 1, 0),
			 "/api/v1/namespaces/{namespace}/configmaps/{name}"));
	struct span item = sub(named, 2, 0);
	struct span get = sub(item, 2, 0);
	struct span ext = sub(get, 13, 0);
	cr_assert(str_is(sub(ext, 1, 0), "x-kubernetes-action"));
	/* YAML text, as gnostic writes an Any */
	cr_assert(str_is(sub(sub(ext, 2, 0), 2, 0), "get\n"));
	struct span patch = sub(item, 8, 0);
	cr_assert(str_is(sub(patch, 7, 0), "application/merge-patch+json"));
	/* the query parameter: ParametersItem.parameter.non_body_parameter.
	   query_parameter_sub_schema */
	struct span q = sub(sub(sub(sub(patch, 8, 0), 1, 0), 2, 0), 3, 0);
	cr_assert(str_is(sub(q, 4, 0), "fieldValidation"));
	cr_assert(str_is(sub(q, 2, 0), "query"));
	cr_assert(str_is(sub(q, 6, 0), "string"));
	uint64_t v = 0;
	cr_assert(find(q, 20, 0, NULL, &v) && v == 1, "uniqueItems");
	/* the body parameter is left out; the path one is next */
	struct span p = sub(sub(sub(sub(patch, 8, 1), 1, 0), 2, 0), 4, 0);
	cr_assert(str_is(sub(p, 4, 0), "name"));
	cr_assert(str_is(sub(p, 5, 0), "string"));
	cr_assert(find(p, 1, 0, NULL, &v) && v == 1, "required");
	struct span dummy;
	cr_assert(!find(patch, 8, 2, &dummy, NULL), "two parameters only");
	/* responses: 200 OK */
	struct span rv = sub(sub(patch, 9, 0), 1, 0);
	cr_assert(str_is(sub(rv, 1, 0), "200"));
	cr_assert(str_is(sub(sub(sub(rv, 2, 0), 1, 0), 1, 0), "OK"));
	/* the group-version-kind, as YAML (gnostic's Any text) */
	struct span gvk = sub(patch, 13, 1);
	cr_assert(str_is(sub(gvk, 1, 0), "x-kubernetes-group-version-kind"));
	cr_assert(str_is(sub(sub(gvk, 2, 0), 2, 0),
			 "group: \"\"\nkind: ConfigMap\nversion: v1\n"));
	free(b);
}

Test(openapiv2, odd_shapes)
{
	size_t n = 7;
	cr_assert_null(srv_openapi_v2_pb(NULL, &n));
	json_t *a = json_array();
	cr_assert_null(srv_openapi_v2_pb(a, &n));
	json_decref(a);
	/* an empty object: an empty Document */
	json_t *o = json_object();
	unsigned char *b = srv_openapi_v2_pb(o, &n);
	cr_assert_not_null(b);
	cr_assert_eq(n, 0);
	free(b);
	json_decref(o);
	/* members of the wrong types are left out, not followed */
	json_error_t e;
	json_t *d = json_loads(
	    "{\"swagger\":2,\"info\":[],\"paths\":{\"/x\":{\"get\":[],"
	    "\"patch\":{\"parameters\":{},\"responses\":[],\"consumes\":\"a\","
	    "\"x-y\":null}},\"/y\":3}}",
	    0, &e);
	cr_assert_not_null(d, "%s", e.text);
	b = srv_openapi_v2_pb(d, &n);
	cr_assert_not_null(b);
	struct span m = {b, n};
	struct span item = sub(sub(sub(m, 8, 0), 2, 0), 2, 0);
	struct span patch = sub(item, 8, 0);
	struct span ext = sub(patch, 13, 0);
	cr_assert(str_is(sub(sub(ext, 2, 0), 2, 0), "null\n"));
	struct span dummy;
	cr_assert(!find(item, 2, 0, &dummy, NULL), "no get");
	cr_assert(!find(m, 1, 0, &dummy, NULL), "no swagger");
	free(b);
	json_decref(d);
}

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	cr_assert_not_null(v, "%s: %s", text, e.text);
	return v;
}

/* v2 of the v3 schema `in` equals `want` (both JSON text). */
static void v2_is(const char *in, const char *want)
{
	json_t *v3 = load(in), *w = load(want);
	json_t *got = srv_openapi_v2_schema(v3);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
	cr_assert(json_equal(got, w), "%s\n-> %s\nwant %s", in, g, want);
	free(g);
	json_decref(got);
	json_decref(w);
	json_decref(v3);
}

Test(openapiv2, v2_schemas)
{
	/* a reference wrapped in allOf for its siblings stands alone, in
	   #/definitions/, with its description; its default goes */
	v2_is("{\"allOf\":[{\"$ref\":\"#/components/schemas/a.B\"}],"
	      "\"default\":{},\"description\":\"d\"}",
	      "{\"$ref\":\"#/definitions/a.B\",\"description\":\"d\"}");
	v2_is(
	    "{\"$ref\":\"#/components/schemas/a.B\",\"type\":\"object\","
	    "\"properties\":{\"x\":{}},\"x-kubernetes-list-type\":\"atomic\"}",
	    "{\"$ref\":\"#/definitions/a.B\","
	    "\"x-kubernetes-list-type\":\"atomic\"}");
	/* value validations kept; junctors dropped */
	v2_is("{\"type\":\"integer\",\"minimum\":0,\"maximum\":9,"
	      "\"multipleOf\":2,\"enum\":[2,4],\"anyOf\":[{\"minimum\":1}],"
	      "\"oneOf\":[{}],\"not\":{},\"allOf\":[{},{}]}",
	      "{\"type\":\"integer\",\"minimum\":0,\"maximum\":9,"
	      "\"multipleOf\":2,\"enum\":[2,4]}");
	/* nullable: no type, items or properties; its name leaves the
	   parent's required */
	v2_is("{\"type\":\"object\",\"required\":[\"n\",\"k\"],"
	      "\"properties\":{\"n\":{\"type\":\"array\",\"nullable\":true,"
	      "\"items\":{\"type\":\"string\"}},\"k\":{\"type\":\"string\"}}}",
	      "{\"type\":\"object\",\"required\":[\"k\"],"
	      "\"properties\":{\"n\":{},\"k\":{\"type\":\"string\"}}}");
	v2_is("{\"type\":\"object\",\"required\":[\"n\"],\"properties\":"
	      "{\"n\":{\"type\":\"string\",\"nullable\":true}}}",
	      "{\"type\":\"object\",\"properties\":{\"n\":{}}}");
	v2_is(
	    "{\"type\":\"object\",\"required\":[\"a\"],"
	    "\"additionalProperties\":{\"type\":\"string\",\"nullable\":true}}",
	    "{\"type\":\"object\",\"additionalProperties\":{}}");
	/* preserving unknown fields: no items or properties, no object
	   type; an array so left without items loses its type */
	v2_is("{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":"
	      "true,\"properties\":{\"a\":{\"type\":\"string\"}}}",
	      "{\"x-kubernetes-preserve-unknown-fields\":true}");
	v2_is("{\"type\":\"array\",\"x-kubernetes-preserve-unknown-fields\":"
	      "true,\"items\":{\"type\":\"string\"}}",
	      "{\"x-kubernetes-preserve-unknown-fields\":true}");
	v2_is("{\"type\":\"string\",\"x-kubernetes-preserve-unknown-fields\":"
	      "true}",
	      "{\"type\":\"string\",\"x-kubernetes-preserve-unknown-fields\":"
	      "true}");
	/* int-or-string: a CRD field is any value, kube's IntOrString a
	   string of that format */
	v2_is("{\"x-kubernetes-int-or-string\":true,\"anyOf\":[{\"type\":"
	      "\"integer\"},{\"type\":\"string\"}]}",
	      "{\"x-kubernetes-int-or-string\":true}");
	v2_is("{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"string\"}],"
	      "\"format\":\"int-or-string\"}",
	      "{\"type\":\"string\",\"format\":\"int-or-string\"}");
	/* the rules apply all the way down, through items and maps */
	v2_is("{\"type\":\"array\",\"items\":{\"type\":\"object\","
	      "\"additionalProperties\":{\"allOf\":[{\"$ref\":"
	      "\"#/components/schemas/c.D\"}]},\"nullable\":false}}",
	      "{\"type\":\"array\",\"items\":{\"type\":\"object\","
	      "\"additionalProperties\":{\"$ref\":\"#/definitions/c.D\"}}}");
	/* not a schema: an empty one */
	v2_is("[1]", "{}");
}

/* The definitions reach the protobuf document with every Schema member
   kubectl reads, at its field number. */
Test(openapiv2, definitions)
{
	json_t *d =
	    load("{\"swagger\":\"2.0\",\"definitions\":{\"a.v1.K\":{"
		 "\"description\":\"K is\",\"type\":\"object\","
		 "\"required\":[\"spec\"],\"properties\":{"
		 "\"spec\":{\"$ref\":\"#/definitions/a.v1.S\"},"
		 "\"n\":{\"type\":\"integer\",\"format\":\"int32\","
		 "\"minimum\":-1.5,\"maximum\":10,\"exclusiveMaximum\":true,"
		 "\"default\":3,\"enum\":[1,\"a b\"]},"
		 "\"s\":{\"type\":\"string\",\"maxLength\":5,\"minLength\":1,"
		 "\"pattern\":\"^a\"},"
		 "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
		 "\"maxItems\":3,\"uniqueItems\":true},"
		 "\"m\":{\"type\":\"object\",\"additionalProperties\":false},"
		 "\"e\":{\"type\":\"object\",\"properties\":{}}},"
		 "\"x-kubernetes-group-version-kind\":[{\"group\":\"a\","
		 "\"kind\":\"K\",\"version\":\"v1\"}]},"
		 "\"a.v1.S\":{}}}");
	size_t n = 0;
	unsigned char *b = srv_openapi_v2_pb(d, &n);
	json_decref(d);
	cr_assert_not_null(b);
	struct span m = {b, n}, dummy;
	struct span defs = sub(m, 9, 0);
	struct span k = sub(defs, 1, 0);
	cr_assert(str_is(sub(k, 1, 0), "a.v1.K"));
	struct span ks = sub(k, 2, 0);
	cr_assert(str_is(sub(ks, 4, 0), "K is"));
	cr_assert(str_is(sub(sub(ks, 22, 0), 1, 0), "object"));
	cr_assert(str_is(sub(ks, 19, 0), "spec"));
	struct span ext = sub(ks, 31, 0);
	cr_assert(str_is(sub(ext, 1, 0), "x-kubernetes-group-version-kind"));
	/* properties, in the document's order */
	struct span props = sub(ks, 25, 0);
	const char *names[] = {"spec", "n", "s", "l", "m", "e"};
	struct span ps[6];
	for (int i = 0; i < 6; i++) {
		struct span named = sub(props, 1, i);
		cr_assert(str_is(sub(named, 1, 0), names[i]), "%s", names[i]);
		ps[i] = sub(named, 2, 0);
	}
	cr_assert(str_is(sub(ps[0], 1, 0), "#/definitions/a.v1.S"));
	cr_assert(!find(ps[0], 22, 0, &dummy, NULL), "a reference has no type");
	/* numbers: doubles (wire type 1), booleans and int64s (varints);
	   default and enum values as YAML (JSON text) */
	struct span mn = sub(ps[1], 9, 0);
	double dv;
	uint64_t bits = 0;
	for (int i = 7; i >= 0; i--)
		bits = bits << 8 | mn.p[i];
	memcpy(&dv, &bits, sizeof dv);
	cr_assert_float_eq(dv, -1.5, 1e-9);
	cr_assert(find(ps[1], 7, 0, &dummy, NULL), "maximum");
	uint64_t v = 0;
	cr_assert(find(ps[1], 8, 0, NULL, &v) && v == 1, "exclusiveMaximum");
	cr_assert(str_is(sub(ps[1], 2, 0), "int32"));
	cr_assert(str_is(sub(sub(ps[1], 5, 0), 2, 0), "3"));
	cr_assert(str_is(sub(sub(ps[1], 20, 0), 2, 0), "1"));
	cr_assert(str_is(sub(sub(ps[1], 20, 1), 2, 0), "\"a b\""));
	cr_assert(find(ps[2], 11, 0, NULL, &v) && v == 5, "maxLength");
	cr_assert(find(ps[2], 12, 0, NULL, &v) && v == 1, "minLength");
	cr_assert(str_is(sub(ps[2], 13, 0), "^a"));
	/* an array's items: ItemsItem {1 schema} */
	cr_assert(str_is(sub(sub(sub(sub(ps[3], 23, 0), 1, 0), 22, 0), 1, 0),
			 "string"));
	cr_assert(find(ps[3], 14, 0, NULL, &v) && v == 3, "maxItems");
	cr_assert(find(ps[3], 16, 0, NULL, &v) && v == 1, "uniqueItems");
	/* additionalProperties: false as AdditionalPropertiesItem {2} */
	struct span ap = sub(ps[4], 21, 0);
	v = 7;
	cr_assert(find(ap, 2, 0, NULL, &v) && v == 0, "boolean false");
	/* empty properties are still there: kubectl reads a kind, not a map */
	cr_assert(find(ps[5], 25, 0, &dummy, NULL) && dummy.n == 0);
	/* the empty schema is an empty message */
	struct span s2 = sub(defs, 1, 1);
	cr_assert(str_is(sub(s2, 1, 0), "a.v1.S"));
	cr_assert(find(s2, 2, 0, &dummy, NULL) && dummy.n == 0);
	free(b);
}
