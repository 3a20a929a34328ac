/*
 * tsan_workqueue.c -- producers, workers and clock steppers on one work
 * queue at once, for ThreadSanitizer (Criterion aborts under TSan,
 * Criterion issue #274, so this is a plain program: exit 0 on success, 1 on
 * a failed check).
 *
 * Two rounds, one on a fake clock that the producers step while they run,
 * one on the real clock with tiny limits (so blocked getters time out on
 * delays):
 *   1. Churn: producer threads call wq_add, wq_add_after, wq_add_rate_limited,
 *      wq_forget and wq_num_requeues on random keys; worker threads get,
 *      process and done, and sometimes re-add their key rate-limited (a
 *      failed reconcile) or forget it (a good one). Then the main thread
 *      moves the clock past every delay and waits until the queue is idle.
 *   2. Once: with the queue idle and nobody else adding, the main thread
 *      adds every key once; each must be handed out exactly once.
 *   3. Drain: the main thread adds every key again and at once calls
 *      wq_shutdown_drain; when it returns, every key handed out before the
 *      shutdown must be done (keys still queued are handed out after it).
 *      The workers leave when the queue is empty, each key handed out
 *      exactly once more; an add after shutdown is ignored.
 *
 * Invariants checked (besides TSan's own)
 *  1. No key is ever held by two workers at once (per-key in-flight
 *     counters).
 *  2. Every key is processed in round 1; exactly once in rounds 2 and 3.
 *  3. At the end: nothing queued, processing or delayed, every key that
 *     became dirty was handed out (metrics adds == gets), wq_check passes.
 * Waits are on condition variables; nothing sleeps. The seed is printed;
 * LAPIS_SEED overrides it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controllers/workqueue.h"
#include "support.h"

#define KEYS 256
#define PRODUCERS 3
#define WORKERS 4
#define OPS 20000 /* per producer */

static _Atomic int failures;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&fail_mu);
	if (atomic_fetch_add(&failures, 1) < 20) {
		fprintf(stderr, "tsan_workqueue: FAIL: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&fail_mu);
}

struct round {
	const char *name;
	wq *q;
	wq_fake_clock *fc; /* NULL: the real clock */
	uint64_t seed;
	_Atomic int phase; /* 1 churn, 2 once, 3 drain */
	_Atomic int churn; /* workers may re-add their key */
	_Atomic int inflight[KEYS];
	_Atomic long processed[KEYS][4]; /* by phase */
	_Atomic long gets;
	/* Keys handed out before shutdown (seen by the worker as not shut down
	   yet, after its wq_get), and how many of those were done: the drain
	   must return only when they are equal. */
	_Atomic long pre_gets, pre_done;
	/* Workers signal the main thread after each wq_done. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct targ {
	struct round *r;
	int id;
	pthread_t tid;
};

static void key_name(char *buf, size_t len, unsigned i)
{
	snprintf(buf, len, "ns-%u/obj-%02u", i % 5, i);
}

static int key_index(const char *k)
{
	const char *p = strstr(k, "/obj-");
	if (strncmp(k, "ns-", 3) || !p)
		return -1;
	int i = atoi(p + 5);
	return i >= 0 && i < KEYS ? i : -1;
}

static void *producer_main(void *arg)
{
	struct targ *a = arg;
	struct round *r = a->r;
	uint64_t st = r->seed * 31 + (uint64_t)a->id;
	char k[32];
	for (int n = 0; n < OPS; n++) {
		uint64_t x = ts_rand(&st);
		key_name(k, sizeof k, (unsigned)(x % KEYS));
		unsigned op = (unsigned)(x >> 32) % 100;
		lp_err rc = LP_OK;
		if (op < 40) {
			rc = wq_add(r->q, k);
		} else if (op < 65) {
			/* Up to 50 ms on the fake clock, 1 ms on the real. */
			int64_t d = r->fc ? (int64_t)(x >> 8) % WQ_MS(50)
					  : (int64_t)(x >> 8) % WQ_MS(1);
			rc = wq_add_after(r->q, k, d);
		} else if (op < 85) {
			int64_t d = -1;
			rc = wq_add_rate_limited(r->q, k, &d);
			if (rc == LP_OK && d <= 0)
				fail("%s: rate-limited delay %" PRId64, r->name,
				     d);
		} else if (op < 95) {
			wq_forget(r->q, k);
		} else {
			(void)wq_num_requeues(r->q, k);
		}
		if (rc != LP_OK)
			fail("%s: producer op %u: %s", r->name, op,
			     lp_errname(rc));
		if (r->fc && n % 64 == 63)
			wq_fake_clock_step(r->fc, WQ_MS(1 + (x >> 40) % 20));
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct targ *a = arg;
	struct round *r = a->r;
	uint64_t st = r->seed * 131 + 7 + (uint64_t)a->id;
	const char *k;
	while (wq_get(r->q, &k) == LP_OK) {
		int i = key_index(k);
		if (i < 0) {
			fail("%s: unknown key '%s'", r->name, k);
			wq_done(r->q, k);
			continue;
		}
		int phase = atomic_load(&r->phase);
		int pre = !wq_shutting_down(r->q);
		if (pre)
			atomic_fetch_add(&r->pre_gets, 1);
		if (atomic_fetch_add(&r->inflight[i], 1) != 0)
			fail("%s: key %s held by two workers", r->name, k);
		atomic_fetch_add(&r->processed[i][phase], 1);
		uint64_t x = ts_rand(&st);
		if (atomic_load(&r->churn)) {
			if (x % 10 == 0) {
				if (wq_add_rate_limited(r->q, k, NULL) != LP_OK)
					fail("%s: re-add", r->name);
			} else if (x % 10 < 5) {
				wq_forget(r->q, k);
			}
		}
		atomic_fetch_sub(&r->inflight[i], 1);
		atomic_fetch_add(&r->gets, 1);
		if (pre)
			atomic_fetch_add(&r->pre_done, 1);
		wq_done(r->q, k);
		pthread_mutex_lock(&r->mu);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	return NULL;
}

/* Wait until nothing is queued, processing or delayed; on the fake clock,
   move it past every delay whenever only delays are left. */
static void settle(struct round *r)
{
	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct wq_metrics m;
		wq_metrics(r->q, &m);
		if (m.depth == 0 && m.processing == 0 && m.waiting == 0)
			break;
		if (r->fc && m.depth == 0 && m.processing == 0) {
			pthread_mutex_unlock(&r->mu);
			/* Longer than the back-off cap: everything is due. */
			wq_fake_clock_step(r->fc, WQ_S(2000));
			pthread_mutex_lock(&r->mu);
			continue;
		}
		/* A worker's wq_done broadcasts after it; on the real clock
		   a blocked getter times out on the delay, takes the key
		   and, done, broadcasts. */
		pthread_cond_wait(&r->cv, &r->mu);
	}
	pthread_mutex_unlock(&r->mu);
}

