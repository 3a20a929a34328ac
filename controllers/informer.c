/*
 * informer.c -- an informer over the engine (see informer.h): list, watch,
 * cache, handlers, and a re-list that delivers the differences.
 *
 * Threads
 *  - The informer thread (run) alone lists, watches, writes the cache and
 *    calls the handlers. It may read the cache without the lock: nobody
 *    else writes it.
 *  - The engine's writer thread runs on_ready, which only sets a flag
 *    under wake_mu (never i->mu, which inf_list may hold for a long walk).
 *  - Any thread reads the cache (inf_get, inf_list) and waits (inf_wait_*)
 *    under i->mu.
 *  - inf_start, inf_stop and inf_free are called by the informer's owner,
 *    one at a time.
 *
 * The informer thread's states (run performs every transition):
 *
 *   inf_start -> LIST --list_all, replace--> WATCH (watch)
 *                 ^ ^                          |
 *                 | +--- OVERFLOW, COMPACTED --+  at once
 *                 +----- any other error ------+  after BACKOFF_MS
 *   LIST or WATCH -- inf_stop, or LP_E_CLOSED from the engine --> DONE
 *                    (waiters then get LP_E_CLOSED)
 *   A list that hits LP_E_COMPACTED between its pages starts again.
 *
 * Invariants
 *  1. After replace() the cache holds exactly the listed records, and the
 *     handlers have been called once per difference from the previous
 *     cache, in the order: adds and updates in key order, then deletes.
 *  2. i->rev is the revision the cache reflects: every change under the
 *     prefix up to i->rev is applied and its handler has returned. It only
 *     grows (a re-list is newer than any event applied before it).
 *  3. A cache item is freed only by the informer thread, after removing it
 *     from the table under i->mu and after its last handler call; so a
 *     handler's pointers and a reader's (under i->mu) stay valid.
 *  4. The table has no two items with equal keys.
 *
 * Locks: i->mu guards the table, rev, synced, done and the stats; wake_mu
 * guards ready and stop. Never both at once. The engine is called with no
 * lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "informer.h"
#include "lapis/assert.h"
#include "lapis/log.h"
#include "workqueue.h" /* ctl__siphash */

#define INF_MAGIC 0x494e4631u
/* A list page: big enough that paging costs little, small enough that one
   snapshot is short (STYLE.md §5: short read transactions). */
#define DEF_PAGE 500
#define MIN_BUCKETS 64
/* After an unexpected engine error (readers full, I/O), wait this long
   before listing again, so a persistent failure does not spin. */
#define BACKOFF_MS 1000

struct citem {
	struct citem *hnext; /* hash chain; under i->mu */
	uint64_t hash;	     /* immutable */
	uint64_t gen;	     /* the list generation that last saw it;
				informer thread only */
	struct inf_obj obj;  /* points into data; immutable */
	uint8_t data[];	     /* key, then value */
};

struct inf {
	uint32_t magic;
	char *name;	 /* immutable */
	eng *e;		 /* immutable, borrowed */
	uint8_t *prefix; /* immutable */
	size_t plen;
	struct inf_handlers h; /* immutable */
	uint32_t page;	       /* immutable */
	uint64_t seed[2];      /* immutable */

	pthread_t tid;	     /* owner only */
	int started, joined; /* owner only */
	uint64_t gen;	     /* informer thread only */

	pthread_mutex_t mu; /* guards everything down to the stats */
	pthread_cond_t cv;  /* rev, synced or done changed */
	struct citem **tab;
	size_t n_buckets; /* a power of two */
	size_t n;
	int64_t rev;
	int synced;
	int done;	     /* the thread has ended (or never will run) */
	struct inf_stats st; /* but rev and objects, filled on read */

	pthread_mutex_t wake_mu; /* guards ready and stop */
	pthread_cond_t wake_cv;	 /* the informer thread waits here */
	int ready;		 /* the watch's ready callback fired */
	int stop;		 /* inf_stop asked */
};

