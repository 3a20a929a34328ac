/*
 * structural.c -- is a CustomResourceDefinition version's openAPIV3Schema
 * one kube-apiserver accepts? (reference §8.2 "OpenAPI restrictions" and
 * §8.6; behaviour learned from apiextensions-apiserver's
 * pkg/apis/apiextensions/validation/validation.go and
 * pkg/apiserver/schema/{validation,complete}.go, written anew here).
 *
 * Pure: walks the schema JSON (only read) and appends kube's causes to a
 * struct srv_error, with kube's field paths
 * (`<base>.openAPIV3Schema.properties[spec].type`) and message bodies
 * (`Required value: must not be empty for specified object fields`).
 *
 * Three walks, as upstream:
 *  1. openapi_walk: the OpenAPI restrictions over every node, combinators
 *     included (forbidden keywords, types, uniqueItems, properties with
 *     additionalProperties, list and map types, defaults: allowed here?
 *     pruned? valid?).
 *  2. struct_walk: the structural invariants over the structural part
 *     (properties, items, additionalProperties), calling nested_walk on
 *     each node's allOf/anyOf/oneOf/not, where type, default, nullable,
 *     extensions and metadata are forbidden.
 *  3. complete_walk: every property named in the root's combinators is
 *     declared in the structural part.
 * The caller (srv_prep_crd) runs srv_schema_compile first, which rejects
 * keywords of the wrong JSON type; the walks stay defensive anyway.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel.h"
#include "fields.h"
#include "schema.h"

/* A field path under construction; long paths are cut, never overflowed. */
struct spath {
	char s[1024];
	size_t len;
};

/* A node whose rules compile once the whole schema proved structural. */
struct pending_rules {
	const json_t *s;
	char *path;
	char *uncorr; /* the array above it oldSelf cannot follow, or NULL */
	double card;  /* how often it can occur (struct ovis) */
};

/* A rule's (or messageExpression's) share of the schema's cost. */
struct rule_cost {
	char *path; /* owned */
	double cost;
};

struct sctx {
	struct srv_error *err;
	struct spath p;
	struct pending_rules *pend; /* owned, with their paths */
	size_t n_pend;
	const json_t *root; /* the openAPIV3Schema */
	const json_t *old;  /* the CRD before an update, or NULL */
	double total_cost;  /* of every rule, as check_cost counts it */
	bool total_exact;   /* and it is kube's figure */
	struct rule_cost top[4]; /* the costliest, costliest first */
	int n_top;
	/* the second walk: the defaults' values alone (kube's
	   ValidateDefaults, run only on a schema ValidateStructural passed) */
	bool defaults_walk;
};

static size_t push(struct spath *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append to the path; returns the length to pop back to. */
static size_t push(struct spath *p, const char *fmt, ...)
{
	size_t mark = p->len;
	if (p->len < sizeof p->s - 1) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(p->s + p->len, sizeof p->s - p->len, fmt, ap);
		va_end(ap);
		if (n > 0)
			p->len += (size_t)n;
		if (p->len > sizeof p->s - 1)
			p->len = sizeof p->s - 1;
	}
	return mark;
}

static void pop(struct spath *p, size_t mark)
{
	p->len = mark;
	p->s[mark] = 0;
}

