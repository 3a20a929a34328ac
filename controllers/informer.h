/*
 * informer.h -- an informer over the engine: a cache of every key under a
 * prefix, kept current by a list and a watch, with handlers told of every
 * change (client-go's SharedInformer, in-process, without HTTP: DESIGN.md
 * "Controllers").
 *
 * What it does
 *  1. Lists the prefix at one revision (in pages, each its own short
 *     snapshot at that revision), fills the cache (key -> value bytes and
 *     revisions, copied) and calls on_add for each key; then has_synced.
 *  2. Watches the prefix from the list's revision and applies each event
 *     to the cache, calling on_add, on_update or on_delete.
 *  3. When the watch ends with LP_E_OVERFLOW (it fell behind the ring) or
 *     LP_E_COMPACTED (the history it needs is gone), lists again and calls
 *     the handlers for the differences between the cache and the new list:
 *     on_add for new keys, on_update for keys whose mod_rev changed, and
 *     on_delete, with the last state the cache knew, for keys gone. So a
 *     handler may miss intermediate states, never the latest one, and the
 *     cache always ends equal to a fresh list.
 *  4. Decodes each new state once (jansson), keeps the tree beside the
 *     bytes and hands that same tree to every handler and reader: it is
 *     never modified after the informer made it, so any thread may read it.
 *     To keep it past a handler or a query, take a reference with inf_keep:
 *     never json_incref/json_decref a shared tree (jansson 2.14 decrements
 *     with release order only, so the thread that frees a tree would not
 *     be ordered after other threads' reads of it).
 *  5. Keeps indexes over the cache: by namespace (metadata.namespace,
 *     "" for cluster-scoped objects, as client-go's namespace index) and
 *     custom indexers registered before inf_start (a function from an
 *     object to zero or more string values, such as owner UIDs). An index
 *     changes with the cache, under the same lock, so a query sees every
 *     key in the state the cache holds at that instant; on a re-list it
 *     follows the differences, and ends equal to indexes built from a
 *     fresh list.
 *
 * Threads
 *  - inf_start() starts the informer's own thread; it alone writes the
 *    cache and calls the handlers, one at a time, never with a lock held.
 *    Handlers may call inf_get/inf_list/inf_index and queue work (wq_add);
 *    they must
 *    not call inf_stop/inf_free or block for long (the cache and the
 *    handlers of this informer wait).
 *  - Every other function is thread-safe.
 *  - The engine outlives the informer: inf_stop() before eng_close() (an
 *    informer may hold a read snapshot while listing).
 */
#ifndef LAPIS_CONTROLLERS_INFORMER_H
#define LAPIS_CONTROLLERS_INFORMER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lapis/engine.h"
#include "lapis/err.h"

typedef struct inf inf;

/* An object as the informer knows it. Pointers are borrowed: in a handler,
   valid until it returns; from inf_get, owned by the inf_item. */
struct inf_obj {
	const uint8_t *key;
	size_t key_len;
	/* As the engine returns it (slot filled); or, where inf_opts.whole
	   says no and the value is laid out as the registry stores objects,
	   only its head: kind, apiVersion and metadata without managedFields
	   (JSON, all a metadata-only consumer reads). */
	const uint8_t *value;
	size_t value_len;
	int64_t create_rev;
	int64_t mod_rev;
	int64_t version;
	/* The value decoded once (only its apiVersion, kind and metadata
	   where inf_opts.whole says so), or NULL (a raw informer, the value
	   is not a JSON object, or inf_opts.eager left it for inf_json).
	   Read-only for everyone: shared with other threads. Borrowed like
	   the rest; inf_keep to keep it longer. */
	json_t *json;
	struct inf_tree *tree; /* json's holder, for inf_keep; opaque */
};

/* A reference to an object's decoded tree. inf_keep(obj) returns obj->json
   and counts a reference to it (NULL: no tree, nothing counted); drop it
   with inf_unkeep(that json's obj->tree). Any thread. */
struct inf_tree;
json_t *inf_keep(const struct inf_obj *obj);
/* Drop a reference inf_keep counted; the last one frees the tree. NULL
   ok. */
void inf_unkeep(struct inf_tree *t);

/* obj's decoded tree, as inf_obj.json, decoding it now when inf_opts.eager
   left it for later (the cache keeps the result, so it is decoded once).
   Informer thread only, on an object a handler was given. NULL: no tree
   (a raw informer, not a JSON object, or no memory for it now). */
