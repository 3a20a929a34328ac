/*
 * test_chain.c -- eng_txn_commit_chain: several transactions, each with its
 * own revision, committed back to back under one LMDB commit (one fsync in
 * sync mode).
 *
 * Invariants checked
 *  1. The txns of a chain get consecutive revisions in chain order (a txn
 *     that changes nothing takes none), share one commit group, and are all
 *     durable when the call returns (they read back after reopen).
 *  2. Each txn's compares see the writes of the txns before it in the chain.
 *  3. Once a txn fails, the later ones are skipped with LP_E_AGAIN and write
 *     nothing; the earlier ones stay committed -- also at the maximum size,
 *     where the group is retried one txn at a time. The call returns the
 *     first failure; res[i].rc and res[i].failed_op are per txn.
 *  4. Watchers see each txn's change at its own revision, in order.
 *  5. Under concurrent chains and single commits, no other txn commits
 *     between the members of a chain.
 *  6. Bad arguments are refused with LP_E_INVAL before anything is queued.
 *  7. ENG_CMP_MOD_PREV holds exactly when the key's mod_rev is the revision
 *     the chain's previous txn committed at (also at the maximum size,
 *     where each txn of the group commits alone), and is refused outside a
 *     chain's later txns.
 */
#include <stdatomic.h>

#include "common.h"

static struct tc_store S;

static void setup(void)
{
	tc_open(&S, "chain", NULL);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_chain, .init = setup, .fini = teardown);

/* A new txn with one delete of string k. */
static eng_txn *del_txn(eng *e, const char *k)
{
	eng_txn *t = NULL;
	TC_OK(eng_txn_new(e, &t));
	TC_OK(eng_txn_del(t, k, strlen(k), NULL));
	return t;
}

static void free_all(eng_txn **ts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		eng_txn_free(ts[i]);
}

struct groups {
	_Atomic uint64_t n;
};

static void count_group(void *ud, uint64_t group)
{
	(void)group;
	struct groups *g = ud;
	atomic_fetch_add(&g->n, 1);
}

/* A create and then its status: two revisions, one group, durable. */
Test(eng_chain, create_then_status_one_group_two_revisions)
{
	tc_done(&S);
	static struct groups g;
	atomic_store(&g.n, 0);
	struct eng_opts o = {
	    .nosync = 0, .on_commit = count_group, .hook_ud = &g};
	tc_open(&S, "chain-sync", &o);
	tc_puts(S.e, "/other", "x"); /* rev 2, group 1 */
	cr_assert_eq(atomic_load(&g.n), 1);

	eng_txn *ts[2] = {
	    tc_put_txn(S.e, "/crd", "spec", ENG_CMP_ABSENT, 0),
	    tc_put_txn(S.e, "/crd", "spec+status", ENG_CMP_PRESENT, 0)};
	struct eng_commit_res res[2];
	memset(res, 0xff, sizeof res);
	TC_OK(eng_txn_commit_chain(ts, 2, res));
	cr_assert_eq(atomic_load(&g.n), 2, "one more group for the chain");
	cr_assert_eq(res[0].rev, 3);
	cr_assert_eq(res[1].rev, 4);
	cr_assert_eq(res[0].group, res[1].group);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(res[i].rc, LP_OK);
		cr_assert_eq(res[i].failed_op, -1);
	}
	/* Per-txn results: the second saw the first as its previous record. */
	struct eng_record prev, cur;
	cr_assert_eq(eng_txn_result(ts[0], 0, &prev, &cur), 0);
	cr_assert_eq(cur.mod_rev, 3);
	cr_assert_eq(eng_txn_result(ts[1], 0, &prev, &cur), 1);
	cr_assert_eq(prev.mod_rev, 3);
	cr_assert_eq(cur.mod_rev, 4);
	cr_assert_eq(cur.version, 2);
	free_all(ts, 2);

	/* Both durable and both revisions readable after reopen. */
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), 4);
	tc_expect(S.e, "/crd", 3, "spec", 3, 3, 1);
	tc_expect(S.e, "/crd", 0, "spec+status", 3, 4, 2);
}

