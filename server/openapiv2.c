/*
 * openapiv2.c -- a Swagger 2.0 JSON document in the protobuf encoding of
 * gnostic's openapi_v2.Document (openapiv2/OpenAPIv2.proto; the field
 * numbers are in the comments below).
 *
 * Each message is written into its own buffer and then appended to its
 * parent as a length-delimited field, so no length is known before its
 * content. Only the members api.c's document has are written: proto3
 * readers skip nothing that is absent.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "openapiv2.h"
#include "schema.h"
#include "yamljson.h"

/* A growing output buffer; bad once an allocation failed. */
struct pbw {
	unsigned char *b;
	size_t n, cap;
	bool bad;
};

static void w_raw(struct pbw *w, const void *p, size_t n)
{
	if (w->bad || !n)
		return;
	if (w->n + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->n + n)
			cap *= 2;
		unsigned char *b = realloc(w->b, cap);
		if (!b) {
			w->bad = true;
			return;
		}
		w->b = b;
		w->cap = cap;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void w_varint(struct pbw *w, uint64_t v)
{
	unsigned char t[10];
	size_t k = 0;
	do {
		t[k] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			t[k] |= 0x80;
		k++;
	} while (v);
	w_raw(w, t, k);
}

/* Field `field`, wire type 2 (length-delimited): p[0, n). */
static void w_bytes(struct pbw *w, unsigned field, const void *p, size_t n)
{
	w_varint(w, (uint64_t)field << 3 | 2);
	w_varint(w, n);
	w_raw(w, p, n);
}

static void w_str(struct pbw *w, unsigned field, const json_t *s)
{
	if (json_is_string(s))
		w_bytes(w, field, json_string_value(s), json_string_length(s));
}

/* A bool field, written only when true (proto3's default is false). */
static void w_bool(struct pbw *w, unsigned field, const json_t *b)
{
	if (!json_is_true(b))
		return;
	w_varint(w, (uint64_t)field << 3); /* wire type 0, varint */
	w_varint(w, 1);
}

/* Field `field` holding the message in sub, whose buffer is freed. */
static void w_msg(struct pbw *w, unsigned field, struct pbw *sub)
{
	if (sub->bad)
		w->bad = true;
	else
		w_bytes(w, field, sub->b, sub->n);
	free(sub->b);
	*sub = (struct pbw){0};
}

/* A repeated string field from a JSON array of strings. */
static void w_strs(struct pbw *w, unsigned field, const json_t *a)
{
	size_t i;
	const json_t *s;
	json_array_foreach(a, i, s)
		w_str(w, field, s);
}

/* The x-* members of o, each a NamedAny {1 name, 2 Any {2 yaml}}: the
   value as YAML text, as gnostic writes it ("- fieldPath: spec.color\n";
   a scalar "true\n"). */
static void w_ext(struct pbw *w, unsigned field, json_t *o)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		if (strncmp(k, "x-", 2))
			continue;
		size_t n;
		char *text = srv_json_to_yaml(v, &n);
		if (!text) {
			w->bad = true;
			return;
		}
		struct pbw any = {0}, named = {0};
		w_bytes(&any, 2, text, n);
		free(text);
		w_bytes(&named, 1, k, strlen(k));
		w_msg(&named, 2, &any);
		w_msg(w, field, &named);
	}
}

/* A query or path parameter as ParametersItem {1 parameter: Parameter
   {2 non_body_parameter: NonBodyParameter {3 query_parameter_sub_schema |
   4 path_parameter_sub_schema}}}. Both sub-schemas number required 1, in
   2, description 3, name 4; type is 6 in a query one and 5 in a path one,
   uniqueItems 20 and 19. Body, header and form parameters are left out
   (the document has none). */
static void w_param(struct pbw *w, unsigned field, json_t *p)
{
	const char *in = json_string_value(json_object_get(p, "in"));
	bool query = in && !strcmp(in, "query");
	if (!query && !(in && !strcmp(in, "path")))
		return;
	struct pbw sub = {0}, nb = {0}, par = {0}, item = {0};
	w_bool(&sub, 1, json_object_get(p, "required"));
	w_str(&sub, 2, json_object_get(p, "in"));
	w_str(&sub, 3, json_object_get(p, "description"));
	w_str(&sub, 4, json_object_get(p, "name"));
	w_str(&sub, query ? 6 : 5, json_object_get(p, "type"));
	w_bool(&sub, query ? 20 : 19, json_object_get(p, "uniqueItems"));
	w_msg(&nb, query ? 3 : 4, &sub);
	w_msg(&par, 2, &nb);
	w_msg(&item, 1, &par);
	w_msg(w, field, &item);
}

