/*
 * test_model.c -- randomized operations against the history model: puts
 * and deletes with and without compares, multi-op txns, compactions, gets
 * and ranges at random revisions with random bounds and limits, a watcher
 * that must see every change, and restarts.
 *
 * Invariants checked
 *  1. Every commit's outcome (code, failed_op, revision, txn results)
 *     equals what the model predicts.
 *  2. Every read equals the model at its revision, or fails LP_E_COMPACTED
 *     below the compacted revision and LP_E_FUTURE above the snapshot.
 *  3. A watcher opened at the start sees exactly the model's changes.
 *  4. eng_check passes throughout; the store reopens with the same content.
 * The seed is printed; LAPIS_SEED overrides it, LAPIS_MODEL_OPS the length.
 */
#include "common.h"

static struct tc_store S;
static struct tm_model M;

static void setup(void)
{
	tc_open(&S, "model", NULL);
	tm_init(&M);
}

static void teardown(void)
{
	tc_done(&S);
	tm_free(&M);
}

TestSuite(eng_model, .init = setup, .fini = teardown);

#define N_KEYS 64

static char *KEYS[N_KEYS];
static size_t KLEN[N_KEYS];

/* Short keys under a few overlapping prefixes and long keys (481..1024
   bytes) that share long prefixes. */
static void make_keys(uint64_t *st)
{
	static const char *tops[] = {"/m/a/", "/m/ab/", "/m/b/", "/m/", "/n/"};
	static const size_t longs[] = {481, 500, 511, 512, 650, 1024};
	for (int i = 0; i < N_KEYS; i++) {
		KEYS[i] = tc_xmalloc(ENG_KEY_MAX + 1);
		const char *top = tops[ts_rand(st) % 5];
		if (i % 4 == 3) {
			size_t n = longs[ts_rand(st) % 6];
			size_t tl = strlen(top);
			memcpy(KEYS[i], top, tl);
			for (size_t j = tl; j < n; j++)
				KEYS[i][j] =
				    (char)('a' +
					   (j % 7 == 6 ? ts_rand(st) % 3 : 0));
			KLEN[i] = n;
		} else {
			KLEN[i] = (size_t)snprintf(
			    KEYS[i], ENG_KEY_MAX + 1, "%s%llu", top,
			    (unsigned long long)(ts_rand(st) % 40));
		}
		/* Duplicates are fine: they just make some keys hotter. */
	}
}

static void free_keys(void)
{
	for (int i = 0; i < N_KEYS; i++)
		free(KEYS[i]);
}

struct mop {
	int del;
	int k;
	char val[48];
	size_t val_len;
	uint32_t slot;
	struct eng_cmp cmp;
};

/* The failure code of op o's compare against the model now (LP_OK: passes). */
static lp_err cmp_outcome(const struct mop *o)
{
	const struct tm_ver *v = tm_get(&M, KEYS[o->k], KLEN[o->k], M.rev);
	switch (o->cmp.kind) {
	case ENG_CMP_NONE:
		return LP_OK;
	case ENG_CMP_ABSENT:
		return v ? LP_E_EXISTS : LP_OK;
	case ENG_CMP_PRESENT:
		return v ? LP_OK : LP_E_NOTFOUND;
	case ENG_CMP_MOD:
		if (!v)
			return LP_E_NOTFOUND;
		return v->rev == o->cmp.mod_rev ? LP_OK : LP_E_CONFLICT;
	case ENG_CMP_MOD_PREV: /* chains only: test_chain.c */
		return LP_E_INVAL;
	}
	return LP_E_INVAL;
}

static void random_cmp(uint64_t *st, struct mop *o)
{
	const struct tm_ver *v = tm_get(&M, KEYS[o->k], KLEN[o->k], M.rev);
	o->cmp.mod_rev = 0;
	switch (ts_rand(st) % 6) {
	case 0:
		o->cmp.kind = ENG_CMP_ABSENT;
		break;
	case 1:
		o->cmp.kind = ENG_CMP_PRESENT;
		break;
	case 2:
	case 3:
		o->cmp.kind = ENG_CMP_MOD;
		o->cmp.mod_rev =
		    v && ts_rand(st) % 4
			? v->rev
			: (int64_t)(ts_rand(st) % (uint64_t)(M.rev + 2));
		break;
	default:
		o->cmp.kind = ENG_CMP_NONE;
		break;
	}
}

