/*
 * resources.c -- the built-in resources lapis serves, as data (STYLE.md §1
 * "Keep metadata as data"), and their per-type strategies (upstream
 * pkg/registry/core/<type>/strategy.go and pkg/apis/core/validation).
 *
 * Discovery, OpenAPI, routing and validation all read this one table.
 */
#include <ctype.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crd.h"
#include "fields.h"
#include "ipaddr.h"
#include "registry/json.h"
#include "registry/object.h"
#include "resources.h"
#include "selector.h"

/* ------------------------------------------------------------ helpers */

static json_t *obj_child(json_t *o, const char *k)
{
	json_t *c = json_object_get(o, k);
	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, k, c);
	}
	return c;
}

static void default_str(json_t *o, const char *k, const char *v)
{
	json_t *c = json_object_get(o, k);
	if (!json_is_string(c) || json_string_length(c) == 0)
		json_object_set_new(o, k, json_string(v));
}

/* Config map / secret keys: [-._a-zA-Z0-9]+, at most 253, not "." and
   not starting with "..". */
static bool config_key_ok(const char *k)
{
	size_t n = strlen(k);
	if (n == 0 || n > 253 || !strcmp(k, ".") || !strncmp(k, "..", 2))
		return false;
	for (const char *p = k; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* kube's IsConfigMapKey complaints about k, a cause each at field. */
static void config_key_causes(const char *field, const char *k,
			      struct srv_error *err)
{
	size_t n = strlen(k);
	bool chars = n > 0;
	for (const char *p = k; *p; p++)
		chars = chars && (isalnum((unsigned char)*p) || strchr("-._", *p));
	char q[2048];
	srv_go_quote(k, q, sizeof q);
	if (n > 253)
		srv_error_cause(
		    err, "FieldValueInvalid", field,
		    "Invalid value: %s: must be no more than 253 characters",
		    q);
	if (!chars)
		srv_error_cause(
		    err, "FieldValueInvalid", field,
		    "Invalid value: %s: a valid config key must "
		    "consist of alphanumeric characters, '-', '_' or "
		    "'.' (e.g. 'key.name',  or 'KEY_NAME',  or "
		    "'key-name', regex used for validation is "
		    "'[-._a-zA-Z0-9]+')",
		    q);
	const char *dir = !strcmp(k, ".")	    ? "must not be '.'"
			  : !strcmp(k, "..")	    ? "must not be '..'"
			  : !strncmp(k, "..", 2) ? "must not start with '..'"
						 : NULL;
	if (dir)
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: %s: %s", q, dir);
}

/* kube's limit on ConfigMap and Secret data: 1 MiB in all. */
#define DATA_MAX (1024 * 1024)

static size_t check_data_keys(const json_t *m, const char *field,
			      bool base64_values, struct srv_error *err)
{
	size_t total = 0;
	const char *k;
	json_t *v;
	if (!m || json_is_null(m))
		return 0;
	if (!json_is_object(m)) {
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: must be an object of strings");
		return 0;
	}
	json_object_foreach((json_t *)m, k, v)
	{
		/* the field path only for an error: formatting it for every
		   key was 1k instructions a key, 3% of a ConfigMap create */
		char path[320];
		bool key_ok = config_key_ok(k);
		bool type_ok = json_is_null(v) || json_is_string(v);
		if (!key_ok || !type_ok)
			snprintf(path, sizeof path, "%s[%s]", field, k);
		if (!key_ok)
			config_key_causes(path, k, err);
		if (json_is_null(v))
			continue; /* a nil []byte (decoding left it null) */
		if (!type_ok) {
			srv_error_cause(err, "FieldValueTypeInvalid", path,
					"Invalid value: must be a string");
			continue;
		}
		size_t l = json_string_length(v);
		if (base64_values) {
			/* the decoded bytes: the padding holds none */
			const char *t = json_string_value(v);
			size_t pad = l && t[l - 1] == '=' ? 1 + (l > 1 && t[l - 2] == '=') : 0;
			l = l / 4 * 3 - (l / 4 * 3 >= pad ? pad : 0);
		}
		total += l;
	}
	return total;
}

static lp_err finish_invalid(const struct srv_resource *r, const json_t *obj,
			     struct srv_error *err)
{
	return srv_error_invalid(err, r->kind, srv_resource_store_group(r),
				 json_string_value(json_object_get(
					 json_object_get(obj, "metadata"), "name")));
}

/* ------------------------------------------------------------ strategies */

/* The PodSecurity admission plugin's check of a namespace's labels
   (pod-security-admission's PolicyToEvaluate, ParseLevel, ParseVersion):
   each invalid level or version label as a cause, in its order. Returns
   how many; with err NULL, only counts and writes their text to sig. */
static int psa_causes(const json_t *labels, struct srv_error *err, char *sig,
		      size_t n)
{
	static const char *const modes[] = {"enforce", "audit", "warn"};
	int bad = 0;
	size_t at = 0;
	if (sig && n)
		sig[0] = '\0';
	for (size_t m = 0; m < 3; m++)
		for (int ver = 0; ver < 2; ver++) {
			char key[64], field[96];
			snprintf(key, sizeof key,
				 "pod-security.kubernetes.io/%s%s", modes[m],
				 ver ? "-version" : "");
			const char *v =
			    json_string_value(json_object_get(labels, key));
			if (!v)
				continue;
			bool ok;
			if (!ver) {
				ok = !strcmp(v, "privileged") ||
				     !strcmp(v, "baseline") ||
				     !strcmp(v, "restricted");
			} else {
				/* "latest", or ^v1\.([0-9]|[1-9][0-9]*)$ whose
				   number Go's Atoi reads */
				const char *d = v + 3;
				size_t nd = strlen(d);
				ok = !strcmp(v, "latest") ||
				     (!strncmp(v, "v1.", 3) && nd && nd <= 18 &&
				      strspn(d, "0123456789") == nd &&
				      (nd == 1 || d[0] != '0'));
			}
			if (ok)
				continue;
			bad++;
			const char *why =
			    ver ? "must be \"latest\" or \"v1.x\""
				: "must be one of privileged, baseline, "
				  "restricted";
			if (sig && at < n)
				at += (size_t)snprintf(sig + at, n - at,
						       "%s=%s;", key, v);
			if (err) {
				snprintf(field, sizeof field,
					 "metadata.labels[%s]", key);
				const char *msgs[1] = {why};
				srv_invalid_causes(err, field, v, msgs, 1);
			}
		}
	return bad;
}

/* PodSecurity's ValidateNamespace, which kube runs as validating
   admission after the namespace validated: invalid labels are refused on
   create, and on an update that changes which are invalid. */
static void psa_namespace(const json_t *obj, const json_t *old,
			  struct srv_error *err)
{
	if (err->n_causes)
		return;
	const json_t *labels =
	    json_object_get(json_object_get(obj, "metadata"), "labels");
	char now[1024], before[1024];
	if (!psa_causes(labels, NULL, now, sizeof now))
		return;
	if (old &&
	    psa_causes(
		json_object_get(json_object_get(old, "metadata"), "labels"),
		NULL, before, sizeof before) &&
	    !strcmp(now, before))
		return;
	psa_causes(labels, err, NULL, 0);
}

static lp_err prep_namespace(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	json_t *spec = obj_child(obj, "spec");
	if (!old) {
		/* kube's PrepareForCreate: the kubernetes finalizer is always
		   there; validateFinalizerName: qualified names, and a name
		   without a prefix one of the standard ones */
		json_t *f = json_object_get(spec, "finalizers");
		if (!json_is_array(f)) {
			f = json_array();
			json_object_set_new(spec, "finalizers", f);
		}
		bool kube = false;
		size_t i;
		json_t *v;
		json_array_foreach(f, i, v)
		{
			const char *n = json_string_value(v);
			kube = kube || (n && !strcmp(n, "kubernetes"));
			srv_ns_finalizer_causes(err, "spec.finalizers",
						n ? n : "");
		}
		if (!kube)
			json_array_append_new(f, json_string("kubernetes"));
		json_t *st = json_object();
		json_object_set_new(st, "phase", json_string("Active"));
		json_object_set_new(obj, "status", st);
	} else {
		/* spec and status change only through /finalize and /status */
		json_t *os = json_object_get(old, "spec");
		json_t *ost = json_object_get(old, "status");
		json_object_set_new(obj, "spec", os ? json_deep_copy(os)
						    : json_object());
		if (ost)
			json_object_set_new(obj, "status", json_deep_copy(ost));
	}
	psa_namespace(obj, old, err);
	return finish_invalid(r, obj, err);
}

/* Whether members a and b (either may be missing) hold the same. */
static bool same_member(const json_t *a, const json_t *b)
{
	return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* kube's rule for an update of an immutable ConfigMap or Secret (old has
   `immutable: true`): it stays immutable, and members (NULL-terminated)
   stay as they are. */
static void immutable_causes(const json_t *obj, const json_t *old,
			     const char *const *members, struct srv_error *err)
{
	if (!old || !json_is_true(json_object_get(old, "immutable")))
		return;
	if (!json_is_true(json_object_get(obj, "immutable")))
		srv_error_cause(err, "FieldValueForbidden", "immutable",
				"Forbidden: field is immutable when `immutable` is set");
	for (const char *const *m = members; *m; m++)
		if (!same_member(json_object_get(obj, *m),
				 json_object_get(old, *m)))
			srv_error_cause(err, "FieldValueForbidden", *m,
					"Forbidden: field is immutable when `immutable` is set");
}

static lp_err prep_configmap(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	static const char *const data[] = {"data", "binaryData", NULL};
	immutable_causes(obj, old, data, err);
	size_t n = check_data_keys(json_object_get(obj, "data"), "data", false,
				   err);
	n += check_data_keys(json_object_get(obj, "binaryData"), "binaryData",
			     true, err);
	/* kube's ValidateConfigMap: one key in both maps */
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(obj, "binaryData"), k, v)
	{
		if (!json_object_get(json_object_get(obj, "data"), k))
			continue;
		char f[300];
		snprintf(f, sizeof f, "data[%.250s]", k);
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"%.250s\": duplicate of key present in binaryData",
				k);
	}
	/* kube's field.NewPath(""), which Go prints as "[]" */
	if (n > DATA_MAX)
		srv_error_cause(err, "FieldValueTooLong", "[]",
				"Too long: may not be more than %d bytes",
				DATA_MAX);
	return finish_invalid(r, obj, err);
}

/* The keys a Secret of a kube-defined type must hold (ValidateSecret). */
static void secret_type_causes(const json_t *obj, struct srv_error *err)
{
	const char *type = json_string_value(json_object_get(obj, "type"));
	const json_t *data = json_object_get(obj, "data");
	type = type ? type : "";
	if (!strcmp(type, "kubernetes.io/service-account-token")) {
		const char *sa = json_string_value(json_object_get(
		    json_object_get(json_object_get(obj, "metadata"),
				    "annotations"),
		    "kubernetes.io/service-account.name"));
		if (!sa || !*sa)
			srv_error_cause(err, "FieldValueRequired",
					"metadata.annotations[kubernetes.io/service-account.name]",
					"Required value");
		return;
	}
	static const struct {
		const char *type;
		const char *keys[2]; /* each required (any: either) */
		bool any;
		bool json; /* the first must hold a JSON object */
	} rules[] = {
	    {"kubernetes.io/dockercfg", {".dockercfg", NULL}, false, true},
	    {"kubernetes.io/dockerconfigjson", {".dockerconfigjson", NULL}, false,
	     true},
	    {"kubernetes.io/basic-auth", {"username", "password"}, true, false},
	    {"kubernetes.io/ssh-auth", {"ssh-privatekey", NULL}, false, false},
	    {"kubernetes.io/tls", {"tls.crt", "tls.key"}, false, false},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (strcmp(rules[i].type, type))
			continue;
		bool any = false;
		for (int j = 0; j < 2 && rules[i].keys[j]; j++)
			any = any || json_object_get(data, rules[i].keys[j]);
		for (int j = 0; j < 2 && rules[i].keys[j]; j++) {
			const json_t *v = json_object_get(data, rules[i].keys[j]);
			/* ssh-auth: present and not empty */
			bool ok = rules[i].any ? any
				  : !strcmp(rules[i].keys[j], "ssh-privatekey")
				      ? json_string_length(v) > 0
				      : v != NULL;
			if (!ok) {
				char f[64];
				snprintf(f, sizeof f, "data[%s]", rules[i].keys[j]);
				srv_error_cause(err, "FieldValueRequired", f,
						"Required value");
			}
		}
		const json_t *v = json_object_get(data, rules[i].keys[0]);
		/* a null value is a present key with no bytes in Go's map */
		if (rules[i].json && (json_is_string(v) || json_is_null(v))) {
			gnutls_datum_t in = {
			    (unsigned char *)json_string_value(v),
			    (unsigned)json_string_length(v)};
			gnutls_datum_t raw = {NULL, 0};
			json_t *j = NULL;
			char why[160] = "unexpected end of JSON input";
			/* Go's json.Unmarshal into a map: its syntax error,
			   else a value of another type (null is none; what Go
			   takes and jansson does not, \u0000 or bad UTF-8 in a
			   string, is no object's fault here) */
			bool bad =
			    !in.size || gnutls_base64_decode2(&in, &raw) < 0 ||
			    !reg_go_json_check((const char *)raw.data, raw.size,
					       why, sizeof why);
			if (!bad) {
				j = reg_json_load((const char *)raw.data,
						  raw.size, JSON_DECODE_ANY, NULL);
				bad =
				    j && !json_is_object(j) && !json_is_null(j);
			}
			if (bad) {
				char f[64];
				snprintf(f, sizeof f, "data[%s]", rules[i].keys[0]);
				if (j)
					snprintf(why, sizeof why,
						 "json: cannot unmarshal %s "
						 "into Go value of type "
						 "map[string]interface {}",
						 reg_go_type(j));
				srv_error_cause(err, "FieldValueInvalid", f,
						"Invalid value: \"<secret contents redacted>\": %s",
						why);
			}
			json_decref(j);
			gnutls_free(raw.data);
		}
		return;
	}
}

static lp_err prep_secret(const struct srv_resource *r, json_t *obj,
			  const json_t *old, struct srv_error *err)
{
	static const char *const data_members[] = {"data", NULL};
	json_t *sd = json_object_get(obj, "stringData");
	if (sd && !json_is_null(sd)) {
		if (!json_is_object(sd))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "stringData must be an object");
		json_t *data = obj_child(obj, "data");
		const char *k;
		json_t *v;
		json_object_foreach(sd, k, v)
		{
			if (!json_is_string(v))
				return srv_error_set(
					err, LP_E_BADREQUEST,
					"stringData[%s] must be a string", k);
			char *enc = reg_b64(
				(const unsigned char *)json_string_value(v),
				json_string_length(v));
			if (!enc)
				return srv_error_set(err, LP_E_NOMEM,
						     "out of memory");
			json_object_set_new(data, k, json_string(enc));
			free(enc);
		}
		json_object_del(obj, "stringData");
	}
	json_t *data = json_object_get(obj, "data");
	if (json_is_object(data)) {
		const char *k;
		json_t *v;
		json_object_foreach(data, k, v)
		{
			if (json_is_string(v) &&
			    !srv_base64_ok(json_string_value(v),
				       json_string_length(v)))
				return srv_error_set(
					err, LP_E_BADREQUEST,
					"Secret in version \"v1\" cannot be "
					"handled as a Secret: illegal base64 "
					"data in data[%s]",
					k);
		}
	}
	default_str(obj, "type", "Opaque");
	if (old && !same_member(json_object_get(obj, "type"),
				json_object_get(old, "type")))
		srv_error_cause(err, "FieldValueInvalid", "type",
				"Invalid value: \"%.253s\": field is immutable",
				json_string_value(json_object_get(obj, "type")));
	immutable_causes(obj, old, data_members, err);
	/* kube's ValidateSecret: the keys and the size, then the type's
	   rules */
	size_t n = check_data_keys(data, "data", true, err);
	if (n > DATA_MAX)
		srv_error_cause(err, "FieldValueTooLong", "data",
				"Too long: may not be more than %d bytes",
				DATA_MAX);
	secret_type_causes(obj, err);
	return finish_invalid(r, obj, err);
}

bool srv_service_needs_node_ports(const json_t *spec)
{
	const char *t = json_string_value(json_object_get(spec, "type"));
	return t && (!strcmp(t, "NodePort") || !strcmp(t, "LoadBalancer"));
}

bool srv_service_needs_health_port(const json_t *spec)
{
	const char *t = json_string_value(json_object_get(spec, "type"));
	const char *p = json_string_value(
	    json_object_get(spec, "externalTrafficPolicy"));
	return t && p && !strcmp(t, "LoadBalancer") && !strcmp(p, "Local");
}

/* A string member of o, NULL when absent or not a string. */
static const char *str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool str_is(const json_t *o, const char *k, const char *v)
{
	const char *s = str_of(o, k);
	return s && !strcmp(s, v);
}

/* Go's == on strings, where an absent one is "". */
static bool str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Two members alike, absent and null being the same (json_equal says
   false when either is NULL). */
static bool same_value(const json_t *a, const json_t *b)
{
	if (json_is_null(a))
		a = NULL;
	if (json_is_null(b))
		b = NULL;
	return a == b || (a && b && json_equal(a, b));
}

/* Two string lists alike (kube's sameClusterIPs, sameIPFamilies): absent
   and empty are the same. */
