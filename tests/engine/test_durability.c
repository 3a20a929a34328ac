/*
 * test_durability.c -- a commit is acknowledged only after its group is
 * committed (and, in sync mode, durable): the eng_opts.on_commit hook runs
 * for group g before any caller of g returns.
 *
 * Invariants checked
 *  1. The hook sees groups 1, 2, 3, ... in order, one at a time (on the
 *     writer thread, or on a caller that found the writer idle and commits
 *     its own group: engine/writer.c invariant 6).
 *  2. After every successful eng_txn_commit, res.group <= the number of
 *     groups the hook has seen by then (so the hook for that group ran
 *     before the acknowledgement).
 *  3. eng_stats' groups equals the hook's count; every acknowledged write is
 *     there after reopen.
 *  4. A lone caller commits its own group on its own thread (the hook runs
 *     there, before the acknowledgement), and such a group is as durable.
 */
#include <stdatomic.h>

#include "common.h"

struct hook {
	_Atomic uint64_t seen; /* the last group the hook saw */
	_Atomic pthread_t last_thread; /* the thread it last ran on */
	_Atomic int out_of_order;
	_Atomic uint64_t bad_group;
};

static void on_commit(void *ud, uint64_t group)
{
	struct hook *h = ud;
	uint64_t prev = atomic_load(&h->seen);
	if (group != prev + 1) {
		atomic_store(&h->out_of_order, 1);
		atomic_store(&h->bad_group, group);
	}
	atomic_store(&h->last_thread, pthread_self());
	atomic_store(&h->seen, group);
}

#define D_THREADS 6
#define D_TXNS 120

struct d_arg {
	eng *e;
	struct hook *h;
	int id;
	int64_t rev[D_TXNS];
	char err[200];
};

static void *d_thread(void *p)
{
	struct d_arg *a = p;
	for (int i = 0; i < D_TXNS; i++) {
		char k[32], v[32];
		int kl = snprintf(k, sizeof k, "/d/%d/%d", a->id, i % 10);
		int vl = snprintf(v, sizeof v, "%d", i);
		struct eng_commit_res res;
		lp_err rc = tc_put(a->e, k, (size_t)kl, v, (size_t)vl,
				   ENG_NO_SLOT, NULL, &res);
		uint64_t seen = atomic_load(&a->h->seen);
		if (rc) {
			snprintf(a->err, sizeof a->err, "commit %d: %s", i,
				 lp_errname(rc));
			return NULL;
		}
		if (res.group < 1 || res.group > seen) {
			snprintf(a->err, sizeof a->err,
				 "commit %d acknowledged in group %" PRIu64
				 " before its hook ran (hook at %" PRIu64 ")",
				 i, res.group, seen);
			return NULL;
		}
		a->rev[i] = res.rev;
	}
	return NULL;
}

static void run(int nosync)
{
	static struct hook h;
	memset(&h, 0, sizeof h);
	struct eng_opts o = {
	    .nosync = nosync, .on_commit = on_commit, .hook_ud = &h};
	struct tc_store s;
	tc_open(&s, nosync ? "durability-nosync" : "durability", &o);
	static struct d_arg a[D_THREADS];
	pthread_t th[D_THREADS];
	for (int i = 0; i < D_THREADS; i++) {
		memset(&a[i], 0, sizeof a[i]);
		a[i].e = s.e;
		a[i].h = &h;
		a[i].id = i;
		cr_assert_eq(pthread_create(&th[i], NULL, d_thread, &a[i]), 0);
	}
	for (int i = 0; i < D_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < D_THREADS; i++)
		cr_assert_eq(a[i].err[0], 0, "thread %d: %s", i, a[i].err);
	cr_assert_eq(atomic_load(&h.out_of_order), 0,
		     "the hook saw group %" PRIu64 " out of order",
		     atomic_load(&h.bad_group));
	struct eng_stats st;
	eng_stats(s.e, &st);
	cr_assert_eq(st.groups, atomic_load(&h.seen));
	cr_assert_eq(st.txns, D_THREADS * D_TXNS);
	cr_assert_leq(st.groups, st.txns);
	cr_log_info("%s: %" PRIu64 " groups (%" PRIu64
		    " committed by a caller) for %" PRIu64 " txns",
		    nosync ? "nosync" : "sync", st.groups, st.led_groups,
		    st.txns);
	tc_reopen(&s);
	for (int i = 0; i < D_THREADS; i++) {
		for (int j = D_TXNS - 10; j < D_TXNS; j++) {
			char k[32], v[32];
			snprintf(k, sizeof k, "/d/%d/%d", i, j % 10);
			snprintf(v, sizeof v, "%d", j);
			struct tc_rec r = {0};
			TC_OK(tc_get(s.e, k, strlen(k), 0, &r));
			cr_assert_str_eq((char *)r.value, v);
			cr_assert_eq(r.mod_rev, a[i].rev[j]);
			tc_rec_free(&r);
		}
	}
	tc_done(&s);
}

Test(eng_durability, hook_runs_before_ack_in_sync_mode)
{
	run(0);
}

Test(eng_durability, hook_runs_before_ack_without_sync)
{
	run(1);
}

/* Invariant 4: with no other writer, every commit finds the writer idle, so
   its caller commits the group itself; the hook ran on that thread before
   the commit returned, and the writes survive a reopen. */
static void run_lone(int nosync)
{
	static struct hook h;
	memset(&h, 0, sizeof h);
	struct eng_opts o = {
	    .nosync = nosync, .on_commit = on_commit, .hook_ud = &h};
	struct tc_store s;
	tc_open(&s, nosync ? "lone-nosync" : "lone", &o);
	enum { N = 40 };
	int64_t revs[N];
	for (int i = 0; i < N; i++) {
		char k[32], v[32];
		int kl = snprintf(k, sizeof k, "/lone/%d", i);
		int vl = snprintf(v, sizeof v, "v%d", i);
		atomic_store(&h.last_thread, (pthread_t)0);
		struct eng_commit_res res = {0};
		TC_OK(tc_put(s.e, k, (size_t)kl, v, (size_t)vl, ENG_NO_SLOT,
			     NULL, &res));
		cr_assert_eq(res.group, atomic_load(&h.seen),
			     "commit %d acknowledged before its hook ran", i);
		cr_assert(pthread_equal(atomic_load(&h.last_thread),
					pthread_self()),
			  "commit %d: the hook ran on another thread", i);
		revs[i] = res.rev;
	}
	struct eng_stats st;
	eng_stats(s.e, &st);
	cr_assert_eq(st.groups, N);
	cr_assert_eq(st.led_groups, N);
	tc_reopen(&s);
	for (int i = 0; i < N; i++) {
		char k[32], v[32];
		snprintf(k, sizeof k, "/lone/%d", i);
		snprintf(v, sizeof v, "v%d", i);
		struct tc_rec r = {0};
		TC_OK(tc_get(s.e, k, strlen(k), 0, &r));
		cr_assert_str_eq((char *)r.value, v);
		cr_assert_eq(r.mod_rev, revs[i]);
		tc_rec_free(&r);
	}
	tc_done(&s);
}

Test(eng_durability, lone_caller_commits_its_own_group_in_sync_mode)
{
	run_lone(0);
}

Test(eng_durability, lone_caller_commits_its_own_group_without_sync)
{
	run_lone(1);
}
