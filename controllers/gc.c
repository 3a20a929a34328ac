/*
 * gc.c -- the garbage collector: ownerReferences across every resource,
 * built-in and custom, keyed by owner UID (kube's pkg/controller/
 * garbagecollector, in our words).
 *
 * The graph. The shared informer keeps the index "ownerUID" (owner uid ->
 * the objects whose ownerReferences name it, with their decoded state:
 * blockOwnerDeletion is read from there), declared in ctl_gc.indexers,
 * so that an owner's deletion finds its dependents without a scan; the
 * edges a dependent had before a change are in the event's old state. The
 * GC itself keeps only
 *   waiting  owner uid -> owner key, for owners deleting in the foreground
 * (its own decision, not the store's). An owner is known by its UID only:
 * one recreated under the same name is a different owner, and its old
 * dependents are orphans of a gone owner. The index changes before the
 * informer calls observe and is never older than ctl_wait_rev says.
 *
 * Queue keys are registry keys; sync(key) reads the object and:
 *  - deleting with the "orphan" finalizer: removes this owner from every
 *    dependent's ownerReferences, then drops the finalizer (the object
 *    goes when no finalizer is left);
 *  - deleting with "foregroundDeletion": queues every dependent (each is
 *    then deleted because its owner is waiting), and once no dependent
 *    with blockOwnerDeletion remains, drops the finalizer;
 *  - not deleting, with ownerReferences: looks each owner up (a live
 *    read, compared by UID): absent (gone, another UID), waiting
 *    (deleting in the foreground) or solid; a namespaced owner of a
 *    cluster-scoped dependent leaves the dependent alone, as in kube.
 *    With a solid owner, references to absent and waiting owners are
 *    removed; with none, the object is deleted:
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
#define IDX_OWNER "ownerUID"

/* kube's garbage collector patches from kube-controller-manager */
static const struct ctl_as as_gc = {"kube-controller-manager", NULL};

/* kube's absentOwnerCache holds 500 identities */
#define ABSENT_MAX 500

struct gc {
	const struct ctl_store *s;
	pthread_mutex_t mu; /* guards waiting and absent */
	json_t *waiting;    /* uid -> key */
	/* The uids of objects seen deleted, newest last (kube's
	   absentOwnerCache): a dependent of one is dangling even when its
	   owner's kind is no longer served (its CRD deleted after it). */
	json_t *absent; /* "<namespace>/<uid>" -> true */
	char *absent_ring[ABSENT_MAX];
	size_t absent_next;
	/* "<dependent uid>/<owner uid>" of the OwnerRefInvalidNamespace
	   events recorded (once each, as kube's graph reports a reference
	   once); emptied when it grows past REPORTED_MAX */
	json_t *reported;
};

#define REPORTED_MAX 4096
/* namespaces looked through for an owner of another namespace */
#define NS_SCAN_MAX 4096

