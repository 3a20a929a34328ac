/*
 * test_txn.c -- write transactions with compares: success and failure codes,
 * the failed op's index and current record, all-or-nothing, and commits from
 * many threads at once (group commit must check each compare against the
 * writes of the txns grouped before it).
 *
 * Invariants checked
 *  1. ABSENT fails LP_E_EXISTS, PRESENT fails LP_E_NOTFOUND, MOD fails
 *     LP_E_CONFLICT (wrong mod_rev) or LP_E_NOTFOUND (no key); failed_op is
 *     the op's index and eng_txn_result(failed_op) gives the current record.
 *  2. A txn with a failing compare writes nothing and consumes no revision.
 *  3. Concurrent compare-and-swap increments never lose an update: the final
 *     counter equals the number of successful commits, whose revisions are
 *     distinct.
 *  4. Concurrent committed txns get exactly the revisions 2..N+1.
 */
#include "common.h"

static struct tc_store S;

static void setup(void)
{
	tc_open(&S, "txn", NULL);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_txn, .init = setup, .fini = teardown);

static lp_err put_cmp(const char *k, const char *v, enum eng_cmp_kind kind,
		      int64_t mod, struct eng_commit_res *res)
{
	struct eng_cmp c = {.kind = kind, .mod_rev = mod};
	return tc_put(S.e, k, strlen(k), v, strlen(v), ENG_NO_SLOT, &c, res);
}

static lp_err del_cmp(const char *k, enum eng_cmp_kind kind, int64_t mod,
		      struct eng_commit_res *res)
{
	struct eng_cmp c = {.kind = kind, .mod_rev = mod};
	return tc_del(S.e, k, strlen(k), &c, res);
}

Test(eng_txn, absent)
{
	struct eng_commit_res res = {0};
	TC_OK(put_cmp("/a", "1", ENG_CMP_ABSENT, 0, &res));
	cr_assert_eq(res.rev, 2);
	cr_assert_eq(res.failed_op, -1);
	TC_RC(put_cmp("/a", "2", ENG_CMP_ABSENT, 0, &res), LP_E_EXISTS);
	cr_assert_eq(res.failed_op, 0);
	cr_assert_eq(eng_rev(S.e), 2);
	tc_expect(S.e, "/a", 0, "1", 2, 2, 1);
	/* After a delete the key is absent again. */
	tc_dels(S.e, "/a");
	TC_OK(put_cmp("/a", "3", ENG_CMP_ABSENT, 0, &res));
	cr_assert_eq(res.rev, 4);
	tc_expect(S.e, "/a", 0, "3", 4, 4, 1);
	/* A delete guarded by ABSENT fails on an existing key. */
	TC_RC(del_cmp("/a", ENG_CMP_ABSENT, 0, &res), LP_E_EXISTS);
	cr_assert_eq(eng_rev(S.e), 4);
}