/* The watcher that follows everything. */
static eng_watch *W;
static struct tc_waiter WT;

struct want_ev {
	int k;
	enum eng_ev_type type;
	uint8_t *val, *prev; /* prev NULL: none */
	size_t val_len, prev_len;
};

static void check_events(struct want_ev *we, int n, int64_t rev, int step)
{
	int seen[8] = {0};
	for (int i = 0; i < n; i++) {
		eng_event *ev = NULL;
		lp_err rc = tc_next_wait(W, &WT, &ev);
		cr_assert_eq(rc, LP_OK, "step %d: watch next: %s", step,
			     lp_errname(rc));
		cr_assert_eq(ev->rev, rev,
			     "step %d: event rev %" PRId64 " want %" PRId64,
			     step, ev->rev, rev);
		int j;
		for (j = 0; j < n; j++) {
			if (!seen[j] && ev->rec.key_len == KLEN[we[j].k] &&
			    memcmp(ev->rec.key, KEYS[we[j].k], KLEN[we[j].k]) ==
				0)
				break;
		}
		cr_assert_lt(j, n, "step %d: an event for an unexpected key",
			     step);
		seen[j] = 1;
		cr_assert_eq(ev->type, we[j].type, "step %d: event type", step);
		cr_assert_eq(ev->rec.mod_rev, rev);
		cr_assert_eq(ev->rec.value_len, we[j].val_len,
			     "step %d: event value '%.*s' want '%s'", step,
			     (int)ev->rec.value_len,
			     (const char *)ev->rec.value, (char *)we[j].val);
		cr_assert(memcmp(ev->rec.value, we[j].val, we[j].val_len) == 0,
			  "step %d: event value", step);
		if (!we[j].prev) {
			cr_assert_null(ev->prev.value, "step %d: prev", step);
		} else {
			cr_assert_not_null(ev->prev.value, "step %d", step);
			cr_assert_eq(ev->prev.value_len, we[j].prev_len);
			cr_assert(memcmp(ev->prev.value, we[j].prev,
					 we[j].prev_len) == 0);
		}
		eng_event_unref(ev);
	}
	for (int i = 0; i < n; i++) {
		free(we[i].val);
		free(we[i].prev);
	}
}

