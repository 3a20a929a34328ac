/*
 * workqueue.h -- the controllers' work queue: client-go's rate-limiting,
 * delaying work queue (k8s.io/client-go/util/workqueue) in C, for
 * DESIGN.md "Controllers".
 *
 * A queue holds keys: NUL-terminated strings, copied in. Controllers put
 * the keys of objects that need work ("namespace/name"), worker threads
 * take them out, reconcile, and say they are done.
 *
 * Semantics (the ones client-go's queue.go, delaying_queue.go,
 * rate_limiting_queue.go and default_rate_limiters.go promise)
 *  1. Stingy: a key waits in the queue at most once. Adding a key that is
 *     already waiting does nothing (the dirty set).
 *  2. Exclusive: a key handed to a worker by wq_get() is processing until
 *     that worker calls wq_done(); no other worker gets it in between. A key
 *     added while processing is remembered (dirty) and queued again by
 *     wq_done().
 *  3. Fair: keys come out in the order they were queued.
 *  4. Delayed adds: wq_add_after() queues a key once the clock reaches
 *     now + delay. A key waiting for a delay keeps the earlier ready time
 *     when it is delayed again. Keys of equal ready time come out in the
 *     order they were delayed.
 *  5. Rate-limited adds: wq_add_rate_limited() delays a key by the larger of
 *     a per-key exponential back-off (base_delay * 2^n after n rate-limited
 *     adds since wq_forget(), capped at max_delay: client-go's
 *     ItemExponentialFailureRateLimiter) and an overall token bucket (qps
 *     refill, burst size: BucketRateLimiter); both are always consulted, as
 *     MaxOfRateLimiter does. Defaults are client-go's
 *     DefaultControllerRateLimiter: 5 ms, 1000 s, 10/s, 100.
 *  6. Shutdown: wq_shutdown() wakes every blocked wq_get(); keys still
 *     queued are handed out until the queue is empty, then wq_get() says
 *     LP_E_CLOSED. Adds after shutdown are ignored; keys waiting for a
 *     delay are dropped. wq_shutdown_drain() also waits until no key is
 *     processing.
 *
 * Threads
 *  - Every function is thread-safe. wq_get() blocks: call it from a
 *    controller worker (STYLE.md §5), never from the engine's writer, a
 *    request thread or an informer callback that must not wait.
 *  - Each queue has one mutex; no callback runs under it. A fake clock's
 *    lock is taken before a queue's (wq_fake_clock_step wakes the queues),
 *    never after.
 *
 * Time comes from a wq_clock: the real monotonic clock by default, or a
 * fake clock that moves only when a test steps it, so tests check delays
 * exactly and never sleep. Times and durations are int64 nanoseconds.
 */
#ifndef LAPIS_CONTROLLERS_WORKQUEUE_H
#define LAPIS_CONTROLLERS_WORKQUEUE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "lapis/err.h"

typedef struct wq wq;			    /* a work queue */
typedef struct wq_clock wq_clock;	    /* a source of time */
typedef struct wq_fake_clock wq_fake_clock; /* a clock tests step by hand */

#define WQ_MS(n) ((int64_t)(n)*1000000LL)
#define WQ_S(n) ((int64_t)(n)*1000000000LL)
/* A deadline that never comes. */
#define WQ_FOREVER INT64_MAX

/* ---------------------------------------------------------------- clocks */

/* A queue's registration with its clock: the clock calls fn(arg) after its
   time moved, so that waiters look at the time again. Links are the
   clock's. */
struct wq_waker {
	void (*fn)(void *arg);
	void *arg;
	struct wq_waker *prev, *next; /* the clock's list, under its lock */
};

/*
 * A clock. now() is monotonic (never goes back). wait() waits on cv, with
 * mu held as for pthread_cond_wait, until signalled or until now() reaches
 * deadline (WQ_FOREVER: no deadline); it may return early, so callers wait
 * in a loop. cond_init() makes a cv that wait() can use. subscribe() adds a
 * waker, called (never with a queue lock held) whenever the clock's time
 * moves other than by itself; unsubscribe() removes it, and once it returns
 * the waker is never called again. A clock outlives every queue using it.
 */
