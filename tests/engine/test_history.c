/*
 * test_history.c -- reads at older revisions (engine.h "Model" 5): every
 * key at every revision equals the history model, before and after restart;
 * reads ahead of the snapshot fail with LP_E_FUTURE.
 *
 * Invariants checked
 *  1. get(k, R) returns the version of k live at R with its create_rev,
 *     mod_rev and version then, or LP_E_NOTFOUND if k did not exist or was
 *     deleted at R.
 *  2. A snapshot reads at any R <= its revision; R above it is LP_E_FUTURE.
 *  3. History survives close and reopen.
 */
#include "common.h"

static struct tc_store S;
static struct tm_model M;

static void setup(void)
{
	tc_open(&S, "history", NULL);
	tm_init(&M);
}

static void teardown(void)
{
	tc_done(&S);
	tm_free(&M);
}

TestSuite(eng_history, .init = setup, .fini = teardown);

/* Random history: puts (some with a slot) and deletes over 12 keys, some
   in multi-op txns. */
static void make_history(uint64_t *st, int n_txns)
{
	for (int i = 0; i < n_txns; i++) {
		eng_txn *t;
		TC_OK(eng_txn_new(S.e, &t));
		int n_ops = 1 + (int)(ts_rand(st) % 3);
		int used[12] = {0};
		struct {
			int del;
			char k[16], v[32];
			uint32_t slot;
		} ops[3];
		int n = 0;
		for (int j = 0; j < n_ops; j++) {
			int ki = (int)(ts_rand(st) % 12);
			if (used[ki])
				continue;
			used[ki] = 1;
			snprintf(ops[n].k, sizeof ops[n].k, "/h/k%02d", ki);
			ops[n].del = ts_rand(st) % 4 == 0;
			int vl = snprintf(ops[n].v, sizeof ops[n].v,
					  "v%d.%d:", i, j);
			ops[n].slot =
			    ts_rand(st) % 2 ? (uint32_t)vl : ENG_NO_SLOT;
			if (ops[n].del)
				TC_OK(eng_txn_del(t, ops[n].k, strlen(ops[n].k),
						  NULL));
			else
				TC_OK(eng_txn_put(t, ops[n].k, strlen(ops[n].k),
						  ops[n].v, strlen(ops[n].v),
						  ops[n].slot, NULL));
			n++;
		}
		struct eng_commit_res res = {0};
		TC_OK(eng_txn_commit(t, &res));
		eng_txn_free(t);
		int changed = 0;
		int64_t nr = M.rev + 1;
		for (int j = 0; j < n; j++) {
			if (ops[j].del) {
				changed |=
				    tm_del(&M, ops[j].k, strlen(ops[j].k), nr);
			} else {
				tm_put(&M, ops[j].k, strlen(ops[j].k), ops[j].v,
				       strlen(ops[j].v), ops[j].slot, nr);
				changed = 1;
			}
		}
		cr_assert_eq(res.rev, M.rev,
			     "txn %d: rev %" PRId64 " want %" PRId64
			     " (changed %d)",
			     i, res.rev, M.rev, changed);
	}
}

static void check_all_revisions(void)
{
	eng_rd *r;
	TC_OK(eng_rd_begin(S.e, &r));
	int64_t now = eng_rd_rev(r);
	cr_assert_eq(now, M.rev);
	for (int64_t rev = 1; rev <= now; rev++) {
		for (int ki = 0; ki < 12; ki++) {
			char k[16];
			snprintf(k, sizeof k, "/h/k%02d", ki);
			const struct tm_ver *v = tm_get(&M, k, strlen(k), rev);
			struct eng_record rec = {0};
			lp_err rc = eng_get(r, k, strlen(k), rev, &rec);
			if (!v) {
				cr_assert_eq(rc, LP_E_NOTFOUND,
					     "%s at %" PRId64 ": %s", k, rev,
					     lp_errname(rc));
				continue;
			}
			cr_assert_eq(rc, LP_OK, "%s at %" PRId64 ": %s", k, rev,
				     lp_errname(rc));
			struct tc_rec c = {0};
			tc_rec_copy(&c, &rec);
			tm_assert_rec(&c, v, "get at rev");
			tc_rec_free(&c);
		}
	}
	struct eng_record rec = {0};
	TC_RC(eng_get(r, "/h/k00", 6, now + 1, &rec), LP_E_FUTURE);
	TC_RC(eng_get(r, "/h/none", 7, now + 1, &rec), LP_E_FUTURE);
	TC_RC(eng_get(r, "/h/k00", 6, INT64_MAX, &rec), LP_E_FUTURE);
	eng_rd_end(r);
}

