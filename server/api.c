/*
 * api.c -- the dispatcher: health, version, discovery (plain and
 * aggregated), OpenAPI v3, and routing of resource requests to the object
 * handlers (objects.c) and watches (watch.c).
 *
 * Threads: MHD pool threads. Reads the static resource table only.
 */
#include <ctype.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api.h"
#include "crd.h"
#include "fields.h"
#include "lapis/log.h"
#include "openapiv2.h"
#include "registry/json.h"
#include "registry/object.h"
#include "resources.h"
#include "satoken.h"
#include "schema.h"

/* The Kubernetes API level lapis implements (reference §6.5). */
#define KUBE_MAJOR "1"
#define KUBE_MINOR "33"

/* ------------------------------------------------------------ helpers */

static json_t *str_array(const char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

/* The verbs discovery shows: a terminating custom resource hides the
   writes that make or change objects (reference §8.4). */
static unsigned discovery_verbs(const struct srv_resource *r)
{
	return r->terminating
		       ? r->verbs & ~(SRV_V_CREATE | SRV_V_UPDATE | SRV_V_PATCH)
		       : r->verbs;
}

struct verb_name {
	unsigned bit;
	const char *name;
};

/* Built-ins list their verbs sorted; kube's CRD handler writes its own
   order for custom resources. */
static const struct verb_name builtin_verbs[] = {
    {SRV_V_CREATE, "create"}, {SRV_V_DELETE, "delete"},
    {SRV_V_DELETECOLLECTION, "deletecollection"}, {SRV_V_GET, "get"},
    {SRV_V_LIST, "list"}, {SRV_V_PATCH, "patch"}, {SRV_V_UPDATE, "update"},
    {SRV_V_WATCH, "watch"}};
static const struct verb_name custom_verbs[] = {
    {SRV_V_DELETE, "delete"}, {SRV_V_DELETECOLLECTION, "deletecollection"},
    {SRV_V_GET, "get"}, {SRV_V_LIST, "list"}, {SRV_V_PATCH, "patch"},
    {SRV_V_CREATE, "create"}, {SRV_V_UPDATE, "update"},
    {SRV_V_WATCH, "watch"}};

/* Both orders name the same eight verbs. */
#define N_VERBS (sizeof builtin_verbs / sizeof builtin_verbs[0])

static json_t *verbs_in(unsigned verbs, const struct verb_name *order)
{
	json_t *a = json_array();
	for (size_t i = 0; i < N_VERBS; i++)
		if (verbs & order[i].bit)
			json_array_append_new(a, json_string(order[i].name));
	return a;
}

static json_t *verbs_of(unsigned verbs)
{
	return verbs_in(verbs, builtin_verbs);
}

static json_t *res_verbs(const struct srv_resource *r, unsigned verbs)
{
	return verbs_in(verbs, r->custom ? custom_verbs : builtin_verbs);
}

static void sha(gnutls_digest_algorithm_t alg, const void *p, size_t n,
		unsigned char *out)
{
	gnutls_hash_fast(alg, p, n, out);
}

/* base64 of the first 8 bytes of SHA-256("<group>/<version>/<Kind>"). */
static void storage_hash(const struct srv_resource *r, char out[16])
{
	/* kube hashes the storage version: one hash under every served
	   version of a CRD */
	char text[512];
	snprintf(text, sizeof text, "%s/%s/%s", r->group,
		 srv_cr_storage_version(r), r->kind);
	unsigned char d[32];
	sha(GNUTLS_DIG_SHA256, text, strlen(text), d);
	char *b = reg_b64(d, 8); /* 12 characters */
	snprintf(out, 16, "%s", b ? b : "");
	free(b);
}

static void etag_of(const char *body, size_t n, char out[131])
{
	unsigned char d[64];
	sha(GNUTLS_DIG_SHA512, body, n, d);
	out[0] = '"';
	for (int i = 0; i < 64; i++)
		snprintf(out + 1 + 2 * i, 3, "%02X", d[i]);
	out[129] = '"';
	out[130] = 0;
}

static bool same_gv(const struct srv_resource *r, const char *g, const char *v)
{
	return !strcmp(r->group, g) && !strcmp(r->version, v);
}

/* ------------------------------------------------------------ resource set */

/* Every served resource for one request: built-ins and custom resources,
   the latter held through the CRD serving map. */
struct rset {
	const struct srv_resource **a;
	size_t n;
	void *hold;
};

static void rset_get(struct rset *rs)
{
	rs->n = srv_resources_all(&rs->a, &rs->hold);
	size_t k = 0;
	for (size_t i = 0; i < rs->n; i++)
		if (srv_cr_established(rs->a[i]))
			rs->a[k++] = rs->a[i];
	rs->n = k;
}

static void rset_put(struct rset *rs)
{
	free(rs->a);
	srv_resources_release(rs->hold);
}

/* ------------------------------------------------------------ discovery */

/* Whether the objects of r are stored in a version discovery lists, so
   that it has a storageVersionHash: not the review kinds, which store
   nothing (no StorageVersionProvider), nor a CRD's resource whose storage
   version is not served (kube hashes served versions alone). */
static bool stored_served(const struct rset *rs, const struct srv_resource *r)
{
	if (r->verbs == SRV_V_CREATE)
		return false;
	if (!r->custom)
		return true;
	const char *sv = srv_cr_storage_version(r);
	for (size_t i = 0; i < rs->n; i++)
		if (rs->a[i]->custom && !strcmp(rs->a[i]->group, r->group) &&
		    !strcmp(rs->a[i]->resource, r->resource) &&
		    !strcmp(rs->a[i]->version, sv))
			return true;
	return false;
}

/* Whether group version g/v is custom resources' (discovery lists a CRD
   group version as apiextensions builds it; kube-apiserver's own are in
   the installer's order, by path). */
static bool custom_gv(const struct rset *rs, const char *g, const char *v)
{
	for (size_t i = 0; i < rs->n; i++)
		if (same_gv(rs->a[i], g, v))
			return rs->a[i]->custom;
	return false;
}

static int member_cmp(const void *a, const void *b, void *m)
{
	const char *x = json_string_value(
	    json_object_get(*(json_t *const *)a, (const char *)m));
	const char *y = json_string_value(
	    json_object_get(*(json_t *const *)b, (const char *)m));
	return strcmp(x ? x : "", y ? y : "");
}

/* Sort an array of objects by the string member m: kube's installer
   registers a group version's storage paths in sorted order. */
static void sort_by_member(json_t *arr, const char *m)
{
	size_t n = json_array_size(arr);
	if (n < 2)
		return;
	json_t **v = malloc(n * sizeof *v);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort_r(v, n, sizeof *v, member_cmp, (void *)m);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

static json_t *resource_list(const struct rset *rs, const char *group,
			     const char *version)
{
	json_t *res = json_array();
	for (size_t i = 0; i < rs->n; i++) {
		const struct srv_resource *r = rs->a[i];
		if (!same_gv(r, group, version))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(r->resource));
		json_object_set_new(o, "singularName", json_string(r->singular));
		json_object_set_new(o, "namespaced", json_boolean(r->namespaced));
		json_object_set_new(o, "kind", json_string(r->kind));
		json_object_set_new(o, "verbs", res_verbs(r, discovery_verbs(r)));
		if (r->short_names)
			json_object_set_new(o, "shortNames",
					    str_array(r->short_names));
		if (r->categories)
			json_object_set_new(o, "categories",
					    str_array(r->categories));
		if (stored_served(rs, r)) {
			char h[16];
			storage_hash(r, h);
			json_object_set_new(o, "storageVersionHash",
					    json_string(h));
		}
		json_array_append_new(res, o);
		for (const char *const *s = r->subresources; s && *s; s++) {
			char name[128];
			snprintf(name, sizeof name, "%s/%s", r->resource, *s);
			json_t *so = json_object();
			json_object_set_new(so, "name", json_string(name));
			json_object_set_new(so, "singularName", json_string(""));
			json_object_set_new(so, "namespaced",
					    json_boolean(r->namespaced));
			const struct srv_resource *t = srv_subresource_type(*s);
			if (t) {
				json_object_set_new(so, "group",
						    json_string(t->group));
				json_object_set_new(so, "version",
						    json_string(t->version));
			}
			json_object_set_new(so, "kind",
					    json_string(t ? t->kind : r->kind));
			json_object_set_new(
			    so, "verbs", verbs_of(srv_subresource_verbs(*s)));
			json_array_append_new(res, so);
		}
	}
	if (!custom_gv(rs, group, version))
		sort_by_member(res, "name");
	return res;
}

/* Sort a[0, n) by insertion (a few entries): before(x, y) > 0 when x goes
   first. */
static void sort_names(const char **a, size_t n,
		       int (*before)(const char *, const char *))
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && before(a[j], a[j - 1]) > 0; j--) {
			const char *t = a[j];
			a[j] = a[j - 1];
			a[j - 1] = t;
		}
}

/* kube-apiserver's priority of a built-in group (its APIServices'
   groupPriorityMinimum, DefaultGenericAPIServicePriorities); custom
   resources' groups have 1000. */
static int group_priority(const char *g)
{
	static const struct {
		const char *group;
		int priority;
	} prio[] = {
	    {"events.k8s.io", 17750},
	    {"authentication.k8s.io", 17700},
	    {"authorization.k8s.io", 17600},
	    {"rbac.authorization.k8s.io", 17000},
	    {"admissionregistration.k8s.io", 16700},
	    {"apiextensions.k8s.io", 16700},
	    {"coordination.k8s.io", 16500},
	};
	for (size_t i = 0; i < sizeof prio / sizeof *prio; i++)
		if (!strcmp(prio[i].group, g))
			return prio[i].priority;
	return 1000;
}

struct group_key {
	const char *group;
	int priority;
	char first[320]; /* the group's first APIService name, v.group */
};

static int group_key_cmp(const void *a, const void *b)
{
	const struct group_key *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->first, y->first);
}

/* The groups served (besides core), in kube's order: by priority, then
   for the unaggregated /apis (legacy set) by the name of each group's
   first APIService ("<version>.<group>", the aggregator's
   SortedByGroupAndVersion), for aggregated discovery by group name. */