static void cause(struct sctx *c, const char *reason, const char *child,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* One cause at the current path plus child (".type", "" for the node). */
static void cause(struct sctx *c, const char *reason, const char *child,
		  const char *fmt, ...)
{
	char field[sizeof c->p.s + 64];
	snprintf(field, sizeof field, "%s%s", c->p.s, child);
	char msg[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	srv_error_cause(c->err, reason, field, "%s", msg);
}

#define REQUIRED(c, child, detail)                                             \
	cause(c, "FieldValueRequired", child, "Required value: %s", detail)
#define FORBIDDEN(c, child, detail)                                            \
	cause(c, "FieldValueForbidden", child, "Forbidden: %s", detail)

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool is_true(const json_t *o, const char *k)
{
	return json_is_true(json_object_get(o, k));
}

static const char *type_of(const json_t *s)
{
	const char *t = str(s, "type");
	return t ? t : "";
}

/* Go's %q of a string, enough for the values we print (type names,
   keywords); longer values are cut. */
/* The length of s's first max bytes, cut between runes (for "%.*s"). */
static int cut_len(const char *s, int max)
{
	int len = (int)strnlen(s, (size_t)max);
	if (s[len])
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	return len;
}

static void quote(char *out, size_t n, const char *s)
{
	s = s ? s : "";
	snprintf(out, n, "\"%.*s\"", cut_len(s, 200), s);
}

static bool nonempty_obj(const json_t *o, const char *k)
{
	return json_object_size(json_object_get(o, k)) > 0;
}

/* ------------------------------------------------------------------------ */
/* 1. OpenAPI restrictions.                                                  */

struct ovis {
	bool root;	  /* the schema's root */
	bool inside_meta; /* under apiVersion/kind/metadata of a resource */
	size_t emb_at;	  /* inside_meta of an embedded resource: the length
			     of its path, else 0 */
	const char *no_default; /* why defaults are forbidden here, or NULL */
	bool in_addl; /* under additionalProperties: kube's default check
			 does not go there */
	size_t uncorr; /* the length of the path of the outermost array
			  above that is no map list (old and new items
			  cannot be paired: no oldSelf), or 0 */
	double card;   /* how many times the node can occur in an object
			  (kube's MaxCardinality: the product of maxItems
			  and maxProperties above), or -1 when a list or map
			  above is unbounded */
};

static void openapi_walk(struct sctx *c, const json_t *s, struct ovis v,
			 int depth);

static void check_type(struct sctx *c, const json_t *s)
{
	const char *t = str(s, "type");
	if (!t || !*t)
		return;
	static const char *const ok[] = {"array",  "boolean", "integer",
					 "number", "object",  "string"};
	bool found = false;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		found = found || !strcmp(t, ok[i]);
	if (!found) {
		char q[256];
		quote(q, sizeof q, t);
		cause(c, "FieldValueNotSupported", ".type",
		      "Unsupported value: %s: supported values: \"array\", "
		      "\"boolean\", \"integer\", \"number\", \"object\", "
		      "\"string\"",
		      q);
	}
	if (!strcmp(t, "null"))
		FORBIDDEN(c, ".type",
			  "type cannot be set to null, use nullable as an "
			  "alternative");
}

/* kube's defaulting validation of a default inside an embedded resource's
   apiVersion, kind or metadata: placed alone in a resource of its own
   ({apiVersion: validation/v1, kind: Validation}, the default at its path
   there), it must decode and validate as one. false, with kube's
   "must result in valid metadata: ..." in why, when it does not; true
   also where lapis cannot place it (a path through list items). */
static bool meta_default_ok(struct sctx *c, size_t emb_at, const json_t *def,
			    char *why, size_t n)
{
	/* the resource as a member r, so that its metadata is checked as an
	   embedded resource's (a root's is the caller's); "r." is cut from
	   the paths */
	static const char emb[] =
	    "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"object\","
	    "\"x-kubernetes-embedded-resource\":true,"
	    "\"x-kubernetes-preserve-unknown-fields\":true}}}";
	json_t *obj = json_pack("{s:s,s:s}", "apiVersion", "validation/v1",
				"kind", "Validation");
	json_t *at = obj, *val = json_deep_copy(def);
	const char *p = c->p.s + emb_at;
	static const char seg[] = ".properties[";
	bool placed = obj && val;
	while (placed && *p) {
		const char *e = strncmp(p, seg, sizeof seg - 1)
				    ? NULL
				    : strchr(p + sizeof seg - 1, ']');
		if (!e) {
			placed = false;
			break;
		}
		char key[256];
		snprintf(key, sizeof key, "%.*s",
			 (int)(e - p - (sizeof seg - 1)), p + sizeof seg - 1);
		p = e + 1;
		if (!*p) {
			json_object_set(at, key, val);
			break;
		}
		json_t *next = json_object_get(at, key);
		if (!json_is_object(next)) {
			next = json_object();
			json_object_set_new(at, key, next);
		}
		at = next;
	}
	bool ok = true;
	json_t *sj = placed ? json_loads(emb, 0, NULL) : NULL;
	json_t *wrap = json_pack("{s:O}", "r", obj);
	struct srv_schema *sch = NULL;
	struct srv_error tmp = {0};
	if (sj && !srv_schema_compile(sj, &sch, &tmp)) {
		char msg[1024];
		if (wrap && srv_schema_coerce(sch, wrap, msg, sizeof msg)) {
			snprintf(why, n, "must result in valid metadata: %s",
				 strncmp(msg, "r.", 2) ? msg : msg + 2);
			ok = false;
		} else if (wrap && srv_schema_validate(sch, wrap, &tmp) &&
			   tmp.n_causes) {
			static const char pre[] =
			    "must result in valid metadata: ";
			snprintf(why, n, "%s", pre);
			if (n > sizeof pre)
				srv_error_aggregate(&tmp, "r.",
						    why + sizeof pre - 1,
						    n - (sizeof pre - 1));
			ok = false;
		}
	}
	srv_schema_free(sch);
	json_decref(sj);
	json_decref(wrap);
	json_decref(val);
	json_decref(obj);
	return ok;
}

/* A default must be allowed here (the first walk), and survive pruning
   unchanged and satisfy its own schema and rules (the defaults walk; kube
   validates it with the node's schema alone). */
static void check_default(struct sctx *c, const json_t *s, struct ovis v)
{
	const json_t *def = json_object_get(s, "default");
	if (!def || json_is_null(def))
		return;
	if (v.no_default) {
		if (!c->defaults_walk)
			cause(c, "FieldValueForbidden", ".default",
			      "Forbidden: must not be set %s", v.no_default);
		return;
	}
	if (v.in_addl || !c->defaults_walk)
		return;
	char why[2048];
	if (v.emb_at && !meta_default_ok(c, v.emb_at, def, why, sizeof why)) {
		char *js = srv_go_value(def);
		const char *shown = js ? js : "";
		cause(c, "FieldValueInvalid", ".default",
		      "Invalid value: %.*s: %s", cut_len(shown, 300), shown,
		      why);
		free(js);
		return;
	}
	struct srv_schema *sch = NULL;
	struct srv_error tmp = {0};
	if (srv_schema_compile(s, &sch, &tmp))
		return; /* reported where the whole schema is compiled */
	json_t *clone = json_deep_copy(def);
	if (clone && !v.inside_meta) {
		/* kube checks it is pruned with Prune alone: a resource's
		   metadata is not ObjectMeta-coerced there */
		srv_schema_prune_plain(
		    sch, clone,
		    json_is_true(
			json_object_get(s, "x-kubernetes-embedded-resource")));
		if (!json_equal(clone, def)) {
			char *js = srv_go_value(def);
			const char *shown = js ? js : "";
			cause(c, "FieldValueInvalid", ".default",
			      "Invalid value: %.*s: must not have unknown "
			      "fields",
			      cut_len(shown, 300), shown);
			free(js);
		}
	}
	json_decref(clone);
	/* kube's Coerce (isResourceRoot: the node is an embedded resource)
	   comes first, and its one error alone */
	clone = v.inside_meta ? NULL : json_deep_copy(def);
	char cf[256], cm[2048];
	if (clone &&
	    srv_schema_coerce_value(sch, clone, cf, sizeof cf, cm, sizeof cm)) {
		char child[300];
		snprintf(child, sizeof child, ".default%s%s", *cf ? "." : "",
			 cf);
		cause(c, "FieldValueInvalid", child, "%s", cm);
		json_decref(clone);
		srv_schema_free(sch);
		return;
	}
	json_decref(clone);
	srv_error_clear(&tmp);
	static const struct srv_schema_vopts dvo = {.defaulting = true};
	lp_err vr = srv_schema_validate_with(sch, def, &tmp, &dvo);
	/* valid, the node's x-kubernetes-validations rules run on it, as
	   kube's defaulting validation runs its CEL validator */
	if (vr == LP_OK && srv_schema_check_default_rules(sch, def, &tmp))
		srv_error_clear(&tmp); /* out of memory: nothing to say */
	if (tmp.n_causes) {
		size_t mark = push(&c->p, ".default");
		for (int i = 0; i < tmp.n_causes; i++) {
			struct srv_cause k = srv_cause_get(&tmp, i);
			/* a rule of the node itself: kube's resource root
			   is "<nil>", the default's is its own path */
			const char *f = strcmp(k.field, "<nil>") ? k.field : "";
			char child[300];
			snprintf(child, sizeof child, "%s%s", *f ? "." : "", f);
			cause(c, k.reason, child, "%s", k.message);
		}
		pop(&c->p, mark);
	}
	srv_schema_free(sch);
}

static void check_forbidden_keywords(struct sctx *c, const json_t *s,
				     struct ovis v)
{
	const char *id = str(s, "id");
	if (id && *id)
		FORBIDDEN(c, ".id", "id is not supported");
	if (json_object_get(s, "additionalItems"))
		FORBIDDEN(c, ".additionalItems",
			  "additionalItems is not supported");
	if (nonempty_obj(s, "patternProperties"))
		FORBIDDEN(c, ".patternProperties",
			  "patternProperties is not supported");
	if (nonempty_obj(s, "definitions"))
		FORBIDDEN(c, ".definitions", "definitions is not supported");
	if (json_object_get(s, "dependencies"))
		FORBIDDEN(c, ".dependencies", "dependencies is not supported");
	if (json_object_get(s, "$ref"))
		FORBIDDEN(c, ".$ref", "$ref is not supported");
	if (json_is_array(json_object_get(s, "items")))
		FORBIDDEN(c, ".items",
			  "items must be a schema object and not an array");
	if (v.inside_meta && is_true(s, "x-kubernetes-embedded-resource"))
		FORBIDDEN(c, ".x-kubernetes-embedded-resource",
			  "must not be used inside of resource meta");
	if (is_true(s, "uniqueItems"))
		FORBIDDEN(c, ".uniqueItems",
			  "uniqueItems cannot be set to true since the runtime "
			  "complexity becomes quadratic");
	const json_t *ap = json_object_get(s, "additionalProperties");
	if (ap && nonempty_obj(s, "properties") &&
	    (json_is_false(ap) || json_is_object(ap)))
		FORBIDDEN(c, ".additionalProperties",
			  "additionalProperties and properties are mutual "
			  "exclusive");
	if (json_is_false(
		json_object_get(s, "x-kubernetes-preserve-unknown-fields")))
		cause(c, "FieldValueInvalid",
		      ".x-kubernetes-preserve-unknown-fields",
		      "Invalid value: false: must be true or undefined");
}

static bool strv_has(const json_t *a, const char *k)
{
	size_t i;
	json_t *x;
	json_array_foreach(a, i,
			   x) if (json_string_value(x) &&
				  !strcmp(json_string_value(x), k)) return true;
	return false;
}

/* A set's items: atomic lists and maps (kube's requireAtomicSetType). */
static void check_set_items(struct sctx *c, const json_t *items)
{
	const char *it = type_of(items);
	const char *lt = str(items, "x-kubernetes-list-type");
	const char *mt = str(items, "x-kubernetes-map-type");
	char q[256];
	if (!strcmp(it, "array") && lt && strcmp(lt, "atomic")) {
		quote(q, sizeof q, lt);
		cause(
		    c, "FieldValueInvalid", ".items.x-kubernetes-list-type",
		    "Invalid value: %s: must be atomic as item of a list with "
		    "x-kubernetes-list-type=set",
		    q);
	}
	if (!strcmp(it, "object") && (!mt || strcmp(mt, "atomic"))) {
		/* kube prints the items' list type (nil) as the value */
		cause(
		    c, "FieldValueInvalid", ".items.x-kubernetes-map-type",
		    "Invalid value: \"null\": must be atomic as item of a list "
		    "with x-kubernetes-list-type=set");
	}
}

/* A map list's keys: scalar properties of its items, each once. */
static void check_map_keys(struct sctx *c, const json_t *keys,
			   const json_t *items)
{
	const json_t *props = json_object_get(items, "properties");
	char kv[512], child[320];
	srv_go_string_list(keys, kv, sizeof kv);
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k)
	{
		const char *key = json_string_value(k);
		if (!key)
			continue;
		const json_t *p = json_object_get(props, key);
		if (!p) {
			cause(c, "FieldValueInvalid",
			      ".x-kubernetes-list-map-keys",
			      "Invalid value: %s: entries must all be names of "
			      "item properties",
			      kv);
		} else {
			const char *pt = type_of(p);
			if (!strcmp(pt, "array") || !strcmp(pt, "object")) {
				/* kube prints the items' type here */
				snprintf(child, sizeof child,
					 ".items.properties[%s].type", key);
				cause(c, "FieldValueInvalid", child,
				      "Invalid value: \"object\": must be a "
				      "scalar type if parent array's "
				      "x-kubernetes-list-type is map");
			}
		}
		for (size_t j = 0; j < i; j++) {
			const char *o =
			    json_string_value(json_array_get(keys, j));
			if (o && !strcmp(o, key)) {
				cause(c, "FieldValueInvalid",
				      ".x-kubernetes-list-map-keys",
				      "Invalid value: %s: must not contain "
				      "duplicate entries",
				      kv);
				break;
			}
		}
	}
}

/* kube's validateMapListKeysMapSet: a set's or a map's items are not
   nullable, and a map's keys are required or defaulted, never
   nullable. */
static void check_map_set(struct sctx *c, const json_t *s, const char *lt)
{
	const json_t *items = json_object_get(s, "items");
	if (!json_is_object(items))
		return;
	if (is_true(items, "nullable")) {
		char why[80];
		snprintf(why, sizeof why,
			 "cannot be nullable when x-kubernetes-list-type is %s",
			 lt);
		FORBIDDEN(c, ".items.nullable", why);
	}
	if (strcmp(lt, "map"))
		return;
	const json_t *props = json_object_get(items, "properties");
	const json_t *req = json_object_get(items, "required");
	char child[320];
	size_t i;
	json_t *k;
	json_array_foreach(json_object_get(s, "x-kubernetes-list-map-keys"), i,
			   k)
	{
		const char *key = json_string_value(k);
		const json_t *p = key ? json_object_get(props, key) : NULL;
		if (!p)
			continue;
		const json_t *d = json_object_get(p, "default");
		if (!strv_has(req, key) && (!d || json_is_null(d))) {
			snprintf(child, sizeof child,
				 ".items.properties[%s].default", key);
			REQUIRED(
			    c, child,
			    "this property is in x-kubernetes-list-map-keys, "
			    "so it must have a default or be a required "
			    "property");
		}
		if (is_true(p, "nullable")) {
			snprintf(child, sizeof child,
				 ".items.properties[%s].nullable", key);
			FORBIDDEN(
			    c, child,
			    "this property is in x-kubernetes-list-map-keys, "
			    "so it cannot be nullable");
		}
	}
}

/* A node of type t (maybe "") carries ext, which needs type want. */
static void type_for_ext(struct sctx *c, const char *t, const char *want,
			 const char *ext)
{
	char why[96], q[256];
	snprintf(why, sizeof why, "must be %s if %s is specified", want, ext);
	if (!*t) {
		REQUIRED(c, ".type", why);
		return;
	}
	quote(q, sizeof q, t);
	cause(c, "FieldValueInvalid", ".type", "Invalid value: %s: %s", q, why);
}

/* The list and map type extensions, in the order of kube's
   ValidateCustomResourceDefinitionOpenAPISchema. */
static void check_list_and_map_types(struct sctx *c, const json_t *s)
{
	const char *t = type_of(s);
	const char *lt = str(s, "x-kubernetes-list-type");
	const char *mt = str(s, "x-kubernetes-map-type");
	const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
	const json_t *items = json_object_get(s, "items");
	char q[256];
	if (mt && strcmp(t, "object"))
		type_for_ext(c, t, "object", "x-kubernetes-map-type");
	if (mt && strcmp(mt, "atomic") && strcmp(mt, "granular")) {
		quote(q, sizeof q, mt);
		cause(c, "FieldValueNotSupported", ".x-kubernetes-map-type",
		      "Unsupported value: %s: supported values: \"atomic\", "
		      "\"granular\"",
		      q);
	}
	if (lt && strcmp(t, "array"))
		type_for_ext(c, t, "array", "x-kubernetes-list-type");
	else if (lt && !strcmp(lt, "set") && json_is_object(items)) {
		check_set_items(c, items);
	}
	if (lt && strcmp(lt, "atomic") && strcmp(lt, "set") &&
	    strcmp(lt, "map")) {
		quote(q, sizeof q, lt);
		cause(c, "FieldValueNotSupported", ".x-kubernetes-list-type",
		      "Unsupported value: %s: supported values: \"atomic\", "
		      "\"set\", \"map\"",
		      q);
	}
	if (json_array_size(keys)) {
		if (!lt) {
			REQUIRED(c, ".x-kubernetes-list-type",
				 "must be map if x-kubernetes-list-map-keys is "
				 "non-empty");
		} else if (strcmp(lt, "map")) {
			quote(q, sizeof q, lt);
			cause(c, "FieldValueInvalid", ".x-kubernetes-list-type",
			      "Invalid value: %s: must be map if "
			      "x-kubernetes-list-map-keys is non-empty",
			      q);
		}
	}
	if (lt && !strcmp(lt, "map")) {
		if (!json_array_size(keys))
			REQUIRED(c, ".x-kubernetes-list-map-keys",
				 "must not be empty if x-kubernetes-list-type "
				 "is map");
		if (!items)
			REQUIRED(c, ".items",
				 "must have a schema if x-kubernetes-list-type "
				 "is map");
		if (json_is_object(items) && strcmp(type_of(items), "object")) {
			quote(q, sizeof q, type_of(items));
			cause(c, "FieldValueInvalid", ".items.type",
			      "Invalid value: %s: must be object if parent "
			      "array's x-kubernetes-list-type is map",
			      q);
		}
		if (json_is_object(items) && !strcmp(type_of(items), "object"))
			check_map_keys(c, keys, items);
	}
	if (lt && (!strcmp(lt, "set") || !strcmp(lt, "map")))
		check_map_set(c, s, lt);
}

static void openapi_list(struct sctx *c, const json_t *s, const char *kw,
			 struct ovis v, int depth)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(s, kw), i, x)
	{
		size_t mark = push(&c->p, ".%s[%zu]", kw, i);
		openapi_walk(c, x, v, depth + 1);
		pop(&c->p, mark);
	}
}