/* ---------------------------------------------------------------- cache */

static struct citem *citem_new(inf *i, const struct eng_record *r)
{
	struct citem *c = malloc(sizeof *c + r->key_len + r->value_len + 1);
	if (!c)
		return NULL;
	c->hnext = NULL;
	c->gen = 0;
	memcpy(c->data, r->key, r->key_len);
	if (r->value_len)
		memcpy(c->data + r->key_len, r->value, r->value_len);
	c->data[r->key_len + r->value_len] = 0; /* handy for printing */
	c->obj.key = c->data;
	c->obj.key_len = r->key_len;
	c->obj.value = c->data + r->key_len;
	c->obj.value_len = r->value_len;
	c->obj.create_rev = r->create_rev;
	c->obj.mod_rev = r->mod_rev;
	c->obj.version = r->version;
	c->hash = ctl__siphash(i->seed, r->key, r->key_len);
	return c;
}

/* Informer thread, or anyone under i->mu. */
static struct citem **slot_of(inf *i, const void *key, size_t len, uint64_t h)
{
	struct citem **pp = &i->tab[h & (i->n_buckets - 1)];
	for (; *pp; pp = &(*pp)->hnext)
		if ((*pp)->hash == h && (*pp)->obj.key_len == len &&
		    memcmp((*pp)->obj.key, key, len) == 0)
			break;
	return pp;
}

/* Under i->mu. On no memory the table stays as it is (only slower). */
static void rehash(inf *i, size_t nb)
{
	struct citem **t = calloc(nb, sizeof *t);
	if (!t)
		return;
	for (size_t b = 0; b < i->n_buckets; b++) {
		struct citem *c = i->tab[b];
		while (c) {
			struct citem *next = c->hnext;
			c->hnext = t[c->hash & (nb - 1)];
			t[c->hash & (nb - 1)] = c;
			c = next;
		}
	}
	free(i->tab);
	i->tab = t;
	i->n_buckets = nb;
}

/* Put c in the table in place of old (NULL: a new key). Informer thread;
   takes i->mu. */
static void cache_put(inf *i, struct citem *c, struct citem *old)
{
	pthread_mutex_lock(&i->mu);
	struct citem **pp = slot_of(i, c->obj.key, c->obj.key_len, c->hash);
	LP_ASSERT(*pp == old);
	if (old) {
		c->hnext = old->hnext;
		*pp = c;
	} else {
		c->hnext = NULL;
		*pp = c;
		if (++i->n > i->n_buckets)
			rehash(i, i->n_buckets * 2);
	}
	pthread_mutex_unlock(&i->mu);
}

/* Take c out of the table. Informer thread; takes i->mu. */
static void cache_del(inf *i, struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	struct citem **pp = slot_of(i, c->obj.key, c->obj.key_len, c->hash);
	LP_ASSERT(*pp == c);
	*pp = c->hnext;
	i->n--;
	if (i->n_buckets > MIN_BUCKETS && i->n < i->n_buckets / 8)
		rehash(i, i->n_buckets / 4 < MIN_BUCKETS ? MIN_BUCKETS
							 : i->n_buckets / 4);
	pthread_mutex_unlock(&i->mu);
}

static struct citem *cache_find(inf *i, const void *key, size_t len)
{
	return *slot_of(i, key, len, ctl__siphash(i->seed, key, len));
}

/* ---------------------------------------------------------------- handlers */

static void call_add(inf *i, const struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	i->st.adds++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_add)
		i->h.on_add(i->h.ud, &c->obj);
}

static void call_update(inf *i, const struct citem *old, const struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	i->st.updates++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_update)
		i->h.on_update(i->h.ud, &old->obj, &c->obj);
}

static void call_delete(inf *i, const struct citem *old)
{
	pthread_mutex_lock(&i->mu);
	i->st.deletes++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_delete)
		i->h.on_delete(i->h.ud, &old->obj);
}

