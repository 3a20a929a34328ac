/*
 * workqueue.c -- the controllers' work queue (see workqueue.h): one mutex,
 * a hash table of keys, a FIFO, a processing list and a timer heap.
 *
 * Threads: any thread adds, forgets and reads metrics; controller workers
 * block in wq_get(); a test thread may step a fake clock. Nothing here
 * starts a thread: a key waiting for a delay is moved into the queue by
 * whichever call next looks at the queue after its time has come (promote),
 * and a blocked wq_get() waits on the clock until the earliest ready time,
 * so the time it is noticed is the time a worker could take it.
 *
 * A key's states (one struct ent per key, in q->tab):
 *
 *              wq_add                wq_get                 wq_done
 *   (none) -----------> QUEUED -------------> PROCESSING -------------> (none)
 *                       (dirty)                  |    ^
 *                          ^              wq_add |    | (more adds: nothing)
 *                          |                     v    |
 *                          +------ wq_done -- PROCESSING+DIRTY
 *
 *   Beside these, orthogonally:
 *     DELAYED  (in the heap)   wq_add_after ... promote() -> the wq_add path;
 *                              dropped by shutdown
 *     BACKOFF  (failures > 0)  wq_add_rate_limited ... wq_forget
 *
 * Invariants (wq_check verifies them)
 *  1. queued => dirty and not processing. A key is in the FIFO at most once
 *     (there is one link per entry), so the queue never holds duplicates.
 *  2. n_dirty, n_queued, n_processing, n_heap count exactly the entries in
 *     those states; the FIFO and the processing list hold exactly the queued
 *     and processing entries.
 *  3. An entry is in the table iff it is dirty, processing, delayed or has
 *     failures > 0; release() frees it when the last of these ends.
 *  4. The heap is a min-heap on (ready_at, seq) and e->heap_idx is e's index
 *     in it (NOT_IN_HEAP otherwise). seq makes equal ready times FIFO.
 *  5. A processing entry is never freed, and key bytes never change, so the
 *     pointer wq_get hands out is valid until that key's wq_done.
 *  6. After shutdown the heap is empty and stays so; only wq_done can make a
 *     key queued (one that was added while processing, before shutdown).
 *
 * Locks: q->mu guards every mutable field of struct wq and of every entry
 * (the fields say so). Lock order: fake clock mu -> q->mu. With q->mu held
 * we call only the clock's now() (lock-free) and wait() (which releases
 * q->mu), and no callback.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "lapis/assert.h"
#include "lapis/clock.h"
#include "workqueue.h"

#define WQ_MAGIC 0x5751a9e1u   /* struct wq, live */
#define ENT_MAGIC 0x5751e171u  /* struct ent, live */
#define FAKE_MAGIC 0x5751fa4eu /* struct wq_fake_clock, live */

#define NS_PER_S 1000000000LL
#define NOT_IN_HEAP SIZE_MAX
/* The table starts small (a controller often watches a handful of keys)
   and doubles at load 1; it shrinks by four below load 1/8 so that a key
   count hovering at a boundary does not rehash on every add. */
#define MIN_BUCKETS 16
/* The bucket's token count may go this far negative (reservations waiting);
   the bound keeps elapsed * qps arithmetic clear of overflow. */
#define TOKENS_FLOOR (-(INT64_MAX / 4))

/* Defaults: client-go's DefaultControllerRateLimiter. */
#define DEF_BASE_DELAY WQ_MS(5)
#define DEF_MAX_DELAY WQ_S(1000)
#define DEF_QPS 10
#define DEF_BURST 100

/* One key. Every field but magic, hash, key_len and key (immutable from
   creation) is guarded by the queue's mu. */
struct ent {
	uint32_t magic;
	uint32_t failures; /* rate-limited adds since wq_forget */
	uint64_t hash;	   /* of key, with the queue's seed; immutable */
	struct ent *hnext; /* hash chain */
	struct ent *qnext; /* FIFO link, while queued */
	struct ent *pprev; /* processing list links, while processing */
	struct ent *pnext;
	size_t heap_idx;    /* index in q->heap, or NOT_IN_HEAP */
	int64_t ready_at;   /* while delayed: when it becomes an add */
	uint64_t seq;	    /* while delayed: tie-break for equal ready_at */
	int64_t add_time;   /* while dirty: when it became dirty */
	int64_t start_time; /* while processing: when handed out */
	uint8_t dirty;	    /* added and not yet handed out */
	uint8_t queued;	    /* in the FIFO */
	uint8_t processing; /* handed out, not done */
	size_t key_len;	    /* strlen(key); immutable */
	char key[];	    /* NUL-terminated; immutable */
};

