/*
 * test_compact.c -- compaction boundaries: what stays readable, what fails
 * LP_E_COMPACTED, where watches may start, clamping to pins, persistence,
 * and the periodic compactor.
 *
 * Invariants checked
 *  1. After eng_compact(C): every get and range at a revision >= C equals
 *     the model (including keys last written long before C); at < C both
 *     fail LP_E_COMPACTED.
 *  2. eng_watch_open(from_rev) succeeds exactly when from_rev >= C, and a
 *     watcher from C gets exactly the changes after C.
 *  3. The target is clamped to the current revision and to the oldest live
 *     pin (the *done value); eng_compacted() reports it and never goes
 *     back; eng_pin_rev below it fails LP_E_COMPACTED.
 *  4. The compacted revision survives reopen.
 */
#include "common.h"

static struct tc_store S;
static struct tm_model M;

static void setup(void)
{
	tc_open(&S, "compact", NULL);
	tm_init(&M);
}

static void teardown(void)
{
	tc_done(&S);
	tm_free(&M);
}

TestSuite(eng_compact, .init = setup, .fini = teardown);

#define N_KEYS 25

static void key_of(int i, char *k, size_t n)
{
	snprintf(k, n, "/c/%02d", i);
}

/* n random single-op txns over N_KEYS keys. */
static void churn(uint64_t *st, int n)
{
	for (int i = 0; i < n; i++) {
		char k[16], v[32];
		key_of((int)(ts_rand(st) % N_KEYS), k, sizeof k);
		struct eng_commit_res res = {0};
		if (ts_rand(st) % 5 == 0) {
			TC_OK(tc_del(S.e, k, strlen(k), NULL, &res));
			tm_del(&M, k, strlen(k), res.rev);
		} else {
			int vl = snprintf(v, sizeof v, "v%" PRId64 "@", M.rev);
			TC_OK(tc_put(S.e, k, strlen(k), v, (size_t)vl,
				     (uint32_t)vl, NULL, &res));
			tm_put(&M, k, strlen(k), v, (size_t)vl, (uint32_t)vl,
			       res.rev);
		}
	}
}

/* Every read at >= c equals the model; every read below fails. c < 0:
   the snapshot's compacted revision. */
static void check_boundary(int64_t c)
{
	eng_rd *r;
	TC_OK(eng_rd_begin(S.e, &r));
	int64_t now = eng_rd_rev(r);
	if (c < 0)
		c = eng_rd_compacted(r);
	cr_assert_eq(eng_rd_compacted(r), c);
	for (int64_t rev = 1; rev <= now; rev++) {
		struct eng_range_req q = {.prefix = "/c/",
					  .prefix_len = 3,
					  .at_rev = rev,
					  .flags = ENG_RANGE_COUNT};
		struct tc_list l = {0};
		struct eng_range_res res = {0};
		lp_err rc = eng_range(r, &q, tc_collect, &l, &res);
		if (rev < c) {
			cr_assert_eq(rc, LP_E_COMPACTED,
				     "range at %" PRId64 " below %" PRId64
				     ": %s",
				     rev, c, lp_errname(rc));
			cr_assert_eq(l.n, 0);
		} else {
			cr_assert_eq(rc, LP_OK,
				     "range at %" PRId64 " (compacted"
				     " %" PRId64 "): %s",
				     rev, c, lp_errname(rc));
			char what[64];
			snprintf(what, sizeof what, "range at %" PRId64, rev);
			tm_assert_range(&M, &q, rev, &l, what);
		}
		tc_list_free(&l);
		for (int i = 0; i < N_KEYS; i++) {
			char k[16];
			key_of(i, k, sizeof k);
			struct eng_record rec = {0};
			rc = eng_get(r, k, strlen(k), rev, &rec);
			const struct tm_ver *v = tm_get(&M, k, strlen(k), rev);
			if (rev < c) {
				cr_assert_eq(rc, LP_E_COMPACTED,
					     "get %s at %" PRId64
					     " below %" PRId64 ": %s",
					     k, rev, c, lp_errname(rc));
			} else if (!v) {
				cr_assert_eq(rc, LP_E_NOTFOUND,
					     "get %s at %" PRId64 ": %s", k,
					     rev, lp_errname(rc));
			} else {
				cr_assert_eq(rc, LP_OK,
					     "get %s at %" PRId64
					     " (compacted %" PRId64 "): %s",
					     k, rev, c, lp_errname(rc));
				struct tc_rec cp = {0};
				tc_rec_copy(&cp, &rec);
				tm_assert_rec(&cp, v, "get");
				tc_rec_free(&cp);
			}
		}
	}
	eng_rd_end(r);
}