Test(eng_txn, present)
{
	struct eng_commit_res res = {0};
	TC_RC(put_cmp("/a", "1", ENG_CMP_PRESENT, 0, &res), LP_E_NOTFOUND);
	cr_assert_eq(res.failed_op, 0);
	cr_assert_eq(eng_rev(S.e), 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/a", 2, 0, &r), LP_E_NOTFOUND);
	tc_puts(S.e, "/a", "1");
	TC_OK(put_cmp("/a", "2", ENG_CMP_PRESENT, 0, &res));
	cr_assert_eq(res.rev, 3);
	TC_OK(del_cmp("/a", ENG_CMP_PRESENT, 0, &res));
	cr_assert_eq(res.rev, 4);
	/* A guarded delete of an absent key is a failed compare, not a
	   no-op. */
	TC_RC(del_cmp("/a", ENG_CMP_PRESENT, 0, &res), LP_E_NOTFOUND);
	cr_assert_eq(res.failed_op, 0);
	cr_assert_eq(eng_rev(S.e), 4);
}

Test(eng_txn, mod_rev)
{
	struct eng_commit_res res = {0};
	TC_RC(put_cmp("/a", "1", ENG_CMP_MOD, 2, &res), LP_E_NOTFOUND);
	tc_puts(S.e, "/a", "1");   /* 2 */
	tc_puts(S.e, "/b", "pad"); /* 3 */
	TC_RC(put_cmp("/a", "2", ENG_CMP_MOD, 3, &res), LP_E_CONFLICT);
	cr_assert_eq(res.failed_op, 0);
	TC_RC(put_cmp("/a", "2", ENG_CMP_MOD, 1, &res), LP_E_CONFLICT);
	TC_OK(put_cmp("/a", "2", ENG_CMP_MOD, 2, &res));
	cr_assert_eq(res.rev, 4);
	/* The old mod_rev is stale now. */
	TC_RC(put_cmp("/a", "3", ENG_CMP_MOD, 2, &res), LP_E_CONFLICT);
	TC_RC(del_cmp("/a", ENG_CMP_MOD, 2, &res), LP_E_CONFLICT);
	TC_OK(del_cmp("/a", ENG_CMP_MOD, 4, &res));
	cr_assert_eq(res.rev, 5);
	TC_RC(del_cmp("/a", ENG_CMP_MOD, 4, &res), LP_E_NOTFOUND);
	cr_assert_eq(eng_rev(S.e), 5);
}

Test(eng_txn, failed_compare_gives_current_record)
{
	tc_puts(S.e, "/a", "one");
	tc_puts(S.e, "/a", "two");
	eng_txn *t;
	struct eng_cmp c = {.kind = ENG_CMP_MOD, .mod_rev = 2};
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, "three", 5, ENG_NO_SLOT, &c));
	struct eng_commit_res res = {0};
	TC_RC(eng_txn_commit(t, &res), LP_E_CONFLICT);
	cr_assert_eq(res.failed_op, 0);
	struct eng_record prev = {0};
	cr_assert_eq(eng_txn_result(t, 0, &prev, NULL), 1);
	cr_assert_eq(prev.mod_rev, 3);
	cr_assert_eq(prev.create_rev, 2);
	cr_assert_eq(prev.version, 2);
	cr_assert_eq(prev.value_len, 3);
	cr_assert(memcmp(prev.value, "two", 3) == 0);
	cr_assert_eq(prev.key_len, 2);
	cr_assert(memcmp(prev.key, "/a", 2) == 0);
	eng_txn_free(t);

	/* A failed PRESENT: there is no current record. */
	c.kind = ENG_CMP_PRESENT;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/zz", 3, "x", 1, ENG_NO_SLOT, &c));
	TC_RC(eng_txn_commit(t, &res), LP_E_NOTFOUND);
	cr_assert_eq(eng_txn_result(t, 0, &prev, NULL), 0);
	eng_txn_free(t);
}

Test(eng_txn, all_or_nothing)
{
	tc_puts(S.e, "/a", "a1"); /* 2 */
	tc_puts(S.e, "/b", "b1"); /* 3 */
	struct eng_info before;
	TC_OK(eng_info(S.e, &before));

	/* Op 2 of 4 fails: nothing of ops 0, 1, 3 is written. */
	eng_txn *t;
	struct eng_cmp ok = {.kind = ENG_CMP_MOD, .mod_rev = 2};
	struct eng_cmp bad = {.kind = ENG_CMP_ABSENT};
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, "a2", 2, ENG_NO_SLOT, &ok));
	TC_OK(eng_txn_put(t, "/new", 4, "n", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/b", 2, "b2", 2, ENG_NO_SLOT, &bad));
	TC_OK(eng_txn_del(t, "/a2", 3, NULL));
	struct eng_commit_res res = {0};
	TC_RC(eng_txn_commit(t, &res), LP_E_EXISTS);
	cr_assert_eq(res.failed_op, 2);
	struct eng_record prev = {0};
	cr_assert_eq(eng_txn_result(t, 2, &prev, NULL), 1);
	cr_assert_eq(prev.mod_rev, 3);
	eng_txn_free(t);

	cr_assert_eq(eng_rev(S.e), 3);
	struct eng_info after;
	TC_OK(eng_info(S.e, &after));
	cr_assert_str_eq(before.hash, after.hash);
	cr_assert_eq(after.n_log, before.n_log);
	tc_expect(S.e, "/a", 0, "a1", 2, 2, 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/new", 4, 0, &r), LP_E_NOTFOUND);
	/* The next successful commit gets the next revision. */
	cr_assert_eq(tc_puts(S.e, "/c", "c"), 4);

	/* The same txn with passing compares commits all ops at once. */
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, "a2", 2, ENG_NO_SLOT, &ok));
	TC_OK(eng_txn_put(t, "/new", 4, "n", 1, ENG_NO_SLOT, &bad));
	TC_OK(eng_txn_del(t, "/b", 2, NULL));
	TC_OK(eng_txn_commit(t, &res));
	cr_assert_eq(res.rev, 5);
	eng_txn_free(t);
	tc_expect(S.e, "/a", 0, "a2", 2, 5, 2);
	tc_expect(S.e, "/new", 0, "n", 5, 5, 1);
	TC_RC(tc_get(S.e, "/b", 2, 0, &r), LP_E_NOTFOUND);
}

/* ------------------------------------------------------------------ threads */

#define CAS_THREADS 4
#define CAS_INCS 150

struct cas_arg {
	eng *e;
	int ok; /* successful increments */
	int conflicts;
	int64_t revs[CAS_INCS];
	char err[160];
};

/* Read the counter, write counter+1 guarded by its mod_rev; retry on
   LP_E_CONFLICT. Never holds a snapshot across the commit. */