struct wq {
	uint32_t magic;	       /* WQ_MAGIC while live */
	char *name;	       /* immutable */
	wq_clock *clk;	       /* immutable, borrowed */
	struct wq_waker waker; /* on clk's list; links guarded by the clock */
	uint64_t seed[2];      /* hash seed; immutable */
	/* limiter parameters; immutable */
	int64_t base_delay, max_delay;
	int64_t qps, burst;

	pthread_mutex_t mu;	/* guards everything below */
	pthread_cond_t get_cv;	/* getters: a key, shutdown, an earlier
				   ready time, the clock moved */
	pthread_cond_t idle_cv; /* drainers and wq_wait_getters: nothing
				   processing, a getter blocked, shutdown */

	struct ent **tab; /* hash table of every entry (invariant 3) */
	size_t n_buckets; /* a power of two */
	size_t n_ents;
	struct ent *head, *tail; /* the FIFO of queued entries */
	size_t n_queued;
	struct ent *proc; /* processing entries, newest first */
	size_t n_processing;
	size_t n_dirty;
	struct ent **heap; /* delayed entries, min-heap (invariant 4) */
	size_t n_heap, cap_heap;
	uint64_t next_seq;
	int64_t tokens;	   /* the bucket, in token-nanoseconds: a
			      token is NS_PER_S of them, so refill
			      is exact integer arithmetic */
	int64_t tokens_at; /* when tokens was last brought up to date */
	int shutting_down;
	int drain;		 /* a wq_shutdown_drain is waiting */
	unsigned n_blocked;	 /* threads waiting in wq_get */
	unsigned n_idle_waiters; /* threads waiting on idle_cv */

	/* metrics */
	uint64_t adds, retries;
	int64_t lat_sum, work_sum;
	uint64_t lat_n, work_n;
};

/* ---------------------------------------------------------------- locks */

static void mutex_init(pthread_mutex_t *mu)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
#ifdef LAPIS_DEBUG
	/* STYLE.md §5: error-checking mutexes in debug builds; lock() below
	   turns a relock or a foreign unlock into a panic. */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
#endif
	int rc = pthread_mutex_init(mu, &a);
	LP_ASSERT(rc == 0);
	pthread_mutexattr_destroy(&a);
}

static void lock(pthread_mutex_t *mu)
{
	int rc = pthread_mutex_lock(mu);
	LP_ASSERT(rc == 0);
}

static void unlock(pthread_mutex_t *mu)
{
	int rc = pthread_mutex_unlock(mu);
	LP_ASSERT(rc == 0);
}

/* ---------------------------------------------------------------- clocks */