/* One write txn of n ops: predict, commit, compare, apply to the model. */
static void do_txn(struct mop *ops, int n, int step)
{
	lp_err want = LP_OK;
	int fail_any = 0;
	lp_err fails[8];
	for (int i = 0; i < n; i++) {
		fails[i] = cmp_outcome(&ops[i]);
		if (fails[i] && !fail_any) {
			want = fails[i];
			fail_any = 1;
		}
	}
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	for (int i = 0; i < n; i++) {
		const struct eng_cmp *c =
		    ops[i].cmp.kind == ENG_CMP_NONE ? NULL : &ops[i].cmp;
		if (ops[i].del)
			TC_OK(
			    eng_txn_del(t, KEYS[ops[i].k], KLEN[ops[i].k], c));
		else
			TC_OK(eng_txn_put(t, KEYS[ops[i].k], KLEN[ops[i].k],
					  ops[i].val, ops[i].val_len,
					  ops[i].slot, c));
	}
	struct eng_commit_res res = {.failed_op = -7};
	lp_err rc = eng_txn_commit(t, &res);
	if (fail_any) {
		cr_assert_neq(rc, LP_OK,
			      "step %d: commit passed, the model says %s", step,
			      lp_errname(want));
		cr_assert(res.failed_op >= 0 && res.failed_op < n,
			  "step %d: failed_op %d", step, res.failed_op);
		cr_assert_eq(rc, fails[res.failed_op],
			     "step %d: %s on op %d, the model says %s", step,
			     lp_errname(rc), res.failed_op,
			     lp_errname(fails[res.failed_op]));
		const struct mop *o = &ops[res.failed_op];
		const struct tm_ver *v =
		    tm_get(&M, KEYS[o->k], KLEN[o->k], M.rev);
		struct eng_record prev = {0};
		int had = eng_txn_result(t, res.failed_op, &prev, NULL);
		cr_assert_eq(had, v != NULL, "step %d: failed op's prev", step);
		if (v) {
			cr_assert_eq(prev.mod_rev, v->rev);
			cr_assert_eq(prev.value_len, v->val_len);
			cr_assert(memcmp(prev.value, v->val, v->val_len) == 0);
		}
		eng_txn_free(t);
		cr_assert_eq(eng_rev(S.e), M.rev,
			     "step %d: a failed txn moved the revision", step);
		return;
	}
	cr_assert_eq(rc, LP_OK, "step %d: commit: %s", step, lp_errname(rc));
	cr_assert_eq(res.failed_op, -1);
	int64_t nr = M.rev + 1;
	struct want_ev we[8];
	int n_ev = 0;
	for (int i = 0; i < n; i++) {
		const struct mop *o = &ops[i];
		const struct tm_ver *old =
		    tm_get(&M, KEYS[o->k], KLEN[o->k], M.rev);
		struct eng_record prev = {0}, cur = {0};
		int had = eng_txn_result(t, i, &prev, &cur);
		cr_assert_eq(had, old != NULL, "step %d op %d: prev", step, i);
		if (old) {
			cr_assert_eq(prev.mod_rev, old->rev);
			cr_assert_eq(prev.value_len, old->val_len);
			cr_assert(memcmp(prev.value, old->val, old->val_len) ==
				  0);
		}
		if (o->del && !old)
			continue;
		struct want_ev *w = &we[n_ev++];
		w->k = o->k;
		w->prev = old ? tc_dup(old->val, old->val_len) : NULL;
		w->prev_len = old ? old->val_len : 0;
		if (o->del) {
			w->type = ENG_EV_DEL;
			w->val = tc_splice(old->raw, old->raw_len, old->slot,
					   nr, &w->val_len);
		} else {
			w->type = ENG_EV_PUT;
			w->val = tc_splice(o->val, o->val_len, o->slot, nr,
					   &w->val_len);
			cr_assert_eq(cur.mod_rev, nr);
			cr_assert_eq(cur.value_len, w->val_len);
			cr_assert(memcmp(cur.value, w->val, w->val_len) == 0,
				  "step %d: cur value", step);
		}
	}
	eng_txn_free(t);
	if (n_ev == 0) {
		cr_assert_eq(res.rev, M.rev,
			     "step %d: a no-op txn got rev %" PRId64, step,
			     res.rev);
		return;
	}
	cr_assert_eq(res.rev, nr, "step %d: rev %" PRId64 " want %" PRId64,
		     step, res.rev, nr);
	for (int i = 0; i < n; i++) {
		const struct mop *o = &ops[i];
		if (o->del)
			tm_del(&M, KEYS[o->k], KLEN[o->k], nr);
		else
			tm_put(&M, KEYS[o->k], KLEN[o->k], o->val, o->val_len,
			       o->slot, nr);
	}
	M.rev = nr;
	check_events(we, n_ev, nr, step);
}

static int64_t COMPACTED = 1;

/* A revision to read at: mostly valid, sometimes compacted or future, 0
   for the latest. */
static int64_t random_rev(uint64_t *st)
{
	switch (ts_rand(st) % 8) {
	case 0:
		return 0;
	case 1:
		return COMPACTED > 1 ? 1 + (int64_t)(ts_rand(st) %
						     (uint64_t)(COMPACTED - 1))
				     : 0;
	case 2:
		return M.rev + 1 + (int64_t)(ts_rand(st) % 3);
	default:
		return COMPACTED + (int64_t)(ts_rand(st) %
					     (uint64_t)(M.rev - COMPACTED + 1));
	}
}