Test(eng_compact, reads_at_and_above_survive_below_fail)
{
	uint64_t seed = ts_seed("eng_compact.reads_at_and_above", 5);
	uint64_t st = seed;
	/* A key written once at the start and never again must stay
	   readable at every revision >= C. */
	int64_t r0 = tc_puts(S.e, "/c/stable", "s");
	tm_put(&M, "/c/stable", 9, "s", 1, ENG_NO_SLOT, r0);
	churn(&st, 200);
	int64_t targets[] = {2, 40, 41, 120, 180};
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
		int64_t done;
		TC_OK(eng_compact(S.e, targets[i], &done));
		cr_assert_eq(done, targets[i]);
		cr_assert_eq(eng_compacted(S.e), targets[i]);
		tc_check(S.e);
		check_boundary(targets[i]);
		churn(&st, 20);
	}
	tc_reopen(&S);
	cr_assert_eq(eng_compacted(S.e), 180);
	check_boundary(180);
	/* Compacting to the current revision keeps the latest state. */
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	check_boundary(now);
	tc_expect(S.e, "/c/stable", 0, "s", r0, r0, 1);
}

Test(eng_compact, target_is_clamped_and_never_goes_back)
{
	uint64_t st =
	    ts_seed("eng_compact.target_is_clamped_and_never_goes_back", 9);
	churn(&st, 50);
	int64_t now = eng_rev(S.e), done = -1;
	TC_OK(eng_compact(S.e, now + 100, &done));
	cr_assert_eq(done, now,
		     "compaction past the revision: done %" PRId64
		     " rev %" PRId64,
		     done, now);
	cr_assert_eq(eng_compacted(S.e), now);
	cr_assert_leq(eng_compacted(S.e), eng_rev(S.e));
	churn(&st, 10);
	/* Asking for less than already compacted changes nothing. */
	TC_OK(eng_compact(S.e, now - 10, NULL));
	cr_assert_eq(eng_compacted(S.e), now);
	check_boundary(now);
	tc_check(S.e);
}

Test(eng_compact, pins_hold_compaction_back)
{
	uint64_t st = ts_seed("eng_compact.pins_hold_compaction_back", 3);
	churn(&st, 30);
	int64_t p1 = eng_rev(S.e);
	eng_pin *a, *b;
	TC_OK(eng_pin_rev(S.e, p1, &a));
	churn(&st, 30);
	int64_t p2 = eng_rev(S.e);
	TC_OK(eng_pin_rev(S.e, p2, &b));
	churn(&st, 30);
	struct eng_stats stt;
	eng_stats(S.e, &stt);
	cr_assert_eq(stt.pins, 2);

	int64_t done;
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	cr_assert_eq(done, p1);
	check_boundary(p1);
	/* Below the oldest pin, compaction is not clamped. */
	eng_unpin(a);
	TC_OK(eng_compact(S.e, p1 + 5, &done));
	cr_assert_eq(done, p1 + 5);
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	cr_assert_eq(done, p2);
	check_boundary(p2);
	/* A pin below the compacted revision is refused; at it, fine. */
	eng_pin *c = NULL;
	TC_RC(eng_pin_rev(S.e, p2 - 1, &c), LP_E_COMPACTED);
	cr_assert_null(c);
	TC_OK(eng_pin_rev(S.e, p2, &c));
	eng_unpin(b);
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	cr_assert_eq(done, p2);
	eng_unpin(c);
	eng_unpin(NULL);
	eng_stats(S.e, &stt);
	cr_assert_eq(stt.pins, 0);
	int64_t now = eng_rev(S.e);
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	check_boundary(now);
}