static int64_t real_now(wq_clock *c)
{
	(void)c;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void real_wait(wq_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
		      int64_t deadline)
{
	(void)c;
	int rc;
	if (deadline == WQ_FOREVER) {
		rc = pthread_cond_wait(cv, mu);
		LP_ASSERT(rc == 0);
		return;
	}
	if (deadline < 0)
		deadline = 0;
	struct timespec ts = {.tv_sec = deadline / NS_PER_S,
			      .tv_nsec = deadline % NS_PER_S};
	rc = pthread_cond_timedwait(cv, mu, &ts);
	LP_ASSERT(rc == 0 || rc == ETIMEDOUT);
}

/* Deadlines are CLOCK_MONOTONIC times: the cv must measure that clock. */
static int real_cond_init(wq_clock *c, pthread_cond_t *cv)
{
	(void)c;
	return lp_cond_init_mono(cv);
}

/* The real clock moves by itself: timed waits notice, no wakers needed. */
static void real_subscribe(wq_clock *c, struct wq_waker *w)
{
	(void)c;
	(void)w;
}

static wq_clock real_clock = {
    .now = real_now,
    .wait = real_wait,
    .cond_init = real_cond_init,
    .subscribe = real_subscribe,
    .unsubscribe = real_subscribe,
};

wq_clock *wq_clock_real(void)
{
	return &real_clock;
}

struct wq_fake_clock {
	wq_clock base;		/* first: a wq_clock * is a wq_fake_clock * */
	uint32_t magic;		/* FAKE_MAGIC while live */
	_Atomic int64_t now;	/* atomic: read under queue locks, which
				   must not take mu (lock order) */
	pthread_mutex_t mu;	/* guards wakers; held while they run, so
				   unsubscribe waits for a running step */
	struct wq_waker wakers; /* sentinel of a circular list */
};

static struct wq_fake_clock *fake_of(wq_clock *c)
{
	struct wq_fake_clock *f = (struct wq_fake_clock *)c;
	LP_ASSERT(f->magic == FAKE_MAGIC);
	return f;
}

static int64_t fake_now(wq_clock *c)
{
	return atomic_load(&fake_of(c)->now);
}

/* Deadlines are ignored: the time moves only in wq_fake_clock_step, which
   wakes every subscribed queue's waiters so they look again. */
static void fake_wait(wq_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
		      int64_t deadline)
{
	(void)c;
	(void)deadline;
	int rc = pthread_cond_wait(cv, mu);
	LP_ASSERT(rc == 0);
}

static int fake_cond_init(wq_clock *c, pthread_cond_t *cv)
{
	(void)c;
	return pthread_cond_init(cv, NULL);
}

static void fake_subscribe(wq_clock *c, struct wq_waker *w)
{
	struct wq_fake_clock *f = fake_of(c);
	lock(&f->mu);
	w->next = f->wakers.next;
	w->prev = &f->wakers;
	f->wakers.next->prev = w;
	f->wakers.next = w;
	unlock(&f->mu);
}

static void fake_unsubscribe(wq_clock *c, struct wq_waker *w)
{
	struct wq_fake_clock *f = fake_of(c);
	lock(&f->mu);
	w->prev->next = w->next;
	w->next->prev = w->prev;
	w->prev = w->next = NULL;
	unlock(&f->mu);
}

lp_err wq_fake_clock_new(int64_t start_ns, wq_fake_clock **out)
{
	struct wq_fake_clock *f = calloc(1, sizeof *f);
	if (!f)
		return LP_ERR(LP_E_NOMEM);
	f->base.now = fake_now;
	f->base.wait = fake_wait;
	f->base.cond_init = fake_cond_init;
	f->base.subscribe = fake_subscribe;
	f->base.unsubscribe = fake_unsubscribe;
	f->magic = FAKE_MAGIC;
	atomic_init(&f->now, start_ns);
	mutex_init(&f->mu);
	f->wakers.next = f->wakers.prev = &f->wakers;
	*out = f;
	return LP_OK;
}

void wq_fake_clock_free(wq_fake_clock *f)
{
	if (!f)
		return;
	LP_ASSERT(f->magic == FAKE_MAGIC);
	LP_ASSERT_CTX(f->wakers.next == &f->wakers,
		      "fake clock freed while a queue still uses it");
	pthread_mutex_destroy(&f->mu);
	f->magic = 0;
	free(f);
}

wq_clock *wq_fake_clock_clock(wq_fake_clock *f)
{
	LP_ASSERT(f->magic == FAKE_MAGIC);
	return &f->base;
}

int64_t wq_fake_clock_now(wq_fake_clock *f)
{
	LP_ASSERT(f->magic == FAKE_MAGIC);
	return atomic_load(&f->now);
}

void wq_fake_clock_step(wq_fake_clock *f, int64_t d)
{
	LP_ASSERT(f->magic == FAKE_MAGIC);
	LP_ASSERT_CTX(d >= 0, "a monotonic clock never goes back");
	lock(&f->mu);
	/* Store the time before waking anyone: a waiter that checked the
	   old time holds its queue's mu until it waits, and the waker takes
	   that mu, so the broadcast cannot fall between check and wait. */
	atomic_fetch_add(&f->now, d);
	for (struct wq_waker *w = f->wakers.next; w != &f->wakers; w = w->next)
		w->fn(w->arg);
	unlock(&f->mu);
}

void wq_fake_clock_set(wq_fake_clock *f, int64_t t)
{
	LP_ASSERT(f->magic == FAKE_MAGIC);
	int64_t now = atomic_load(&f->now);
	LP_ASSERT_CTX(t >= now, "a monotonic clock never goes back");
	wq_fake_clock_step(f, t - now);
}

/* ---------------------------------------------------------------- hashing */

/* SipHash-1-3 (Aumasson and Bernstein), seeded per queue: keys are object
   names that clients choose, so a fixed hash would let them pile every key
   into one chain. */
static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                               \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = rotl(v1, 13);                                             \
		v1 ^= v0;                                                      \
		v0 = rotl(v0, 32);                                             \
		v2 += v3;                                                      \
		v3 = rotl(v3, 16);                                             \
		v3 ^= v2;                                                      \
		v0 += v3;                                                      \
		v3 = rotl(v3, 21);                                             \
		v3 ^= v0;                                                      \
		v2 += v1;                                                      \
		v1 = rotl(v1, 17);                                             \
		v1 ^= v2;                                                      \
		v2 = rotl(v2, 32);                                             \
	} while (0)

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint64_t ctl__siphash(const uint64_t seed[2], const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t v0 = seed[0] ^ 0x736f6d6570736575ULL;
	uint64_t v1 = seed[1] ^ 0x646f72616e646f6dULL;
	uint64_t v2 = seed[0] ^ 0x6c7967656e657261ULL;
	uint64_t v3 = seed[1] ^ 0x7465646279746573ULL;
	size_t full = n & ~(size_t)7;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = load_le64(p + i);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	uint64_t b = (uint64_t)n << 56;
	for (size_t i = 0; i < (n & 7); i++)
		b |= (uint64_t)p[full + i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void ctl__hash_seed(uint64_t seed[2])
{
	if (getrandom(seed, 2 * sizeof *seed, GRND_NONBLOCK) ==
	    (ssize_t)(2 * sizeof *seed))
		return;
	/* No entropy yet (early boot): the seed only spreads keys, so a
	   mix of the time and an address will do. */
	seed[0] = (uint64_t)real_now(NULL) ^ 0x9e3779b97f4a7c15ULL;
	seed[1] = (uint64_t)(uintptr_t)seed * 0xbf58476d1ce4e5b9ULL;
}

/* ---------------------------------------------------------------- table */

/* Call with q->mu held (as every function below that takes a wq *, up to
   the public functions). */
static struct ent *find(wq *q, const char *key, size_t len, uint64_t h)
{
	for (struct ent *e = q->tab[h & (q->n_buckets - 1)]; e; e = e->hnext)
		if (e->hash == h && e->key_len == len &&
		    memcmp(e->key, key, len) == 0)
			return e;
	return NULL;
}

/* Move every entry to a table of nb buckets; on no memory keep the old one
   (only the load factor suffers). */
static void rehash(wq *q, size_t nb)
{
	struct ent **t = calloc(nb, sizeof *t);
	if (!t)
		return;
	for (size_t i = 0; i < q->n_buckets; i++) {
		struct ent *e = q->tab[i];
		while (e) {
			struct ent *next = e->hnext;
			size_t b = e->hash & (nb - 1);
			e->hnext = t[b];
			t[b] = e;
			e = next;
		}
	}
	free(q->tab);
	q->tab = t;
	q->n_buckets = nb;
}

/* The entry of key, made (with no state) if missing; NULL: no memory. */
static struct ent *obtain(wq *q, const char *key, size_t len, uint64_t h)
{
	struct ent *e = find(q, key, len, h);
	if (e)
		return e;
	e = malloc(sizeof *e + len + 1);
	if (!e)
		return NULL;
	memset(e, 0, sizeof *e);
	e->magic = ENT_MAGIC;
	e->hash = h;
	e->heap_idx = NOT_IN_HEAP;
	e->key_len = len;
	memcpy(e->key, key, len + 1);
	size_t b = h & (q->n_buckets - 1);
	e->hnext = q->tab[b];
	q->tab[b] = e;
	q->n_ents++;
	if (q->n_ents > q->n_buckets)
		rehash(q, q->n_buckets * 2);
	return e;
}

static int referenced(const struct ent *e)
{
	return e->dirty || e->processing || e->heap_idx != NOT_IN_HEAP ||
	       e->failures > 0;
}

/* Free e if no state refers to it any more (invariant 3). */
static void release(wq *q, struct ent *e)
{
	if (referenced(e))
		return;
	struct ent **pp = &q->tab[e->hash & (q->n_buckets - 1)];
	while (*pp != e) {
		LP_ASSERT(*pp);
		pp = &(*pp)->hnext;
	}
	*pp = e->hnext;
	q->n_ents--;
	e->magic = 0;
	free(e);
	if (q->n_buckets > MIN_BUCKETS && q->n_ents < q->n_buckets / 8)
		rehash(q, q->n_buckets / 4 < MIN_BUCKETS ? MIN_BUCKETS
							 : q->n_buckets / 4);
}

/* ---------------------------------------------------------------- heap */

static int heap_less(const struct ent *a, const struct ent *b)
{
	return a->ready_at < b->ready_at ||
	       (a->ready_at == b->ready_at && a->seq < b->seq);
}

static void heap_put(wq *q, size_t i, struct ent *e)
{
	q->heap[i] = e;
	e->heap_idx = i;
}

static void sift_up(wq *q, size_t i)
{
	struct ent *e = q->heap[i];
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!heap_less(e, q->heap[parent]))
			break;
		heap_put(q, i, q->heap[parent]);
		i = parent;
	}
	heap_put(q, i, e);
}

