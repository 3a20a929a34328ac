/*
 * table.c -- Table and PartialObjectMetadata conversions (reference §7) and
 * the Accept negotiation that picks them (reference §1.7).
 *
 * Pure, any thread.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <ctype.h>

#include "fields.h"
#include "jsonpath.h"
#include "pbtab.h"
#include "schema.h"
#include "table.h"

/* Go's zero time.Time, 0001-01-01T00:00:00Z, in Unix seconds, and its
   largest Duration (about 292 years) in whole seconds. */
#define GO_ZERO_TIME_UNIX (-62135596800LL)
#define GO_MAX_DURATION_S 9223372036LL

/* ------------------------------------------------------------ negotiation */

/* Clauses of an Accept header looked at; the rest are ignored (clients
   send two or three). */
#define SRV_ACCEPT_CLAUSES 16

struct clause {
	const char *p; /* the clause, len bytes, in the header */
	size_t len;
	double q;
	bool any_type, any_sub; /* "*" as the type or subtype */
};

/* goautoneg's Less, as it is: a higher q first, and also a concrete
   type before "*", or a concrete subtype before "*", whatever their q. */
static bool clause_before(const struct clause *a, const struct clause *b)
{
	if (a->q > b->q)
		return true;
	if (!a->any_type && b->any_type)
		return true;
	return !a->any_sub && b->any_sub;
}

/* The value of parameter name in a clause ("as", "g", "v"), into buf. */
static bool clause_param(const char *c, size_t n, const char *name, char *buf,
			 size_t bn)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < n; i++) {
		if (c[i] != ';')
			continue;
		size_t j = i + 1;
		while (j < n && c[j] == ' ')
			j++;
		if (j + nl < n && !strncasecmp(c + j, name, nl) && c[j + nl] == '=') {
			size_t k = j + nl + 1, o = 0;
			while (k < n && c[k] != ';' && c[k] != ' ' && o < bn - 1)
				buf[o++] = c[k++];
			buf[o] = 0;
			return true;
		}
	}
	return false;
}

static lp_err negotiate(const char *accept, const char *include_object,
			bool list, bool no_table, bool plain_only,
			struct srv_neg *out, struct srv_error *err);

lp_err srv_negotiate(const char *accept, const char *include_object,
		     bool list, bool no_table, struct srv_neg *out,
		     struct srv_error *err)
{
	return negotiate(accept, include_object, list, no_table, false, out,
			 err);
}

bool srv_negotiate_status(const char *accept, struct srv_neg *out)
{
	struct srv_error err;
	srv_error_clear(&err);
	return negotiate(accept, NULL, false, false, true, out, &err) == LP_OK;
}