static size_t groups(const struct rset *rs, const char **out, size_t max,
		     bool legacy)
{
	struct group_key *k = calloc(max ? max : 1, sizeof *k);
	size_t n = 0;
	for (size_t i = 0; k && i < rs->n; i++) {
		const struct srv_resource *r = rs->a[i];
		if (!r->group[0])
			continue;
		char name[320];
		snprintf(name, sizeof name, "%s.%s", legacy ? r->version : "",
			 r->group);
		size_t j = 0;
		while (j < n && strcmp(k[j].group, r->group))
			j++;
		if (j == n) {
			if (n == max)
				continue;
			k[n].group = r->group;
			k[n].priority = group_priority(r->group);
			snprintf(k[n].first, sizeof k[n].first, "%s", name);
			n++;
		} else if (strcmp(name, k[j].first) < 0) {
			snprintf(k[j].first, sizeof k[j].first, "%s", name);
		}
	}
	if (k)
		qsort(k, n, sizeof *k, group_key_cmp);
	for (size_t i = 0; i < n; i++)
		out[i] = k[i].group;
	free(k);
	return n;
}

/* The versions of group g, distinct, in kube's discovery order (kube-aware:
   v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, ..., then the others by
   name); the first is the preferred one. */
static size_t group_versions(const struct rset *rs, const char *g,
			     const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (strcmp(rs->a[i]->group, g))
			continue;
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen = seen || !strcmp(out[j], rs->a[i]->version);
		if (!seen && n < max)
			out[n++] = rs->a[i]->version;
	}
	sort_names(out, n, srv_kube_version_cmp);
	return n;
}

static const char *group_version(const struct rset *rs, const char *g)
{
	const char *v[1];
	return group_versions(rs, g, v, 1) ? v[0] : NULL;
}

static bool has_gv(const struct rset *rs, const char *g, const char *v)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->a[i]->group, g) && !strcmp(rs->a[i]->version, v))
			return true;
	return false;
}

static json_t *api_group(const struct rset *rs, const char *g)
{
	const char *vv[32];
	size_t nv = group_versions(rs, g, vv, 32);
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(g));
	json_t *vs = json_array();
	for (size_t i = 0; i < nv; i++) {
		char gv[300];
		snprintf(gv, sizeof gv, "%s/%s", g, vv[i]);
		json_t *ver = json_object();
		json_object_set_new(ver, "groupVersion", json_string(gv));
		json_object_set_new(ver, "version", json_string(vv[i]));
		json_array_append_new(vs, ver);
	}
	json_object_set_new(o, "versions", vs);
	json_object_set(o, "preferredVersion", json_array_get(vs, 0));
	return o;
}

/* Which aggregated discovery version the Accept header asks for, or NULL. */
static const char *aggregated_version(struct srv_req *r)
{
	const char *a = srv_accept(r);
	if (!a)
		return NULL;
	/* Clauses in order; the first one we can serve wins. */
	const char *p = a;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char c[512];
		if (n >= sizeof c)
			n = sizeof c - 1;
		memcpy(c, p, n);
		c[n] = 0;
		if (strstr(c, "as=APIGroupDiscoveryList") &&
		    strstr(c, "g=apidiscovery.k8s.io")) {
			/* v2 alone: kube 1.33 no longer serves v2beta1
			   (AggregatedDiscoveryRemoveBetaType, on by default),
			   so such a clause goes to the unaggregated
			   documents, which cannot convert to it */
			const char *v = strstr(c, "v=v2");
			if (v && (v[4] == '\0' || v[4] == ';' || v[4] == ' '))
				return "v2";
		} else if (strstr(c, "application/json") || strstr(c, "*/*")) {
			return NULL;
		}
		p = e ? e + 1 : NULL;
		while (p && *p == ' ')
			p++;
	}
	return NULL;
}

static json_t *agg_resource(const struct srv_resource *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "resource", json_string(r->resource));
	/* kube's installer names a built-in's group and version only for
	   a storage that gives its own kind (the Scale, the TokenRequest);
	   apiextensions names a custom resource's */
	json_t *rk = json_object();
	json_object_set_new(rk, "group",
			    json_string(r->custom ? r->group : ""));
	json_object_set_new(rk, "version",
			    json_string(r->custom ? r->version : ""));
	json_object_set_new(rk, "kind", json_string(r->kind));
	json_object_set_new(o, "responseKind", rk);
	json_object_set_new(o, "scope", json_string(r->namespaced ? "Namespaced"
								  : "Cluster"));
	json_object_set_new(o, "singularResource", json_string(r->singular));
	json_object_set_new(o, "verbs", res_verbs(r, discovery_verbs(r)));
	if (r->short_names)
		json_object_set_new(o, "shortNames", str_array(r->short_names));
	if (r->categories)
		json_object_set_new(o, "categories", str_array(r->categories));
	if (r->subresources) {
		json_t *subs = json_array();
		for (const char *const *s = r->subresources; *s; s++) {
			json_t *so = json_object();
			json_object_set_new(so, "subresource", json_string(*s));
			const struct srv_resource *t = srv_subresource_type(*s);
			if (t)
				json_object_set_new(
				    so, "responseKind",
				    json_pack("{s:s,s:s,s:s}", "group", t->group,
					      "version", t->version, "kind",
					      t->kind));
			else
				json_object_set(so, "responseKind", rk);
			json_object_set_new(
			    so, "verbs", verbs_of(srv_subresource_verbs(*s)));
			json_array_append_new(subs, so);
		}
		if (!r->custom)
			sort_by_member(subs, "subresource");
		json_object_set_new(o, "subresources", subs);
	}
	return o;
}

static json_t *agg_group(const struct rset *rs, const char *g)
{
	json_t *item = json_object();
	json_t *md = json_object();
	if (g[0])
		json_object_set_new(md, "name", json_string(g));
	json_object_set_new(md, "creationTimestamp", json_null());
	json_object_set_new(item, "metadata", md);
	const char *vv[32];
	size_t nv = group_versions(rs, g, vv, 32);
	json_t *vs = json_array();
	for (size_t k = 0; k < nv; k++) {
		json_t *ver = json_object();
		json_object_set_new(ver, "version", json_string(vv[k]));
		json_t *res = json_array();
		for (size_t i = 0; i < rs->n; i++)
			if (same_gv(rs->a[i], g, vv[k]))
				json_array_append_new(res, agg_resource(rs->a[i]));
		if (!custom_gv(rs, g, vv[k]))
			sort_by_member(res, "resource");
		json_object_set_new(ver, "resources", res);
		json_object_set_new(ver, "freshness", json_string("Current"));
		json_array_append_new(vs, ver);
	}
	json_object_set_new(item, "versions", vs);
	return item;
}

static void reply_aggregated(struct srv_req *r, const char *dv, bool core)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "kind", json_string("APIGroupDiscoveryList"));
	char av[64];
	snprintf(av, sizeof av, "apidiscovery.k8s.io/%s", dv);
	json_object_set_new(doc, "apiVersion", json_string(av));
	json_object_set_new(doc, "metadata", json_object());
	json_t *items = json_array();
	struct rset rs;
	rset_get(&rs);
	if (core) {
		json_array_append_new(items, agg_group(&rs, ""));
	} else {
		const char *gs[512];
		size_t n = groups(&rs, gs, 512, false);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(items, agg_group(&rs, gs[i]));
	}
	rset_put(&rs);
	json_object_set_new(doc, "items", items);
	size_t n;
	char *s = reg_json_dump(doc, &n);
	json_decref(doc);
	if (!s) {
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	char etag[131];
	etag_of(s, n, etag);
	const char *inm = srv_header(r, "If-None-Match");
	char ctype[128];
	snprintf(ctype, sizeof ctype,
		 "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList",
		 dv);
	/* kube's aggregated discovery lets shared caches keep it */
	const char *h[] = {"ETag", etag, "Vary", "Accept", "Cache-Control",
			   "public", NULL};
	if (inm && !strcmp(inm, etag)) {
		/* kube's ServeHTTPWithETag: the validators, no type */
		free(s);
		srv_reply_headers(r, 304, NULL, NULL, 0, h);
		return;
	}
	srv_reply_headers(r, 200, ctype, s, strlen(s), h);
}

/* Does Accept have a clause discovery answers (JSON, YAML or protobuf,
   with no conversion: kube's DefaultEndpointRestrictions)? Else answer
   kube's 406 and say false. */
static bool discovery_acceptable(struct srv_req *r)
{
	const char *p = srv_accept(r);
	if (!p || !*p)
		return true;
	static const char *const types[] = {
	    "application/json", "application/yaml",
	    "application/vnd.kubernetes.protobuf", "*/*", "application/*"};
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t len = strcspn(p, ",");
		size_t tl = strcspn(p, ";, ");
		if (tl > len)
			tl = len;
		const char *params = memchr(p, ';', len);
		bool conversion = false;
		for (const char *q = params; q && q < p + len;
		     q = memchr(q + 1, ';', (size_t)(p + len - q - 1))) {
			const char *k = q + 1;
			while (*k == ' ')
				k++;
			conversion = conversion || !strncmp(k, "as=", 3);
		}
		for (size_t i = 0; !conversion && i < 5; i++)
			if (strlen(types[i]) == tl &&
			    !strncasecmp(p, types[i], tl))
				return true;
		p += len;
	}
	srv_reply_fail(r, LP_E_NOTACCEPTABLE,
		       "only the following media types are accepted: "
		       "application/json, application/yaml, "
		       "application/vnd.kubernetes.protobuf");
	return false;
}

static void reply_api(struct srv_req *r)
{
	const char *dv = aggregated_version(r);
	if (dv) {
		reply_aggregated(r, dv, true);
		return;
	}
	if (!discovery_acceptable(r))
		return;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string("APIVersions"));
	json_t *vs = json_array();
	json_array_append_new(vs, json_string("v1"));
	json_object_set_new(o, "versions", vs);
	json_t *cidrs = json_array();
	json_t *c = json_object();
	json_object_set_new(c, "clientCIDR", json_string("0.0.0.0/0"));
	char addr[64];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", srv_port(r->s));
	json_object_set_new(c, "serverAddress", json_string(addr));
	json_array_append_new(cidrs, c);
	json_object_set_new(o, "serverAddressByClientCIDRs", cidrs);
	srv_reply_json(r, 200, o);
}

static void reply_apis(struct srv_req *r)
{
	const char *dv = aggregated_version(r);
	if (dv) {
		reply_aggregated(r, dv, false);
		return;
	}
	if (!discovery_acceptable(r))
		return;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string("APIGroupList"));
	json_object_set_new(o, "apiVersion", json_string("v1"));
	json_t *gl = json_array();
	struct rset rs;
	rset_get(&rs);
	const char *gs[512];
	size_t n = groups(&rs, gs, 512, true);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(gl, api_group(&rs, gs[i]));
	rset_put(&rs);
	json_object_set_new(o, "groups", gl);
	srv_reply_json(r, 200, o);
}