static void sift_down(wq *q, size_t i)
{
	struct ent *e = q->heap[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n_heap)
			break;
		if (c + 1 < q->n_heap && heap_less(q->heap[c + 1], q->heap[c]))
			c++;
		if (!heap_less(q->heap[c], e))
			break;
		heap_put(q, i, q->heap[c]);
		i = c;
	}
	heap_put(q, i, e);
}

static lp_err heap_push(wq *q, struct ent *e)
{
	if (q->n_heap == q->cap_heap) {
		size_t cap = q->cap_heap ? 2 * q->cap_heap : 16;
		struct ent **h = realloc(q->heap, cap * sizeof *h);
		if (!h)
			return LP_ERR(LP_E_NOMEM);
		q->heap = h;
		q->cap_heap = cap;
	}
	heap_put(q, q->n_heap++, e);
	sift_up(q, q->n_heap - 1);
	return LP_OK;
}

static struct ent *heap_pop(wq *q)
{
	struct ent *top = q->heap[0];
	if (--q->n_heap > 0) {
		heap_put(q, 0, q->heap[q->n_heap]);
		sift_down(q, 0);
	}
	top->heap_idx = NOT_IN_HEAP;
	return top;
}

/* ---------------------------------------------------------------- core */

/* The add of wq_add (semantics 1 and 2), at time now. */
static void mark_dirty(wq *q, struct ent *e, int64_t now)
{
	if (e->dirty)
		return;
	e->dirty = 1;
	e->add_time = now;
	q->n_dirty++;
	q->adds++;
	if (e->processing)
		return; /* wq_done queues it */
	e->queued = 1;
	e->qnext = NULL;
	if (q->tail)
		q->tail->qnext = e;
	else
		q->head = e;
	q->tail = e;
	q->n_queued++;
	if (q->n_blocked)
		pthread_cond_signal(&q->get_cv);
}