static lp_err gc_init(const struct ctl_store *s, void **ud)
{
	struct gc *g = calloc(1, sizeof *g);
	if (!g)
		return LP_E_NOMEM;
	g->s = s;
	pthread_mutex_init(&g->mu, NULL);
	g->waiting = json_object();
	g->absent = json_object();
	g->reported = json_object();
	if (!g->waiting || !g->absent || !g->reported) {
		json_decref(g->waiting);
		json_decref(g->absent);
		json_decref(g->reported);
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
	json_decref(g->waiting);
	json_decref(g->absent);
	json_decref(g->reported);
	for (size_t i = 0; i < ABSENT_MAX; i++)
		free(g->absent_ring[i]);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* Remember that the object id ("<namespace>/<uid>") is gone (under g->mu),
   forgetting the oldest beyond ABSENT_MAX. */
static void absent_add(struct gc *g, const char *id)
{
	if (json_object_get(g->absent, id))
		return;
	char *u = strdup(id);
	if (!u)
		return;
	char **slot = &g->absent_ring[g->absent_next];
	if (*slot)
		json_object_del(g->absent, *slot);
	free(*slot);
	*slot = u;
	g->absent_next = (g->absent_next + 1) % ABSENT_MAX;
	json_object_set_new(g->absent, u, json_true());
}

/* Was the owner uid seen deleted, cluster-scoped or in the dependent's
   namespace ns (kube keys its cache by the owner's namespace too, so a
   cluster-scoped dependent never finds a namespaced owner there)? */
static bool absent_has(struct gc *g, const char *ns, const char *uid)
{
	char a[300], b[300];
	snprintf(a, sizeof a, "/%.200s", uid);
	snprintf(b, sizeof b, "%.63s/%.200s", ns, uid);
	pthread_mutex_lock(&g->mu);
	bool has =
	    json_object_get(g->absent, a) || json_object_get(g->absent, b);
	pthread_mutex_unlock(&g->mu);
	return has;
}

static json_t *owner_refs(const json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"),
			       "ownerReferences");
}

/* ------------------------------------------------------------ the graph */

/* The ownerUID indexer: the owner UIDs an object names. Informer thread. */
static void index_owner_uid(void *ud, const struct inf_obj *o,
			    struct inf_emit *em)
{
	(void)ud;
	size_t i;
	json_t *r;
	json_array_foreach(owner_refs(o->json), i, r)
	{
		const char *uid = json_string_value(json_object_get(r, "uid"));
		if (uid && *uid)
			inf_emit(em, uid);
	}
}

struct dep_walk {
	const char *uid;
	json_t *deps; /* {key: blocking} */
};

/* kube's GC leaves Events out of its graph (DefaultIgnoredResources:
   events in both groups): their TTL removes them, never an owner. */
static bool ignored(const char *key)
{
	return !strncmp(key, "/registry/events/", 17) ||
	       !strncmp(key, "/registry/events.k8s.io/", 24);
}

/* Under the informer's cache lock: copy what is needed, nothing more. */
static int add_dependent(void *ud, const struct inf_obj *o)
{
	struct dep_walk *w = ud;
	char key[ENG_KEY_MAX + 1];
	if (o->key_len > ENG_KEY_MAX)
		return 0;
	memcpy(key, o->key, o->key_len);
	key[o->key_len] = '\0';
	if (ignored(key))
		return 0;
	bool blocking = false;
	size_t i;
	json_t *r;
	json_array_foreach(owner_refs(o->json), i, r)
	{
		const char *u = json_string_value(json_object_get(r, "uid"));
		if (u && !strcmp(u, w->uid) &&
		    json_is_true(json_object_get(r, "blockOwnerDeletion")))
			blocking = true;
	}
	json_object_set_new(w->deps, key, json_boolean(blocking));
	return 0;
}

/* The owner's dependents {key: blocking}, as the informer knows them now.
   New; an empty object when there are none or no memory for them. */
static json_t *dependents(ctl *c, const char *uid)
{
	struct dep_walk w = {uid, json_object()};
	if (w.deps)
		ctl_index(c, IDX_OWNER, uid, add_dependent, &w);
	return w.deps ? w.deps : json_object();
}

/* A dependent's edges to refs (its ownerReferences before a change) are
   gone: queue the owners among them that wait for their dependents. */
static void queue_waiting_owners(struct gc *g, ctl *c, const json_t *refs)
{
	pthread_mutex_lock(&g->mu);
	size_t i;
	json_t *r;
	json_array_foreach(refs, i, r)
	{
		const char *uid = json_string_value(json_object_get(r, "uid"));
		const char *wk =
		    uid ? json_string_value(json_object_get(g->waiting, uid))
			: NULL;
		if (wk)
			ctl_add(c, wk);
	}
	pthread_mutex_unlock(&g->mu);
}

static void gc_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	struct gc *g = ud;
	if (ignored(ev->key))
		return;
	bool refs = ctl_ev_mentions(ev, "ownerReferences");
	bool deleting =
	    ev->type != CTL_DELETE && ctl_ev_mentions(ev, "deletionTimestamp");
	if (!refs && !deleting && ev->type != CTL_DELETE)
		return;
	json_t *obj = ctl_ev_obj(ev);
	if (!obj)
		return;
	if (refs) {
		json_t *now = ev->type == CTL_DELETE ? NULL : owner_refs(obj);
		json_t *before =
		    ev->type == CTL_ADD ? NULL : owner_refs(ctl_ev_old(ev));
		bool changed = ev->type == CTL_ADD || !json_equal(now, before);
		if (changed || ev->type == CTL_DELETE)
			queue_waiting_owners(g, c, before);
		if (changed && now && json_array_size(now))
			ctl_add(c, ev->key);
	}
	const char *uid = ctl_meta_str(obj, "uid");
	if (ev->type == CTL_DELETE && uid) {
		json_t *deps = dependents(c, uid);
		const char *dk;
		json_t *v;
		json_object_foreach(deps, dk, v) ctl_add(c, dk);
		json_decref(deps);
		pthread_mutex_lock(&g->mu);
		json_object_del(g->waiting, uid);
		char id[300];
		const char *ons = ctl_meta_str(obj, "namespace");
		snprintf(id, sizeof id, "%.63s/%.200s", ons ? ons : "", uid);
		absent_add(g, id);
		pthread_mutex_unlock(&g->mu);
	} else if (deleting && ctl_meta_str(obj, "deletionTimestamp") &&
		   (ctl_has_finalizer(obj, F_ORPHAN) ||
		    ctl_has_finalizer(obj, F_FOREGROUND))) {
		ctl_add(c, ev->key);
	}
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

/* Every blocking ownerReference made non-blocking (kube's
   unblockOwnerReferences). */
static bool unblock_refs_fn(json_t *obj, void *arg)
{
	(void)arg;
	bool changed = false;
	size_t i;
	json_t *r;
	json_array_foreach(owner_refs(obj), i, r)
	{
		if (json_is_true(json_object_get(r, "blockOwnerDeletion"))) {
			json_object_set_new(r, "blockOwnerDeletion",
					    json_false());
			changed = true;
		}
	}
	return changed;
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
	json_t *deps = dependents(c, uid);
	struct drop_refs d = {json_pack("{s:b}", uid, 1)};
	const char *dk;
	json_t *v;
	json_object_foreach(deps, dk, v)
	{
		rc = benign(s->mutate(s->ud, dk, NULL, &as_gc, drop_refs_fn, &d));
		if (rc)
			break;
	}
	json_decref(d.uids);
	json_decref(deps);
	if (rc)
		return rc;
	return benign(s->mutate(s->ud, key, uid, &as_gc, drop_orphan_fn, NULL));
}

static bool dependent_waits(struct gc *g, const char *key);

static lp_err delete_dependents(struct gc *g, ctl *c, const char *key,
				const char *uid, int64_t rev)
{
	pthread_mutex_lock(&g->mu);
	json_object_set_new(g->waiting, uid, json_string(key));
	pthread_mutex_unlock(&g->mu);
	lp_err rc = ctl_wait_rev(c, rev);
	if (rc)
		return rc;
	json_t *deps = dependents(c, uid);
	size_t blocking = 0;
	const char *dk;
	json_t *v;
	json_object_foreach(deps, dk, v)
	{
		blocking += json_is_true(v);
		/* one waiting for its own dependents is not queued (kube's
		   processDeletingDependentsItem): an object owning itself,
		   or two owning each other, would otherwise queue each other
		   for ever */
		if (!dependent_waits(g, dk))
			ctl_add(c, dk);
	}
	json_decref(deps);
	if (blocking)
		return LP_OK; /* queued again as they go */
	rc = benign(g->s->mutate(g->s->ud, key, uid, &as_gc,
				      drop_foreground_fn, NULL));
	if (rc == LP_OK) {
		pthread_mutex_lock(&g->mu);
		json_object_del(g->waiting, uid);
		pthread_mutex_unlock(&g->mu);
	}
	return rc;
}

/* The stored object at key (a registry key string), decoded into *o (free
   with reg_obj_free, also on failure). LP_E_NOTFOUND for none, or for a
   key too long to be one. */
static lp_err read_obj(struct gc *g, const char *key, struct reg_obj *o)
{
	return ctl_read(g->s, key, o);
}

/* Is obj deleting in the foreground (waiting for its dependents)? */
static bool waits_for_dependents(const json_t *obj)
{
	return ctl_meta_str(obj, "deletionTimestamp") &&
	       ctl_has_finalizer(obj, F_FOREGROUND);
}

/* OWNER_INVALID: a namespaced owner of a cluster-scoped dependent. kube's
   GC gives up on such a dependent (namespacedOwnerOfClusterScopedObjectErr:
   it never resolves on retry) and leaves it alone, whatever its other
   owners are. */
enum owner_state { OWNER_SOLID, OWNER_ABSENT, OWNER_WAITING, OWNER_INVALID };

/* *missed (may be NULL): the owner, of a namespaced kind, was looked up
   and not found where the dependent names it (OWNER_ABSENT), or
   OWNER_INVALID: it may be in another namespace. */
static lp_err owner_state(struct gc *g, const json_t *ref, const char *ns,
			  enum owner_state *st, bool *missed)
{
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uid = json_string_value(json_object_get(ref, "uid"));
	char key[ENG_KEY_MAX + 1];
	bool namespaced = false;
	if (!av || !kind || !name || !uid)
		return LP_E_INVAL;
	if (absent_has(g, ns, uid)) {
		/* seen deleted: gone whether or not its kind is still served
		   (kube's isDangling reads its absentOwnerCache first) */
		*st = OWNER_ABSENT;
		return LP_OK;
	}
	lp_err rc = g->s->owner_key(g->s->ud, av, kind, ns, name, key,
				    sizeof key, &namespaced);
	if (rc == LP_OK && namespaced && !*ns) {
		*st = OWNER_INVALID;
		if (missed)
			*missed = true;
		return LP_OK;
	}
	if (rc == LP_E_INVAL) {
		*st = OWNER_ABSENT; /* a name that cannot exist */
		return LP_OK;
	}
	if (rc)
		return rc; /* a kind not served (yet): retry later */
	struct reg_obj o = {0};
	rc = read_obj(g, key, &o);
	if (rc == LP_E_NOTFOUND) {
		*st = OWNER_ABSENT;
		if (missed)
			*missed = namespaced;
		rc = LP_OK;
	} else if (rc == LP_OK) {
		const char *ou = ctl_meta_str(o.obj, "uid");
		if (!ou || strcmp(ou, uid)) {
			*st = OWNER_ABSENT;
			if (missed)
				*missed = namespaced;
		} else if (waits_for_dependents(o.obj))
			*st = OWNER_WAITING;
		else
			*st = OWNER_SOLID;
	}
	reg_obj_free(&o);
	return rc;
}

/* Is the object at key deleting in the foreground? */
static bool dependent_waits(struct gc *g, const char *key)
{
	struct reg_obj o = {0};
	bool waits =
	    read_obj(g, key, &o) == LP_OK && waits_for_dependents(o.obj);
	reg_obj_free(&o);
	return waits;
}

/* Is one of deps (keys) itself deleting in the foreground? */
static bool a_dependent_waits(struct gc *g, json_t *deps)
{
	const char *dk;
	json_t *v;
	json_object_foreach(deps, dk, v)
	{
		if (dependent_waits(g, dk))
			return true;
	}
	return false;
}

struct ns_walk {
	char **names;
	size_t n, cap;
	size_t prefix_len;
};

static enum eng_take ns_name(void *ud, const struct eng_record *rec)
{
	struct ns_walk *w = ud;
	if (rec->key_len <= w->prefix_len || w->n >= NS_SCAN_MAX)
		return ENG_SKIP;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		char **v = realloc(w->names, cap * sizeof *v);
		if (!v)
			return ENG_SKIP;
		w->names = v;
		w->cap = cap;
	}
	char *name = strndup((const char *)rec->key + w->prefix_len,
			     rec->key_len - w->prefix_len);
	if (name)
		w->names[w->n++] = name;
	return ENG_SKIP;
}

