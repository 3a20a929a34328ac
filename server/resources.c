/*
 * resources.c -- the built-in resources lapis serves, as data (STYLE.md §1
 * "Keep metadata as data"), and their per-type strategies (upstream
 * pkg/registry/core/<type>/strategy.go and pkg/apis/core/validation).
 *
 * Discovery, OpenAPI, routing and validation all read this one table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crd.h"
#include "resources.h"

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

/* Config map / secret keys: [-._a-zA-Z0-9]+, at most 253, not "." or "..". */
static bool config_key_ok(const char *k)
{
	size_t n = strlen(k);
	if (n == 0 || n > 253 || !strcmp(k, ".") || !strcmp(k, ".."))
		return false;
	for (const char *p = k; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
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
			srv_error_cause(err, "FieldValueInvalid", path,
					"Invalid value: \"%s\": a valid config "
					"key must consist of alphanumeric "
					"characters, '-', '_' or '.'",
					k);
		if (json_is_null(v))
			continue; /* a nil []byte (decoding left it null) */
		if (!type_ok) {
			srv_error_cause(err, "FieldValueTypeInvalid", path,
					"Invalid value: must be a string");
			continue;
		}
		size_t l = json_string_length(v);
		total += base64_values ? l / 4 * 3 : l;
	}
	return total;
}

static lp_err finish_invalid(const struct srv_resource *r, const json_t *obj,
			     struct srv_error *err)
{
	return srv_error_invalid(err, r->kind, r->group,
				 json_string_value(json_object_get(
					 json_object_get(obj, "metadata"), "name")));
}

/* ------------------------------------------------------------ strategies */

static lp_err prep_namespace(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	json_t *spec = obj_child(obj, "spec");
	if (!old) {
		json_t *f = json_object_get(spec, "finalizers");
		if (!json_is_array(f) || json_array_size(f) == 0) {
			json_t *a = json_array();
			json_array_append_new(a, json_string("kubernetes"));
			json_object_set_new(spec, "finalizers", a);
		}
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
	return finish_invalid(r, obj, err);
}

static lp_err prep_configmap(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	(void)old;
	size_t n = check_data_keys(json_object_get(obj, "data"), "data", false,
				   err);
	n += check_data_keys(json_object_get(obj, "binaryData"), "binaryData",
			     true, err);
	if (n > DATA_MAX)
		srv_error_cause(err, "FieldValueTooLong", "",
				"Too long: must have at most %d bytes",
				DATA_MAX);
	return finish_invalid(r, obj, err);
}

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const unsigned char *s, size_t n)
{
	char *o = malloc((n + 2) / 3 * 4 + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		*p++ = b64chars[(v >> 18) & 63];
		*p++ = b64chars[(v >> 12) & 63];
		*p++ = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
		*p++ = i + 2 < n ? b64chars[v & 63] : '=';
	}
	*p = 0;
	return o;
}

/* Standard base64 with padding, as Go's encoding/json reads []byte. */
static bool b64_valid(const char *s, size_t n)
{
	if (n % 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '=') {
			if (i < n - 2 || (i == n - 2 && s[n - 1] != '='))
				return false;
			continue;
		}
		if (!strchr(b64chars, c) || c == 0)
			return false;
	}
	return true;
}