Test(eng_history, every_key_at_every_revision)
{
	uint64_t seed = ts_seed("eng_history.every_key_at_every_revision", 11);
	uint64_t st = seed;
	make_history(&st, 300);
	check_all_revisions();
	tc_reopen(&S);
	check_all_revisions();
	make_history(&st, 50);
	check_all_revisions();
}

Test(eng_history, delete_and_recreate_many_times)
{
	for (int i = 0; i < 20; i++) {
		char v[16];
		snprintf(v, sizeof v, "gen%d", i);
		int64_t c = tc_puts(S.e, "/x", v);
		tm_put(&M, "/x", 2, v, strlen(v), ENG_NO_SLOT, c);
		int64_t u = tc_puts(S.e, "/x", "upd");
		tm_put(&M, "/x", 2, "upd", 3, ENG_NO_SLOT, u);
		int64_t d = tc_dels(S.e, "/x");
		tm_del(&M, "/x", 2, d);
	}
	for (int64_t rev = 1; rev <= M.rev; rev++) {
		const struct tm_ver *v = tm_get(&M, "/x", 2, rev);
		struct tc_rec r = {0};
		lp_err rc = tc_get(S.e, "/x", 2, rev, &r);
		if (!v) {
			TC_RC(rc, LP_E_NOTFOUND);
			continue;
		}
		TC_OK(rc);
		tm_assert_rec(&r, v, "recreated");
		/* Created at 2 + 3g, updated at 3 + 3g. */
		cr_assert_eq((r.create_rev - 2) % 3, 0);
		cr_assert_eq(r.version, r.mod_rev - r.create_rev + 1);
		tc_rec_free(&r);
	}
}

/* A snapshot taken before a write reads at its own revision; asking it
   for the newer revision is LP_E_FUTURE even though the store has it. */
struct wr {
	eng *e;
	lp_err rc;
};

static void *write_one(void *p)
{
	struct wr *w = p;
	w->rc = tc_put(w->e, "/y", 2, "y2", 2, ENG_NO_SLOT, NULL, NULL);
	return NULL;
}

Test(eng_history, snapshot_future_is_relative_to_the_snapshot)
{
	tc_puts(S.e, "/y", "y1");
	eng_rd *r;
	TC_OK(eng_rd_begin(S.e, &r));
	pthread_t th;
	struct wr w = {.e = S.e, .rc = LP_E_IO};
	cr_assert_eq(pthread_create(&th, NULL, write_one, &w), 0);
	pthread_join(th, NULL);
	TC_OK(w.rc);
	cr_assert_eq(eng_rev(S.e), 3);
	struct eng_record rec = {0};
	TC_RC(eng_get(r, "/y", 2, 3, &rec), LP_E_FUTURE);
	TC_OK(eng_get(r, "/y", 2, 2, &rec));
	cr_assert_eq(rec.mod_rev, 2);
	struct eng_range_req q = {.prefix = "/", .prefix_len = 1, .at_rev = 3};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	TC_RC(eng_range(r, &q, tc_collect, &l, &res), LP_E_FUTURE);
	eng_rd_end(r);
	tc_list_free(&l);
	tc_expect(S.e, "/y", 3, "y2", 2, 3, 2);
}