static void *cas_thread(void *p)
{
	struct cas_arg *a = p;
	while (a->ok < CAS_INCS) {
		eng_rd *r;
		struct eng_record rec = {0};
		lp_err rc = eng_rd_begin(a->e, &r);
		if (rc) {
			snprintf(a->err, sizeof a->err, "rd_begin %s",
				 lp_errname(rc));
			return NULL;
		}
		rc = eng_get(r, "/ctr", 4, 0, &rec);
		if (rc) {
			eng_rd_end(r);
			snprintf(a->err, sizeof a->err, "get %s",
				 lp_errname(rc));
			return NULL;
		}
		char buf[32];
		size_t n = rec.value_len < sizeof buf - 1 ? rec.value_len
							  : sizeof buf - 1;
		memcpy(buf, rec.value, n);
		buf[n] = 0;
		int64_t mod = rec.mod_rev;
		eng_rd_end(r);
		long v = strtol(buf, NULL, 10);
		int len = snprintf(buf, sizeof buf, "%ld", v + 1);
		struct eng_cmp c = {.kind = ENG_CMP_MOD, .mod_rev = mod};
		struct eng_commit_res res = {0};
		rc = tc_put(a->e, "/ctr", 4, buf, (size_t)len, ENG_NO_SLOT, &c,
			    &res);
		if (rc == LP_E_CONFLICT) {
			a->conflicts++;
			continue;
		}
		if (rc) {
			snprintf(a->err, sizeof a->err, "put %s",
				 lp_errname(rc));
			return NULL;
		}
		a->revs[a->ok++] = res.rev;
	}
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

Test(eng_txn, concurrent_compare_and_swap_loses_nothing)
{
	tc_puts(S.e, "/ctr", "0");
	static struct cas_arg a[CAS_THREADS];
	pthread_t th[CAS_THREADS];
	for (int i = 0; i < CAS_THREADS; i++) {
		memset(&a[i], 0, sizeof a[i]);
		a[i].e = S.e;
		cr_assert_eq(pthread_create(&th[i], NULL, cas_thread, &a[i]),
			     0);
	}
	for (int i = 0; i < CAS_THREADS; i++)
		pthread_join(th[i], NULL);
	int64_t all[CAS_THREADS * CAS_INCS];
	size_t n = 0;
	for (int i = 0; i < CAS_THREADS; i++) {
		cr_assert_eq(a[i].err[0], 0, "thread %d: %s", i, a[i].err);
		memcpy(all + n, a[i].revs, CAS_INCS * sizeof *all);
		n += CAS_INCS;
	}
	char want[32];
	snprintf(want, sizeof want, "%d", CAS_THREADS * CAS_INCS);
	/* Every increment is its own revision: 3 .. 2 + N. */
	qsort(all, n, sizeof *all, cmp_i64);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(all[i], (int64_t)i + 3, "revision %zu is %" PRId64,
			     i, all[i]);
	tc_expect(S.e, "/ctr", 0, want, 2, 2 + (int64_t)n, 1 + (int64_t)n);
}

#define RACE_THREADS 4
#define RACE_KEYS 100

struct race_arg {
	eng *e;
	int id;
	int won[RACE_KEYS];
	int64_t rev[RACE_KEYS];
	char err[160];
};

/* Every thread tries to create every key with ABSENT: exactly one wins. */
static void *race_thread(void *p)
{
	struct race_arg *a = p;
	for (int k = 0; k < RACE_KEYS; k++) {
		char key[32], val[32];
		int kl = snprintf(key, sizeof key, "/race/%03d", k);
		int vl = snprintf(val, sizeof val, "t%d", a->id);
		struct eng_cmp c = {.kind = ENG_CMP_ABSENT};
		struct eng_commit_res res = {0};
		lp_err rc = tc_put(a->e, key, (size_t)kl, val, (size_t)vl,
				   ENG_NO_SLOT, &c, &res);
		if (rc == LP_OK) {
			a->won[k] = 1;
			a->rev[k] = res.rev;
		} else if (rc != LP_E_EXISTS) {
			snprintf(a->err, sizeof a->err, "put %s: %s", key,
				 lp_errname(rc));
			return NULL;
		}
	}
	return NULL;
}

Test(eng_txn, concurrent_creates_have_one_winner)
{
	static struct race_arg a[RACE_THREADS];
	pthread_t th[RACE_THREADS];
	for (int i = 0; i < RACE_THREADS; i++) {
		memset(&a[i], 0, sizeof a[i]);
		a[i].e = S.e;
		a[i].id = i;
		cr_assert_eq(pthread_create(&th[i], NULL, race_thread, &a[i]),
			     0);
	}
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < RACE_THREADS; i++)
		cr_assert_eq(a[i].err[0], 0, "thread %d: %s", i, a[i].err);
	int64_t revs[RACE_KEYS];
	for (int k = 0; k < RACE_KEYS; k++) {
		int winners = 0, who = -1;
		for (int i = 0; i < RACE_THREADS; i++) {
			if (a[i].won[k]) {
				winners++;
				who = i;
			}
		}
		cr_assert_eq(winners, 1, "key %d has %d winners", k, winners);
		revs[k] = a[who].rev[k];
		char key[32], val[32];
		snprintf(key, sizeof key, "/race/%03d", k);
		snprintf(val, sizeof val, "t%d", who);
		tc_expect(S.e, key, 0, val, revs[k], revs[k], 1);
	}
	qsort(revs, RACE_KEYS, sizeof *revs, cmp_i64);
	for (int k = 0; k < RACE_KEYS; k++)
		cr_assert_eq(revs[k], k + 2);
	cr_assert_eq(eng_rev(S.e), RACE_KEYS + 1);
}