static void add_all(struct round *r)
{
	char k[32];
	for (unsigned i = 0; i < KEYS; i++) {
		key_name(k, sizeof k, i);
		if (wq_add(r->q, k) != LP_OK)
			fail("%s: add %s", r->name, k);
	}
}

static void run_round(struct round *r, const struct wq_opts *opts)
{
	struct wq_opts o = *opts;
	o.name = r->name;
	if (r->fc)
		o.clock = wq_fake_clock_clock(r->fc);
	if (wq_new(&o, &r->q) != LP_OK) {
		fail("%s: wq_new", r->name);
		return;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	atomic_store(&r->phase, 1);
	atomic_store(&r->churn, 1);

	struct targ w[WORKERS], p[PRODUCERS];
	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct targ){.r = r, .id = i};
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i])) {
			fail("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < PRODUCERS; i++) {
		p[i] = (struct targ){.r = r, .id = i};
		if (pthread_create(&p[i].tid, NULL, producer_main, &p[i])) {
			fail("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i].tid, NULL);
	atomic_store(&r->churn, 0);
	settle(r);
	for (int i = 0; i < KEYS; i++)
		if (atomic_load(&r->processed[i][1]) == 0)
			fail("%s: key %d never processed while churning",
			     r->name, i);

	/* 2: idle, nobody else adds: every key exactly once. */
	atomic_store(&r->phase, 2);
	add_all(r);
	settle(r);

	/* 3: add everything and drain at once. */
	atomic_store(&r->phase, 3);
	add_all(r);
	wq_shutdown_drain(r->q);
	/* Keys still queued are handed out after the drain (client-go's
	   semantics), so workers may hold keys now; but every key handed out
	   before the shutdown is done. */
	long pre_gets = atomic_load(&r->pre_gets);
	long pre_done = atomic_load(&r->pre_done);
	if (pre_done != pre_gets)
		fail("%s: drain returned with %ld of %ld keys handed out "
		     "before shutdown not done",
		     r->name, pre_gets - pre_done, pre_gets);
	struct wq_metrics m;
	if (wq_add(r->q, "ns-0/obj-00") != LP_OK)
		fail("%s: add after shutdown", r->name);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i].tid, NULL);

	for (int i = 0; i < KEYS; i++)
		for (int ph = 2; ph <= 3; ph++)
			if (atomic_load(&r->processed[i][ph]) != 1)
				fail("%s: key %d processed %ld times in round "
				     "%d, want once",
				     r->name, i,
				     (long)atomic_load(&r->processed[i][ph]),
				     ph);
	wq_metrics(r->q, &m);
	if (m.depth || m.processing || m.waiting || wq_len(r->q))
		fail("%s: left depth %" PRIu64 " processing %" PRIu64
		     " waiting %" PRIu64,
		     r->name, m.depth, m.processing, m.waiting);
	if (m.adds != (uint64_t)atomic_load(&r->gets))
		fail("%s: %" PRIu64 " adds but %ld gets", r->name, m.adds,
		     (long)atomic_load(&r->gets));
	char msg[256];
	if (wq_check(r->q, msg, sizeof msg) != LP_OK)
		fail("%s: wq_check: %s", r->name, msg);
	fprintf(stderr,
		"tsan_workqueue: %s: adds %" PRIu64 " retries %" PRIu64
		" gets %ld\n",
		r->name, m.adds, m.retries, (long)atomic_load(&r->gets));
	wq_free(r->q);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
}

int main(void)
{
	uint64_t seed = ts_seed("tsan_workqueue", 20240917);

	static struct round fake;
	fake.name = "fake-clock";
	fake.seed = seed;
	if (wq_fake_clock_new(WQ_S(1), &fake.fc) != LP_OK)
		return 1;
	struct wq_opts defaults = {0};
	run_round(&fake, &defaults);
	wq_fake_clock_free(fake.fc);

	/* Real clock: back-off 10 us .. 2 ms and a bucket that refills fast,
	   so that the round ends quickly while getters still wait on
	   deadlines. */
	static struct round real;
	real.name = "real-clock";
	real.seed = seed + 1;
	struct wq_opts tiny = {.base_delay = 10000,
			       .max_delay = WQ_MS(2),
			       .qps = 200000,
			       .burst = 50};
	run_round(&real, &tiny);

	if (atomic_load(&failures)) {
		fprintf(stderr, "tsan_workqueue: %d failures\n",
			atomic_load(&failures));
		return 1;
	}
	fprintf(stderr, "tsan_workqueue: ok\n");
	return 0;
}