/* The cache reflects rev now (invariant 2). */
static void set_rev(inf *i, int64_t rev)
{
	pthread_mutex_lock(&i->mu);
	if (rev > i->rev) {
		i->rev = rev;
		pthread_cond_broadcast(&i->cv);
	}
	pthread_mutex_unlock(&i->mu);
}

/* ---------------------------------------------------------------- list */

struct listing {
	inf *i;
	struct citem **v; /* in key order */
	size_t n, cap;
	lp_err err; /* sticky: no memory while copying */
};

static enum eng_take collect(void *ud, const struct eng_record *r)
{
	struct listing *L = ud;
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 256;
		struct citem **v = realloc(L->v, cap * sizeof *v);
		if (!v) {
			L->err = LP_ERR(LP_E_NOMEM);
			return ENG_STOP;
		}
		L->v = v;
		L->cap = cap;
	}
	struct citem *c = citem_new(L->i, r);
	if (!c) {
		L->err = LP_ERR(LP_E_NOMEM);
		return ENG_STOP;
	}
	L->v[L->n++] = c;
	return ENG_TAKE;
}

static void listing_free(struct listing *L)
{
	for (size_t k = 0; k < L->n; k++)
		free(L->v[k]);
	free(L->v);
	memset(L, 0, sizeof *L);
}

/*
 * List the prefix at one revision, a page per snapshot, into L (empty on
 * entry); *rev receives the revision. Errors: LP_E_COMPACTED (compacted
 * past the list's revision between pages: list again), LP_E_NOMEM, and the
 * engine's (LP_E_CLOSED, LP_E_READERSFULL, LP_E_IO).
 */
static lp_err list_all(inf *i, struct listing *L, int64_t *rev)
{
	int64_t at = 0;
	uint8_t from[ENG_KEY_MAX + 1];
	size_t from_len = 0;
	L->i = i;
	for (;;) {
		eng_rd *r = NULL;
		lp_err rc = eng_rd_begin(i->e, &r);
		if (rc)
			return rc;
		struct eng_range_req req = {
		    .prefix = i->plen ? i->prefix : NULL,
		    .prefix_len = i->plen,
		    .from = from_len ? from : NULL,
		    .from_len = from_len,
		    .at_rev = at,
		    .limit = i->page,
		};
		struct eng_range_res res;
		rc = eng_range(r, &req, collect, L, &res);
		eng_rd_end(r);
		if (rc == LP_OK && L->err)
			rc = L->err;
		if (rc)
			return rc;
		if (at == 0)
			at = res.rev;
		if (!res.more || L->n == 0)
			break;
		/* The next page starts just after the last key: the key with
		   a NUL appended is the least key greater than it. */
		const struct citem *last = L->v[L->n - 1];
		memcpy(from, last->obj.key, last->obj.key_len);
		from[last->obj.key_len] = 0;
		from_len = last->obj.key_len + 1;
	}
	*rev = at;
	return LP_OK;
}

/* Take a key the list did not see out of the cache, telling on_delete. */
static void drop(inf *i, struct citem *c)
{
	cache_del(i, c);
	call_delete(i, c);
	free(c);
}

static struct citem *first_stale(inf *i, uint64_t gen)
{
	for (size_t b = 0; b < i->n_buckets; b++)
		for (struct citem *c = i->tab[b]; c; c = c->hnext)
			if (c->gen != gen)
				return c;
	LP_UNREACHABLE();
}

/*
 * Make the cache equal to the listing, calling the handlers for the
 * differences (invariant 1). Consumes L's items.
 */