static lp_err prep_secret(const struct srv_resource *r, json_t *obj,
			  const json_t *old, struct srv_error *err)
{
	(void)old;
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
			char *enc = b64_encode(
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
			    !b64_valid(json_string_value(v),
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
	size_t n = check_data_keys(data, "data", true, err);
	if (n > DATA_MAX)
		srv_error_cause(err, "FieldValueTooLong", "data",
				"Too long: must have at most %d bytes",
				DATA_MAX);
	return finish_invalid(r, obj, err);
}

static lp_err prep_service(const struct srv_resource *r, json_t *obj,
			   const json_t *old, struct srv_error *err)
{
	json_t *spec = obj_child(obj, "spec");
	default_str(spec, "type", "ClusterIP");
	default_str(spec, "sessionAffinity", "None");
	json_t *ports = json_object_get(spec, "ports");
	size_t i;
	json_t *p;
	json_array_foreach(ports, i, p)
	{
		if (!json_is_object(p))
			continue;
		default_str(p, "protocol", "TCP");
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
		if (!json_is_integer(json_object_get(p, "port"))) {
			char f[64];
			snprintf(f, sizeof f, "spec.ports[%zu].port", i);
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value");
		}
	}
	const json_t *ospec = old ? json_object_get(old, "spec") : NULL;
	if (ospec && json_object_get(ospec, "clusterIP") &&
	    !json_object_get(spec, "clusterIP")) {
		json_object_set(spec, "clusterIP",
				json_object_get(ospec, "clusterIP"));
		json_object_set(spec, "clusterIPs",
				json_object_get(ospec, "clusterIPs"));
	}
	default_str(spec, "internalTrafficPolicy", "Cluster");
	if (!json_object_get(spec, "ipFamilies")) {
		json_t *a = json_array();
		json_array_append_new(a, json_string("IPv4"));
		json_object_set_new(spec, "ipFamilies", a);
	}
	default_str(spec, "ipFamilyPolicy", "SingleStack");
	if (!json_object_get(obj, "status")) {
		json_t *st = json_object();
		json_object_set_new(st, "loadBalancer", json_object());
		json_object_set_new(obj, "status", st);
	}
	return finish_invalid(r, obj, err);
}

static lp_err prep_none(const struct srv_resource *r, json_t *obj,
			const json_t *old, struct srv_error *err)
{
	(void)old;
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
	if (!strcmp(path, "secrets") || !strcmp(path, "imagePullSecrets")) {
		*key = "name";
		return SRV_LIST_MERGE_KEYED;
	}
	return SRV_LIST_REPLACE;
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

static json_t *c_external_ip(const json_t *o)
{
	const json_t *ips = json_object_get(json_object_get(o, "spec"), "externalIPs");
	if (!json_array_size(ips))
		return json_string("<none>");
	char buf[512] = "";
	size_t i, off = 0;
	json_t *v;
	json_array_foreach((json_t *)ips, i, v)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
					i ? "," : "", json_string_value(v) ? json_string_value(v) : "");
	return json_string(buf);
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

static json_t *c_selector(const json_t *o)
{
	const json_t *sel = json_object_get(json_object_get(o, "spec"), "selector");
	if (!json_object_size(sel))
		return json_string("<none>");
	char buf[512] = "";
	size_t off = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)sel, k, v)
	{
		if (off >= sizeof buf)
			break;
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s=%s",
					off ? "," : "", k,
					json_string_value(v) ? json_string_value(v) : "");
	}
	return json_string(buf);
}

