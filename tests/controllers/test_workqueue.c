/*
 * test_workqueue.c -- tests of controllers/workqueue.c: client-go's work
 * queue semantics, delays and back-off checked exactly on a fake clock,
 * shutdown, metrics, and threads hammering one queue.
 *
 * Invariants of the tests
 *  1. No test sleeps or checks a time taken: delays are checked by stepping
 *     a fake clock to one nanosecond before and then exactly at the ready
 *     time; threads meet on condition variables or wq_wait_getters().
 *  2. cr_assert runs on the test's main thread only; other threads record
 *     what they saw and the main thread checks it after joining them.
 *  3. wq_check() runs after the operations of every single-threaded test.
 *  4. No .timeout on tests: Criterion 2.4.1 leaks a timeout record now and
 *     then (LeakSanitizer fails the run); CTest's TIMEOUT is the safety
 *     net for a test that hangs.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controllers/workqueue.h"
#include "support.h"

#define T0 WQ_S(1000) /* the fake clock's start: any time works */

static void check(wq *q)
{
	char msg[256];
	lp_err rc = wq_check(q, msg, sizeof msg);
	cr_assert_eq(rc, LP_OK, "wq_check: %s", msg);
}

/* A queue on a new fake clock; opts may be NULL. */
static wq *fake_queue(wq_fake_clock **fc, const struct wq_opts *opts)
{
	struct wq_opts o = {0};
	if (opts)
		o = *opts;
	cr_assert_eq(wq_fake_clock_new(T0, fc), LP_OK);
	o.clock = wq_fake_clock_clock(*fc);
	if (!o.name)
		o.name = "test";
	wq *q = NULL;
	cr_assert_eq(wq_new(&o, &q), LP_OK);
	return q;
}

static void fake_done(wq *q, wq_fake_clock *fc)
{
	check(q);
	wq_shutdown(q);
	wq_free(q);
	wq_fake_clock_free(fc);
}

/* Take the next key without blocking; it must be want. */
static void expect_get(wq *q, const char *want)
{
	const char *k = NULL;
	lp_err rc = wq_try_get(q, &k);
	cr_assert_eq(rc, LP_OK, "try_get: %s, want %s", lp_errname(rc), want);
	cr_assert_str_eq(k, want);
}

static void expect_empty(wq *q)
{
	const char *k = NULL;
	lp_err rc = wq_try_get(q, &k);
	cr_assert_eq(rc, LP_E_AGAIN, "try_get: %s (key %s), want AGAIN",
		     lp_errname(rc), rc == LP_OK ? k : "-");
}

/* ---------------------------------------------------------- the plain queue */

Test(wq, dedups_a_key_while_it_waits)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	cr_assert_eq(wq_add(q, "a"), LP_OK);
	cr_assert_eq(wq_add(q, "b"), LP_OK);
	cr_assert_eq(wq_add(q, "a"), LP_OK);
	cr_assert_eq(wq_add(q, "a"), LP_OK);
	cr_assert_eq(wq_len(q), 2);
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.adds, 2);
	cr_assert_eq(m.depth, 2);
	check(q);
	expect_get(q, "a");
	expect_get(q, "b");
	expect_empty(q);
	wq_done(q, "a");
	wq_done(q, "b");
	wq_metrics(q, &m);
	cr_assert_eq(m.depth, 0);
	cr_assert_eq(m.keys, 0, "done keys are forgotten");
	fake_done(q, fc);
}

Test(wq, hands_keys_out_in_the_order_they_came)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	const char *keys[] = {"ns/c", "ns/a", "", "ns/b", "other/a"};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(wq_add(q, keys[i]), LP_OK);
	for (size_t i = 0; i < 5; i++) {
		expect_get(q, keys[i]);
		wq_done(q, keys[i]);
	}
	expect_empty(q);
	fake_done(q, fc);
}