/* Turn every delayed key whose time has come into an add, as of its ready
   time: the queue latency counts from then, however late we look. */
static void promote(wq *q, int64_t now)
{
	while (q->n_heap && q->heap[0]->ready_at <= now) {
		struct ent *e = heap_pop(q);
		mark_dirty(q, e, e->ready_at);
	}
}

/* Delay e until now + delay (> 0), keeping an earlier ready time. */
static lp_err delay_locked(wq *q, struct ent *e, int64_t now, int64_t delay)
{
	int64_t ready =
	    delay > INT64_MAX - 1 - now ? INT64_MAX - 1 : now + delay;
	if (e->heap_idx != NOT_IN_HEAP) {
		if (ready >= e->ready_at)
			return LP_OK;
		e->ready_at = ready;
		sift_up(q, e->heap_idx);
	} else {
		e->ready_at = ready;
		e->seq = q->next_seq++;
		lp_err rc = heap_push(q, e);
		if (rc)
			return rc;
	}
	/* A new earliest ready time: blocked getters wait until the old one,
	   so wake them to wait for this one instead. */
	if (e->heap_idx == 0 && q->n_blocked)
		pthread_cond_broadcast(&q->get_cv);
	return LP_OK;
}

/* The per-key exponential back-off: base * 2^failures, capped; counts
   this failure. */
static int64_t backoff_when(wq *q, struct ent *e)
{
	uint32_t n = e->failures;
	if (e->failures < UINT32_MAX)
		e->failures++;
	if (n >= 63 || q->base_delay > (q->max_delay >> n))
		return q->max_delay;
	int64_t d = q->base_delay << n;
	return d > q->max_delay ? q->max_delay : d;
}

/* The overall token bucket: take one token at now, returning how long the
   caller must wait for it (0 while the burst lasts). Tokens are counted in
   token-nanoseconds, so qps tokens per second refill at exactly qps per
   elapsed nanosecond. */
static int64_t bucket_when(wq *q, int64_t now)
{
	int64_t cap = q->burst * NS_PER_S;
	if (now > q->tokens_at) {
		int64_t elapsed = now - q->tokens_at;
		int64_t room = cap - q->tokens;
		if (elapsed >= room / q->qps + 1)
			q->tokens = cap;
		else
			q->tokens += elapsed * q->qps;
		if (q->tokens > cap)
			q->tokens = cap;
		q->tokens_at = now;
	}
	if (q->tokens - NS_PER_S >= TOKENS_FLOOR)
		q->tokens -= NS_PER_S;
	if (q->tokens >= 0)
		return 0;
	/* Round up: the token is whole only after the full wait. */
	return (-q->tokens + q->qps - 1) / q->qps;
}

static void link_processing(wq *q, struct ent *e)
{
	e->pprev = NULL;
	e->pnext = q->proc;
	if (q->proc)
		q->proc->pprev = e;
	q->proc = e;
	q->n_processing++;
}

static void unlink_processing(wq *q, struct ent *e)
{
	if (e->pprev)
		e->pprev->pnext = e->pnext;
	else
		q->proc = e->pnext;
	if (e->pnext)
		e->pnext->pprev = e->pprev;
	e->pprev = e->pnext = NULL;
	q->n_processing--;
}

/* Drop every delayed key (shutdown, invariant 6). */
static void drop_delayed(wq *q)
{
	while (q->n_heap)
		release(q, heap_pop(q));
}

static lp_err get_locked(wq *q, const char **key, int block)
{
	int64_t now;
	for (;;) {
		now = q->clk->now(q->clk);
		if (!q->shutting_down)
			promote(q, now);
		if (q->head)
			break;
		if (q->shutting_down)
			return LP_E_CLOSED;
		if (!block)
			return LP_E_AGAIN;
		int64_t deadline =
		    q->n_heap ? q->heap[0]->ready_at : WQ_FOREVER;
		q->n_blocked++;
		if (q->n_idle_waiters)
			pthread_cond_broadcast(&q->idle_cv);
		q->clk->wait(q->clk, &q->get_cv, &q->mu, deadline);
		q->n_blocked--;
	}
	struct ent *e = q->head;
	q->head = e->qnext;
	if (!q->head)
		q->tail = NULL;
	e->qnext = NULL;
	e->queued = 0;
	q->n_queued--;
	e->dirty = 0;
	q->n_dirty--;
	e->processing = 1;
	e->start_time = now;
	link_processing(q, e);
	q->lat_sum += now - e->add_time;
	q->lat_n++;
	*key = e->key;
	return LP_OK;
}