static bool strs_same(const json_t *a, const json_t *b)
{
	size_t n = json_array_size(a);
	if (n != json_array_size(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!str_same(json_string_value(json_array_get(a, i)),
			      json_string_value(json_array_get(b, i))))
			return false;
	return true;
}

/* A list of strings as Go's %#v prints it: []<type>{"a", "b"}, or
   []<type>(nil) when absent. */
static const char *go_strs(const json_t *a, const char *type, char *buf,
			   size_t n)
{
	if (!json_is_array(a)) {
		snprintf(buf, n, "[]%s(nil)", type);
		return buf;
	}
	size_t at = (size_t)snprintf(buf, n, "[]%s{", type);
	size_t i;
	const json_t *v;
	json_array_foreach(a, i, v)
	{
		if (at < n)
			at += (size_t)snprintf(buf + at, n - at, "%s\"%.64s\"",
					       i ? ", " : "",
					       json_string_value(v) ? json_string_value(v) : "");
	}
	if (at < n)
		snprintf(buf + at, n - at, "}");
	return buf;
}

/* A pointer to a string as kube's field errors print it: "v", or null. */
static const char *go_ptr_str(const char *s, char *buf, size_t n)
{
	if (!s)
		snprintf(buf, n, "null");
	else
		snprintf(buf, n, "\"%.100s\"", s);
	return buf;
}

/* An IPv6 address, as kube's family checks see it (ParseIPSloppy, then
   not To4: an IPv4-mapped one counts as IPv4). */
static bool is_ip6(const char *s)
{
	struct srv_ip ip;
	return srv_ip_parse(s, &ip) && !ip.v4;
}

/* An IP address as kube's legacy fields take it (ParseIPSloppy: leading
   zeros in IPv4 octets allowed, with a warning). */
static bool is_ip(const char *s)
{
	struct srv_ip ip;
	return srv_ip_parse(s, &ip);
}

/* A CIDR as kube's legacy fields take it (ParseCIDRSloppy). */
static bool is_cidr(const char *s)
{
	struct srv_ip ip;
	int bits;
	return srv_cidr_parse(s, &ip, &bits);
}

/* kube's apiservice.ExternallyAccessible. */
static bool svc_external_access(const json_t *spec)
{
	return str_is(spec, "type", "LoadBalancer") ||
	       str_is(spec, "type", "NodePort") ||
	       (str_is(spec, "type", "ClusterIP") &&
		json_array_size(json_object_get(spec, "externalIPs")) > 0);
}

static bool svc_headless(const json_t *spec)
{
	return str_is(spec, "clusterIP", "None");
}

/* An update that leaves a Service needing node ports keeps those it had:
   a port without one takes the old port's of the same name, unless the
   update asks for that number itself; and the health check port likewise
   (kube's patchAllocatedValues). */
static void keep_node_ports(json_t *spec, const json_t *ospec)
{
	json_t *ports = json_object_get(spec, "ports");
	const json_t *oports = json_object_get(ospec, "ports");
	size_t i, j;
	json_t *p;
	const json_t *q;
	if (srv_service_needs_node_ports(spec) &&
	    srv_service_needs_node_ports(ospec)) {
		/* the numbers the update asks for itself, before any is
		   patched in */
		json_t *asked = json_array();
		json_array_foreach(ports, i, p)
		{
			json_t *np = json_object_get(p, "nodePort");
			if (json_integer_value(np))
				json_array_append(asked, np);
		}
		json_array_foreach(ports, i, p)
		{
			if (json_integer_value(json_object_get(p, "nodePort")))
				continue;
			const char *pn = json_string_value(json_object_get(p, "name"));
			json_int_t keep = 0;
			json_array_foreach(oports, j, q)
			{
				const char *qn =
				    json_string_value(json_object_get(q, "name"));
				if (!strcmp(pn ? pn : "", qn ? qn : ""))
					keep = json_integer_value(
					    json_object_get(q, "nodePort"));
			}
			json_t *u;
			size_t k;
			json_array_foreach(asked, k, u)
			{
				if (json_integer_value(u) == keep)
					keep = 0;
			}
			if (keep)
				json_object_set_new(p, "nodePort", json_integer(keep));
		}
		json_decref(asked);
	}
	if (srv_service_needs_health_port(spec) &&
	    srv_service_needs_health_port(ospec) &&
	    !json_integer_value(json_object_get(spec, "healthCheckNodePort"))) {
		json_t *h = json_object_get(ospec, "healthCheckNodePort");
		if (json_integer_value(h))
			json_object_set(spec, "healthCheckNodePort", h);
	}
}

/* A type change that no longer needs them drops the fields the old type
   needed, when the update left them as they were (kube's
   dropTypeDependentFields): node ports, the health check port,
   allocateLoadBalancerNodePorts and externalTrafficPolicy. */
static void drop_type_fields(json_t *spec, const json_t *ospec)
{
	const char *t = json_string_value(json_object_get(spec, "type"));
	const char *ot = json_string_value(json_object_get(ospec, "type"));
	bool lb = t && !strcmp(t, "LoadBalancer");
	bool olb = ot && !strcmp(ot, "LoadBalancer");
	json_t *ports = json_object_get(spec, "ports");
	const json_t *oports = json_object_get(ospec, "ports");
	if (srv_service_needs_node_ports(ospec) &&
	    !srv_service_needs_node_ports(spec)) {
		/* "the same": the update asks for no node port the old
		   Service did not hold (ports may come and go) */
		bool same = true;
		size_t i, j;
		json_t *p, *q;
		json_array_foreach(ports, i, p)
		{
			json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
			bool held = !np;
			json_array_foreach((json_t *)oports, j, q)
				held = held ||
				       json_integer_value(json_object_get(q, "nodePort")) == np;
			same = same && held;
		}
		json_array_foreach(same ? ports : NULL, i, p)
			json_object_del(p, "nodePort");
	}
	if (svc_external_access(ospec) && !svc_external_access(spec) &&
	    json_equal(json_object_get(spec, "externalTrafficPolicy"),
		       json_object_get(ospec, "externalTrafficPolicy")))
		json_object_del(spec, "externalTrafficPolicy");
	if (srv_service_needs_health_port(ospec) &&
	    !srv_service_needs_health_port(spec) &&
	    json_equal(json_object_get(spec, "healthCheckNodePort"),
		       json_object_get(ospec, "healthCheckNodePort")))
		json_object_del(spec, "healthCheckNodePort");
	if (olb && !lb &&
	    json_equal(json_object_get(spec, "allocateLoadBalancerNodePorts"),
		       json_object_get(ospec, "allocateLoadBalancerNodePorts")))
		json_object_del(spec, "allocateLoadBalancerNodePorts");
	if (olb && !lb &&
	    json_equal(json_object_get(spec, "loadBalancerClass"),
		       json_object_get(ospec, "loadBalancerClass")))
		json_object_del(spec, "loadBalancerClass");
	bool ext = t && !strcmp(t, "ExternalName");
	bool oext = ot && !strcmp(ot, "ExternalName");
	/* not internalTrafficPolicy: kube's dropTypeDependentFields leaves
	   it, and its validation allows it on any type */
	static const char *const ip_fields[] = {"clusterIP", "clusterIPs",
						"ipFamilies", "ipFamilyPolicy"};
	for (size_t i = 0;
	     ext && !oext && i < sizeof ip_fields / sizeof ip_fields[0]; i++)
		if (json_equal(json_object_get(spec, ip_fields[i]),
			       json_object_get(ospec, ip_fields[i])))
			json_object_del(spec, ip_fields[i]);
}

/* kube's node port rules of ValidateService: none on a ClusterIP Service,
   no (nodePort, protocol) twice, allocateLoadBalancerNodePorts only on a
   LoadBalancer. */
static void node_port_causes(const json_t *spec, struct srv_error *err)
{
	const char *type = json_string_value(json_object_get(spec, "type"));
	bool cluster_ip = type && !strcmp(type, "ClusterIP");
	const json_t *ports = json_object_get(spec, "ports");
	size_t i, j;
	const json_t *p, *q;
	json_array_foreach(ports, i, p)
	{
		json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
		if (!np)
			continue;
		char f[64];
		snprintf(f, sizeof f, "spec.ports[%zu].nodePort", i);
		if (cluster_ip) {
			srv_error_cause(err, "FieldValueForbidden", f,
					"Forbidden: may not be used when `type` is 'ClusterIP'");
			continue;
		}
		/* (another port number asking for it is the allocator's
		   node_port_taken, before) */
		json_array_foreach(ports, j, q)
		{
			if (j >= i)
				break;
			if (json_integer_value(json_object_get(q, "nodePort")) == np &&
			    json_equal(json_object_get(q, "protocol"),
				       json_object_get(p, "protocol"))) {
				srv_error_cause(err, "FieldValueDuplicate", f,
						"Duplicate value: %lld",
						(long long)np);
				break;
			}
		}
	}
	if (json_object_get(spec, "allocateLoadBalancerNodePorts") &&
	    !json_is_null(json_object_get(spec, "allocateLoadBalancerNodePorts")) &&
	    !(type && !strcmp(type, "LoadBalancer")))
		srv_error_cause(err, "FieldValueForbidden",
				"spec.allocateLoadBalancerNodePorts",
				"Forbidden: may only be used when `type` is 'LoadBalancer'");
}

/* kube's checks of an IP an object names (IsValidIPForLegacyField, then
   ValidateNonSpecialIP): valid, and not unspecified, loopback, link-local
   or link-local multicast. Adds causes at field. */
static void ip_causes(const char *field, const char *ip, struct srv_error *err)
{
	struct srv_ip p;
	bool ok = srv_ip_parse(ip, &p);
	bool v4 = ok && p.v4, v6 = ok && !p.v4;
	const unsigned char *b = v4 ? p.b + 12 : p.b;
	static const unsigned char zero[16], one[16] = {[15] = 1};
	const char *special =
	    v4 ? (b[0] == 0 && !b[1] && !b[2] && !b[3]
		      ? "may not be unspecified (0.0.0.0)"
		  : b[0] == 127
		      ? "may not be in the loopback range (127.0.0.0/8, ::1/128)"
		  : b[0] == 169 && b[1] == 254
		      ? "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
		  : b[0] == 224 && !b[1] && !b[2]
		      ? "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
		      : NULL)
	    : v6 ? (!memcmp(b, zero, 16)  ? "may not be unspecified (::)"
		    : !memcmp(b, one, 16) ? "may not be in the loopback range (127.0.0.0/8, ::1/128)"
		    : b[0] == 0xfe && (b[1] & 0xc0) == 0x80
			? "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
		    : b[0] == 0xff && (b[1] & 0x0f) == 0x02
			? "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
			: NULL)
		 : NULL;
	if (!v4 && !v6)
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: \"%.64s\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
				ip ? ip : "");
	else if (special)
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: \"%.64s\": %s", ip, special);
}

/* Adds to err kube's verdict on a value of an enumerated string member
   (Required or NotSupported); vals end with NULL and are sorted. */
static void enum_cause_of(const char *field, const json_t *v,
			  const char *const *vals, bool empty_is_unset,
			  struct srv_error *err)
{
	const char *s = json_string_value(v);
	if (!s || (!*s && empty_is_unset)) {
		srv_error_cause(err, "FieldValueRequired", field,
				"Required value");
		return;
	}
	for (const char *const *p = vals; *p; p++)
		if (!strcmp(*p, s))
			return;
	char list[256] = "";
	size_t at = 0;
	for (const char *const *p = vals; *p && at < sizeof list; p++)
		at += (size_t)snprintf(list + at, sizeof list - at, "%s\"%s\"",
				       p == vals ? "" : ", ", *p);
	srv_error_cause(err, "FieldValueNotSupported", field,
			"Unsupported value: \"%.100s\": supported values: %s", s,
			list);
}

/* A Go string field of a closed set: "" is its zero value, so Required. */
static void enum_cause(const char *field, const json_t *v,
		       const char *const *vals, struct srv_error *err)
{
	enum_cause_of(field, v, vals, true, err);
}

/* A pointer field, or a list item: "" is a value like any other, and not
   one of the set. */
static void enum_cause_set(const char *field, const json_t *v,
			   const char *const *vals, struct srv_error *err)
{
	enum_cause_of(field, v, vals, false, err);
}

/* kube's IsValidPortName: one cause on field per complaint, in its
   order. */
static void port_name_causes(struct srv_error *err, const char *field,
			     const char *n)
{
	const char *msgs[5];
	int k = 0;
	size_t len = strlen(n);
	bool letter = false, charset = len > 0;
	for (size_t i = 0; i < len; i++) {
		bool lower = n[i] >= 'a' && n[i] <= 'z';
		charset &= lower || (n[i] >= '0' && n[i] <= '9') || n[i] == '-';
		letter |= lower;
	}
	if (len > 15)
		msgs[k++] = "must be no more than 15 characters";
	if (!charset)
		msgs[k++] = "must contain only alpha-numeric characters (a-z, "
			    "0-9), and hyphens (-)";
	if (!letter)
		msgs[k++] = "must contain at least one letter (a-z)";
	if (strstr(n, "--"))
		msgs[k++] = "must not contain consecutive hyphens";
	if (len && (n[0] == '-' || n[len - 1] == '-'))
		msgs[k++] = "must not begin or end with a hyphen";
	srv_invalid_causes(err, field, n, msgs, k);
}

/* kube's ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs
   agree, ipFamilies and ipFamilyPolicy hold known values, clusterIPs are
   at most one address of each family, matching ipFamilies. */
static void cluster_ips_causes(const json_t *spec, struct srv_error *err)
{
	static const char *const fams[] = {"IPv4", "IPv6", NULL};
	static const char *const pols[] = {"PreferDualStack",
					   "RequireDualStack", "SingleStack",
					   NULL};
	if (str_is(spec, "type", "ExternalName"))
		return;
	const char *ip = str_of(spec, "clusterIP");
	const json_t *ips = json_object_get(spec, "clusterIPs");
	const json_t *families = json_object_get(spec, "ipFamilies");
	size_t n = json_array_size(ips);
	char v[512];
	if (ip && *ip) {
		if (!n)
			srv_error_cause(err, "FieldValueRequired", "spec.clusterIPs",
					"Required value");
		else if (!str_same(json_string_value(json_array_get(ips, 0)), ip))
			srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
					"Invalid value: %s: first value must match `clusterIP`",
					go_strs(ips, "string", v, sizeof v));
	} else if (n) {
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
				"Invalid value: %s: must be empty when `clusterIP` is not specified",
				go_strs(ips, "string", v, sizeof v));
	}
	size_t i, j;
	const json_t *f, *g;
	json_array_foreach(families, i, f)
	{
		char field[48];
		snprintf(field, sizeof field, "spec.ipFamilies[%zu]", i);
		enum_cause_set(field, f, fams, err);
		json_array_foreach(families, j, g)
		{
			if (j >= i)
				break;
			if (json_equal(f, g)) {
				srv_error_cause(err, "FieldValueDuplicate", field,
						"Duplicate value: \"%.20s\"",
						json_string_value(f) ? json_string_value(f) : "");
				break;
			}
		}
	}
	const json_t *pol = json_object_get(spec, "ipFamilyPolicy");
	if (pol && !json_is_null(pol))
		enum_cause_set("spec.ipFamilyPolicy", pol, pols, err);
	bool bad = false;
	json_array_foreach(ips, i, f)
	{
		const char *s = json_string_value(f);
		if (i == 0 && str_same(s, "None")) {
			if (n > 1) {
				bad = true;
				srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
						"Invalid value: %s: 'None' must be the first and only value",
						go_strs(ips, "string", v, sizeof v));
			}
			continue;
		}
		if (!is_ip(s)) {
			char field[48];
			snprintf(field, sizeof field, "spec.clusterIPs[%zu]", i);
			bad = true;
			srv_error_cause(err, "FieldValueInvalid", field,
					"Invalid value: \"%.64s\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
					s ? s : "");
		}
	}
	if (n > 2)
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
				"Invalid value: %s: may only hold up to 2 values",
				go_strs(ips, "string", v, sizeof v));
	if (bad)
		return;
	if (n > 1 && (n != 2 || is_ip6(json_string_value(json_array_get(ips, 0))) ==
				    is_ip6(json_string_value(json_array_get(ips, 1)))))
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
				"Invalid value: %s: may specify no more than one IP for each IP family",
				go_strs(ips, "string", v, sizeof v));
	if (svc_headless(spec) && n == 1)
		return;
	json_array_foreach(ips, i, f)
	{
		const char *fam = json_string_value(json_array_get(families, i));
		if (!fam)
			break;
		bool six = is_ip6(json_string_value(f));
		bool want6 = !strcmp(fam, "IPv6");
		if (six == want6 || (!want6 && strcmp(fam, "IPv4")))
			continue;
		char field[48];
		snprintf(field, sizeof field, "spec.clusterIPs[%zu]", i);
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: \"%.64s\": expected an %s value as indicated by `ipFamilies[%zu]`",
				json_string_value(f), fam, i);
	}
}

/* Whether a list shrank, a new empty one not counting (kube's
   reducedClusterIPs, reducedIPFamilies). */
static bool strs_reduced(const json_t *now, const json_t *before)
{
	return json_array_size(now) &&
	       json_array_size(now) < json_array_size(before);
}

static void strs_trim(json_t *a, size_t n)
{
	while (json_array_size(a) > n)
		json_array_remove(a, json_array_size(a) - 1);
}

/* kube's normalizeClusterIPs and, for an update, the cluster IP part of
   patchAllocatedValues (service storage): a Service names its IP in
   clusterIP, clusterIPs or both, and an update that leaves them out keeps
   the old ones. */
static void normalize_cluster_ips(json_t *spec, const json_t *ospec)
{
	const char *ip = str_of(spec, "clusterIP");
	json_t *ips = json_object_get(spec, "clusterIPs");
	if (!ospec) {
		if (ip && *ip && !json_array_size(ips))
			json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
		return;
	}
	const char *oip = str_of(ospec, "clusterIP");
	const json_t *oips = json_object_get(ospec, "clusterIPs");
	if (!str_is(spec, "type", "ExternalName") &&
	    !str_is(ospec, "type", "ExternalName")) {
		if ((!ip || !*ip) && oip) {
			json_object_set_new(spec, "clusterIP", json_string(oip));
			ip = str_of(spec, "clusterIP");
		}
		if (!json_array_size(ips) && json_array_size(oips)) {
			json_object_set_new(spec, "clusterIPs", json_deep_copy(oips));
			ips = json_object_get(spec, "clusterIPs");
		}
	}
	if (json_array_size(oips) && !json_array_size(ips) && str_same(oip, ip)) {
		json_object_set_new(spec, "clusterIPs", json_deep_copy(oips));
		ips = json_object_get(spec, "clusterIPs");
	}
	if (!str_same(oip, ip)) {
		bool same = strs_same(oips, ips);
		if (oip && *oip && (!ip || !*ip) && same)
			json_object_del(spec, "clusterIPs");
		if (ip && *ip && same)
			json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
	}
}