static lp_err negotiate(const char *accept, const char *include_object,
			bool list, bool no_table, bool plain_only,
			struct srv_neg *out, struct srv_error *err)
{
	struct srv_neg n = {.out = SRV_OUT_PLAIN, .version = "v1",
			    .include = SRV_INC_METADATA};
	if (include_object && *include_object) {
		if (!strcmp(include_object, "None"))
			n.include = SRV_INC_NONE;
		else if (!strcmp(include_object, "Object"))
			n.include = SRV_INC_OBJECT;
		else if (strcmp(include_object, "Metadata"))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "Unable to convert to Table as requested: includeObject: Invalid value: \"%.32s\": must be 'Metadata', 'Object', 'None', or empty",
					     include_object);
	}
	if (!accept || !*accept) {
		*out = n;
		return LP_OK;
	}
	/* goautoneg's order, which kube's negotiation walks (Go sorts a few
	   clauses by insertion, so equal ones stay as sent) */
	struct clause cl[SRV_ACCEPT_CLAUSES];
	size_t ncl = 0;
	for (const char *c = accept; *c && ncl < SRV_ACCEPT_CLAUSES;) {
		while (*c == ' ' || *c == ',')
			c++;
		if (!*c)
			break;
		const char *e = strchr(c, ',');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		struct clause k = {c, len, 1.0, false, false};
		char qv[16];
		if (clause_param(c, len, "q", qv, sizeof qv))
			k.q = strtod(qv, NULL);
		k.any_type = len && c[0] == '*';
		const char *sl = memchr(c, '/', len);
		k.any_sub = sl && (size_t)(sl - c) + 1 < len && sl[1] == '*';
		size_t at = ncl++;
		while (at > 0 && clause_before(&k, &cl[at - 1])) {
			cl[at] = cl[at - 1];
			at--;
		}
		cl[at] = k;
		c = e ? e + 1 : c + len;
	}
	for (size_t ci = 0; ci < ncl; ci++) {
		const char *p = cl[ci].p;
		size_t len = cl[ci].len;
		size_t tl = 0;
		while (tl < len && p[tl] != ';' && p[tl] != ' ')
			tl++;
		bool json = (tl == 16 && !strncasecmp(p, "application/json", 16));
		bool yaml = (tl == 16 && !strncasecmp(p, "application/yaml", 16));
		bool any = (tl == 3 && !strncmp(p, "*/*", 3)) ||
			   (tl == 13 && !strncasecmp(p, "application/*", 13));
		bool pb = tl == 35 && !strncasecmp(p, "application/vnd.kubernetes.protobuf", 35);
		char as[64] = "", g[64] = "", v[16] = "", st[16] = "",
		     pp[4] = "";
		bool conv = false;
		/* kube's pretty serializer for this clause */
		n.pretty = tl < len &&
			   clause_param(p, len, "pretty", pp, sizeof pp) &&
			   !strcmp(pp, "1");
		if (tl < len) { /* parameters only after the type */
			conv = clause_param(p, len, "as", as, sizeof as);
			conv = clause_param(p, len, "g", g, sizeof g) || conv;
			conv = clause_param(p, len, "v", v, sizeof v) || conv;
			/* a stream other than a watch's is no form kube
			   serves (nor one in YAML) */
			if (clause_param(p, len, "stream", st, sizeof st) &&
			    st[0] && (strcmp(st, "watch") || yaml))
				continue;
		}
		if (conv && plain_only)
			continue;
		if (conv) {
			/* any of as, g, v asks for a conversion: only
			   meta.k8s.io's are served, else the clause is not
			   acceptable (kube's AllowsMediaTypeTransform) */
			bool meta = !strcmp(g, "meta.k8s.io") &&
				    (!strcmp(v, "v1") || !strcmp(v, "v1beta1"));
			const char *ver = !strcmp(v, "v1") ? "v1" : "v1beta1";
			if (meta && (json || yaml || any)) {
				if (!strcmp(as, "Table") && !no_table) {
					n.out = SRV_OUT_TABLE;
					n.version = ver;
					n.yaml = yaml;
					*out = n;
					return LP_OK;
				}
				if ((!list && !strcmp(as, "PartialObjectMetadata")) ||
				    (list && !strcmp(as, "PartialObjectMetadataList"))) {
					n.out = SRV_OUT_PARTIAL;
					n.version = ver;
					n.yaml = yaml;
					*out = n;
					return LP_OK;
				}
				/* kube's AllowsMediaTypeTransform takes either
				   on any endpoint; the transform refuses the
				   wrong one */
				if (!strcmp(as, "PartialObjectMetadata") ||
				    !strcmp(as, "PartialObjectMetadataList")) {
					n.out = SRV_OUT_PARTIAL_SHAPE;
					n.version = ver;
					n.yaml = yaml;
					*out = n;
					return LP_OK;
				}
			}
			if (meta && pb &&
			    ((!list && !strcmp(as, "PartialObjectMetadata")) ||
			     (list && !strcmp(as, "PartialObjectMetadataList")))) {
				/* protobuf only with this conversion; we
				   answer it in JSON, which clients accept */
				n.out = SRV_OUT_PARTIAL;
				n.version = ver;
				*out = n;
				return LP_OK;
			}
		} else if (json || any || yaml) {
			n.yaml = yaml;
			*out = n;
			return LP_OK;
		}
	}
	return srv_error_set(err, LP_E_NOTACCEPTABLE,
			     "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf");
}

/* ------------------------------------------------------------ conversions */

/* o (an object of message m) with its members in m's order, as Go encodes
   the struct, members of embedded messages too; members m lacks after
   them. A custom resource's metadata is stored with sorted members;
   meta.AsPartialObjectMetadata makes it a typed ObjectMeta. New. */