/* Go's strings.TrimSpace, as a length (*start set to the first byte). */
static size_t trimmed(const char *s, const char **start)
{
	size_t n;
	*start = srv_trim_space(s, strlen(s), &n);
	return n;
}

static bool has_newlines(const char *s, size_t n)
{
	return memchr(s, '\n', n) || memchr(s, '\r', n);
}

/* Go's %#v of the internal apiextensions.ValidationRule r, into out. */
static void rule_gostring(const json_t *r, char *out, size_t n)
{
	char q[4][SRV_CAUSE_MESSAGE_MAX];
	const char *k[4] = {"rule", "message", "messageExpression",
			    "fieldPath"};
	for (int i = 0; i < 4; i++) {
		const char *v = str(r, k[i]);
		srv_go_quote(v ? v : "", q[i], sizeof q[i]);
	}
	/* a set pointer prints as an address; any one stands for it */
	snprintf(out, n,
		 "apiextensions.ValidationRule{Rule:%s, Message:%s, "
		 "MessageExpression:%s, "
		 "Reason:(*apiextensions.FieldValueErrorReason)(%s), "
		 "FieldPath:%s, OptionalOldSelf:(*bool)(%s)}",
		 q[0], q[1], q[2],
		 json_is_string(json_object_get(r, "reason")) ? "0xc000a1b2c0"
							      : "nil",
		 q[3],
		 json_is_boolean(json_object_get(r, "optionalOldSelf"))
		     ? "0xc000a1b2c8"
		     : "nil");
}

/* The next token of a fieldPath at *p as kube's scanner splits it: a
   delimiter ('.', '[', ']') alone, a single-quoted string with its
   quotes, or the text up to the next delimiter. Its length; 0 at the end. */
static size_t fp_token(const char *p)
{
	if (!*p)
		return 0;
	if (*p == '\'') {
		for (size_t i = 1; p[i]; i++)
			if (p[i] == '\'' && p[i - 1] != '\\')
				return i + 1;
		return strlen(p);
	}
	if (strchr(".[]", *p))
		return 1;
	return strcspn(p, ".[]");
}

/* The schema a step to name leads to from s: a property where s has
   properties, else the value schema of a map; NULL where neither. */
static const json_t *fp_step(const json_t *s, const char *name, size_t n)
{
	const json_t *props = json_object_get(s, "properties");
	if (json_is_object(props)) {
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)props, k, v)
		{
			if (strlen(k) == n && !memcmp(k, name, n))
				return v;
		}
		return NULL;
	}
	const json_t *ap = json_object_get(s, "additionalProperties");
	return json_is_object(ap) ? ap : NULL;
}

/* Does fieldPath fp name a field of schema s, as kube's
   cel.ValidFieldPath finds it when the CRD is written: steps of
   ".name" or "['name']" (escaped as kube's unescapeSingleQuote reads
   them), each a property, or a key
   of a map; no list index. */
static bool field_path_valid(const json_t *s, const char *fp)
{
	const char *p = fp;
	while (*p) {
		size_t n = fp_token(p);
		if (n != 1 || (*p != '.' && *p != '['))
			return false; /* expected [ or . */
		bool bracket = *p == '[';
		p++;
		n = fp_token(p);
		if (!n)
			return false; /* unexpected end */
		if (!bracket) {
			if (!(s = fp_step(s, p, n)))
				return false;
			p += n;
			continue;
		}
		if (n < 2 || p[0] != '\'' || p[n - 1] != '\'')
			return false; /* a single quoted string */
		char name[512];
		size_t o = 0;
		for (size_t i = 1; i + 1 < n && o < sizeof name; i++) {
			/* kube's unescapeSingleQuote: Go's escapes of one
			   letter, \' and \\; another is an invalid path */
			static const char from[] = "abfnrtv'\\",
					  to[] = "\a\b\f\n\r\t\v'\\";
			if (p[i] == '\\' && i + 2 < n) {
				const char *e = strchr(from, p[++i]);
				if (!e || !*e)
					return false;
				name[o++] = to[e - from];
				continue;
			}
			name[o++] = p[i];
		}
		if (o == sizeof name || !(s = fp_step(s, name, o)))
			return false;
		p += n;
		if (*p != ']')
			return false;
		p++;
	}
	return true;
}

/* kube's checks of the texts of each x-kubernetes-validations rule of s;
   when nothing in s or below it was refused (from is the count of causes
   before s), s joins the nodes whose rules compile_rules checks later. */