#define MANY_THREADS 6
#define MANY_TXNS 200

struct many_arg {
	eng *e;
	int id;
	int64_t rev[MANY_TXNS];
	char err[160];
};

/* Multi-op txns from many threads: each gets its own revision, shared by
   its ops. */
static void *many_thread(void *p)
{
	struct many_arg *a = p;
	for (int i = 0; i < MANY_TXNS; i++) {
		eng_txn *t;
		lp_err rc = eng_txn_new(a->e, &t);
		if (rc) {
			snprintf(a->err, sizeof a->err, "new %s",
				 lp_errname(rc));
			return NULL;
		}
		for (int j = 0; j < 3 && rc == LP_OK; j++) {
			char key[48], val[48];
			int kl = snprintf(key, sizeof key, "/m/%d/%d/%d", a->id,
					  i % 10, j);
			int vl = snprintf(val, sizeof val, "%d.%d", a->id, i);
			rc = eng_txn_put(t, key, (size_t)kl, val, (size_t)vl,
					 ENG_NO_SLOT, NULL);
		}
		struct eng_commit_res res = {0};
		if (rc == LP_OK)
			rc = eng_txn_commit(t, &res);
		for (int j = 0; j < 3 && rc == LP_OK; j++) {
			struct eng_record cur = {0};
			eng_txn_result(t, j, NULL, &cur);
			if (cur.mod_rev != res.rev)
				rc = LP_E_CORRUPT;
		}
		eng_txn_free(t);
		if (rc) {
			snprintf(a->err, sizeof a->err, "txn %d: %s", i,
				 lp_errname(rc));
			return NULL;
		}
		a->rev[i] = res.rev;
	}
	return NULL;
}

Test(eng_txn, concurrent_txns_get_contiguous_revisions)
{
	static struct many_arg a[MANY_THREADS];
	pthread_t th[MANY_THREADS];
	for (int i = 0; i < MANY_THREADS; i++) {
		memset(&a[i], 0, sizeof a[i]);
		a[i].e = S.e;
		a[i].id = i;
		cr_assert_eq(pthread_create(&th[i], NULL, many_thread, &a[i]),
			     0);
	}
	for (int i = 0; i < MANY_THREADS; i++)
		pthread_join(th[i], NULL);
	static int64_t all[MANY_THREADS * MANY_TXNS];
	size_t n = 0;
	for (int i = 0; i < MANY_THREADS; i++) {
		cr_assert_eq(a[i].err[0], 0, "thread %d: %s", i, a[i].err);
		/* A thread's own txns are ordered. */
		for (int j = 1; j < MANY_TXNS; j++)
			cr_assert_gt(a[i].rev[j], a[i].rev[j - 1]);
		memcpy(all + n, a[i].rev, sizeof a[i].rev);
		n += MANY_TXNS;
	}
	qsort(all, n, sizeof *all, cmp_i64);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(all[i], (int64_t)i + 2);
	/* The last txn of each thread wrote its three keys at one revision. */
	for (int i = 0; i < MANY_THREADS; i++) {
		for (int j = 0; j < 3; j++) {
			char key[48], val[48];
			snprintf(key, sizeof key, "/m/%d/%d/%d", i,
				 (MANY_TXNS - 1) % 10, j);
			snprintf(val, sizeof val, "%d.%d", i, MANY_TXNS - 1);
			struct tc_rec r = {0};
			TC_OK(tc_get(S.e, key, strlen(key), 0, &r));
			cr_assert_eq(r.mod_rev, a[i].rev[MANY_TXNS - 1]);
			cr_assert_str_eq((char *)r.value, val);
			tc_rec_free(&r);
		}
	}
	struct eng_stats st;
	eng_stats(S.e, &st);
	cr_assert_eq(st.txns, n);
	cr_assert_leq(st.groups, n);
}
