/*
 * test_watch.c -- watchers: order, exactly-once, prev records, prefix
 * filters, the LP_E_AGAIN/ready-callback protocol, replay from the change
 * log handing over to the live ring, slow watchers, closing, and shared
 * reference-counted events.
 *
 * Invariants checked
 *  1. A watcher from R gets every change with revision > R under its prefix,
 *     in revision order, exactly once; PUT events carry the replaced record
 *     in prev (value NULL on create); DEL events carry the last state with
 *     mod_rev == rev.
 *  2. LP_E_AGAIN arms the ready callback, which runs once, on the writer
 *     thread, after the next publish.
 *  3. With a tiny ring (ring_events = 16) a watcher from an old revision
 *     replays from the log and joins the live stream while a writer keeps
 *     writing: the revisions it sees are exactly the committed ones.
 *  4. A watcher that does not read while more than ring_events events are
 *     written ends with LP_E_OVERFLOW after a gap-free prefix; others are
 *     unaffected; a new watcher from its last revision gets the rest.
 *  5. After eng_watch_close returns, its callback never runs again.
 *  6. eng_close ends open watchers: their next gives LP_E_CLOSED.
 * Threads here never call cr_assert: they record failures for the main
 * thread to assert.
 */
#include <stdatomic.h>

#include "common.h"

static struct tc_store S;

static void setup(void)
{
	struct eng_opts o = {.nosync = 1, .ring_events = 16};
	tc_open(&S, "watch", &o);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_watch, .init = setup, .fini = teardown);

static eng_event *next_ok(eng_watch *w, struct tc_waiter *wt)
{
	eng_event *ev = NULL;
	lp_err rc = tc_next_wait(w, wt, &ev);
	cr_assert_eq(rc, LP_OK, "watch next: %s", lp_errname(rc));
	cr_assert_not_null(ev);
	return ev;
}

static void want_ev(eng_event *ev, enum eng_ev_type type, int64_t rev,
		    const char *key, const char *val, const char *prev)
{
	cr_assert_eq(ev->type, type, "event type %d want %d", ev->type, type);
	cr_assert_eq(ev->rev, rev, "event rev %" PRId64 " want %" PRId64,
		     ev->rev, rev);
	cr_assert_eq(ev->rec.key_len, strlen(key));
	cr_assert(memcmp(ev->rec.key, key, strlen(key)) == 0,
		  "event key %.*s want %s", (int)ev->rec.key_len,
		  (const char *)ev->rec.key, key);
	cr_assert_eq(ev->rec.mod_rev, rev);
	cr_assert_eq(ev->rec.value_len, strlen(val));
	cr_assert(memcmp(ev->rec.value, val, strlen(val)) == 0);
	if (!prev) {
		cr_assert_null(ev->prev.value, "a create has no prev");
	} else {
		cr_assert_not_null(ev->prev.value);
		cr_assert_eq(ev->prev.value_len, strlen(prev));
		cr_assert(memcmp(ev->prev.value, prev, strlen(prev)) == 0);
	}
}

