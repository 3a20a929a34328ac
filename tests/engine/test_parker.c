/*
 * test_parker.c -- eng_set_parker: a caller that waits for its commit
 * through a parker instead of blocking its thread (the server's write
 * fibers).
 *
 * Invariants checked
 *  1. A commit or chain with a parker installed has the same outcome as one
 *     without (revisions, failed compares, records), and its caller's wake
 *     is called exactly once per call, after the txns are done.
 *  2. On a synced store a parked caller never commits a group on its own
 *     thread: even on an idle store, where a caller without a parker
 *     leads, the writer thread commits it (led_groups does not move). On a
 *     nosync store it leads when no group is being committed (no park, no
 *     wake), and parks for one wake when one is.
 *  3. Inside a read (eng_rd_begin .. eng_rd_end) the parker is not used.
 *  4. eng_set_parker is per thread and returns the previous parker; many
 *     threads, each with its own parker, committing at once, each get one
 *     wake per commit and every write lands.
 */
#include <stdatomic.h>

#include "common.h"

static struct tc_store S;

/* Synced (the WAL's fsync per group), where parked callers never lead. */
static void setup(void)
{
	struct eng_opts o = {0};
	tc_open(&S, "parker", &o);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_parker, .init = setup, .fini = teardown);

/* A parker that sleeps on a condition variable until its wake. */
struct tparker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool woken;
	int parks, wakes;
	struct eng_parker pk;
};

static void t_park(void *ud)
{
	struct tparker *t = ud;
	pthread_mutex_lock(&t->mu);
	t->parks++;
	pthread_cond_broadcast(&t->cv); /* for a test waiting for the park */
	while (!t->woken)
		pthread_cond_wait(&t->cv, &t->mu);
	t->woken = false;
	pthread_mutex_unlock(&t->mu);
}