Test(eng_compact, watch_open_boundary)
{
	uint64_t st = ts_seed("eng_compact.watch_open_boundary", 17);
	churn(&st, 60);
	int64_t c = 31, done;
	TC_OK(eng_compact(S.e, c, &done));
	cr_assert_eq(done, c);
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w = NULL;
	TC_RC(eng_watch_open(S.e, "", 0, c - 1, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	cr_assert_null(w);
	TC_RC(eng_watch_open(S.e, "", 0, 1, tc_ready, &wt, &w), LP_E_COMPACTED);
	TC_OK(eng_watch_open(S.e, "", 0, c, tc_ready, &wt, &w));
	/* Exactly the changes after c, in order. */
	int64_t now = eng_rev(S.e);
	int64_t expect = c + 1;
	while (expect <= now) {
		eng_event *ev;
		lp_err rc = tc_next_wait(w, &wt, &ev);
		cr_assert_eq(rc, LP_OK, "next at %" PRId64 ": %s", expect,
			     lp_errname(rc));
		cr_assert_eq(ev->rev, expect,
			     "event rev %" PRId64 " want %" PRId64, ev->rev,
			     expect);
		eng_event_unref(ev);
		expect++;
	}
	eng_event *ev;
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	eng_watch_close(w);
	/* At the current revision: fine, nothing yet. */
	TC_OK(eng_watch_open(S.e, "", 0, now, tc_ready, &wt, &w));
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

Test(eng_compact, history_and_log_shrink)
{
	uint64_t st = ts_seed("eng_compact.history_and_log_shrink", 23);
	churn(&st, 400);
	struct eng_info a, b;
	TC_OK(eng_info(S.e, &a));
	cr_assert_gt(a.n_history, 0);
	int64_t now = eng_rev(S.e), done;
	/* One change per revision (no-op deletes leave no entry). */
	cr_assert_eq(a.n_log, (uint64_t)(now - 1));
	TC_OK(eng_compact(S.e, now, &done));
	TC_OK(eng_info(S.e, &b));
	cr_assert_lt(b.n_history, a.n_history);
	cr_assert_lt(b.n_log, a.n_log);
	cr_assert_str_eq(a.hash, b.hash,
			 "compaction changed the current state");
	cr_assert_eq(b.n_keys, a.n_keys);
	cr_assert_eq(b.compacted, now);
	tc_check(S.e);
}

/* Compaction to T leaves exactly the history a read at >= T can need: the
   versions above T, and per key modified after T its newest version at or
   below T. Writes land on random keys of a few hundred, so each leaf page
   of hist mixes many keys' versions (a delete moves the nodes of the page
   it is on, which once made the walk skip versions that should go:
   bench-http's S5 saw history and the data file grow without bound). */
Test(eng_compact, exactly_the_needed_history_remains)
{
	enum { KEYS = 300, PUTS = 6000 };
	uint64_t st =
	    ts_seed("eng_compact.exactly_the_needed_history_remains", 41);
	static int64_t revs[KEYS][PUTS / KEYS * 4];
	static int n_revs[KEYS];
	memset(n_revs, 0, sizeof n_revs);
	char v[301];
	memset(v, 'x', 300);
	v[300] = 0;
	for (int i = 0; i < PUTS; i++) {
		int key = (int)(ts_rand(&st) % KEYS);
		if (n_revs[key] == PUTS / KEYS * 4)
			continue;
		char k[32];
		snprintf(k, sizeof k, "/h/%05d", key);
		struct eng_commit_res res = {0};
		TC_OK(
		    tc_put(S.e, k, strlen(k), v, 300, ENG_NO_SLOT, NULL, &res));
		revs[key][n_revs[key]++] = res.rev;
	}
	int64_t now = eng_rev(S.e), target = now / 2, done;
	uint64_t expect = 0;
	for (int key = 0; key < KEYS; key++) {
		int n = n_revs[key];
		if (!n)
			continue;
		bool newest_at_or_below = false;
		/* Superseded versions, newest first; r* is the version a read
		   at target sees while the key changed after target. */
		for (int j = n - 2; j >= 0; j--) {
			if (revs[key][j] > target) {
				expect++;
			} else if (!newest_at_or_below &&
				   revs[key][n - 1] > target) {
				expect++;
				newest_at_or_below = true;
			}
		}
	}
	TC_OK(eng_compact(S.e, target, &done));
	cr_assert_eq(done, target);
	struct eng_info b;
	TC_OK(eng_info(S.e, &b));
	cr_assert_eq(b.n_history, expect,
		     "history entries after compacting to %" PRId64 ": %" PRIu64
		     ", expected %" PRIu64,
		     target, b.n_history, expect);
	tc_check(S.e);
}

/* A compaction runs in steps of at most ENG_COMPACT_STEP_MAX entries, also
   within one key: 3,000 versions of one key take at least three steps, and
   the history still ends exactly right (none left: the state is at the
   target). */
Test(eng_compact, steps_are_bounded_even_within_one_key)
{
	enum { PUTS = 3 * ENG_COMPACT_STEP_MAX };
	for (int i = 0; i < PUTS; i++) {
		char v[32];
		snprintf(v, sizeof v, "version %d", i);
		tc_puts(S.e, "/one", v);
	}
	struct eng_stats before, after;
	struct eng_info a, b;
	eng_stats(S.e, &before);
	TC_OK(eng_info(S.e, &a));
	cr_assert_eq(a.n_history, PUTS - 1);
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	eng_stats(S.e, &after);
	TC_OK(eng_info(S.e, &b));
	cr_assert_eq(b.n_history, 0, "history left: %" PRIu64, b.n_history);
	uint64_t steps = after.compact_steps - before.compact_steps;
	cr_assert_geq(steps, 3, "%" PRIu64 " steps for %d entries", steps,
		      PUTS - 1);
	cr_assert_gt(after.compact_step_most, 0);
	cr_assert_leq(after.compact_step_most, ENG_COMPACT_STEP_MAX);
	tc_check(S.e);
}

/* A slice deletes at most ENG_COMPACT_STEP_BYTES (and one entry more), however
   few entries that is: the pages a slice dirties are what it adds to the
   commit of the write group it rides in. 40 keys x 10 versions of 4 KB are
   ~1.4 MB of history, one slice's worth of entries and milliseconds before
   the byte bound. */
Test(eng_compact, slices_are_bounded_by_the_bytes_they_delete)
{
	enum { KEYS = 40, VERSIONS = 10, VLEN = 4000 };
	static char v[VLEN + 1];
	for (int ver = 0; ver < VERSIONS; ver++) {
		memset(v, 'a' + ver, VLEN);
		for (int i = 0; i < KEYS; i++) {
			char k[32];
			key_of(i, k, sizeof k);
			tc_puts(S.e, k, v);
		}
	}
	struct eng_stats before, after;
	struct eng_info b;
	eng_stats(S.e, &before);
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	eng_stats(S.e, &after);
	TC_OK(eng_info(S.e, &b));
	cr_assert_eq(b.n_history, 0, "history left: %" PRIu64, b.n_history);
	uint64_t entry = VLEN + 64; /* a value, its record header and key */
	cr_assert_lt(after.compact_step_bytes_most,
		     ENG_COMPACT_STEP_BYTES + entry, "%" PRIu64 " bytes",
		     after.compact_step_bytes_most);
	cr_assert_geq(after.compact_step_bytes_most, ENG_COMPACT_STEP_BYTES);
	uint64_t steps = after.compact_steps - before.compact_steps;
	uint64_t least = (uint64_t)KEYS * (VERSIONS - 1) * VLEN /
			 (ENG_COMPACT_STEP_BYTES + entry);
	cr_assert_geq(steps, least, "%" PRIu64 " steps", steps);
	tc_check(S.e);
}

/* A write that arrives during a compaction commits between two of its
   slices, not after the whole compaction, and its group carries the next
   slice. The step hook holds the
   compaction after its first step until the write is queued; the commit
   hook records how many steps had run when the write's group committed.
   The write changes every key, among them the one the first step stopped
   in the middle of, and compaction still leaves exactly what reads at the
   target need: per key, the version the write superseded. In sync mode:
   the steps commit without syncing LMDB's meta page. */
enum { HK_KEYS = 10, HK_VERSIONS = 400 };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t steps;	       /* step hook calls (writer thread) */
	bool held, release;    /* the first step is being held; let it go */
	uint64_t steps_at[64]; /* by group: steps run when it committed */
} H = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void hold_first_step(void *ud, uint64_t step)
{
	(void)ud;
	(void)step;
	pthread_mutex_lock(&H.mu);
	if (++H.steps == 1) {
		H.held = true;
		pthread_cond_broadcast(&H.cv);
		while (!H.release)
			pthread_cond_wait(&H.cv, &H.mu);
	}
	pthread_mutex_unlock(&H.mu);
}

static void note_group(void *ud, uint64_t group)
{
	(void)ud;
	pthread_mutex_lock(&H.mu);
	if (group < 64)
		H.steps_at[group] = H.steps;
	pthread_mutex_unlock(&H.mu);
}

struct compact_arg {
	eng *e;
	int64_t target, done;
	lp_err rc;
};

static void *compact_thread(void *p)
{
	struct compact_arg *a = p;
	a->rc = eng_compact(a->e, a->target, &a->done);
	return NULL;
}

struct write_arg {
	eng *e;
	struct eng_commit_res res;
	lp_err rc;
};

/* One txn that puts every key. */
static void *write_all_keys(void *p)
{
	struct write_arg *a = p;
	eng_txn *t;
	if ((a->rc = eng_txn_new(a->e, &t)))
		return NULL;
	for (int k = 0; k < HK_KEYS && !a->rc; k++) {
		char key[16];
		snprintf(key, sizeof key, "/w/%02d", k);
		a->rc = eng_txn_put(t, key, strlen(key), "during", 6,
				    ENG_NO_SLOT, NULL);
	}
	if (!a->rc)
		a->rc = eng_txn_commit(t, &a->res);
	eng_txn_free(t);
	return NULL;
}

Test(eng_compact, a_write_commits_between_steps)
{
	/* The history, written without syncs; then the store reopened in
	   sync mode with the hooks. */
	for (int v = 0; v < HK_VERSIONS; v++)
		for (int k = 0; k < HK_KEYS; k++) {
			char key[16], val[16];
			snprintf(key, sizeof key, "/w/%02d", k);
			snprintf(val, sizeof val, "v%d", v);
			tc_puts(S.e, key, val);
		}
	eng_close(S.e);
	S.e = NULL;
	S.o.nosync = 0;
	S.o.on_compact_step = hold_first_step;
	S.o.on_commit = note_group;
	TC_OK(eng_open(&S.o, &S.e));

	int64_t target = eng_rev(S.e);
	static struct compact_arg ca;
	ca = (struct compact_arg){.e = S.e, .target = target};
	pthread_t tc, tw;
	cr_assert_eq(pthread_create(&tc, NULL, compact_thread, &ca), 0);
	pthread_mutex_lock(&H.mu);
	while (!H.held)
		pthread_cond_wait(&H.cv, &H.mu);
	pthread_mutex_unlock(&H.mu);

	/* The compaction is held after its first step: queue the write. */
	static struct write_arg wa;
	wa = (struct write_arg){.e = S.e};
	cr_assert_eq(pthread_create(&tw, NULL, write_all_keys, &wa), 0);
	struct timespec nap = {0, 1000000L};
	struct eng_stats st;
	for (eng_stats(S.e, &st); st.queued == 0; eng_stats(S.e, &st))
		nanosleep(&nap, NULL);
	pthread_mutex_lock(&H.mu);
	H.release = true;
	pthread_cond_broadcast(&H.cv);
	pthread_mutex_unlock(&H.mu);
	pthread_join(tw, NULL);
	pthread_join(tc, NULL);

	TC_OK(wa.rc);
	TC_OK(ca.rc);
	cr_assert_eq(ca.done, target);
	cr_assert_eq(wa.res.rev, target + 1);
	cr_assert_lt(wa.res.group, 64);
	cr_assert_eq(H.steps_at[wa.res.group], 1,
		     "the write committed after %" PRIu64 " steps",
		     H.steps_at[wa.res.group]);
	cr_assert_gt(H.steps, 1, "the compaction took %" PRIu64 " steps",
		     H.steps);
	/* Its group carried the next slice of the compaction. */
	eng_stats(S.e, &st);
	cr_assert_geq(st.compact_folded, 1);
	struct eng_info b;
	TC_OK(eng_info(S.e, &b));
	cr_assert_eq(b.n_history, HK_KEYS,
		     "history entries after compacting to %" PRId64 ": %" PRIu64
		     ", expected %d",
		     target, b.n_history, HK_KEYS);
	cr_assert_eq(b.compacted, target);
	/* A read at the target sees every key's version before the write. */
	for (int k = 0; k < HK_KEYS; k++) {
		char key[16], want[16];
		snprintf(key, sizeof key, "/w/%02d", k);
		snprintf(want, sizeof want, "v%d", HK_VERSIONS - 1);
		struct tc_rec got = {0};
		TC_OK(tc_get(S.e, key, strlen(key), target, &got));
		cr_assert_str_eq((const char *)got.value, want,
				 "%s at %" PRId64, key, target);
		tc_rec_free(&got);
	}
	tc_check(S.e);
}

/* A large history compacted in one call (the engine splits it into bounded
   transactions) with readers of the latest state running meanwhile. */
struct reader_arg {
	eng *e;
	_Atomic int stop;
	long reads;
	char err[160];
};

static void *reader(void *p)
{
	struct reader_arg *a = p;
	while (!a->stop) {
		eng_rd *r;
		struct eng_record rec = {0};
		lp_err rc = eng_rd_begin(a->e, &r);
		if (rc) {
			snprintf(a->err, sizeof a->err, "rd %s",
				 lp_errname(rc));
			return NULL;
		}
		rc = eng_get(r, "/c/00", 5, 0, &rec);
		eng_rd_end(r);
		if (rc != LP_OK) {
			snprintf(a->err, sizeof a->err, "get %s",
				 lp_errname(rc));
			return NULL;
		}
		a->reads++;
	}
	return NULL;
}

Test(eng_compact, big_compaction_with_readers)
{
	for (int i = 0; i < 3000; i++) {
		char k[16], v[32];
		key_of(i % N_KEYS, k, sizeof k);
		snprintf(v, sizeof v, "value %d", i);
		struct eng_commit_res res = {0};
		eng_txn *t;
		TC_OK(eng_txn_new(S.e, &t));
		TC_OK(eng_txn_put(t, k, strlen(k), v, strlen(v), ENG_NO_SLOT,
				  NULL));
		TC_OK(eng_txn_commit(t, &res));
		eng_txn_free(t);
		tm_put(&M, k, strlen(k), v, strlen(v), ENG_NO_SLOT, res.rev);
	}
	static struct reader_arg a;
	memset(&a, 0, sizeof a);
	a.e = S.e;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, reader, &a), 0);
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now - 10, &done));
	a.stop = 1;
	pthread_join(th, NULL);
	cr_assert_eq(a.err[0], 0, "reader: %s", a.err);
	cr_assert_eq(done, now - 10);
	check_boundary(now - 10);
	tc_check(S.e);
}