Test(eng_watch, events_in_order_with_prev)
{
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	TC_OK(eng_watch_open(S.e, "", 0, eng_rev(S.e), tc_ready, &wt, &w));
	cr_assert_eq(eng_watch_rev(w), 1);
	tc_puts(S.e, "/a", "1"); /* 2 */
	tc_puts(S.e, "/a", "2"); /* 3 */
	tc_dels(S.e, "/a");	 /* 4 */
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/x", 2, "x", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_del(t, "/absent", 7, NULL)); /* no change, no event */
	TC_OK(eng_txn_put(t, "/y", 2, "y", 1, ENG_NO_SLOT, NULL));
	struct eng_commit_res res = {0};
	TC_OK(eng_txn_commit(t, &res)); /* 5 */
	eng_txn_free(t);
	tc_puts(S.e, "/a", "3"); /* 6: recreated */

	eng_event *ev = next_ok(w, &wt);
	want_ev(ev, ENG_EV_PUT, 2, "/a", "1", NULL);
	cr_assert_eq(ev->rec.version, 1);
	eng_event_unref(ev);
	cr_assert_eq(eng_watch_rev(w), 2);
	ev = next_ok(w, &wt);
	want_ev(ev, ENG_EV_PUT, 3, "/a", "2", "1");
	cr_assert_eq(ev->prev.mod_rev, 2);
	cr_assert_eq(ev->rec.version, 2);
	cr_assert_eq(ev->rec.create_rev, 2);
	eng_event_unref(ev);
	ev = next_ok(w, &wt);
	want_ev(ev, ENG_EV_DEL, 4, "/a", "2", "2");
	cr_assert_eq(ev->prev.mod_rev, 3);
	eng_event_unref(ev);
	/* The two puts of txn 5, in either order. */
	int seen_x = 0, seen_y = 0;
	for (int i = 0; i < 2; i++) {
		ev = next_ok(w, &wt);
		cr_assert_eq(ev->rev, 5);
		if (ev->rec.key[1] == 'x')
			seen_x++;
		else
			seen_y++;
		eng_event_unref(ev);
	}
	cr_assert(seen_x == 1 && seen_y == 1);
	ev = next_ok(w, &wt);
	want_ev(ev, ENG_EV_PUT, 6, "/a", "3", NULL);
	cr_assert_eq(ev->rec.create_rev, 6);
	cr_assert_eq(ev->rec.version, 1);
	eng_event_unref(ev);
	cr_assert_eq(eng_watch_rev(w), 6);
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

Test(eng_watch, prefix_filtering)
{
	struct tc_waiter wa, wall, wp;
	tc_waiter_init(&wa);
	tc_waiter_init(&wall);
	tc_waiter_init(&wp);
	eng_watch *a, *all, *p;
	int64_t from = eng_rev(S.e);
	TC_OK(eng_watch_open(S.e, "/a/", 3, from, tc_ready, &wa, &a));
	TC_OK(eng_watch_open(S.e, NULL, 0, from, tc_ready, &wall, &all));
	TC_OK(eng_watch_open(S.e, "/a", 2, from, tc_ready, &wp, &p));
	struct eng_stats st;
	eng_stats(S.e, &st);
	cr_assert_eq(st.watchers, 3);
	const char *keys[] = {"/a/1", "/b/1", "/a", "/ab", "/a/2", "/", "/a/"};
	for (size_t i = 0; i < 7; i++)
		tc_puts(S.e, keys[i], "v");
	/* "/a/": /a/1 (2), /a/2 (6), /a/ (8). */
	int64_t want_a[] = {2, 6, 8};
	for (int i = 0; i < 3; i++) {
		eng_event *ev = next_ok(a, &wa);
		cr_assert_eq(ev->rev, want_a[i]);
		eng_event_unref(ev);
	}
	/* "/a": everything but /b/1 and /. */
	int64_t want_p[] = {2, 4, 5, 6, 8};
	for (int i = 0; i < 5; i++) {
		eng_event *ev = next_ok(p, &wp);
		cr_assert_eq(ev->rev, want_p[i]);
		eng_event_unref(ev);
	}
	for (int64_t r = 2; r <= 8; r++) {
		eng_event *ev = next_ok(all, &wall);
		cr_assert_eq(ev->rev, r);
		eng_event_unref(ev);
	}
	eng_event *ev;
	TC_RC(eng_watch_next(a, &ev), LP_E_AGAIN);
	TC_RC(eng_watch_next(p, &ev), LP_E_AGAIN);
	TC_RC(eng_watch_next(all, &ev), LP_E_AGAIN);
	/* Filtered events move the cursor: a's revision is at least its last
	   event's. */
	cr_assert_geq(eng_watch_rev(a), 8);
	eng_watch_close(a);
	eng_watch_close(all);
	eng_watch_close(p);
	eng_stats(S.e, &st);
	cr_assert_eq(st.watchers, 0);
	tc_waiter_destroy(&wa);
	tc_waiter_destroy(&wall);
	tc_waiter_destroy(&wp);
}

/* The callback runs once per arming, on the writer thread, in publish
   order; a second watcher armed later serves as a barrier. */
Test(eng_watch, again_arms_the_callback_once)
{
	struct tc_waiter wa, wb;
	tc_waiter_init(&wa);
	tc_waiter_init(&wb);
	eng_watch *a, *b;
	TC_OK(eng_watch_open(S.e, "", 0, eng_rev(S.e), tc_ready, &wa, &a));
	eng_event *ev;
	TC_RC(eng_watch_next(a, &ev), LP_E_AGAIN);
	cr_assert_eq(wa.n_fired, 0);
	tc_puts(S.e, "/1", "1");
	tc_puts(S.e, "/2", "2");
	tc_puts(S.e, "/3", "3");
	cr_assert(tc_waiter_wait(&wa, tc_wait_ms()), "no ready callback");
	TC_OK(eng_watch_open(S.e, "", 0, eng_rev(S.e), tc_ready, &wb, &b));
	TC_RC(eng_watch_next(b, &ev), LP_E_AGAIN);
	tc_puts(S.e, "/4", "4");
	cr_assert(tc_waiter_wait(&wb, tc_wait_ms()), "no ready callback");
	pthread_mutex_lock(&wa.mu);
	long fired = wa.n_fired;
	pthread_mutex_unlock(&wa.mu);
	cr_assert_eq(fired, 1, "an armed callback ran %ld times", fired);
	for (int64_t r = 2; r <= 5; r++) {
		ev = next_ok(a, &wa);
		cr_assert_eq(ev->rev, r);
		eng_event_unref(ev);
	}
	ev = next_ok(b, &wb);
	cr_assert_eq(ev->rev, 5);
	eng_event_unref(ev);
	eng_watch_close(a);
	eng_watch_close(b);
	tc_waiter_destroy(&wa);
	tc_waiter_destroy(&wb);
}

/* ----------------------------------------------------------- replay to live */

#define HO_TXNS 4000
#define HO_WRITERS 2
#define HO_WATCHERS 4

struct ho_log {
	_Atomic int64_t type[HO_TXNS + 2]; /* by revision: 1 put, 2 del */
	_Atomic int key[HO_TXNS + 2];
};

static struct ho_log LOG;

struct ho_writer {
	eng *e;
	int id;
	uint64_t seed;
	int n_changes;
	char err[160];
};

/* Single-op txns over 20 keys per writer; deletes only of keys it knows
   exist, so every txn is a change. */
static void *ho_write(void *p)
{
	struct ho_writer *a = p;
	uint64_t st = a->seed;
	int live[20] = {0};
	for (int i = 0; i < HO_TXNS / HO_WRITERS; i++) {
		int k = (int)(ts_rand(&st) % 20);
		char key[32];
		int kl = snprintf(key, sizeof key, "/ho/%d/%02d", a->id, k);
		struct eng_commit_res res = {0};
		lp_err rc;
		int type;
		if (live[k] && ts_rand(&st) % 3 == 0) {
			rc = tc_del(a->e, key, (size_t)kl, NULL, &res);
			type = 2;
			live[k] = 0;
		} else {
			rc = tc_put(a->e, key, (size_t)kl, key, (size_t)kl,
				    ENG_NO_SLOT, NULL, &res);
			type = 1;
			live[k] = 1;
		}
		if (rc) {
			snprintf(a->err, sizeof a->err, "commit %d: %s", i,
				 lp_errname(rc));
			return NULL;
		}
		if (res.rev < 2 || res.rev > HO_TXNS + 1) {
			snprintf(a->err, sizeof a->err, "rev %" PRId64,
				 res.rev);
			return NULL;
		}
		atomic_store(&LOG.type[res.rev], type);
		atomic_store(&LOG.key[res.rev], a->id * 100 + k);
		a->n_changes++;
	}
	return NULL;
}

struct ho_watch {
	eng_watch *w;
	struct tc_waiter wt;
	int64_t next; /* the revision expected next */
	int64_t opened_at;
	int overflows;
	int type[HO_TXNS + 2]; /* what it saw, by revision */
	int key[HO_TXNS + 2];
};

static struct ho_watch HW[HO_WATCHERS];

/* The writer-independent key number of a "/ho/<id>/<nn>" key. */
static int ho_key(const struct eng_record *r)
{
	if (r->key_len != 8)
		return -1;
	return (r->key[4] - '0') * 100 + (r->key[6] - '0') * 10 +
	       (r->key[7] - '0');
}

/*
 * One step of watcher i: take one event (waiting for it when wait is set).
 * A watcher that fell behind the tiny ring may overflow: it then re-watches
 * from its last revision, as a client does; the sequence it records must
 * still be gap-free. Returns 0 when nothing was there without waiting.
 */
static int ho_step(int i, int wait)
{
	struct ho_watch *h = &HW[i];
	eng_event *ev;
	lp_err rc =
	    wait ? tc_next_wait(h->w, &h->wt, &ev) : eng_watch_next(h->w, &ev);
	if (rc == LP_E_AGAIN && !wait)
		return 0;
	if (rc == LP_E_OVERFLOW) {
		int64_t last = eng_watch_rev(h->w);
		cr_assert_eq(last, h->next - 1,
			     "watcher %d: eng_watch_rev %" PRId64
			     " after %" PRId64,
			     i, last, h->next - 1);
		eng_watch_close(h->w);
		h->overflows++;
		TC_OK(eng_watch_open(S.e, "/ho/", 4, last, tc_ready, &h->wt,
				     &h->w));
		return 1;
	}
	cr_assert_eq(rc, LP_OK, "watcher %d at %" PRId64 ": %s", i, h->next,
		     lp_errname(rc));
	cr_assert_eq(ev->rev, h->next,
		     "watcher %d (from %" PRId64 "): rev %" PRId64
		     " want %" PRId64,
		     i, h->opened_at, ev->rev, h->next);
	h->type[ev->rev] = ev->type == ENG_EV_PUT ? 1 : 2;
	h->key[ev->rev] = ho_key(&ev->rec);
	h->next++;
	eng_event_unref(ev);
	return 1;
}

Test(eng_watch, replay_hands_over_to_live_without_gap_or_duplicate)
{
	uint64_t seed = ts_seed("eng_watch.replay_hands_over", 1234);
	static struct ho_writer wr[HO_WRITERS];
	pthread_t th[HO_WRITERS];
	memset(&LOG, 0, sizeof LOG);
	for (int i = 0; i < HO_WRITERS; i++) {
		memset(&wr[i], 0, sizeof wr[i]);
		wr[i].e = S.e;
		wr[i].id = i;
		wr[i].seed = seed + (uint64_t)i;
		cr_assert_eq(pthread_create(&th[i], NULL, ho_write, &wr[i]), 0);
	}
	/* Open the watchers at staggered points: from the start (a long
	   replay), from some revisions back, and from "now". */
	const int64_t final = HO_TXNS + 1;
	int64_t starts[HO_WATCHERS] = {200, 600, 1200, 2000};
	memset(HW, 0, sizeof HW);
	for (int i = 0; i < HO_WATCHERS; i++) {
		TC_OK(eng_wait_rev(S.e, starts[i], tc_wait_ms()));
		int64_t now = eng_rev(S.e);
		int64_t from = i == 0 ? 1 : i == 3 ? now : now - 100 * i;
		if (from < 1)
			from = 1;
		tc_waiter_init(&HW[i].wt);
		TC_OK(eng_watch_open(S.e, "/ho/", 4, from, tc_ready, &HW[i].wt,
				     &HW[i].w));
		HW[i].next = from + 1;
		HW[i].opened_at = from;
		/* Read a little from each open watcher between opens. */
		for (int j = 0; j <= i; j++)
			for (int n = 0; n < 50 && HW[j].next <= final; n++)
				if (!ho_step(j, 0))
					break;
	}
	/* Drain every watcher to the end. */
	for (int i = 0; i < HO_WATCHERS; i++)
		while (HW[i].next <= final)
			ho_step(i, 1);
	for (int i = 0; i < HO_WRITERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < HO_WRITERS; i++)
		cr_assert_eq(wr[i].err[0], 0, "writer %d: %s", i, wr[i].err);
	cr_assert_eq(eng_rev(S.e), final);
	for (int i = 0; i < HO_WATCHERS; i++) {
		struct ho_watch *h = &HW[i];
		for (int64_t r = h->opened_at + 1; r <= final; r++) {
			cr_assert_eq(h->type[r], atomic_load(&LOG.type[r]),
				     "watcher %d rev %" PRId64 " type", i, r);
			cr_assert_eq(h->key[r], atomic_load(&LOG.key[r]),
				     "watcher %d rev %" PRId64 " key", i, r);
		}
		eng_event *ev;
		TC_RC(eng_watch_next(h->w, &ev), LP_E_AGAIN);
		eng_watch_close(h->w);
		tc_waiter_destroy(&h->wt);
		cr_log_info("watcher %d from %" PRId64 ": %d overflows", i,
			    h->opened_at, h->overflows);
	}
}

/* ------------------------------------------------------------ slow watchers */

Test(eng_watch, slow_watcher_overflows_cleanly_others_unaffected)
{
	struct tc_waiter ws, wf;
	tc_waiter_init(&ws);
	tc_waiter_init(&wf);
	eng_watch *slow, *fast;
	int64_t from = eng_rev(S.e);
	TC_OK(eng_watch_open(S.e, "", 0, from, tc_ready, &ws, &slow));
	TC_OK(eng_watch_open(S.e, "", 0, from, tc_ready, &wf, &fast));
	/* 100 events while the slow one reads nothing; the fast one reads
	   each as it comes. */
	for (int i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof k, "/s/%d", i % 7);
		int64_t rev = tc_puts(S.e, k, "v");
		eng_event *ev = next_ok(fast, &wf);
		cr_assert_eq(ev->rev, rev);
		eng_event_unref(ev);
	}
	int64_t expect = from + 1;
	lp_err rc;
	for (;;) {
		eng_event *ev;
		rc = eng_watch_next(slow, &ev);
		if (rc != LP_OK)
			break;
		cr_assert_eq(ev->rev, expect,
			     "slow watcher: rev %" PRId64 " want %" PRId64,
			     ev->rev, expect);
		expect++;
		eng_event_unref(ev);
	}
	cr_assert_eq(rc, LP_E_OVERFLOW,
		     "a watcher 100 events behind a ring of"
		     " 16 got %s after %" PRId64 " events",
		     lp_errname(rc), expect - from - 1);
	cr_assert_lt(expect, from + 101);
	eng_event *ev;
	rc = eng_watch_next(slow, &ev);
	cr_assert_neq(rc, LP_OK, "an overflowed watcher delivered again");
	cr_assert_neq(rc, LP_E_AGAIN);
	int64_t last = eng_watch_rev(slow);
	cr_assert_eq(last, expect - 1);
	eng_watch_close(slow);

	/* The fast one goes on. */
	int64_t rev = tc_puts(S.e, "/s/after", "v");
	ev = next_ok(fast, &wf);
	cr_assert_eq(ev->rev, rev);
	eng_event_unref(ev);

	/* The client re-watches from the last revision it saw and gets the
	   rest from the log. */
	TC_OK(eng_watch_open(S.e, "", 0, last, tc_ready, &ws, &slow));
	for (int64_t r = last + 1; r <= rev; r++) {
		ev = next_ok(slow, &ws);
		cr_assert_eq(ev->rev, r);
		eng_event_unref(ev);
	}
	TC_RC(eng_watch_next(slow, &ev), LP_E_AGAIN);
	eng_watch_close(slow);
	eng_watch_close(fast);
	tc_waiter_destroy(&ws);
	tc_waiter_destroy(&wf);
}

