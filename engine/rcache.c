/*
 * rcache.c -- the read cache behind eng_get_copy: the latest records read,
 * valid until the next commit.
 *
 * A GET of one object spends most of its engine time walking LMDB's B-tree
 * through pages that are not in the CPU's cache. The cache keeps copies of
 * records read, in a fixed table of slots (one record per slot; the key's
 * hash names a pair of adjacent slots, lapis/slotlock.h, and a new record
 * displaces the same key's, else fills an empty or stale slot, else
 * displaces one of the pair), and answers a read of the same key from the
 * copy while nothing has been committed since.
 *
 * Invariants:
 *  1. Validity is one counter, e->cache_seq, that run_group (writer.c)
 *     makes odd just before mdb_txn_commit and even again after it: a
 *     seqlock around every commit that can change the state DB (compaction
 *     and the revision bump change no record). An entry carries the even
 *     value read before the store read that produced it; it answers only
 *     while the counter still has that value. So a commit invalidates every
 *     entry at once, before any reader can see its effect: a read that saw
 *     a commit (a list, a watch event, the writer's acknowledgement) makes
 *     every later read of any key go to the store.
 *  2. An entry is published only when the counter was even before its store
 *     read began and is unchanged after the read: no commit ran meanwhile,
 *     so the copy is the latest state at that value. A commit that starts
 *     after the check only makes the published entry stale (invariant 1).
 *  3. Entries are immutable once published and reference-counted: the
 *     slot holds one reference, each reader copying from it another. The
 *     lowest bit of a slot's pointer is a lock, held only to take a
 *     reference (a reader) or to swap the pointer (a publisher), so an
 *     entry cannot be freed between a reader's load and its reference.
 *     (Not RCU: displacing an entry is frequent where keys share slots,
 *     and each grace period of liburcu-bp's call_rcu wakes a thread and
 *     runs a membarrier across the cores, which cost more than the cache
 *     saved at 4 connections in S1.)
 *  4. Memory: values up to RC_VALUE_MAX bytes are kept, and a record is not
 *     added when it would take the table past its budget (eng_opts
 *     read_cache); an entry leaves the budget when displaced. Near the
 *     budget, a publisher first drops stale entries from the slots after
 *     its own, so a cache filled before a commit is emptied as it is used.
 *
 * Threads: any reader thread; the writer only moves the counter.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eng_int.h"
#include "lapis/slotlock.h"

/* one slot per RC_SLOT_BYTES of budget, a power of two in
   [RC_SLOTS_MIN, RC_SLOTS_MAX]: few keys share a slot while the budget
   holds objects of about 1 KiB */
#define RC_SLOT_BYTES 512u
#define RC_SLOTS_MIN 1024u
#define RC_SLOTS_MAX (1u << 20)
#define RC_VALUE_MAX (16u * 1024u) /* larger values are read each time */

struct rc_ent {
	struct lp_slot_ent k; /* first (lapis/slotlock.h) */
	_Atomic int refs;
	size_t size; /* what it counts against the budget */
	int64_t create_rev, mod_rev, version;
	size_t key_len, value_len;
	uint8_t data[]; /* key, then value */
};

/* A thread's count of hits, on a line of its own: a shared counter would
   bounce between the reader threads' cores on every hit. */
struct rc_tl {
	_Alignas(64) _Atomic uint64_t hits;
	pthread_t thread;
	struct rc_tl *next;
};

struct rcache {
	uint64_t budget;
	pthread_mutex_t tl_mu; /* guards tls */
	struct rc_tl *tls;
	uint64_t gen;
	_Atomic uint64_t bytes;
	_Atomic uint64_t misses;
	size_t mask;		  /* slots - 1 */
	_Atomic uintptr_t slot[]; /* struct rc_ent *; lapis/slotlock.h */
};

static _Thread_local struct {
	uint64_t gen; /* the engine whose cache tl counts for */
	struct rc_tl *tl;
} tl_hits;