static void do_get(uint64_t *st, int step)
{
	int k = (int)(ts_rand(st) % N_KEYS);
	int64_t at = random_rev(st);
	struct tc_rec r = {0};
	lp_err rc = tc_get(S.e, KEYS[k], KLEN[k], at, &r);
	if (at && at < COMPACTED) {
		cr_assert_eq(rc, LP_E_COMPACTED,
			     "step %d: get at %" PRId64 " (compacted %" PRId64
			     "): %s",
			     step, at, COMPACTED, lp_errname(rc));
		return;
	}
	if (at > M.rev) {
		cr_assert_eq(rc, LP_E_FUTURE, "step %d: get at %" PRId64 ": %s",
			     step, at, lp_errname(rc));
		return;
	}
	const struct tm_ver *v = tm_get(&M, KEYS[k], KLEN[k], at ? at : M.rev);
	if (!v) {
		cr_assert_eq(rc, LP_E_NOTFOUND,
			     "step %d: get of key %d at %" PRId64 ": %s", step,
			     k, at, lp_errname(rc));
		return;
	}
	cr_assert_eq(rc, LP_OK, "step %d: get of key %d at %" PRId64 ": %s",
		     step, k, at, lp_errname(rc));
	tm_assert_rec(&r, v, "get");
	tc_rec_free(&r);
}

static void do_range(uint64_t *st, int step)
{
	static const char *prefixes[] = {"/m/a/", "/m/ab", "/m/",
					 "/",	  "/n/",   "/m/b/1"};
	struct eng_range_req q = {0};
	uint8_t from[ENG_KEY_MAX + 2];
	uint64_t x = ts_rand(st);
	if (x % 5) {
		q.prefix = prefixes[(x >> 8) % 6];
		q.prefix_len = strlen(q.prefix);
	}
	if (ts_rand(st) % 2) {
		int k = (int)(ts_rand(st) % N_KEYS);
		size_t n = KLEN[k];
		if (ts_rand(st) % 3 == 0 && n > 3)
			n = 3 + (size_t)(ts_rand(st) %
					 (n - 3)); /* a prefix of it */
		memcpy(from, KEYS[k], n);
		if (ts_rand(st) % 2)
			from[n++] = 0; /* a continue token */
		q.from = from;
		q.from_len = n;
	}
	if (ts_rand(st) % 4 == 0) {
		int k = (int)(ts_rand(st) % N_KEYS);
		q.end = KEYS[k];
		q.end_len = KLEN[k];
	}
	q.limit = ts_rand(st) % 3 ? ts_rand(st) % 8 : 0;
	q.flags = ts_rand(st) % 2 ? ENG_RANGE_COUNT : 0;
	q.at_rev = random_rev(st);
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	lp_err rc = tc_range(S.e, &q, &l, &res);
	if (q.at_rev && q.at_rev < COMPACTED) {
		cr_assert_eq(rc, LP_E_COMPACTED,
			     "step %d: range at %" PRId64 ": %s", step,
			     q.at_rev, lp_errname(rc));
		tc_list_free(&l);
		return;
	}
	if (q.at_rev > M.rev) {
		cr_assert_eq(rc, LP_E_FUTURE,
			     "step %d: range at %" PRId64 ": %s", step,
			     q.at_rev, lp_errname(rc));
		tc_list_free(&l);
		return;
	}
	cr_assert_eq(rc, LP_OK, "step %d: range: %s", step, lp_errname(rc));
	char what[64];
	snprintf(what, sizeof what, "step %d range", step);
	int64_t rev = q.at_rev ? q.at_rev : M.rev;
	size_t after = tm_assert_range(&M, &q, rev, &l, what);
	cr_assert_eq(res.rev, rev, "%s: res.rev", what);
	cr_assert_eq(res.n_taken, l.n);
	cr_assert_eq(res.more, after > 0, "%s: more %d, %zu after", what,
		     res.more, after);
	if (q.flags & ENG_RANGE_COUNT)
		cr_assert_eq(res.n_remaining, after, "%s: n_remaining", what);
	if (q.limit)
		cr_assert(l.n == q.limit || after == 0, "%s: short page", what);
	else
		cr_assert_eq(after, 0);
	tc_list_free(&l);
}