/* The ring holds at most ring_bytes of events: a watcher that reads
   nothing while large values are written overflows long before the ring's
   event count is reached, and re-watches from the log. */
Test(eng_watch, ring_memory_is_bounded_by_bytes)
{
	struct tc_store s2;
	struct eng_opts o = {
	    .nosync = 1, .ring_events = 4096, .ring_bytes = 64 * 1024};
	tc_open(&s2, "watchbytes", &o);
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *slow;
	int64_t from = eng_rev(s2.e);
	TC_OK(eng_watch_open(s2.e, "", 0, from, tc_ready, &wt, &slow));
	static char big[8192];
	memset(big, 'b', sizeof big - 1);
	/* 100 updates of 8 KiB values cost ~2.4 MiB: 40 times the bound */
	int64_t rev = 0;
	for (int i = 0; i < 100; i++)
		rev = tc_puts(s2.e, i % 2 ? "/b/x" : "/b/y", big);
	int64_t expect = from + 1;
	lp_err rc;
	eng_event *ev;
	while ((rc = eng_watch_next(slow, &ev)) == LP_OK) {
		cr_assert_eq(ev->rev, expect);
		expect++;
		eng_event_unref(ev);
	}
	cr_assert_eq(rc, LP_E_OVERFLOW, "got %s after %" PRId64 " events",
		     lp_errname(rc), expect - from - 1);
	cr_assert_lt(expect - from - 1, 10,
		     "the ring held %" PRId64 " events of 16 KiB and more",
		     expect - from - 1);
	int64_t last = eng_watch_rev(slow);
	eng_watch_close(slow);
	/* the log has the rest */
	TC_OK(eng_watch_open(s2.e, "", 0, last, tc_ready, &wt, &slow));
	for (int64_t r = last + 1; r <= rev; r++) {
		ev = next_ok(slow, &wt);
		cr_assert_eq(ev->rev, r);
		eng_event_unref(ev);
	}
	eng_watch_close(slow);
	tc_waiter_destroy(&wt);
	tc_done(&s2);
}