lp_err eng__rcache_new(eng *e, uint64_t budget)
{
	e->rc = NULL;
	if (!budget)
		return LP_OK;
	size_t n = RC_SLOTS_MIN;
	while (n < RC_SLOTS_MAX && n < budget / RC_SLOT_BYTES)
		n *= 2;
	struct rcache *c = calloc(1, sizeof *c + n * sizeof c->slot[0]);
	if (!c)
		return LP_ERR(LP_E_NOMEM);
	c->budget = budget;
	c->mask = n - 1;
	c->gen = e->gen;
	pthread_mutex_init(&c->tl_mu, NULL);
	e->rc = c;
	return LP_OK;
}

static void rc_unref(struct rc_ent *x)
{
	if (x &&
	    atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) == 1)
		free(x);
}

/* The slot locks of lapis/slotlock.h, typed. */
static struct rc_ent *slot_lock(_Atomic uintptr_t *s)
{
	return (struct rc_ent *)lp_slot_lock(s);
}

static void slot_unlock(_Atomic uintptr_t *s, struct rc_ent *x)
{
	lp_slot_unlock(s, (uintptr_t)x);
}

void eng__rcache_free(eng *e)
{
	struct rcache *c = e->rc;
	if (!c)
		return;
	e->rc = NULL;
	for (size_t i = 0; i <= c->mask; i++)
		rc_unref((struct rc_ent *)atomic_load(&c->slot[i]));
	while (c->tls) {
		struct rc_tl *t = c->tls;
		c->tls = t->next;
		free(t);
	}
	pthread_mutex_destroy(&c->tl_mu);
	free(c);
}

void eng_read_cache_stats(eng *e, uint64_t *hits, uint64_t *misses,
			  uint64_t *bytes)
{
	struct rcache *c = e->rc;
	*hits = 0;
	if (c) {
		pthread_mutex_lock(&c->tl_mu);
		for (struct rc_tl *t = c->tls; t; t = t->next)
			*hits += atomic_load_explicit(&t->hits,
						      memory_order_relaxed);
		pthread_mutex_unlock(&c->tl_mu);
	}
	*misses =
	    c ? atomic_load_explicit(&c->misses, memory_order_relaxed) : 0;
	*bytes = c ? atomic_load_explicit(&c->bytes, memory_order_relaxed) : 0;
}

static lp_err copy_out(const uint8_t *v, size_t n, int64_t create_rev,
		       int64_t mod_rev, int64_t version, struct eng_copy *out)
{
	char *b = malloc(n + 1);
	if (!b)
		return LP_ERR(LP_E_NOMEM);
	memcpy(b, v, n);
	b[n] = 0;
	out->value = b;
	out->value_len = n;
	out->create_rev = create_rev;
	out->mod_rev = mod_rev;
	out->version = version;
	return LP_OK;
}

/* Over budget: drop stale entries (read before the last commit, never
   answered again) from up to RC_SWEEP slots after slot i. */
#define RC_SWEEP 8u
static void sweep_stale(struct rcache *c, size_t i, uint64_t seq)
{
	for (size_t k = 1; k <= RC_SWEEP; k++) {
		_Atomic uintptr_t *s = &c->slot[(i + k) & c->mask];
		if (!atomic_load_explicit(s, memory_order_relaxed))
			continue;
		struct rc_ent *x = slot_lock(s);
		if (!x || x->k.seq == seq) {
			slot_unlock(s, x);
			continue;
		}
		slot_unlock(s, NULL);
		atomic_fetch_sub_explicit(&c->bytes, x->size,
					  memory_order_relaxed);
		rc_unref(x);
	}
}