static void w_params(struct pbw *w, unsigned field, json_t *a)
{
	size_t i;
	json_t *p;
	json_array_foreach(a, i, p)
		w_param(w, field, p);
}

/* Responses {1 response_code: NamedResponseValue {1 name, 2 ResponseValue
   {1 response: Response {1 description}}}}. */
static void w_responses(struct pbw *w, unsigned field, json_t *rs)
{
	if (!json_is_object(rs))
		return;
	struct pbw all = {0};
	const char *code;
	json_t *r;
	json_object_foreach(rs, code, r) {
		struct pbw resp = {0}, val = {0}, named = {0};
		w_str(&resp, 1, json_object_get(r, "description"));
		w_msg(&val, 1, &resp);
		w_bytes(&named, 1, code, strlen(code));
		w_msg(&named, 2, &val);
		w_msg(&all, 1, &named);
	}
	w_msg(w, field, &all);
}

/* Operation {1 tags, 3 description, 5 operation_id, 6 produces, 7 consumes,
   8 parameters, 9 responses, 13 vendor_extension}. */
static void w_operation(struct pbw *w, unsigned field, json_t *op)
{
	if (!json_is_object(op))
		return;
	struct pbw o = {0};
	w_strs(&o, 1, json_object_get(op, "tags"));
	w_str(&o, 3, json_object_get(op, "description"));
	w_str(&o, 5, json_object_get(op, "operationId"));
	w_strs(&o, 6, json_object_get(op, "produces"));
	w_strs(&o, 7, json_object_get(op, "consumes"));
	w_params(&o, 8, json_object_get(op, "parameters"));
	w_responses(&o, 9, json_object_get(op, "responses"));
	w_ext(&o, 13, op);
	w_msg(w, field, &o);
}

/* Paths {2 path: NamedPathItem {1 name, 2 PathItem {2 get, 3 put, 4 post,
   5 delete, 8 patch, 9 parameters, 10 vendor_extension}}}. */
static void w_paths(struct pbw *w, unsigned field, json_t *paths)
{
	static const struct {
		const char *method;
		unsigned field;
	} ops[] = {{"get", 2}, {"put", 3}, {"post", 4}, {"delete", 5},
		   {"patch", 8}};
	struct pbw all = {0};
	const char *name;
	json_t *item;
	json_object_foreach(paths, name, item) {
		struct pbw pi = {0}, named = {0};
		for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
			w_operation(&pi, ops[i].field,
				    json_object_get(item, ops[i].method));
		w_params(&pi, 9, json_object_get(item, "parameters"));
		w_ext(&pi, 10, item);
		w_bytes(&named, 1, name, strlen(name));
		w_msg(&named, 2, &pi);
		w_msg(&all, 2, &named);
	}
	w_msg(w, field, &all);
}

/* ------------------------------------------------ v3 schemas in v2 form */

static const char v3_prefix[] = "#/components/schemas/";

/* The reference s is or wraps (kube's v3 wraps a reference in a one-member
   allOf to give it siblings), or NULL. */
static const char *ref_of(const json_t *s)
{
	const char *ref = json_string_value(json_object_get(s, "$ref"));
	if (ref)
		return ref;
	const json_t *all = json_object_get(s, "allOf");
	if (json_array_size(all) == 1)
		return json_string_value(
		    json_object_get(json_array_get(all, 0), "$ref"));
	return NULL;
}

static bool flag(const json_t *s, const char *name)
{
	return json_is_true(json_object_get(s, name));
}

static json_t *v2_of(json_t *s, int depth);

/* required without the members whose schema is nullable (a null value
   passes v3's required and has no v2 spelling), or without all of them
   when every additional property may be null. */