static void check_rules(struct sctx *c, const json_t *s, int from,
			size_t uncorr, double card)
{
	const json_t *v = json_object_get(s, "x-kubernetes-validations");
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *r = json_array_get(v, i);
		if (!json_is_object(r))
			continue;
		char child[96], val[700];
		const char *rule = str(r, "rule"), *msg = str(r, "message");
		const char *mexp = str(r, "messageExpression");
		const char *reason = str(r, "reason"),
			   *fp = str(r, "fieldPath");
		const char *t;
		size_t rn = trimmed(rule ? rule : "", &t);
		bool rule_nl = has_newlines(t, rn);
		size_t mn = trimmed(msg ? msg : "", &t);
		bool msg_nl = has_newlines(t, mn);
		int ns = snprintf(child, sizeof child,
				  ".x-kubernetes-validations[%zu]", i);
		char *leaf = child + (ns > 0 ? ns : 0);
		size_t room = sizeof child - (size_t)(ns > 0 ? ns : 0);
		if (!rn) {
			snprintf(leaf, room, ".rule");
			REQUIRED(c, child, "rule is not specified");
		} else if ((msg && msg[0] && !mn) || msg_nl) {
			snprintf(leaf, room, ".message");
			srv_go_quote(msg, val, sizeof val);
			cause(c, "FieldValueInvalid", child,
			      "Invalid value: %s: %s", val,
			      msg_nl ? "message must not contain line breaks"
				     : "message must be non-empty if "
				       "specified");
		} else if (rule_nl && !mn) {
			snprintf(leaf, room, ".message");
			REQUIRED(c, child,
				 "message must be specified if rule contains "
				 "line breaks");
		}
		if (mexp && mexp[0] && !trimmed(mexp, &t)) {
			snprintf(leaf, room, ".messageExpression");
			REQUIRED(c, child,
				 "messageExpression must be non-empty if "
				 "specified");
		}
		if (reason && strcmp(reason, "FieldValueRequired") &&
		    strcmp(reason, "FieldValueForbidden") &&
		    strcmp(reason, "FieldValueInvalid") &&
		    strcmp(reason, "FieldValueDuplicate")) {
			snprintf(leaf, room, ".reason");
			srv_go_quote(reason, val, sizeof val);
			cause(c, "FieldValueNotSupported", child,
			      "Unsupported value: %s: supported values: "
			      "\"FieldValueDuplicate\", "
			      "\"FieldValueForbidden\", "
			      "\"FieldValueInvalid\", \"FieldValueRequired\"",
			      val);
		}
		if (fp && fp[0]) {
			size_t fn = trimmed(fp, &t);
			snprintf(leaf, room, ".fieldPath");
			srv_go_quote(fp, val, sizeof val);
			if (!fn)
				cause(c, "FieldValueInvalid", child,
				      "Invalid value: %s: fieldPath must be "
				      "non-empty if specified",
				      val);
			if (has_newlines(fp, strlen(fp)))
				cause(c, "FieldValueInvalid", child,
				      "Invalid value: %s: fieldPath must not "
				      "contain line breaks",
				      val);
			if (!field_path_valid(s, fp))
				cause(c, "FieldValueInvalid", child,
				      "Invalid value: %s: fieldPath must be a "
				      "valid path",
				      val);
		}
	}
	if (c->err->n_causes != from || !json_array_size(v))
		return;
	struct pending_rules *np =
	    realloc(c->pend, (c->n_pend + 1) * sizeof *np);
	if (!np)
		return;
	c->pend = np;
	np[c->n_pend].uncorr = NULL;
	if (uncorr && !(np[c->n_pend].uncorr = strndup(c->p.s, uncorr)))
		return;
	np[c->n_pend].card = card;
	if ((np[c->n_pend].path = strdup(c->p.s)))
		np[c->n_pend++].s = s;
	else
		free(np[c->n_pend].uncorr);
}

/* The schema JSON as cel_check_fields reads it (kube's SchemaDeclType). */
static const void *j_prop(const void *node, const char *name)
{
	const json_t *p =
	    json_object_get(json_object_get(node, "properties"), name);
	return json_is_object(p) ? p : NULL;
}

static const void *j_items(const void *node)
{
	const json_t *i = json_object_get(node, "items");
	return json_is_object(i) ? i : NULL;
}

static const void *j_addl(const void *node)
{
	const json_t *a = json_object_get(node, "additionalProperties");
	return json_is_object(a) ? a : NULL;
}

/* Only "is it a string" is asked (kube's Type.Contains("string")). */
/* kube's SchemaDeclType of a schema node, as schema.c's cel_type reads
   its compiled form. */
static enum cel_stype j_type(const void *node)
{
	const char *t = str(node, "type"), *f = str(node, "format");
	if (is_true(node, "x-kubernetes-int-or-string"))
		return CEL_S_INT_OR_STRING;
	if (!t)
		return CEL_S_ANY;
	if (!strcmp(t, "string")) {
		if (f && !strcmp(f, "byte"))
			return CEL_S_BYTES;
		if (f && !strcmp(f, "duration"))
			return CEL_S_DURATION;
		if (f && (!strcmp(f, "date") || !strcmp(f, "date-time") ||
			  !strcmp(f, "datetime")))
			return CEL_S_TIMESTAMP;
		return CEL_S_STRING;
	}
	if (!strcmp(t, "integer"))
		return CEL_S_INT;
	if (!strcmp(t, "number"))
		return CEL_S_DOUBLE;
	if (!strcmp(t, "boolean"))
		return CEL_S_BOOL;
	if (!strcmp(t, "array"))
		return CEL_S_ARRAY;
	if (!strcmp(t, "object")) {
		if (json_is_object(
			json_object_get(node, "additionalProperties")))
			return CEL_S_MAP;
		return json_object_get(node, "properties") ||
			       !is_true(node,
					"x-kubernetes-preserve-unknown-fields")
			   ? CEL_S_OBJECT
			   : CEL_S_ANY;
	}
	return CEL_S_ANY;
}

static enum cel_ltype j_list_type(const void *node)
{
	(void)node;
	return CEL_L_ATOMIC;
}

#define MAX_REQUEST CEL_MAX_REQUEST

static unsigned j_decl(const void *node);

/* A schema's bound (maxLength ...) as kube reads it, negatives as 0; or
   -1 when there is none. */
static double bound(const json_t *s, const char *k)
{
	const json_t *v = json_object_get(s, k);
	if (!json_is_number(v))
		return -1;
	double d = json_number_value(v);
	return d < 0 ? 0 : d;
}

/* A parent's occurrences times its bound on its children (maxItems,
   maxProperties), unbounded (-1) when either is. */
static double times(double card, double max)
{
	return card < 0 || max < 0 ? -1 : card * max;
}

/* kube's DeclType.MinSerializedSize of a node CEL sees: the shortest JSON
   a value here can have. */
static double j_min_size(const json_t *s, int depth)
{
	const char *t = str(s, "type"), *f = str(s, "format");
	if (is_true(s, "x-kubernetes-int-or-string") || !t)
		return 1;
	if (!strcmp(t, "string"))
		return !f			 ? 2
		       : !strcmp(f, "duration")	 ? 3
		       : !strcmp(f, "date")	 ? 12
		       : !strcmp(f, "date-time") ? 21
						 : 2;
	if (!strcmp(t, "boolean"))
		return 4;
	if (!strcmp(t, "object") &&
	    !json_object_get(s, "additionalProperties") &&
	    depth < SRV_SCHEMA_MAX_DEPTH) {
		/* {}, and each required field with no default */
		double n = 2;
		const json_t *req = json_object_get(s, "required"), *r;
		const json_t *props = json_object_get(s, "properties");
		size_t i;
		json_array_foreach(req, i, r)
		{
			const json_t *p =
			    json_object_get(props, json_string_value(r));
			if (json_is_object(p) &&
			    !json_object_get(p, "default") &&
			    (j_decl(p) & CEL_DECL_EXPOSED))
				n += (double)strlen(json_string_value(r)) +
				     j_min_size(p, depth + 1) + 4;
		}
		return n;
	}
	return !strcmp(t, "array") || !strcmp(t, "object") ? 2 : 1;
}

/* How many values of each size fit in one request, as kube estimates
   it: what [] or {} leave of a request, in integers. */
static double per_request(double each)
{
	return (double)((int64_t)(MAX_REQUEST - 2) / (int64_t)each);
}

/* kube's DeclType.MaxElements (common.SchemaDeclType): a string's
   characters, a list's items, a map's entries, at most. */