/* ------------------------------------------------------------------ closing */

struct cw_target {
	struct tc_waiter wt;
	_Atomic int closed;
	_Atomic int late_calls;
};

static void cw_ready(void *ud)
{
	struct cw_target *t = ud;
	if (atomic_load(&t->closed))
		atomic_fetch_add(&t->late_calls, 1);
	tc_ready(&t->wt);
}

struct bg_writer {
	eng *e;
	_Atomic int stop;
	long n;
	char err[160];
};

static void *bg_write(void *p)
{
	struct bg_writer *a = p;
	while (!atomic_load(&a->stop)) {
		char k[16];
		snprintf(k, sizeof k, "/cw/%ld", a->n % 13);
		lp_err rc =
		    tc_put(a->e, k, strlen(k), "v", 1, ENG_NO_SLOT, NULL, NULL);
		if (rc) {
			snprintf(a->err, sizeof a->err, "put: %s",
				 lp_errname(rc));
			return NULL;
		}
		a->n++;
	}
	return NULL;
}

Test(eng_watch, close_while_writing)
{
	static struct bg_writer bw;
	memset(&bw, 0, sizeof bw);
	bw.e = S.e;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, bg_write, &bw), 0);
	static struct cw_target tg[60];
	for (int i = 0; i < 60; i++) {
		struct cw_target *t = &tg[i];
		tc_waiter_init(&t->wt);
		atomic_store(&t->closed, 0);
		atomic_store(&t->late_calls, 0);
		eng_watch *w;
		int64_t from = eng_rev(S.e);
		TC_OK(eng_watch_open(S.e, i % 2 ? "/cw/" : "", i % 2 ? 4 : 0,
				     from, cw_ready, t, &w));
		/* Read up to i % 5 events (waiting for them), then leave the
		   watcher armed or not, and close it. */
		int64_t expect = from + 1;
		for (int n = 0; n < i % 5; n++) {
			eng_event *ev;
			lp_err rc = tc_next_wait(w, &t->wt, &ev);
			if (rc == LP_E_OVERFLOW)
				break;
			cr_assert_eq(rc, LP_OK, "%s", lp_errname(rc));
			cr_assert_eq(ev->rev, expect);
			expect++;
			eng_event_unref(ev);
		}
		eng_event *ev;
		if (eng_watch_next(w, &ev) == LP_OK)
			eng_event_unref(ev);
		eng_watch_close(w);
		atomic_store(&tg[i].closed, 1);
	}
	/* Let the writer publish a few more events, then check no closed
	   watcher's callback ran after its close. */
	TC_OK(eng_wait_rev(S.e, eng_rev(S.e) + 20, tc_wait_ms()));
	atomic_store(&bw.stop, 1);
	pthread_join(th, NULL);
	cr_assert_eq(bw.err[0], 0, "writer: %s", bw.err);
	for (int i = 0; i < 60; i++) {
		cr_assert_eq(atomic_load(&tg[i].late_calls), 0,
			     "watcher %d's callback ran after close", i);
		tc_waiter_destroy(&tg[i].wt);
	}
	struct eng_stats st;
	eng_stats(S.e, &st);
	cr_assert_eq(st.watchers, 0);
}