Test(wq, requeues_a_key_added_while_processing_when_done)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	cr_assert_eq(wq_add(q, "a"), LP_OK);
	const char *k = NULL;
	cr_assert_eq(wq_try_get(q, &k), LP_OK);
	cr_assert_str_eq(k, "a");
	/* Added three times while processing: not handed out meanwhile, and
	   queued once when done. */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(wq_add(q, "a"), LP_OK);
	cr_assert_eq(wq_len(q), 0);
	expect_empty(q);
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.depth, 1, "dirty while processing counts in depth");
	cr_assert_eq(m.processing, 1);
	check(q);
	wq_done(q, k); /* the pointer wq_get gave, as a worker passes it */
	cr_assert_eq(wq_len(q), 1);
	expect_get(q, "a");
	expect_empty(q);
	wq_done(q, "a");
	cr_assert_eq(wq_len(q), 0);
	wq_metrics(q, &m);
	cr_assert_eq(m.adds, 2);
	cr_assert_eq(m.keys, 0);
	fake_done(q, fc);
}

Test(wq, other_keys_flow_past_a_processing_one)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	wq_add(q, "a");
	expect_get(q, "a");
	wq_add(q, "a");
	wq_add(q, "b");
	expect_get(q, "b");
	expect_empty(q);
	wq_done(q, "b");
	wq_done(q, "a");
	expect_get(q, "a");
	wq_done(q, "a");
	fake_done(q, fc);
}

Test(wq, many_keys_grow_and_shrink_the_table)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	enum { N = 20000 };
	char k[32];
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof k, "ns-%d/obj-%d", i % 7, i);
		cr_assert_eq(wq_add(q, k), LP_OK);
	}
	for (int i = 0; i < N; i += 3) { /* duplicates change nothing */
		snprintf(k, sizeof k, "ns-%d/obj-%d", i % 7, i);
		cr_assert_eq(wq_add(q, k), LP_OK);
	}
	cr_assert_eq(wq_len(q), N);
	check(q);
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof k, "ns-%d/obj-%d", i % 7, i);
		expect_get(q, k);
		wq_done(q, k);
	}
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.keys, 0);
	cr_assert_eq(m.adds, N);
	fake_done(q, fc);
}

/* ------------------------------------------------------------------ delays */

Test(wq, add_after_is_ready_exactly_at_its_time)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	cr_assert_eq(wq_add_after(q, "a", WQ_S(5)), LP_OK);
	cr_assert_eq(wq_len(q), 0);
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.waiting, 1);
	cr_assert_eq(m.retries, 1);
	wq_fake_clock_step(fc, WQ_MS(4999));
	cr_assert_eq(wq_len(q), 0, "not ready at 4.999 s");
	expect_empty(q);
	wq_fake_clock_step(fc, WQ_MS(1) - 1);
	cr_assert_eq(wq_len(q), 0, "not ready 1 ns before 5 s");
	wq_fake_clock_step(fc, 1);
	cr_assert_eq(wq_len(q), 1, "ready at 5 s");
	check(q);
	expect_get(q, "a");
	wq_done(q, "a");
	wq_metrics(q, &m);
	cr_assert_eq(m.waiting, 0);
	cr_assert_eq(m.keys, 0);
	fake_done(q, fc);
}

Test(wq, a_delayed_key_keeps_its_earlier_ready_time)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	cr_assert_eq(wq_add_after(q, "a", WQ_S(5)), LP_OK);
	cr_assert_eq(wq_add_after(q, "a", WQ_S(10)), LP_OK); /* later: kept 5 */
	cr_assert_eq(wq_add_after(q, "b", WQ_S(10)), LP_OK);
	cr_assert_eq(wq_add_after(q, "b", WQ_S(3)), LP_OK); /* earlier: 3 */
	check(q);
	wq_fake_clock_step(fc, WQ_S(3) - 1);
	cr_assert_eq(wq_len(q), 0);
	wq_fake_clock_step(fc, 1);
	cr_assert_eq(wq_len(q), 1);
	expect_get(q, "b");
	wq_fake_clock_step(fc, WQ_S(2) - 1);
	expect_empty(q);
	wq_fake_clock_step(fc, 1);
	expect_get(q, "a");
	wq_done(q, "a");
	wq_done(q, "b");
	/* Nothing is left waiting for 10 s. */
	wq_fake_clock_step(fc, WQ_S(100));
	cr_assert_eq(wq_len(q), 0);
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.waiting, 0);
	cr_assert_eq(m.keys, 0);
	fake_done(q, fc);
}