static double j_max_size(const void *node)
{
	const json_t *s = node;
	const char *t = str(s, "type"), *f = str(s, "format");
	double maxlen = bound(s, "maxLength");
	/* kube's SchemaDeclType sizes an int-or-string as the largest
	   request, whatever its maxLength says */
	if (is_true(s, "x-kubernetes-int-or-string"))
		return MAX_REQUEST - 2;
	if (!t)
		return 0;
	if (!strcmp(t, "string")) {
		if (f && !strcmp(f, "byte"))
			return maxlen >= 0 ? maxlen : MAX_REQUEST - 2;
		if (f && !strcmp(f, "duration"))
			return 32;
		if (f && !strcmp(f, "date"))
			return 12;
		if (f && !strcmp(f, "date-time"))
			return 32;
		if (maxlen >= 0)
			return maxlen * 4;
		const json_t *e = json_object_get(s, "enum"), *v;
		if (json_array_size(e)) {
			double longest = 0;
			size_t i;
			json_array_foreach(e, i, v)
			{
				if (json_is_string(v) &&
				    (double)json_string_length(v) > longest)
					longest = (double)json_string_length(v);
			}
			return longest;
		}
		return MAX_REQUEST - 2;
	}
	if (!strcmp(t, "array")) {
		const json_t *i = j_items(s);
		double n = bound(s, "maxItems");
		if (n >= 0 || !i)
			return n >= 0 ? n : 0;
		return per_request(j_min_size(i, 0) + 1);
	}
	const json_t *a = j_addl(s);
	if (!strcmp(t, "object") && a) {
		double n = bound(s, "maxProperties");
		return n >= 0 ? n : per_request(j_min_size(a, 0) + 6);
	}
	return 0;
}

static const struct cel_schema json_ops = {j_prop, j_items,	j_addl,
					   j_type, j_list_type, j_max_size};

static unsigned j_decl(const void *node)
{
	const json_t *s = node;
	unsigned emb = is_true(s, "x-kubernetes-embedded-resource")
			   ? CEL_DECL_EMBEDDED
			   : 0;
	const char *t = str(s, "type");
	if (is_true(s, "x-kubernetes-int-or-string"))
		return CEL_DECL_EXPOSED | emb;
	if (!t)
		return 0;
	if (!strcmp(t, "array")) {
		const void *i = j_items(s);
		return i && (j_decl(i) & CEL_DECL_EXPOSED)
			   ? CEL_DECL_EXPOSED | CEL_DECL_LIST | emb
			   : 0;
	}
	if (!strcmp(t, "object")) {
		const void *a = j_addl(s);
		if (a)
			return (j_decl(a) & CEL_DECL_EXPOSED)
				   ? CEL_DECL_EXPOSED | CEL_DECL_MAP | emb
				   : 0;
		return CEL_DECL_EXPOSED | CEL_DECL_OBJECT | emb;
	}
	if (!strcmp(t, "string") || !strcmp(t, "boolean") ||
	    !strcmp(t, "number") || !strcmp(t, "integer"))
		return CEL_DECL_EXPOSED | emb;
	return 0;
}

/* Does schema s, or a schema under it, have a rule whose field (rule or
   messageExpression) is src? The places kube's SchemaHas visits. */
static bool schema_has_expr(const json_t *s, const char *field, const char *src,
			    int depth)
{
	if (!json_is_object(s) || depth > 64)
		return false;
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(s, "x-kubernetes-validations"), i, e)
	{
		const char *t = json_string_value(json_object_get(e, field));
		if (t && !strcmp(t, src))
			return true;
	}
	static const char *const maps[] = {"properties", "patternProperties",
					   "definitions", "dependencies"};
	for (size_t m = 0; m < sizeof maps / sizeof *maps; m++) {
		const char *k;
		const json_t *v;
		json_object_foreach(
		    (json_t *)json_object_get(s, maps[m]), k,
		    v) if (schema_has_expr(v, field, src,
					   depth + 1)) return true;
	}
	static const char *const lists[] = {"allOf", "anyOf", "oneOf", "items"};
	for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
		json_array_foreach(
		    json_object_get(s, lists[l]), i,
		    e) if (schema_has_expr(e, field, src,
					   depth + 1)) return true;
	static const char *const ones[] = {"items", "additionalProperties",
					   "additionalItems", "not"};
	for (size_t o = 0; o < sizeof ones / sizeof *ones; o++)
		if (schema_has_expr(json_object_get(s, ones[o]), field, src,
				    depth + 1))
			return true;
	return false;
}

/* kube's preexistingExpressions: src is one of the old CRD's rules (or
   messageExpressions, as field says), in any of its versions' schemas. */
static bool preexisting(const struct sctx *c, const char *field,
			const char *src)
{
	size_t i;
	const json_t *v;
	json_array_foreach(
	    json_object_get(json_object_get(c->old, "spec"), "versions"), i,
	    v) if (schema_has_expr(json_object_get(json_object_get(v, "schema"),
						   "openAPIV3Schema"),
				   field, src, 0)) return true;
	return false;
}

/* Compile field (rule or messageExpression) of s's rule r, the i-th:
   the program, or NULL with kube's cause when it is not CEL at all or
   reads a field the schema does not declare (kube's checker). what
   starts the cause's "compilation failed". */
static cel_prog *compile_at(struct sctx *c, const json_t *s, const json_t *r,
			    size_t i, const char *field, const char *what)
{
	char why[256];
	bool invalid;
	size_t at;
	const char *src = str(r, field);
	cel_prog *p = cel_compile_env(src, !preexisting(c, field, src), why,
				      sizeof why, &invalid, &at);
	if (p && is_true(r, "optionalOldSelf"))
		cel_set_optional_old_self(p);
	if (p && !cel_check_fields(p, &json_ops, j_decl, s, s == c->root, why,
				   sizeof why, &at)) {
		invalid = true;
		cel_free(p);
		p = NULL;
	}
	if (!p && invalid) {
		char child[96], val[4 * SRV_CAUSE_MESSAGE_MAX + 256],
		    shown[4096];
		snprintf(child, sizeof child,
			 ".x-kubernetes-validations[%zu].%s", i, field);
		rule_gostring(r, val, sizeof val);
		if (at == CEL_PROGRAM_POS) {
			cause(c, "FieldValueInvalid", child,
			      "Invalid value: %s: %s instantiation failed: %s",
			      val, *what ? "messageExpression" : "program",
			      why);
			return NULL;
		}
		/* cel-go's display: where, what, and the line with a caret;
		   the place alone when the whole would not fit a cause */
		if (at != CEL_NO_POS)
			cel_error_display(src, at, why, shown, sizeof shown);
		else
			snprintf(shown, sizeof shown, ": %s", why);
		static const char fmt[] = "Invalid value: %s: %scompilation "
					  "failed: ERROR: <input>%s";
		char *nl = strchr(shown, '\n');
		if (nl &&
		    strlen(fmt) + strlen(val) + strlen(what) + strlen(shown) >=
			SRV_CAUSE_MESSAGE_MAX)
			*nl = 0;
		cause(c, "FieldValueInvalid", child, fmt, val, what, shown);
	}
	/* kube's checker on the result: a rule's must be a bool, a
	   messageExpression's a string */
	bool msg = !strcmp(field, "messageExpression");
	if (p &&
	    cel_result_mismatch(p, &json_ops, j_decl, s, s == c->root, msg)) {
		char child[96], val[8704];
		snprintf(child, sizeof child,
			 ".x-kubernetes-validations[%zu].%s", i, field);
		rule_gostring(r, val, sizeof val);
		cause(c, "FieldValueInvalid", child, "Invalid value: %s: %s",
		      val,
		      msg ? "messageExpression must evaluate to a string"
			  : "cel expression must evaluate to a bool");
		cel_free(p);
		p = NULL;
	}
	return p;
}

/* The expressions of s's rules compile, as kube compiles them once the
   schema is structural. A rule that is CEL outside lapis's subset is
   accepted (it stays unevaluated, with a Warning on writes); one that is
   not CEL at all is refused, as kube refuses it. */
/* kube's per-expression cost limit (StaticEstimatedCostLimit). */
#define COST_LIMIT 1e7

/* kube refuses a rule whose estimated cost, times how often its node can
   occur (card; when unbounded, as many as a request holds of the node's
   smallest value), passes COST_LIMIT. lapis has a floor under kube's
   estimate (cel_cost_floor) and refuses only when that floor passes the
   limit a hundredfold, where kube's message says no more than "more than
   100x": what lapis refuses, kube refuses with the same words. */
/* kube's limit on all of a schema's rules together
   (StaticEstimatedCRDCostLimit), and what its causes end with. */
#define CRD_COST_LIMIT 1e8
#define COST_HINT                                                              \
	"(try simplifying the rule, or adding maxItems, maxProperties, and "   \
	"maxLength where arrays, maps, and strings are declared)"

/* kube's TotalCost.ObserveExpressionCost: every cost adds to the total;
   those of 1% of the schema's limit or more compete for the four named
   when the total passes it. */
static void observe_cost(struct sctx *c, const char *child, double cost,
			 bool exact)
{
	c->total_cost += cost;
	c->total_exact = c->total_exact && exact;
	if (cost < CRD_COST_LIMIT / 100)
		return;
	int at = c->n_top;
	while (at > 0 && c->top[at - 1].cost < cost)
		at--;
	if (at >= 4)
		return;
	size_t n = strlen(c->p.s) + strlen(child) + 1;
	char *path = malloc(n);
	if (!path)
		return;
	snprintf(path, n, "%s%s", c->p.s, child);
	if (c->n_top == 4)
		free(c->top[3].path);
	else
		c->n_top++;
	memmove(&c->top[at + 1], &c->top[at],
		(size_t)(c->n_top - 1 - at) * sizeof *c->top);
	c->top[at] = (struct rule_cost){path, cost};
}