static json_t *c_endpoints(const json_t *o)
{
	const json_t *subsets = json_object_get(o, "subsets");
	char buf[512] = "";
	size_t off = 0, i, j, k;
	json_t *s, *a, *p;
	json_array_foreach((json_t *)subsets, i, s)
	{
		json_array_foreach(json_object_get(s, "addresses"), j, a)
		{
			const char *ip = json_string_value(json_object_get(a, "ip"));
			json_array_foreach(json_object_get(s, "ports"), k, p)
			{
				if (off >= sizeof buf)
					break;
				off += (size_t)snprintf(buf + off, sizeof buf - off,
							"%s%s:%lld", off ? "," : "",
							ip ? ip : "",
							(long long)json_integer_value(json_object_get(p, "port")));
			}
		}
	}
	return json_string(off ? buf : "<none>");
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

static json_t *c_ev_object(const json_t *o)
{
	const char *k = str_at(o, "involvedObject", "kind");
	const char *n = str_at(o, "involvedObject", "name");
	char buf[600];
	char lower[64];
	size_t i = 0;
	for (; k && k[i] && i < sizeof lower - 1; i++)
		lower[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
	lower[i] = 0;
	snprintf(buf, sizeof buf, "%s/%s", lower, n ? n : "");
	return json_string(buf);
}

static json_t *c_ev_message(const json_t *o)
{
	const char *s = json_string_value(json_object_get(o, "message"));
	return json_string(s ? s : "");
}

static json_t *c_ev_last_seen(const json_t *o)
{
	const char *ts = json_string_value(json_object_get(o, "lastTimestamp"));
	if (!ts)
		ts = json_string_value(json_object_get(o, "eventTime"));
	if (!ts)
		return srv_age_cell(o);
	json_t *fake = json_pack("{s:{s:s}}", "metadata", "creationTimestamp", ts);
	json_t *v = srv_age_cell(fake);
	json_decref(fake);
	return v;
}

#define NAME_COL                                                              \
	{"Name", "string", "name",                                            \
	 "Name must be unique within a namespace.", 0, c_name}
#define AGE_COL                                                               \
	{"Age", "date", "",                                                   \
	 "CreationTimestamp is a timestamp representing the server time when " \
	 "this object was created.",                                          \
	 0, srv_age_cell}
#define END_COL {NULL, NULL, NULL, NULL, 0, NULL}

static const struct srv_column col_ns[] = {
	NAME_COL, {"Status", "string", "", "The status of the namespace", 0, c_phase},
	AGE_COL, END_COL};
static const struct srv_column col_cm[] = {
	NAME_COL, {"Data", "string", "", "Number of data in configmap", 0, c_data_count},
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
static json_t *c_created_at(const json_t *o)
{
	const char *s = str_at(o, "metadata", "creationTimestamp");
	return json_string(s ? s : "");
}

static const struct srv_column col_crd[] = {
	NAME_COL,
	{"Created At", "date", "", "CreationTimestamp", 0, c_created_at},
	END_COL};
static const struct srv_column col_event[] = {
	{"Last Seen", "string", "", "Time since the last occurrence", 0, c_ev_last_seen},
	{"Type", "string", "", "Type of the event", 0, c_ev_type},
	{"Reason", "string", "", "Reason of the event", 0, c_ev_reason},
	{"Object", "string", "", "The object of the event", 0, c_ev_object},
	{"Message", "string", "", "The message of the event", 0, c_ev_message},
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
static const char *const sub_status[] = {"status", NULL};
static const char *const f_secret[] = {"type", NULL};
static const char *const f_event[] = {
	"involvedObject.kind",	    "involvedObject.namespace",
	"involvedObject.name",	    "involvedObject.uid",
	"involvedObject.apiVersion", "involvedObject.resourceVersion",
	"involvedObject.fieldPath", "reason",
	"reportingComponent",	    "source",
	"type",			    NULL};
static const char *const f_ns[] = {"status.phase", NULL};

#define CORE(res, kind_, sing, ns_, verbs_, ...)                              \
	{.group = "", .version = "v1", .resource = res, .kind = kind_,        \
	 .list_kind = kind_ "List", .singular = sing, .namespaced = ns_,      \
	 .verbs = verbs_, .unconditional_update = true,                       \
	 .smp_list = smp_common, __VA_ARGS__}

const struct srv_resource srv_builtin[] = {
	CORE("namespaces", "Namespace", "namespace", false,
	     SRV_V_ALL & ~SRV_V_DELETECOLLECTION,
	     .short_names = sn_ns, .subresources = sub_ns, .columns = col_ns,
	     .return_deleted = true, .fields = f_ns,
	     .prepare = prep_namespace),
	CORE("configmaps", "ConfigMap", "configmap", true, SRV_V_ALL,
	     .short_names = sn_cm, .columns = col_cm,
	     .prepare = prep_configmap),
	CORE("secrets", "Secret", "secret", true, SRV_V_ALL, .fields = f_secret,
	     .columns = col_secret,
	     .prepare = prep_secret),
	CORE("services", "Service", "service", true, SRV_V_ALL,
	     .short_names = sn_svc, .categories = cat_all,
	     .subresources = sub_status, .columns = col_svc,
	     .prepare = prep_service),
	CORE("endpoints", "Endpoints", "endpoints", true, SRV_V_ALL,
	     .short_names = sn_ep, .columns = col_ep, .prepare = prep_none),
	CORE("events", "Event", "event", true, SRV_V_ALL,
	     .short_names = sn_ev, .columns = col_event,
	     .fields = f_event, .prepare = prep_none),
	CORE("serviceaccounts", "ServiceAccount", "serviceaccount", true,
	     SRV_V_ALL, .short_names = sn_sa, .columns = col_sa,
	     .prepare = prep_none),
	{.group = "apiextensions.k8s.io", .version = "v1",
	 .resource = "customresourcedefinitions",
	 .kind = "CustomResourceDefinition",
	 .list_kind = "CustomResourceDefinitionList",
	 .singular = "customresourcedefinition", .short_names = sn_crd,
	 .categories = cat_ext, .namespaced = false, .verbs = SRV_V_ALL,
	 .subresources = sub_status, .unconditional_update = false,
	 .prepare = srv_prep_crd, .after_write = srv_crd_after_write,
	 .before_delete = srv_crd_before_delete, .columns = col_crd},
	{.group = "coordination.k8s.io", .version = "v1", .resource = "leases",
	 .kind = "Lease", .list_kind = "LeaseList", .singular = "lease",
	 .namespaced = true, .verbs = SRV_V_ALL, .unconditional_update = true,
	 .smp_list = smp_common, .columns = col_lease, .prepare = prep_none},
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

const char *srv_resource_gr(const struct srv_resource *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s", r->resource, r->group[0] ? "." : "",
		 r->group);
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

const char *srv_resource_field(const struct srv_resource *r, const json_t *obj,
			       const char *field, char *buf, size_t n)
{
	bool known = !strcmp(field, "metadata.name") ||
		     !strcmp(field, "metadata.namespace");
	for (const char *const *f = r->fields; !known && f && *f; f++)
		known = !strcmp(*f, field);
	if (!known)
		return NULL;
	const json_t *cur = obj;
	char path[256];
	snprintf(path, sizeof path, "%s", field);
	for (char *s = path, *e; cur && s; s = e) {
		e = strchr(s, '.');
		if (e)
			*e++ = 0;
		cur = json_object_get(cur, s);
	}
	if (json_is_string(cur))
		return json_string_value(cur);
	if (json_is_integer(cur)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(cur));
		return buf;
	}
	if (json_is_boolean(cur))
		return json_is_true(cur) ? "true" : "false";
	return "";
}