static json_t *v2_required(json_t *s)
{
	json_t *req = json_object_get(s, "required");
	json_t *props = json_object_get(s, "properties");
	if (flag(json_object_get(s, "additionalProperties"), "nullable"))
		return NULL;
	json_t *out = json_array();
	size_t i;
	json_t *name;
	json_array_foreach(req, i, name)
	{
		const char *n = json_string_value(name);
		if (!n || !flag(json_object_get(props, n), "nullable"))
			json_array_append(out, name);
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static json_t *v2_of(json_t *s, int depth)
{
	json_t *out = json_object();
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH || !out)
		return out;
	const char *ref = ref_of(s);
	if (ref) {
		/* a reference: no type and no properties beside it (kubectl
		   refuses both); its description and extensions kept */
		size_t n = strlen(v3_prefix);
		if (!strncmp(ref, v3_prefix, n)) {
			char *r2 =
			    malloc(strlen(ref) - n + sizeof "#/definitions/");
			if (r2) {
				strcpy(r2, "#/definitions/");
				strcat(r2, ref + n);
				json_object_set_new(out, "$ref",
						    json_string(r2));
				free(r2);
			}
		} else {
			json_object_set_new(out, "$ref", json_string(ref));
		}
		const char *k;
		json_t *v;
		json_object_foreach(s, k, v)
		{
			if (!strcmp(k, "description") || !strncmp(k, "x-", 2))
				json_object_set(out, k, v);
		}
		return out;
	}
	bool nullable = flag(s, "nullable");
	bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
	const char *k;
	json_t *v;
	json_object_foreach(s, k, v)
	{
		if (!strcmp(k, "allOf") || !strcmp(k, "anyOf") ||
		    !strcmp(k, "oneOf") || !strcmp(k, "not") ||
		    !strcmp(k, "nullable") || !strcmp(k, "type") ||
		    !strcmp(k, "required"))
			continue;
		if (!strcmp(k, "properties")) {
			if (nullable || preserve || !json_is_object(v))
				continue;
			json_t *p = json_object();
			const char *pk;
			json_t *pv;
			json_object_foreach(v, pk, pv)
			    json_object_set_new(p, pk, v2_of(pv, depth + 1));
			json_object_set_new(out, k, p);
		} else if (!strcmp(k, "items")) {
			if (!nullable && !preserve && json_is_object(v))
				json_object_set_new(out, k,
						    v2_of(v, depth + 1));
		} else if (!strcmp(k, "additionalProperties")) {
			json_object_set_new(out, k,
					    json_is_object(v)
						? v2_of(v, depth + 1)
						: json_incref(v));
		} else {
			json_object_set(out, k, v);
		}
	}
	const char *type = json_string_value(json_object_get(s, "type"));
	const char *format = json_string_value(json_object_get(s, "format"));
	if (!type && !nullable && !preserve && format &&
	    !strcmp(format, "int-or-string"))
		type = "string"; /* kube's v2 IntOrString */
	if (type && !nullable && !(preserve && !strcmp(type, "object")) &&
	    !(!strcmp(type, "array") && !json_object_get(out, "items")))
		json_object_set_new(out, "type", json_string(type));
	json_t *req = v2_required(s);
	if (req)
		json_object_set_new(out, "required", req);
	return out;
}

json_t *srv_openapi_v2_schema(json_t *v3)
{
	return v2_of(v3, 0);
}

/* A number field (double, wire type 1) from a JSON number. */
static void w_double(struct pbw *w, unsigned field, const json_t *v)
{
	if (!json_is_number(v))
		return;
	double d = json_number_value(v);
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(bits >> (8 * i));
	w_varint(w, (uint64_t)field << 3 | 1);
	w_raw(w, le, sizeof le);
}

/* An int64 field (varint) from a JSON integer. */
static void w_int(struct pbw *w, unsigned field, const json_t *v)
{
	if (!json_is_integer(v))
		return;
	w_varint(w, (uint64_t)field << 3);
	w_varint(w, (uint64_t)json_integer_value(v));
}

/* Any {2 yaml}: the value's JSON text, which YAML reads as the same. */
static void w_any(struct pbw *w, unsigned field, const json_t *v)
{
	if (!v)
		return;
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!text) {
		w->bad = true;
		return;
	}
	struct pbw any = {0};
	w_bytes(&any, 2, text, strlen(text));
	free(text);
	w_msg(w, field, &any);
}

static void w_schema(struct pbw *w, unsigned field, json_t *s, int depth);

/* Properties {1 NamedSchema {1 name, 2 Schema}}, or a document's
   Definitions, which has the same shape. Present even when empty: an
   object with properties is a kind to kubectl, one without a map. */
static void w_named_schemas(struct pbw *w, unsigned field, json_t *o, int depth)
{
	struct pbw all = {0};
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		struct pbw named = {0};
		w_bytes(&named, 1, k, strlen(k));
		w_schema(&named, 2, v, depth);
		w_msg(&all, 1, &named);
	}
	w_msg(w, field, &all);
}

/* Schema {1 $ref, 2 format, 3 title, 4 description, 5 default, 6
   multipleOf, 7 maximum, 8 exclusiveMaximum, 9 minimum, 10
   exclusiveMinimum, 11 maxLength, 12 minLength, 13 pattern, 14 maxItems,
   15 minItems, 16 uniqueItems, 17 maxProperties, 18 minProperties, 19
   required, 20 enum, 21 additionalProperties {1 schema | 2 boolean}, 22
   type {1 value}, 23 items {1 schema}, 24 allOf, 25 properties, 26
   discriminator, 27 readOnly, 30 example, 31 vendor_extension}. Nesting
   deeper than a CRD schema may have (SRV_SCHEMA_MAX_DEPTH) is cut off:
   this only bounds the recursion. */