static void reply_resource_list(struct srv_req *r, const char *g, const char *v)
{
	if (!discovery_acceptable(r))
		return;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string("APIResourceList"));
	char gv[300];
	if (g[0]) {
		json_object_set_new(o, "apiVersion", json_string("v1"));
		snprintf(gv, sizeof gv, "%s/%s", g, v);
	} else {
		snprintf(gv, sizeof gv, "%s", v);
	}
	json_object_set_new(o, "groupVersion", json_string(gv));
	struct rset rs;
	rset_get(&rs);
	json_object_set_new(o, "resources", resource_list(&rs, g, v));
	rset_put(&rs);
	srv_reply_json(r, 200, o);
}

static void not_found(struct srv_req *r)
{
	srv_reply_no_route(r, LP_E_NOTFOUND);
}

/* ------------------------------------------------------------ openapi */

/* A string query parameter; OpenAPI v3 puts its type in a schema, Swagger
   2.0 (v2) in the parameter. */
static json_t *param(const char *name, const char *desc, bool v2)
{
	json_t *p = json_object();
	json_object_set_new(p, "name", json_string(name));
	json_object_set_new(p, "in", json_string("query"));
	json_object_set_new(p, "description", json_string(desc));
	if (v2) {
		json_object_set_new(p, "type", json_string("string"));
	} else {
		json_t *sc = json_object();
		json_object_set_new(sc, "type", json_string("string"));
		json_object_set_new(p, "schema", sc);
	}
	json_object_set_new(p, "uniqueItems", json_true());
	return p;
}

/* The query parameters of create, update and patch that kubectl looks for
   (fieldValidation above all: without it kubectl validates on its own). */
static json_t *write_params(bool v2)
{
	json_t *pp = json_array();
	json_array_append_new(pp, param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.", v2));
	json_array_append_new(pp, param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes.", v2));
	json_array_append_new(pp, param("dryRun", "When present, indicates that modifications should not be persisted.", v2));
	return pp;
}

/* The collection and item paths of r, with {namespace} and {name}. */
static void res_paths(const struct srv_resource *r, char coll[384],
		      char item[512])
{
	char base[256];
	if (r->group[0])
		snprintf(base, sizeof base, "/apis/%s/%s", r->group, r->version);
	else
		snprintf(base, sizeof base, "/api/%s", r->version);
	if (r->namespaced)
		snprintf(coll, 384, "%s/namespaces/{namespace}/%s", base,
			 r->resource);
	else
		snprintf(coll, 384, "%s/%s", base, r->resource);
	snprintf(item, 512, "%s/{name}", coll);
}

/* The patch media types r takes (custom resources no strategic merge). */
static size_t patch_types(const struct srv_resource *r, const char *out[4])
{
	static const char *const types[] = {
	    "application/json-patch+json", "application/merge-patch+json",
	    "application/strategic-merge-patch+json",
	    "application/apply-patch+yaml"};
	/* Strategic merge patches: not for custom resources (kube has no
	   Go struct for them), and not advertised for a kind lapis would
	   publish loosely (one without field tables; every built-in served
	   has them): kubectl computes a strategic merge patch from the
	   schema when the PATCH operation names the type, and warns "error
	   calculating patch from openapi v3 spec" on every apply when it
	   cannot; without it kubectl sends a JSON merge patch (the server
	   still takes both) */
	char gv[300];
	snprintf(gv, sizeof gv, "%s%s%s", r->group, r->group[0] ? "/" : "",
		 r->version);
	bool smp = !r->custom && srv_builtin_has_table(r->kind, gv);
	size_t n = 0;
	for (int t = 0; t < 4; t++)
		if (t != 2 || smp)
			out[n++] = types[t];
	return n;
}

static void schema_name(const struct srv_resource *r, char *buf, size_t n)
{
	if (r->custom) {
		srv_cr_schema_name(r, r->kind, buf, n);
		return;
	}
	if (!r->group[0]) {
		snprintf(buf, n, "io.k8s.api.core.%s.%s", r->version, r->kind);
		return;
	}
	if (!strcmp(r->group, "apiextensions.k8s.io")) {
		snprintf(buf, n,
			 "io.k8s.apiextensions-apiserver.pkg.apis."
			 "apiextensions.%s.%s",
			 r->version, r->kind);
		return;
	}
	/* io.k8s.api.<first label of group>.<version>.<Kind> */
	char first[64];
	size_t i = 0;
	while (r->group[i] && r->group[i] != '.' && i < sizeof first - 1) {
		first[i] = r->group[i];
		i++;
	}
	first[i] = 0;
	snprintf(buf, n, "io.k8s.api.%s.%s.%s", first, r->version, r->kind);
}

static json_t *gvk(const struct srv_resource *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "group", json_string(r->group));
	json_object_set_new(o, "kind", json_string(r->kind));
	json_object_set_new(o, "version", json_string(r->version));
	return o;
}

static json_t *desc_prop(const char *type, const char *desc)
{
	return json_pack("{s:s,s:s}", "description", desc, "type", type);
}

static void list_meta_schema(json_t *schemas);

/* ObjectMeta and ListMeta, the parts kubectl explain shows of a custom
   resource's metadata (kube's descriptions, first sentences). */
static void meta_schemas(json_t *schemas)
{
	json_t *p = json_object();
	json_object_set_new(
	    p, "annotations",
	    json_pack("{s:{s:s,s:s},s:s,s:s}", "additionalProperties",
		      "default", "", "type", "string", "description",
		      "Annotations is an unstructured key value map stored "
		      "with a resource that may be set by external tools to "
		      "store and retrieve arbitrary metadata.",
		      "type", "object"));
	json_object_set_new(
	    p, "creationTimestamp",
	    json_pack("{s:s,s:s,s:s}", "description",
		      "CreationTimestamp is a timestamp representing the "
		      "server time when this object was created.",
		      "type", "string", "format", "date-time"));
	json_object_set_new(
	    p, "deletionTimestamp",
	    json_pack("{s:s,s:s,s:s}", "description",
		      "DeletionTimestamp is RFC 3339 date and time at which "
		      "this resource will be deleted.",
		      "type", "string", "format", "date-time"));
	json_object_set_new(
	    p, "finalizers",
	    json_pack(
		"{s:s,s:s,s:{s:s,s:s},s:s}", "description",
		"Must be empty before the object is deleted from the registry.",
		"type", "array", "items", "default", "", "type", "string",
		"x-kubernetes-list-type", "set"));
	json_object_set_new(
	    p, "generateName",
	    desc_prop("string", "GenerateName is an optional prefix, used by "
				"the server, to generate a unique name ONLY IF "
				"the Name field has not been provided."));
	json_object_set_new(
	    p, "generation",
	    json_pack("{s:s,s:s,s:s}", "description",
		      "A sequence number representing a specific generation of "
		      "the desired state.",
		      "type", "integer", "format", "int64"));
	json_object_set_new(
	    p, "labels",
	    json_pack("{s:{s:s,s:s},s:s,s:s}", "additionalProperties",
		      "default", "", "type", "string", "description",
		      "Map of string keys and values that can be used to "
		      "organize and categorize (scope and select) objects.",
		      "type", "object"));
	json_object_set_new(
	    p, "name",
	    desc_prop("string", "Name must be unique within a namespace."));
	json_object_set_new(
	    p, "namespace",
	    desc_prop("string", "Namespace defines the space within which each "
				"name must be unique."));
	json_object_set_new(
	    p, "resourceVersion",
	    desc_prop("string",
		      "An opaque value that represents the internal version of "
		      "this object that can be used by clients to determine "
		      "when objects have changed."));
	json_object_set_new(
	    p, "uid",
	    desc_prop(
		"string",
		"UID is the unique in time and space value for this object."));
	/* every ObjectMeta field from its table (ownerReferences,
	   managedFields, ... for explain), the ones above as written */
	static const char om[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
	srv_object_meta_openapi(schemas);
	json_t *full = json_object_get(json_object_get(schemas, om), "properties");
	if (json_is_object(full)) {
		json_object_update(full, p);
		json_decref(p);
		p = json_incref(full);
	}
	json_object_set_new(
	    schemas, om,
	    json_pack(
		"{s:s,s:o,s:s}", "description",
		"ObjectMeta is metadata that all persisted resources must "
		"have, which includes all objects users must create.",
		"properties", p, "type", "object"));
	list_meta_schema(schemas);
}

/* ListMeta, the metadata of every list kind. */
static void list_meta_schema(json_t *schemas)
{
	json_t *l = json_object();
	json_object_set_new(
	    l, "continue",
	    desc_prop("string",
		      "continue may be set if the user set a limit on the "
		      "number of items returned, and indicates that the server "
		      "has more data available."));
	json_object_set_new(
	    l, "remainingItemCount",
	    json_pack("{s:s,s:s,s:s}", "description",
		      "remainingItemCount is the number of subsequent items in "
		      "the list which are not included in this list response.",
		      "type", "integer", "format", "int64"));
	json_object_set_new(
	    l, "resourceVersion",
	    desc_prop("string",
		      "String that identifies the server's internal version of "
		      "this object that can be used by clients to determine "
		      "when objects have changed."));
	json_object_set_new(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
	    json_pack("{s:s,s:o,s:s}", "description",
		      "ListMeta describes metadata that synthetic resources "
		      "must have, including lists and various status objects.",
		      "properties", l, "type", "object"));
}

/* Add the schemas of r's kind to schemas (and those they reference);
   true for a custom resource, whose references meta_schemas adds. */
static bool kind_schemas(const struct srv_resource *r, json_t *schemas)
{
	if (r->custom) {
		srv_cr_openapi(r, schemas);
		return true;
	}
	/* a built-in kind: its schema from the field tables (fields.c) */
	if (srv_builtin_openapi(r->group, r->version, r->kind, schemas))
		return false;
	/* a kind without field tables (none is served today): a
	   loose schema with the GVK for explain */
	json_t *sch = json_object();
	char desc[256];
	snprintf(desc, sizeof desc, "%s is a %s object served by lapis.",
		 r->kind, r->kind);
	json_object_set_new(sch, "description", json_string(desc));
	json_object_set_new(sch, "type", json_string("object"));
	json_t *props = json_object();
	json_t *ps = json_object();
	json_object_set_new(ps, "type", json_string("string"));
	json_object_set_new(props, "apiVersion", ps);
	json_object_set_new(props, "kind", json_deep_copy(ps));
	json_t *md = json_object();
	json_object_set_new(md, "type", json_string("object"));
	json_object_set_new(props, "metadata", md);
	json_object_set_new(sch, "properties", props);
	json_object_set_new(sch, "x-kubernetes-preserve-unknown-fields",
			    json_true());
	json_t *gl = json_array();
	json_array_append_new(gl, gvk(r));
	json_object_set_new(sch, "x-kubernetes-group-version-kind", gl);
	char sname[256];
	schema_name(r, sname, sizeof sname);
	json_object_set_new(schemas, sname, sch);
	return false;
}

/*
 * kube-openapi's operation ids and tags (apiserver's
 * GetOperationIDAndTags): the verb, then the group without ".k8s.io" and
 * the version, each as ToValidOperationID makes them (letters, '_' and,
 * after the first, digits kept; a letter after anything else capitalised),
 * then the rest of the route's operation name; the tag is group_version.
 */
static void op_part(char *out, size_t n, const char *s, bool cap)
{
	size_t o = strlen(out);
	for (size_t i = 0; s[i] && o + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalpha(c) || c == '_' || (i && isdigit(c))) {
			out[o++] = (char)(cap ? toupper(c) : c);
			cap = false;
		} else {
			cap = true;
		}
	}
	out[o] = 0;
}

static void group_label(const struct srv_resource *r, char *out, size_t n)
{
	const char *g = r->group[0] ? r->group : "core";
	size_t l = strlen(g);
	if (l > 7 && !strcmp(g + l - 7, ".k8s.io"))
		l -= 7;
	snprintf(out, n, "%.*s", (int)l, g);
}

static void op_id(const struct srv_resource *r, const char *verb,
		  const char *rest, char *out, size_t n)
{
	char g[256];
	group_label(r, g, sizeof g);
	snprintf(out, n, "%s", verb);
	op_part(out, n, g, true);
	op_part(out, n, r->version, true);
	op_part(out, n, rest, true);
}

static json_t *op_tags(const struct srv_resource *r)
{
	char g[256], tag[320] = "";
	group_label(r, g, sizeof g);
	op_part(tag, sizeof tag, g, false);
	size_t o = strlen(tag);
	snprintf(tag + o, sizeof tag - o, "_");
	op_part(tag, sizeof tag, r->version, false);
	return json_pack("[s]", tag);
}

/* apiserver's GetArticleForNoun, padded with spaces. */
static const char *article(const char *noun)
{
	size_t l = strlen(noun);
	if (l && noun[l - 1] == 's' && !(l > 1 && noun[l - 2] == 's'))
		return " ";
	return noun[0] && strchr("aeiouAEIOU", noun[0]) ? " an " : " a ";
}

static json_t *content_of(const char *ref, bool protobuf, bool watch)
{
	json_t *c = json_object();
	const char *types[] = {
	    "application/json", "application/yaml",
	    "application/vnd.kubernetes.protobuf",
	    "application/json;stream=watch",
	    "application/vnd.kubernetes.protobuf;stream=watch"};
	for (int i = 0; i < 5; i++) {
		if ((i == 2 || i == 4) && !protobuf)
			continue;
		if (i >= 3 && !watch)
			continue;
		json_object_set_new(
		    c, types[i], json_pack("{s:{s:s}}", "schema", "$ref", ref));
	}
	return c;
}

/* A path parameter, or the query parameter pretty, as kube lists them on
   the path item. */
static json_t *path_param(const char *name, const char *desc)
{
	return json_pack("{s:s,s:s,s:s,s:b,s:{s:s,s:b}}", "description", desc,
			 "in", "path", "name", name, "required", 1, "schema",
			 "type", "string", "uniqueItems", 1);
}

static json_t *path_params(const struct srv_resource *r, bool item)
{
	json_t *pp = json_array();
	char d[160];
	if (item) {
		snprintf(d, sizeof d, "name of the %s", r->kind);
		json_array_append_new(pp, path_param("name", d));
	}
	if (r->namespaced)
		json_array_append_new(
		    pp,
		    path_param("namespace", "object name and auth scope, "
					    "such as for teams and projects"));
	json_array_append_new(
	    pp, param("pretty", "If 'true', then the output is pretty printed.",
		      false));
	return pp;
}

/* The query parameters of a list, a watch or a deletecollection. */
static json_t *list_params(bool deletecollection)
{
	static const char *const names[][2] = {
	    {"allowWatchBookmarks", "boolean"},
	    {"continue", "string"},
	    {"fieldSelector", "string"},
	    {"labelSelector", "string"},
	    {"limit", "integer"},
	    {"resourceVersion", "string"},
	    {"resourceVersionMatch", "string"},
	    {"sendInitialEvents", "boolean"},
	    {"timeoutSeconds", "integer"},
	    {"watch", "boolean"},
	};
	json_t *pp = json_array();
	if (deletecollection)
		json_array_append_new(
		    pp, param("dryRun",
			      "When present, indicates that modifications "
			      "should not be persisted.",
			      false));
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		if (deletecollection &&
		    (!strcmp(names[i][0], "watch") ||
		     !strcmp(names[i][0], "allowWatchBookmarks")))
			continue;
		json_t *p = param(names[i][0], "", false);
		json_object_del(p, "description");
		json_object_set_new(json_object_get(p, "schema"), "type",
				    json_string(names[i][1]));
		json_array_append_new(pp, p);
	}
	return pp;
}