Test(wq, equal_ready_times_come_out_in_order_and_dedup_with_adds)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	const char *keys[] = {"d", "b", "c", "a"};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(wq_add_after(q, keys[i], WQ_S(1)), LP_OK);
	cr_assert_eq(wq_add(q, "c"), LP_OK);	      /* c is queued now ... */
	cr_assert_eq(wq_add_after(q, "e", 0), LP_OK); /* no delay: an add */
	cr_assert_eq(wq_add_after(q, "f", -5), LP_OK);
	expect_get(q, "c");
	wq_done(q, "c");
	expect_get(q, "e");
	expect_get(q, "f");
	wq_fake_clock_step(fc, WQ_S(1));
	/* ... and again at 1 s, in delay order. */
	for (int i = 0; i < 4; i++)
		expect_get(q, keys[i]);
	expect_empty(q);
	fake_done(q, fc);
}

Test(wq, a_delayed_key_that_is_still_queued_is_not_queued_twice)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	wq_add(q, "a");
	wq_add_after(q, "a", WQ_S(1));
	wq_fake_clock_step(fc, WQ_S(1));
	cr_assert_eq(wq_len(q), 1);
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.adds, 1);
	expect_get(q, "a");
	expect_empty(q);
	wq_done(q, "a");
	fake_done(q, fc);
}

struct getter {
	wq *q;
	pthread_t tid;
	lp_err rc;
	char key[64];
};

static void *getter_main(void *arg)
{
	struct getter *g = arg;
	const char *k = NULL;
	g->rc = wq_get(g->q, &k);
	if (g->rc == LP_OK) {
		snprintf(g->key, sizeof g->key, "%s", k);
		wq_done(g->q, k);
	}
	return NULL;
}

Test(wq, a_blocked_getter_wakes_when_the_clock_reaches_a_delay)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	struct getter g = {.q = q};
	cr_assert_eq(pthread_create(&g.tid, NULL, getter_main, &g), 0);
	cr_assert_eq(wq_wait_getters(q, 1), LP_OK);
	cr_assert_eq(wq_add_after(q, "a", WQ_S(5)), LP_OK);
	wq_fake_clock_step(fc, WQ_S(4));
	/* The step woke the getter; it found nothing due and blocked again
	   (were it gone with a key, no getter would block and this would
	   hang until CTest's safety timeout). */
	cr_assert_eq(wq_wait_getters(q, 1), LP_OK);
	wq_fake_clock_step(fc, WQ_S(1));
	pthread_join(g.tid, NULL);
	cr_assert_eq(g.rc, LP_OK);
	cr_assert_str_eq(g.key, "a");
	fake_done(q, fc);
}

Test(wq, a_blocked_getter_on_the_real_clock_gets_a_delayed_key)
{
	wq *q = NULL;
	cr_assert_eq(wq_new(NULL, &q), LP_OK);
	struct getter g = {.q = q};
	cr_assert_eq(pthread_create(&g.tid, NULL, getter_main, &g), 0);
	cr_assert_eq(wq_wait_getters(q, 1), LP_OK);
	/* A far delay first, then a near one: the getter must stop waiting
	   for the far one. 1 ms on the real clock; nothing checks the time. */
	cr_assert_eq(wq_add_after(q, "far", WQ_S(3600)), LP_OK);
	cr_assert_eq(wq_add_after(q, "near", WQ_MS(1)), LP_OK);
	pthread_join(g.tid, NULL);
	cr_assert_eq(g.rc, LP_OK);
	cr_assert_str_eq(g.key, "near");
	check(q);
	wq_shutdown(q);
	wq_free(q);
}

/* ------------------------------------------------------------ rate limiting */