static void w_schema(struct pbw *w, unsigned field, json_t *s, int depth)
{
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	struct pbw o = {0};
	w_str(&o, 1, json_object_get(s, "$ref"));
	w_str(&o, 2, json_object_get(s, "format"));
	w_str(&o, 3, json_object_get(s, "title"));
	w_str(&o, 4, json_object_get(s, "description"));
	w_any(&o, 5, json_object_get(s, "default"));
	w_double(&o, 6, json_object_get(s, "multipleOf"));
	w_double(&o, 7, json_object_get(s, "maximum"));
	w_bool(&o, 8, json_object_get(s, "exclusiveMaximum"));
	w_double(&o, 9, json_object_get(s, "minimum"));
	w_bool(&o, 10, json_object_get(s, "exclusiveMinimum"));
	static const struct {
		const char *name;
		unsigned field;
	} ints[] = {{"maxLength", 11},	   {"minLength", 12},
		    {"maxItems", 14},	   {"minItems", 15},
		    {"maxProperties", 17}, {"minProperties", 18}};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		w_int(&o, ints[i].field, json_object_get(s, ints[i].name));
		if (i == 1)
			w_str(&o, 13, json_object_get(s, "pattern"));
		if (i == 3)
			w_bool(&o, 16, json_object_get(s, "uniqueItems"));
	}
	w_strs(&o, 19, json_object_get(s, "required"));
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(s, "enum"), i, e) w_any(&o, 20, e);
	json_t *ap = json_object_get(s, "additionalProperties");
	if (json_is_object(ap) || json_is_boolean(ap)) {
		struct pbw item = {0};
		if (json_is_object(ap)) {
			w_schema(&item, 1, ap, depth + 1);
		} else {
			w_varint(&item, 2 << 3);
			w_varint(&item, json_is_true(ap));
		}
		w_msg(&o, 21, &item);
	}
	json_t *type = json_object_get(s, "type");
	if (json_is_string(type)) {
		struct pbw t = {0};
		w_str(&t, 1, type);
		w_msg(&o, 22, &t);
	}
	json_t *items = json_object_get(s, "items");
	if (json_is_object(items)) {
		struct pbw it = {0};
		w_schema(&it, 1, items, depth + 1);
		w_msg(&o, 23, &it);
	}
	json_array_foreach(json_object_get(s, "allOf"), i, e)
	    w_schema(&o, 24, e, depth + 1);
	json_t *props = json_object_get(s, "properties");
	if (json_is_object(props))
		w_named_schemas(&o, 25, props, depth + 1);
	w_str(&o, 26, json_object_get(s, "discriminator"));
	w_bool(&o, 27, json_object_get(s, "readOnly"));
	w_any(&o, 30, json_object_get(s, "example"));
	w_ext(&o, 31, s);
	w_msg(w, field, &o); /* an empty schema too: any value */
}

unsigned char *srv_openapi_v2_pb(json_t *doc, size_t *len)
{
	if (!json_is_object(doc))
		return NULL;
	/* Document {1 swagger, 2 info: Info {1 title, 2 version,
	   3 description}, 6 consumes, 7 produces, 8 paths, 16
	   vendor_extension}. */
	struct pbw w = {0}, info = {0};
	w_str(&w, 1, json_object_get(doc, "swagger"));
	json_t *in = json_object_get(doc, "info");
	if (json_is_object(in)) {
		w_str(&info, 1, json_object_get(in, "title"));
		w_str(&info, 2, json_object_get(in, "version"));
		w_str(&info, 3, json_object_get(in, "description"));
		w_msg(&w, 2, &info);
	}
	w_strs(&w, 6, json_object_get(doc, "consumes"));
	w_strs(&w, 7, json_object_get(doc, "produces"));
	json_t *paths = json_object_get(doc, "paths");
	if (json_is_object(paths))
		w_paths(&w, 8, paths);
	/* Definitions {1 NamedSchema}: Properties' shape */
	json_t *defs = json_object_get(doc, "definitions");
	if (json_is_object(defs) && json_object_size(defs))
		w_named_schemas(&w, 9, defs, 0);
	w_ext(&w, 16, doc);
	if (w.bad) {
		free(w.b);
		return NULL;
	}
	if (!w.b) /* an empty document: still a buffer */
		w.b = malloc(1);
	*len = w.n;
	return w.b;
}