struct v3op {
	const char *method; /* get, post, put, patch, delete */
	const char *action; /* x-kubernetes-action */
	const char *verb;   /* of the operation id */
	const char *desc;
	const char *rest;     /* the operation id after group and version */
	const char *body_ref; /* the request body's schema, or NULL */
	const char *resp_ref; /* the 200 answer's */
	const struct srv_resource
	    *gvk_of; /* its x-kubernetes-group-version-kind */
};

static void add_op(json_t *item, const struct srv_resource *r,
		   const struct v3op *o, bool protobuf)
{
	json_t *op = json_object();
	char id[768];
	op_id(r, o->verb, o->rest, id, sizeof id);
	json_object_set_new(op, "description", json_string(o->desc));
	json_object_set_new(op, "operationId", json_string(id));
	json_object_set_new(op, "tags", op_tags(r));
	bool list = !strcmp(o->action, "list"),
	     dc = !strcmp(o->action, "deletecollection");
	if (!strcmp(o->action, "post") || !strcmp(o->action, "put") ||
	    !strcmp(o->action, "patch"))
		json_object_set_new(op, "parameters", write_params(false));
	else if (list || dc)
		json_object_set_new(op, "parameters", list_params(dc));
	if (!strcmp(o->action, "patch")) {
		json_t *ct = json_object();
		const char *types[4];
		size_t nt = patch_types(r, types);
		for (size_t t = 0; t < nt; t++)
			json_object_set_new(
			    ct, types[t],
			    json_pack(
				"{s:{s:s}}", "schema", "$ref",
				"#/components/schemas/"
				"io.k8s.apimachinery.pkg.apis.meta.v1.Patch"));
		json_object_set_new(
		    op, "requestBody",
		    json_pack("{s:o,s:b}", "content", ct, "required", 1));
	} else if (o->body_ref) {
		json_object_set_new(
		    op, "requestBody",
		    json_pack("{s:{s:{s:{s:s}}},s:b}", "content", "*/*",
			      "schema", "$ref", o->body_ref, "required", 1));
	}
	json_t *rs = json_object();
	json_object_set_new(rs, "200",
			    json_pack("{s:s,s:o}", "description", "OK",
				      "content",
				      content_of(o->resp_ref, protobuf, list)));
	const char *more[2] = {NULL, NULL};
	if (!strcmp(o->action, "post"))
		more[0] = "201", more[1] = "202";
	else if (!strcmp(o->action, "put") || !strcmp(o->action, "patch"))
		more[0] = "201";
	else if (!strcmp(o->action, "delete"))
		more[0] = "202";
	for (int i = 0; i < 2 && more[i]; i++)
		json_object_set_new(
		    rs, more[i],
		    json_pack("{s:s,s:o}", "description",
			      more[i][2] == '1' ? "Created" : "Accepted",
			      "content",
			      content_of(o->resp_ref, protobuf, false)));
	json_object_set_new(rs, "401",
			    json_pack("{s:s}", "description", "Unauthorized"));
	json_object_set_new(op, "responses", rs);
	json_object_set_new(op, "x-kubernetes-action", json_string(o->action));
	json_object_set_new(op, "x-kubernetes-group-version-kind",
			    gvk(o->gvk_of));
	json_object_set_new(item, o->method, op);
}

static json_t *path_item(json_t *paths, const char *path,
			 const struct srv_resource *r, bool item)
{
	json_t *pi = json_object_get(paths, path);
	if (!pi) {
		pi = json_object();
		json_object_set_new(pi, "parameters", path_params(r, item));
		json_object_set_new(paths, path, pi);
	}
	return pi;
}

/* The schema name of r's list kind: <Kind>List beside its kind's. */
static void list_schema_name(const struct srv_resource *r, char *buf, size_t n)
{
	if (r->custom) {
		srv_cr_schema_name(r, r->list_kind, buf, n);
		return;
	}
	schema_name(r, buf, n);
	size_t at = strlen(buf) - strlen(r->kind);
	snprintf(buf + at, n - at, "%s", r->list_kind);
}

/*
 * r's paths as kube publishes them in OpenAPI v3 (apiextensions'
 * openapi builder for a custom resource, the endpoint installer for a
 * built-in): the collection (list, create, deletecollection), across
 * namespaces (list), the item (read, replace, patch, delete) and each
 * subresource, each operation with kube's id, tag, description, action
 * and group-version-kind, the write parameters kubectl looks for, the
 * request body and the answers.
 */