static void random_write(uint64_t *st, int step)
{
	struct mop ops[5];
	int n = ts_rand(st) % 5 == 0 ? 2 + (int)(ts_rand(st) % 4) : 1;
	int used[N_KEYS] = {0};
	int m = 0;
	for (int i = 0; i < n; i++) {
		struct mop *o = &ops[m];
		memset(o, 0, sizeof *o);
		o->k = (int)(ts_rand(st) % N_KEYS);
		/* Keys may repeat in KEYS; a txn must not name one twice. */
		int dup = 0;
		for (int j = 0; j < N_KEYS; j++)
			if (used[j] && KLEN[j] == KLEN[o->k] &&
			    memcmp(KEYS[j], KEYS[o->k], KLEN[j]) == 0)
				dup = 1;
		if (dup)
			continue;
		used[o->k] = 1;
		o->del = ts_rand(st) % 4 == 0;
		o->val_len = (size_t)snprintf(o->val, sizeof o->val,
					      "{\"s\":%d,\"rv\":\"\"}", step);
		switch (ts_rand(st) % 3) {
		case 0:
			o->slot = ENG_NO_SLOT;
			break;
		case 1:
			o->slot = (uint32_t)(o->val_len - 2);
			break;
		default:
			o->slot = (uint32_t)(ts_rand(st) % (o->val_len + 1));
			break;
		}
		if (ts_rand(st) % 3 == 0)
			random_cmp(st, o);
		else
			o->cmp.kind = ENG_CMP_NONE;
		m++;
	}
	do_txn(ops, m, step);
}

Test(eng_model, random_ops_against_the_model)
{
	uint64_t seed = ts_seed("eng_model.random_ops", 20240601);
	uint64_t st = seed;
	const char *n_env = getenv("LAPIS_MODEL_OPS");
	int n_ops = n_env ? atoi(n_env) : 20000;
	make_keys(&st);
	COMPACTED = eng_compacted(S.e);
	cr_assert_leq(COMPACTED, 1);
	if (COMPACTED < 1)
		COMPACTED = 1; /* nothing below revision 1 to read anyway */
	tc_waiter_init(&WT);
	TC_OK(eng_watch_open(S.e, "", 0, 1, tc_ready, &WT, &W));
	for (int step = 0; step < n_ops; step++) {
		uint64_t x = ts_rand(&st) % 100;
		if (x < 50) {
			random_write(&st, step);
		} else if (x < 70) {
			do_get(&st, step);
		} else if (x < 95) {
			do_range(&st, step);
		} else if (x < 96) {
			/* Compact part of the readable window, so that old
			   revisions stay around to be read. */
			int64_t target =
			    COMPACTED +
			    (int64_t)(ts_rand(&st) %
				      (uint64_t)((M.rev - COMPACTED) / 2 + 1));
			int64_t done = 0;
			TC_OK(eng_compact(S.e, target, &done));
			cr_assert_eq(done, target, "step %d: compact", step);
			COMPACTED = done;
			cr_assert_eq(eng_compacted(S.e), COMPACTED);
		} else if (x < 98) {
			if (step % 4 == 0)
				tc_check(S.e);
		} else if (ts_rand(&st) % 8 == 0) {
			/* Restart: the watcher goes first and comes back from
			   the revision it reached. */
			int64_t wr = eng_watch_rev(W);
			cr_assert_eq(wr, M.rev);
			eng_watch_close(W);
			tc_reopen(&S);
			cr_assert_eq(eng_rev(S.e), M.rev);
			cr_assert_eq(
			    eng_compacted(S.e) < 1 ? 1 : eng_compacted(S.e),
			    COMPACTED,
			    "step %d: compacted %" PRId64 " after reopen,"
			    " was %" PRId64,
			    step, eng_compacted(S.e), COMPACTED);
			TC_OK(
			    eng_watch_open(S.e, "", 0, wr, tc_ready, &WT, &W));
		}
	}
	eng_event *ev;
	TC_RC(eng_watch_next(W, &ev), LP_E_AGAIN);
	eng_watch_close(W);
	tc_waiter_destroy(&WT);
	tc_check(S.e);
	/* A final full comparison at every readable revision's latest. */
	struct eng_range_req all = {.flags = ENG_RANGE_COUNT};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	TC_OK(tc_range(S.e, &all, &l, &res));
	tm_assert_range(&M, &all, M.rev, &l, "final");
	tc_list_free(&l);
	free_keys();
	cr_log_info("model: %d ops, revision %" PRId64 ", compacted %" PRId64,
		    n_ops, M.rev, COMPACTED);
}