/* kube's initIPFamilyFields (service storage, alloc.go) for lapis, whose
   service range is one IPv4 range: defaults ipFamilyPolicy (the old
   Service's, RequireDualStack for a headless Service without selector,
   else SingleStack) and ipFamilies, and refuses what this cluster cannot
   give. Returns true when it added causes: kube answers those alone,
   before the strategy validates. */
bool srv_service_ip_families(json_t *spec, const json_t *ospec,
			     struct srv_error *err)
{
	if (!ospec)
		normalize_cluster_ips(spec, NULL);
	if (str_is(spec, "type", "ExternalName"))
		return false;
	json_t *ips = json_object_get(spec, "clusterIPs");
	json_t *fams = json_object_get(spec, "ipFamilies");
	const json_t *oips = json_object_get(ospec, "clusterIPs");
	const json_t *ofams = json_object_get(ospec, "ipFamilies");
	const char *pol = str_of(spec, "ipFamilyPolicy");
	const char *opol = str_of(ospec, "ipFamilyPolicy");
	if (ospec && pol && str_same(pol, opol) &&
	    !strcmp(pol, "PreferDualStack") && strs_same(ips, oips) &&
	    strs_same(fams, ofams))
		return false;
	bool selectorless =
	    json_object_size(json_object_get(spec, "selector")) == 0;
	if (!pol) {
		json_object_set_new(spec, "ipFamilyPolicy",
				    json_string(opol ? opol
						: svc_headless(spec) && selectorless
						    ? "RequireDualStack"
						    : "SingleStack"));
		pol = str_of(spec, "ipFamilyPolicy");
	}
	int before = err->n_causes;
	cluster_ips_causes(spec, err);
	if (err->n_causes > before)
		return true;
	bool single = !strcmp(pol, "SingleStack");
	char v[512];
	if (ospec && single) {
		if (strs_same(ips, oips))
			strs_trim(ips, 1);
		if (strs_same(fams, ofams))
			strs_trim(fams, 1);
	} else if (ospec) {
		if (strs_reduced(ips, oips))
			srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
					"Invalid value: %s: must be 'SingleStack' to release the secondary cluster IP",
					go_ptr_str(pol, v, sizeof v));
		if (strs_reduced(fams, ofams))
			srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
					"Invalid value: %s: must be 'SingleStack' to release the secondary IP family",
					go_ptr_str(pol, v, sizeof v));
	}
	if (single && json_array_size(ips) == 2)
		srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
				"Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified");
	if (single && json_array_size(fams) == 2)
		srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
				"Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified");
	size_t i;
	json_t *f;
	json_array_foreach(ips, i, f)
	{
		const char *ip = json_string_value(f);
		if (str_same(ip, "None"))
			break;
		if (i < json_array_size(fams))
			continue;
		if (is_ip6(ip)) {
			char field[48];
			snprintf(field, sizeof field, "spec.clusterIPs[%zu]", i);
			srv_error_cause(err, "FieldValueInvalid", field,
					"Invalid value: %s: IPv6 is not configured on this cluster",
					go_strs(ips, "string", v, sizeof v));
			continue;
		}
		if (!json_is_array(fams)) {
			fams = json_array();
			json_object_set_new(spec, "ipFamilies", fams);
		}
		json_array_append_new(fams, json_string("IPv4"));
	}
	if (err->n_causes > before)
		return true;
	if (svc_headless(spec) && selectorless) {
		if (!json_array_size(fams)) {
			fams = json_pack("[s]", "IPv4");
			json_object_set_new(spec, "ipFamilies", fams);
		}
		if (json_array_size(fams) < 2 && !single)
			json_array_append_new(
			    fams, json_string(str_same(json_string_value(
							   json_array_get(fams, 0)),
						       "IPv4")
						  ? "IPv6"
						  : "IPv4"));
		return false;
	}
	if (!strcmp(pol, "RequireDualStack"))
		srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
				"Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services");
	json_array_foreach(fams, i, f)
	{
		if (str_same(json_string_value(f), "IPv4"))
			continue;
		char field[48];
		snprintf(field, sizeof field, "spec.ipFamilies[%zu]", i);
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: \"%.20s\": not configured on this cluster",
				json_string_value(f) ? json_string_value(f) : "");
	}
	if (err->n_causes > before)
		return true;
	if (!json_array_size(fams))
		json_object_set_new(spec, "ipFamilies", json_pack("[s]", "IPv4"));
	return false;
}

/* kube's ValidateServiceUpdate beyond ValidateService: clusterIPs and
   ipFamilies may grow or shrink by their second value but not change
   their first (validateUpgradeDowngradeClusterIPs and ...IPFamilies), the
   load balancer class and the health check port stay. */
static void service_update_causes(const json_t *spec, const json_t *ospec,
				  struct srv_error *err)
{
	char v[512], w[512];
	const char *pol = str_of(spec, "ipFamilyPolicy");
	bool ext = str_is(spec, "type", "ExternalName") ||
		   str_is(ospec, "type", "ExternalName");
	bool hl = svc_headless(spec), ohl = svc_headless(ospec);
	const json_t *ips = json_object_get(spec, "clusterIPs");
	const json_t *oips = json_object_get(ospec, "clusterIPs");
	size_t n = json_array_size(ips), on = json_array_size(oips);
	const char *first = json_string_value(json_array_get(ips, 0));
	const char *ofirst = json_string_value(json_array_get(oips, 0));
	if (!ext && !(hl && ohl)) {
		go_strs(ips, "string", v, sizeof v);
		if (n == on) {
			for (size_t i = 0; i < n; i++) {
				if (str_same(json_string_value(json_array_get(ips, i)),
					     json_string_value(json_array_get(oips, i))))
					continue;
				char field[48];
				snprintf(field, sizeof field, "spec.clusterIPs[%zu]", i);
				srv_error_cause(err, "FieldValueInvalid", field,
						"Invalid value: %s: may not change once set", v);
			}
		} else if (on > n) {
			if (!n)
				srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs[0]",
						"Invalid value: %s: primary clusterIP can not be unset", v);
			if (n && !str_same(first, ofirst))
				srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs[0]",
						"Invalid value: %s: may not change once set", v);
			if (n == 1 && !str_same(pol, "SingleStack"))
				srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
						"Invalid value: %s: must be set to 'SingleStack' when releasing the secondary clusterIP",
						go_ptr_str(pol, w, sizeof w));
		} else if (on && !str_same(first, ofirst)) {
			srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs[0]",
					"Invalid value: %s: may not change once set", v);
		}
	}
	const json_t *fams = json_object_get(spec, "ipFamilies");
	const json_t *ofams = json_object_get(ospec, "ipFamilies");
	size_t nf = json_array_size(fams), onf = json_array_size(ofams);
	bool fam_changed = !str_same(json_string_value(json_array_get(fams, 0)),
				     json_string_value(json_array_get(ofams, 0)));
	if (!ext && hl == ohl && !hl) {
		go_strs(fams, "core.IPFamily", w, sizeof w);
		if (nf == onf) {
			for (size_t i = 0; i < nf; i++)
				if (!str_same(json_string_value(json_array_get(fams, i)),
					      json_string_value(json_array_get(ofams, i))))
					srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilies[0]",
							"Invalid value: %s: may not change once set", w);
		} else if (onf > nf) {
			if (!n)
				srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilies[0]",
						"Invalid value: %s: primary ipFamily can not be unset", w);
			if (nf && fam_changed)
				srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilies[0]",
						"Invalid value: %s: may not change once set", v);
			if (nf == 1 && !str_same(pol, "SingleStack"))
				srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilyPolicy",
						"Invalid value: %s: must be set to 'SingleStack' when releasing the secondary ipFamily",
						go_ptr_str(pol, w, sizeof w));
		} else if (onf && nf && fam_changed) {
			srv_error_cause(err, "FieldValueInvalid", "spec.ipFamilies[0]",
					"Invalid value: %s: may not change once set", v);
		}
	}
	if (str_is(spec, "type", "LoadBalancer") &&
	    str_is(ospec, "type", "LoadBalancer") &&
	    !same_value(json_object_get(spec, "loadBalancerClass"),
			json_object_get(ospec, "loadBalancerClass")))
		srv_error_cause(err, "FieldValueInvalid", "spec.loadBalancerClass",
				"Invalid value: %s: may not change once set",
				go_ptr_str(str_of(spec, "loadBalancerClass"), w, sizeof w));
	if (srv_service_needs_health_port(spec) &&
	    srv_service_needs_health_port(ospec) &&
	    !same_value(json_object_get(spec, "healthCheckNodePort"),
			json_object_get(ospec, "healthCheckNodePort")))
		srv_error_cause(err, "FieldValueForbidden", "spec.healthCheckNodePort",
				"Forbidden: field is immutable");
}

/* The rest of kube's ValidateService, after the node port rules: load
   balancer source ranges (field or annotation) and class only on a
   LoadBalancer, externalTrafficPolicy only on an externally accessible
   Service and then required, the health check port only with a
   LoadBalancer of policy Local and then a port number, internalTrafficPolicy
   and trafficDistribution values. */
static void service_tail_causes(const json_t *obj, const json_t *spec,
				struct srv_error *err)
{
	static const char *const policies[] = {"Cluster", "Local", NULL};
	static const char *const dists[] = {"PreferClose", NULL};
	static const char *const lb_only =
	    "Forbidden: may only be used when `type` is 'LoadBalancer'";
	bool lb = str_is(spec, "type", "LoadBalancer");
	const json_t *ranges = json_object_get(spec, "loadBalancerSourceRanges");
	const char *ann = str_of(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    "service.beta.kubernetes.io/load-balancer-source-ranges");
	char f[80], buf[256];
	size_t i;
	const json_t *r;
	if (json_array_size(ranges)) {
		if (!lb)
			srv_error_cause(err, "FieldValueForbidden",
					"spec.LoadBalancerSourceRanges", "%s", lb_only);
		json_array_foreach(ranges, i, r)
		{
			const char *s = json_string_value(r);
			snprintf(buf, sizeof buf, "%s", s ? s : "");
			char *t = buf;
			while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
				t++;
			size_t n = strlen(t);
			while (n && strchr(" \t\n\r", t[n - 1]))
				t[--n] = '\0';
			snprintf(f, sizeof f, "spec.LoadBalancerSourceRanges[%zu]", i);
			if (!is_cidr(t))
				srv_error_cause(err, "FieldValueInvalid", f,
						"Invalid value: \"%.64s\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
						t);
		}
	} else if (ann) {
		static const char *const af =
		    "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]";
		if (!lb)
			srv_error_cause(err, "FieldValueForbidden", af, "%s", lb_only);
		snprintf(buf, sizeof buf, "%s", ann);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			while (*t == ' ' || *t == '\t')
				t++;
			size_t n = strlen(t);
			while (n && strchr(" \t\n\r", t[n - 1]))
				t[--n] = '\0';
			if (*t && !is_cidr(t))
				srv_error_cause(err, "FieldValueInvalid", af,
						"Invalid value: \"%.64s\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
						t);
		}
	}
	const char *cls = str_of(spec, "loadBalancerClass");
	if (cls && lb)
		srv_qname_causes(err, "spec.loadBalancerClass", cls, cls);
	else if (cls)
		srv_error_cause(err, "FieldValueForbidden", "spec.loadBalancerClass",
				"%s", lb_only);
	const json_t *etp = json_object_get(spec, "externalTrafficPolicy");
	const char *etps = json_string_value(etp);
	if (!svc_external_access(spec)) {
		if (etps && *etps)
			srv_error_cause(err, "FieldValueInvalid",
					"spec.externalTrafficPolicy",
					"Invalid value: \"%.40s\": may only be set for externally-accessible services",
					etps);
	} else {
		enum_cause("spec.externalTrafficPolicy", etp, policies, err);
	}
	json_int_t hc = json_integer_value(json_object_get(spec, "healthCheckNodePort"));
	if (!srv_service_needs_health_port(spec)) {
		if (hc)
			srv_error_cause(err, "FieldValueInvalid",
					"spec.healthCheckNodePort",
					"Invalid value: %lld: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
					(long long)hc);
	} else if (hc && (hc < 1 || hc > 65535)) {
		/* none yet: the allocator gives one, as kube's does before
		   validation */
		srv_error_cause(err, "FieldValueInvalid", "spec.healthCheckNodePort",
				"Invalid value: %lld: must be between 1 and 65535, inclusive",
				(long long)hc);
	}
	const json_t *itp = json_object_get(spec, "internalTrafficPolicy");
	if (itp && !json_is_null(itp))
		enum_cause_set("spec.internalTrafficPolicy", itp, policies,
			       err);
	const json_t *td = json_object_get(spec, "trafficDistribution");
	if (td && !json_is_null(td))
		enum_cause_set("spec.trafficDistribution", td, dists, err);
}

/* kube's ValidateLoadBalancerStatus: ingress only on a LoadBalancer, each
   with a valid ip, an ipMode (VIP or Proxy) only beside an ip, and a
   hostname that is a DNS name and not an address. */
static void lb_status_causes(const json_t *obj, struct srv_error *err)
{
	static const char *const modes[] = {"Proxy", "VIP", NULL};
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *ing = json_object_get(
	    json_object_get(json_object_get(obj, "status"), "loadBalancer"),
	    "ingress");
	if (!str_is(spec, "type", "LoadBalancer") && json_array_size(ing)) {
		srv_error_cause(err, "FieldValueForbidden",
				"status.loadBalancer.ingress",
				"Forbidden: may only be used when `spec.type` is 'LoadBalancer'");
		return;
	}
	size_t i;
	const json_t *e;
	json_array_foreach(ing, i, e)
	{
		char f[80];
		const char *ip = str_of(e, "ip");
		const char *host = str_of(e, "hostname");
		const json_t *mode = json_object_get(e, "ipMode");
		bool has_mode = mode && !json_is_null(mode);
		if (ip && *ip && !is_ip(ip)) {
			snprintf(f, sizeof f, "status.loadBalancer.ingress[%zu].ip", i);
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: \"%.64s\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
					ip);
		}
		snprintf(f, sizeof f, "status.loadBalancer.ingress[%zu].ipMode", i);
		if (!has_mode && ip && *ip)
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value: must be specified when `ip` is set");
		else if (has_mode && !(ip && *ip))
			srv_error_cause(err, "FieldValueForbidden", f,
					"Forbidden: may not be specified when `ip` is not set");
		else if (has_mode)
			enum_cause(f, mode, modes, err);
		if (host && *host) {
			snprintf(f, sizeof f, "status.loadBalancer.ingress[%zu].hostname", i);
			srv_name_causes(err, f, SRV_RULE_DNS_SUBDOMAIN, host);
			if (is_ip(host))
				srv_error_cause(err, "FieldValueInvalid", f,
						"Invalid value: \"%.64s\": must be a DNS name, not an IP address",
						host);
		}
	}
}

/* SetDefaults_Service's status part: a LoadBalancer's ingress with an ip
   and no ipMode gets VIP. */
static void default_ip_mode(json_t *obj)
{
	if (!str_is(json_object_get(obj, "spec"), "type", "LoadBalancer"))
		return;
	json_t *ing = json_object_get(
	    json_object_get(json_object_get(obj, "status"), "loadBalancer"),
	    "ingress");
	size_t i;
	json_t *e;
	json_array_foreach(ing, i, e)
	{
		const char *ip = str_of(e, "ip");
		json_t *mode = json_object_get(e, "ipMode");
		if (ip && *ip && (!mode || json_is_null(mode)) && json_is_object(e))
			json_object_set_new(e, "ipMode", json_string("VIP"));
	}
}

static lp_err prep_service_status(const struct srv_resource *r, json_t *obj,
				  const json_t *old, struct srv_error *err)
{
	(void)old;
	default_ip_mode(obj);
	lb_status_causes(obj, err);
	return finish_invalid(r, obj, err);
}

/* kube's initNodePorts, for the node ports one Service asks for: the
   entries of one port number share a node port, another port number
   asking for one already taken is the allocator's 422, which kube answers
   alone (before validation). true when it added the cause. */
static bool node_port_taken(const json_t *spec, struct srv_error *err)
{
	const json_t *ports = json_object_get(spec, "ports");
	size_t i, j;
	const json_t *p, *q;
	json_array_foreach(ports, i, p)
	{
		json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
		json_int_t port = json_integer_value(json_object_get(p, "port"));
		if (!np)
			continue;
		json_array_foreach(ports, j, q)
		{
			if (j >= i)
				break;
			if (json_integer_value(json_object_get(q, "nodePort")) != np ||
			    json_integer_value(json_object_get(q, "port")) == port)
				continue;
			char f[64];
			snprintf(f, sizeof f, "spec.ports[%zu].nodePort", i);
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %lld: provided port is already allocated",
					(long long)np);
			return true;
		}
	}
	return false;
}

/* kube's ValidateService for what lapis serves, in its order: ports
   required but for headless and ExternalName Services, an ExternalName's
   name, each port (a name when there are several, DNS labels, unique;
   1-65535; protocol; targetPort a port number or name), the selector's
   labels, sessionAffinity, type, and no (protocol, port) twice. */