struct wq_clock {
	int64_t (*now)(wq_clock *c);
	void (*wait)(wq_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
		     int64_t deadline);
	int (*cond_init)(wq_clock *c, pthread_cond_t *cv);
	void (*subscribe)(wq_clock *c, struct wq_waker *w);
	void (*unsubscribe)(wq_clock *c, struct wq_waker *w);
};

/* The real clock: CLOCK_MONOTONIC. Immortal; borrowed. */
wq_clock *wq_clock_real(void);

/*
 * A fake clock at start_ns. Its time moves only by wq_fake_clock_step/set;
 * its wait() ignores deadlines and returns when signalled or when the time
 * moves. Errors: LP_E_NOMEM. *out is new: free with wq_fake_clock_free()
 * after every queue using it is freed.
 */
lp_err wq_fake_clock_new(int64_t start_ns, wq_fake_clock **out);
void wq_fake_clock_free(wq_fake_clock *f); /* NULL ok */
/* The clock to give to wq_opts; borrowed, valid until the fake clock is
   freed. */
wq_clock *wq_fake_clock_clock(wq_fake_clock *f);
/* Move the time forward by d >= 0 ns and wake every waiter of every queue
   on this clock. Any thread; never with a queue lock held. */
void wq_fake_clock_step(wq_fake_clock *f, int64_t d);
/* Move the time to t (>= its time now), as step. */
void wq_fake_clock_set(wq_fake_clock *f, int64_t t);
/* The fake time now. */
int64_t wq_fake_clock_now(wq_fake_clock *f);

/* ---------------------------------------------------------------- queues */

struct wq_opts {
	const char *name; /* for metrics and logs; copied; NULL: "" */
	wq_clock
	    *clock; /* NULL: wq_clock_real(); borrowed: outlives the queue */
	int64_t base_delay; /* first back-off of wq_add_rate_limited; 0: 5 ms */
	int64_t max_delay;  /* back-off cap; 0: 1000 s */
	uint32_t qps;	    /* the overall bucket's refill per second; 0: 10 */
	uint32_t burst;	    /* the overall bucket's size; 0: 100 */
};

/*
 * Make a queue. o may be NULL (all defaults).
 * Errors: LP_E_NOMEM, LP_E_INVAL (a negative delay, max_delay < base_delay).
 * *out is new: free with wq_free().
 */
lp_err wq_new(const struct wq_opts *o, wq **out);

/*
 * Free a queue and every key in it. Call after wq_shutdown and after every
 * thread that used the queue has returned from it (joined). NULL ok.
 */
void wq_free(wq *q);

/* The queue's name; borrowed, valid until wq_free. */
const char *wq_name(wq *q);

/*
 * Queue key unless it is already waiting (semantics 1, 2).
 * Errors: LP_E_NOMEM (nothing changed). After shutdown the add is ignored
 * and LP_OK returned, as client-go does.
 */
lp_err wq_add(wq *q, const char *key);

/*
 * Queue key once the clock reaches now + delay (delay <= 0: wq_add now).
 * A key already waiting for a delay keeps the earlier of its ready times.
 * Counts a retry in the metrics. Errors: LP_E_NOMEM (nothing changed).
 * Ignored (LP_OK) after shutdown.
 */
lp_err wq_add_after(wq *q, const char *key, int64_t delay);

/*
 * wq_add_after(key, the rate limiters' delay) (semantics 5); counts one
 * more requeue of key. *delay (may be NULL) receives the delay chosen.
 * Errors: LP_E_NOMEM (nothing changed). Ignored (LP_OK, *delay 0) after
 * shutdown.
 */
lp_err wq_add_rate_limited(wq *q, const char *key, int64_t *delay);