/* kube's words for how far over a limit a cost is (getCostErrorMessage). */
static void cost_factor(double cost, double limit, char *out, size_t size)
{
	double f = cost / limit;
	if (f > 100)
		snprintf(out, size, "more than 100x");
	else if (f < 1.5)
		snprintf(out, size, "%fx", f);
	else
		snprintf(out, size, "%.1fx", f);
}

static void check_cost(struct sctx *c, const json_t *s, const cel_prog *p,
		       size_t i, const char *field, double card)
{
	bool exact;
	double cost =
	    cel_cost_floor(p, &json_ops, j_decl, s, s == c->root, &exact);
	if (card < 0)
		card = (double)((int64_t)MAX_REQUEST /
				(int64_t)(j_min_size(s, 0) + 1));
	char child[96];
	snprintf(child, sizeof child, ".x-kubernetes-validations[%zu].%s", i,
		 field);
	double total = cost > 0 ? cost * card : 0; /* never 0 times inf */
	observe_cost(c, child, total, exact);
	if (total <= (exact ? 1 : 100) * COST_LIMIT)
		return;
	char factor[64];
	cost_factor(total, COST_LIMIT, factor, sizeof factor);
	cause(c, "FieldValueForbidden", child,
	      "Forbidden: estimated %s cost exceeds budget by factor of "
	      "%s " COST_HINT,
	      strcmp(field, "rule") ? "messageExpression" : "rule", factor);
}

/* kube's check of the schema's total, after every rule: refused (as far
   as lapis's floors prove it a hundredfold over), the costliest rules are
   named, then the schema. */
static void check_total_cost(struct sctx *c, const char *base)
{
	if (c->total_cost > (c->total_exact ? 1 : 100) * CRD_COST_LIMIT) {
		char factor[64];
		cost_factor(c->total_cost, CRD_COST_LIMIT, factor,
			    sizeof factor);
		for (int i = 0; i < c->n_top; i++)
			srv_error_cause(c->err, "FieldValueForbidden",
					c->top[i].path,
					"Forbidden: contributed to estimated "
					"rule cost total exceeding cost limit "
					"for entire OpenAPIv3 schema");
		pop(&c->p, 0);
		push(&c->p, "%s.openAPIV3Schema", base);
		cause(c, "FieldValueForbidden", "",
		      "Forbidden: x-kubernetes-validations estimated rule cost "
		      "total for entire OpenAPIv3 schema exceeds budget by "
		      "factor of %s " COST_HINT,
		      factor);
	}
	for (int i = 0; i < c->n_top; i++)
		free(c->top[i].path);
	c->n_top = 0;
}

double srv_rule_cost_floor(const json_t *schema, const char *rule, bool root,
			   bool *exact)
{
	*exact = false;
	char why[256];
	cel_prog *p = cel_compile(rule, why, sizeof why);
	if (!p)
		return -1;
	double cost = -1;
	if (cel_check_fields(p, &json_ops, j_decl, schema, root, why,
			     sizeof why, NULL))
		cost =
		    cel_cost_floor(p, &json_ops, j_decl, schema, root, exact);
	cel_free(p);
	return cost;
}

/* Compile s's rules; uncorr (or NULL) is the array above s whose items
   kube cannot pair between the old object and the new, where a rule may
   not use oldSelf. */
static void compile_rules(struct sctx *c, const json_t *s, const char *uncorr,
			  double card)
{
	const json_t *v = json_object_get(s, "x-kubernetes-validations");
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *r = json_array_get(v, i);
		const char *rule = str(r, "rule"),
			   *mexp = str(r, "messageExpression");
		if (!json_is_object(r) || !rule)
			continue;
		cel_prog *p = compile_at(c, s, r, i, "rule", "");
		if (p)
			check_cost(c, s, p, i, "rule", card);
		const json_t *oos = json_object_get(r, "optionalOldSelf");
		if (p && !cel_uses_old_self(p) && json_is_boolean(oos)) {
			char child[96];
			snprintf(
			    child, sizeof child,
			    ".x-kubernetes-validations[%zu].optionalOldSelf",
			    i);
			cause(c, "FieldValueInvalid", child,
			      "Invalid value: %s: may not be set if oldSelf is "
			      "not used in rule",
			      json_is_true(oos) ? "true" : "false");
		}
		bool old_self = p && cel_uses_old_self(p);
		cel_free(p);
		if (mexp && mexp[0]) {
			cel_prog *q =
			    compile_at(c, s, r, i, "messageExpression",
				       "messageExpression ");
			/* kube does not multiply a message's cost by the
			   node's occurrences */
			if (q)
				check_cost(c, s, q, i, "messageExpression", 1);
			cel_free(q);
		}
		if (old_self && uncorr) {
			char child[96], val[700];
			snprintf(child, sizeof child,
				 ".x-kubernetes-validations[%zu].rule", i);
			srv_go_quote(rule, val, sizeof val);
			cause(
			    c, "FieldValueInvalid", child,
			    "Invalid value: %s: oldSelf cannot be used on the "
			    "uncorrelatable portion of the schema within %s",
			    val, uncorr);
		}
	}
}

static void openapi_walk(struct sctx *c, const json_t *s, struct ovis v,
			 int depth)
{
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	int from = c->err->n_causes;
	if (!c->defaults_walk) {
		check_type(c, s);
		check_default(c, s, v);
		check_forbidden_keywords(c, s, v);
		check_list_and_map_types(c, s);
	} else {
		check_default(c, s, v);
	}
	struct ovis sub = v;
	sub.root = false;
	const json_t *ap = json_object_get(s, "additionalProperties");
	if (json_is_object(ap)) {
		struct ovis a = sub;
		if (v.inside_meta)
			a.no_default =
			    "inside additionalProperties applying to "
			    "object metadata";
		a.in_addl = true;
		a.card = times(v.card, bound(s, "maxProperties"));
		size_t mark = push(&c->p, ".additionalProperties");
		openapi_walk(c, ap, a, depth + 1);
		pop(&c->p, mark);
	}
	/* a map type kube does not know cannot correlate its fields
	   (cel.MapIsCorrelatable): no oldSelf below it */
	struct ovis props = sub;
	const char *mt = str(s, "x-kubernetes-map-type");
	if (mt && strcmp(mt, "granular") && strcmp(mt, "atomic") &&
	    !props.uncorr)
		props.uncorr = c->p.len;
	const char *k;
	json_t *p;
	json_object_foreach(json_object_get(s, "properties"), k, p)
	{
		struct ovis pv = props;
		bool meta = !strcmp(k, "metadata") ||
			    !strcmp(k, "apiVersion") || !strcmp(k, "kind");
		if (meta &&
		    (v.root || is_true(s, "x-kubernetes-embedded-resource"))) {
			pv.inside_meta = true;
			pv.emb_at = v.root ? 0 : c->p.len;
			if (v.root) {
				pv.no_default = !strcmp(k, "metadata")
						    ? "in top-level metadata"
						: !strcmp(k, "kind")
						    ? "in top-level kind"
						    : "in top-level apiVersion";
			}
		}
		size_t mark = push(&c->p, ".properties[%s]", k);
		openapi_walk(c, p, pv, depth + 1);
		pop(&c->p, mark);
	}
	const json_t *n = json_object_get(s, "not");
	if (n) {
		size_t mark = push(&c->p, ".not");
		openapi_walk(c, n, sub, depth + 1);
		pop(&c->p, mark);
	}
	openapi_list(c, s, "allOf", sub, depth);
	openapi_list(c, s, "oneOf", sub, depth);
	openapi_list(c, s, "anyOf", sub, depth);
	const json_t *items = json_object_get(s, "items");
	const char *lt = str(s, "x-kubernetes-list-type");
	struct ovis iv = sub;
	if (!iv.uncorr && !(lt && !strcmp(lt, "map")))
		iv.uncorr = c->p.len;
	iv.card = times(v.card, bound(s, "maxItems"));
	if (json_is_object(items)) {
		size_t mark = push(&c->p, ".items");
		openapi_walk(c, items, iv, depth + 1);
		pop(&c->p, mark);
	} else {
		openapi_list(c, s, "items", iv, depth);
	}
	if (!c->defaults_walk)
		check_rules(c, s, from, v.uncorr, v.card);
}

/* ------------------------------------------------------------------------ */
/* 2. Structural invariants.                                                 */

enum level { ROOT, ITEM, FIELD };

/* {type: integer} exactly, then {type: string} exactly. */
static bool int_or_string_pair(const json_t *any_of)
{
	if (json_array_size(any_of) != 2)
		return false;
	const json_t *a = json_array_get(any_of, 0);
	const json_t *b = json_array_get(any_of, 1);
	return json_object_size(a) == 1 && json_object_size(b) == 1 &&
	       str(a, "type") && !strcmp(str(a, "type"), "integer") &&
	       str(b, "type") && !strcmp(str(b, "type"), "string");
}

