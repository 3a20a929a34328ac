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
 *
 * Threads
 *  - inf_start() starts the informer's own thread; it alone writes the
 *    cache and calls the handlers, one at a time, never with a lock held.
 *    Handlers may call inf_get/inf_list and queue work (wq_add); they must
 *    not call inf_stop/inf_free or block for long (the cache and the
 *    handlers of this informer wait).
 *  - Every other function is thread-safe.
 *  - The engine outlives the informer: inf_stop() before eng_close() (an
 *    informer may hold a read snapshot while listing).
 */
#ifndef LAPIS_CONTROLLERS_INFORMER_H
#define LAPIS_CONTROLLERS_INFORMER_H

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
	const uint8_t *value; /* as the engine returns it (slot filled) */
	size_t value_len;
	int64_t create_rev;
	int64_t mod_rev;
	int64_t version;
};

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
};

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
};

/*
 * Make an informer (not started). Errors: LP_E_NOMEM, LP_E_INVAL (no
 * engine, prefix longer than ENG_KEY_MAX). *out is new: inf_free().
 */
lp_err inf_new(const struct inf_opts *o, inf **out);

/* Start the informer thread. Errors: LP_E_INVAL (started before),
   LP_E_NOMEM (no thread). */
lp_err inf_start(inf *i);

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
 * A copy of key's cached object. *out is new: free with inf_item_free().
 * Errors: LP_E_NOTFOUND, LP_E_NOMEM.
 */
struct inf_item {
	struct inf_obj obj; /* points into this item */
};
lp_err inf_get(inf *i, const void *key, size_t key_len, struct inf_item **out);
void inf_item_free(struct inf_item *it); /* NULL ok */

/*
 * Call fn for every cached object (in no particular order) under the
 * cache lock: fn must not block or call into this informer. obj is
 * borrowed for the call. fn returns 0 to go on, nonzero to stop.
 * Returns the number of objects visited.
 */
size_t inf_list(inf *i, int (*fn)(void *ud, const struct inf_obj *obj),
		void *ud);

void inf_stats(inf *i, struct inf_stats *out);

#endif