static void validate_service(const json_t *spec, struct srv_error *err)
{
	static const char *const types[] = {"ClusterIP", "ExternalName",
					    "LoadBalancer", "NodePort", NULL};
	static const char *const protos[] = {"SCTP", "TCP", "UDP", NULL};
	static const char *const affinities[] = {"ClientIP", "None", NULL};
	const char *type = json_string_value(json_object_get(spec, "type"));
	const char *cip = json_string_value(json_object_get(spec, "clusterIP"));
	bool headless = cip && !strcmp(cip, "None");
	bool external = type && !strcmp(type, "ExternalName");
	const json_t *ports = json_object_get(spec, "ports");
	if (json_array_size(ports) == 0 && !headless && !external)
		srv_error_cause(err, "FieldValueRequired", "spec.ports",
				"Required value");
	bool lb = type && !strcmp(type, "LoadBalancer");
	bool np = type && !strcmp(type, "NodePort");
	if ((lb || np) && headless)
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs[0]",
				"Invalid value: \"None\": may not be set to 'None' for %s services",
				lb ? "LoadBalancer" : "NodePort");
	if (external) {
		if (cip && *cip)
			srv_error_cause(err, "FieldValueForbidden", "spec.clusterIPs",
					"Forbidden: may not be set for ExternalName services");
		if (json_array_size(json_object_get(spec, "ipFamilies")))
			srv_error_cause(err, "FieldValueForbidden", "spec.ipFamilies",
					"Forbidden: may not be set for ExternalName services");
		if (json_object_get(spec, "ipFamilyPolicy") &&
		    !json_is_null(json_object_get(spec, "ipFamilyPolicy")))
			srv_error_cause(err, "FieldValueForbidden",
					"spec.ipFamilyPolicy",
					"Forbidden: may not be set for ExternalName services");
		const char *en =
		    json_string_value(json_object_get(spec, "externalName"));
		/* kube drops one trailing dot (a fully qualified name) */
		char *cname = strdup(en ? en : "");
		size_t n = cname ? strlen(cname) : 0;
		if (n && cname[n - 1] == '.')
			cname[n - 1] = '\0';
		if (cname && !cname[0])
			srv_error_cause(err, "FieldValueRequired",
					"spec.externalName", "Required value");
		else if (cname)
			srv_name_causes(err, "spec.externalName",
					SRV_RULE_DNS_SUBDOMAIN, cname);
		free(cname);
	}
	size_t i, j;
	const json_t *p, *q;
	json_array_foreach(ports, i, p)
	{
		char f[64];
		const char *name = json_string_value(json_object_get(p, "name"));
		if (json_array_size(ports) > 1 && (!name || !*name)) {
			snprintf(f, sizeof f, "spec.ports[%zu].name", i);
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value");
		} else if (name && *name) {
			snprintf(f, sizeof f, "spec.ports[%zu].name", i);
			srv_name_causes(err, f, SRV_RULE_DNS_LABEL, name);
			json_array_foreach(ports, j, q)
			{
				if (j >= i)
					break;
				if (json_equal(json_object_get(q, "name"),
					       json_object_get(p, "name"))) {
					srv_error_cause(err, "FieldValueDuplicate", f,
							"Duplicate value: \"%.63s\"",
							name);
					break;
				}
			}
		}
		json_int_t port = json_integer_value(json_object_get(p, "port"));
		if (json_is_integer(json_object_get(p, "port")) &&
		    (port < 1 || port > 65535)) {
			snprintf(f, sizeof f, "spec.ports[%zu].port", i);
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %lld: must be between 1 and 65535, inclusive",
					(long long)port);
		}
		snprintf(f, sizeof f, "spec.ports[%zu].protocol", i);
		enum_cause(f, json_object_get(p, "protocol"), protos, err);
		const json_t *tp = json_object_get(p, "targetPort");
		snprintf(f, sizeof f, "spec.ports[%zu].targetPort", i);
		if (json_is_integer(tp) && (json_integer_value(tp) < 1 ||
					    json_integer_value(tp) > 65535))
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %lld: must be between 1 and 65535, inclusive",
					(long long)json_integer_value(tp));
		if (json_is_string(tp))
			port_name_causes(err, f, json_string_value(tp));
		const char *app = json_string_value(json_object_get(p, "appProtocol"));
		if (app) {
			snprintf(f, sizeof f, "spec.ports[%zu].appProtocol", i);
			srv_qname_causes(err, f, app, app);
		}
	}
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(spec, "selector"), k, v)
	{
		srv_qname_causes(err, "spec.selector", k, k);
		if (json_is_string(v))
			srv_name_causes(err, "spec.selector",
					SRV_RULE_LABEL_VALUE,
					json_string_value(v));
		else
			srv_error_cause(
			    err, "FieldValueInvalid", "spec.selector",
			    "Invalid value: \"\": " SRV_MSG_LABEL_VALUE);
	}
	enum_cause("spec.sessionAffinity", json_object_get(spec, "sessionAffinity"),
		   affinities, err);
	/* the defaults gave a ClientIP Service its timeout (kube's
	   validateClientIPAffinityConfig, validateAffinityTimeout) */
	const json_t *tmo = json_object_get(
	    json_object_get(json_object_get(spec, "sessionAffinityConfig"),
			    "clientIP"),
	    "timeoutSeconds");
	if (str_is(spec, "sessionAffinity", "ClientIP") &&
	    (json_integer_value(tmo) <= 0 || json_integer_value(tmo) > 86400))
		srv_error_cause(err, "FieldValueInvalid",
				"spec.sessionAffinityConfig.clientIP.timeoutSeconds",
				"Invalid value: %lld: must be greater than 0 and less than 86400",
				(long long)json_integer_value(tmo));
	json_array_foreach(json_object_get(spec, "externalIPs"), i, p)
	{
		char f[48];
		snprintf(f, sizeof f, "spec.externalIPs[%zu]", i);
		ip_causes(f, json_string_value(p), err);
	}
	enum_cause("spec.type", json_object_get(spec, "type"), types, err);
}

/* kube's duplicate (protocol, port) check, after the node ports' */
static void dup_port_causes(const json_t *spec, struct srv_error *err)
{
	const json_t *ports = json_object_get(spec, "ports");
	size_t i, j;
	const json_t *p, *q;
	json_array_foreach(ports, i, p)
	{
		json_array_foreach(ports, j, q)
		{
			if (j >= i)
				break;
			if (json_equal(json_object_get(q, "port"),
				       json_object_get(p, "port")) &&
			    json_equal(json_object_get(q, "protocol"),
				       json_object_get(p, "protocol"))) {
				char f[64];
				snprintf(f, sizeof f, "spec.ports[%zu]", i);
				srv_error_cause(err, "FieldValueDuplicate", f,
						"Duplicate value: core.ServicePort{Name:\"\", Protocol:\"%s\", AppProtocol:(*string)(nil), Port:%lld, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
						json_string_value(json_object_get(p, "protocol")),
						(long long)json_integer_value(
						    json_object_get(p, "port")));
				break;
			}
		}
	}
}

/* kube 1.33's GetWarningsForService, for what lapis takes: the deprecated
   topology annotation, IPs and CIDRs in non-standard forms, externalIPs on
   an ExternalName Service, externalName on another type. */
static void service_warnings(const json_t *obj, const json_t *old,
			     void (*warn)(void *ud, const char *text), void *ud)
{
	(void)old;
	const json_t *spec = json_object_get(obj, "spec");
	if (json_object_get(json_object_get(json_object_get(obj, "metadata"),
					    "annotations"),
			    "service.kubernetes.io/topology-aware-hints"))
		warn(ud, "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead");
	/* IPs and CIDRs in non-standard forms (leading zeros, IPv4-mapped,
	   IPv6 not in RFC 5952 form) */
	char f[64];
	size_t i;
	const json_t *x;
	const char *cip = str_of(spec, "clusterIP");
	const json_t *cips = json_object_get(spec, "clusterIPs");
	if (cip && *cip && strcmp(cip, "None") && !json_array_size(cips))
		/* kube warns after its allocator put clusterIP into
		   clusterIPs, which here comes later */
		srv_ip_warnings("spec.clusterIPs[0]", cip, warn, ud);
	else if (cip && *cip && strcmp(cip, "None"))
		json_array_foreach(cips, i, x)
		{
			snprintf(f, sizeof f, "spec.clusterIPs[%zu]", i);
			srv_ip_warnings(f, json_string_value(x), warn, ud);
		}
	json_array_foreach(json_object_get(spec, "externalIPs"), i, x)
	{
		snprintf(f, sizeof f, "spec.externalIPs[%zu]", i);
		srv_ip_warnings(f, json_string_value(x), warn, ud);
	}
	const char *lbip = str_of(spec, "loadBalancerIP");
	if (lbip && *lbip)
		srv_ip_warnings("spec.loadBalancerIP", lbip, warn, ud);
	json_array_foreach(json_object_get(spec, "loadBalancerSourceRanges"), i, x)
	{
		snprintf(f, sizeof f, "spec.loadBalancerSourceRanges[%zu]", i);
		srv_cidr_warnings(f, json_string_value(x), warn, ud);
	}
	bool ext = str_is(spec, "type", "ExternalName");
	if (ext && json_array_size(json_object_get(spec, "externalIPs")))
		warn(ud, "spec.externalIPs is ignored when spec.type is \"ExternalName\"");
	const char *en = str_of(spec, "externalName");
	if (!ext && en && *en)
		warn(ud, "spec.externalName is ignored when spec.type is not \"ExternalName\"");
}

/* kube's endpointsWarnings: addresses in non-standard forms. */
static void endpoints_warnings(const json_t *obj, const json_t *old,
			       void (*warn)(void *ud, const char *text),
			       void *ud)
{
	(void)old;
	static const char *const lists[] = {"addresses", "notReadyAddresses"};
	size_t i, j;
	const json_t *ss, *a;
	json_array_foreach(json_object_get(obj, "subsets"), i, ss)
	{
		for (size_t l = 0; l < 2; l++)
			json_array_foreach(json_object_get(ss, lists[l]), j, a)
			{
				char f[96];
				snprintf(f, sizeof f, "subsets[%zu].%s[%zu].ip", i,
					 lists[l], j);
				srv_ip_warnings(f, str_of(a, "ip"), warn, ud);
			}
	}
}

/* ValidateService's first check after the metadata: the topology mode
   annotation agrees with the deprecated hints one when both are there. */
static void topology_causes(const json_t *obj, struct srv_error *err)
{
	const json_t *ann =
	    json_object_get(json_object_get(obj, "metadata"), "annotations");
	const char *hints = str_of(ann, "service.kubernetes.io/topology-aware-hints");
	const char *mode = str_of(ann, "service.kubernetes.io/topology-mode");
	if (hints && mode && strcmp(hints, mode))
		srv_error_cause(err, "FieldValueInvalid",
				"metadata.annotations[service.kubernetes.io/topology-mode]",
				"Invalid value: \"%.100s\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified",
				mode);
}

static lp_err prep_service(const struct srv_resource *r, json_t *obj,
			   const json_t *old, struct srv_error *err)
{
	json_t *spec = obj_child(obj, "spec");
	const json_t *ospec = old ? json_object_get(old, "spec") : NULL;
	/* SetDefaults_Service */
	default_str(spec, "type", "ClusterIP");
	default_str(spec, "sessionAffinity", "None");
	if (str_is(spec, "sessionAffinity", "None"))
		json_object_del(spec, "sessionAffinityConfig");
	if (str_is(spec, "sessionAffinity", "ClientIP") &&
	    !json_is_integer(json_object_get(
		json_object_get(json_object_get(spec, "sessionAffinityConfig"),
				"clientIP"),
		"timeoutSeconds")))
		json_object_set_new(spec, "sessionAffinityConfig",
				    json_pack("{s:{s:i}}", "clientIP",
					      "timeoutSeconds", 10800));
	json_t *ports = json_object_get(spec, "ports");
	size_t i;
	json_t *p;
	json_array_foreach(ports, i, p)
	{
		if (!json_is_object(p))
			continue;
		default_str(p, "protocol", "TCP");
		/* an unset port is Go's zero, which validation refuses (with
		   the targetPort defaulted from it), as kube answers */
		json_t *port = json_object_get(p, "port");
		if (!port || json_is_null(port))
			json_object_set_new(p, "port", json_integer(0));
		/* kube defaults an unset targetPort (0 or "", which a null
		   decodes to) to the port */
		json_t *tp = json_object_get(p, "targetPort");
		bool unset = !tp || json_is_null(tp) ||
			     (json_is_integer(tp) && !json_integer_value(tp)) ||
			     (json_is_string(tp) && !json_string_length(tp));
		if (unset && json_is_integer(json_object_get(p, "port")))
			json_object_set_new(
				p, "targetPort",
				json_integer(json_integer_value(
					json_object_get(p, "port"))));
	}
	if (ospec) {
		drop_type_fields(spec, ospec);
		/* and the load balancer's status, once the type is another
		   (kube's dropTypeDependentFields): the status subresource
		   could not be written again while it stayed */
		if (!str_is(spec, "type", "LoadBalancer"))
			json_object_set_new(obj_child(obj, "status"),
					    "loadBalancer", json_object());
	}
	if (svc_external_access(spec))
		default_str(spec, "externalTrafficPolicy", "Cluster");
	bool external = str_is(spec, "type", "ExternalName");
	/* a pointer: defaulted when unset only ("" is a value, refused) */
	const json_t *itp = json_object_get(spec, "internalTrafficPolicy");
	if (!external && (!itp || json_is_null(itp)))
		json_object_set_new(spec, "internalTrafficPolicy",
				    json_string("Cluster"));
	if (str_is(spec, "type", "LoadBalancer") &&
	    !json_is_boolean(json_object_get(spec, "allocateLoadBalancerNodePorts")))
		json_object_set_new(spec, "allocateLoadBalancerNodePorts",
				    json_true());
	/* the service storage, before the strategy: allocated values an
	   update left out, clusterIP and clusterIPs in step, the IP families
	   (whose errors kube answers alone) */
	if (ospec) {
		normalize_cluster_ips(spec, ospec);
		keep_node_ports(spec, ospec);
	}
	/* checked here, on a copy: the allocator sets them for real after
	   the field manager has seen the request, so a create's manager
	   owns no family it did not send (plan_service in objects.c) */
	json_t *trial = json_deep_copy(spec);
	bool refused = srv_service_ip_families(trial, ospec, err);
	json_decref(trial);
	if (refused ||
	    (srv_service_needs_node_ports(spec) && node_port_taken(spec, err)))
		return finish_invalid(r, obj, err);
	if (ospec)
		service_update_causes(spec, ospec, err);
	topology_causes(obj, err);
	validate_service(spec, err);
	node_port_causes(spec, err);
	dup_port_causes(spec, err);
	service_tail_causes(obj, spec, err);
	/* PrepareForCreate resets the status: a load balancer's ingress
	   is the controller's to set, through /status */
	if (!old)
		json_object_del(obj, "status");
	if (!json_object_get(obj, "status")) {
		json_t *st = json_object();
		json_object_set_new(st, "loadBalancer", json_object());
		json_object_set_new(obj, "status", st);
	}
	return finish_invalid(r, obj, err);
}

/* kube's ValidateLeaseSpec. */
static lp_err prep_lease(const struct srv_resource *r, json_t *obj,
			 const json_t *old, struct srv_error *err)
{
	json_t *spec = json_object_get(obj, "spec");
	/* kube 1.33's lease strategy with CoordinatedLeaderElection off (a
	   beta gate, off by default): strategy and preferredHolder are
	   dropped, unless the stored Lease already has them */
	const json_t *ospec = json_object_get(old, "spec");
	static const char *const gated[] = {"strategy", "preferredHolder"};
	for (size_t i = 0; json_is_object(spec) && i < 2; i++) {
		const json_t *ov = json_object_get(ospec, gated[i]);
		if (!ov || json_is_null(ov))
			json_object_del(spec, gated[i]);
	}
	const json_t *d = json_object_get(spec, "leaseDurationSeconds");
	const json_t *t = json_object_get(spec, "leaseTransitions");
	const json_t *st = json_object_get(spec, "strategy");
	const json_t *ph = json_object_get(spec, "preferredHolder");
	if (json_is_integer(d) && json_integer_value(d) <= 0)
		srv_error_cause(err, "FieldValueInvalid", "spec.leaseDurationSeconds",
				"Invalid value: %lld: must be greater than 0",
				(long long)json_integer_value(d));
	if (json_is_integer(t) && json_integer_value(t) < 0)
		srv_error_cause(err, "FieldValueInvalid", "spec.leaseTransitions",
				"Invalid value: %lld: must be greater than or equal to 0",
				(long long)json_integer_value(t));
	const char *sv = json_string_value(st);
	/* one kube-defined name, or a qualified name with a prefix (the
	   field path repeats "strategy", as kube's does) */
	if (sv && !strchr(sv, '/') && strcmp(sv, "OldestEmulationVersion"))
		srv_error_cause(err, "FieldValueNotSupported",
				"spec.strategy.strategy",
				"Unsupported value: \"%.100s\": supported values: \"OldestEmulationVersion\"",
				sv);
	else if (sv && strchr(sv, '/'))
		srv_qname_causes(err, "spec.strategy.strategy", sv, sv);
	if (json_string_length(ph) > 0 && (!sv || !*sv))
		srv_error_cause(err, "FieldValueForbidden", "spec.preferredHolder",
				"Forbidden: may only be specified if `strategy` is defined");
	return finish_invalid(r, obj, err);
}

/* kube's validateEndpointSubsets: addresses (or notReadyAddresses) in
   each subset, each a valid IP that is not special (unspecified,
   loopback, link-local, multicast), hostnames DNS labels; ports as a
   Service's (a name when there are several, DNS labels; 1-65535; TCP, UDP
   or SCTP). */
