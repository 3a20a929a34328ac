/*
 * fields.c -- fieldValidation for built-in kinds and their OpenAPI schemas,
 * both from the field tables of pbtab.h (see fields.h).
 *
 * kube decodes a built-in object into its Go struct: a member the struct
 * has no field for is dropped, and with strict decoding recorded as
 * `unknown field "<path>"` (sigs.k8s.io/json for a JSON body, the
 * unstructured converter for a strategic merge patch). The tables list
 * every JSON field of the messages lapis serves, so walking an object
 * against them finds exactly those members.
 *
 * Pure, any thread: no globals but the constant tables.
 *
 * Invariants:
 *   1. A path never overflows its buffer: a path longer than PATH_MAX_LEN
 *      is cut (the error text then names a prefix of the path).
 *   2. Recursion follows the tables, which are finite and acyclic, so it
 *      is bounded by their depth whatever the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"

/* Paths of unknown fields in error texts; a key longer than this is cut. */
#define PATH_MAX_LEN 1024

/* ------------------------------------------------------------------ */
/* Strict errors                                                        */
/* ------------------------------------------------------------------ */

enum srv_fv srv_fv_mode(const char *value)
{
	if (value && !strcmp(value, "Strict"))
		return SRV_FV_STRICT;
	if (value && !strcmp(value, "Ignore"))
		return SRV_FV_IGNORE;
	return SRV_FV_WARN;
}

void srv_strict_add(struct srv_strict *s, const char *text)
{
	if (!s || s->mode == SRV_FV_IGNORE || s->n >= SRV_STRICT_MAX)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->errs[i], text))
			return;
	char *c = strdup(text);
	if (c)
		s->errs[s->n++] = c;
}

/* Go's strconv.Quote of a valid UTF-8 string: backslash escapes for the
   quote, the backslash and ASCII control characters; the rest as is. */
static void go_quote(const char *in, char *out, size_t size)
{
	size_t o = 0;

	out[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char esc[8] = "";
		switch (*p) {
		case '"':
			strcpy(esc, "\\\"");
			break;
		case '\\':
			strcpy(esc, "\\\\");
			break;
		case '\a':
			strcpy(esc, "\\a");
			break;
		case '\b':
			strcpy(esc, "\\b");
			break;
		case '\f':
			strcpy(esc, "\\f");
			break;
		case '\n':
			strcpy(esc, "\\n");
			break;
		case '\r':
			strcpy(esc, "\\r");
			break;
		case '\t':
			strcpy(esc, "\\t");
			break;
		case '\v':
			strcpy(esc, "\\v");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				snprintf(esc, sizeof esc, "\\x%02x", *p);
			else
				esc[0] = (char)*p;
		}
		size_t n = strlen(esc);
		if (o + n + 2 > size)
			break;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o++] = '"';
	out[o] = '\0';
}

void srv_strict_field(struct srv_strict *s, const char *what, const char *path)
{
	if (!s || s->mode == SRV_FV_IGNORE)
		return;
	char q[4 * PATH_MAX_LEN + 3];
	char text[sizeof q + 32];
	go_quote(path, q, sizeof q);
	snprintf(text, sizeof text, "%s %s", what, q);
	srv_strict_add(s, text);
}

char *srv_strict_message(const struct srv_strict *s)
{
	static const char head[] = "strict decoding error: ";

	if (!s || !s->n)
		return NULL;
	size_t len = sizeof head;
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->errs[i]) + 2;
	char *m = malloc(len);
	if (!m)
		return NULL;
	char *p = m;
	memcpy(p, head, sizeof head - 1);
	p += sizeof head - 1;
	for (size_t i = 0; i < s->n; i++) {
		if (i) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		size_t n = strlen(s->errs[i]);
		memcpy(p, s->errs[i], n);
		p += n;
	}
	*p = '\0';
	return m;
}

void srv_strict_free(struct srv_strict *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->errs[i]);
	s->n = 0;
}

/* ------------------------------------------------------------------ */
/* The walker                                                           */
/* ------------------------------------------------------------------ */