Test(eng_watch, engine_close_ends_open_watchers)
{
	struct tc_waiter wa, wb;
	tc_waiter_init(&wa);
	tc_waiter_init(&wb);
	eng_watch *a, *b;
	tc_puts(S.e, "/e/1", "1");
	TC_OK(eng_watch_open(S.e, "", 0, eng_rev(S.e), tc_ready, &wa, &a));
	TC_OK(eng_watch_open(S.e, "", 0, 1, tc_ready, &wb, &b));
	eng_event *ev;
	TC_RC(eng_watch_next(a, &ev), LP_E_AGAIN); /* armed */
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	TC_RC(eng_watch_next(a, &ev), LP_E_CLOSED);
	lp_err rc = eng_watch_next(b, &ev);
	/* b had an event pending; it may or may not get it, then CLOSED. */
	if (rc == LP_OK) {
		eng_event_unref(ev);
		rc = eng_watch_next(b, &ev);
	}
	TC_RC(rc, LP_E_CLOSED);
	eng_watch_close(a);
	eng_watch_close(b);
	tc_waiter_destroy(&wa);
	tc_waiter_destroy(&wb);
	/* The store reopens fine. */
	TC_OK(eng_open(&S.o, &S.e));
	cr_assert_eq(eng_rev(S.e), 2);
}