static json_t *typed_order(const struct pb_msg *m, const json_t *o)
{
	if (!json_is_object(o))
		return json_deep_copy(o);
	json_t *out = json_object();
	for (size_t i = 0; out && i < m->n_fields; i++) {
		const struct pb_field *f = &m->fields[i];
		json_t *v = json_object_get(o, f->json);
		if (!v)
			continue;
		json_t *c;
		if (f->type == PB_MSG && f->sub && (f->flags & PB_REP) &&
		    json_is_array(v)) {
			c = json_array();
			size_t k;
			json_t *x;
			json_array_foreach(v, k, x)
			    json_array_append_new(c, typed_order(f->sub, x));
		} else if (f->type == PB_MSG && f->sub) {
			c = typed_order(f->sub, v);
		} else {
			c = json_deep_copy(v);
		}
		json_object_set_new(out, f->json, c);
	}
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k,
			    v) if (out && !json_object_get(out, k))
	    json_object_set_new(out, k, json_deep_copy(v));
	return out;
}

static json_t *partial_of(const char *version, const json_t *obj)
{
	char av[32];
	snprintf(av, sizeof av, "meta.k8s.io/%s", version);
	json_t *p = json_object();
	json_object_set_new(p, "kind", json_string("PartialObjectMetadata"));
	json_object_set_new(p, "apiVersion", json_string(av));
	json_t *m = json_object_get(obj, "metadata");
	json_object_set_new(p, "metadata",
			    m ? typed_order(srv_pb_object_meta(), m)
			      : json_object());
	return p;
}

json_t *srv_partial(const struct srv_neg *n, const json_t *obj)
{
	return partial_of(n->version, obj);
}

json_t *srv_partial_list(const struct srv_neg *n, const json_t *items,
			 const json_t *listmeta)
{
	char av[32];
	snprintf(av, sizeof av, "meta.k8s.io/%s", n->version);
	json_t *l = json_object();
	json_object_set_new(l, "kind", json_string("PartialObjectMetadataList"));
	json_object_set_new(l, "apiVersion", json_string(av));
	json_object_set_new(l, "metadata",
			    listmeta ? json_deep_copy(listmeta) : json_object());
	json_t *a = json_array();
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
		json_array_append_new(a, partial_of(n->version, it));
	/* kube's asPartialObjectMetadataList fills a nil slice: none
	   encodes as null */
	if (!json_array_size(a)) {
		json_decref(a);
		a = json_null();
	}
	json_object_set_new(l, "items", a);
	return l;
}

void srv_human_duration(long long s, char *buf, size_t n)
{
	if (s < -1) {
		snprintf(buf, n, "<invalid>");
	} else if (s < 0) {
		snprintf(buf, n, "0s");
	} else if (s < 120) {
		snprintf(buf, n, "%llds", s);
	} else if (s < 600) {
		long long m = s / 60, r = s % 60;
		if (r)
			snprintf(buf, n, "%lldm%llds", m, r);
		else
			snprintf(buf, n, "%lldm", m);
	} else if (s < 3 * 3600) {
		snprintf(buf, n, "%lldm", s / 60);
	} else if (s < 8 * 3600) {
		long long h = s / 3600, m = (s % 3600) / 60;
		if (m)
			snprintf(buf, n, "%lldh%lldm", h, m);
		else
			snprintf(buf, n, "%lldh", h);
	} else if (s < 48 * 3600) {
		snprintf(buf, n, "%lldh", s / 3600);
	} else if (s < 8 * 86400) {
		long long d = s / 86400, h = (s % 86400) / 3600;
		if (h)
			snprintf(buf, n, "%lldd%lldh", d, h);
		else
			snprintf(buf, n, "%lldd", d);
	} else if (s < 2 * 365 * 86400LL) {
		snprintf(buf, n, "%lldd", s / 86400);
	} else if (s < 8 * 365 * 86400LL) {
		long long y = s / (365 * 86400LL), d = (s % (365 * 86400LL)) / 86400;
		if (d)
			snprintf(buf, n, "%lldy%lldd", y, d);
		else
			snprintf(buf, n, "%lldy", y);
	} else {
		snprintf(buf, n, "%lldy", s / (365 * 86400LL));
	}
}