/* Reset key's back-off: its next rate-limited add waits base_delay again.
   Does not take it out of the queue or the delays. */
void wq_forget(wq *q, const char *key);

/* Rate-limited adds of key since its last wq_forget(). */
uint32_t wq_num_requeues(wq *q, const char *key);

/*
 * Take the next key, blocking until there is one or the queue is shut down
 * and empty. *key is borrowed: valid until this thread's wq_done(q, *key).
 * Errors: LP_E_CLOSED (shut down and nothing left: the worker should
 * return). Controller worker threads only.
 */
lp_err wq_get(wq *q, const char **key);

/* As wq_get, without blocking: LP_E_AGAIN when no key is ready. */
lp_err wq_try_get(wq *q, const char **key);

/*
 * Say key, from wq_get(), is processed: queue it again if it was added
 * meanwhile. key may be the pointer wq_get gave (it dies here). Calling it
 * for a key that is not processing is a bug and panics.
 */
void wq_done(wq *q, const char *key);

/* Keys ready for wq_get now (after moving due delayed keys in). */
size_t wq_len(wq *q);

/* Shut down (semantics 6); cancels a wq_shutdown_drain() wait. */
void wq_shutdown(wq *q);

/*
 * Shut down, then wait until no key is processing (every key handed out
 * is done), or until wq_shutdown() is called. Keys still queued are handed
 * out after it returns, as in client-go: join the workers (they leave on
 * LP_E_CLOSED) to know the queue is empty. Never from a worker holding a
 * key: it would wait for itself.
 */
void wq_shutdown_drain(wq *q);

/* 1 once wq_shutdown or wq_shutdown_drain was called. */
int wq_shutting_down(wq *q);

/*
 * Wait until at least n threads are blocked in wq_get() on this queue.
 * For tests and orderly start-up: lets a caller know its workers are
 * parked without sleeping. Errors: LP_E_CLOSED (the queue was shut down
 * first).
 */
lp_err wq_wait_getters(wq *q, unsigned n);

/* ---------------------------------------------------------------- metrics */

/* client-go's workqueue metrics, as numbers for /metrics (times in ns). */
struct wq_metrics {
	uint64_t depth;	     /* keys added and not yet handed out (dirty) */
	uint64_t adds;	     /* adds that put a key in the dirty set */
	uint64_t retries;    /* wq_add_after and wq_add_rate_limited calls */
	uint64_t waiting;    /* keys waiting for a delay */
	uint64_t processing; /* keys handed out and not done */
	uint64_t keys; /* keys the queue holds state for (incl. back-off) */
	int64_t queue_latency_sum; /* added -> handed out, summed */
	uint64_t queue_latency_count;
	int64_t work_duration_sum; /* handed out -> done, summed */
	uint64_t work_duration_count;
	int64_t unfinished_work; /* summed age of the keys processing now */
	int64_t longest_running; /* age of the oldest key processing now */
};

/* Fill *out (after moving due delayed keys in). */
void wq_metrics(wq *q, struct wq_metrics *out);

/*
 * Check the queue's invariants: counts agree with the sets, the heap is a
 * heap, every key held is referenced by some state. Returns LP_OK or
 * LP_E_CORRUPT with the first violation in msg (NUL-terminated, truncated
 * to msg_len). Walks everything under the lock: for tests.
 */
lp_err wq_check(wq *q, char *msg, size_t msg_len);

/* ---------------------------------------------------------------- internal */

/* Shared with the other controllers/ files (informer.c); not API. */

/* A fresh random seed for ctl__siphash (a time-and-address mix when the
   kernel has no entropy yet). */
void ctl__hash_seed(uint64_t seed[2]);
/* SipHash-1-3 of n bytes under seed: keys are names clients choose, so
   tables keyed by them need a keyed hash. */
uint64_t ctl__siphash(const uint64_t seed[2], const void *data, size_t n);

#endif
