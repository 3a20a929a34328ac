/*
 * gc.c -- the garbage collector: ownerReferences across every resource,
 * built-in and custom, keyed by owner UID (kube's pkg/controller/
 * garbagecollector, in our words).
 *
 * The graph. observe keeps, from every change the informer sees:
 *   owners   owner uid -> { dependent key -> blockOwnerDeletion }
 *   refs     dependent key -> [owner uid, ...]
 *   waiting  owner uid -> owner key, for owners deleting in the foreground
 * so that an owner's deletion finds its dependents without a scan. An
 * owner is known by its UID only: one recreated under the same name is a
 * different owner, and its old dependents are orphans of a gone owner.
 *
 * Queue keys are registry keys; sync(key) reads the object and:
 *  - deleting with the "orphan" finalizer: removes this owner from every
 *    dependent's ownerReferences, then drops the finalizer (the object
 *    goes when no finalizer is left);
 *  - deleting with "foregroundDeletion": queues every dependent (each is
 *    then deleted because its owner is waiting), and once no dependent
 *    with blockOwnerDeletion remains, drops the finalizer;
 *  - not deleting, with ownerReferences: looks each owner up (a live
 *    read, compared by UID): absent (gone, another UID, or a namespaced
 *    owner of a cluster-scoped dependent), waiting (deleting in the
 *    foreground) or solid. With a solid owner, references to absent and
 *    waiting owners are removed; with none, the object is deleted:
 *    Foreground when an owner waits and the object has dependents of its
 *    own, else as its own finalizers say (Orphan, Foreground) or
 *    Background.
 * Writes go through the server's delete and update strategies with the
 * object's UID as precondition, so a recreated object is never touched.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "lapis/log.h"
#include "registry/registry.h"
#include "registry/store.h"

#define F_ORPHAN "orphan"
#define F_FOREGROUND "foregroundDeletion"

struct gc {
	const struct ctl_store *s;
	pthread_mutex_t mu;
	json_t *owners;	 /* uid -> {depkey: blocking} */
	json_t *refs;	 /* depkey -> [uid] */
	json_t *waiting; /* uid -> key */
};

static lp_err gc_init(const struct ctl_store *s, void **ud)
{
	struct gc *g = calloc(1, sizeof *g);
	if (!g)
		return LP_E_NOMEM;
	g->s = s;
	pthread_mutex_init(&g->mu, NULL);
	g->owners = json_object();
	g->refs = json_object();
	g->waiting = json_object();
	if (!g->owners || !g->refs || !g->waiting) {
		json_decref(g->owners);
		json_decref(g->refs);
		json_decref(g->waiting);
		free(g);
		return LP_E_NOMEM;
	}
	*ud = g;
	return LP_OK;
}

static void gc_fini(void *ud)
{
	struct gc *g = ud;
	if (!g)
		return;
	json_decref(g->owners);
	json_decref(g->refs);
	json_decref(g->waiting);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

static json_t *owner_refs(const json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"),
			       "ownerReferences");
}

/* ------------------------------------------------------------ the graph */

/* Take key's edges out of the graph; queue the waiting owners it held.
   Locked. */
static void unlink_dep(struct gc *g, ctl *c, const char *key)
{
	json_t *old = json_object_get(g->refs, key);
	size_t i;
	json_t *u;
	json_array_foreach(old, i, u)
	{
		const char *uid = json_string_value(u);
		json_t *deps = json_object_get(g->owners, uid);
		json_object_del(deps, key);
		if (deps && json_object_size(deps) == 0)
			json_object_del(g->owners, uid);
		const char *wk =
		    json_string_value(json_object_get(g->waiting, uid));
		if (wk)
			ctl_add(c, wk);
	}
	json_object_del(g->refs, key);
}

/* Put key's edges (from its ownerReferences) into the graph. Locked. */
static void link_dep(struct gc *g, const char *key, const json_t *refs)
{
	json_t *uids = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(refs, i, r)
	{
		const char *uid = json_string_value(json_object_get(r, "uid"));
		if (!uid || !*uid)
			continue;
		json_t *deps = json_object_get(g->owners, uid);
		if (!deps) {
			deps = json_object();
			json_object_set_new(g->owners, uid, deps);
		}
		json_object_set_new(deps, key,
				    json_boolean(json_is_true(json_object_get(
					r, "blockOwnerDeletion"))));
		json_array_append_new(uids, json_string(uid));
	}
	if (json_array_size(uids))
		json_object_set_new(g->refs, key, uids);
	else
		json_decref(uids);
}