static void v3_paths(const struct srv_resource *r, json_t *paths)
{
	char coll[384], item[512], sname[256], ref[300], sub[600], rest[256],
	    desc[320];
	res_paths(r, coll, item);
	schema_name(r, sname, sizeof sname);
	snprintf(ref, sizeof ref, "#/components/schemas/%s", sname);
	char lref[300];
	list_schema_name(r, sname, sizeof sname);
	snprintf(lref, sizeof lref, "#/components/schemas/%s", sname);
	static const char status_ref[] =
	    "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status";
	const char *ns = r->namespaced ? "Namespaced" : "";
	bool pb = !r->custom;
	unsigned v = r->verbs;
	json_t *pi;
	if (v & (SRV_V_LIST | SRV_V_CREATE | SRV_V_DELETECOLLECTION)) {
		pi = path_item(paths, coll, r, false);
		if (v & SRV_V_LIST) {
			/* the endpoint installer's words; the CRD builder's
			   leave out "or watch" */
			snprintf(desc, sizeof desc, "list%s objects of kind %s",
				 r->custom ? "" : " or watch", r->kind);
			snprintf(rest, sizeof rest, "%s%s", ns, r->kind);
			add_op(pi, r,
			       &(struct v3op){"get", "list", "list", desc, rest,
					      NULL, lref, r},
			       pb);
		}
		if (v & SRV_V_CREATE) {
			snprintf(desc, sizeof desc, "create%s%s",
				 article(r->kind), r->kind);
			snprintf(rest, sizeof rest, "%s%s", ns, r->kind);
			add_op(pi, r,
			       &(struct v3op){"post", "post", "create", desc,
					      rest, ref, ref, r},
			       pb);
		}
		if (v & SRV_V_DELETECOLLECTION) {
			snprintf(desc, sizeof desc, "delete collection of %s",
				 r->kind);
			snprintf(rest, sizeof rest, "Collection%s%s", ns,
				 r->kind);
			add_op(pi, r,
			       &(struct v3op){"delete", "deletecollection",
					      "delete", desc, rest, NULL,
					      status_ref, r},
			       pb);
		}
	}
	if (r->namespaced && (v & SRV_V_LIST)) {
		/* kube's list<Kind>ForAllNamespaces: list only */
		const char *at = strstr(coll, "/namespaces/{namespace}/");
		char all[384];
		snprintf(all, sizeof all, "%.*s/%s", at ? (int)(at - coll) : 0,
			 coll, r->resource);
		json_t *ai = json_object();
		json_object_set_new(
		    ai, "parameters",
		    json_pack(
			"[o]",
			param("pretty",
			      "If 'true', then the output is pretty printed.",
			      false)));
		json_object_set_new(paths, all, ai);
		snprintf(desc, sizeof desc, "list%s objects of kind %s",
			 r->custom ? "" : " or watch", r->kind);
		snprintf(rest, sizeof rest, "%sForAllNamespaces", r->kind);
		add_op(ai, r,
		       &(struct v3op){"get", "list", "list", desc, rest, NULL,
				      lref, r},
		       pb);
	}
	pi = path_item(paths, item, r, true);
	static const struct {
		unsigned bit;
		const char *method, *action, *verb, *what;
	} item_ops[] = {
	    {SRV_V_GET, "get", "get", "read", "read the specified "},
	    {SRV_V_UPDATE, "put", "put", "replace", "replace the specified "},
	    {SRV_V_PATCH, "patch", "patch", "patch",
	     "partially update the specified "},
	    {SRV_V_DELETE, "delete", "delete", "delete", NULL},
	};
	for (size_t i = 0; i < sizeof item_ops / sizeof *item_ops; i++) {
		if (!(v & item_ops[i].bit))
			continue;
		if (item_ops[i].what)
			snprintf(desc, sizeof desc, "%s%s", item_ops[i].what,
				 r->kind);
		else
			snprintf(desc, sizeof desc, "delete%s%s",
				 article(r->kind), r->kind);
		snprintf(rest, sizeof rest, "%s%s", ns, r->kind);
		bool del = item_ops[i].bit == SRV_V_DELETE;
		const char *body = item_ops[i].bit == SRV_V_UPDATE ? ref : NULL;
		add_op(pi, r,
		       &(struct v3op){item_ops[i].method, item_ops[i].action,
				      item_ops[i].verb, desc, rest, body,
				      del && r->custom ? status_ref : ref, r},
		       pb);
	}
	for (const char *const *s = r->subresources; s && *s; s++) {
		unsigned sv = srv_subresource_verbs(*s);
		const struct srv_resource *st = srv_subresource_type(*s);
		char tref[300], title[64];
		if (st) {
			char tn[256];
			schema_name(st, tn, sizeof tn);
			snprintf(tref, sizeof tref, "#/components/schemas/%s",
				 tn);
		} else {
			snprintf(tref, sizeof tref, "%s", ref);
		}
		snprintf(title, sizeof title, "%s", *s);
		title[0] = (char)toupper((unsigned char)title[0]);
		snprintf(sub, sizeof sub, "%s/%s", item, *s);
		json_t *si = path_item(paths, sub, r, true);
		static const struct {
			unsigned bit;
			const char *method, *action, *verb, *what;
		} sub_ops[] = {
		    {SRV_V_GET, "get", "get", "read",
		     "read %s of the specified %s"},
		    {SRV_V_CREATE, "post", "post", "create",
		     "create %s of%s%s"},
		    {SRV_V_UPDATE, "put", "put", "replace",
		     "replace %s of the specified %s"},
		    {SRV_V_PATCH, "patch", "patch", "patch",
		     "partially update %s of the specified %s"},
		};
		for (size_t i = 0; i < sizeof sub_ops / sizeof *sub_ops; i++) {
			if (!(sv & sub_ops[i].bit))
				continue;
			if (sub_ops[i].bit == SRV_V_CREATE)
				snprintf(desc, sizeof desc, sub_ops[i].what, *s,
					 article(r->kind), r->kind);
			else
				snprintf(desc, sizeof desc, sub_ops[i].what, *s,
					 r->kind);
			snprintf(rest, sizeof rest, "%s%s%s", ns, r->kind,
				 title);
			const char *body =
			    sub_ops[i].bit == SRV_V_UPDATE ||
				    sub_ops[i].bit == SRV_V_CREATE
				? tref
				: NULL;
			add_op(si, r,
			       &(struct v3op){sub_ops[i].method,
					      sub_ops[i].action,
					      sub_ops[i].verb, desc, rest, body,
					      tref, st ? st : r},
			       pb);
		}
	}
}

/* A built-in's list kind (a custom resource's comes with its schema):
   kube's <Kind>List of apiVersion, kind, metadata and items. */
static void builtin_list_schema(const struct srv_resource *r, json_t *schemas)
{
	char name[256], ref[300], desc[160];
	schema_name(r, name, sizeof name);
	snprintf(ref, sizeof ref, "#/components/schemas/%s", name);
	list_schema_name(r, name, sizeof name);
	if (json_object_get(schemas, name))
		return;
	snprintf(desc, sizeof desc, "%s is a list of %s objects.", r->list_kind,
		 r->kind);
	json_object_set_new(
	    schemas, name,
	    json_pack("{s:s,s:{s:{s:s},s:{s:s,s:{s:s}},s:{s:s},s:{s:s}},s:[s],"
		      "s:s,s:[{s:s,s:s,s:s}]}",
		      "description", desc, "properties", "apiVersion", "type",
		      "string", "items", "type", "array", "items", "$ref", ref,
		      "kind", "type", "string", "metadata", "$ref",
		      "#/components/schemas/"
		      "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
		      "required", "items", "type", "object",
		      "x-kubernetes-group-version-kind", "group", r->group,
		      "kind", r->list_kind, "version", r->version));
}

/* meta/v1 Status, what deletes and every error answer, with its details
   and causes. */
static void status_schemas(json_t *schemas)
{
	static const char pre[] =
	    "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.";
	char lm[128], det[128], cause[128];
	snprintf(lm, sizeof lm, "%sListMeta", pre);
	snprintf(det, sizeof det, "%sStatusDetails", pre);
	snprintf(cause, sizeof cause, "%sStatusCause", pre);
	json_object_set_new(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
	    json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:s}", "description",
		      "StatusCause provides more information about an "
		      "api.Status failure.",
		      "properties", "field", "type", "string", "message",
		      "type", "string", "reason", "type", "string", "type",
		      "object"));
	json_object_set_new(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
	    json_pack("{s:s,s:{s:{s:s,s:{s:s}},s:{s:s},s:{s:s},s:{s:s},"
		      "s:{s:s,s:s},s:{s:s}},s:s}",
		      "description",
		      "StatusDetails is a set of additional properties that "
		      "MAY be set by the server to provide additional "
		      "information about a response.",
		      "properties", "causes", "type", "array", "items", "$ref",
		      cause, "group", "type", "string", "kind", "type",
		      "string", "name", "type", "string", "retryAfterSeconds",
		      "type", "integer", "format", "int32", "uid", "type",
		      "string", "type", "object"));
	json_object_set_new(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
	    json_pack("{s:s,s:{s:{s:s},s:{s:s,s:s},s:{s:s},s:{s:s},s:{s:s},"
		      "s:{s:s},s:{s:s},s:{s:s}},s:s,s:[{s:s,s:s,s:s}]}",
		      "description",
		      "Status is a return value for calls that don't return "
		      "other objects.",
		      "properties", "apiVersion", "type", "string", "code",
		      "type", "integer", "format", "int32", "details", "$ref",
		      det, "kind", "type", "string", "message", "type",
		      "string", "metadata", "$ref", lm, "reason", "type",
		      "string", "status", "type", "string", "type", "object",
		      "x-kubernetes-group-version-kind", "group", "", "kind",
		      "Status", "version", "v1"));
}

static json_t *openapi_doc(const struct rset *rs, const char *g, const char *v)
{
	json_t *paths = json_object(), *schemas = json_object();
	bool any = false, any_custom = false;
	for (size_t i = 0; i < rs->n; i++) {
		const struct srv_resource *r = rs->a[i];
		if (!same_gv(r, g, v))
			continue;
		any = true;
		v3_paths(r, paths);
		any_custom |= kind_schemas(r, schemas);
		if (!r->custom)
			builtin_list_schema(r, schemas);
		for (const char *const *s = r->subresources; s && *s; s++) {
			const struct srv_resource *st =
			    srv_subresource_type(*s);
			if (st)
				kind_schemas(st, schemas);
		}
	}
	if (!any) {
		json_decref(paths);
		json_decref(schemas);
		return NULL;
	}
	json_t *patch = json_object();
	json_object_set_new(patch, "type", json_string("object"));
	json_object_set_new(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
			    patch);
	if (any_custom)
		meta_schemas(schemas);
	else
		list_meta_schema(schemas);
	status_schemas(schemas);
	json_t *doc = json_object();
	json_object_set_new(doc, "openapi", json_string("3.0.0"));
	json_t *info = json_object();
	json_object_set_new(info, "title", json_string("Kubernetes"));
	json_object_set_new(info, "version", json_string("v1.33.0"));
	json_object_set_new(doc, "info", info);
	json_object_set_new(doc, "paths", paths);
	json_t *comp = json_object();
	json_object_set_new(comp, "schemas", schemas);
	json_object_set_new(doc, "components", comp);
	return doc;
}

