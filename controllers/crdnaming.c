/*
 * crdnaming.c -- the CRD naming controller, with the establishing
 * controller's step folded in: gives a CRD that waits for its names the
 * ones that became free (kube's apiextensions pkg/controller/status and
 * establish, in our words; reference §8.3).
 *
 * The API server decides a CRD's names and conditions inline when the CRD
 * is created or updated (server/crd.c), so a CRD without conflicts is
 * Established by the time its create returns. What is left for this
 * controller are the re-checks: a CRD whose names clash waits, NamesAccepted
 * False, until the clash goes -- the other CRD is deleted or renamed -- and
 * then gets its names (and Established) from here. It also settles a CRD
 * whose inline status write did not happen (a full store, a crash between
 * the create and its status, a store written by an older lapis).
 *
 * observe (informer thread): on any change of a CRD, note whether it waits
 * (reg_crd_names_settled false) and queue it if so; then queue every CRD of
 * its group that waits, since any change in a group (a delete above all)
 * may free names. Queue keys are CRD names (<plural>.<group>).
 * sync (one worker, so decisions of this controller never race each
 * other): read the CRD; if it still waits, ask the store (ctl_store
 * crd_names) to decide against its group and write the status, with its
 * UID and resourceVersion as preconditions. The server makes that decision
 * under the same lock as its inline ones, so this controller and a create
 * never both accept one name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "lapis/log.h"
#include "registry/crdnames.h"
#include "registry/registry.h"
#include "registry/store.h"


struct naming {
	const struct ctl_store *s;
	/* CRDs that wait for names: group -> {name: true}. Informer thread
	   only. */
	json_t *waiting;
};

static lp_err naming_init(const struct ctl_store *s, void **ud)
{
	struct naming *n = calloc(1, sizeof *n);
	if (!n)
		return LP_E_NOMEM;
	n->s = s;
	n->waiting = json_object();
	if (!n->waiting) {
		free(n);
		return LP_E_NOMEM;
	}
	*ud = n;
	return LP_OK;
}

static void naming_fini(void *ud)
{
	struct naming *n = ud;
	if (n)
		json_decref(n->waiting);
	free(n);
}

static const char *group_of(const json_t *crd)
{
	return json_string_value(
	    json_object_get(json_object_get(crd, "spec"), "group"));
}

/* Record whether name (of group) waits; the group's set goes when empty. */
static void note(struct naming *n, const char *group, const char *name,
		 bool waits)
{
	json_t *set = json_object_get(n->waiting, group);
	if (waits) {
		if (!set) {
			set = json_object();
			json_object_set_new(n->waiting, group, set);
		}
		json_object_set_new(set, name, json_true());
		return;
	}
	json_object_del(set, name);
	if (set && json_object_size(set) == 0)
		json_object_del(n->waiting, group);
}

static void naming_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	struct naming *n = ud;
	if (strncmp(ev->key, CRD_PREFIX, strlen(CRD_PREFIX)))
		return;
	const char *name = ev->key + strlen(CRD_PREFIX);
	json_t *crd = ctl_ev_obj(ev);
	const char *group = group_of(crd);
	if (!group)
		return;
	bool waits = ev->type != CTL_DELETE && !reg_crd_names_settled(crd);
	note(n, group, name, waits);
	const char *other;
	json_t *v;
	json_object_foreach(json_object_get(n->waiting, group), other, v)
	    ctl_add(c, other);
}

static lp_err naming_sync(void *ud, ctl *c, const char *name)
{
	(void)c;
	struct naming *n = ud;
	const struct ctl_store *s = n->s;
	struct reg_key k;
	if (reg_object_key(CRD_GROUP, CRD_RESOURCE, NULL, name, &k))
		return LP_OK;
	struct reg_obj cur = {0};
	lp_err rc = reg_get(s->e, &k, &cur);
	if (rc == LP_OK)
		rc = reg_obj_decode(&cur);
	if (rc || reg_crd_names_settled(cur.obj)) {
		reg_obj_free(&cur);
		return rc == LP_E_NOTFOUND ? LP_OK : rc;
	}
	char uid[64];
	snprintf(uid, sizeof uid, "%s",
		 ctl_meta_str(cur.obj, "uid") ? ctl_meta_str(cur.obj, "uid")
					      : "");
	reg_obj_free(&cur);
	bool wrote = false;
	rc = s->crd_names(s->ud, name, uid[0] ? uid : NULL, &wrote);
	if (wrote)
		lp_debug("crd-naming: %s: status written", name);
	/* Gone, replaced or changed meanwhile: its own event queues the
	   CRD again if it still waits. */
	return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
}

const struct ctl_def ctl_crd_naming = {
    .name = "crd-naming",
    .workers = 1,
    .init = naming_init,
    .fini = naming_fini,
    .observe = naming_observe,
    .sync = naming_sync,
    .whole_prefix = CRD_PREFIX,
};