/* The periodic compactor: polls with short sleeps until it has run (there
   is no completion callback to wait on); the time is only a safety net. */
Test(eng_compact, compactor_runs_and_stops)
{
	uint64_t st = ts_seed("eng_compact.compactor_runs_and_stops", 31);
	churn(&st, 20);
	int64_t first = eng_rev(S.e);
	TC_OK(eng_compactor_start(S.e, 5));
	struct eng_stats stt;
	eng_stats(S.e, &stt);
	cr_assert_eq(stt.compactor_interval_ms, 5);
	struct timespec ts = {0, 2 * 1000000L};
	long max_loops = 10000L * ts_slow();
	long loops = 0;
	/* Its success is recorded just after the compaction is visible:
	   wait for both. */
	for (;;) {
		eng_stats(S.e, &stt);
		if (stt.compacted >= first && stt.compactor_last_ok > 0)
			break;
		if (loops++ >= max_loops)
			break;
		churn(&st, 1);
		nanosleep(&ts, NULL);
	}
	cr_assert_geq(eng_compacted(S.e), first, "the compactor never ran");
	cr_assert_gt(stt.compactor_last_ok, 0);
	cr_assert_eq(stt.compactor_last_fail, 0, "the compactor failed: %s",
		     lp_errname(stt.compactor_last_err));
	TC_OK(eng_compactor_start(S.e, 0));
	eng_stats(S.e, &stt);
	cr_assert_eq(stt.compactor_interval_ms, 0);
	check_boundary(-1);
}