static void nested_walk(struct sctx *c, const json_t *v, bool skip_any_of,
			bool skip_all_of_any_of, enum level lvl, int depth);

/* The combinators of a node (kube's validateValueValidation). */
static void value_validation(struct sctx *c, const json_t *s, bool skip_any_of,
			     bool skip_all_of_any_of, enum level lvl, int depth)
{
	size_t i, mark;
	json_t *x;
	if (!skip_any_of) {
		json_array_foreach(json_object_get(s, "anyOf"), i, x)
		{
			mark = push(&c->p, ".anyOf[%zu]", i);
			nested_walk(c, x, false, false, lvl, depth + 1);
			pop(&c->p, mark);
		}
	}
	json_array_foreach(json_object_get(s, "allOf"), i, x)
	{
		mark = push(&c->p, ".allOf[%zu]", i);
		nested_walk(c, x, skip_all_of_any_of && i == 0, false, lvl,
			    depth + 1);
		pop(&c->p, mark);
	}
	json_array_foreach(json_object_get(s, "oneOf"), i, x)
	{
		mark = push(&c->p, ".oneOf[%zu]", i);
		nested_walk(c, x, false, false, lvl, depth + 1);
		pop(&c->p, mark);
	}
	const json_t *n = json_object_get(s, "not");
	if (n) {
		mark = push(&c->p, ".not");
		nested_walk(c, n, false, false, lvl, depth + 1);
		pop(&c->p, mark);
	}
	const char *pat = str(s, "pattern");
	char why[2560];
	if (pat && *pat && srv_re2_error(pat, why, sizeof why)) {
		char q[2560];
		srv_go_quote(pat, q, sizeof q);
		cause(c, "FieldValueInvalid", ".pattern",
		      "Invalid value: %s: must be a valid regular expression, "
		      "but isn't: %s",
		      q, why);
	}
}

/* Inside allOf/anyOf/oneOf/not only value validations may appear. */
static void nested_walk(struct sctx *c, const json_t *v, bool skip_any_of,
			bool skip_all_of_any_of, enum level lvl, int depth)
{
	if (!json_is_object(v) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	value_validation(c, v, skip_any_of, skip_all_of_any_of, lvl, depth);
	const json_t *items = json_object_get(v, "items");
	if (json_is_object(items)) {
		size_t mark = push(&c->p, ".items");
		nested_walk(c, items, false, false, lvl, depth + 1);
		pop(&c->p, mark);
	}
	const char *k;
	json_t *p;
	json_object_foreach(json_object_get(v, "properties"), k, p)
	{
		size_t mark = push(&c->p, ".properties[%s]", k);
		nested_walk(c, p, false, false, FIELD, depth + 1);
		pop(&c->p, mark);
	}
	const char *t = str(v, "type");
	if (t && *t)
		FORBIDDEN(c, ".type", "must be empty to be structural");
	if (json_object_get(v, "additionalProperties"))
		FORBIDDEN(c, ".additionalProperties",
			  "must be undefined to be structural");
	const json_t *d = json_object_get(v, "default");
	if (d && !json_is_null(d))
		FORBIDDEN(c, ".default", "must be undefined to be structural");
	const char *title = str(v, "title");
	if (title && *title)
		FORBIDDEN(c, ".title", "must be empty to be structural");
	const char *desc = str(v, "description");
	if (desc && *desc)
		FORBIDDEN(c, ".description", "must be empty to be structural");
	if (is_true(v, "nullable"))
		FORBIDDEN(c, ".nullable", "must be false to be structural");
	if (json_object_get(v, "externalDocs"))
		FORBIDDEN(c, ".externalDocs",
			  "must be undefined to be structural");
	if (is_true(v, "x-kubernetes-preserve-unknown-fields"))
		FORBIDDEN(c, ".x-kubernetes-preserve-unknown-fields",
			  "must be false to be structural");
	if (is_true(v, "x-kubernetes-embedded-resource"))
		FORBIDDEN(c, ".x-kubernetes-embedded-resource",
			  "must be false to be structural");
	if (is_true(v, "x-kubernetes-int-or-string"))
		FORBIDDEN(c, ".x-kubernetes-int-or-string",
			  "must be false to be structural");
	if (json_array_size(json_object_get(v, "x-kubernetes-list-map-keys")))
		FORBIDDEN(c, ".x-kubernetes-list-map-keys",
			  "must be empty to be structural");
	if (json_object_get(v, "x-kubernetes-list-type"))
		FORBIDDEN(c, ".x-kubernetes-list-type",
			  "must be undefined to be structural");
	if (json_object_get(v, "x-kubernetes-map-type"))
		FORBIDDEN(c, ".x-kubernetes-map-type",
			  "must be undefined to be structural");
	if (json_array_size(json_object_get(v, "x-kubernetes-validations")))
		FORBIDDEN(c, ".x-kubernetes-validations",
			  "must be empty to be structural");
	if (json_object_get(json_object_get(v, "properties"), "metadata"))
		FORBIDDEN(c, ".properties[metadata]",
			  "must not be specified in a nested context");
}

/* metadata at the root may only say type object and restrict name and
   generateName; kube then compares what is left with an empty schema. */
static void metadata_invariants(struct sctx *c, const json_t *m,
				bool check_meta, enum level lvl)
{
	const char *t = type_of(m);
	char q[256];
	if (check_meta && strcmp(t, "object")) {
		quote(q, sizeof q, t);
		cause(c, "FieldValueInvalid", ".type",
		      "Invalid value: %s: must be object", q);
	}
	if (lvl != ROOT)
		return;
	const json_t *props = json_object_get(m, "properties");
	bool name = json_object_get(props, "name") != NULL;
	bool gen = json_object_get(props, "generateName") != NULL;
	size_t n = json_object_size(props);
	bool props_ok =
	    n == 0 || (name && gen && n == 2) || ((name || gen) && n == 1);
	bool other = false;
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)m, k, x)
	{
		if (!strcmp(k, "type") || !strcmp(k, "default") ||
		    !strcmp(k, "properties"))
			continue;
		/* false and empty values are Go zero values: not "specified" */
		if (json_is_false(x) || json_is_null(x) ||
		    (json_is_string(x) && !json_string_length(x)))
			continue;
		other = true;
	}
	if (!props_ok || other)
		FORBIDDEN(c, "",
			  "must not specify anything other than name and "
			  "generateName, but metadata is implicitly specified");
}

static void struct_walk(struct sctx *c, const json_t *s, enum level lvl,
			int depth)
{
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	const char *t = type_of(s);
	const json_t *items = json_object_get(s, "items");
	if (!strcmp(t, "array") && !items)
		REQUIRED(c, ".items", "must be specified");
	if (json_is_object(items)) {
		size_t mark = push(&c->p, ".items");
		struct_walk(c, items, ITEM, depth + 1);
		pop(&c->p, mark);
	}
	const json_t *props = json_object_get(s, "properties");
	const char *k;
	json_t *p;
	json_object_foreach((json_t *)props, k, p)
	{
		size_t mark = push(&c->p, ".properties[%s]", k);
		struct_walk(c, p, FIELD, depth + 1);
		pop(&c->p, mark);
	}
	const json_t *ap = json_object_get(s, "additionalProperties");
	/* true and false count too: kube keeps them as "allows" */
	bool has_ap = ap != NULL;
	if (has_ap && lvl == ROOT)
		FORBIDDEN(c, ".additionalProperties",
			  "must not be used at the root");
	if (json_is_object(ap)) {
		size_t mark = push(&c->p, ".additionalProperties");
		struct_walk(c, ap, FIELD, depth + 1);
		pop(&c->p, mark);
	}
	bool ios = is_true(s, "x-kubernetes-int-or-string");
	bool puf = is_true(s, "x-kubernetes-preserve-unknown-fields");
	bool emb = is_true(s, "x-kubernetes-embedded-resource");
	if (ios && puf)
		cause(c, "FieldValueInvalid",
		      ".x-kubernetes-preserve-unknown-fields",
		      "Invalid value: true: must be false if "
		      "x-kubernetes-int-or-string is true");
	if (ios && emb)
		cause(c, "FieldValueInvalid", ".x-kubernetes-embedded-resource",
		      "Invalid value: true: must be false if "
		      "x-kubernetes-int-or-string is true");
	const json_t *all_of = json_object_get(s, "allOf");
	bool skip_any_of = int_or_string_pair(json_object_get(s, "anyOf"));
	bool skip_first = json_array_size(all_of) >= 1 &&
			  int_or_string_pair(json_object_get(
			      json_array_get(all_of, 0), "anyOf"));
	value_validation(c, s, skip_any_of, skip_first, lvl, depth);
	char q[256];
	bool check_meta = lvl == ROOT || emb;
	if (emb && strcmp(t, "object")) {
		if (!*t) {
			REQUIRED(
			    c, ".type",
			    "must be object if x-kubernetes-embedded-resource "
			    "is true");
		} else {
			quote(q, sizeof q, t);
			cause(c, "FieldValueInvalid", ".type",
			      "Invalid value: %s: must be object if "
			      "x-kubernetes-embedded-resource is true",
			      q);
		}
	} else if (!*t && !ios && !puf) {
		REQUIRED(c, ".type",
			 lvl == ROOT ? "must not be empty at the root"
			 : lvl == ITEM
			     ? "must not be empty for specified array items"
			     : "must not be empty for specified object "
			       "fields");
	}
	if (emb && has_ap)
		FORBIDDEN(c, ".additionalProperties",
			  "must not be used if x-kubernetes-embedded-resource "
			  "is set");
	if (lvl == ROOT && *t && strcmp(t, "object")) {
		quote(q, sizeof q, t);
		cause(c, "FieldValueInvalid", ".type",
		      "Invalid value: %s: must be object at the root", q);
	}
	static const char *const tm[] = {"kind", "apiVersion"};
	for (int i = 0; i < 2 && check_meta; i++) {
		const json_t *x = json_object_get(props, tm[i]);
		if (x && strcmp(type_of(x), "string")) {
			char child[64];
			snprintf(child, sizeof child, ".properties[%s].type",
				 tm[i]);
			quote(q, sizeof q, type_of(x));
			cause(c, "FieldValueInvalid", child,
			      "Invalid value: %s: must be string", q);
		}
	}
	const json_t *meta = json_object_get(props, "metadata");
	if (meta) {
		size_t mark = push(&c->p, ".properties[metadata]");
		metadata_invariants(c, meta, check_meta, lvl);
		pop(&c->p, mark);
	}
	if (emb && !puf && !json_object_size(props))
		REQUIRED(
		    c, ".properties",
		    "must not be empty if x-kubernetes-embedded-resource is "
		    "true without x-kubernetes-preserve-unknown-fields");
}