/* kube's graph reports a dependent whose owner, by its UID, lives in
   another namespace (reportInvalidNamespaceOwnerRef): a Warning Event
   OwnerRefInvalidNamespace about the dependent, once. ns: the
   dependent's ("" cluster-scoped). */
static void report_foreign_owner(struct gc *g, const json_t *dep,
				 const json_t *ref, const char *ns)
{
	const char *duid = ctl_meta_str(dep, "uid");
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *ouid = json_string_value(json_object_get(ref, "uid"));
	char id[160];
	if (!duid || !av || !kind || !name || !ouid || !g->s->event ||
	    snprintf(id, sizeof id, "%s/%s", duid, ouid) >= (int)sizeof id)
		return;
	pthread_mutex_lock(&g->mu);
	bool seen = json_object_get(g->reported, id) != NULL;
	pthread_mutex_unlock(&g->mu);
	if (seen)
		return;
	/* the namespaces, then the owner's name in each */
	struct reg_key p;
	if (reg_list_prefix("", "namespaces", NULL, &p))
		return;
	struct ns_walk w = {.prefix_len = p.len};
	eng_rd *rd;
	if (eng_rd_begin(g->s->e, &rd) == LP_OK) {
		struct eng_range_req q = {.prefix = p.bytes,
					  .prefix_len = p.len};
		struct eng_range_res res;
		(void)eng_range(rd, &q, ns_name, &w, &res);
		eng_rd_end(rd);
	}
	bool found = false;
	for (size_t i = 0; i < w.n && !found; i++) {
		char key[ENG_KEY_MAX + 1];
		bool namespaced = false;
		if (!strcmp(w.names[i], ns) ||
		    g->s->owner_key(g->s->ud, av, kind, w.names[i], name, key,
				    sizeof key, &namespaced) ||
		    !namespaced)
			continue;
		struct reg_obj o = {0};
		if (read_obj(g, key, &o) == LP_OK) {
			const char *u = ctl_meta_str(o.obj, "uid");
			found = u && !strcmp(u, ouid);
		}
		reg_obj_free(&o);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.names[i]);
	free(w.names);
	if (!found)
		return;
	json_t *inv = json_object();
	const char *dk = json_string_value(json_object_get(dep, "kind"));
	const char *dav = json_string_value(json_object_get(dep, "apiVersion"));
	json_object_set_new(inv, "kind", json_string(dk ? dk : ""));
	if (*ns)
		json_object_set_new(inv, "namespace", json_string(ns));
	const char *dn = ctl_meta_str(dep, "name");
	json_object_set_new(inv, "name", json_string(dn ? dn : ""));
	json_object_set_new(inv, "uid", json_string(duid));
	json_object_set_new(inv, "apiVersion", json_string(dav ? dav : ""));
	char msg[1200];
	snprintf(msg, sizeof msg,
		 "ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not "
		 "exist in namespace \"%s\"",
		 av, kind, ns, name, ouid, ns);
	if (g->s->event(g->s->ud, inv, "Warning", "OwnerRefInvalidNamespace",
			msg, "garbage-collector-controller") == LP_OK) {
		pthread_mutex_lock(&g->mu);
		if (json_object_size(g->reported) >= REPORTED_MAX)
			json_object_clear(g->reported);
		json_object_set_new(g->reported, id, json_true());
		pthread_mutex_unlock(&g->mu);
	}
	json_decref(inv);
}