Test(wq, backoff_doubles_from_5ms_to_a_1000s_cap)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	int64_t want = WQ_MS(5);
	for (uint32_t n = 0; n < 24; n++) {
		int64_t d = -1;
		cr_assert_eq(wq_add_rate_limited(q, "k", &d), LP_OK);
		cr_assert_eq(d, want,
			     "requeue %u: delay %" PRId64 ", want %" PRId64, n,
			     d, want);
		cr_assert_eq(wq_num_requeues(q, "k"), n + 1);
		wq_fake_clock_step(fc, d - 1);
		expect_empty(q);
		wq_fake_clock_step(fc, 1);
		expect_get(q, "k");
		wq_done(q, "k");
		check(q);
		want = want * 2 > WQ_S(1000) ? WQ_S(1000) : want * 2;
	}
	/* 5 ms * 2^17 = 655.36 s is the last doubling below the cap. */
	cr_assert_eq(want, WQ_S(1000));
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.retries, 24);
	cr_assert_eq(m.keys, 1, "a key with back-off is remembered");
	wq_forget(q, "k");
	wq_metrics(q, &m);
	cr_assert_eq(m.keys, 0);
	fake_done(q, fc);
}

Test(wq, forget_resets_the_backoff)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	int64_t d;
	for (int i = 0; i < 4; i++)
		wq_add_rate_limited(q, "k", &d);
	cr_assert_eq(d, WQ_MS(40));
	cr_assert_eq(wq_num_requeues(q, "k"), 4);
	cr_assert_eq(wq_num_requeues(q, "other"), 0);
	wq_forget(q, "k");
	cr_assert_eq(wq_num_requeues(q, "k"), 0);
	/* Still delayed (forget is not a removal), ready at 5 ms. */
	wq_fake_clock_step(fc, WQ_MS(5));
	expect_get(q, "k");
	wq_done(q, "k");
	cr_assert_eq(wq_add_rate_limited(q, "k", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(5));
	cr_assert_eq(wq_num_requeues(q, "k"), 1);
	wq_forget(q, "k");
	wq_forget(q, "never-seen");
	check(q);
	fake_done(q, fc);
}