static json_t *coldef(const struct srv_column *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "type", json_string(c->type));
	json_object_set_new(o, "format", json_string(c->format ? c->format : ""));
	json_object_set_new(o, "description", json_string(c->desc ? c->desc : ""));
	json_object_set_new(o, "priority", json_integer(c->priority));
	return o;
}

/* The default columns when a resource has none: Name, Age. */
static json_t *name_cell(const json_t *obj)
{
	const char *s = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "name"));
	return json_string(s ? s : "");
}

json_t *srv_age_cell(const json_t *obj);
json_t *srv_age_cell(const json_t *obj)
{
	const char *ts = json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "creationTimestamp"));
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return json_string("<unknown>");
	time_t t = timegm(&tm);
	char buf[32];
	srv_human_duration((long long)(time(NULL) - t), buf, sizeof buf);
	return json_string(buf);
}

static json_t *created_at_cell(const json_t *obj)
{
	const char *s = json_string_value(json_object_get(
	    json_object_get(obj, "metadata"), "creationTimestamp"));
	return json_string(s ? s : "");
}

/* rest.DefaultTableConvertor's columns (kubectl get crd: NAME, CREATED AT) */
static const struct srv_column default_cols[] = {
	{"Name", "string", "name", SRV_DESC_NAME, 0, name_cell},
	{"Created At", "date", "", SRV_DESC_CREATED, 0, created_at_cell},
	{NULL, NULL, NULL, NULL, 0, NULL}};

/* Go's int64(f) on amd64, which kube's integer printer columns do to a
   float: truncation toward zero, and -2^63 for what int64 cannot hold. C
   leaves that conversion undefined, so the range is checked first. */