static void wake_getters(void *arg)
{
	wq *q = arg;
	lock(&q->mu);
	if (q->n_blocked)
		pthread_cond_broadcast(&q->get_cv);
	unlock(&q->mu);
}

static void check_queue(const wq *q)
{
	LP_ASSERT_CTX(q && q->magic == WQ_MAGIC, "not a live work queue");
}

/* ---------------------------------------------------------------- public */

lp_err wq_new(const struct wq_opts *o, wq **out)
{
	static const struct wq_opts none;
	if (!o)
		o = &none;
	int64_t base = o->base_delay ? o->base_delay : DEF_BASE_DELAY;
	int64_t max = o->max_delay ? o->max_delay : DEF_MAX_DELAY;
	if (base < 0 || max < 0 || max < base)
		return LP_ERR(LP_E_INVAL);

	wq *q = calloc(1, sizeof *q);
	if (!q)
		return LP_ERR(LP_E_NOMEM);
	q->name = strdup(o->name ? o->name : "");
	q->tab = calloc(MIN_BUCKETS, sizeof *q->tab);
	if (!q->name || !q->tab)
		goto fail_mem;
	q->n_buckets = MIN_BUCKETS;
	q->clk = o->clock ? o->clock : wq_clock_real();
	q->base_delay = base;
	q->max_delay = max;
	q->qps = o->qps ? o->qps : DEF_QPS;
	q->burst = o->burst ? o->burst : DEF_BURST;
	ctl__hash_seed(q->seed);
	mutex_init(&q->mu);
	if (q->clk->cond_init(q->clk, &q->get_cv))
		goto fail_mutex;
	if (real_cond_init(NULL, &q->idle_cv)) {
		pthread_cond_destroy(&q->get_cv);
		goto fail_mutex;
	}
	/* The bucket starts full, as a fresh rate.Limiter does. */
	q->tokens = q->burst * NS_PER_S;
	q->tokens_at = q->clk->now(q->clk);
	q->waker.fn = wake_getters;
	q->waker.arg = q;
	q->magic = WQ_MAGIC;
	q->clk->subscribe(q->clk, &q->waker);
	*out = q;
	return LP_OK;

fail_mutex:
	pthread_mutex_destroy(&q->mu);
fail_mem:
	free(q->tab);
	free(q->name);
	free(q);
	return LP_ERR(LP_E_NOMEM);
}

void wq_free(wq *q)
{
	if (!q)
		return;
	check_queue(q);
	q->clk->unsubscribe(q->clk, &q->waker);
	lock(&q->mu);
	LP_ASSERT_CTX(q->n_blocked == 0 && q->n_idle_waiters == 0,
		      "work queue freed while a thread waits in it");
	unlock(&q->mu);
	for (size_t i = 0; i < q->n_buckets; i++) {
		struct ent *e = q->tab[i];
		while (e) {
			struct ent *next = e->hnext;
			e->magic = 0;
			free(e);
			e = next;
		}
	}
	free(q->tab);
	free(q->heap);
	pthread_cond_destroy(&q->idle_cv);
	pthread_cond_destroy(&q->get_cv);
	pthread_mutex_destroy(&q->mu);
	free(q->name);
	q->magic = 0;
	free(q);
}

const char *wq_name(wq *q)
{
	check_queue(q);
	return q->name;
}

lp_err wq_add(wq *q, const char *key)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lp_err rc = LP_OK;
	lock(&q->mu);
	if (!q->shutting_down) {
		struct ent *e = obtain(q, key, len, h);
		if (e)
			mark_dirty(q, e, q->clk->now(q->clk));
		else
			rc = LP_ERR(LP_E_NOMEM);
	}
	unlock(&q->mu);
	return rc;
}

lp_err wq_add_after(wq *q, const char *key, int64_t delay)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lp_err rc = LP_OK;
	lock(&q->mu);
	if (q->shutting_down)
		goto out;
	q->retries++;
	struct ent *e = obtain(q, key, len, h);
	if (!e) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	int64_t now = q->clk->now(q->clk);
	if (delay <= 0)
		mark_dirty(q, e, now);
	else
		rc = delay_locked(q, e, now, delay);
	release(q, e); /* only if a failed push left it without state */
out:
	unlock(&q->mu);
	return rc;
}