Test(wq, the_bucket_delays_after_its_burst)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	char k[32];
	int64_t d;
	/* 100 distinct keys: the burst; each waits only its own 5 ms. */
	for (int i = 0; i < 100; i++) {
		snprintf(k, sizeof k, "k%d", i);
		cr_assert_eq(wq_add_rate_limited(q, k, &d), LP_OK);
		cr_assert_eq(d, WQ_MS(5), "key %d: %" PRId64, i, d);
	}
	/* Then one token per 100 ms at 10/s, reserved in turn. */
	cr_assert_eq(wq_add_rate_limited(q, "k100", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(100));
	cr_assert_eq(wq_add_rate_limited(q, "k101", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(200));
	wq_fake_clock_step(fc, WQ_MS(5));
	cr_assert_eq(wq_len(q), 100);
	wq_fake_clock_step(fc, WQ_MS(95) - 1);
	cr_assert_eq(wq_len(q), 100);
	wq_fake_clock_step(fc, 1);
	cr_assert_eq(wq_len(q), 101, "k100 ready at exactly 100 ms");
	/* At 100 ms one token came back, and k101 holds it: the next waits
	   for the one after, 200 ms from now (300 ms from the start). */
	cr_assert_eq(wq_add_rate_limited(q, "k102", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(200));
	wq_fake_clock_step(fc, WQ_MS(100) - 1);
	cr_assert_eq(wq_len(q), 101);
	wq_fake_clock_step(fc, 1);
	cr_assert_eq(wq_len(q), 102, "k101 ready at exactly 200 ms");
	wq_fake_clock_step(fc, WQ_MS(100));
	cr_assert_eq(wq_len(q), 103, "k102 ready at exactly 300 ms");
	/* After a long idle time the bucket is full again: 100, not more. */
	wq_fake_clock_step(fc, WQ_S(1000));
	for (int i = 0; i < 100; i++) {
		snprintf(k, sizeof k, "fresh%d", i);
		cr_assert_eq(wq_add_rate_limited(q, k, &d), LP_OK);
		cr_assert_eq(d, WQ_MS(5), "fresh key %d: %" PRId64, i, d);
	}
	cr_assert_eq(wq_add_rate_limited(q, "fresh100", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(100));
	check(q);
	fake_done(q, fc);
}

Test(wq, the_larger_of_backoff_and_bucket_wins)
{
	wq_fake_clock *fc;
	struct wq_opts o = {.qps = 1, .burst = 1};
	wq *q = fake_queue(&fc, &o);
	int64_t d;
	cr_assert_eq(wq_add_rate_limited(q, "a", &d), LP_OK);
	cr_assert_eq(d, WQ_MS(5), "burst token: back-off wins");
	cr_assert_eq(wq_add_rate_limited(q, "b", &d), LP_OK);
	cr_assert_eq(d, WQ_S(1), "bucket empty: 1 s at 1/s wins");
	wq_fake_clock_step(fc, WQ_S(100));
	for (int i = 0; i < 14; i++)
		wq_add_rate_limited(q, "c", &d);
	/* 14 requests at one instant: back-off 5 ms * 2^13 = 40.96 s, the
	   bucket's 13th reservation 13 s: back-off wins. */
	cr_assert_eq(d, WQ_MS(5) << 13);
	check(q);
	fake_done(q, fc);
}

Test(wq, custom_limits_are_used_and_bad_ones_refused)
{
	wq_fake_clock *fc;
	struct wq_opts o = {.base_delay = WQ_MS(1), .max_delay = WQ_MS(3)};
	wq *q = fake_queue(&fc, &o);
	int64_t d;
	wq_add_rate_limited(q, "a", &d);
	cr_assert_eq(d, WQ_MS(1));
	wq_add_rate_limited(q, "a", &d);
	cr_assert_eq(d, WQ_MS(2));
	wq_add_rate_limited(q, "a", &d);
	cr_assert_eq(d, WQ_MS(3));
	fake_done(q, fc);

	wq *bad = NULL;
	struct wq_opts b1 = {.base_delay = WQ_S(2), .max_delay = WQ_S(1)};
	cr_assert_eq(wq_new(&b1, &bad), LP_E_INVAL);
	struct wq_opts b2 = {.base_delay = -1};
	cr_assert_eq(wq_new(&b2, &bad), LP_E_INVAL);
	cr_assert_null(bad);
}

/* ---------------------------------------------------------------- shutdown */

Test(wq, shutdown_wakes_every_blocked_getter)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	enum { G = 4 };
	struct getter g[G];
	for (int i = 0; i < G; i++) {
		g[i] = (struct getter){.q = q, .rc = LP_E_IO};
		cr_assert_eq(
		    pthread_create(&g[i].tid, NULL, getter_main, &g[i]), 0);
	}
	cr_assert_eq(wq_wait_getters(q, G), LP_OK);
	wq_shutdown(q);
	for (int i = 0; i < G; i++) {
		pthread_join(g[i].tid, NULL);
		cr_assert_eq(g[i].rc, LP_E_CLOSED, "getter %d: %s", i,
			     lp_errname(g[i].rc));
	}
	cr_assert(wq_shutting_down(q));
	cr_assert_eq(wq_wait_getters(q, 1), LP_E_CLOSED);
	fake_done(q, fc);
}

Test(wq, after_shutdown_queued_keys_drain_and_adds_are_ignored)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	wq_add(q, "a");
	wq_add(q, "b");
	wq_add_after(q, "delayed", WQ_S(1));
	wq_add_rate_limited(q, "limited", NULL);
	expect_get(q, "a");
	wq_add(q, "a"); /* dirty while processing, before shutdown */
	wq_shutdown(q);
	check(q);
	cr_assert_eq(wq_add(q, "c"), LP_OK);
	cr_assert_eq(wq_add_after(q, "d", WQ_S(1)), LP_OK);
	int64_t d = -1;
	cr_assert_eq(wq_add_rate_limited(q, "e", &d), LP_OK);
	cr_assert_eq(d, 0);
	cr_assert_eq(wq_num_requeues(q, "e"), 0);
	cr_assert_eq(wq_len(q), 1, "only b is queued");
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.waiting, 0, "delayed keys are dropped");
	expect_get(q, "b");
	wq_done(q, "b");
	wq_done(q, "a"); /* added before shutdown: handed out again */
	expect_get(q, "a");
	wq_done(q, "a");
	wq_fake_clock_step(fc, WQ_S(10));
	const char *k;
	cr_assert_eq(wq_try_get(q, &k), LP_E_CLOSED);
	cr_assert_eq(wq_get(q, &k), LP_E_CLOSED);
	wq_metrics(q, &m);
	cr_assert_eq(m.depth, 0);
	cr_assert_eq(m.keys, 1, "only the back-off of 'limited' is left");
	fake_done(q, fc);
}