static void t_wake(void *ud)
{
	struct tparker *t = ud;
	pthread_mutex_lock(&t->mu);
	t->wakes++;
	t->woken = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

static void tp_init(struct tparker *t)
{
	memset(t, 0, sizeof *t);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->pk = (struct eng_parker){t_park, t_wake, t};
}

static void tp_destroy(struct tparker *t)
{
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
}

static int tp_wakes(struct tparker *t)
{
	pthread_mutex_lock(&t->mu);
	int n = t->wakes;
	pthread_mutex_unlock(&t->mu);
	return n;
}

static uint64_t led_groups(eng *e)
{
	struct eng_stats st;
	eng_stats(e, &st);
	return st.led_groups;
}

Test(eng_parker, commit_wakes_once_and_never_leads)
{
	struct tparker tp;
	tp_init(&tp);
	/* Without a parker, a lone commit on an idle store leads. */
	uint64_t led0 = led_groups(S.e);
	eng_txn *t = tc_put_txn(S.e, "a", "1", ENG_CMP_NONE, 0);
	TC_OK(eng_txn_commit(t, NULL));
	eng_txn_free(t);
	cr_assert_eq(led_groups(S.e), led0 + 1);

	cr_assert_null(eng_set_parker(&tp.pk));
	for (int i = 0; i < 20; i++) {
		char v[16];
		snprintf(v, sizeof v, "%d", i);
		t = tc_put_txn(S.e, "a", v, ENG_CMP_NONE, 0);
		struct eng_commit_res res;
		TC_OK(eng_txn_commit(t, &res));
		cr_assert_eq(res.rev, 3 + i);
		struct eng_record cur;
		eng_txn_result(t, 0, NULL, &cur);
		cr_assert_eq(cur.mod_rev, 3 + i);
		eng_txn_free(t);
		cr_assert_eq(tp_wakes(&tp), i + 1, "one wake per commit");
	}
	cr_assert_eq(led_groups(S.e), led0 + 1, "parked commits never lead");
	cr_assert_eq(eng_set_parker(NULL), &tp.pk);
	cr_assert_leq(tp.parks, 20);
	tp_destroy(&tp);
}

Test(eng_parker, failed_compare_and_chain)
{
	struct tparker tp;
	tp_init(&tp);
	eng_set_parker(&tp.pk);
	/* a failed compare: its error and the current record, one wake */
	eng_txn *t = tc_put_txn(S.e, "k", "v1", ENG_CMP_ABSENT, 0);
	TC_OK(eng_txn_commit(t, NULL));
	eng_txn_free(t);
	t = tc_put_txn(S.e, "k", "v2", ENG_CMP_ABSENT, 0);
	struct eng_commit_res res;
	TC_RC(eng_txn_commit(t, &res), LP_E_EXISTS);
	cr_assert_eq(res.failed_op, 0);
	struct eng_record prev;
	cr_assert_eq(eng_txn_result(t, 0, &prev, NULL), 1);
	cr_assert_eq(prev.value_len, 2);
	cr_assert_eq(memcmp(prev.value, "v1", 2), 0);
	eng_txn_free(t);
	cr_assert_eq(tp_wakes(&tp), 2);

	/* a chain: consecutive revisions, one wake for the call */
	eng_txn *ts[3] = {tc_put_txn(S.e, "c1", "x", ENG_CMP_NONE, 0),
			  tc_put_txn(S.e, "c2", "y", ENG_CMP_NONE, 0),
			  tc_put_txn(S.e, "c3", "z", ENG_CMP_NONE, 0)};
	struct eng_commit_res rs[3];
	TC_OK(eng_txn_commit_chain(ts, 3, rs));
	cr_assert_eq(rs[1].rev, rs[0].rev + 1);
	cr_assert_eq(rs[2].rev, rs[1].rev + 1);
	cr_assert_eq(rs[0].group, rs[2].group);
	for (int i = 0; i < 3; i++)
		eng_txn_free(ts[i]);
	cr_assert_eq(tp_wakes(&tp), 3, "one wake per chain");
	eng_set_parker(NULL);
	tp_destroy(&tp);
}

Test(eng_parker, not_used_inside_a_read)
{
	struct tparker tp;
	tp_init(&tp);
	eng_set_parker(&tp.pk);
	eng_rd *rd;
	TC_OK(eng_rd_begin(S.e, &rd));
	eng_txn *t = tc_put_txn(S.e, "r", "1", ENG_CMP_NONE, 0);
	TC_OK(eng_txn_commit(t, NULL));
	eng_txn_free(t);
	eng_rd_end(rd);
	cr_assert_eq(tp_wakes(&tp), 0);
	cr_assert_eq(tp.parks, 0);
	eng_set_parker(NULL);
	tp_destroy(&tp);
}

#define THREADS 8
#define PER_THREAD 50

struct worker {
	eng *e;
	int id;
	struct tparker tp;
	lp_err rc;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	eng_set_parker(&w->tp.pk);
	for (int i = 0; i < PER_THREAD && !w->rc; i++) {
		char k[32];
		snprintf(k, sizeof k, "w%d/%03d", w->id, i);
		eng_txn *t = NULL;
		w->rc = eng_txn_new(w->e, &t);
		if (!w->rc)
			w->rc = eng_txn_put(t, k, strlen(k), "v", 1,
					    ENG_NO_SLOT, NULL);
		if (!w->rc)
			w->rc = eng_txn_commit(t, NULL);
		eng_txn_free(t);
		if (!w->rc && tp_wakes(&w->tp) != i + 1)
			w->rc = LP_E_INVAL; /* not one wake per commit */
	}
	eng_set_parker(NULL);
	return NULL;
}

Test(eng_parker, concurrent_parked_writers)
{
	struct worker ws[THREADS];
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++) {
		ws[i] = (struct worker){.e = S.e, .id = i};
		tp_init(&ws[i].tp);
		cr_assert_eq(pthread_create(&th[i], NULL, worker_main, &ws[i]),
			     0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		TC_OK(ws[i].rc);
		tp_destroy(&ws[i].tp);
	}
	struct eng_stats st;
	eng_stats(S.e, &st);
	cr_assert_eq(st.rev, 1 + THREADS * PER_THREAD);
	cr_assert_eq(st.led_groups, 0);
	tc_check(S.e);
}

/* On a nosync store a lone parked commit leads: no park, no wake. */
Test(eng_parker, nosync_lone_commit_leads_without_parking)
{
	struct tc_store N;
	tc_open(&N, "parker-nosync", NULL);
	struct tparker tp;
	tp_init(&tp);
	uint64_t led0 = led_groups(N.e);
	eng_set_parker(&tp.pk);
	for (int i = 0; i < 20; i++) {
		char v[16];
		snprintf(v, sizeof v, "%d", i);
		eng_txn *t = tc_put_txn(N.e, "a", v, ENG_CMP_NONE, 0);
		struct eng_commit_res res;
		TC_OK(eng_txn_commit(t, &res));
		cr_assert_eq(res.rev, 2 + i);
		eng_txn_free(t);
	}
	eng_set_parker(NULL);
	cr_assert_eq(led_groups(N.e), led0 + 20, "each lone commit leads");
	cr_assert_eq(tp.parks, 0);
	cr_assert_eq(tp_wakes(&tp), 0);
	tp_destroy(&tp);
	tc_check(N.e);
	tc_done(&N);
}

/* An on_commit hook that holds the first group's commit until let go. */
struct hold {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool holding, inside;
};

static void hold_on_commit(void *ud, uint64_t group)
{
	(void)group;
	struct hold *h = ud;
	pthread_mutex_lock(&h->mu);
	h->inside = true;
	pthread_cond_broadcast(&h->cv);
	while (h->holding)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

struct committer {
	eng *e;
	const char *key;
	struct tparker *tp; /* NULL: none */
	lp_err rc;
	struct eng_commit_res res;
};

static void *committer_main(void *arg)
{
	struct committer *c = arg;
	if (c->tp)
		eng_set_parker(&c->tp->pk);
	eng_txn *t = tc_put_txn(c->e, c->key, "v", ENG_CMP_NONE, 0);
	c->rc = eng_txn_commit(t, &c->res);
	eng_txn_free(t);
	eng_set_parker(NULL);
	return NULL;
}

/* On a nosync store, a parked commit that comes while a group is being
   committed parks (its HTTP thread serves others) and gets one wake; the
   writer thread commits it, not its own thread. */
Test(eng_parker, nosync_commit_parks_while_a_group_commits)
{
	struct hold h = {.holding = true};
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	struct eng_opts o = {
	    .nosync = 1, .on_commit = hold_on_commit, .hook_ud = &h};
	struct tc_store N;
	tc_open(&N, "parker-nosync-busy", &o);
	uint64_t led0 = led_groups(N.e);
	/* a leads (no parker) and is held inside its commit */
	struct committer a = {.e = N.e, .key = "a"};
	pthread_t ta, tb;
	cr_assert_eq(pthread_create(&ta, NULL, committer_main, &a), 0);
	pthread_mutex_lock(&h.mu);
	while (!h.inside)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	/* b, parked, finds that commit under way: it parks */
	struct tparker tp;
	tp_init(&tp);
	struct committer b = {.e = N.e, .key = "b", .tp = &tp};
	cr_assert_eq(pthread_create(&tb, NULL, committer_main, &b), 0);
	pthread_mutex_lock(&tp.mu);
	while (tp.parks == 0)
		pthread_cond_wait(&tp.cv, &tp.mu);
	pthread_mutex_unlock(&tp.mu);
	pthread_mutex_lock(&h.mu);
	h.holding = false;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	TC_OK(a.rc);
	TC_OK(b.rc);
	cr_assert_eq(a.res.rev, 2);
	cr_assert_eq(b.res.rev, 3);
	cr_assert_eq(tp_wakes(&tp), 1, "one wake for the parked commit");
	cr_assert_eq(led_groups(N.e), led0 + 1, "only a led");
	tp_destroy(&tp);
	tc_check(N.e);
	tc_done(&N);
	pthread_mutex_destroy(&h.mu);
	pthread_cond_destroy(&h.cv);
}
