/*
 * ctl.h -- the controller runtime: controllers (a work queue, worker
 * threads and a sync function) fed by one shared informer over the whole
 * store, and the built-in controllers that run on it (DESIGN.md
 * "Controllers"; issue 4).
 *
 * The shape is client-go's: an informer lists and watches the store
 * in-process and tells each controller of every change (observe, on the
 * informer thread: decide which keys need work and queue them); worker
 * threads take keys from the controller's queue and call sync(key), which
 * reads the current state and acts. A key is never synced by two workers
 * at once; a sync that fails is retried with the queue's per-key back-off.
 *
 * Controllers never call our own HTTP. They read the store through the
 * engine and the registry, and they write through struct ctl_store: the
 * API server's own delete and update strategies (finalizers, deletion
 * timestamps, side keys, the CRD serving map), handed in by the server so
 * that this library links the registry and never the HTTP parts of
 * server/ (DESIGN.md "Rules of the house").
 *
 * Threads: ctl_mgr_start() starts the informer thread and each
 * controller's workers; the workers wait for the informer's first list
 * (has-synced) before they take work, so no controller acts on a partial
 * view of the store. ctl_mgr_stop() stops the informer, then the workers
 * (each finishes the key it holds); call it after the HTTP server stopped
 * and before the store closes.
 */
#ifndef LAPIS_CONTROLLERS_CTL_H
#define LAPIS_CONTROLLERS_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "informer.h"
#include "lapis/engine.h"
#include "lapis/err.h"

/*
 * What controllers ask of the API server (server/ctlops.c fills it). Keys
 * are registry keys (/registry/...). uid, when not NULL, is a
 * precondition: the object under key must have that metadata.uid, else
 * LP_E_CONFLICT (it was deleted and recreated under the same name).
 */
/* Who makes a controller's write, as kube's managedFields name it: the
   manager (the first word of kube's controller's User-Agent) and the
   subresource it writes through (NULL: the object itself). */
struct ctl_as {
	const char *manager;
	const char *subresource;
};

struct ctl_store {
	eng *e;
	void *ud;
	/* Delete as DELETE does, with propagationPolicy policy ("Background",
	   "Foreground", "Orphan"; NULL: the resource's default). An object
	   with finalizers is only marked (deletionTimestamp).
	   Errors: LP_E_NOTFOUND, LP_E_CONFLICT, storage errors. */
	lp_err (*del)(void *ud, const char *key, const char *uid,
		      const char *policy);
	/* Read-modify-write: fn edits the object in place and says whether
	   it changed anything (nothing is written when not). Retried on
	   concurrent writes. Removing the last finalizer of an object being
	   deleted deletes it, as an update does. The write is recorded in
	   the object's managedFields as an update by `as` (NULL: not).
	   Errors: LP_E_NOTFOUND, LP_E_CONFLICT, storage errors. */
	lp_err (*mutate)(void *ud, const char *key, const char *uid,
			 const struct ctl_as *as,
			 bool (*fn)(json_t *obj, void *arg), void *arg);
	/* The key of the object an ownerReference names (apiVersion, kind,
	   name) seen from a dependent in namespace ns ("" when the dependent
	   is cluster-scoped). *namespaced: the owner's kind is namespaced.
	   Errors: LP_E_NOTFOUND (no served kind), LP_E_INVAL (bad name). */
	lp_err (*owner_key)(void *ud, const char *api_version, const char *kind,
			    const char *ns, const char *name, char *key,
			    size_t key_n, bool *namespaced);
	/* Every namespaced resource: fn(prefix, gr) where prefix + ns + "/"
	   holds the objects of namespace ns and gr is "<plural>.<group>"
	   ("configmaps." for the core group, as kube's messages write it). */
	void (*ns_resources)(void *ud,
			     void (*fn)(void *arg, const char *prefix,
					const char *gr),
			     void *arg);
	/* CRDs: decide the accepted names and the NamesAccepted and
	   Established conditions of the CRD named name, if it waits for
	   any, against the names the other CRDs and the built-in resources
	   of its group hold (registry/crdnames.h), and write them as its
	   status conditioned on the resourceVersion it read. The API
	   server serializes this with its own inline decisions at create
	   and update, so no two CRDs accept one name. *wrote: a status was
	   written. Errors: LP_E_NOTFOUND, LP_E_CONFLICT (uid, or the CRD
	   changed meanwhile), storage errors. */
	lp_err (*crd_names)(void *ud, const char *name, const char *uid,
			    bool *wrote);
	/* CRDs: refuse every later create of instances of the CRD named
	   name with that uid, and say how many creates are still on their
	   way to the store (wait for 0 before the last look at what is
	   left). */
	long (*crd_fence)(void *ud, const char *name, const char *uid);
	/* Record a core/v1 Event about involved (an ObjectReference: kind,
	   apiVersion, namespace, name, uid) as client-go's recorder does for
	   a controller whose event source is component. */
	lp_err (*event)(void *ud, const json_t *involved, const char *type,
			const char *reason, const char *message,
			const char *component);
};