static void replace(inf *i, struct listing *L, int64_t rev)
{
	uint64_t gen = ++i->gen;
	for (size_t k = 0; k < L->n; k++) {
		struct citem *c = L->v[k];
		L->v[k] = NULL;
		c->gen = gen;
		struct citem *old = cache_find(i, c->obj.key, c->obj.key_len);
		if (!old) {
			cache_put(i, c, NULL);
			call_add(i, c);
		} else if (old->obj.mod_rev != c->obj.mod_rev) {
			cache_put(i, c, old);
			call_update(i, old, c);
			free(old);
		} else {
			old->gen = gen;
			free(c);
		}
	}
	L->n = 0;
	/* What the list did not see is gone: deliver its last known state.
	   Collect first (the walk must not see the table change); with no
	   memory for the array, take one per walk. */
	size_t n_gone = 0;
	for (size_t b = 0; b < i->n_buckets; b++)
		for (struct citem *c = i->tab[b]; c; c = c->hnext)
			n_gone += c->gen != gen;
	struct citem **gone = n_gone ? malloc(n_gone * sizeof *gone) : NULL;
	if (gone) {
		size_t k = 0;
		for (size_t b = 0; b < i->n_buckets; b++)
			for (struct citem *c = i->tab[b]; c; c = c->hnext)
				if (c->gen != gen)
					gone[k++] = c;
		LP_ASSERT(k == n_gone);
		for (size_t j = 0; j < k; j++)
			drop(i, gone[j]);
		free(gone);
	} else {
		for (; n_gone; n_gone--)
			drop(i, first_stale(i, gen));
	}
	pthread_mutex_lock(&i->mu);
	i->st.lists++;
	/* Invariant 2: a list is at least as new as anything applied. */
	if (rev > i->rev)
		i->rev = rev;
	i->synced = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
}

/* ---------------------------------------------------------------- watch */

static void on_ready(void *ud)
{
	inf *i = ud;
	pthread_mutex_lock(&i->wake_mu);
	i->ready = 1;
	pthread_cond_signal(&i->wake_cv);
	pthread_mutex_unlock(&i->wake_mu);
}

static int stopping(inf *i)
{
	pthread_mutex_lock(&i->wake_mu);
	int s = i->stop;
	pthread_mutex_unlock(&i->wake_mu);
	return s;
}

/* Wait for the ready callback or a stop (timeout_ms < 0: no timeout).
   Returns 1 when stopping. */
static int wait_wake(inf *i, int timeout_ms)
{
	struct timespec dl;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&i->wake_mu);
	while (!i->ready && !i->stop) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&i->wake_cv, &i->wake_mu);
		} else if (pthread_cond_timedwait(&i->wake_cv, &i->wake_mu,
						  &dl) == ETIMEDOUT) {
			break;
		}
	}
	int s = i->stop;
	pthread_mutex_unlock(&i->wake_mu);
	return s;
}

/* Apply one event to the cache and call its handler. */
static lp_err apply(inf *i, const eng_event *ev)
{
	const struct eng_record *r = &ev->rec;
	struct citem *old = cache_find(i, r->key, r->key_len);
	if (ev->type == ENG_EV_DEL) {
		/* A delete of a key we never saw cannot happen after a list
		   at a revision the watch starts from; ignore it. */
		if (!old)
			return LP_OK;
		cache_del(i, old);
		call_delete(i, old);
		free(old);
		return LP_OK;
	}
	struct citem *c = citem_new(i, r);
	if (!c)
		return LP_ERR(LP_E_NOMEM);
	cache_put(i, c, old);
	if (old) {
		call_update(i, old, c);
		free(old);
	} else {
		call_add(i, c);
	}
	return LP_OK;
}

/*
 * Watch from rev until the watch ends. Returns LP_E_CLOSED when stopping
 * or the engine closed, else the error that ended the watch
 * (LP_E_OVERFLOW, LP_E_COMPACTED, LP_E_NOMEM, ...): list again.
 */