/* A replay overtaken by compaction either finishes gap-free (if it was far
   enough ahead) or ends with LP_E_COMPACTED. */
Test(eng_watch, replay_overtaken_by_compaction)
{
	for (int i = 0; i < 300; i++) {
		char k[16];
		snprintf(k, sizeof k, "/rc/%d", i % 11);
		tc_puts(S.e, k, "v");
	}
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	TC_OK(eng_watch_open(S.e, "", 0, 1, tc_ready, &wt, &w));
	int64_t expect = 2;
	for (int i = 0; i < 5; i++) {
		eng_event *ev = next_ok(w, &wt);
		cr_assert_eq(ev->rev, expect++);
		eng_event_unref(ev);
	}
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	lp_err rc;
	for (;;) {
		eng_event *ev;
		rc = tc_next_wait(w, &wt, &ev);
		if (rc != LP_OK)
			break;
		cr_assert_eq(ev->rev, expect, "rev %" PRId64 " want %" PRId64,
			     ev->rev, expect);
		expect++;
		eng_event_unref(ev);
		if (expect > now)
			break;
	}
	if (expect <= now)
		TC_RC(rc, LP_E_COMPACTED);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

/* eng_watch_track: a watch from a compacted revision of a tracked prefix
   that has not changed since starts from the newest revision and misses
   nothing; any change under it since, a revision before the tracking, or
   an untracked prefix still gives LP_E_COMPACTED. */
Test(eng_watch, quiet_tracked_prefix_survives_compaction)
{
	eng_watch_track(S.e, "/q/", 3);
	eng_watch_track(S.e, "/q/", 3);	    /* idempotent */
	eng_watch_track(S.e, "/q/sub/", 7); /* nested: ignored */
	eng_watch_track(S.e, "/", 1);	    /* nested the other way */
	eng_watch_track(S.e, "/r/", 3);
	int64_t quiet_at = tc_puts(S.e, "/q/a", "v1");
	for (int i = 0; i < 40; i++)
		tc_puts(S.e, "/r/x", "busy");
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	/* /q/ has not changed after quiet_at: the watch starts at now */
	TC_OK(eng_watch_open(S.e, "/q/", 3, quiet_at, tc_ready, &wt, &w));
	eng_event *ev = NULL;
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	cr_assert_geq(eng_watch_progress(w), quiet_at);
	int64_t r = tc_puts(S.e, "/q/b", "v2");
	ev = next_ok(w, &wt);
	want_ev(ev, ENG_EV_PUT, r, "/q/b", "v2", NULL);
	eng_event_unref(ev);
	eng_watch_close(w);
	/* a watch under it (a namespace) the same way */
	TC_OK(eng_watch_open(S.e, "/q/b", 4, r, tc_ready, &wt, &w));
	eng_watch_close(w);
	/* /q/ changed after quiet_at now (r): compacted */
	for (int i = 0; i < 10; i++)
		tc_puts(S.e, "/r/x", "busy");
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	TC_RC(eng_watch_open(S.e, "/q/", 3, quiet_at, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	/* a busy tracked prefix and an untracked one: compacted */
	TC_RC(eng_watch_open(S.e, "/r/", 3, r, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	TC_RC(eng_watch_open(S.e, "/s/", 3, r, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	/* tracked from now on: a revision from before is not vouched for */
	eng_watch_track(S.e, "/s/", 3);
	TC_RC(eng_watch_open(S.e, "/s/", 3, r, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	/* everything (no prefix) is never vouched for */
	TC_RC(eng_watch_open(S.e, "", 0, r, tc_ready, &wt, &w), LP_E_COMPACTED);
	tc_waiter_destroy(&wt);
}

/* ------------------------------------------------------------ shared events */

static _Atomic int cache_frees;

static void cache_free(void *p)
{
	atomic_fetch_add(&cache_frees, 1);
	free(p);
}

Test(eng_watch, events_are_shared_and_cached_once)
{
	struct tc_waiter wa, wb;
	tc_waiter_init(&wa);
	tc_waiter_init(&wb);
	eng_watch *a, *b;
	int64_t from = eng_rev(S.e);
	TC_OK(eng_watch_open(S.e, "", 0, from, tc_ready, &wa, &a));
	TC_OK(eng_watch_open(S.e, "", 0, from, tc_ready, &wb, &b));
	tc_puts(S.e, "/ev", "v");
	eng_event *ea = next_ok(a, &wa);
	eng_event *eb = next_ok(b, &wb);
	cr_assert_eq(ea, eb, "a live event is one object for every watcher");
	cr_assert_null(eng_event_cache_get(ea));
	char *p1 = strdup("framed-1"), *p2 = strdup("framed-2");
	cr_assert_eq(eng_event_cache_set(ea, p1, cache_free), 1);
	cr_assert_eq(eng_event_cache_set(eb, p2, cache_free), 0);
	free(p2);
	cr_assert_eq(eng_event_cache_get(eb), p1);
	eng_event_ref(ea);
	eng_event_unref(ea);
	eng_event_unref(ea);
	cr_assert_eq(eng_event_cache_get(eb), p1);
	eng_event_unref(eb);
	eng_event_unref(NULL);
	eng_watch_close(a);
	eng_watch_close(b);
	tc_waiter_destroy(&wa);
	tc_waiter_destroy(&wb);
	/* Push it out of the ring (16 events) and close: freed exactly once. */
	for (int i = 0; i < 40; i++)
		tc_puts(S.e, "/ev", "w");
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	cr_assert_eq(atomic_load(&cache_frees), 1);
}