/* ------------------------------------------------------------------------ */
/* 3. Completeness: what combinators name, the structural part declares.     */

static void complete_nested(struct sctx *c, const json_t *v, const json_t *s,
			    struct spath *vpath, int depth);

static void complete_value(struct sctx *c, const json_t *v, const json_t *s,
			   struct spath *vpath, int depth)
{
	if (depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	static const char *const kws[] = {"allOf", "anyOf", "oneOf"};
	const json_t *n = json_object_get(v, "not");
	if (n) {
		size_t m = push(vpath, ".not");
		complete_nested(c, n, s, vpath, depth + 1);
		pop(vpath, m);
	}
	for (int k = 0; k < 3; k++) {
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(v, kws[k]), i, x)
		{
			size_t m = push(vpath, ".%s[%zu]", kws[k], i);
			complete_nested(c, x, s, vpath, depth + 1);
			pop(vpath, m);
		}
	}
}

static void complete_nested(struct sctx *c, const json_t *v, const json_t *s,
			    struct spath *vpath, int depth)
{
	if (!json_is_object(v) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	if (!json_is_object(s)) {
		cause(c, "FieldValueRequired", "",
		      "Required value: because it is defined in %s", vpath->s);
		return;
	}
	complete_value(c, v, s, vpath, depth);
	const json_t *vi = json_object_get(v, "items");
	if (json_is_object(vi)) {
		size_t ms = push(&c->p, ".items");
		size_t mv = push(vpath, ".items");
		complete_nested(c, vi, json_object_get(s, "items"), vpath,
				depth + 1);
		pop(vpath, mv);
		pop(&c->p, ms);
	}
	const char *k;
	json_t *p;
	json_object_foreach(json_object_get(v, "properties"), k, p)
	{
		const json_t *sp =
		    json_object_get(json_object_get(s, "properties"), k);
		size_t ms = push(&c->p, ".properties[%s]", k);
		size_t mv = push(vpath, ".properties[%s]", k);
		if (!sp)
			cause(c, "FieldValueRequired", "",
			      "Required value: because it is defined in %s",
			      vpath->s);
		else
			complete_nested(c, p, sp, vpath, depth + 1);
		pop(vpath, mv);
		pop(&c->p, ms);
	}
}

/* ------------------------------------------------------------------------ */

static const char *const root_with_status[] = {
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations"};

static void check_status_root(struct sctx *c, const json_t *s)
{
	const char *t = type_of(s);
	if (*t && strcmp(t, "object")) {
		char q[256];
		quote(q, sizeof q, t);
		cause(
		    c, "FieldValueInvalid", ".openAPIV3Schema.type",
		    "Invalid value: %s: only \"object\" is allowed as the type "
		    "at the root of the schema if the status subresource is "
		    "enabled",
		    q);
	}
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)s, k, x)
	{
		if (json_is_false(x) || json_is_null(x))
			continue;
		bool ok = false;
		for (size_t i = 0;
		     i < sizeof root_with_status / sizeof root_with_status[0];
		     i++)
			ok = ok || !strcmp(k, root_with_status[i]);
		if (!ok) {
			/* kube prints the whole schema struct as the value;
			   we name the field that is not allowed instead */
			cause(c, "FieldValueInvalid", ".openAPIV3Schema",
			      "Invalid value: \"%.*s\": only [Description Type "
			      "Format Title Maximum ExclusiveMaximum Minimum "
			      "ExclusiveMinimum MaxLength MinLength Pattern "
			      "MaxItems "
			      "MinItems UniqueItems MultipleOf Required Items "
			      "Properties ExternalDocs Example "
			      "XPreserveUnknownFields "
			      "XValidations] fields are allowed at the root of "
			      "the "
			      "schema if the status subresource is enabled",
			      cut_len(k, 100), k);
			break;
		}
	}
}

/* Whether kube's NewStructural converts s: nowhere a keyword it does not
   support (id, $schema, $ref, patternProperties, dependencies,
   additionalItems, definitions), items given as an array, or
   x-kubernetes-preserve-unknown-fields: false. When it cannot, kube skips
   the structural checks (their errors would repeat the ones above). */
static bool converts(const json_t *s, int depth)
{
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH)
		return true;
	static const char *const strs[] = {"id", "$schema", "$ref"};
	static const char *const maps[] = {"patternProperties", "dependencies",
					   "definitions"};
	for (size_t i = 0; i < 3; i++) {
		const char *v = str(s, strs[i]);
		if ((v && *v) || json_object_size(json_object_get(s, maps[i])))
			return false;
	}
	const json_t *items = json_object_get(s, "items");
	const json_t *ai = json_object_get(s, "additionalItems");
	if (json_is_false(
		json_object_get(s, "x-kubernetes-preserve-unknown-fields")) ||
	    json_array_size(items) || (ai && !json_is_null(ai)))
		return false;
	static const char *const subs[] = {"items", "additionalProperties",
					   "not"};
	for (size_t i = 0; i < 3; i++)
		if (!converts(json_object_get(s, subs[i]), depth + 1))
			return false;
	static const char *const lists[] = {"allOf", "anyOf", "oneOf"};
	size_t j;
	const json_t *x;
	for (size_t i = 0; i < 3; i++)
		json_array_foreach(json_object_get(s, lists[i]), j, x)
		{
			if (!converts(x, depth + 1))
				return false;
		}
	const char *k;
	json_object_foreach((json_t *)json_object_get(s, "properties"), k, x)
	{
		if (!converts(x, depth + 1))
			return false;
	}
	return true;
}

void srv_schema_check_crd(const json_t *schema, const char *base, bool status,
			  const json_t *old, struct srv_error *err)
{
	struct sctx c = {
	    .err = err, .root = schema, .old = old, .total_exact = true};
	push(&c.p, "%s", base);
	if (status)
		check_status_root(&c, schema);
	if (is_true(schema, "nullable"))
		FORBIDDEN(&c, ".openAPIV3Schema.nullable",
			  "nullable cannot be true at the root");
	push(&c.p, ".openAPIV3Schema");
	openapi_walk(&c, schema, (struct ovis){.root = true, .card = 1}, 0);
	int before = err->n_causes;
	bool conv = converts(schema, 0);
	if (conv) {
		struct_walk(&c, schema, ROOT, 0);
		struct spath vpath = {{0}, 0};
		push(&vpath, "%s", c.p.s);
		complete_value(&c, schema, schema, &vpath, 0);
	}
	/* kube compiles rules only in a structural schema */
	bool structural = conv && err->n_causes == before;
	/* and checks the defaults' values only then (ValidateDefaults in
	   the else branch of ValidateStructural), after the rest */
	if (structural) {
		size_t mark = c.p.len;
		c.defaults_walk = true;
		openapi_walk(&c, schema, (struct ovis){.root = true, .card = 1},
			     0);
		c.defaults_walk = false;
		pop(&c.p, mark);
	}
	for (size_t i = 0; i < c.n_pend; i++) {
		if (structural) {
			pop(&c.p, 0);
			push(&c.p, "%s", c.pend[i].path);
			compile_rules(&c, c.pend[i].s, c.pend[i].uncorr,
				      c.pend[i].card);
		}
		free(c.pend[i].path);
		free(c.pend[i].uncorr);
	}
	free(c.pend);
	check_total_cost(&c, base);
}