json_t *inf_json(inf *i, const struct inf_obj *obj);

/* Handlers, each optional (NULL: not called). Run on the informer thread. */
struct inf_handlers {
	void (*on_add)(void *ud, const struct inf_obj *obj);
	void (*on_update)(void *ud, const struct inf_obj *old,
			  const struct inf_obj *cur);
	/* last: the last state the informer knew (for a watched delete,
	   the object just before it was deleted). */
	void (*on_delete)(void *ud, const struct inf_obj *last);
	void *ud;
};

struct inf_opts {
	const char *name;   /* for logs; copied; NULL: "" */
	eng *e;		    /* borrowed: outlives the informer */
	const void *prefix; /* copied; prefix_len 0: every key */
	size_t prefix_len;
	struct inf_handlers handlers;
	uint32_t list_page; /* keys per list page (one snapshot each);
			       0: 500 */
	int raw;	    /* 1: keep bytes only: no decoding, no indexes */
	/* Which values to decode whole. NULL: every one. Otherwise a value
	   whose key it rejects gets a json holding at least its apiVersion,
	   kind and metadata (what metadata-only consumers read, at a
	   fraction of the cost of decoding a large spec or data), or the
	   whole object when the value is not laid out as the registry
	   stores objects; the cache then keeps only those members' bytes
	   too (inf_obj.value). Informer thread; must be a pure function. */
	bool (*whole)(void *ud, const uint8_t *key, size_t len);
	void *whole_ud;
	/* Which values to decode as they arrive. NULL: every one. A value it
	   rejects is cached as bytes only: its json is NULL, it is in no
	   index (the namespace index included), and a handler decodes it on
	   demand with inf_json. So every index function must give no value
	   for the objects it rejects. Informer thread; a pure function. */
	bool (*eager)(void *ud, const struct inf_obj *obj);
	void *eager_ud;
	/* After handling a batch of events, the informer lets more gather
	   for this long before it looks again (one wake-up per batch, not per
	   commit, under a steady stream); inf_wait_rev and inf_stop end the
	   pause. 0: 2 ms. */
	uint32_t batch_ms;
	uint32_t resync_ms; /* every this often, on_update(obj, obj) for every
			       cached object (client-go's periodic resync:
			       controllers re-check their state); 0: never */
};

/* The namespace index, there in every informer that decodes (holding, as
   every index, only the objects inf_opts.eager lets it decode at once). */
#define INF_IDX_NAMESPACE 0u
/* Indexes per informer, the namespace index included. */
#define INF_MAX_INDEXERS 16u

/* An indexer's function gives an object's index values by calling
   inf_emit(em, value) for each (zero or more; repeats count once). It runs
   on the informer thread with no lock held, once per new state, and must
   be a pure function of obj (obj->json may be NULL). */
struct inf_emit;
typedef void (*inf_index_fn)(void *ud, const struct inf_obj *obj,
			     struct inf_emit *em);
/* Give one index value (copied; NULL or longer than 1 KiB: ignored). */
void inf_emit(struct inf_emit *em, const char *value);

/* Statistics, for tests and /metrics. */
struct inf_stats {
	int64_t rev;			 /* the revision the cache reflects */
	uint64_t objects;		 /* keys in the cache */
	uint64_t lists;			 /* complete lists (1 + relists) */
	uint64_t relist_overflow;	 /* relists after LP_E_OVERFLOW */
	uint64_t relist_compacted;	 /* relists after LP_E_COMPACTED */
	uint64_t relist_error;		 /* relists after another error */
	uint64_t events;		 /* watch events applied */
	uint64_t adds, updates, deletes; /* handler calls */
	uint64_t decode_errors;		 /* values that are not JSON objects */
	uint64_t index_values;		 /* distinct (indexer, value) pairs */
	uint64_t index_rebuilds;	 /* after no memory for an index */
	uint64_t resyncs;		 /* periodic resyncs done */
	uint64_t pauses;		 /* pauses between batches begun */
};

/*
 * Make an informer (not started). Errors: LP_E_NOMEM, LP_E_INVAL (no
 * engine, prefix longer than ENG_KEY_MAX). *out is new: inf_free().
 */
lp_err inf_new(const struct inf_opts *o, inf **out);