/* Compares per txn: the second txn's ABSENT sees the first's create. */
Test(eng_chain, later_compare_sees_earlier_txn)
{
	eng_txn *ts[3] = {tc_put_txn(S.e, "/a", "1", ENG_CMP_ABSENT, 0),
			  tc_put_txn(S.e, "/a", "2", ENG_CMP_ABSENT, 0),
			  tc_put_txn(S.e, "/b", "3", ENG_CMP_NONE, 0)};
	struct eng_commit_res res[3];
	TC_RC(eng_txn_commit_chain(ts, 3, res), LP_E_EXISTS);
	cr_assert_eq(res[0].rc, LP_OK);
	cr_assert_eq(res[0].rev, 2);
	cr_assert_eq(res[1].rc, LP_E_EXISTS);
	cr_assert_eq(res[1].failed_op, 0);
	/* The failed txn's current record is the first txn's write. */
	struct eng_record prev;
	cr_assert_eq(eng_txn_result(ts[1], 0, &prev, NULL), 1);
	cr_assert_eq(prev.mod_rev, 2);
	cr_assert_eq(res[2].rc, LP_E_AGAIN, "skipped after a failure");
	cr_assert_eq(res[2].failed_op, -1);
	free_all(ts, 3);
	cr_assert_eq(eng_rev(S.e), 2);
	tc_expect(S.e, "/a", 0, "1", 2, 2, 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/b", 2, 0, &r), LP_E_NOTFOUND);
}

/* A failing first txn: nothing is written, no revision taken. */
Test(eng_chain, first_failure_skips_the_rest)
{
	tc_puts(S.e, "/a", "0"); /* rev 2 */
	eng_txn *ts[3] = {tc_put_txn(S.e, "/a", "1", ENG_CMP_MOD, 7),
			  tc_put_txn(S.e, "/b", "2", ENG_CMP_NONE, 0),
			  del_txn(S.e, "/a")};
	struct eng_commit_res res[3];
	TC_RC(eng_txn_commit_chain(ts, 3, res), LP_E_CONFLICT);
	cr_assert_eq(res[0].rc, LP_E_CONFLICT);
	cr_assert_eq(res[0].failed_op, 0);
	cr_assert_eq(res[1].rc, LP_E_AGAIN);
	cr_assert_eq(res[2].rc, LP_E_AGAIN);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(res[i].rev, 2);
	free_all(ts, 3);
	cr_assert_eq(eng_rev(S.e), 2);
	tc_expect(S.e, "/a", 0, "0", 2, 2, 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/b", 2, 0, &r), LP_E_NOTFOUND);
	/* A chain of one behaves as eng_txn_commit. */
	eng_txn *one = tc_put_txn(S.e, "/a", "1", ENG_CMP_MOD, 2);
	TC_OK(eng_txn_commit_chain(&one, 1, NULL));
	eng_txn_free(one);
	tc_expect(S.e, "/a", 0, "1", 2, 3, 2);
}

/* A txn that changes nothing takes no revision; the next one is still the
   next revision, and watchers see each change at its own revision. */
Test(eng_chain, no_op_member_and_watch_order)
{
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w = NULL;
	TC_OK(eng_watch_open(S.e, "/", 1, 1, tc_ready, &wt, &w));
	eng_txn *ts[3] = {tc_put_txn(S.e, "/x", "1", ENG_CMP_NONE, 0),
			  del_txn(S.e, "/absent"),
			  tc_put_txn(S.e, "/y", "2", ENG_CMP_NONE, 0)};
	struct eng_commit_res res[3];
	TC_OK(eng_txn_commit_chain(ts, 3, res));
	cr_assert_eq(res[0].rev, 2);
	cr_assert_eq(res[1].rev, 2, "a no-op takes no revision");
	cr_assert_eq(res[2].rev, 3);
	free_all(ts, 3);
	const char *keys[2] = {"/x", "/y"};
	for (int i = 0; i < 2; i++) {
		eng_event *ev = NULL;
		TC_OK(tc_next_wait(w, &wt, &ev));
		cr_assert_eq(ev->type, ENG_EV_PUT);
		cr_assert_eq(ev->rev, 2 + i);
		cr_assert_eq(ev->rec.key_len, 2);
		cr_assert(memcmp(ev->rec.key, keys[i], 2) == 0);
		eng_event_unref(ev);
	}
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

/* At the maximum size the group is retried one txn at a time: what fits
   commits, the txn that does not fails LP_E_FULL, and the rest of its
   chain is skipped. */
Test(eng_chain, full_store_commits_what_fits_and_skips_the_rest)
{
	tc_done(&S);
	struct eng_opts o = {
	    .nosync = 1, .initial_map = 1u << 20, .max_size = 4u << 20};
	tc_open(&S, "chain-full", &o);
	size_t huge_len = 8u << 20;
	uint8_t *huge = calloc(1, huge_len);
	cr_assert_not_null(huge);
	eng_txn *ts[3] = {tc_put_txn(S.e, "/s", "small", ENG_CMP_NONE, 0), NULL,
			  tc_put_txn(S.e, "/t", "after", ENG_CMP_NONE, 0)};
	TC_OK(eng_txn_new(S.e, &ts[1]));
	TC_OK(
	    eng_txn_put(ts[1], "/huge", 5, huge, huge_len, ENG_NO_SLOT, NULL));
	free(huge);
	struct eng_commit_res res[3];
	TC_RC(eng_txn_commit_chain(ts, 3, res), LP_E_FULL);
	cr_assert_eq(res[0].rc, LP_OK);
	cr_assert_eq(res[0].rev, 2);
	cr_assert_eq(res[1].rc, LP_E_FULL);
	cr_assert_eq(res[2].rc, LP_E_AGAIN);
	free_all(ts, 3);
	cr_assert_eq(eng_rev(S.e), 2);
	tc_expect(S.e, "/s", 0, "small", 2, 2, 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/t", 2, 0, &r), LP_E_NOTFOUND);
	TC_RC(tc_get(S.e, "/huge", 5, 0, &r), LP_E_NOTFOUND);
}

Test(eng_chain, bad_arguments_are_refused)
{
	eng_txn *a = tc_put_txn(S.e, "/a", "1", ENG_CMP_NONE, 0);
	eng_txn *b = tc_put_txn(S.e, "/b", "1", ENG_CMP_NONE, 0);
	eng_txn *dup[2] = {a, a};
	TC_RC(eng_txn_commit_chain(dup, 2, NULL), LP_E_INVAL);
	TC_RC(eng_txn_commit_chain(dup, 0, NULL), LP_E_INVAL);
	TC_RC(eng_txn_commit_chain(NULL, 1, NULL), LP_E_INVAL);
	eng_txn *many[ENG_CHAIN_MAX + 1];
	for (int i = 0; i <= ENG_CHAIN_MAX; i++)
		many[i] = i % 2 ? a : b;
	TC_RC(eng_txn_commit_chain(many, ENG_CHAIN_MAX + 1, NULL), LP_E_INVAL);
	eng_txn *with_null[2] = {a, NULL};
	TC_RC(eng_txn_commit_chain(with_null, 2, NULL), LP_E_INVAL);
	cr_assert_eq(eng_rev(S.e), 1, "nothing was queued");
	TC_OK(eng_txn_commit(a, NULL));
	/* a is committed: a chain naming it again is refused, b untouched. */
	eng_txn *again[2] = {b, a};
	TC_RC(eng_txn_commit_chain(again, 2, NULL), LP_E_INVAL);
	TC_OK(eng_txn_commit(b, NULL));
	cr_assert_eq(eng_rev(S.e), 3);
	/* Txns of another store. */
	struct tc_store o;
	tc_open(&o, "chain-other", NULL);
	eng_txn *c = tc_put_txn(S.e, "/c", "1", ENG_CMP_NONE, 0);
	eng_txn *d = tc_put_txn(o.e, "/d", "1", ENG_CMP_NONE, 0);
	eng_txn *mixed[2] = {c, d};
	TC_RC(eng_txn_commit_chain(mixed, 2, NULL), LP_E_INVAL);
	eng_txn_free(c);
	eng_txn_free(d);
	tc_done(&o);
	eng_txn_free(a);
	eng_txn_free(b);
}

/* A create and then its status, the second conditioned on the first's
   revision without knowing it in advance. */
Test(eng_chain, mod_prev_sees_the_previous_txns_revision)
{
	tc_puts(S.e, "/other", "x"); /* rev 2 */
	eng_txn *ts[2] = {
	    tc_put_txn(S.e, "/crd", "spec", ENG_CMP_ABSENT, 0),
	    tc_put_txn(S.e, "/crd", "spec+status", ENG_CMP_MOD_PREV, 0)};
	struct eng_commit_res res[3];
	TC_OK(eng_txn_commit_chain(ts, 2, res));
	cr_assert_eq(res[0].rev, 3);
	cr_assert_eq(res[1].rev, 4);
	free_all(ts, 2);
	tc_expect(S.e, "/crd", 0, "spec+status", 3, 4, 2);

	/* The previous txn wrote another key: /crd's mod_rev (4) is not
	   that txn's revision (5), so the compare fails. */
	eng_txn *ts2[2] = {
	    tc_put_txn(S.e, "/other", "y", ENG_CMP_NONE, 0),
	    tc_put_txn(S.e, "/crd", "lost", ENG_CMP_MOD_PREV, 0)};
	TC_RC(eng_txn_commit_chain(ts2, 2, res), LP_E_CONFLICT);
	cr_assert_eq(res[0].rc, LP_OK);
	cr_assert_eq(res[0].rev, 5);
	cr_assert_eq(res[1].rc, LP_E_CONFLICT);
	cr_assert_eq(res[1].failed_op, 0);
	free_all(ts2, 2);
	tc_expect(S.e, "/crd", 0, "spec+status", 3, 4, 2);

	/* An absent key fails NOTFOUND; mod_rev in the compare is ignored. */
	eng_txn *ts3[2] = {tc_put_txn(S.e, "/a", "1", ENG_CMP_NONE, 0),
			   tc_put_txn(S.e, "/nope", "1", ENG_CMP_MOD_PREV, 6)};
	TC_RC(eng_txn_commit_chain(ts3, 2, res), LP_E_NOTFOUND);
	cr_assert_eq(res[1].rc, LP_E_NOTFOUND);
	free_all(ts3, 2);
	cr_assert_eq(eng_rev(S.e), 6);

	/* A chain of three: each compare reads its own predecessor. */
	eng_txn *ts4[3] = {tc_put_txn(S.e, "/k", "1", ENG_CMP_ABSENT, 0),
			   tc_put_txn(S.e, "/k", "2", ENG_CMP_MOD_PREV, 0),
			   tc_put_txn(S.e, "/k", "3", ENG_CMP_MOD_PREV, 0)};
	TC_OK(eng_txn_commit_chain(ts4, 3, res));
	cr_assert_eq(res[2].rev, 9);
	free_all(ts4, 3);
	tc_expect(S.e, "/k", 0, "3", 7, 9, 3);
}

/* Outside a chain's later txns there is no previous revision: refused
   before anything is queued. */
Test(eng_chain, mod_prev_outside_a_chain_is_refused)
{
	eng_txn *t = tc_put_txn(S.e, "/a", "1", ENG_CMP_MOD_PREV, 0);
	TC_RC(eng_txn_commit(t, NULL), LP_E_INVAL);
	TC_RC(eng_txn_commit_chain(&t, 1, NULL), LP_E_INVAL);
	eng_txn *b = tc_put_txn(S.e, "/b", "1", ENG_CMP_NONE, 0);
	eng_txn *first[2] = {t, b};
	TC_RC(eng_txn_commit_chain(first, 2, NULL), LP_E_INVAL);
	cr_assert_eq(eng_rev(S.e), 1, "nothing was queued");
	eng_txn_free(t);
	eng_txn_free(b);
	/* A kind past the last one is refused when the op is added. */
	eng_txn *c = NULL;
	TC_OK(eng_txn_new(S.e, &c));
	struct eng_cmp bad = {.kind =
				  (enum eng_cmp_kind)(ENG_CMP_MOD_PREV + 1)};
	TC_RC(eng_txn_put(c, "/c", 2, "v", 1, ENG_NO_SLOT, &bad), LP_E_INVAL);
	eng_txn_free(c);
}

/* At the maximum size each txn commits in a group of its own; the compare
   still reads the predecessor's revision. */
Test(eng_chain, mod_prev_at_the_maximum_size)
{
	tc_done(&S);
	struct eng_opts o = {
	    .nosync = 1, .initial_map = 1u << 20, .max_size = 4u << 20};
	tc_open(&S, "chain-full-prev", &o);
	size_t huge_len = 8u << 20;
	uint8_t *huge = calloc(1, huge_len);
	cr_assert_not_null(huge);
	/* A huge txn queued in the same chain forces the one-at-a-time
	   replay; the pair before it must still commit. */
	eng_txn *ts[3] = {
	    tc_put_txn(S.e, "/crd", "spec", ENG_CMP_ABSENT, 0),
	    tc_put_txn(S.e, "/crd", "status", ENG_CMP_MOD_PREV, 0), NULL};
	TC_OK(eng_txn_new(S.e, &ts[2]));
	TC_OK(
	    eng_txn_put(ts[2], "/huge", 5, huge, huge_len, ENG_NO_SLOT, NULL));
	free(huge);
	struct eng_commit_res res[3];
	TC_RC(eng_txn_commit_chain(ts, 3, res), LP_E_FULL);
	cr_assert_eq(res[0].rc, LP_OK);
	cr_assert_eq(res[1].rc, LP_OK);
	cr_assert_eq(res[1].rev, 3);
	cr_assert_neq(res[0].group, res[1].group, "replayed one at a time");
	cr_assert_eq(res[2].rc, LP_E_FULL);
	free_all(ts, 3);
	tc_expect(S.e, "/crd", 0, "status", 2, 3, 2);
}

#define C_THREADS 4
#define C_ROUNDS 150

struct c_arg {
	eng *e;
	int id;
	char err[200];
};

/* Even threads commit chains of three puts, odd threads single puts; a
   chain's revisions must be consecutive whatever the others do. */
static void *c_thread(void *p)
{
	struct c_arg *a = p;
	for (int i = 0; i < C_ROUNDS; i++) {
		eng_txn *ts[3] = {0};
		size_t n = a->id % 2 ? 1 : 3;
		lp_err rc = LP_OK;
		for (size_t j = 0; j < n && !rc; j++) {
			char k[48];
			int kl = snprintf(k, sizeof k, "/c/%d/%zu", a->id, j);
			rc = eng_txn_new(a->e, &ts[j]);
			if (!rc)
				rc = eng_txn_put(ts[j], k, (size_t)kl, "v", 1,
						 ENG_NO_SLOT, NULL);
		}
		struct eng_commit_res res[3];
		if (!rc)
			rc = eng_txn_commit_chain(ts, n, res);
		for (size_t j = 0; j < n; j++)
			eng_txn_free(ts[j]);
		if (rc) {
			snprintf(a->err, sizeof a->err, "round %d: %s", i,
				 lp_errname(rc));
			return NULL;
		}
		for (size_t j = 1; j < n; j++) {
			if (res[j].rev != res[0].rev + (int64_t)j ||
			    res[j].group != res[0].group) {
				snprintf(a->err, sizeof a->err,
					 "round %d: txn %zu at rev %" PRId64
					 " group %" PRIu64 ", first at %" PRId64
					 " group %" PRIu64,
					 i, j, res[j].rev, res[j].group,
					 res[0].rev, res[0].group);
				return NULL;
			}
		}
	}
	return NULL;
}

Test(eng_chain, concurrent_chains_stay_contiguous)
{
	static struct c_arg a[C_THREADS];
	pthread_t th[C_THREADS];
	for (int i = 0; i < C_THREADS; i++) {
		memset(&a[i], 0, sizeof a[i]);
		a[i].e = S.e;
		a[i].id = i;
		cr_assert_eq(pthread_create(&th[i], NULL, c_thread, &a[i]), 0);
	}
	for (int i = 0; i < C_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < C_THREADS; i++)
		cr_assert_eq(a[i].err[0], 0, "thread %d: %s", i, a[i].err);
	int64_t want =
	    1 + (C_THREADS / 2) * C_ROUNDS * 3 + (C_THREADS / 2) * C_ROUNDS;
	cr_assert_eq(eng_rev(S.e), want);
}
