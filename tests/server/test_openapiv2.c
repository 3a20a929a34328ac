/*
 * test_openapiv2.c -- server/openapiv2.c: a Swagger 2.0 JSON document as
 * gnostic's openapi_v2.Document in protobuf. The bytes are read back with a
 * small wire reader here and checked field by field (the numbers of
 * OpenAPIv2.proto), as kubectl 1.27's query parameter verifier walks them:
 * paths -> path item -> patch -> parameters -> query parameter name, and
 * the x-kubernetes-group-version-kind extension as YAML.
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
		cr_assert(wt == 0 || wt == 2, "wire type %u", wt);
		if (wt == 0) {
			cr_assert(varint(&m, &len), "truncated varint");
		} else {
			cr_assert(varint(&m, &len) && len <= m.n, "bad length");
		}
		if ((tag >> 3) == field && k-- == 0) {
			if (wt == 2)
				*out = (struct span){m.p, (size_t)len};
			else if (val)
				*val = len;
			return true;
		}
		if (wt == 2) {
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
	cr_assert(str_is(sub(sub(ext, 2, 0), 2, 0), "\"get\""));
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
	/* the group-version-kind, as YAML (JSON text) */
	struct span gvk = sub(patch, 13, 1);
	cr_assert(str_is(sub(gvk, 1, 0), "x-kubernetes-group-version-kind"));
	json_t *y = json_loadb((const char *)sub(sub(gvk, 2, 0), 2, 0).p,
			       sub(sub(gvk, 2, 0), 2, 0).n, 0, NULL);
	cr_assert_not_null(y);
	cr_assert_str_eq(json_string_value(json_object_get(y, "kind")),
			 "ConfigMap");
	json_decref(y);
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
	cr_assert(str_is(sub(sub(ext, 2, 0), 2, 0), "null"));
	struct span dummy;
	cr_assert(!find(item, 2, 0, &dummy, NULL), "no get");
	cr_assert(!find(m, 1, 0, &dummy, NULL), "no swagger");
	free(b);
	json_decref(d);
}