static lp_err prep_endpoints(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	(void)old;
	static const char *const lists[] = {"addresses", "notReadyAddresses"};
	size_t i, j;
	json_t *ss, *a;
	json_array_foreach(json_object_get(obj, "subsets"), i, ss)
	{
		char f[96];
		if (!json_array_size(json_object_get(ss, "addresses")) &&
		    !json_array_size(json_object_get(ss, "notReadyAddresses"))) {
			snprintf(f, sizeof f, "subsets[%zu]", i);
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value: must specify `addresses` or `notReadyAddresses`");
		}
		for (int l = 0; l < 2; l++) {
			json_array_foreach(json_object_get(ss, lists[l]), j, a)
			{
				const char *ip =
				    json_string_value(json_object_get(a, "ip"));
				const char *hn =
				    json_string_value(json_object_get(a, "hostname"));
				/* kube's validateEndpointAddress: the IP, the
				   hostname, the node name, then
				   ValidateNonSpecialIP (a second cause for an
				   IP that is none) */
				char fip[96];
				snprintf(fip, sizeof fip, "subsets[%zu].%s[%zu].ip", i,
					 lists[l], j);
				bool valid = is_ip(ip);
				if (!valid)
					ip_causes(fip, ip, err);
				if (hn && *hn) {
					snprintf(f, sizeof f,
						 "subsets[%zu].%s[%zu].hostname", i,
						 lists[l], j);
					srv_name_causes(err, f,
							SRV_RULE_DNS_LABEL, hn);
				}
				const json_t *nn = json_object_get(a, "nodeName");
				if (json_is_string(nn)) {
					const char *nv = json_string_value(nn);
					snprintf(f, sizeof f,
						 "subsets[%zu].%s[%zu].nodeName", i,
						 lists[l], j);
					srv_name_causes(
					    err, f, SRV_RULE_DNS_SUBDOMAIN, nv);
				}
				if (valid)
					ip_causes(fip, ip, err);
				else
					srv_error_cause(err, "FieldValueInvalid", fip,
							"Invalid value: \"%.64s\": must be a valid IP address",
							ip ? ip : "");
			}
		}
		const json_t *ports = json_object_get(ss, "ports");
		json_array_foreach(ports, j, a)
		{
			const char *name = json_string_value(json_object_get(a, "name"));
			json_int_t port = json_integer_value(json_object_get(a, "port"));
			if (json_array_size(ports) > 1 && (!name || !*name)) {
				snprintf(f, sizeof f, "subsets[%zu].ports[%zu].name", i, j);
				srv_error_cause(err, "FieldValueRequired", f,
						"Required value");
			} else if (name && *name) {
				snprintf(f, sizeof f, "subsets[%zu].ports[%zu].name", i, j);
				srv_name_causes(err, f, SRV_RULE_DNS_LABEL,
						name);
			}
			if (port < 1 || port > 65535) {
				snprintf(f, sizeof f, "subsets[%zu].ports[%zu].port", i, j);
				srv_error_cause(err, "FieldValueInvalid", f,
						"Invalid value: %lld: must be between 1 and 65535, inclusive",
						(long long)port);
			}
			static const char *const protos[] = {"SCTP", "TCP", "UDP", NULL};
			if (!json_object_get(a, "protocol"))
				json_object_set_new(a, "protocol", json_string("TCP"));
			snprintf(f, sizeof f, "subsets[%zu].ports[%zu].protocol", i, j);
			enum_cause(f, json_object_get(a, "protocol"), protos, err);
			const char *app = str_of(a, "appProtocol");
			if (app) {
				snprintf(f, sizeof f, "subsets[%zu].ports[%zu].appProtocol", i, j);
				srv_qname_causes(err, f, app, app);
			}
		}
	}
	return finish_invalid(r, obj, err);
}

static lp_err prep_none(const struct srv_resource *r, json_t *obj,
			const json_t *old, struct srv_error *err)
{
	(void)old;
	return finish_invalid(r, obj, err);
}

/* kube's serviceaccount strategy: a secret reference keeps only its name
   (cleanSecretReferences). */
static lp_err prep_serviceaccount(const struct srv_resource *r, json_t *obj,
				  const json_t *old, struct srv_error *err)
{
	(void)old;
	size_t i;
	json_t *ref;
	json_array_foreach(json_object_get(obj, "secrets"), i, ref)
	{
		json_t *n = json_object_get(ref, "name");
		json_t *only = json_object();
		if (json_is_string(n) && json_string_length(n))
			json_object_set(only, "name", n);
		json_array_set_new(json_object_get(obj, "secrets"), i, only);
	}
	return finish_invalid(r, obj, err);
}

/* kube's warnIfHasEnforceMountableSecretsAnnotation: the annotation,
   on a create or when an update adds it. */
static void sa_warnings(const json_t *obj, const json_t *old,
			void (*warn)(void *ud, const char *text), void *ud)
{
	static const char an[] = "kubernetes.io/enforce-mountable-secrets";
	const json_t *now = json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"), an);
	const json_t *before = json_object_get(
	    json_object_get(json_object_get(old, "metadata"), "annotations"), an);
	if (now && !before)
		warn(ud, "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets");
}

/* kube's ValidateNamespaceStatusUpdate, after SetDefaults_NamespaceStatus
   made an empty phase Active: Active unless deleting, then Terminating. */
static lp_err prep_namespace_status(const struct srv_resource *r,
				    json_t *obj, const json_t *old,
				    struct srv_error *err)
{
	(void)old;
	json_t *st = obj_child(obj, "status");
	default_str(st, "phase", "Active");
	const char *ph = str_of(st, "phase");
	bool deleting = json_object_get(json_object_get(obj, "metadata"),
					"deletionTimestamp") != NULL;
	if (!deleting && strcmp(ph, "Active"))
		srv_error_cause(err, "FieldValueInvalid", "status.Phase",
				"Invalid value: \"%.64s\": may only be 'Active' if `deletionTimestamp` is empty",
				ph);
	else if (deleting && strcmp(ph, "Terminating"))
		srv_error_cause(err, "FieldValueInvalid", "status.Phase",
				"Invalid value: \"%.64s\": may only be 'Terminating' if `deletionTimestamp` is not empty",
				ph);
	return finish_invalid(r, obj, err);
}

/* ------------------------------------------------------------ events */

/*
 * Events: core/v1 and events.k8s.io/v1 are two versions of one stored
 * object (pkg/apis/events/v1 conversion): the events version renames seven
 * of core's members. Both forms are written as Go's encoding of the
 * version's struct: members without omitempty always appear (a zero time
 * as null, a value struct as {}), in the struct's order.
 */
static const char *const ev_renamed[][2] = {
	{"involvedObject", "regarding"},
	{"message", "note"},
	{"source", "deprecatedSource"},
	{"firstTimestamp", "deprecatedFirstTimestamp"},
	{"lastTimestamp", "deprecatedLastTimestamp"},
	{"count", "deprecatedCount"},
	{"reportingComponent", "reportingController"},
};
#define EV_N_RENAMED (sizeof ev_renamed / sizeof ev_renamed[0])

/* Member order of each struct, and what a missing member is written as:
   0 left out, 'o' an empty object, 'n' null, 's' "". */
struct ev_member {
	const char *name;
	char absent;
};
static const struct ev_member ev_core[] = {
	{"kind", 0},		  {"apiVersion", 0},
	{"metadata", 0},	  {"involvedObject", 'o'},
	{"reason", 0},		  {"message", 0},
	{"source", 'o'},	  {"firstTimestamp", 'n'},
	{"lastTimestamp", 'n'},	  {"count", 0},
	{"type", 0},		  {"eventTime", 'n'},
	{"series", 0},		  {"action", 0},
	{"related", 0},		  {"reportingComponent", 's'},
	{"reportingInstance", 's'},
};
static const struct ev_member ev_v1[] = {
	{"kind", 0},
	{"apiVersion", 0},
	{"metadata", 0},
	{"eventTime", 'n'},
	{"series", 0},
	{"reportingController", 0},
	{"reportingInstance", 0},
	{"action", 0},
	{"reason", 0},
	{"regarding", 'o'},
	{"related", 0},
	{"note", 0},
	{"type", 0},
	{"deprecatedSource", 'o'},
	{"deprecatedFirstTimestamp", 'n'},
	{"deprecatedLastTimestamp", 'n'},
	{"deprecatedCount", 0},
};

/* Rename (from column to the other) and lay obj out in order. Members
   of neither struct (none after the fields walk) keep their place at the
   end. */
static void ev_reshape(json_t *obj, int from, const char *api_version,
		       const struct ev_member *order, size_t n_order)
{
	json_t *t = json_object();
	if (!t)
		return;
	json_object_set_new(obj, "apiVersion", json_string(api_version));
	for (size_t i = 0; i < EV_N_RENAMED; i++) {
		json_t *v = json_object_get(obj, ev_renamed[i][from]);
		if (v) {
			json_object_set(obj, ev_renamed[i][!from], v);
			json_object_del(obj, ev_renamed[i][from]);
		}
	}
	for (size_t i = 0; i < n_order; i++) {
		json_t *v = json_object_get(obj, order[i].name);
		if (v)
			json_object_set(t, order[i].name, v);
		else if (order[i].absent)
			json_object_set_new(t, order[i].name,
					    order[i].absent == 'o'   ? json_object()
					    : order[i].absent == 'n' ? json_null()
								     : json_string(""));
		json_object_del(obj, order[i].name);
	}
	json_object_update(t, obj); /* anything else, after */
	json_object_clear(obj);
	json_object_update(obj, t);
	json_decref(t);
}

static void ev_to_v1(json_t *obj)
{
	ev_reshape(obj, 0, "events.k8s.io/v1", ev_v1,
		   sizeof ev_v1 / sizeof ev_v1[0]);
	/* omitempty strings the core form writes as "" */
	static const char *const omit[] = {"reportingController",
					   "reportingInstance"};
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(obj, omit[i]);
		if (json_is_string(v) && json_string_length(v) == 0)
			json_object_del(obj, omit[i]);
	}
}

static void ev_to_core(json_t *obj)
{
	ev_reshape(obj, 1, "v1", ev_core, sizeof ev_core / sizeof ev_core[0]);
}

static const struct srv_view view_core_events = {"", "v1", ev_to_v1,
						 ev_to_core};

bool srv_kind_renames_fields(const char *kind)
{
	return !strcmp(kind, "Event");
}

/* The column of ev_renamed naming an Event's members in gv; -1 for none. */
static int ev_column(const char *gv)
{
	if (!strcmp(gv, "v1"))
		return 0;
	if (!strcmp(gv, "events.k8s.io/v1"))
		return 1;
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void srv_fields_convert(const char *kind, const char *from_gv,
			const char *to_gv, json_t *fields)
{
	int from = ev_column(from_gv), to = ev_column(to_gv);
	if (!srv_kind_renames_fields(kind) || from < 0 || to < 0 ||
	    from == to || !json_is_object(fields))
		return;
	bool moved = false;
	/* the renamed members are top-level ones, alike inside */
	for (size_t i = 0; i < EV_N_RENAMED; i++) {
		char fk[64], tk[64];
		snprintf(fk, sizeof fk, "f:%s", ev_renamed[i][from]);
		snprintf(tk, sizeof tk, "f:%s", ev_renamed[i][to]);
		json_t *v = json_object_get(fields, fk);
		if (v) {
			json_object_set(fields, tk, v);
			json_object_del(fields, fk);
			moved = true;
		}
	}
	/* FieldsV1's keys in order again ("." sorts first) */
	size_t n = json_object_size(fields);
	const char **keys = moved ? malloc(n * sizeof *keys) : NULL;
	json_t *t = keys ? json_object() : NULL;
	if (!t) {
		free(keys);
		return;
	}
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(fields, key, v)
	{
		keys[k++] = key;
	}
	qsort(keys, n, sizeof *keys, cmp_str);
	for (k = 0; k < n; k++)
		json_object_set(t, keys[k], json_object_get(fields, keys[k]));
	free(keys);
	json_object_clear(fields);
	json_object_update(fields, t);
	json_decref(t);
}

static size_t str_len_at(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_length(v) : 0;
}

/* Set: not null (a zero time is null in both forms). */
static bool ev_set(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return v && !json_is_null(v);
}

/* A field of the internal core.Event as field.Error prints a value: Go's
   time.Time String() for Time and MicroTime, %#v for the structs
   (ObjectReference, EventSource; a nil pointer is null), %v for the
   count and %q for strings. v is the field's JSON, NULL when unset. */
static void event_go_value(const char *field, const json_t *v, char *out,
			   size_t n)
{
	static const char *const ref[][2] = {
	    {"Kind", "kind"},
	    {"Namespace", "namespace"},
	    {"Name", "name"},
	    {"UID", "uid"},
	    {"APIVersion", "apiVersion"},
	    {"ResourceVersion", "resourceVersion"},
	    {"FieldPath", "fieldPath"}};
	static const char *const src[][2] = {{"Component", "component"},
					     {"Host", "host"}};
	bool is_ref =
	    !strcmp(field, "involvedObject") || !strcmp(field, "related");
	if ((!v || json_is_null(v)) && !strcmp(field, "related")) {
		snprintf(out, n, "null");
		return;
	}
	if (is_ref || !strcmp(field, "source")) {
		const char *const(*m)[2] = is_ref ? ref : src;
		size_t k = is_ref ? 7 : 2, o = 0;
		o += (size_t)snprintf(out, n, "core.%s{",
				      is_ref ? "ObjectReference"
					     : "EventSource");
		for (size_t i = 0; i < k && o < n; i++) {
			const char *sv =
			    json_string_value(json_object_get(v, m[i][1]));
			char q[600];
			srv_go_quote(sv ? sv : "", q, sizeof q);
			o += (size_t)snprintf(out + o, n - o, "%s%s:%s",
					      i ? ", " : "", m[i][0], q);
		}
		if (o < n)
			snprintf(out + o, n - o, "}");
		return;
	}
	if (!strcmp(field, "firstTimestamp") ||
	    !strcmp(field, "lastTimestamp") || !strcmp(field, "eventTime")) {
		/* stored as RFC 3339 in UTC: 2006-01-02 15:04:05.999999999
		   -0700 MST, the fraction without its trailing zeros */
		const char *t = json_string_value(v);
		if (!t || strlen(t) < 20 || t[10] != 'T') {
			snprintf(out, n, "0001-01-01 00:00:00 +0000 UTC");
			return;
		}
		char frac[16] = "";
		const char *d = strchr(t + 19, '.');
		if (d) {
			size_t l = strspn(d + 1, "0123456789");
			while (l && d[l] == '0')
				l--;
			if (l && l < sizeof frac - 1)
				snprintf(frac, sizeof frac, ".%.*s", (int)l,
					 d + 1);
		}
		snprintf(out, n, "%.10s %.8s%s +0000 UTC", t, t + 11, frac);
		return;
	}
	if (json_is_integer(v)) {
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
		return;
	}
	if (!strcmp(field, "count")) {
		snprintf(out, n, "0");
		return;
	}
	const char *sv = json_string_value(v);
	srv_go_quote(sv ? sv : "", out, n);
}

/* kube's legacyValidateEvent, plus ValidateEventCreate's and
   ValidateEventUpdate's rules for events.k8s.io/v1 (strict), on the core
   form; field paths are kube's internal ones, as its messages give them. */
static void validate_event(const json_t *obj, const json_t *old, bool strict,
			   struct srv_error *err)
{
	const char *ns = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "namespace"));
	const json_t *io = json_object_get(obj, "involvedObject");
	const char *ions = json_string_value(json_object_get(io, "namespace"));
	ns = ns ? ns : "";
	ions = ions ? ions : "";
	const char *mism = "Invalid value: \"%.63s\": does not match event.namespace";
	if (!ev_set(obj, "eventTime")) {
		if (*ions ? strcmp(ns, ions) != 0
			  : (*ns && strcmp(ns, "default") != 0))
			srv_error_cause(err, "FieldValueInvalid",
					"involvedObject.namespace", mism, ions);
	} else {
		if (!*ions && strcmp(ns, "default") && strcmp(ns, "kube-system"))
			srv_error_cause(err, "FieldValueInvalid",
					"involvedObject.namespace", mism, ions);
		/* named as the request's version names it; an empty one is
		   also checked as a qualified name, as kube does */
		const char *rcf =
		    strict ? "reportingController" : "reportingComponent";
		const char *rc = json_string_value(
		    json_object_get(obj, "reportingComponent"));
		if (!rc || !*rc)
			srv_error_cause(err, "FieldValueRequired", rcf,
					"Required value");
		srv_qname_causes(err, rcf, rc ? rc : "", rc ? rc : "");
		static const struct {
			const char *name;
			size_t max;
		} lim[] = {{"reportingInstance", 128},
			   {"action", 128},
			   {"reason", 128}};
		for (size_t i = 0; i < 3; i++) {
			size_t l = str_len_at(obj, lim[i].name);
			if (l == 0)
				srv_error_cause(err, "FieldValueRequired",
						lim[i].name, "Required value");
			else if (l > lim[i].max)
				srv_error_cause(err, "FieldValueInvalid",
						lim[i].name,
						"Invalid value: \"\": can have at most %zu characters",
						lim[i].max);
		}
		if (str_len_at(obj, "message") > 1024)
			srv_error_cause(err, "FieldValueInvalid", "message",
					"Invalid value: \"\": can have at most 1024 characters");
	}
	if (!strict)
		return;
	const json_t *series = json_object_get(obj, "series");
	bool check_series = json_is_object(series);
	if (old && json_equal(series, json_object_get(old, "series")))
		check_series = false; /* unchanged on update */
	if (check_series) {
		json_int_t c = json_integer_value(json_object_get(series, "count"));
		if (c < 2)
			srv_error_cause(err, "FieldValueInvalid", "series.count",
					"Invalid value: \"\": should be at least 2");
		if (!ev_set(series, "lastObservedTime"))
			srv_error_cause(err, "FieldValueRequired",
					"series.lastObservedTime", "Required value");
	}
	if (old) {
		static const char *const fixed[] = {
		    "involvedObject", "reason",	   "message",
		    "source",	      "firstTimestamp", "lastTimestamp",
		    "count",	      "type",	   "eventTime",
		    "action",	      "related",	   "reportingComponent",
		    "reportingInstance"};
		for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
			const json_t *a = json_object_get(obj, fixed[i]);
			const json_t *b = json_object_get(old, fixed[i]);
			if ((a && !json_is_null(a)) != (b && !json_is_null(b)) ||
			    (a && b && !json_equal(a, b))) {
				char shown[2400];
				event_go_value(fixed[i], a, shown,
					       sizeof shown);
				srv_error_cause(
				    err, "FieldValueInvalid",
				    !strcmp(fixed[i], "reportingComponent")
					? "reportingController"
					: fixed[i],
				    "Invalid value: %s: field is immutable",
				    shown);
			}
		}
		return;
	}
	if (!ev_set(obj, "eventTime"))
		srv_error_cause(err, "FieldValueRequired", "eventTime",
				"Required value");
	const char *type = json_string_value(json_object_get(obj, "type"));
	if (!type || (strcmp(type, "Normal") && strcmp(type, "Warning")))
		srv_error_cause(err, "FieldValueInvalid", "type",
				"Invalid value: \"\": has invalid value: %.64s",
				type ? type : "");
	static const char *const unset[] = {"firstTimestamp", "lastTimestamp"};
	for (size_t i = 0; i < 2; i++)
		if (ev_set(obj, unset[i]))
			srv_error_cause(err, "FieldValueInvalid", unset[i],
					"Invalid value: \"\": needs to be unset");
	if (json_integer_value(json_object_get(obj, "count")))
		srv_error_cause(err, "FieldValueInvalid", "count",
				"Invalid value: \"\": needs to be unset");
	const json_t *src = json_object_get(obj, "source");
	if (str_len_at(src, "component") || str_len_at(src, "host"))
		srv_error_cause(err, "FieldValueInvalid", "source",
				"Invalid value: \"\": needs to be unset");
}