/*
 * OpenAPI documents by group version, built once for what they describe.
 * A document depends only on the descriptors of its group version, and a
 * CRD descriptor never changes while it keeps its serial, so the list of
 * (descriptor, serial) pairs is the document's fingerprint. The root lists
 * every group version's hash: with the cache it builds only the documents
 * whose CRDs changed, not all of them (1,000 CRDs: most of a second).
 * Entries the root no longer lists are dropped when it is next served.
 */
struct doc_ent {
	char key[320]; /* "<group>/<version>" */
	uint64_t fp;   /* fingerprint of the descriptors */
	char *text;    /* the document (owned) */
	size_t n;
	char etag[131]; /* "\"<sha512 hex>\"" */
	unsigned pass;	/* the root pass that last listed it */
};

static pthread_mutex_t doc_mu = PTHREAD_MUTEX_INITIALIZER;
static struct doc_ent *docs; /* under doc_mu */
static size_t n_docs, cap_docs;
static unsigned doc_pass;

/* The fingerprint of group g, version v's descriptors; of every one when g
   is NULL. */
static uint64_t doc_fingerprint(const struct rset *rs, const char *g,
				const char *v)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < rs->n; i++) {
		const struct srv_resource *r = rs->a[i];
		if (g && !same_gv(r, g, v))
			continue;
		uint64_t parts[2] = {(uint64_t)(uintptr_t)r, srv_cr_serial(r)};
		for (int k = 0; k < 2; k++)
			for (int b = 0; b < 64; b += 8)
				h = (h ^ ((parts[k] >> b) & 0xff)) *
				    1099511628211ull;
	}
	return h;
}

static struct doc_ent *doc_find(const char *key)
{
	for (size_t i = 0; i < n_docs; i++)
		if (!strcmp(docs[i].key, key))
			return &docs[i];
	return NULL;
}

/* Remember a document built for key (text taken). Under doc_mu. */
static void doc_store(const char *key, uint64_t fp, char *text, size_t n,
		      const char *etag, unsigned pass)
{
	struct doc_ent *d = doc_find(key);
	if (!d) {
		if (n_docs == cap_docs) {
			size_t cap = cap_docs ? 2 * cap_docs : 16;
			struct doc_ent *a = realloc(docs, cap * sizeof *a);
			if (!a) {
				free(text);
				return;
			}
			docs = a;
			cap_docs = cap;
		}
		d = &docs[n_docs++];
		snprintf(d->key, sizeof d->key, "%s", key);
	} else {
		free(d->text);
	}
	d->fp = fp;
	d->text = text;
	d->n = n;
	snprintf(d->etag, sizeof d->etag, "%s", etag);
	d->pass = pass;
}

/*
 * The document of group g, version v: its etag, and its text (new) when
 * text is not NULL. pass (0: none) marks it listed by that root pass.
 * Returns false when nothing is served there (or out of memory).
 */
static bool doc_get(const struct rset *rs, const char *g, const char *v,
		    unsigned pass, char **text, size_t *n, char etag[131])
{
	char key[320];
	snprintf(key, sizeof key, "%s/%s", g, v);
	uint64_t fp = doc_fingerprint(rs, g, v);
	pthread_mutex_lock(&doc_mu);
	struct doc_ent *d = doc_find(key);
	if (d && d->fp == fp) {
		memcpy(etag, d->etag, 131);
		if (pass)
			d->pass = pass;
		bool ok = true;
		if (text) {
			*text = malloc(d->n + 1);
			ok = *text != NULL;
			if (ok)
				memcpy(*text, d->text, d->n + 1);
			*n = d->n;
		}
		pthread_mutex_unlock(&doc_mu);
		return ok;
	}
	pthread_mutex_unlock(&doc_mu);
	json_t *doc = openapi_doc(rs, g, v);
	if (!doc)
		return false;
	size_t len;
	char *s = reg_json_dump(doc, &len);
	json_decref(doc);
	if (!s)
		return false;
	etag_of(s, len, etag);
	if (text) {
		char *copy = malloc(len + 1);
		if (!copy) {
			free(s);
			return false;
		}
		memcpy(copy, s, len + 1);
		*text = copy;
		*n = len;
	}
	pthread_mutex_lock(&doc_mu);
	doc_store(key, fp, s, len, etag, pass);
	pthread_mutex_unlock(&doc_mu);
	return true;
}

/* Drop the documents root pass `pass` did not list. */
static void doc_prune(unsigned pass)
{
	pthread_mutex_lock(&doc_mu);
	size_t k = 0;
	for (size_t i = 0; i < n_docs; i++) {
		if (docs[i].pass == pass)
			docs[k++] = docs[i];
		else
			free(docs[i].text);
	}
	n_docs = k;
	pthread_mutex_unlock(&doc_mu);
}

static void reply_openapi_root(struct srv_req *r)
{
	json_t *paths = json_object();
	struct rset rs;
	rset_get(&rs);
	pthread_mutex_lock(&doc_mu);
	unsigned pass = ++doc_pass;
	if (!pass)
		pass = ++doc_pass;
	pthread_mutex_unlock(&doc_mu);
	const char *gs[512];
	size_t ng = groups(&rs, gs, 512, false);
	for (size_t i = 0; i <= ng; i++) {
		const char *g = i == ng ? "" : gs[i];
		const char *vv[32];
		size_t nv = g[0] ? group_versions(&rs, g, vv, 32) : 1;
		if (!g[0])
			vv[0] = "v1";
		for (size_t vi = 0; vi < nv; vi++) {
			const char *v = vv[vi];
			char etag[131];
			if (!doc_get(&rs, g, v, pass, NULL, NULL, etag))
				continue;
			char key[300], url[600];
			if (g[0])
				snprintf(key, sizeof key, "apis/%s/%s", g, v);
			else
				snprintf(key, sizeof key, "api/%s", v);
			etag[129] = 0;
			snprintf(url, sizeof url, "/openapi/v3/%s?hash=%s", key,
				 etag + 1);
			json_t *o = json_object();
			json_object_set_new(o, "serverRelativeURL",
					    json_string(url));
			json_object_set_new(paths, key, o);
		}
	}
	rset_put(&rs);
	doc_prune(pass);
	json_t *root = json_object();
	json_object_set_new(root, "paths", paths);
	srv_reply_json(r, 200, root);
}

/* Whether If-None-Match inm matches etag as Go's http.ServeContent reads
   it (kube-openapi serves its documents so): a list of entity tags, each
   compared weakly (W/ ignored), or "*". */
static bool inm_matches(const char *inm, const char *etag)
{
	if (!inm)
		return false;
	const char *e = etag;
	if (!strncmp(e, "W/", 2))
		e += 2;
	size_t el = strlen(e);
	for (const char *p = inm;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			return false;
		if (*p == '*')
			return true;
		if (!strncmp(p, "W/", 2))
			p += 2;
		if (*p != '"')
			return false; /* scanETag: not a tag, stop */
		const char *q = strchr(p + 1, '"');
		if (!q)
			return false;
		if ((size_t)(q + 1 - p) == el && !memcmp(p, e, el))
			return true;
		p = q + 1;
	}
}

static void reply_openapi_gv(struct srv_req *r, const char *path)
{
	char g[256] = "", v[64] = "";
	if (sscanf(path, "/openapi/v3/apis/%255[^/]/%63[^/]", g, v) != 2 &&
	    sscanf(path, "/openapi/v3/api/%63[^/]", v) != 1) {
		not_found(r);
		return;
	}
	size_t n = 0;
	char *s = NULL, etag[131];
	struct rset rs;
	rset_get(&rs);
	bool ok = doc_get(&rs, g, v, 0, &s, &n, etag);
	rset_put(&rs);
	if (!ok) {
		not_found(r);
		return;
	}
	/* kube-openapi's handler3: JSON for a clause that allows it (we
	   serve no protobuf form), else 406 with no body */
	const char *acc = srv_accept(r);
	bool json = !acc || !*acc;
	for (const char *p = acc; !json && p && *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t tl = strcspn(p, ";, ");
		json = (tl == 16 && !strncasecmp(p, "application/json", 16)) ||
		       (tl == 13 && !strncasecmp(p, "application/*", 13)) ||
		       (tl == 3 && !strncmp(p, "*/*", 3));
		p += strcspn(p, ",");
	}
	if (!json) {
		free(s);
		const char *vary[] = {"Vary", "Accept", NULL};
		srv_reply_headers(r, 406, NULL, NULL, 0, vary);
		return;
	}
	/* ?hash=: the current one makes the answer cacheable for a year,
	   another redirects to the current (kubectl caches by URL) */
	const char *hash = srv_query(r, "hash");
	char bare[129];
	snprintf(bare, sizeof bare, "%.128s", etag + 1);
	if (hash && *hash && strcmp(hash, bare)) {
		free(s);
		char loc[600];
		if (g[0])
			snprintf(loc, sizeof loc, "/openapi/v3/apis/%s/%s?hash=%s",
				 g, v, bare);
		else
			snprintf(loc, sizeof loc, "/openapi/v3/api/%s?hash=%s", v,
				 bare);
		const char *h[] = {"Location", loc, "Vary", "Accept", NULL};
		srv_reply_headers(r, 301, NULL, NULL, 0, h);
		return;
	}
	char expires[64] = "";
	if (hash && *hash) {
		time_t later = time(NULL) + 365 * 24 * 3600;
		struct tm tm;
		gmtime_r(&later, &tm);
		strftime(expires, sizeof expires, "%a, %d %b %Y %H:%M:%S UTC",
			 &tm);
	}
	const char *h[] = {"ETag", etag, "Vary", "Accept",
			   expires[0] ? "Cache-Control" : NULL,
			   "public, immutable", "Expires", expires, NULL};
	if (inm_matches(srv_header(r, "If-None-Match"), etag)) {
		free(s);
		srv_reply_headers(r, 304, "application/json", NULL, 0, h);
		return;
	}
	srv_reply_headers(r, 200, "application/json", s, n, h);
}

/* One Swagger 2.0 operation of r: its action and group-version-kind, the
   write parameters where they apply, consumes for a patch. */