static void walk_msg(const struct pb_msg *m, json_t *obj, char *path,
		     size_t plen, bool sorted, bool root, struct srv_strict *s);

/* path[0..plen) + ".key" (or "key" at the root) into path; returns the new
   length. path has room for PATH_MAX_LEN + 1 bytes. */
static size_t path_key(char *path, size_t plen, const char *key)
{
	int n = snprintf(path + plen, PATH_MAX_LEN + 1 - plen, "%s%s",
			 plen ? "." : "", key);
	size_t end = plen + (n > 0 ? (size_t)n : 0);
	return end > PATH_MAX_LEN ? PATH_MAX_LEN : end;
}

static size_t path_index(char *path, size_t plen, size_t i)
{
	int n = snprintf(path + plen, PATH_MAX_LEN + 1 - plen, "[%zu]", i);
	size_t end = plen + (n > 0 ? (size_t)n : 0);
	return end > PATH_MAX_LEN ? PATH_MAX_LEN : end;
}

static bool known(const struct pb_msg *m, const char *key, bool root)
{
	if (root && (!strcmp(key, "apiVersion") || !strcmp(key, "kind")))
		return true;
	return srv_pb_field(m, key) != NULL;
}

/* Walk inside a known member's value (only messages have fields). */
static void walk_value(const struct pb_field *f, json_t *v, char *path,
		       size_t plen, bool sorted, struct srv_strict *s)
{
	if (!f || f->type != PB_MSG)
		return;
	if (!(f->flags & PB_REP)) {
		if (json_is_object(v))
			walk_msg(f->sub, v, path, plen, sorted, false, s);
		return;
	}
	size_t i;
	json_t *item;
	json_array_foreach(v, i, item)
	{
		if (!json_is_object(item))
			continue;
		size_t ilen = path_index(path, plen, i);
		walk_msg(f->sub, item, path, ilen, sorted, false, s);
		path[plen] = '\0';
	}
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void walk_msg(const struct pb_msg *m, json_t *obj, char *path,
		     size_t plen, bool sorted, bool root, struct srv_strict *s)
{
	size_t n = json_object_size(obj);
	if (!n)
		return;
	const char **keys = malloc(n * sizeof *keys);
	if (!keys)
		return; /* out of memory: leave the object as it is */
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) keys[k++] = key;
	if (sorted)
		qsort(keys, k, sizeof *keys, cmp_keys);

	size_t n_unknown = 0;
	for (size_t i = 0; i < k; i++) {
		size_t klen = path_key(path, plen, keys[i]);
		if (!known(m, keys[i], root)) {
			srv_strict_field(s, "unknown field", path);
			/* keep unknown keys at the front for deletion below */
			const char *t = keys[n_unknown];
			keys[n_unknown++] = keys[i];
			keys[i] = t;
		} else {
			walk_value(srv_pb_field(m, keys[i]),
				   json_object_get(obj, keys[i]), path, klen,
				   sorted, s);
		}
		path[plen] = '\0';
	}
	/* Deleting frees only the deleted key's own string. */
	for (size_t i = 0; i < n_unknown; i++)
		json_object_del(obj, keys[i]);
	free(keys);
}

void srv_fields_prune(const struct pb_msg *m, json_t *obj, const char *prefix,
		      bool sorted, struct srv_strict *s)
{
	char path[PATH_MAX_LEN + 1];
	snprintf(path, sizeof path, "%s", prefix ? prefix : "");
	if (json_is_object(obj))
		walk_msg(m, obj, path, strlen(path), sorted, false, s);
}

bool srv_builtin_prune(const char *kind, const char *api_version, json_t *obj,
		       bool sorted, struct srv_strict *s)
{
	const struct pb_msg *m = srv_pb_kind_msg(kind, api_version);
	if (!m)
		return false;
	char path[PATH_MAX_LEN + 1] = "";
	if (json_is_object(obj))
		walk_msg(m, obj, path, 0, sorted, true, s);
	return true;
}

/* ------------------------------------------------------------------ */
/* OpenAPI v3 schemas                                                   */
/* ------------------------------------------------------------------ */