/* Publish rec under key as read at counter value seq (invariant 2). */
static void rc_put(eng *e, struct rcache *c, uint64_t seq, uint64_t hash,
		   const void *key, size_t key_len,
		   const struct eng_record *rec)
{
	size_t size = sizeof(struct rc_ent) + key_len + rec->value_len;
	size_t i = lp_slot_pair(hash, c->mask);
	if (atomic_load_explicit(&c->bytes, memory_order_relaxed) + size >
	    c->budget)
		sweep_stale(c, i, seq);
	struct rc_ent *x = malloc(size);
	if (!x)
		return;
	atomic_init(&x->refs, 1); /* the slot's */
	x->k.seq = seq;
	x->k.hash = hash;
	x->size = size;
	x->create_rev = rec->create_rev;
	x->mod_rev = rec->mod_rev;
	x->version = rec->version;
	x->key_len = key_len;
	x->value_len = rec->value_len;
	memcpy(x->data, key, key_len);
	memcpy(x->data + key_len, rec->value, rec->value_len);
	_Atomic uintptr_t *s = &c->slot[lp_slot_pair_pick(c->slot, i, &x->k)];
	struct rc_ent *old = slot_lock(s);
	size_t freed = old ? old->size : 0;
	if (atomic_load(&e->cache_seq) != seq || /* a commit ran meanwhile */
	    atomic_load_explicit(&c->bytes, memory_order_relaxed) + size >
		c->budget + freed) {
		slot_unlock(s, old);
		free(x);
		return;
	}
	slot_unlock(s, x);
	atomic_fetch_add_explicit(&c->bytes, size, memory_order_relaxed);
	if (old) {
		atomic_fetch_sub_explicit(&c->bytes, freed,
					  memory_order_relaxed);
		rc_unref(old);
	}
}

/* This thread's counter in c (made at its first hit; NULL: no memory). */
static struct rc_tl *thread_counter(struct rcache *c)
{
	if (tl_hits.gen == c->gen && tl_hits.tl)
		return tl_hits.tl;
	pthread_t self = pthread_self();
	pthread_mutex_lock(&c->tl_mu);
	struct rc_tl *t = c->tls;
	while (t && !pthread_equal(t->thread, self))
		t = t->next;
	if (!t && (t = aligned_alloc(64, sizeof *t))) {
		memset(t, 0, sizeof *t);
		t->thread = self;
		t->next = c->tls;
		c->tls = t;
	}
	pthread_mutex_unlock(&c->tl_mu);
	tl_hits.gen = c->gen;
	tl_hits.tl = t;
	return t;
}

static void count_hit(struct rcache *c)
{
	struct rc_tl *t = thread_counter(c);
	if (t)
		atomic_fetch_add_explicit(&t->hits, 1, memory_order_relaxed);
}

uint64_t eng_read_seq(eng *e)
{
	return atomic_load(&e->cache_seq);
}

lp_err eng_get_copy(eng *e, const void *key, size_t key_len,
		    struct eng_copy *out)
{
	struct rcache *c = e->rc;
	/* before anything of the store is read (invariant 2) */
	uint64_t seq = atomic_load(&e->cache_seq);
	uint64_t hash = 0;
	bool cacheable = c && !(seq & 1);
	if (cacheable) {
		hash = eng__hash64(e->hash_seed, key, key_len);
		size_t b = lp_slot_pair(hash, c->mask);
		for (size_t j = b; j < b + 2; j++) {
			_Atomic uintptr_t *s = &c->slot[j];
			/* an empty slot is seen without taking its lock */
			if (!atomic_load_explicit(s, memory_order_relaxed))
				continue;
			struct rc_ent *x = slot_lock(s);
			if (x)
				atomic_fetch_add_explicit(&x->refs, 1,
							  memory_order_relaxed);
			slot_unlock(s, x);
			if (x && x->k.seq == seq && x->k.hash == hash &&
			    x->key_len == key_len &&
			    !memcmp(x->data, key, key_len)) {
				count_hit(c);
				lp_err rc = copy_out(
				    x->data + x->key_len, x->value_len,
				    x->create_rev, x->mod_rev, x->version, out);
				rc_unref(x);
				return rc;
			}
			rc_unref(x);
		}
		atomic_fetch_add_explicit(&c->misses, 1, memory_order_relaxed);
	}
	eng_rd *rd;
	lp_err rc = eng_rd_begin(e, &rd);
	if (rc)
		return rc;
	struct eng_record rec;
	rc = eng_get(rd, key, key_len, 0, &rec);
	if (rc == LP_OK) {
		rc = copy_out(rec.value, rec.value_len, rec.create_rev,
			      rec.mod_rev, rec.version, out);
		if (rc == LP_OK && cacheable && rec.value_len <= RC_VALUE_MAX)
			rc_put(e, c, seq, hash, key, key_len, &rec);
	}
	eng_rd_end(rd);
	return rc;
}