static void gc_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	struct gc *g = ud;
	bool refs = ctl_ev_mentions(ev, "ownerReferences");
	bool deleting =
	    ev->type != CTL_DELETE && ctl_ev_mentions(ev, "deletionTimestamp");
	bool owners =
	    json_object_size(g->owners) > 0 || json_object_size(g->waiting) > 0;
	if (!refs && !deleting && !(ev->type == CTL_DELETE && owners))
		return;
	json_t *obj = ctl_ev_obj(ev);
	if (!obj)
		return;
	pthread_mutex_lock(&g->mu);
	if (refs) {
		json_t *now = ev->type == CTL_DELETE ? NULL : owner_refs(obj);
		json_t *before =
		    ev->type == CTL_ADD ? NULL : owner_refs(ctl_ev_old(ev));
		bool changed = ev->type == CTL_ADD || !json_equal(now, before);
		if (changed || ev->type == CTL_DELETE) {
			unlink_dep(g, c, ev->key);
			if (now)
				link_dep(g, ev->key, now);
		}
		if (changed && now && json_array_size(now))
			ctl_add(c, ev->key);
	}
	const char *uid = ctl_meta_str(obj, "uid");
	if (ev->type == CTL_DELETE && uid) {
		json_t *deps = json_object_get(g->owners, uid);
		const char *dk;
		json_t *v;
		json_object_foreach(deps, dk, v) ctl_add(c, dk);
		json_object_del(g->waiting, uid);
	} else if (deleting && ctl_meta_str(obj, "deletionTimestamp") &&
		   (ctl_has_finalizer(obj, F_ORPHAN) ||
		    ctl_has_finalizer(obj, F_FOREGROUND))) {
		ctl_add(c, ev->key);
	}
	pthread_mutex_unlock(&g->mu);
}

/* A copy of the owner's dependents {key: blocking}. */
static json_t *dependents(struct gc *g, const char *uid)
{
	pthread_mutex_lock(&g->mu);
	json_t *d = json_deep_copy(json_object_get(g->owners, uid));
	pthread_mutex_unlock(&g->mu);
	return d ? d : json_object();
}

/* ------------------------------------------------------------ edits */

struct drop_refs {
	json_t *uids; /* {uid: true} */
};

static bool drop_refs_fn(json_t *obj, void *arg)
{
	const struct drop_refs *d = arg;
	json_t *a = owner_refs(obj);
	bool changed = false;
	for (size_t i = 0; i < json_array_size(a);) {
		const char *u = json_string_value(
		    json_object_get(json_array_get(a, i), "uid"));
		if (u && json_object_get(d->uids, u)) {
			json_array_remove(a, i);
			changed = true;
		} else {
			i++;
		}
	}
	if (changed && json_array_size(a) == 0)
		json_object_del(json_object_get(obj, "metadata"),
				"ownerReferences");
	return changed;
}

static bool drop_orphan_fn(json_t *obj, void *arg)
{
	(void)arg;
	return ctl_drop_finalizer(obj, F_ORPHAN);
}

static bool drop_foreground_fn(json_t *obj, void *arg)
{
	(void)arg;
	return ctl_drop_finalizer(obj, F_FOREGROUND);
}

static lp_err benign(lp_err rc)
{
	return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
}

/* ------------------------------------------------------------ sync */

static lp_err orphan_dependents(struct gc *g, ctl *c, const char *key,
				const char *uid, int64_t rev)
{
	const struct ctl_store *s = g->s;
	lp_err rc = ctl_wait_rev(c, rev); /* every dependent written before */
	if (rc)
		return rc;
	json_t *deps = dependents(g, uid);
	struct drop_refs d = {json_pack("{s:b}", uid, 1)};
	const char *dk;
	json_t *v;
	json_object_foreach(deps, dk, v)
	{
		rc = benign(s->mutate(s->ud, dk, NULL, drop_refs_fn, &d));
		if (rc)
			break;
	}
	json_decref(d.uids);
	json_decref(deps);
	if (rc)
		return rc;
	return benign(s->mutate(s->ud, key, uid, drop_orphan_fn, NULL));
}

static lp_err delete_dependents(struct gc *g, ctl *c, const char *key,
				const char *uid, int64_t rev)
{
	pthread_mutex_lock(&g->mu);
	json_object_set_new(g->waiting, uid, json_string(key));
	pthread_mutex_unlock(&g->mu);
	lp_err rc = ctl_wait_rev(c, rev);
	if (rc)
		return rc;
	json_t *deps = dependents(g, uid);
	size_t blocking = 0;
	const char *dk;
	json_t *v;
	json_object_foreach(deps, dk, v)
	{
		blocking += json_is_true(v);
		ctl_add(c, dk);
	}
	json_decref(deps);
	if (blocking)
		return LP_OK; /* queued again as they go */
	rc = benign(g->s->mutate(g->s->ud, key, uid, drop_foreground_fn, NULL));
	if (rc == LP_OK) {
		pthread_mutex_lock(&g->mu);
		json_object_del(g->waiting, uid);
		pthread_mutex_unlock(&g->mu);
	}
	return rc;
}

enum owner_state { OWNER_SOLID, OWNER_ABSENT, OWNER_WAITING };