#define REF_PREFIX "#/components/schemas/"
#define INTORSTR_NAME "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

static bool add_msg_schema(const struct pb_msg *m, json_t *schemas);

static void msg_name(const struct pb_msg *m, char *buf, size_t n)
{
	snprintf(buf, n, "%s.%s", m->pkg, m->name);
}

static json_t *ref_to(const char *name)
{
	char ref[320];
	snprintf(ref, sizeof ref, REF_PREFIX "%s", name);
	return json_pack("{s:s}", "$ref", ref);
}

/* The schema of one value of f (an item, for a repeated field). */
static json_t *value_schema(const struct pb_field *f, json_t *schemas)
{
	char name[256];

	switch (f->type) {
	case PB_STRING:
		return json_pack("{s:s}", "type", "string");
	case PB_BYTES:
		return json_pack("{s:s,s:s}", "type", "string", "format",
				 "byte");
	case PB_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case PB_INT32:
		return json_pack("{s:s,s:s}", "type", "integer", "format",
				 "int32");
	case PB_INT64:
		return json_pack("{s:s,s:s}", "type", "integer", "format",
				 "int64");
	case PB_MSG:
		if (!add_msg_schema(f->sub, schemas))
			return NULL;
		msg_name(f->sub, name, sizeof name);
		return ref_to(name);
	case PB_TIME:
	case PB_MICROTIME:
		return json_pack("{s:s,s:s}", "type", "string", "format",
				 "date-time");
	case PB_INTORSTR:
		/* kube's IntOrString: a string schema with this format, which
		   validators read as "integer or string" */
		if (!json_object_get(schemas, INTORSTR_NAME) &&
		    json_object_set_new(
			schemas, INTORSTR_NAME,
			json_pack("{s:s,s:s,s:s}", "description",
				  "IntOrString is a type that can hold an "
				  "int32 or a string.",
				  "type", "string", "format", "int-or-string")))
			return NULL;
		return ref_to(INTORSTR_NAME);
	case PB_FIELDSV1:
		return json_pack("{s:s}", "type", "object");
	case PB_MAP_STRING:
		return json_pack("{s:s,s:{s:s,s:s}}", "type", "object",
				 "additionalProperties", "type", "string",
				 "default", "");
	case PB_MAP_BYTES:
		return json_pack("{s:s,s:{s:s,s:s}}", "type", "object",
				 "additionalProperties", "type", "string",
				 "format", "byte");
	}
	return NULL;
}

static json_t *field_schema(const struct pb_field *f, json_t *schemas)
{
	json_t *v = value_schema(f, schemas);
	if (!v || !(f->flags & PB_REP))
		return v;
	json_t *a = json_pack("{s:s,s:o}", "type", "array", "items", v);
	if (a && (f->flags & PB_MERGE)) {
		json_object_set_new(a, "x-kubernetes-patch-strategy",
				    json_string("merge"));
		if (f->merge_key)
			json_object_set_new(a, "x-kubernetes-patch-merge-key",
					    json_string(f->merge_key));
	}
	return a;
}

/* Fill props and required of m's schema from its table. */
static bool fill_props(const struct pb_msg *m, json_t *props, json_t *required,
		       json_t *schemas)
{
	for (size_t i = 0; i < m->n_fields; i++) {
		const struct pb_field *f = &m->fields[i];
		json_t *p = field_schema(f, schemas);
		if (!p || json_object_set_new(props, f->json, p))
			return false;
		if ((f->flags & PB_REQUIRED) &&
		    json_array_append_new(required, json_string(f->json)))
			return false;
	}
	return true;
}

/* Add m's schema (and those it refers to) unless already there. */
static bool add_msg_schema(const struct pb_msg *m, json_t *schemas)
{
	char name[256];
	msg_name(m, name, sizeof name);
	if (json_object_get(schemas, name))
		return true;
	json_t *sch = json_object(), *props = json_object(),
	       *req = json_array();
	/* Placed first so that a message met again while filling refers
	   to it instead of recursing. */
	if (!sch || !props || !req || json_object_set_new(schemas, name, sch)) {
		json_decref(props);
		json_decref(req);
		return false;
	}
	bool ok = fill_props(m, props, req, schemas);
	json_object_set_new(sch, "type", json_string("object"));
	json_object_set_new(sch, "properties", props);
	if (json_array_size(req))
		json_object_set_new(sch, "required", req);
	else
		json_decref(req);
	return ok;
}