/*
 * Add an indexer named name (copied) before inf_start. *id receives its
 * number for inf_index. Errors: LP_E_INVAL (started, a raw informer, a
 * name already taken, or INF_MAX_INDEXERS reached), LP_E_NOMEM.
 */
lp_err inf_add_indexer(inf *i, const char *name, inf_index_fn fn, void *ud,
		       unsigned *id);

/* The number of the indexer called name, or -1. Any thread. */
int inf_indexer_find(inf *i, const char *name);

/* Start the informer thread. Errors: LP_E_INVAL (started before),
   LP_E_NOMEM (no thread). */
lp_err inf_start(inf *i);

/* Make the calling thread a background one: SCHED_BATCH (Linux's policy
   for work that should not preempt on wake-up) and the name `name` (up to
   15 characters shown). The informer's thread and the controllers'
   workers call it: the engine's writer wakes an informer after every
   commit, and a woken SCHED_OTHER thread would preempt the writer (or
   the HTTP thread) on the spot. Failures are ignored. */
void inf_background_thread(const char *name);

/* Stop the thread and wait for it; handlers are not called after it
   returns. Idempotent; not from a handler. */
void inf_stop(inf *i);

/* Stop (if running) and free the informer and its cache. NULL ok. */
void inf_free(inf *i);

/* 1 once the first list is in the cache and its on_add calls are done. */
int inf_has_synced(inf *i);

/* Wait until synced. Errors: LP_E_CLOSED (stopped, or the engine closed,
   first). */
lp_err inf_wait_synced(inf *i);

/*
 * Wait until the cache reflects revision rev: every change up to rev under
 * the prefix is applied and its handler called. rev should be a revision
 * that wrote under the prefix (the watch is woken only by those).
 * Errors: LP_E_CLOSED (stopped first).
 */
lp_err inf_wait_rev(inf *i, int64_t rev);

/*
 * A copy of key's cached object, decoded (an object inf_opts.eager left as
 * bytes is decoded for this copy alone). *out is new: free with
 * inf_item_free(). Errors: LP_E_NOTFOUND, LP_E_NOMEM.
 */
struct inf_item {
	struct inf_obj obj; /* points into this item */
};
lp_err inf_get(inf *i, const void *key, size_t key_len, struct inf_item **out);
/* inf_get of prefix + "ns/name" (ns NULL or "": prefix + name), the key
   of a namespaced (cluster-scoped) object when the informer's prefix is
   its resource's ("/registry/configmaps/"). Errors: those of inf_get,
   LP_E_INVAL (the key is longer than ENG_KEY_MAX). */
lp_err inf_get_by_name(inf *i, const char *ns, const char *name,
		       struct inf_item **out);
void inf_item_free(struct inf_item *it); /* NULL ok; drops obj.json */

/*
 * Call fn for every cached object (in no particular order) under the
 * cache lock: fn must not block or call into this informer. obj is
 * borrowed for the call (its json NULL when inf_opts.eager left it as
 * bytes). fn returns 0 to go on, nonzero to stop.
 * Returns the number of objects visited.
 */
size_t inf_list(inf *i, int (*fn)(void *ud, const struct inf_obj *obj),
		void *ud);

/*
 * Call fn for every cached object whose indexer gave value, under the
 * cache lock like inf_list (fn must not block or call into this
 * informer; obj is borrowed for the call, obj->json may be kept with
 * inf_keep). Any thread, while the informer runs. Returns the number
 * of objects visited (0 for an unknown indexer or value).
 */
size_t inf_index(inf *i, unsigned indexer, const char *value,
		 int (*fn)(void *ud, const struct inf_obj *obj), void *ud);

/* inf_index(i, INF_IDX_NAMESPACE, ns, fn, ud): the objects of namespace
   ns ("": the cluster-scoped ones); with inf_opts.eager, those it took. */
size_t inf_by_namespace(inf *i, const char *ns,
			int (*fn)(void *ud, const struct inf_obj *obj),
			void *ud);

/* The number of objects under value in indexer (0: none). Any thread. */
size_t inf_index_count(inf *i, unsigned indexer, const char *value);

/*
 * Call fn(ud, value, n) for every value indexer holds (n objects each,
 * never 0), in no particular order, under the cache lock (the same rules
 * as inf_index). Returns the number of values visited.
 */
size_t inf_index_values(inf *i, unsigned indexer,
			int (*fn)(void *ud, const char *value, size_t n),
			void *ud);

void inf_stats(inf *i, struct inf_stats *out);

#endif