/* ------------------------------------------------------------ events */

enum ctl_ev_type { CTL_ADD, CTL_UPDATE, CTL_DELETE };

/* One change the shared informer saw, with the objects the informer
   decoded (once for every controller and every index). Everything is
   borrowed for the call. */
struct ctl_ev {
	enum ctl_ev_type type;
	const char *key;	   /* NUL-terminated */
	const struct inf_obj *old; /* update: before; delete: last; add: NULL */
	const struct inf_obj *cur; /* add/update: after; delete: NULL */
	inf *inf;		   /* the manager's: decodes old and cur */
};

/* The decoded objects (NULL when absent or not a JSON object). They are
   the informer's cache, shared with other threads: read only, never
   modify them (json_deep_copy to edit). */
json_t *ctl_ev_old(struct ctl_ev *ev);
json_t *ctl_ev_cur(struct ctl_ev *ev);
/* The object the event is about: cur, or for a delete the last state. */
json_t *ctl_ev_obj(struct ctl_ev *ev);
/* Whether the raw bytes of old or cur contain s (a cheap filter before
   decoding). Outside whole_prefix, the informer keeps only an object's
   kind, apiVersion and metadata (without managedFields): look for what
   is there. */
bool ctl_ev_mentions(const struct ctl_ev *ev, const char *s);

/* ------------------------------------------------------------ controllers */

typedef struct ctl ctl;

/* An index a controller declares on the shared informer, registered by
   the manager before the informer starts and queried with ctl_index.
   Controllers that declare the same name share one index (and must give
   the same fn). fn runs on the informer thread; see inf_index_fn. */
struct ctl_indexer {
	const char *name;
	inf_index_fn fn;
	/* A string the bytes of every object fn gives a value for contain
	   (the member it reads, such as "ownerReferences"); the informer
	   decodes as they arrive only the objects that contain one, the
	   rest when a handler asks (inf_opts.eager). NULL: every object. */
	const char *needs;
};

struct ctl_def {
	const char *name; /* also the --controllers name */
	unsigned workers;
	/* Per-controller state: made at ctl_mgr_new, freed at ctl_mgr_free. */
	lp_err (*init)(const struct ctl_store *s, void **ud);
	void (*fini)(void *ud);
	/* Informer thread: queue the keys this change concerns (ctl_add).
	   Must not block or write the store. */
	void (*observe)(void *ud, ctl *c, struct ctl_ev *ev);
	/* A worker: bring key to its wanted state. LP_OK: done (the key's
	   back-off is reset); an error: retried after the key's back-off. */
	lp_err (*sync)(void *ud, ctl *c, const char *key);
	/* The indexes it queries; ends with a NULL name. NULL: none. */
	const struct ctl_indexer *indexers;
	/* The key prefix of the objects whose observe events and index
	   callbacks need more than apiVersion, kind and metadata; NULL:
	   metadata is enough. Every other object is decoded only that far
	   (a write costs the informer a fraction of a whole decode). */
	const char *whole_prefix;
};