static lp_err watch(inf *i, int64_t rev)
{
	eng_watch *w = NULL;
	lp_err rc = eng_watch_open(i->e, i->plen ? i->prefix : NULL, i->plen,
				   rev, on_ready, i, &w);
	if (rc)
		return rc;
	for (;;) {
		pthread_mutex_lock(&i->wake_mu);
		i->ready = 0;
		int stop = i->stop;
		pthread_mutex_unlock(&i->wake_mu);
		if (stop) {
			rc = LP_E_CLOSED;
			break;
		}
		eng_event *ev = NULL;
		rc = eng_watch_next(w, &ev);
		if (rc == LP_OK && ev->rev <= rev) {
			/* Already in the list. The engine can hand these
			   out: a commit is visible to readers before its
			   events reach the ring, and a watch opened from a
			   revision in between gets that revision's events.
			   Applying one again could undo a newer state (a
			   stale delete of a key re-created later). */
			eng_event_unref(ev);
			continue;
		}
		if (rc == LP_OK) {
			rc = apply(i, ev);
			eng_event_unref(ev);
			pthread_mutex_lock(&i->mu);
			i->st.events++;
			pthread_mutex_unlock(&i->mu);
			if (rc)
				break;
			set_rev(i, eng_watch_progress(w));
			continue;
		}
		if (rc != LP_E_AGAIN)
			break;
		set_rev(i, eng_watch_progress(w));
		if (wait_wake(i, -1)) {
			rc = LP_E_CLOSED;
			break;
		}
	}
	eng_watch_close(w);
	return rc;
}

/* ---------------------------------------------------------------- thread */

static void *run(void *arg)
{
	inf *i = arg;
	while (!stopping(i)) {
		struct listing L = {0};
		int64_t rev = 0;
		lp_err rc = list_all(i, &L, &rev);
		if (rc == LP_OK) {
			replace(i, &L, rev);
			rc = watch(i, rev);
		}
		listing_free(&L);
		if (rc == LP_E_CLOSED)
			break;
		pthread_mutex_lock(&i->mu);
		if (rc == LP_E_OVERFLOW)
			i->st.relist_overflow++;
		else if (rc == LP_E_COMPACTED)
			i->st.relist_compacted++;
		else
			i->st.relist_error++;
		pthread_mutex_unlock(&i->mu);
		if (rc == LP_E_OVERFLOW || rc == LP_E_COMPACTED)
			continue; /* the normal way to catch up: at once */
		lp_warn("informer %s: %s; listing again in %d ms", i->name,
			lp_errname(rc), BACKOFF_MS);
		pthread_mutex_lock(&i->wake_mu);
		i->ready = 0;
		pthread_mutex_unlock(&i->wake_mu);
		if (wait_wake(i, BACKOFF_MS))
			break;
	}
	pthread_mutex_lock(&i->mu);
	i->done = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
	return NULL;
}

/* ---------------------------------------------------------------- public */

static void check_inf(const inf *i)
{
	LP_ASSERT_CTX(i && i->magic == INF_MAGIC, "not a live informer");
}

lp_err inf_new(const struct inf_opts *o, inf **out)
{
	if (!o || !o->e || o->prefix_len > ENG_KEY_MAX ||
	    (o->prefix_len && !o->prefix))
		return LP_ERR(LP_E_INVAL);
	inf *i = calloc(1, sizeof *i);
	if (!i)
		return LP_ERR(LP_E_NOMEM);
	i->name = strdup(o->name ? o->name : "");
	i->prefix = malloc(o->prefix_len ? o->prefix_len : 1);
	i->tab = calloc(MIN_BUCKETS, sizeof *i->tab);
	if (!i->name || !i->prefix || !i->tab) {
		free(i->tab);
		free(i->prefix);
		free(i->name);
		free(i);
		return LP_ERR(LP_E_NOMEM);
	}
	if (o->prefix_len)
		memcpy(i->prefix, o->prefix, o->prefix_len);
	i->plen = o->prefix_len;
	i->n_buckets = MIN_BUCKETS;
	i->e = o->e;
	i->h = o->handlers;
	i->page = o->list_page ? o->list_page : DEF_PAGE;
	ctl__hash_seed(i->seed);
	pthread_mutex_init(&i->mu, NULL);
	pthread_cond_init(&i->cv, NULL);
	pthread_mutex_init(&i->wake_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&i->wake_cv, &ca);
	pthread_condattr_destroy(&ca);
	i->magic = INF_MAGIC;
	*out = i;
	return LP_OK;
}