static lp_err owner_state(struct gc *g, const json_t *ref, const char *ns,
			  enum owner_state *st)
{
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uid = json_string_value(json_object_get(ref, "uid"));
	char key[ENG_KEY_MAX + 1];
	bool namespaced = false;
	if (!av || !kind || !name || !uid)
		return LP_E_INVAL;
	lp_err rc = g->s->owner_key(g->s->ud, av, kind, ns, name, key,
				    sizeof key, &namespaced);
	if (rc == LP_E_INVAL || (rc == LP_OK && namespaced && !*ns)) {
		*st = OWNER_ABSENT; /* a name that cannot exist, or scope */
		return LP_OK;
	}
	if (rc)
		return rc; /* a kind not served (yet): retry later */
	struct reg_key k = {.len = strlen(key)};
	memcpy(k.bytes, key, k.len + 1);
	struct reg_obj o = {0};
	rc = reg_get(g->s->e, &k, &o);
	if (rc == LP_OK)
		rc = reg_obj_decode(&o);
	if (rc == LP_E_NOTFOUND) {
		*st = OWNER_ABSENT;
		rc = LP_OK;
	} else if (rc == LP_OK) {
		const char *ou = ctl_meta_str(o.obj, "uid");
		if (!ou || strcmp(ou, uid))
			*st = OWNER_ABSENT;
		else if (ctl_meta_str(o.obj, "deletionTimestamp") &&
			 ctl_has_finalizer(o.obj, F_FOREGROUND))
			*st = OWNER_WAITING;
		else
			*st = OWNER_SOLID;
	}
	reg_obj_free(&o);
	return rc;
}

static lp_err collect(struct gc *g, const char *key, const json_t *obj)
{
	const struct ctl_store *s = g->s;
	const char *uid = ctl_meta_str(obj, "uid");
	const char *ns = ctl_meta_str(obj, "namespace");
	json_t *refs = owner_refs(obj);
	size_t solid = 0, waiting = 0;
	struct drop_refs d = {json_object()};
	size_t i;
	json_t *r;
	lp_err rc = LP_OK;
	json_array_foreach(refs, i, r)
	{
		enum owner_state st = OWNER_SOLID;
		rc = owner_state(g, r, ns ? ns : "", &st);
		if (rc)
			break;
		if (st == OWNER_SOLID) {
			solid++;
			continue;
		}
		waiting += st == OWNER_WAITING;
		const char *ou = json_string_value(json_object_get(r, "uid"));
		if (ou)
			json_object_set_new(d.uids, ou, json_true());
	}
	if (rc == LP_OK && solid > 0 && json_object_size(d.uids) > 0) {
		rc = benign(s->mutate(s->ud, key, uid, drop_refs_fn, &d));
	} else if (rc == LP_OK && solid == 0 && json_array_size(refs) > 0) {
		const char *policy = "Background";
		json_t *own = uid ? dependents(g, uid) : json_object();
		if (waiting && json_object_size(own) > 0)
			policy = "Foreground";
		else if (ctl_has_finalizer(obj, F_ORPHAN))
			policy = "Orphan";
		else if (ctl_has_finalizer(obj, F_FOREGROUND))
			policy = "Foreground";
		json_decref(own);
		lp_debug("gc: deleting %s (%s)", key, policy);
		rc = benign(s->del(s->ud, key, uid, policy));
	}
	json_decref(d.uids);
	return rc;
}

static lp_err gc_sync(void *ud, ctl *c, const char *key)
{
	struct gc *g = ud;
	struct reg_key k = {.len = strlen(key)};
	if (k.len > ENG_KEY_MAX)
		return LP_OK;
	memcpy(k.bytes, key, k.len + 1);
	struct reg_obj cur = {0};
	lp_err rc = reg_get(g->s->e, &k, &cur);
	if (rc == LP_OK)
		rc = reg_obj_decode(&cur);
	if (rc) {
		reg_obj_free(&cur);
		return rc == LP_E_NOTFOUND || rc == LP_E_CORRUPT ? LP_OK : rc;
	}
	const char *uid = ctl_meta_str(cur.obj, "uid");
	if (!uid) {
		rc = LP_OK;
	} else if (ctl_meta_str(cur.obj, "deletionTimestamp")) {
		if (ctl_has_finalizer(cur.obj, F_ORPHAN))
			rc = orphan_dependents(g, c, key, uid, cur.mod);
		else if (ctl_has_finalizer(cur.obj, F_FOREGROUND))
			rc = delete_dependents(g, c, key, uid, cur.mod);
	} else {
		rc = collect(g, key, cur.obj);
	}
	reg_obj_free(&cur);
	return rc;
}

const struct ctl_def ctl_gc = {
    .name = "gc",
    .workers = 2,
    .init = gc_init,
    .fini = gc_fini,
    .observe = gc_observe,
    .sync = gc_sync,
};