/* Queue key (deduplicated while waiting). Any thread. */
void ctl_add(ctl *c, const char *key);
/* Queue key after delay_ms. Any thread. */
void ctl_add_after(ctl *c, const char *key, int64_t delay_ms);
/* The time the delays count in (monotonic), in ms. Any thread. */
int64_t ctl_now_ms(void);
/* The store the controller was made with. */
const struct ctl_store *ctl_store_of(ctl *c);
/* Wait until the shared informer has applied revision rev (a revision
   that wrote under /registry/). Errors: LP_E_CLOSED. */
lp_err ctl_wait_rev(ctl *c, int64_t rev);

/*
 * Call fn for every object of the shared informer's cache that indexer
 * (a name a controller declared, or "namespace") gives value, under the
 * cache lock: fn must not block, queue work or call into the informer;
 * obj and obj->json are borrowed for the call (read only). Any thread.
 * Returns the number of objects visited (0 for an unknown indexer).
 */
size_t ctl_index(ctl *c, const char *indexer, const char *value,
		 int (*fn)(void *ud, const struct inf_obj *obj), void *ud);

/* The event TTL controller's TTL (eventttl.c): an Event is deleted this
   long after its last write (kube-apiserver's --event-ttl, default 1h);
   <= 0: never. Set it before the controllers start. */
void ctl_set_event_ttl(int64_t ms);
int64_t ctl_event_ttl(void);

/* The built-in controllers, in start order; NULL-terminated. */
extern const struct ctl_def *const ctl_builtin[];

/* ------------------------------------------------------------ manager */

typedef struct ctl_mgr ctl_mgr;

/*
 * Parse a --controllers value: a comma-separated list of controller names,
 * "*" (every controller), and "-name" (not that one), applied in order
 * from nothing: "*,-gc" is every controller but the garbage collector, ""
 * none. "garbagecollector" is another name of "gc". On success *mask has
 * bit i set for ctl_builtin[i]. Errors: LP_E_INVAL with msg saying which
 * name is unknown.
 */
lp_err ctl_parse_enabled(const char *spec, uint32_t *mask, char *msg,
			 size_t msg_n);

/* Make the controllers of mask (not started). The store is copied.
   Errors: LP_E_NOMEM, what a controller's init answers. */
lp_err ctl_mgr_new(const struct ctl_store *s, uint32_t mask, ctl_mgr **out);
/* Start the shared informer and every worker. Errors: LP_E_NOMEM. */
lp_err ctl_mgr_start(ctl_mgr *m);
/* Stop everything and wait for it. Idempotent. */
void ctl_mgr_stop(ctl_mgr *m);
/* Stop and free. NULL ok. */
void ctl_mgr_free(ctl_mgr *m);

/* ------------------------------------------------------------ helpers */

/* The stored object at key (a registry key string), decoded into *o (free
   with reg_obj_free, also on failure). Errors: LP_E_NOTFOUND for none, or
   for a key too long to be one; storage and decoding errors. */
struct reg_obj;
lp_err ctl_read(const struct ctl_store *s, const char *key, struct reg_obj *o);

/* metadata.<k> as a string, or NULL. */
const char *ctl_meta_str(const json_t *obj, const char *k);
/* Whether metadata.finalizers holds f. */
bool ctl_has_finalizer(const json_t *obj, const char *f);
/* Remove f from metadata.finalizers; true when it was there. */
bool ctl_drop_finalizer(json_t *obj, const char *f);

/* A status condition as kube writes them. */
struct ctl_cond {
	const char *type;
	const char *status; /* "True", "False", "Unknown" */
	const char *reason;
	const char *message;
};
/* Set c in obj's status.conditions (made when missing), kube's way:
   lastTransitionTime changes only when the status does. True when obj
   changed. */
bool ctl_set_condition(json_t *obj, const struct ctl_cond *c);

#endif