/* Both versions: validated on the core form, stored in its layout. */
static lp_err prep_event(const struct srv_resource *r, json_t *obj,
			 const json_t *old, struct srv_error *err)
{
	validate_event(obj, old, r->view != NULL, err);
	ev_to_core(obj);
	return finish_invalid(r, obj, err);
}

/* Strategic merge list strategies, from the types' patchStrategy tags. */
static enum srv_list_strategy smp_common(void *ud, const char *path,
					 const char **key)
{
	(void)ud;
	if (!strcmp(path, "metadata.finalizers"))
		return SRV_LIST_MERGE_SET;
	if (!strcmp(path, "metadata.ownerReferences")) {
		*key = "uid";
		return SRV_LIST_MERGE_KEYED;
	}
	if (!strcmp(path, "spec.ports")) {
		*key = "port";
		return SRV_LIST_MERGE_KEYED;
	}
	/* ServiceStatus and NamespaceStatus: patchMergeKey type */
	if (!strcmp(path, "status.conditions")) {
		*key = "type";
		return SRV_LIST_MERGE_KEYED;
	}
	/* a ServiceAccount's imagePullSecrets carry no patch strategy
	   (+listType=atomic): replaced whole */
	if (!strcmp(path, "secrets")) {
		*key = "name";
		return SRV_LIST_MERGE_KEYED;
	}
	return SRV_LIST_REPLACE;
}

/* --------------------------------------------- admissionregistration */

/* admissionregistration.k8s.io/v1 (ValidatingAdmissionPolicy and its
   bindings, Validating- and MutatingWebhookConfiguration) is served as
   storage: kube's defaults and generation, no enforcement (README). */

static enum srv_list_strategy smp_admission(void *ud, const char *path,
					    const char **key)
{
	if (!strcmp(path, "webhooks")) { /* patchMergeKey name */
		*key = "name";
		return SRV_LIST_MERGE_KEYED;
	}
	if (!strcmp(path, "metadata.finalizers") ||
	    !strcmp(path, "metadata.ownerReferences"))
		return smp_common(ud, path, key);
	return SRV_LIST_REPLACE;
}

static void set_default(json_t *o, const char *k, json_t *v)
{
	/* (a null is Go's nil pointer, defaulted as absent) */
	json_t *cur = json_object_get(o, k);
	if (json_is_object(o) && (!cur || json_is_null(cur)))
		json_object_set(o, k, v);
	json_decref(v);
}

/* SetDefaults_Rule for each of a list of rules (scope "*"). */
static void default_rules(json_t *rules)
{
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r)
	    set_default(r, "scope", json_string("*"));
}

/* SetDefaults_MatchResources (a policy's matchConstraints, a binding's
   matchResources). */
static void default_match(json_t *m)
{
	if (!json_is_object(m))
		return;
	set_default(m, "matchPolicy", json_string("Equivalent"));
	set_default(m, "namespaceSelector", json_object());
	set_default(m, "objectSelector", json_object());
	default_rules(json_object_get(m, "resourceRules"));
	default_rules(json_object_get(m, "excludeResourceRules"));
}

/* The strategies' generation: 1 on create, +1 when anything but metadata
   and status changes (the policy's spec, a configuration's webhooks). */
static void admission_generation(json_t *obj, const json_t *old)
{
	json_t *m = json_object_get(obj, "metadata");
	if (!json_is_object(m))
		return;
	json_int_t gen = 1;
	if (old) {
		gen = json_integer_value(json_object_get(
		    json_object_get(old, "metadata"), "generation"));
		const char *k;
		json_t *v;
		bool changed = false;
		json_object_foreach(obj, k, v)
		{
			if (strcmp(k, "metadata") && strcmp(k, "status") &&
			    !json_equal(v, json_object_get(old, k)))
				changed = true;
		}
		json_object_foreach((json_t *)old, k, v)
		{
			if (strcmp(k, "metadata") && strcmp(k, "status") &&
			    !json_object_get(obj, k))
				changed = true;
		}
		gen = (gen ? gen : 1) + changed;
	}
	json_object_set_new(m, "generation", json_integer(gen));
}

static lp_err prep_vap(const struct srv_resource *r, json_t *obj,
		       const json_t *old, struct srv_error *err)
{
	(void)r;
	(void)err;
	json_t *spec = json_object_get(obj, "spec");
	set_default(spec, "failurePolicy", json_string("Fail"));
	default_match(json_object_get(spec, "matchConstraints"));
	if (!old) /* PrepareForCreate: no status */
		json_object_del(obj, "status");
	admission_generation(obj, old);
	return LP_OK;
}

static lp_err prep_vapb(const struct srv_resource *r, json_t *obj,
			const json_t *old, struct srv_error *err)
{
	(void)r;
	(void)err;
	default_match(
	    json_object_get(json_object_get(obj, "spec"), "matchResources"));
	admission_generation(obj, old);
	return LP_OK;
}

/* SetDefaults_ValidatingWebhook / _MutatingWebhook. */
static lp_err prep_webhooks(const struct srv_resource *r, json_t *obj,
			    const json_t *old, struct srv_error *err)
{
	(void)err;
	bool mutating = !strcmp(r->kind, "MutatingWebhookConfiguration");
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(obj, "webhooks"), i, w)
	{
		set_default(w, "failurePolicy", json_string("Fail"));
		set_default(w, "matchPolicy", json_string("Equivalent"));
		set_default(w, "namespaceSelector", json_object());
		set_default(w, "objectSelector", json_object());
		set_default(w, "timeoutSeconds", json_integer(10));
		if (mutating)
			set_default(w, "reinvocationPolicy",
				    json_string("Never"));
		default_rules(json_object_get(w, "rules"));
		json_t *svc = json_object_get(
		    json_object_get(w, "clientConfig"), "service");
		set_default(svc, "port", json_integer(443));
	}
	admission_generation(obj, old);
	return LP_OK;
}

/* ------------------------------------------------------------- rbac */

/* rbac.authorization.k8s.io/v1 is served as storage, as the admission
   kinds are: kube's defaults and validation (pkg/apis/rbac/v1/defaults.go,
   pkg/apis/rbac/validation), nothing enforced -- the admin token has
   every right (README). */
#define RBAC_GROUP "rbac.authorization.k8s.io"

/* ValidatePolicyRule of rule i. */
static void rule_causes(const json_t *rule, size_t i, bool namespaced,
			struct srv_error *err)
{
	char f[64], v[600];
	size_t nv = json_array_size(json_object_get(rule, "verbs"));
	const json_t *urls = json_object_get(rule, "nonResourceURLs");
	size_t groups = json_array_size(json_object_get(rule, "apiGroups")),
	       resources = json_array_size(json_object_get(rule, "resources")),
	       names = json_array_size(json_object_get(rule, "resourceNames"));
	if (!nv) {
		snprintf(f, sizeof f, "rules[%zu].verbs", i);
		srv_error_cause(err, "FieldValueRequired", f,
				"Required value: verbs must contain at least "
				"one value");
	}
	if (json_array_size(urls)) {
		snprintf(f, sizeof f, "rules[%zu].nonResourceURLs", i);
		srv_go_string_list(urls, v, sizeof v);
		if (namespaced)
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %s: namespaced rules "
					"cannot apply to non-resource URLs",
					v);
		if (groups || resources || names)
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %s: rules cannot apply "
					"to both regular resources and "
					"non-resource URLs",
					v);
		return;
	}
	if (!groups) {
		snprintf(f, sizeof f, "rules[%zu].apiGroups", i);
		srv_error_cause(err, "FieldValueRequired", f,
				"Required value: resource rules must supply "
				"at least one api group");
	}
	if (!resources) {
		snprintf(f, sizeof f, "rules[%zu].resources", i);
		srv_error_cause(err, "FieldValueRequired", f,
				"Required value: resource rules must supply "
				"at least one resource");
	}
}

/* Role and ClusterRole: ValidateRole / ValidateClusterRole (an
   aggregationRule's selectors are not checked further: README). Rules
   have no omitempty, so none is null. */
static lp_err prep_role(const struct srv_resource *r, json_t *obj,
			const json_t *old, struct srv_error *err)
{
	(void)old;
	bool namespaced = r->namespaced;
	json_t *rules = json_object_get(obj, "rules");
	if (!rules)
		json_object_set_new(obj, "rules", json_null());
	size_t i;
	json_t *rule;
	json_array_foreach(rules, i, rule)
	    rule_causes(rule, i, namespaced, err);
	const json_t *ag = json_object_get(obj, "aggregationRule");
	if (!namespaced && json_is_object(ag) &&
	    !json_array_size(json_object_get(ag, "clusterRoleSelectors")))
		srv_error_cause(err, "FieldValueRequired",
				"aggregationRule.clusterRoleSelectors",
				"Required value: at least one "
				"clusterRoleSelector required if "
				"aggregationRule is non-nil");
	return LP_OK;
}

/* ValidateRoleBindingSubject of subject i (after SetDefaults_Subject). */
static void subject_causes(json_t *s, size_t i, bool namespaced,
			   struct srv_error *err)
{
	static const char *const kinds[] = {"ServiceAccount", "User", "Group",
					    NULL};
	static const char *const rbac_group[] = {RBAC_GROUP, NULL};
	static const char *const no_group[] = {"", NULL};
	char fname[64], fgroup[64], fns[64], fkind[64];
	snprintf(fname, sizeof fname, "subjects[%zu].name", i);
	snprintf(fgroup, sizeof fgroup, "subjects[%zu].apiGroup", i);
	snprintf(fns, sizeof fns, "subjects[%zu].namespace", i);
	snprintf(fkind, sizeof fkind, "subjects[%zu].kind", i);
	const char *kind = json_string_value(json_object_get(s, "kind"));
	const char *name = json_string_value(json_object_get(s, "name"));
	const char *group = json_string_value(json_object_get(s, "apiGroup"));
	kind = kind ? kind : "";
	name = name ? name : "";
	bool user_or_group = !strcmp(kind, "User") || !strcmp(kind, "Group");
	if ((!group || !*group) && user_or_group)
		json_object_set_new(s, "apiGroup", json_string(RBAC_GROUP));
	const json_t *g = json_object_get(s, "apiGroup");
	group = json_string_value(g);
	if (!*name)
		srv_error_cause(err, "FieldValueRequired", fname,
				"Required value");
	if (!strcmp(kind, "ServiceAccount")) {
		if (*name)
			srv_name_causes(err, fname, SRV_RULE_DNS_SUBDOMAIN,
					name);
		if (group && *group)
			enum_cause_set(fgroup, g, no_group, err);
		const char *ns =
		    json_string_value(json_object_get(s, "namespace"));
		if (!namespaced && (!ns || !*ns))
			srv_error_cause(err, "FieldValueRequired", fns,
					"Required value");
	} else if (user_or_group) {
		enum_cause_set(fgroup, g, rbac_group, err);
	} else {
		enum_cause_set(fkind, json_object_get(s, "kind"), kinds, err);
	}
}

/* RoleBinding and ClusterRoleBinding: SetDefaults_*, Validate*Binding and
   the update's immutable roleRef. */
static lp_err prep_binding(const struct srv_resource *r, json_t *obj,
			   const json_t *old, struct srv_error *err)
{
	static const char *const rbac_group[] = {RBAC_GROUP, NULL};
	static const char *const rb_kinds[] = {"Role", "ClusterRole", NULL};
	static const char *const crb_kinds[] = {"ClusterRole", NULL};
	bool namespaced = r->namespaced;
	json_t *ref = json_object_get(obj, "roleRef");
	if (!json_is_object(ref)) {
		/* a value field: Go's zero RoleRef */
		ref = json_pack("{s:s,s:s,s:s}", "apiGroup", "", "kind", "",
				"name", "");
		json_object_set_new(obj, "roleRef", ref);
	}
	const char *g = json_string_value(json_object_get(ref, "apiGroup"));
	if (!g || !*g)
		json_object_set_new(ref, "apiGroup", json_string(RBAC_GROUP));
	enum_cause_set("roleRef.apiGroup", json_object_get(ref, "apiGroup"),
		       rbac_group, err);
	json_t *k = json_object_get(ref, "kind");
	json_t *kv = json_is_string(k) ? json_incref(k) : json_string("");
	enum_cause_set("roleRef.kind", kv, namespaced ? rb_kinds : crb_kinds,
		       err);
	json_decref(kv);
	const char *name = json_string_value(json_object_get(ref, "name"));
	if (!name || !*name)
		srv_error_cause(err, "FieldValueRequired", "roleRef.name",
				"Required value");
	else
		srv_path_segment_causes(err, "roleRef.name", name);
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(obj, "subjects"), i, s)
	    subject_causes(s, i, namespaced, err);
	const json_t *oref = old ? json_object_get(old, "roleRef") : NULL;
	if (oref && !json_equal((json_t *)oref, ref)) {
		char a[300], b[300], c[300];
		const char *ak =
		    json_string_value(json_object_get(ref, "kind"));
		const char *an =
		    json_string_value(json_object_get(ref, "name"));
		srv_go_quote(
		    json_string_value(json_object_get(ref, "apiGroup")), a,
		    sizeof a);
		srv_go_quote(ak ? ak : "", b, sizeof b);
		srv_go_quote(an ? an : "", c, sizeof c);
		srv_error_cause(err, "FieldValueInvalid", "roleRef",
				"Invalid value: rbac.RoleRef{APIGroup:%s, "
				"Kind:%s, Name:%s}: cannot change roleRef",
				a, b, c);
	}
	return LP_OK;
}

/* ------------------------------------------------------------ columns */

json_t *srv_age_cell(const json_t *obj); /* table.c */

static const char *str_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

static json_t *c_name(const json_t *o)
{
	const char *s = str_at(o, "metadata", "name");
	return json_string(s ? s : "");
}

static json_t *c_phase(const json_t *o)
{
	const char *s = str_at(o, "status", "phase");
	return json_string(s ? s : "");
}

static json_t *c_data_count(const json_t *o)
{
	return json_integer((json_int_t)(json_object_size(json_object_get(o, "data")) +
					 json_object_size(json_object_get(o, "binaryData"))));
}

static json_t *c_type(const json_t *o)
{
	const char *s = json_string_value(json_object_get(o, "type"));
	return json_string(s ? s : "");
}

static json_t *c_svc_type(const json_t *o)
{
	const char *s = str_at(o, "spec", "type");
	return json_string(s ? s : "");
}

static json_t *c_cluster_ip(const json_t *o)
{
	const char *s = str_at(o, "spec", "clusterIP");
	return json_string(s && *s ? s : "<none>");
}

/* Strings of a JSON array joined by ",", appended at buf+at. */
static size_t join_strings(const json_t *a, const char *member, char *buf,
			   size_t n, size_t at)
{
	size_t i;
	const json_t *v;
	json_array_foreach((json_t *)a, i, v)
	{
		const char *s = member ? json_string_value(json_object_get(v, member))
				       : json_string_value(v);
		if (member && (!s || !*s))
			s = json_string_value(json_object_get(v, "hostname"));
		if (!s || at >= n)
			continue;
		at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "," : "", s);
	}
	return at;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* kube's EXTERNAL-IP (getServiceExternalIP; the server's tables are always
   wide, so nothing is cut): externalIPs; a LoadBalancer's ingress
   addresses first (each its ip, else its hostname; sorted and without
   repeats, as loadBalancerStatusStringer's set lists them) or <pending>;
   an ExternalName's name. */
static json_t *c_external_ip(const json_t *o)
{
	const json_t *spec = json_object_get(o, "spec");
	const char *type = json_string_value(json_object_get(spec, "type"));
	const json_t *ips = json_object_get(spec, "externalIPs");
	char buf[1024] = "";
	if (type && !strcmp(type, "ExternalName")) {
		const char *en = json_string_value(json_object_get(spec, "externalName"));
		return json_string(en ? en : "");
	}
	size_t at = 0;
	if (type && !strcmp(type, "LoadBalancer")) {
		const json_t *ing = json_object_get(
		    json_object_get(json_object_get(o, "status"), "loadBalancer"),
		    "ingress");
		size_t n = 0, cap = json_array_size(ing), i;
		const char **v = calloc(cap ? cap : 1, sizeof *v);
		if (!v)
			return json_string("");
		json_t *e;
		json_array_foreach((json_t *)ing, i, e)
		{
			const char *a =
			    json_string_value(json_object_get(e, "ip"));
			if (!a || !*a)
				a = json_string_value(
				    json_object_get(e, "hostname"));
			if (a && *a)
				v[n++] = a;
		}
		qsort(v, n, sizeof *v, cmp_cstr);
		for (i = 0; i < n && at < sizeof buf; i++)
			if (!i || strcmp(v[i], v[i - 1]))
				at += (size_t)snprintf(buf + at,
						       sizeof buf - at, "%s%s",
						       at ? "," : "", v[i]);
		free(v);
		if (!at && !json_array_size(ips))
			return json_string("<pending>");
	}
	at = join_strings(ips, NULL, buf, sizeof buf, at);
	return json_string(at ? buf : "<none>");
}

static json_t *c_ports(const json_t *o)
{
	const json_t *ports = json_object_get(json_object_get(o, "spec"), "ports");
	if (!json_array_size(ports))
		return json_string("<none>");
	char buf[512] = "";
	size_t i, off = 0;
	json_t *p;
	json_array_foreach((json_t *)ports, i, p)
	{
		const char *proto = json_string_value(json_object_get(p, "protocol"));
		json_int_t port = json_integer_value(json_object_get(p, "port"));
		json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
		if (off >= sizeof buf)
			break;
		if (np)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%lld:%lld/%s",
						i ? "," : "", (long long)port, (long long)np,
						proto ? proto : "TCP");
		else
			off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%lld/%s",
						i ? "," : "", (long long)port, proto ? proto : "TCP");
	}
	return json_string(buf);
}