lp_err wq_add_rate_limited(wq *q, const char *key, int64_t *delay)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lp_err rc = LP_OK;
	int64_t d = 0;
	lock(&q->mu);
	if (q->shutting_down)
		goto out;
	struct ent *e = obtain(q, key, len, h);
	if (!e) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	int64_t now = q->clk->now(q->clk);
	/* Both limiters count this request, as MaxOfRateLimiter asks each. */
	uint32_t failures = e->failures;
	int64_t bucket_tokens = q->tokens, bucket_at = q->tokens_at;
	int64_t per_key = backoff_when(q, e);
	int64_t overall = bucket_when(q, now);
	d = per_key > overall ? per_key : overall;
	q->retries++;
	/* d >= base_delay > 0: always a delayed add. */
	rc = delay_locked(q, e, now, d);
	if (rc) {
		/* Nothing changed: give the token and the failure back. */
		e->failures = failures;
		q->tokens = bucket_tokens;
		q->tokens_at = bucket_at;
		q->retries--;
		d = 0;
		release(q, e);
	}
out:
	unlock(&q->mu);
	if (delay)
		*delay = d;
	return rc;
}

void wq_forget(wq *q, const char *key)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lock(&q->mu);
	struct ent *e = find(q, key, len, h);
	if (e) {
		e->failures = 0;
		release(q, e);
	}
	unlock(&q->mu);
}

uint32_t wq_num_requeues(wq *q, const char *key)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lock(&q->mu);
	struct ent *e = find(q, key, len, h);
	uint32_t n = e ? e->failures : 0;
	unlock(&q->mu);
	return n;
}

lp_err wq_get(wq *q, const char **key)
{
	check_queue(q);
	lock(&q->mu);
	lp_err rc = get_locked(q, key, 1);
	unlock(&q->mu);
	return rc;
}

lp_err wq_try_get(wq *q, const char **key)
{
	check_queue(q);
	lock(&q->mu);
	lp_err rc = get_locked(q, key, 0);
	unlock(&q->mu);
	return rc;
}

void wq_done(wq *q, const char *key)
{
	check_queue(q);
	size_t len = strlen(key);
	uint64_t h = ctl__siphash(q->seed, key, len);
	lock(&q->mu);
	struct ent *e = find(q, key, len, h);
	LP_ASSERT_CTX(e && e->processing, key);
	int64_t now = q->clk->now(q->clk);
	q->work_sum += now - e->start_time;
	q->work_n++;
	e->processing = 0;
	unlink_processing(q, e);
	if (e->dirty) {
		/* Added while processing: queue it now (semantics 2). The
		   caller's key pointer stays valid: the entry lives on. */
		e->queued = 1;
		e->qnext = NULL;
		if (q->tail)
			q->tail->qnext = e;
		else
			q->head = e;
		q->tail = e;
		q->n_queued++;
		if (q->n_blocked)
			pthread_cond_signal(&q->get_cv);
	} else {
		release(q, e);
	}
	if (q->n_processing == 0 && q->n_idle_waiters)
		pthread_cond_broadcast(&q->idle_cv);
	unlock(&q->mu);
}

size_t wq_len(wq *q)
{
	check_queue(q);
	lock(&q->mu);
	if (!q->shutting_down)
		promote(q, q->clk->now(q->clk));
	size_t n = q->n_queued;
	unlock(&q->mu);
	return n;
}

static void shutdown_locked(wq *q, int drain)
{
	q->shutting_down = 1;
	q->drain = drain;
	drop_delayed(q);
	pthread_cond_broadcast(&q->get_cv);
	pthread_cond_broadcast(&q->idle_cv);
}

void wq_shutdown(wq *q)
{
	check_queue(q);
	lock(&q->mu);
	shutdown_locked(q, 0);
	unlock(&q->mu);
}

void wq_shutdown_drain(wq *q)
{
	check_queue(q);
	lock(&q->mu);
	shutdown_locked(q, 1);
	q->n_idle_waiters++;
	while (q->drain && q->n_processing > 0) {
		int rc = pthread_cond_wait(&q->idle_cv, &q->mu);
		LP_ASSERT(rc == 0);
	}
	q->n_idle_waiters--;
	unlock(&q->mu);
}

int wq_shutting_down(wq *q)
{
	check_queue(q);
	lock(&q->mu);
	int s = q->shutting_down;
	unlock(&q->mu);
	return s;
}

lp_err wq_wait_getters(wq *q, unsigned n)
{
	check_queue(q);
	lp_err rc = LP_OK;
	lock(&q->mu);
	q->n_idle_waiters++;
	while (q->n_blocked < n && !q->shutting_down) {
		int prc = pthread_cond_wait(&q->idle_cv, &q->mu);
		LP_ASSERT(prc == 0);
	}
	if (q->n_blocked < n)
		rc = LP_E_CLOSED;
	q->n_idle_waiters--;
	unlock(&q->mu);
	return rc;
}