/* A worker holding key "a" until the queue is shut down. */
struct holder {
	wq *q;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int holding;	 /* got "a" */
	int done_called; /* about to call wq_done */
	lp_err wait_rc;
};

static void *holder_main(void *arg)
{
	struct holder *h = arg;
	const char *k = NULL;
	if (wq_get(h->q, &k) != LP_OK)
		return NULL;
	pthread_mutex_lock(&h->mu);
	h->holding = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	/* Returns LP_E_CLOSED once the main thread is inside
	   wq_shutdown_drain: no getter will ever block here. */
	h->wait_rc = wq_wait_getters(h->q, 1000);
	pthread_mutex_lock(&h->mu);
	h->done_called = 1;
	pthread_mutex_unlock(&h->mu);
	wq_done(h->q, k);
	return NULL;
}

Test(wq, shutdown_with_drain_waits_for_keys_in_flight)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	struct holder h = {.q = q};
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	wq_add(q, "a");
	wq_add(q, "b");
	cr_assert_eq(pthread_create(&h.tid, NULL, holder_main, &h), 0);
	pthread_mutex_lock(&h.mu);
	while (!h.holding)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);

	wq_shutdown_drain(q);

	pthread_mutex_lock(&h.mu);
	int done_called = h.done_called;
	pthread_mutex_unlock(&h.mu);
	cr_assert(done_called,
		  "drain returned before the key in flight was done");
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.processing, 0);
	pthread_join(h.tid, NULL);
	cr_assert_eq(h.wait_rc, LP_E_CLOSED);
	/* b was queued, not in flight: still handed out after the drain. */
	expect_get(q, "b");
	wq_done(q, "b");
	const char *k;
	cr_assert_eq(wq_try_get(q, &k), LP_E_CLOSED);
	pthread_mutex_destroy(&h.mu);
	pthread_cond_destroy(&h.cv);
	fake_done(q, fc);
}

Test(wq, shutdown_with_drain_and_nothing_in_flight_returns_at_once)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	wq_add(q, "a");
	wq_shutdown_drain(q);
	expect_get(q, "a");
	wq_done(q, "a");
	fake_done(q, fc);
}

/* ----------------------------------------------------------------- metrics */

Test(wq, metrics_measure_latency_and_work_on_the_clock)
{
	wq_fake_clock *fc;
	wq *q = fake_queue(&fc, NULL);
	cr_assert_str_eq(wq_name(q), "test");
	wq_add(q, "a");
	wq_add(q, "b");
	wq_fake_clock_step(fc, WQ_S(2));
	expect_get(q, "a");
	wq_fake_clock_step(fc, WQ_S(1));
	expect_get(q, "b");
	wq_fake_clock_step(fc, WQ_S(3));
	struct wq_metrics m;
	wq_metrics(q, &m);
	cr_assert_eq(m.queue_latency_count, 2);
	cr_assert_eq(m.queue_latency_sum, WQ_S(2) + WQ_S(3));
	cr_assert_eq(m.processing, 2);
	cr_assert_eq(m.unfinished_work, WQ_S(4) + WQ_S(3));
	cr_assert_eq(m.longest_running, WQ_S(4));
	cr_assert_eq(m.work_duration_count, 0);
	wq_done(q, "a");
	wq_fake_clock_step(fc, WQ_S(1));
	wq_done(q, "b");
	wq_metrics(q, &m);
	cr_assert_eq(m.work_duration_count, 2);
	cr_assert_eq(m.work_duration_sum, WQ_S(4) + WQ_S(4));
	cr_assert_eq(m.unfinished_work, 0);
	cr_assert_eq(m.longest_running, 0);
	/* A delayed key's latency counts from when it became ready. */
	wq_add_after(q, "c", WQ_S(10));
	wq_fake_clock_step(fc, WQ_S(12));
	cr_assert_eq(wq_len(q), 1);
	wq_fake_clock_step(fc, WQ_S(1));
	expect_get(q, "c");
	wq_metrics(q, &m);
	cr_assert_eq(m.queue_latency_sum, WQ_S(5) + WQ_S(3), "sum %" PRId64,
		     m.queue_latency_sum);
	cr_assert_eq(m.retries, 1);
	cr_assert_eq(m.adds, 3);
	wq_done(q, "c");
	fake_done(q, fc);
}