/* kube's SELECTOR (labels.FormatLabels): key=value by key, comma-separated,
   whole. */
static json_t *c_selector(const json_t *o)
{
	const json_t *sel = json_object_get(json_object_get(o, "spec"), "selector");
	size_t n = json_object_size(sel);
	if (!n)
		return json_string("<none>");
	const char **keys = malloc(n * sizeof *keys);
	if (!keys)
		return NULL;
	size_t i = 0, len = 1;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)sel, k, v)
	{
		keys[i++] = k;
		len += strlen(k) + 2 +
		       (json_string_value(v) ? json_string_length(v) : 0);
	}
	qsort(keys, n, sizeof *keys, cmp_str);
	char *buf = malloc(len);
	size_t off = 0;
	for (i = 0; buf && i < n; i++) {
		const char *val =
		    json_string_value(json_object_get(sel, keys[i]));
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%s",
					i ? "," : "", keys[i], val ? val : "");
	}
	json_t *out = buf ? json_stringn(buf, off) : NULL;
	free(buf);
	free(keys);
	return out;
}

/* kube's ENDPOINTS (formatEndpoints): ip:port for every address and port
   (ips alone for a subset without ports), at most 3, then "+ N more...";
   <none> without subsets. */
static json_t *c_endpoints(const json_t *o)
{
	const json_t *subsets = json_object_get(o, "subsets");
	if (!json_array_size(subsets))
		return json_string("<none>");
	char buf[512] = "";
	size_t off = 0, i, j, k, shown = 0, count = 0;
	json_t *s, *a, *p;
	json_array_foreach((json_t *)subsets, i, s)
	{
		const json_t *addrs = json_object_get(s, "addresses");
		const json_t *ports = json_object_get(s, "ports");
		size_t np = json_array_size(ports);
		for (k = 0; k < (np ? np : 1); k++) {
			p = json_array_get(ports, k);
			json_array_foreach(addrs, j, a)
			{
				count++;
				if (shown == 3 || off >= sizeof buf)
					continue;
				const char *ip = json_string_value(json_object_get(a, "ip"));
				ip = ip ? ip : "";
				bool v6 = strchr(ip, ':') != NULL;
				if (np)
					off += (size_t)snprintf(
					    buf + off, sizeof buf - off, "%s%s%s%s:%lld",
					    shown ? "," : "", v6 ? "[" : "", ip,
					    v6 ? "]" : "",
					    (long long)json_integer_value(
						json_object_get(p, "port")));
				else
					off += (size_t)snprintf(buf + off,
								sizeof buf - off,
								"%s%s", shown ? "," : "",
								ip);
				shown++;
			}
		}
	}
	if (count > 3 && off < sizeof buf)
		snprintf(buf + off, sizeof buf - off, " + %zu more...", count - 3);
	return json_string(buf);
}

static json_t *c_secret_count(const json_t *o)
{
	return json_integer((json_int_t)json_array_size(json_object_get(o, "secrets")));
}

static json_t *c_holder(const json_t *o)
{
	const char *s = str_at(o, "spec", "holderIdentity");
	return json_string(s ? s : "");
}

/* printRoleBinding / printClusterRoleBinding: "<kind>/<name>", and the
   subjects of each kind (rbac.SubjectsStrings) joined by ", ". */
static json_t *c_role_ref(const json_t *o)
{
	const char *k = str_at(o, "roleRef", "kind");
	const char *n = str_at(o, "roleRef", "name");
	char b[600];
	snprintf(b, sizeof b, "%s/%s", k ? k : "", n ? n : "");
	return json_string(b);
}

static json_t *subjects_of(const json_t *o, const char *kind)
{
	char b[2048];
	size_t at = 0, i;
	b[0] = '\0';
	json_t *s;
	json_array_foreach(json_object_get(o, "subjects"), i, s)
	{
		const char *k = json_string_value(json_object_get(s, "kind"));
		if (!k || strcmp(k, kind) || at >= sizeof b)
			continue;
		const char *n = json_string_value(json_object_get(s, "name"));
		const char *ns =
		    json_string_value(json_object_get(s, "namespace"));
		if (!strcmp(kind, "ServiceAccount"))
			at += (size_t)snprintf(b + at, sizeof b - at, "%s%s/%s",
					       at ? ", " : "", ns ? ns : "",
					       n ? n : "");
		else
			at += (size_t)snprintf(b + at, sizeof b - at, "%s%s",
					       at ? ", " : "", n ? n : "");
	}
	return json_string(b);
}

static json_t *c_rb_users(const json_t *o)
{
	return subjects_of(o, "User");
}

static json_t *c_rb_groups(const json_t *o)
{
	return subjects_of(o, "Group");
}

static json_t *c_rb_sas(const json_t *o)
{
	return subjects_of(o, "ServiceAccount");
}

static json_t *c_ev_type(const json_t *o)
{
	const char *s = json_string_value(json_object_get(o, "type"));
	return json_string(s ? s : "");
}

static json_t *c_ev_reason(const json_t *o)
{
	const char *s = json_string_value(json_object_get(o, "reason"));
	return json_string(s ? s : "");
}

/* A member of either form of an Event (core name, events.k8s.io name). */
static const json_t *ev_get(const json_t *o, const char *core)
{
	const json_t *v = json_object_get(o, core);
	for (size_t i = 0; !v && i < EV_N_RENAMED; i++)
		if (!strcmp(ev_renamed[i][0], core))
			v = json_object_get(o, ev_renamed[i][1]);
	return v;
}