bool srv_builtin_openapi(const char *group, const char *version,
			 const char *kind, json_t *schemas)
{
	char av[300], name[256], desc[256];
	if (group[0])
		snprintf(av, sizeof av, "%s/%s", group, version);
	else
		snprintf(av, sizeof av, "%s", version);
	const struct pb_msg *m = srv_pb_kind_msg(kind, av);
	if (!m || !add_msg_schema(m, schemas))
		return false;
	msg_name(m, name, sizeof name);
	json_t *sch = json_object_get(schemas, name);
	json_t *props = json_object_get(sch, "properties");
	snprintf(desc, sizeof desc, "%s is a %s object served by lapis.", kind,
		 kind);
	json_object_set_new(sch, "description", json_string(desc));
	json_object_set_new(
	    props, "apiVersion",
	    json_pack("{s:s,s:s}", "description",
		      "APIVersion defines the versioned schema of this "
		      "representation of an object.",
		      "type", "string"));
	json_object_set_new(
	    props, "kind",
	    json_pack("{s:s,s:s}", "description",
		      "Kind is a string value representing the REST "
		      "resource this object represents.",
		      "type", "string"));
	json_object_set_new(sch, "x-kubernetes-group-version-kind",
			    json_pack("[{s:s,s:s,s:s}]", "group", group, "kind",
				      kind, "version", version));
	return true;
}

/* ------------------------------------------------------------------ */
/* Duplicate fields in a JSON text                                      */
/* ------------------------------------------------------------------ */

/*
 * jansson keeps the last of repeated keys and cannot say where they were,
 * so the duplicates come from a pass over the text, after jansson accepted
 * it (the scanner still checks every bound and stops on anything odd). It
 * follows sigs.k8s.io/json's strict decoding: in document order, a known
 * field of a struct seen twice is `duplicate field "<path>"`, a member no
 * field takes is `unknown field "<path>"` (reported once however often it
 * comes), a repeated map key is a duplicate. Unknown members are not
 * entered. Generic mode (custom resources, decoded into a map) treats
 * every object as a map, at any depth.
 */
struct scan {
	const char *p, *end;
	struct srv_strict *s;
	char path[PATH_MAX_LEN + 1];
	bool bad; /* stopped: malformed or out of memory */
};