static lp_err collect(struct gc *g, ctl *c, const char *key, const json_t *obj)
{
	const struct ctl_store *s = g->s;
	const char *uid = ctl_meta_str(obj, "uid");
	const char *ns = ctl_meta_str(obj, "namespace");
	json_t *refs = owner_refs(obj);
	size_t solid = 0, waiting = 0;
	bool invalid = false;
	struct drop_refs d = {json_object()};
	size_t i;
	json_t *r;
	lp_err rc = LP_OK;
	json_array_foreach(refs, i, r)
	{
		enum owner_state st = OWNER_SOLID;
		bool missed = false;
		rc = owner_state(g, r, ns ? ns : "", &st, &missed);
		if (rc)
			break;
		if (missed)
			report_foreign_owner(g, obj, r, ns ? ns : "");
		if (st == OWNER_INVALID) {
			lp_debug("gc: %s is cluster-scoped with a namespaced "
				 "owner: left alone",
				 key);
			invalid = true;
			break;
		}
		if (st == OWNER_SOLID) {
			solid++;
			continue;
		}
		waiting += st == OWNER_WAITING;
		const char *ou = json_string_value(json_object_get(r, "uid"));
		if (ou)
			json_object_set_new(d.uids, ou, json_true());
	}
	if (invalid) {
		/* nothing: see OWNER_INVALID */
	} else if (rc == LP_OK && solid > 0 && json_object_size(d.uids) > 0) {
		rc = benign(s->mutate(s->ud, key, uid, &as_gc, drop_refs_fn, &d));
	} else if (rc == LP_OK && solid == 0 && json_array_size(refs) > 0) {
		const char *policy = "Background";
		json_t *own = uid ? dependents(c, uid) : json_object();
		if (waiting && json_object_size(own) > 0) {
			policy = "Foreground";
			/* an owner waits for this object, which would wait
			   for a dependent that waits too: a cycle of
			   blocking references (or so it may seem). As kube,
			   this object's references stop blocking first, so
			   its owners can go, then it goes. */
			if (a_dependent_waits(g, own))
				rc = benign(s->mutate(s->ud, key, uid, &as_gc,
						      unblock_refs_fn, NULL));
		} else if (ctl_has_finalizer(obj, F_ORPHAN))
			policy = "Orphan";
		else if (ctl_has_finalizer(obj, F_FOREGROUND))
			policy = "Foreground";
		json_decref(own);
		if (rc == LP_OK) {
			lp_debug("gc: deleting %s (%s)", key, policy);
			rc = benign(s->del(s->ud, key, uid, policy));
		}
	}
	json_decref(d.uids);
	return rc;
}

static lp_err gc_sync(void *ud, ctl *c, const char *key)
{
	struct gc *g = ud;
	if (ignored(key))
		return LP_OK;
	struct reg_obj cur = {0};
	lp_err rc = read_obj(g, key, &cur);
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
		rc = collect(g, c, key, cur.obj);
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
    .indexers =
	(const struct ctl_indexer[]){
	    {IDX_OWNER, index_owner_uid, "ownerReferences"}, {NULL, NULL}},
};