static json_t *c_ev_object(const json_t *o)
{
	const json_t *io = ev_get(o, "involvedObject");
	const char *k = json_string_value(json_object_get(io, "kind"));
	const char *n = json_string_value(json_object_get(io, "name"));
	char buf[600];
	char lower[64];
	size_t i = 0;
	for (; k && k[i] && i < sizeof lower - 1; i++)
		lower[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
	lower[i] = 0;
	if (n && *n)
		snprintf(buf, sizeof buf, "%s/%s", lower, n);
	else
		snprintf(buf, sizeof buf, "%s", lower);
	return json_string(buf);
}

/* The length of the white space (Go's unicode.IsSpace) UTF-8 character at
   p, which has n bytes; 0 when it is none. */
static size_t go_space_at(const unsigned char *p, size_t n)
{
	if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		return 1;
	if (n >= 2 && *p == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
		return 2;
	if (n < 3)
		return 0;
	unsigned cp = ((unsigned)(p[0] & 0x0f) << 12) |
		      ((unsigned)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
	bool three = (p[0] & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 &&
		     (p[2] & 0xc0) == 0x80;
	return three && (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
			 cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
			 cp == 0x205f || cp == 0x3000)
		   ? 3
		   : 0;
}

/* printEvent's message, strings.TrimSpace'd. */
static json_t *c_ev_message(const json_t *o)
{
	const json_t *m = ev_get(o, "message");
	const unsigned char *s = (const unsigned char *)json_string_value(m);
	size_t n = s ? json_string_length(m) : 0, w;
	while (n && (w = go_space_at(s, n))) {
		s += w;
		n -= w;
	}
	for (bool cut = true; n && cut;) {
		cut = false;
		for (size_t k = 1; k <= 3 && k <= n; k++)
			if (go_space_at(s + n - k, k) == k) {
				n -= k;
				cut = true;
				break;
			}
	}
	return json_stringn(n ? (const char *)s : "", n);
}

/* The age cell of a timestamp (a MicroTime cut to its seconds). */
static json_t *ts_age(const char *ts)
{
	char sec[21];
	if (strlen(ts) > 20 && ts[19] == '.') {
		snprintf(sec, sizeof sec, "%.19sZ", ts);
		ts = sec;
	}
	json_t *fake = json_pack("{s:{s:s}}", "metadata", "creationTimestamp", ts);
	json_t *v = srv_age_cell(fake);
	json_decref(fake);
	return v;
}

/* kube's printEvent: firstTimestamp, else eventTime */
static json_t *c_ev_first_seen(const json_t *o)
{
	const char *ts = json_string_value(ev_get(o, "firstTimestamp"));
	if (!ts)
		ts = json_string_value(json_object_get(o, "eventTime"));
	return ts ? ts_age(ts) : json_string("<unknown>");
}

static json_t *c_ev_last_seen(const json_t *o)
{
	/* the series' last observation, else lastTimestamp, else the first
	   seen cell */
	const char *ts = json_string_value(json_object_get(
	    json_object_get(o, "series"), "lastObservedTime"));
	if (!ts)
		ts = json_string_value(ev_get(o, "lastTimestamp"));
	return ts ? ts_age(ts) : c_ev_first_seen(o);
}

static json_t *c_ev_subobject(const json_t *o)
{
	const char *s = json_string_value(
	    json_object_get(ev_get(o, "involvedObject"), "fieldPath"));
	return json_string(s ? s : "");
}

/* formatEventSource: the source's component (else the reporting
   controller), then ", " and its host (else the reporting instance) */
static json_t *c_ev_source(const json_t *o)
{
	const json_t *src = ev_get(o, "source");
	const char *c = json_string_value(json_object_get(src, "component"));
	const char *h = json_string_value(json_object_get(src, "host"));
	if (!c || !*c)
		c = json_string_value(ev_get(o, "reportingComponent"));
	if (!h || !*h)
		h = json_string_value(json_object_get(o, "reportingInstance"));
	char buf[600];
	if (h && *h)
		snprintf(buf, sizeof buf, "%.290s, %.290s", c ? c : "", h);
	else
		snprintf(buf, sizeof buf, "%.290s", c ? c : "");
	return json_string(buf);
}

/* the series' count, else count (0 for a singleton of the new API: 1) */
static json_t *c_ev_count(const json_t *o)
{
	const json_t *series = json_object_get(o, "series");
	json_int_t n = json_integer_value(
	    series ? json_object_get(series, "count") : ev_get(o, "count"));
	return json_integer(!series && n == 0 ? 1 : n);
}

static json_t *c_webhook_count(const json_t *o)
{
	return json_integer(
	    (json_int_t)json_array_size(json_object_get(o, "webhooks")));
}

static json_t *c_validation_count(const json_t *o)
{
	return json_integer((json_int_t)json_array_size(
	    json_object_get(json_object_get(o, "spec"), "validations")));
}

/* kube's printValidatingAdmissionPolicy: "<apiVersion>/<kind>" */
static json_t *c_param_kind(const json_t *o)
{
	const json_t *pk =
	    json_object_get(json_object_get(o, "spec"), "paramKind");
	if (!json_is_object(pk))
		return json_string("<unset>");
	const char *v = json_string_value(json_object_get(pk, "apiVersion"));
	const char *k = json_string_value(json_object_get(pk, "kind"));
	char buf[600];
	snprintf(buf, sizeof buf, "%.290s/%.290s", v ? v : "", k ? k : "");
	return json_string(buf);
}

static json_t *c_policy_name(const json_t *o)
{
	const char *s = str_at(json_object_get(o, "spec"), "policyName", NULL);
	return json_string(s ? s : "");
}

/* Go's %v of a JSON list of strings: "[a b]" */
static void go_strings(FILE *f, const json_t *a)
{
	size_t i;
	const json_t *v;
	fputc('[', f);
	json_array_foreach(a, i, v)
	{
		const char *s = json_string_value(v);
		fprintf(f, "%s%s", i ? " " : "", s ? s : "");
	}
	fputc(']', f);
}

/* A LabelSelector's generated String() (gogo protobuf), as kube's
   printValidatingAdmissionPolicyBinding prints a paramRef selector:
   "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:
   []LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,
   Values:[x y],},},}" (labels by key). */
static void go_label_selector(FILE *f, const json_t *sel)
{
	const json_t *ml = json_object_get(sel, "matchLabels");
	size_t n = json_object_size(ml), k = 0, i;
	const char **keys = n ? malloc(n * sizeof *keys) : NULL;
	const char *key;
	const json_t *v;
	if (keys) {
		json_object_foreach((json_t *)ml, key, v) keys[k++] = key;
		qsort(keys, k, sizeof *keys, cmp_str);
	}
	fputs("&LabelSelector{MatchLabels:map[string]string{", f);
	for (i = 0; i < k; i++) {
		const char *s = json_string_value(json_object_get(ml, keys[i]));
		fprintf(f, "%s: %s,", keys[i], s ? s : "");
	}
	free(keys);
	fputs("},MatchExpressions:[]LabelSelectorRequirement{", f);
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, v)
	{
		const char *rk = str_at(v, "key", NULL);
		const char *op = str_at(v, "operator", NULL);
		fprintf(f,
			"LabelSelectorRequirement{Key:%s,Operator:%s,Values:",
			rk ? rk : "", op ? op : "");
		go_strings(f, json_object_get(v, "values"));
		fputs(",},", f);
	}
	fputs("},}", f);
}

/* kube's printValidatingAdmissionPolicyBinding: "<ns>/<name>", "*" for
   the namespace when it has none, else the selector, else "<unset>" */
static json_t *c_param_ref(const json_t *o)
{
	const json_t *pr =
	    json_object_get(json_object_get(o, "spec"), "paramRef");
	const char *name = str_at(pr, "name", NULL);
	const char *ns = str_at(pr, "namespace", NULL);
	const json_t *sel = json_object_get(pr, "selector");
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);
	if (!f)
		return NULL;
	if (name && *name)
		fprintf(f, "%s/%s", ns && *ns ? ns : "*", name);
	else if (json_is_object(sel))
		go_label_selector(f, sel);
	else
		fputs("<unset>", f);
	json_t *cell = fclose(f) == 0 && p ? json_string(p) : NULL;
	free(p);
	return cell;
}

/* kube's printers (pkg/printers/internalversion) type Age a string */
#define NAME_COL {"Name", "string", "name", SRV_DESC_NAME, 0, c_name}
#define AGE_COL {"Age", "string", "", SRV_DESC_CREATED, 0, srv_age_cell}
#define END_COL {NULL, NULL, NULL, NULL, 0, NULL}

static const struct srv_column col_ns[] = {
	NAME_COL, {"Status", "string", "", "The status of the namespace", 0, c_phase},
	AGE_COL, END_COL};
static const struct srv_column col_cm[] = {
	NAME_COL, {"Data", "string", "",
	 "Data contains the configuration data. Each key must consist of "
	 "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte "
	 "sequences must use the BinaryData field. The keys stored in Data must "
	 "not overlap with the keys in the BinaryData field, this is enforced "
	 "during validation process.",
	 0, c_data_count},
	AGE_COL, END_COL};
static const struct srv_column col_secret[] = {
	NAME_COL, {"Type", "string", "", "The type of the secret", 0, c_type},
	{"Data", "string", "", "Number of data in secret", 0, c_data_count},
	AGE_COL, END_COL};
static const struct srv_column col_svc[] = {
	NAME_COL,
	{"Type", "string", "", "The type of the service", 0, c_svc_type},
	{"Cluster-IP", "string", "", "The cluster IP of the service", 0, c_cluster_ip},
	{"External-IP", "string", "", "The external IP of the service", 0, c_external_ip},
	{"Port(s)", "string", "", "The ports of the service", 0, c_ports},
	AGE_COL,
	{"Selector", "string", "", "The selector of the service", 1, c_selector},
	END_COL};
static const struct srv_column col_ep[] = {
	NAME_COL, {"Endpoints", "string", "", "Endpoints", 0, c_endpoints},
	AGE_COL, END_COL};
static const struct srv_column col_sa[] = {
	NAME_COL, {"Secrets", "string", "", "Number of secrets", 0, c_secret_count},
	AGE_COL, END_COL};
static const struct srv_column col_lease[] = {
	NAME_COL, {"Holder", "string", "", "The holder of the lease", 0, c_holder},
	AGE_COL, END_COL};
#define BINDING_COLS(what, ref_desc)                                             \
	NAME_COL, {"Role", "string", "", ref_desc, 0, c_role_ref}, AGE_COL,      \
	    {"Users", "string", "", "Users in the " what, 1, c_rb_users},        \
	    {"Groups", "string", "", "Groups in the " what, 1, c_rb_groups},     \
	    {"ServiceAccounts", "string", "", "ServiceAccounts in the " what, 1, \
	     c_rb_sas},                                                          \
	    END_COL
static const struct srv_column col_rb[] = {BINDING_COLS(
    "roleBinding", "RoleRef can reference a Role in the current namespace or a "
		   "ClusterRole in the global namespace. If the RoleRef cannot "
		   "be resolved, the Authorizer must return an error.")};
static const struct srv_column col_crb[] = {
    BINDING_COLS("clusterRoleBinding",
		 "RoleRef can only reference a ClusterRole in the global "
		 "namespace. If the RoleRef cannot be resolved, the "
		 "Authorizer must return an error.")};
#undef BINDING_COLS
/* kube's columns of the admissionregistration kinds */
static const struct srv_column col_webhooks[] = {
    NAME_COL,
    {"Webhooks", "integer", "",
     "Webhooks indicates the number of webhooks registered in this "
     "configuration",
     0, c_webhook_count},
    AGE_COL,
    END_COL};
static const struct srv_column col_vap[] = {
    NAME_COL,
    {"Validations", "integer", "",
     "Validations indicates the number of validation rules defined in "
     "this configuration",
     0, c_validation_count},
    {"ParamKind", "string", "",
     "ParamKind specifies the kind of resources used to parameterize this "
     "policy",
     0, c_param_kind},
    AGE_COL,
    END_COL};
static const struct srv_column col_vapb[] = {
    NAME_COL,
    {"PolicyName", "string", "",
     "PolicyName indicates the policy definition which the policy binding "
     "binded to",
     0, c_policy_name},
    {"ParamRef", "string", "",
     "ParamRef indicates the param resource which sets the configration "
     "param",
     0, c_param_ref},
    AGE_COL,
    END_COL};
/* kube's eventColumnDefinitions: the priority 1 ones show with -o wide */
static const struct srv_column col_event[] = {
	{"Last Seen", "string", "", "Time since the last occurrence", 0, c_ev_last_seen},
	{"Type", "string", "", "Type of the event", 0, c_ev_type},
	{"Reason", "string", "", "Reason of the event", 0, c_ev_reason},
	{"Object", "string", "", "The object of the event", 0, c_ev_object},
	{"Subobject", "string", "", "The field of the object the event is about", 1, c_ev_subobject},
	{"Source", "string", "", "The component reporting the event", 1, c_ev_source},
	{"Message", "string", "", "The message of the event", 0, c_ev_message},
	{"First Seen", "string", "", "Time since the first occurrence", 1, c_ev_first_seen},
	{"Count", "string", "", "The number of times the event occurred", 1, c_ev_count},
	{"Name", "string", "name", SRV_DESC_NAME, 1, c_name},
	END_COL};

/* ------------------------------------------------------------ table */

static const char *const sn_ns[] = {"ns", NULL};
static const char *const sn_cm[] = {"cm", NULL};
static const char *const sn_svc[] = {"svc", NULL};
static const char *const sn_ep[] = {"ep", NULL};
static const char *const sn_ev[] = {"ev", NULL};
static const char *const sn_sa[] = {"sa", NULL};
static const char *const cat_all[] = {"all", NULL};
static const char *const sn_crd[] = {"crd", "crds", NULL};
static const char *const cat_ext[] = {"api-extensions", NULL};
static const char *const sub_ns[] = {"status", "finalize", NULL};
static const char *const sub_sa[] = {"token", NULL};

static const struct srv_resource token_request = {
	.group = "authentication.k8s.io", .version = "v1",
	.resource = "serviceaccounts", .kind = "TokenRequest",
	.list_kind = "TokenRequestList", .singular = "", .namespaced = true,
	.verbs = SRV_V_CREATE, .prepare = prep_none};

unsigned srv_subresource_verbs(const char *sub)
{
	if (!strcmp(sub, "finalize"))
		return SRV_V_UPDATE;
	if (!strcmp(sub, "token"))
		return SRV_V_CREATE;
	return SRV_V_GET | SRV_V_PATCH | SRV_V_UPDATE;
}

/* What a custom resource's /scale serves: autoscaling/v1 Scale, as kube's
   discovery names it. */
static const struct srv_resource scale_type = {
	.group = "autoscaling", .version = "v1", .resource = "",
	.kind = "Scale", .list_kind = "", .singular = "", .namespaced = true,
	.verbs = SRV_V_GET | SRV_V_PATCH | SRV_V_UPDATE, .prepare = prep_none};

const struct srv_resource *srv_subresource_type(const char *sub)
{
	if (!strcmp(sub, "token"))
		return &token_request;
	return !strcmp(sub, "scale") ? &scale_type : NULL;
}
static const char *const sub_status[] = {"status", NULL};
static const char *const f_secret[] = {"type", NULL};
static const char *const f_event[] = {
	"involvedObject.kind",	    "involvedObject.namespace",
	"involvedObject.name",	    "involvedObject.uid",
	"involvedObject.apiVersion", "involvedObject.resourceVersion",
	"involvedObject.fieldPath", "reason",
	"reportingComponent",	    "source=source.component|reportingComponent",
	"type",			    NULL};
/* events.k8s.io/v1's labels, read from the stored core form (kube's
   selectable fields of the events group); source, as core's, falls back to
   the reporting controller */
static const char *const f_event_v1[] = {
	"regarding.kind=involvedObject.kind",
	"regarding.namespace=involvedObject.namespace",
	"regarding.name=involvedObject.name",
	"regarding.uid=involvedObject.uid",
	"regarding.apiVersion=involvedObject.apiVersion",
	"regarding.resourceVersion=involvedObject.resourceVersion",
	"regarding.fieldPath=involvedObject.fieldPath",
	"reason",
	"reportingController=reportingComponent",
	"source=source.component|reportingComponent",
	"type",
	NULL};
static const char *const f_ns[] = {"status.phase", NULL};
static const char *const f_svc[] = {"spec.clusterIP", "spec.type", NULL};

#define CORE(res, kind_, sing, ns_, verbs_, ...)                              \
	{.group = "", .version = "v1", .resource = res, .kind = kind_,        \
	 .list_kind = kind_ "List", .singular = sing, .namespaced = ns_,      \
	 .verbs = verbs_, .unconditional_update = true,                       \
	 .smp_list = smp_common, __VA_ARGS__}

#define REVIEW(group_, res, kind_, sing, ns_)                               \
	{.group = group_, .version = "v1", .resource = res, .kind = kind_,    \
	 .list_kind = kind_ "List", .singular = sing, .namespaced = ns_,      \
	 .verbs = SRV_V_CREATE, .prepare = prep_none, .review = true}

const struct srv_resource srv_builtin[] = {
    CORE("namespaces", "Namespace", "namespace", false,
	 SRV_V_ALL & ~SRV_V_DELETECOLLECTION, .short_names = sn_ns,
	 .subresources = sub_ns, .columns = col_ns, .return_deleted = true,
	 .fields = f_ns, .prepare = prep_namespace,
	 .prepare_status = prep_namespace_status),
    CORE("configmaps", "ConfigMap", "configmap", true, SRV_V_ALL,
	 .short_names = sn_cm, .columns = col_cm, .prepare = prep_configmap),
    CORE("secrets", "Secret", "secret", true, SRV_V_ALL, .fields = f_secret,
	 .columns = col_secret, .prepare = prep_secret),
    CORE("services", "Service", "service", true, SRV_V_ALL,
	 .short_names = sn_svc, .categories = cat_all,
	 .subresources = sub_status, .columns = col_svc, .fields = f_svc,
	 .prepare = prep_service, .prepare_status = prep_service_status,
	 .warnings = service_warnings, .create_on_update = true,
	 .return_deleted = true),
    CORE("endpoints", "Endpoints", "endpoints", true, SRV_V_ALL,
	 .short_names = sn_ep, .columns = col_ep, .prepare = prep_endpoints,
	 .warnings = endpoints_warnings, .create_on_update = true,
	 .warning = "v1 Endpoints is deprecated in v1.33+; use "
		    "discovery.k8s.io/v1 EndpointSlice"),
    CORE("events", "Event", "event", true, SRV_V_ALL, .short_names = sn_ev,
	 .columns = col_event, .fields = f_event, .prepare = prep_event,
	 .create_on_update = true),
    CORE("serviceaccounts", "ServiceAccount", "serviceaccount", true, SRV_V_ALL,
	 .short_names = sn_sa, .columns = col_sa, .subresources = sub_sa,
	 .prepare = prep_serviceaccount, .warnings = sa_warnings,
	 .return_deleted = true),
    {.group = "events.k8s.io",
     .version = "v1",
     .resource = "events",
     .kind = "Event",
     .list_kind = "EventList",
     .singular = "event",
     .short_names = sn_ev,
     .namespaced = true,
     .verbs = SRV_V_ALL,
     .unconditional_update = true,
     .smp_list = smp_common,
     .columns = col_event,
     .fields = f_event_v1,
     .prepare = prep_event,
     .view = &view_core_events,
     .create_on_update = true},
    REVIEW("authentication.k8s.io", "tokenreviews", "TokenReview",
	   "tokenreview", false),
    REVIEW("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview",
	   "selfsubjectreview", false),
    REVIEW("authorization.k8s.io", "localsubjectaccessreviews",
	   "LocalSubjectAccessReview", "localsubjectaccessreview", true),
    REVIEW("authorization.k8s.io", "selfsubjectaccessreviews",
	   "SelfSubjectAccessReview", "selfsubjectaccessreview", false),
    REVIEW("authorization.k8s.io", "selfsubjectrulesreviews",
	   "SelfSubjectRulesReview", "selfsubjectrulesreview", false),
    REVIEW("authorization.k8s.io", "subjectaccessreviews",
	   "SubjectAccessReview", "subjectaccessreview", false),
    {.group = "apiextensions.k8s.io",
     .version = "v1",
     .resource = "customresourcedefinitions",
     .kind = "CustomResourceDefinition",
     .list_kind = "CustomResourceDefinitionList",
     .singular = "customresourcedefinition",
     .short_names = sn_crd,
     .categories = cat_ext,
     .namespaced = false,
     .verbs = SRV_V_ALL,
     .subresources = sub_status,
     .unconditional_update = false,
     .prepare = srv_prep_crd,
     .prepare_status = srv_prep_crd_status,
     .after_write = srv_crd_after_write,
     .before_delete = srv_crd_before_delete}, /* the default table */
#define ADMISSION(res, k, sing, sub, prep, cols)                               \
	{                                                                      \
		.group = "admissionregistration.k8s.io", .version = "v1",      \
		.resource = res, .kind = k, .list_kind = k "List",             \
		.singular = sing, .categories = cat_ext, .namespaced = false,  \
		.verbs = SRV_V_ALL, .subresources = sub, .columns = cols,      \
		.unconditional_update = false, .smp_list = smp_admission,      \
		.prepare = prep                                                \
	}
    ADMISSION("mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
	      "mutatingwebhookconfiguration", NULL, prep_webhooks,
	      col_webhooks),
    ADMISSION("validatingadmissionpolicies", "ValidatingAdmissionPolicy",
	      "validatingadmissionpolicy", sub_status, prep_vap, col_vap),
    ADMISSION("validatingadmissionpolicybindings",
	      "ValidatingAdmissionPolicyBinding",
	      "validatingadmissionpolicybinding", NULL, prep_vapb, col_vapb),
    ADMISSION(
	"validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
	"validatingwebhookconfiguration", NULL, prep_webhooks, col_webhooks),
#undef ADMISSION
#define RBAC(res, k, sing, ns, prep, cols)                                     \
	{                                                                      \
		.group = RBAC_GROUP, .version = "v1", .resource = res,         \
		.kind = k, .list_kind = k "List", .singular = sing,            \
		.namespaced = ns, .verbs = SRV_V_ALL, .columns = cols,         \
		.unconditional_update = true, .create_on_update = true,        \
		.smp_list = smp_common, .prepare = prep                        \
	}
    RBAC("clusterrolebindings", "ClusterRoleBinding", "clusterrolebinding",
	 false, prep_binding, col_crb),
    RBAC("clusterroles", "ClusterRole", "clusterrole", false, prep_role, NULL),
    RBAC("rolebindings", "RoleBinding", "rolebinding", true, prep_binding,
	 col_rb),
    RBAC("roles", "Role", "role", true, prep_role, NULL),
#undef RBAC
    {.group = "coordination.k8s.io",
     .version = "v1",
     .resource = "leases",
     .kind = "Lease",
     .list_kind = "LeaseList",
     .singular = "lease",
     .namespaced = true,
     .verbs = SRV_V_ALL,
     .unconditional_update = false,
     .smp_list = smp_common,
     .columns = col_lease,
     .prepare = prep_lease,
     .create_on_update = true},
};

const size_t srv_n_builtin = sizeof srv_builtin / sizeof srv_builtin[0];

const struct srv_resource *srv_resource_find(const char *group,
					     const char *version,
					     const char *resource)
{
	for (size_t i = 0; i < srv_n_builtin; i++) {
		const struct srv_resource *r = &srv_builtin[i];
		/* the first byte first: most custom resources' groups differ
		   from every built-in group there, without a strcmp call */
		if (r->group[0] == group[0] && !strcmp(r->group, group) &&
		    !strcmp(r->version, version) &&
		    !strcmp(r->resource, resource))
			return r;
	}
	return NULL;
}

bool srv_resource_has_sub(const struct srv_resource *r, const char *sub)
{
	for (const char *const *s = r->subresources; s && *s; s++)
		if (!strcmp(*s, sub))
			return true;
	return false;
}

const char *srv_resource_gr(const struct srv_resource *r, char *buf, size_t n)
{
	/* a view's errors name its storage, as kube's (the REST storage of
	   events.k8s.io is core's event store) */
	const char *g = srv_resource_store_group(r);
	snprintf(buf, n, "%s%s%s", r->resource, g[0] ? "." : "", g);
	return buf;
}

const char *srv_resource_gv(const struct srv_resource *r, char *buf, size_t n)
{
	if (r->group[0])
		snprintf(buf, n, "%s/%s", r->group, r->version);
	else
		snprintf(buf, n, "%s", r->version);
	return buf;
}

const char *srv_resource_kube_key(const struct srv_resource *r,
				  const char *ns, const char *name, char *buf,
				  size_t n)
{
	/* kube's prefixes: the resource alone for its own groups (the
	   events.k8s.io view shares core events'), services split into
	   specs and endpoints, and the group before the resource where the
	   extension servers store (CRDs, custom resources) */
	const char *g = srv_resource_store_group(r), *res = r->resource;
	const char *pre = "", *dot = "";
	if (!g[0] && !strcmp(res, "services"))
		res = "services/specs";
	else if (!g[0] && !strcmp(res, "endpoints"))
		res = "services/endpoints";
	else if (r->custom || !strcmp(g, "apiextensions.k8s.io"))
		pre = g, dot = "/";
	snprintf(buf, n, "/registry/%s%s%s/%s%s%s", pre, dot, res,
		 r->namespaced ? ns : "", r->namespaced ? "/" : "", name);
	return buf;
}

const char *srv_resource_store_group(const struct srv_resource *r)
{
	return r->view ? r->view->group : r->group;
}

const char *srv_resource_store_gv(const struct srv_resource *r, char *buf,
				  size_t n)
{
	if (!r->view)
		return srv_resource_gv(r, buf, n);
	snprintf(buf, n, "%s", r->view->gv);
	return buf;
}

bool srv_resource_needs_convert(const struct srv_resource *r)
{
	return r->view || srv_cr_needs_convert(r);
}

lp_err srv_resource_convert(const struct srv_resource *r, const char *bytes,
			    size_t len, char **out, size_t *out_len,
			    struct srv_error *err)
{
	return srv_resource_convert_at(r, bytes, len, 0, out, out_len, err);
}

lp_err srv_resource_convert_at(const struct srv_resource *r, const char *bytes,
			       size_t len, int64_t written, char **out,
			       size_t *out_len, struct srv_error *err)
{
	*out = NULL;
	if (!r->view)
		return r->custom ? srv_cr_convert_at(r, bytes, len, written,
						     out, out_len, err)
				 : LP_OK;
	json_t *o = reg_json_load(bytes, len, JSON_ALLOW_NUL, NULL);
	if (!o)
		return LP_OK;
	r->view->to_served(o);
	char *s = reg_json_dump(o, out_len);
	json_decref(o);
	if (!s)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	*out = s;
	return LP_OK;
}

const char *srv_resource_field(const struct srv_resource *r, const json_t *obj,
			       const char *field, char *buf, size_t n)
{
	const char *at = NULL; /* the path, when not the label itself */
	/* metadata.namespace: kube's default field label conversion takes it
	   for every kind but those that register their own without it:
	   Namespaces and cluster-scoped custom resources */
	bool ns_label = r->namespaced ||
			(!r->custom && strcmp(r->resource, "namespaces"));
	bool known = !strcmp(field, "metadata.name") ||
		     (ns_label && !strcmp(field, "metadata.namespace"));
	size_t fl = strlen(field);
	/* a custom resource's labels are its selectableFields' paths, the
	   exact strings (apiextensions' converter); a built-in's table
	   entry may alias a path ("label=path") */
	for (const char *const *f = r->fields; !known && f && *f; f++) {
		known = !strncmp(*f, field, fl) &&
			((*f)[fl] == '\0' || (!r->custom && (*f)[fl] == '='));
		if (known && (*f)[fl] == '=')
			at = *f + fl + 1;
	}
	if (!known)
		return NULL;
	/* "a|b" (built-ins): a's value, else (empty or missing) b's */
	const json_t *cur = NULL;
	for (const char *alt = at ? at : field; alt;) {
		const char *bar = r->custom ? NULL : strchr(alt, '|');
		size_t alen = bar ? (size_t)(bar - alt) : strlen(alt);
		cur = obj;
		for (size_t i = 0; cur && i <= alen;) {
			size_t j = i;
			while (j < alen && alt[j] != '.')
				j++;
			cur = json_object_getn(cur, alt + i, j - i);
			i = j + 1;
		}
		bool empty = !cur || json_is_null(cur) ||
			     (json_is_string(cur) && !json_string_length(cur));
		if (!empty)
			break;
		alt = bar ? bar + 1 : NULL;
	}
	if (json_is_string(cur))
		return strlen(json_string_value(cur)) == json_string_length(cur)
			   ? json_string_value(cur)
			   : srv_fsel_unequal;
	if (json_is_integer(cur)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(cur));
		return buf;
	}
	if (json_is_boolean(cur))
		return json_is_true(cur) ? "true" : "false";
	return "";
}
