/*
 * ctlops.c -- what the server lends its controllers (controllers/ctl.h,
 * struct ctl_store): deletes and read-modify-writes through the same
 * strategies as DELETE and PUT, the owner lookup by apiVersion and kind,
 * the list of namespaced resources, built-in and custom, and the CRD
 * naming decision's write (crd.c, under the serving map's lock).
 *
 * A registry key is mapped back to its resource by prefix: every served
 * resource's collection prefix (/registry/[<group>/]<plural>/) is tried;
 * the rest is <ns>/<name> or <name>. A custom resource with several
 * versions matches through any of them: storage is one.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../controllers/ctl.h"
#include "crd.h"
#include "ctlops.h"
#include "objects.h"
#include "registry/registry.h"
#include "resources.h"

struct target {
	const struct srv_resource *res;
	char ns[256];
	char name[256];
	void *hold;
};

static lp_err resolve(const char *key, struct target *t)
{
	const struct srv_resource **all = NULL;
	size_t n = srv_resources_stored(&all, &t->hold);
	lp_err rc = LP_E_NOTFOUND;
	for (size_t i = 0; i < n && rc == LP_E_NOTFOUND; i++) {
		struct reg_key p;
		if (reg_list_prefix(srv_resource_store_group(all[i]),
				    all[i]->resource, NULL, &p) ||
		    strncmp(key, p.bytes, p.len))
			continue;
		const char *rest = key + p.len;
		const char *slash = strchr(rest, '/');
		if (all[i]->namespaced) {
			if (!slash || (size_t)(slash - rest) >= sizeof t->ns ||
			    strchr(slash + 1, '/'))
				continue;
			memcpy(t->ns, rest, (size_t)(slash - rest));
			t->ns[slash - rest] = '\0';
			rest = slash + 1;
		} else if (slash) {
			continue;
		}
		if (strlen(rest) >= sizeof t->name || !*rest)
			continue;
		strcpy(t->name, rest);
		t->res = all[i];
		rc = LP_OK;
	}
	free(all);
	if (rc) {
		srv_resources_release(t->hold);
		t->hold = NULL;
	}
	return rc;
}

static lp_err op_del(void *ud, const char *key, const char *uid,
		     const char *policy)
{
	struct target t = {0};
	lp_err rc = resolve(key, &t);
	if (rc == LP_OK) {
		rc = srv_delete_object(ud, t.res, t.ns, t.name, uid, policy);
		srv_resources_release(t.hold);
	}
	return rc;
}

static lp_err op_mutate(void *ud, const char *key, const char *uid,
			const struct ctl_as *as,
			bool (*fn)(json_t *obj, void *arg), void *arg)
{
	struct target t = {0};
	lp_err rc = resolve(key, &t);
	if (rc == LP_OK) {
		rc = srv_mutate_object(ud, t.res, t.ns, t.name, uid,
				       as ? as->manager : NULL,
				       as ? as->subresource : NULL, fn, arg);
		srv_resources_release(t.hold);
	}
	return rc;
}

/* Whether s is exactly strings.ToLower(kind). */
static bool lower_is(const char *kind, const char *s)
{
	for (; *kind && *s; kind++, s++)
		if (tolower((unsigned char)*kind) != *s)
			return false;
	return !*kind && !*s;
}

static lp_err op_owner_key(void *ud, const char *api_version, const char *kind,
			   const char *ns, const char *name, char *key,
			   size_t key_n, bool *namespaced)
{
	(void)ud;
	char group[256] = "";
	const char *version = api_version;
	const char *slash = strrchr(api_version, '/');
	if (slash) {
		if ((size_t)(slash - api_version) >= sizeof group)
			return LP_E_NOTFOUND;
		memcpy(group, api_version, (size_t)(slash - api_version));
		group[slash - api_version] = '\0';
		version = slash + 1;
	}
	const struct srv_resource **all = NULL;
	void *hold = NULL;
	size_t n = srv_resources_all(&all, &hold);
	/* kube's collector maps the reference through discovery's REST
	   mapper: the version as written (one not served never maps, and
	   the dependent waits), the kind as discovery names it or in lower
	   case; "<Kind>List" maps to a guessed resource that does not
	   exist, so its owner is absent */
	const struct srv_resource *found = NULL;
	bool list_kind = false;
	for (size_t i = 0; i < n && !found; i++) {
		if (strcmp(all[i]->group, group) ||
		    strcmp(all[i]->version, version))
			continue;
		size_t kl = strlen(all[i]->kind);
		if (!strcmp(all[i]->kind, kind) || lower_is(all[i]->kind, kind))
			found = all[i];
		else if (!strncmp(all[i]->kind, kind, kl) &&
			 !strcmp(kind + kl, "List"))
			list_kind = true;
	}
	lp_err rc = list_kind ? LP_E_INVAL : LP_E_NOTFOUND;
	if (found) {
		struct reg_key k;
		*namespaced = found->namespaced;
		rc = reg_object_key(srv_resource_store_group(found),
				    found->resource,
				    found->namespaced ? ns : NULL, name, &k);
		if (rc == LP_OK && k.len < key_n)
			memcpy(key, k.bytes, k.len + 1);
		else
			rc = LP_E_INVAL;
	}
	free(all);
	srv_resources_release(hold);
	return rc;
}

static void op_ns_resources(void *ud,
			    void (*fn)(void *arg, const char *prefix,
				       const char *gr),
			    void *arg)
{
	(void)ud;
	const struct srv_resource **all = NULL;
	void *hold = NULL;
	size_t n = srv_resources_all(&all, &hold);
	json_t *seen = json_object();
	for (size_t i = 0; i < n && seen; i++) {
		struct reg_key p;
		if (!all[i]->namespaced ||
		    reg_list_prefix(srv_resource_store_group(all[i]),
				    all[i]->resource, NULL, &p) ||
		    json_object_get(seen, p.bytes))
			continue;
		json_object_set_new(seen, p.bytes, json_true());
		char gr[320];
		snprintf(gr, sizeof gr, "%s.%s", all[i]->resource,
			 all[i]->group);
		fn(arg, p.bytes, gr);
	}
	json_decref(seen);
	free(all);
	srv_resources_release(hold);
}

static lp_err op_crd_names(void *ud, const char *name, const char *uid,
			   bool *wrote)
{
	return srv_crd_settle(ud, name, uid, wrote);
}

static long op_crd_fence(void *ud, const char *name, const char *uid)
{
	(void)ud;
	return srv_crd_fence(name, uid);
}

static lp_err op_event(void *ud, const json_t *involved, const char *type,
		       const char *reason, const char *message,
		       const char *component)
{
	/* kube-controller-manager's client writes the events of its
	   controllers */
	return srv_record_event(ud, involved, type, reason, message, component,
				"kube-controller-manager");
}

void srv_ctl_store(eng *e, struct ctl_store *out)
{
	*out = (struct ctl_store){
	    .e = e,
	    .ud = e,
	    .del = op_del,
	    .mutate = op_mutate,
	    .owner_key = op_owner_key,
	    .ns_resources = op_ns_resources,
	    .crd_names = op_crd_names,
	    .crd_fence = op_crd_fence,
	    .event = op_event,
	};
}