/* A pin expires after opts.pin_seconds: a forgotten pin cannot hold
   compaction back for ever. Polls (no event to wait on); the time is a
   safety net only. */
Test(eng_compact, pins_expire)
{
	tc_done(&S);
	struct eng_opts o = {.nosync = 1, .pin_seconds = 1};
	tc_open(&S, "compact-pin", &o);
	uint64_t st = ts_seed("eng_compact.pins_expire", 41);
	churn(&st, 20);
	int64_t p = eng_rev(S.e);
	eng_pin *pin;
	TC_OK(eng_pin_rev(S.e, p, &pin));
	churn(&st, 20);
	int64_t now = eng_rev(S.e), done = 0;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, p);
	struct timespec ts = {0, 50 * 1000000L};
	long max_loops = 400L * ts_slow(); /* 20 s, scaled */
	for (long i = 0; i < max_loops && done != now; i++) {
		nanosleep(&ts, NULL);
		TC_OK(eng_compact(S.e, now, &done));
	}
	cr_assert_eq(done, now,
		     "an expired pin still holds compaction at %" PRId64, done);
	check_boundary(now);
	eng_unpin(pin); /* releasing an expired pin is fine */
	struct eng_stats stt;
	eng_stats(S.e, &stt);
	cr_assert_eq(stt.pins, 0);
}