static json_t *v2_operation(const struct srv_resource *r, const char *action,
			    bool writes)
{
	json_t *op = json_object();
	json_object_set_new(op, "produces",
			    json_pack("[s,s]", "application/json",
				      "application/yaml"));
	if (!strcmp(action, "patch")) {
		const char *types[4];
		size_t nt = patch_types(r, types);
		json_t *c = json_array();
		for (size_t t = 0; t < nt; t++)
			json_array_append_new(c, json_string(types[t]));
		json_object_set_new(op, "consumes", c);
	}
	if (writes)
		json_object_set_new(op, "parameters", write_params(true));
	json_object_set_new(op, "responses",
			    json_pack("{s:{s:s}}", "200", "description", "OK"));
	json_object_set_new(op, "x-kubernetes-action", json_string(action));
	json_object_set_new(op, "x-kubernetes-group-version-kind", gvk(r));
	return op;
}

/* Drop "default" from schema s and every schema below it. */
static void prune_defaults(json_t *s, int depth)
{
	if (!json_is_object(s) || depth > SRV_SCHEMA_MAX_DEPTH)
		return;
	json_object_del(s, "default");
	const char *k;
	json_t *v;
	json_object_foreach(s, k, v)
	{
		if (!strcmp(k, "properties") ||
		    !strcmp(k, "patternProperties") ||
		    !strcmp(k, "definitions")) {
			const char *pk;
			json_t *pv;
			json_object_foreach(v, pk, pv)
			    prune_defaults(pv, depth + 1);
		} else if (!strcmp(k, "allOf") || !strcmp(k, "anyOf") ||
			   !strcmp(k, "oneOf")) {
			size_t i;
			json_t *it;
			json_array_foreach(v, i, it)
			    prune_defaults(it, depth + 1);
		} else if (!strcmp(k, "items") || !strcmp(k, "not") ||
			   !strcmp(k, "additionalProperties") ||
			   !strcmp(k, "additionalItems")) {
			if (json_is_array(v)) {
				size_t i;
				json_t *it;
				json_array_foreach(v, i, it)
				    prune_defaults(it, depth + 1);
			} else {
				prune_defaults(v, depth + 1);
			}
		}
	}
}

/* The /openapi/v2 document: every served resource's paths and operations,
   and the definitions of their kinds (see openapiv2.h). */
static json_t *openapi_v2_doc(const struct rset *rs)
{
	json_t *paths = json_object();
	for (size_t i = 0; i < rs->n; i++) {
		const struct srv_resource *r = rs->a[i];
		char coll[384], item[512];
		res_paths(r, coll, item);
		json_t *cp = json_object();
		json_object_set_new(cp, "get", v2_operation(r, "list", false));
		json_object_set_new(cp, "post", v2_operation(r, "post", true));
		json_object_set_new(paths, coll, cp);
		json_t *ip = json_object();
		json_object_set_new(ip, "get", v2_operation(r, "get", false));
		json_object_set_new(ip, "put", v2_operation(r, "put", true));
		json_object_set_new(ip, "patch", v2_operation(r, "patch", true));
		json_object_set_new(ip, "delete", v2_operation(r, "delete", false));
		json_object_set_new(paths, item, ip);
	}
	/* the definitions: every kind's v3 schemas in v2 form; a custom
	   resource's without its defaults (kube's CRD controller runs
	   kube-openapi's PruneDefaults on each CRD's v2 spec) */
	json_t *v3 = json_object(), *defs = json_object();
	json_t *custom = json_object();
	bool any_custom = false;
	for (size_t i = 0; i < rs->n; i++)
		any_custom |=
		    kind_schemas(rs->a[i], rs->a[i]->custom ? custom : v3);
	if (any_custom)
		meta_schemas(v3);
	const char *name;
	json_t *sch;
	json_object_foreach(custom, name, sch)
	{
		/* a copy: the schemas may be the CRD's own, which /openapi/v3
		   serves with their defaults */
		json_t *c = json_deep_copy(sch);
		prune_defaults(c, 0);
		json_object_set_new(v3, name, c ? c : json_object());
	}
	json_decref(custom);
	json_object_foreach(v3, name, sch)
	{
		/* a custom resource whose root keeps unknown fields is a bare
		   object in v2 (the builder's buildKubeNative: properties
		   would make kubectl refuse what it does not know) */
		if (json_is_true(json_object_get(
			sch, "x-kubernetes-preserve-unknown-fields"))) {
			json_object_set_new(
			    defs, name,
			    json_pack(
				"{s:s,s:O}", "type", "object",
				"x-kubernetes-group-version-kind",
				json_object_get(
				    sch, "x-kubernetes-group-version-kind")));
			continue;
		}
		json_object_set_new(defs, name, srv_openapi_v2_schema(sch));
	}
	json_decref(v3);
	return json_pack("{s:s,s:{s:s,s:s},s:o,s:o}", "swagger", "2.0", "info",
			 "title", "Kubernetes", "version", "v1.33.0", "paths",
			 paths, "definitions", defs);
}

/* GET /openapi/v2: JSON, or gnostic's protobuf when the Accept header
   names it before JSON (kubectl 1.27 and 1.28 ask for it alone). */
/* The /openapi/v2 document, built once for the resources it describes
   (with a thousand CRDs it is megabytes): its JSON text and protobuf
   bytes, with their ETags. Under doc_mu. */
static struct {
	bool built;
	uint64_t fp;
	char *json, *pb;
	size_t json_n, pb_n;
	char json_etag[131], pb_etag[131];
} v2c;

static void v2_cache_clear(void)
{
	free(v2c.json);
	free(v2c.pb);
	memset(&v2c, 0, sizeof v2c);
}

/* A copy of the document's JSON (or protobuf) and its ETag; NULL out of
   memory. */
static char *v2_get(bool pb, size_t *n, char etag[131])
{
	struct rset rs;
	rset_get(&rs);
	uint64_t fp = doc_fingerprint(&rs, NULL, NULL);
	pthread_mutex_lock(&doc_mu);
	bool hit = v2c.built && v2c.fp == fp;
	pthread_mutex_unlock(&doc_mu);
	if (!hit) {
		json_t *doc = openapi_v2_doc(&rs);
		size_t jn = 0, pn = 0;
		char *js = doc ? reg_json_dump(doc, &jn) : NULL;
		char *pbb = doc ? (char *)srv_openapi_v2_pb(doc, &pn) : NULL;
		json_decref(doc);
		if (!js || !pbb) {
			free(js);
			free(pbb);
			rset_put(&rs);
			return NULL;
		}
		pthread_mutex_lock(&doc_mu);
		v2_cache_clear();
		v2c.built = true;
		v2c.fp = fp;
		v2c.json = js;
		v2c.json_n = jn;
		v2c.pb = pbb;
		v2c.pb_n = pn;
		etag_of(js, jn, v2c.json_etag);
		etag_of(pbb, pn, v2c.pb_etag);
		pthread_mutex_unlock(&doc_mu);
	}
	rset_put(&rs);
	pthread_mutex_lock(&doc_mu);
	size_t len = pb ? v2c.pb_n : v2c.json_n;
	char *copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, pb ? v2c.pb : v2c.json, len);
		copy[len] = 0;
		*n = len;
		memcpy(etag, pb ? v2c.pb_etag : v2c.json_etag, 131);
	}
	pthread_mutex_unlock(&doc_mu);
	return copy;
}

/* GET /openapi/v2: JSON, or gnostic's protobuf when the Accept header
   names it before JSON (kubectl 1.27 and 1.28 ask for it alone). */