/* ----------------------------------------------------------------- threads */

#define HK 32	 /* keys */
#define HP 4	 /* producers */
#define HW 6	 /* workers */
#define HN 20000 /* adds per producer */

struct hammer {
	wq *q;
	uint64_t seed;
	_Atomic int inflight[HK];
	_Atomic long processed[HK];
	_Atomic long gets;
	_Atomic int violations;
	_Atomic int bad_keys;
};

struct hammer_arg {
	struct hammer *h;
	int id;
	pthread_t tid;
};

static void *hammer_producer(void *arg)
{
	struct hammer_arg *a = arg;
	uint64_t st = a->h->seed + (uint64_t)a->id * 7919;
	char k[16];
	for (int i = 0; i < HN; i++) {
		snprintf(k, sizeof k, "k%02u", (unsigned)(ts_rand(&st) % HK));
		if (wq_add(a->h->q, k) != LP_OK)
			atomic_fetch_add(&a->h->bad_keys, 1);
	}
	return NULL;
}

static void *hammer_worker(void *arg)
{
	struct hammer_arg *a = arg;
	struct hammer *h = a->h;
	const char *k;
	while (wq_get(h->q, &k) == LP_OK) {
		int i = atoi(k + 1);
		if (k[0] != 'k' || i < 0 || i >= HK) {
			atomic_fetch_add(&h->bad_keys, 1);
			wq_done(h->q, k);
			continue;
		}
		if (atomic_fetch_add(&h->inflight[i], 1) != 0)
			atomic_fetch_add(&h->violations, 1);
		/* Some work, so that other workers pile up behind this key. */
		volatile unsigned spin = 0;
		for (int s = 0; s < 200; s++)
			spin += (unsigned)s;
		atomic_fetch_add(&h->processed[i], 1);
		atomic_fetch_sub(&h->inflight[i], 1);
		atomic_fetch_add(&h->gets, 1);
		wq_done(h->q, k);
	}
	return NULL;
}

Test(wq, never_two_workers_on_one_key)
{
	static struct hammer h;
	cr_assert_eq(wq_new(NULL, &h.q), LP_OK);
	h.seed = ts_seed("never_two_workers_on_one_key", 4242);
	struct hammer_arg p[HP], w[HW];
	for (int i = 0; i < HW; i++) {
		w[i] = (struct hammer_arg){.h = &h, .id = i};
		cr_assert_eq(
		    pthread_create(&w[i].tid, NULL, hammer_worker, &w[i]), 0);
	}
	for (int i = 0; i < HP; i++) {
		p[i] = (struct hammer_arg){.h = &h, .id = i};
		cr_assert_eq(
		    pthread_create(&p[i].tid, NULL, hammer_producer, &p[i]), 0);
	}
	for (int i = 0; i < HP; i++)
		pthread_join(p[i].tid, NULL);
	/* Every add happened; what is queued is handed out during the
	   drain, and the workers leave when the queue is empty. */
	wq_shutdown_drain(h.q);
	for (int i = 0; i < HW; i++)
		pthread_join(w[i].tid, NULL);
	cr_assert_eq(atomic_load(&h.violations), 0,
		     "a key was processed by two workers at once");
	cr_assert_eq(atomic_load(&h.bad_keys), 0);
	for (int i = 0; i < HK; i++)
		cr_assert_gt(atomic_load(&h.processed[i]), 0, "key %d", i);
	struct wq_metrics m;
	wq_metrics(h.q, &m);
	cr_assert_eq(m.depth, 0);
	cr_assert_eq(m.processing, 0);
	cr_assert_eq(m.keys, 0);
	cr_assert_eq(m.adds, (uint64_t)atomic_load(&h.gets),
		     "every key that became dirty was handed out once");
	cr_assert_leq(m.adds, (uint64_t)HP * HN);
	check(h.q);
	wq_free(h.q);
}