static json_int_t go_int64(double d)
{
	if (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
		return (json_int_t)d;
	return LLONG_MIN;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A string as encoding/json writes it (HTML-safe, as Go's default). */
static void json_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	for (size_t k = 0; k < n; k++) {
		unsigned char c = p[k];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\b') /* Go 1.22+ */
			fputs("\\b", f);
		else if (c == '\f')
			fputs("\\f", f);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else if (c == 0xe2 && k + 2 < n && p[k + 1] == 0x80 &&
			 (p[k + 2] == 0xa8 || p[k + 2] == 0xa9)) {
			/* U+2028, U+2029: JavaScript's line terminators */
			fprintf(f, "\\u202%c", p[k + 2] == 0xa8 ? '8' : '9');
			k += 2;
		} else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A float64 as encoding/json writes it: the shortest digits, in plain
   decimal for 1e-6 <= |d| < 1e21, else exponent form without a leading
   zero in the exponent. */
static void go_json_float(double d, FILE *f)
{
	char b[SRV_GO_FLOAT_MAX];
	srv_go_float(d, b); /* shortest digits, %v's choice of form */
	double a = d < 0 ? -d : d;
	char *e = strchr(b, 'e');
	if (!e || a < 1e-6 || a >= 1e21) {
		if (e && e[1] == '-' && e[2] == '0' && e[3] && !e[4])
			memmove(e + 2, e + 3, 2); /* e-07 -> e-7 */
		else if (e && e[1] == '+' && e[2] == '0' && e[3] && !e[4])
			memmove(e + 2, e + 3, 2);
		fputs(b, f);
		return;
	}
	/* d.ddde[+-]XX in plain decimal */
	int exp = atoi(e + 1);
	char digits[SRV_GO_FLOAT_MAX];
	size_t nd = 0;
	const char *p = b;
	if (*p == '-') {
		fputc('-', f);
		p++;
	}
	for (; p < e; p++)
		if (*p != '.')
			digits[nd++] = *p;
	/* the point goes after digit 1 + exp */
	int point = 1 + exp;
	if (point <= 0) {
		fputs("0.", f);
		for (int z = 0; z < -point; z++)
			fputc('0', f);
		fwrite(digits, 1, nd, f);
	} else if ((size_t)point >= nd) {
		fwrite(digits, 1, nd, f);
		for (size_t z = nd; z < (size_t)point; z++)
			fputc('0', f);
	} else {
		fwrite(digits, 1, (size_t)point, f);
		fputc('.', f);
		fwrite(digits + point, 1, nd - (size_t)point, f);
	}
}

/* v into f as Go's fmt %v prints it (json false: strings bare, null
   <nil>, [a b], map[k:v] in key order) or as encoding/json writes it
   (json true); false when out of memory. */
static bool go_write(FILE *f, const json_t *v, bool json)
{
	char b[SRV_GO_FLOAT_MAX];
	size_t i;
	json_t *x;
	switch (json_typeof(v)) {
	case JSON_STRING:
		if (json)
			json_str(f, json_string_value(v), json_string_length(v));
		else
			fwrite(json_string_value(v), 1, json_string_length(v), f);
		break;
	case JSON_INTEGER:
		fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		if (json) {
			go_json_float(json_real_value(v), f);
		} else {
			srv_go_float(json_real_value(v), b);
			fputs(b, f);
		}
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		fputs(json_is_true(v) ? "true" : "false", f);
		break;
	case JSON_NULL:
		fputs(json ? "null" : "<nil>", f);
		break;
	case JSON_ARRAY:
		fputc('[', f);
		json_array_foreach((json_t *)v, i, x)
		{
			if (i)
				fputc(json ? ',' : ' ', f);
			if (!go_write(f, x, json))
				return false;
		}
		fputc(']', f);
		break;
	case JSON_OBJECT: {
		size_t n = json_object_size(v), k = 0;
		const char **keys = n ? malloc(n * sizeof *keys) : NULL;
		if (n && !keys)
			return false;
		const char *key;
		json_object_foreach((json_t *)v, key, x) keys[k++] = key;
		if (n)
			qsort(keys, n, sizeof *keys, key_cmp);
		fputs(json ? "{" : "map[", f);
		bool ok = true;
		for (k = 0; k < n && ok; k++) {
			if (k)
				fputc(json ? ',' : ' ', f);
			if (json)
				json_str(f, keys[k], strlen(keys[k]));
			else
				fputs(keys[k], f);
			fputc(':', f);
			ok = go_write(f, json_object_get(v, keys[k]), json);
		}
		fputc(json ? '}' : ']', f);
		free(keys);
		return ok;
	}
	}
	return true;
}

static char *go_text(const json_t *v, bool json)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);
	if (!f)
		return NULL;
	bool ok = go_write(f, v, json);
	ok = !ferror(f) && ok;
	if (fclose(f) || !ok) {
		free(p);
		return NULL;
	}
	return p;
}

char *srv_go_json(const json_t *v)
{
	return go_text(v, true);
}

char *srv_go_sprint(const json_t *v)
{
	return go_text(v, false);
}

/* A printer column's cell (reference §7.3): the first JSONPath result,
   typed by the column; null when missing or of another type. */
static json_t *path_cell_of(const struct srv_column *c, json_t *v);

static json_t *path_cell(const struct srv_column *c, const json_t *obj)
{
	json_t *keep = NULL;
	struct srv_jsonpath *own = c->path ? NULL : srv_jsonpath_column(c->jsonpath);
	json_t *v = srv_jsonpath_eval_first(c->path ? c->path : own, obj, &keep);
	json_t *cell = v ? path_cell_of(c, v) : json_null();
	json_decref(keep);
	srv_jsonpath_free(own);
	return cell;
}

/* The cell of the value v a column's path found. */
static json_t *path_cell_of(const struct srv_column *c, json_t *v)
{
	const char *t = c->type;
	if (!strcmp(t, "integer")) {
		if (json_is_integer(v))
			return json_incref(v);
		if (json_is_real(v))
			return json_integer(go_int64(json_real_value(v)));
		return json_null();
	}
	if (!strcmp(t, "number"))
		return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v) ? json_incref(v) : json_null();
	if (!strcmp(t, "date")) {
		if (!json_is_string(v))
			return json_null();
		/* kube's metav1.Time.UnmarshalQueryParameter: "" and "null"
		   are the zero time, the rest Go's time.Parse(RFC3339), else
		   <invalid>; ConvertToHumanReadableDateType says <unknown>
		   for the zero time, the age of any other */
		const char *ts = json_string_value(v);
		long long at = GO_ZERO_TIME_UNIX;
		long nsec = 0;
		char err[256];
		if (*ts && strcmp(ts, "null") &&
		    !srv_go_time_parse(ts, false, &at, &nsec, err, sizeof err))
			return json_string("<invalid>");
		if (at == GO_ZERO_TIME_UNIX && !nsec)
			return json_string("<unknown>");
		/* time.Since saturates at Go's largest Duration */
		long long age = (long long)time(NULL) - at;
		if (age > GO_MAX_DURATION_S)
			age = GO_MAX_DURATION_S;
		else if (age < -GO_MAX_DURATION_S)
			age = -GO_MAX_DURATION_S;
		char buf[32];
		srv_human_duration(age, buf, sizeof buf);
		return json_string(buf);
	}
	if (json_is_string(v))
		return json_incref(v);
	/* a null found (a key present with null) is an invalid reflect
	   value to client-go's printer: template.PrintableValue's text */
	if (json_is_null(v))
		return json_string("<no value>");
	/* a string column prints other values as client-go 1.33's JSONPath
	   printer does: objects and lists as JSON (json.Marshal), the rest
	   with Go's %v */
	if (json_is_object(v) || json_is_array(v)) {
		char *js = srv_go_json(v);
		json_t *out = js ? json_string(js) : json_null();
		free(js);
		return out;
	}
	char *text = srv_go_sprint(v);
	json_t *out = text ? json_string(text) : json_null();
	free(text);
	return out;
}

/* A custom resource's Scale as kube's CRD handler prints it
   (getScaleColumnsForVersion, behind the table convertor's Name). */
static const struct srv_column scale_cols[] = {
	{"Name", "string", "name", SRV_DESC_NAME, 0, name_cell, NULL},
	{"Desired", "integer", "", "Number of desired replicas", 0, NULL,
	 ".spec.replicas"},
	{"Available", "integer", "", "Number of actual replicas", 0, NULL,
	 ".status.replicas"},
	{"Age", "date", "", SRV_DESC_CREATED, 0, srv_age_cell, NULL},
	{NULL, NULL, NULL, NULL, 0, NULL, NULL}};

static json_t *table_of(const struct srv_column *cols,
			const struct srv_neg *n, const json_t *items,
			const json_t *listmeta, bool headers);

json_t *srv_table(const struct srv_resource *res, const struct srv_neg *n,
		  const json_t *items, const json_t *listmeta, bool headers)
{
	return table_of(res->columns ? res->columns : default_cols, n, items,
			listmeta, headers);
}

json_t *srv_table_scale(const struct srv_neg *n, const json_t *items,
			const json_t *listmeta, bool headers)
{
	return table_of(scale_cols, n, items, listmeta, headers);
}

static json_t *table_of(const struct srv_column *cols,
			const struct srv_neg *n, const json_t *items,
			const json_t *listmeta, bool headers)
{
	char av[32];
	snprintf(av, sizeof av, "meta.k8s.io/%s", n->version);
	json_t *t = json_object();
	json_object_set_new(t, "kind", json_string("Table"));
	json_object_set_new(t, "apiVersion", json_string(av));
	json_object_set_new(t, "metadata",
			    listmeta ? json_deep_copy(listmeta) : json_object());
	if (headers) {
		json_t *defs = json_array();
		for (const struct srv_column *c = cols; c->name; c++)
			json_array_append_new(defs, coldef(c));
		json_object_set_new(t, "columnDefinitions", defs);
	} else {
		json_object_set_new(t, "columnDefinitions", json_null());
	}
	json_t *rows = json_array();
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
	{
		json_t *row = json_object();
		json_t *cells = json_array();
		for (const struct srv_column *c = cols; c->name; c++) {
			json_t *v = c->cell ? c->cell(it) : path_cell(c, it);
			json_array_append_new(cells, v ? v : json_null());
		}
		json_object_set_new(row, "cells", cells);
		if (n->include == SRV_INC_METADATA)
			json_object_set_new(row, "object", partial_of(n->version, it));
		else if (n->include == SRV_INC_OBJECT)
			json_object_set_new(row, "object", json_deep_copy(it));
		else /* a RawExtension: omitempty leaves it in, as null */
			json_object_set_new(row, "object", json_null());
		json_array_append_new(rows, row);
	}
	/* kube's default table convertor (rest.NewDefaultTableConvertor,
	   the CRDs') appends to a nil slice: no rows encode as null, where
	   the printers make an empty one */
	if (cols == default_cols && !json_array_size(rows)) {
		json_decref(rows);
		rows = json_null();
	}
	json_object_set_new(t, "rows", rows);
	return t;
}