static void reply_openapi_v2(struct srv_req *r)
{
	const char *a = srv_accept(r);
	const char *pb =
	    a ? strstr(a, "application/com.github.proto-openapi.spec.v2")
	      : NULL;
	const char *js = a ? strstr(a, "application/json") : NULL;
	bool want_pb = pb && !(js && js < pb);
	size_t n = 0;
	char etag[131];
	char *bytes = v2_get(want_pb, &n, etag);
	if (!bytes) {
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	if (inm_matches(srv_header(r, "If-None-Match"), etag)) {
		free(bytes);
		bytes = NULL;
		n = 0;
	}
	srv_reply_extra(r, bytes ? 200 : 304,
			want_pb ? SRV_OPENAPI_V2_PB : "application/json", bytes,
			n, "ETag", etag);
}

void srv_openapi_cache_free(void)
{
	pthread_mutex_lock(&doc_mu);
	for (size_t i = 0; i < n_docs; i++)
		free(docs[i].text);
	free(docs);
	v2_cache_clear();
	docs = NULL;
	n_docs = cap_docs = 0;
	pthread_mutex_unlock(&doc_mu);
}

/* ------------------------------------------------------------ health */

/* A health answer as kube's healthz handlers write it: plain text, and
   nosniff. */
static void health_reply(struct srv_req *r, int code, const char *text,
			 size_t n)
{
	static const char *const h[] = {"X-Content-Type-Options", "nosniff",
					NULL};
	char *b = malloc(n + 1);
	if (!b) {
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	memcpy(b, text, n);
	b[n] = '\0';
	srv_reply_headers(r, code, "text/plain; charset=utf-8", b, n, h);
}

static void reply_health(struct srv_req *r, const char *path)
{
	const char *which = path + 1;
	const char *slash = strchr(which, '/');
	char name[16];
	size_t nl = slash ? (size_t)(slash - which) : strlen(which);
	snprintf(name, sizeof name, "%.*s", (int)nl, which);
	const char *check = slash ? slash + 1 : NULL;
	eng *e = srv_engine(r->s);
	struct eng_stats st;
	eng_stats(e, &st);
	bool store_ok = true;
	eng_rd *rd;
	if (eng_rd_begin(e, &rd) == LP_OK)
		eng_rd_end(rd);
	else
		store_ok = false;
	/* The compactor is healthy unless its last failure is newer than its
	   last success. */
	bool comp_ok = st.compactor_last_fail <= st.compactor_last_ok;
	/* kube's names where lapis has the same part (etcd is the embedded
	   store here: probes and scripts ask for /livez/etcd or exclude it),
	   lapis's own for the rest */
	struct {
		const char *name;
		bool ok;
	} checks[] = {{"ping", true},
		      {"log", true},
		      {"etcd", store_ok},
		      {"store", store_ok},
		      {"compactor", comp_ok}};
	size_t nc = sizeof checks / sizeof checks[0];
	if (check) {
		for (size_t i = 0; i < nc; i++) {
			if (!strcmp(check, checks[i].name)) {
				if (checks[i].ok)
					health_reply(r, 200, "ok", 2);
				else
					health_reply(r, 500,
						     "internal server error: "
						     "check failed",
						     35);
				return;
			}
		}
		not_found(r);
		return;
	}
	/* ?exclude=NAME (repeatable) passes a check without running it, as
	   kube's healthz handler does; names that match no check are listed
	   after the checks, sorted and quoted */
#define HEALTH_EXCLUDES 16
	const char *ex[HEALTH_EXCLUDES];
	size_t n_ex = srv_query_all(r, "exclude", ex, HEALTH_EXCLUDES);
	if (n_ex > HEALTH_EXCLUDES)
		n_ex = HEALTH_EXCLUDES;
	bool used[HEALTH_EXCLUDES] = {false};
	bool all = true;
	char body[2048];
	size_t o = 0;
	for (size_t i = 0; i < nc; i++) {
		bool skip = false;
		for (size_t j = 0; j < n_ex; j++)
			if (!strcmp(ex[j], checks[i].name))
				skip = used[j] = true;
		if (skip) {
			o += (size_t)snprintf(body + o, sizeof body - o,
					      "[+]%s excluded: ok\n",
					      checks[i].name);
			continue;
		}
		all = all && checks[i].ok;
		o += (size_t)snprintf(body + o, sizeof body - o, "[%c]%s %s\n",
				      checks[i].ok ? '+' : '-', checks[i].name,
				      checks[i].ok ? "ok" : "failed: reason withheld");
	}
	/* the unmatched names, once each, in sorted order */
	const char *left[HEALTH_EXCLUDES];
	size_t n_left = 0;
	for (size_t j = 0; j < n_ex; j++) {
		bool dup = used[j];
		for (size_t k = 0; k < n_left && !dup; k++)
			dup = !strcmp(left[k], ex[j]);
		size_t at = n_left;
		while (!dup && at > 0 && strcmp(left[at - 1], ex[j]) > 0) {
			left[at] = left[at - 1];
			at--;
		}
		if (!dup) {
			left[at] = ex[j];
			n_left++;
		}
	}
	for (size_t k = 0; k < n_left && o < sizeof body; k++)
		o +=
		    (size_t)snprintf(body + o, sizeof body - o, "%s\"%.60s\"%s",
				     k ? ""
				       : "warn: some health checks cannot be "
					 "excluded: no matches for ",
				     left[k], k + 1 < n_left ? ", " : "\n");
	if (o < sizeof body)
		o +=
		    (size_t)snprintf(body + o, sizeof body - o, "%s check %s\n",
				     name, all ? "passed" : "failed");
	if (o > sizeof body - 1)
		o = sizeof body - 1;
	bool verbose = srv_query(r, "verbose") != NULL;
	if (!verbose && all) {
		health_reply(r, 200, "ok", 2);
		return;
	}
	health_reply(r, all ? 200 : 500, body, o);
}

/* The build's date and time (__DATE__ "Mmm dd yyyy", __TIME__) as
   RFC 3339, kube's buildDate form. */
static void build_date(char *out, size_t n)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const char *d = __DATE__;
	const char *m = strstr(months, (char[4]){d[0], d[1], d[2], 0});
	int mon = m ? (int)(m - months) / 3 + 1 : 1;
	int day = atoi(d + 4), year = atoi(d + 7);
	snprintf(out, n, "%04d-%02d-%02dT%sZ", year, mon, day, __TIME__);
}

static void reply_version(struct srv_req *r)
{
#if defined(__x86_64__)
	static const char platform[] = "linux/amd64";
#elif defined(__aarch64__)
	static const char platform[] = "linux/arm64";
#else
	static const char platform[] = "linux/unknown";
#endif
	char date[32];
	build_date(date, sizeof date);
	/* kube 1.33's version.Info in its order: the API level lapis
	   implements (emulating 1.33, compatible with 1.32 as kube's
	   default), lapis's own build in the rest */
	json_t *o = json_object();
	json_object_set_new(o, "major", json_string(KUBE_MAJOR));
	json_object_set_new(o, "minor", json_string(KUBE_MINOR));
	json_object_set_new(o, "emulationMajor", json_string(KUBE_MAJOR));
	json_object_set_new(o, "emulationMinor", json_string(KUBE_MINOR));
	json_object_set_new(o, "minCompatibilityMajor", json_string(KUBE_MAJOR));
	json_object_set_new(o, "minCompatibilityMinor", json_string("32"));
	json_object_set_new(o, "gitVersion", json_string("v1.33.0"));
	json_object_set_new(o, "gitCommit", json_string("lapis-" LAPIS_VERSION));
	json_object_set_new(o, "gitTreeState", json_string("clean"));
	json_object_set_new(o, "buildDate", json_string(date));
	json_object_set_new(o, "goVersion", json_string("lapis " LAPIS_VERSION));
	json_object_set_new(o, "compiler", json_string("gcc"));
	json_object_set_new(o, "platform", json_string(platform));
	r->always_pretty = true; /* kube writes it with WriteRawJSON */
	srv_reply_json(r, 200, o);
}

/* The service account issuer's discovery documents, as kube serves them
   (pkg/routes/openidmetadata.go): the OIDC discovery document naming the
   issuer and this server's key set, and that key set; cacheable for an
   hour. */
static void reply_oidc(struct srv_req *r, bool keys)
{
	static const char *const hdrs[] = {"Cache-Control",
					   "public, max-age=3600", NULL};
	json_t *o;
	if (keys) {
		json_t *jwk = srv_sa_jwk(srv_sa(r->s));
		o = jwk ? json_pack("{s:[o]}", "keys", jwk) : NULL;
	} else {
		char url[600];
		srv_url(r->s, url, sizeof url);
		strncat(url, "/openid/v1/jwks", sizeof url - strlen(url) - 1);
		o = json_pack("{s:s,s:s,s:[s],s:[s],s:[s]}", "issuer",
			      SRV_SA_ISSUER, "jwks_uri", url,
			      "response_types_supported", "id_token",
			      "subject_types_supported", "public",
			      "id_token_signing_alg_values_supported", "ES256");
	}
	size_t n = 0;
	char *body = o ? reg_json_dump(o, &n) : NULL;
	json_decref(o);
	if (!body) {
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	srv_reply_headers(r, 200,
			  keys ? "application/jwk-set+json" : "application/json",
			  body, n, hdrs);
}

/* ------------------------------------------------------------ dispatch */

static bool path_is(const char *url, const char *p)
{
	size_t n = strlen(p);
	return !strncmp(url, p, n) && (url[n] == 0 || (url[n] == '/' && url[n + 1] == 0));
}

void srv_dispatch(struct srv_req *r)
{
	const char *url = r->url;
	struct srv_reqinfo *ri = &r->ri;
	if (!ri->is_resource) {
		bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
		if (!get) {
			/* go-restful's routes, for GET only */
			if (!strncmp(url, "/api", 4) || !strncmp(url, "/openapi", 8) ||
			    path_is(url, "/version") ||
			    path_is(url, "/.well-known/openid-configuration") ||
			    path_is(url, "/openid/v1/jwks"))
				srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
			else
				not_found(r);
			return;
		}
		if (!strcmp(url, "/healthz") || !strncmp(url, "/healthz/", 9) ||
		    !strcmp(url, "/livez") || !strncmp(url, "/livez/", 7) ||
		    !strcmp(url, "/readyz") || !strncmp(url, "/readyz/", 8)) {
			r->gzip = SRV_GZIP_NEVER;
			reply_health(r, url);
			return;
		}
		if (path_is(url, "/version")) {
			r->gzip = SRV_GZIP_NEVER;
			reply_version(r);
			return;
		}
		if (path_is(url, "/.well-known/openid-configuration") ||
		    path_is(url, "/openid/v1/jwks")) {
			r->gzip = SRV_GZIP_NEVER;
			reply_oidc(r, url[1] == 'o');
			return;
		}
		if (path_is(url, "/api")) {
			reply_api(r);
			return;
		}
		if (path_is(url, "/apis")) {
			reply_apis(r);
			return;
		}
		if (path_is(url, "/openapi/v2")) {
			/* behind kube-openapi's gziphandler */
			r->gzip = SRV_GZIP_OPENAPI_V2;
			reply_openapi_v2(r);
			return;
		}
		if (path_is(url, "/openapi/v3")) {
			r->gzip = SRV_GZIP_NEVER;
			reply_openapi_root(r);
			return;
		}
		if (!strncmp(url, "/openapi/v3/", 12)) {
			r->gzip = SRV_GZIP_NEVER;
			reply_openapi_gv(r, url);
			return;
		}
		if (path_is(url, "/api/v1")) {
			reply_resource_list(r, "", "v1");
			return;
		}
		char g[256], v[64];
		struct rset rs;
		rset_get(&rs);
		if (sscanf(url, "/apis/%255[^/]/%63[^/]", g, v) == 2) {
			size_t vl = strlen(v);
			bool tail_ok = !strncmp(url + 7 + strlen(g) + vl, "", 1) ||
				       !strcmp(url + 7 + strlen(g) + vl, "/");
			bool ok = has_gv(&rs, g, v) && tail_ok;
			rset_put(&rs);
			if (ok)
				reply_resource_list(r, g, v);
			else
				not_found(r);
			return;
		}
		if (sscanf(url, "/apis/%255[^/]", g) == 1 && group_version(&rs, g)) {
			if (!discovery_acceptable(r)) {
				rset_put(&rs);
				return;
			}
			/* the typed APIGroup: its TypeMeta first */
			json_t *o = json_pack("{s:s,s:s}", "kind", "APIGroup",
					      "apiVersion", "v1");
			json_t *body = api_group(&rs, g);
			rset_put(&rs);
			json_object_update(o, body);
			json_decref(body);
			srv_reply_json(r, 200, o);
			return;
		}
		rset_put(&rs);
		not_found(r);
		return;
	}
	/* /api/v1 and /apis/G/V themselves parse as resource requests with
	   no resource. */
	if (!ri->resource[0]) {
		if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
			srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
			return;
		}
		struct rset rs;
		rset_get(&rs);
		bool known = has_gv(&rs, ri->group, ri->version);
		rset_put(&rs);
		if ((!strcmp(ri->prefix, "api") && strcmp(ri->version, "v1")) || !known) {
			not_found(r);
			return;
		}
		reply_resource_list(r, ri->group, ri->version);
		return;
	}
	const struct srv_resource *res = srv_resource_lookup(
		ri->group, ri->version, ri->resource, &r->hold);
	if (!res || (!strcmp(ri->prefix, "api") && ri->group[0])) {
		not_found(r);
		return;
	}
	srv_handle_resource(r, res);
}