void wq_metrics(wq *q, struct wq_metrics *out)
{
	check_queue(q);
	struct wq_metrics m = {0};
	lock(&q->mu);
	int64_t now = q->clk->now(q->clk);
	if (!q->shutting_down)
		promote(q, now);
	m.depth = q->n_dirty;
	m.adds = q->adds;
	m.retries = q->retries;
	m.waiting = q->n_heap;
	m.processing = q->n_processing;
	m.keys = q->n_ents;
	m.queue_latency_sum = q->lat_sum;
	m.queue_latency_count = q->lat_n;
	m.work_duration_sum = q->work_sum;
	m.work_duration_count = q->work_n;
	for (struct ent *e = q->proc; e; e = e->pnext) {
		int64_t age = now - e->start_time;
		m.unfinished_work += age;
		if (age > m.longest_running)
			m.longest_running = age;
	}
	unlock(&q->mu);
	*out = m;
}

/* ---------------------------------------------------------------- check */

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			snprintf(msg, msg_len, __VA_ARGS__);                   \
			rc = LP_E_CORRUPT;                                     \
			goto out;                                              \
		}                                                              \
	} while (0)

lp_err wq_check(wq *q, char *msg, size_t msg_len)
{
	check_queue(q);
	lp_err rc = LP_OK;
	if (msg_len)
		msg[0] = 0;
	lock(&q->mu);
	size_t n = 0, dirty = 0, queued = 0, proc = 0, delayed = 0;
	CHECK((q->n_buckets & (q->n_buckets - 1)) == 0 &&
		  q->n_buckets >= MIN_BUCKETS,
	      "bucket count %zu", q->n_buckets);
	for (size_t b = 0; b < q->n_buckets; b++) {
		for (struct ent *e = q->tab[b]; e; e = e->hnext) {
			n++;
			CHECK(e->magic == ENT_MAGIC, "entry without magic");
			CHECK((e->hash & (q->n_buckets - 1)) == b,
			      "%s in bucket %zu", e->key, b);
			CHECK(e->hash ==
				  ctl__siphash(q->seed, e->key, e->key_len),
			      "%s: stale hash", e->key);
			CHECK(e->key_len == strlen(e->key), "%s: length",
			      e->key);
			CHECK(referenced(e), "%s: held without state", e->key);
			CHECK(!e->queued || (e->dirty && !e->processing),
			      "%s: queued but dirty %d processing %d", e->key,
			      e->dirty, e->processing);
			CHECK(e->heap_idx == NOT_IN_HEAP ||
				  (e->heap_idx < q->n_heap &&
				   q->heap[e->heap_idx] == e),
			      "%s: heap index %zu", e->key, e->heap_idx);
			dirty += e->dirty;
			queued += e->queued;
			proc += e->processing;
			delayed += e->heap_idx != NOT_IN_HEAP;
		}
	}
	CHECK(n == q->n_ents, "%zu entries, count says %zu", n, q->n_ents);
	CHECK(dirty == q->n_dirty, "%zu dirty, count says %zu", dirty,
	      q->n_dirty);
	CHECK(queued == q->n_queued, "%zu queued, count says %zu", queued,
	      q->n_queued);
	CHECK(proc == q->n_processing, "%zu processing, count says %zu", proc,
	      q->n_processing);
	CHECK(delayed == q->n_heap, "%zu delayed, heap holds %zu", delayed,
	      q->n_heap);
	size_t fifo = 0;
	for (struct ent *e = q->head; e; e = e->qnext) {
		CHECK(e->queued, "%s in the FIFO but not queued", e->key);
		CHECK(++fifo <= queued, "FIFO longer than the queued count");
		CHECK(e->qnext || q->tail == e, "FIFO tail");
	}
	CHECK(fifo == queued, "FIFO holds %zu, %zu queued", fifo, queued);
	size_t plist = 0;
	for (struct ent *e = q->proc; e; e = e->pnext) {
		CHECK(e->processing, "%s listed but not processing", e->key);
		CHECK(++plist <= proc, "processing list too long");
		CHECK(!e->pnext || e->pnext->pprev == e, "processing links");
	}
	CHECK(plist == proc, "processing list holds %zu, %zu processing", plist,
	      proc);
	for (size_t i = 1; i < q->n_heap; i++)
		CHECK(!heap_less(q->heap[i], q->heap[(i - 1) / 2]),
		      "heap order at %zu", i);
	CHECK(!q->shutting_down || q->n_heap == 0,
	      "delayed keys after shutdown");
	CHECK(q->tokens <= q->burst * NS_PER_S && q->tokens >= TOKENS_FLOOR,
	      "bucket tokens %lld", (long long)q->tokens);
out:
	unlock(&q->mu);
	return rc;
}