lp_err inf_start(inf *i)
{
	check_inf(i);
	if (i->started)
		return LP_ERR(LP_E_INVAL);
	if (pthread_create(&i->tid, NULL, run, i))
		return LP_ERR(LP_E_NOMEM);
	i->started = 1;
	return LP_OK;
}

void inf_stop(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->wake_mu);
	i->stop = 1;
	pthread_cond_broadcast(&i->wake_cv);
	pthread_mutex_unlock(&i->wake_mu);
	if (i->started && !i->joined) {
		pthread_join(i->tid, NULL);
		i->joined = 1;
	}
	pthread_mutex_lock(&i->mu);
	i->done = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
}

void inf_free(inf *i)
{
	if (!i)
		return;
	inf_stop(i);
	for (size_t b = 0; b < i->n_buckets; b++) {
		struct citem *c = i->tab[b];
		while (c) {
			struct citem *next = c->hnext;
			free(c);
			c = next;
		}
	}
	free(i->tab);
	pthread_cond_destroy(&i->wake_cv);
	pthread_mutex_destroy(&i->wake_mu);
	pthread_cond_destroy(&i->cv);
	pthread_mutex_destroy(&i->mu);
	free(i->prefix);
	free(i->name);
	i->magic = 0;
	free(i);
}

int inf_has_synced(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	int s = i->synced;
	pthread_mutex_unlock(&i->mu);
	return s;
}

lp_err inf_wait_synced(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	while (!i->synced && !i->done)
		pthread_cond_wait(&i->cv, &i->mu);
	lp_err rc = i->synced ? LP_OK : LP_E_CLOSED;
	pthread_mutex_unlock(&i->mu);
	return rc;
}

lp_err inf_wait_rev(inf *i, int64_t rev)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	while (i->rev < rev && !i->done)
		pthread_cond_wait(&i->cv, &i->mu);
	lp_err rc = i->rev >= rev ? LP_OK : LP_E_CLOSED;
	pthread_mutex_unlock(&i->mu);
	return rc;
}

lp_err inf_get(inf *i, const void *key, size_t key_len, struct inf_item **out)
{
	check_inf(i);
	uint64_t h = ctl__siphash(i->seed, key, key_len);
	lp_err rc = LP_OK;
	pthread_mutex_lock(&i->mu);
	const struct citem *c = *slot_of(i, key, key_len, h);
	if (!c) {
		rc = LP_E_NOTFOUND;
		goto out;
	}
	size_t n = c->obj.key_len + c->obj.value_len + 1;
	struct inf_item *it = malloc(sizeof *it + n);
	if (!it) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	uint8_t *d = (uint8_t *)(it + 1);
	memcpy(d, c->data, n);
	it->obj = c->obj;
	it->obj.key = d;
	it->obj.value = d + c->obj.key_len;
	*out = it;
out:
	pthread_mutex_unlock(&i->mu);
	return rc;
}

void inf_item_free(struct inf_item *it)
{
	free(it);
}

size_t inf_list(inf *i, int (*fn)(void *ud, const struct inf_obj *obj),
		void *ud)
{
	check_inf(i);
	size_t n = 0;
	pthread_mutex_lock(&i->mu);
	for (size_t b = 0; b < i->n_buckets; b++) {
		for (const struct citem *c = i->tab[b]; c; c = c->hnext) {
			n++;
			if (fn(ud, &c->obj))
				goto out;
		}
	}
out:
	pthread_mutex_unlock(&i->mu);
	return n;
}

void inf_stats(inf *i, struct inf_stats *out)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	*out = i->st;
	out->rev = i->rev;
	out->objects = i->n;
	pthread_mutex_unlock(&i->mu);
}