static void sc_ws(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' ||
				   *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

static bool sc_is(struct scan *sc, char c)
{
	sc_ws(sc);
	return sc->p < sc->end && *sc->p == c;
}

static void sc_skip_string(struct scan *sc)
{
	sc->p++; /* the opening quote */
	while (sc->p < sc->end && *sc->p != '"')
		sc->p += *sc->p == '\\' && sc->p + 1 < sc->end ? 2 : 1;
	if (sc->p < sc->end)
		sc->p++;
	else
		sc->bad = true;
}

/* One value of any kind, without looking inside (no recursion). */
static void sc_skip(struct scan *sc)
{
	size_t depth = 0;
	do {
		sc_ws(sc);
		if (sc->p >= sc->end) {
			sc->bad = true;
			return;
		}
		char c = *sc->p;
		if (c == '"') {
			sc_skip_string(sc);
		} else if (c == '{' || c == '[') {
			depth++;
			sc->p++;
		} else if (c == '}' || c == ']') {
			if (depth == 0) {
				sc->bad = true;
				return;
			}
			depth--;
			sc->p++;
		} else if (c == ',' || c == ':') {
			sc->p++;
		} else {
			while (sc->p < sc->end &&
			       !strchr(",:]} \t\r\n", *sc->p))
				sc->p++;
		}
	} while (depth > 0 && !sc->bad);
}

static unsigned hexval(char c)
{
	return c >= '0' && c <= '9'   ? (unsigned)(c - '0')
	       : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
	       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
				      : 16;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static bool sc_hex4(struct scan *sc, uint32_t *v)
{
	if (sc->end - sc->p < 4)
		return false;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned h = hexval(sc->p[i]);
		if (h > 15)
			return false;
		*v = *v << 4 | h;
	}
	sc->p += 4;
	return true;
}

/* A key, unescaped (new, NUL-terminated; a \u0000 ends it early, which at
   worst misses a duplicate of a key jansson could not hold anyway). */
static char *sc_key(struct scan *sc)
{
	if (!sc_is(sc, '"')) {
		sc->bad = true;
		return NULL;
	}
	const char *start = ++sc->p;
	while (sc->p < sc->end && *sc->p != '"')
		sc->p += *sc->p == '\\' && sc->p + 1 < sc->end ? 2 : 1;
	if (sc->p >= sc->end) {
		sc->bad = true;
		return NULL;
	}
	const char *stop = sc->p++;
	/* unescaped UTF-8 is never longer than its escaped form */
	char *k = malloc((size_t)(stop - start) + 1);
	if (!k) {
		sc->bad = true;
		return NULL;
	}
	struct scan in = {start, stop, NULL, "", false};
	size_t o = 0;
	while (in.p < in.end) {
		char c = *in.p++;
		if (c != '\\') {
			k[o++] = c;
			continue;
		}
		c = in.p < in.end ? *in.p++ : 0;
		uint32_t cp, lo;
		switch (c) {
		case 'b':
			k[o++] = '\b';
			break;
		case 'f':
			k[o++] = '\f';
			break;
		case 'n':
			k[o++] = '\n';
			break;
		case 'r':
			k[o++] = '\r';
			break;
		case 't':
			k[o++] = '\t';
			break;
		case 'u':
			if (!sc_hex4(&in, &cp))
				cp = 0xfffd;
			if (cp >= 0xd800 && cp < 0xdc00 && in.end - in.p >= 6 &&
			    in.p[0] == '\\' && in.p[1] == 'u') {
				in.p += 2;
				if (sc_hex4(&in, &lo) && lo >= 0xdc00 &&
				    lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				else
					cp = 0xfffd;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			o += put_utf8(k + o, cp);
			break;
		default:
			k[o++] = c;
			break; /* \" \\ \/ */
		}
	}
	k[o] = '\0';
	return k;
}

static void sc_msg(struct scan *sc, const struct pb_msg *m, size_t plen,
		   bool root);
static void sc_map(struct scan *sc, size_t plen, bool generic);

/* Any value in generic mode: objects are maps, arrays are walked. */
static void sc_any(struct scan *sc, size_t plen)
{
	if (sc_is(sc, '{')) {
		sc_map(sc, plen, true);
	} else if (sc_is(sc, '[')) {
		sc->p++;
		for (size_t i = 0; !sc->bad && !sc_is(sc, ']'); i++) {
			if (i && sc_is(sc, ','))
				sc->p++;
			size_t ilen = path_index(sc->path, plen, i);
			sc_any(sc, ilen);
			sc->path[plen] = '\0';
		}
		if (!sc->bad)
			sc->p++;
	} else {
		sc_skip(sc);
	}
}

/* The value of a known field f. */
static void sc_field(struct scan *sc, const struct pb_field *f, size_t plen)
{
	switch (f->type) {
	case PB_MSG:
		if (!(f->flags & PB_REP)) {
			if (sc_is(sc, '{'))
				sc_msg(sc, f->sub, plen, false);
			else
				sc_skip(sc);
			return;
		}
		if (!sc_is(sc, '[')) {
			sc_skip(sc);
			return;
		}
		sc->p++;
		for (size_t i = 0; !sc->bad && !sc_is(sc, ']'); i++) {
			if (i && sc_is(sc, ','))
				sc->p++;
			if (sc_is(sc, '{')) {
				size_t ilen = path_index(sc->path, plen, i);
				sc_msg(sc, f->sub, ilen, false);
				sc->path[plen] = '\0';
			} else {
				sc_skip(sc);
			}
		}
		if (!sc->bad)
			sc->p++;
		return;
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
		if (sc_is(sc, '{'))
			sc_map(sc, plen, false);
		else
			sc_skip(sc);
		return;
	case PB_STRING:
	case PB_BYTES:
	case PB_BOOL:
	case PB_INT32:
	case PB_INT64:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
		sc_skip(sc);
		return;
	}
}

/* Before a member: the comma between members, then the key. NULL at the
   closing brace (consumed) or when stopped. */
static char *sc_member(struct scan *sc, bool first)
{
	if (sc_is(sc, '}')) {
		sc->p++;
		return NULL;
	}
	if (!first) {
		if (!sc_is(sc, ',')) {
			sc->bad = true;
			return NULL;
		}
		sc->p++;
	}
	char *k = sc_key(sc);
	if (k && !sc_is(sc, ':')) {
		sc->bad = true;
		free(k);
		return NULL;
	}
	if (k)
		sc->p++;
	return k;
}

static void sc_msg(struct scan *sc, const struct pb_msg *m, size_t plen,
		   bool root)
{
	uint64_t seen = 0;  /* by field index; tables have < 62 fields */
	unsigned tseen = 0; /* root: apiVersion 1, kind 2 */
	sc->p++;	    /* { */
	for (bool first = true; !sc->bad; first = false) {
		char *k = sc_member(sc, first);
		if (!k)
			return;
		size_t klen = path_key(sc->path, plen, k);
		const struct pb_field *f = srv_pb_field(m, k);
		unsigned t = !root			? 0
			     : !strcmp(k, "apiVersion") ? 1
			     : !strcmp(k, "kind")	? 2
							: 0;
		if (f || t) {
			uint64_t bit = f ? (uint64_t)1 << (f - m->fields) : 0;
			bool dup = f ? (seen & bit) != 0 : (tseen & t) != 0;
			seen |= bit;
			tseen |= t;
			if (dup) {
				/* kube names the field from the parent path */
				sc->path[plen] = '\0';
				char p2[PATH_MAX_LEN + 1];
				memcpy(p2, sc->path, plen + 1);
				path_key(p2, plen, f ? f->json : k);
				srv_strict_field(sc->s, "duplicate field", p2);
			}
			if (f)
				sc_field(sc, f, klen);
			else
				sc_skip(sc);
		} else {
			srv_strict_field(sc->s, "unknown field", sc->path);
			sc_skip(sc);
		}
		sc->path[plen] = '\0';
		free(k);
	}
}

static void sc_map(struct scan *sc, size_t plen, bool generic)
{
	json_t *keys = json_object(); /* the keys seen, as a set */
	if (!keys) {
		sc->bad = true;
		return;
	}
	sc->p++; /* { */
	for (bool first = true; !sc->bad; first = false) {
		char *k = sc_member(sc, first);
		if (!k)
			break;
		if (json_object_get(keys, k)) {
			char p2[PATH_MAX_LEN + 1];
			memcpy(p2, sc->path, plen + 1);
			path_key(p2, plen, k);
			srv_strict_field(sc->s, "duplicate field", p2);
		} else {
			json_object_set_new(keys, k, json_null());
		}
		size_t klen = path_key(sc->path, plen, k);
		if (generic)
			sc_any(sc, klen);
		else
			sc_skip(sc);
		sc->path[plen] = '\0';
		free(k);
	}
	json_decref(keys);
}

bool srv_builtin_scan_json(const char *kind, const char *api_version,
			   const char *text, size_t len, struct srv_strict *s)
{
	const struct pb_msg *m =
	    kind ? srv_pb_kind_msg(kind, api_version) : NULL;
	if (kind && !m)
		return false;
	if (!s || s->mode == SRV_FV_IGNORE)
		return true;
	struct scan sc = {text, text + len, s, "", false};
	if (m && sc_is(&sc, '{'))
		sc_msg(&sc, m, 0, true);
	else if (!m)
		sc_any(&sc, 0);
	return true;
}
