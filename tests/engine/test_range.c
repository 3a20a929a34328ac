/*
 * test_range.c -- eng_range: bounds (prefix, from, end), limit and `more`,
 * ENG_RANGE_COUNT, the callback's TAKE/SKIP/STOP, reads at a revision, and
 * paged reads at a pinned revision while the store keeps changing.
 *
 * Invariants checked
 *  1. A range returns exactly the keys in its bounds live at its revision,
 *     in byte-wise key order (checked against the history model).
 *  2. `more` is 1 exactly when live keys remain after the last visited;
 *     with ENG_RANGE_COUNT n_remaining is their exact number.
 *  3. ENG_SKIP does not count toward the limit; ENG_STOP ends the range
 *     without counting the record it was given.
 *  4. Pages read at a pinned revision R (from = last key + "\0") equal the
 *     model at R whatever is written, deleted or compacted in between, and
 *     concatenate to the unpaged list.
 *  5. at_rev above the snapshot is LP_E_FUTURE, below the compacted
 *     revision LP_E_COMPACTED.
 *  6. n_remaining stays exact when the prefix's count is remembered between
 *     ranges (engine/count.c) and brought forward by the writer: across
 *     creates, updates, deletes, deletes of missing keys, failed compares,
 *     multi-key txns, chained txns in one group, and writes elsewhere.
 */
#include "common.h"

static struct tc_store S;
static struct tm_model M;

static void setup(void)
{
	tc_open(&S, "range", NULL);
	tm_init(&M);
}

static void teardown(void)
{
	tc_done(&S);
	tm_free(&M);
}

TestSuite(eng_range, .init = setup, .fini = teardown);

/* Put into the store and the model. */
static int64_t mput(const void *k, size_t kl, const char *v)
{
	struct eng_commit_res res = {0};
	TC_OK(tc_put(S.e, k, kl, v, strlen(v), ENG_NO_SLOT, NULL, &res));
	tm_put(&M, k, kl, v, strlen(v), ENG_NO_SLOT, res.rev);
	return res.rev;
}

static int64_t mputs(const char *k, const char *v)
{
	return mput(k, strlen(k), v);
}

static int64_t mdels(const char *k)
{
	struct eng_commit_res res = {0};
	TC_OK(tc_del(S.e, k, strlen(k), NULL, &res));
	tm_del(&M, k, strlen(k), res.rev);
	return res.rev;
}

/* Run a range and check it against the model; returns the result. */
static struct eng_range_res check_range(const struct eng_range_req *q,
					const char *what)
{
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	lp_err rc = tc_range(S.e, q, &l, &res);
	cr_assert_eq(rc, LP_OK, "%s: %s", what, lp_errname(rc));
	int64_t rev = q->at_rev ? q->at_rev : eng_rev(S.e);
	cr_assert_eq(res.rev, rev, "%s: res.rev %" PRId64 " want %" PRId64,
		     what, res.rev, rev);
	size_t after = tm_assert_range(&M, q, rev, &l, what);
	cr_assert_eq(res.n_taken, l.n, "%s: n_taken", what);
	cr_assert_eq(res.n_visited, l.n, "%s: n_visited", what);
	cr_assert_eq(res.more, after > 0, "%s: more %d, %zu keys after", what,
		     res.more, after);
	if (q->flags & ENG_RANGE_COUNT)
		cr_assert_eq(res.n_remaining, after,
			     "%s: n_remaining %" PRIu64 " want %zu", what,
			     res.n_remaining, after);
	if (q->limit)
		cr_assert_leq(l.n, q->limit);
	tc_list_free(&l);
	return res;
}

static void fill_basic(void)
{
	const char *keys[] = {"/a",	 "/a/1",    "/a/2", "/a/3", "/a0",
			      "/ab/1",	 "/b/1",    "/b/2", "a",    "/a/2/x",
			      "/a/\xff", "/a/\x01", "/"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		mputs(keys[i], keys[i]);
}

Test(eng_range, prefix_bounds)
{
	fill_basic();
	const char *prefixes[] = {"/a/", "/a",	 "/",	    "/b",  "/c",
				  "a",	 "/a/2", "/a/\xff", "\xff"};
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
		struct eng_range_req q = {.prefix = prefixes[i],
					  .prefix_len = strlen(prefixes[i]),
					  .flags = ENG_RANGE_COUNT};
		check_range(&q, prefixes[i]);
	}
	/* No prefix: every key. */
	struct eng_range_req all = {.flags = ENG_RANGE_COUNT};
	struct eng_range_res res = check_range(&all, "all");
	cr_assert_eq(res.n_taken, 13);
	/* An empty range. */
	struct eng_range_req none = {.prefix = "/zzz", .prefix_len = 4};
	res = check_range(&none, "none");
	cr_assert_eq(res.n_visited, 0);
	cr_assert_eq(res.more, 0);
}

Test(eng_range, from_and_end_bounds)
{
	fill_basic();
	struct {
		const char *prefix, *from, *end;
		size_t from_len; /* 0: strlen */
	} cases[] = {
	    {NULL, "/a/", "/b", 0},
	    {NULL, "/a/2", "/a/3", 0},
	    {NULL, "/a/2", NULL, 0},
	    {NULL, NULL, "/a0", 0},
	    {"/a/", "/a/2", NULL, 0},
	    {"/a/", NULL, "/a/3", 0},
	    {"/a/", "/a/2", "/a/3", 0},
	    {"/a/", "/a/2\0", NULL, 5}, /* a continue token */
	    {"/a/", "/a/2/x\0", NULL, 7},
	    {"/a/", "/a/\xff\0", NULL, 6},
	    {NULL, "/a/3", "/a/3", 0}, /* empty */
	    {NULL, "/b", "/a", 0},     /* end before from: empty */
	    {"/a/", "/", NULL, 0},     /* from before the prefix */
	    {"/a/", NULL, "/b", 0},    /* end after the prefix */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct eng_range_req q = {.flags = ENG_RANGE_COUNT};
		if (cases[i].prefix) {
			q.prefix = cases[i].prefix;
			q.prefix_len = strlen(cases[i].prefix);
		}
		if (cases[i].from) {
			q.from = cases[i].from;
			q.from_len = cases[i].from_len ? cases[i].from_len
						       : strlen(cases[i].from);
		}
		if (cases[i].end) {
			q.end = cases[i].end;
			q.end_len = strlen(cases[i].end);
		}
		char what[64];
		snprintf(what, sizeof what, "case %zu", i);
		check_range(&q, what);
	}
}

/* Page through a range with every limit from 1 to past the end: the pages
   concatenate to the unpaged list; more/n_remaining are exact on each. */
Test(eng_range, limit_more_and_paging)
{
	fill_basic();
	for (int i = 0; i < 40; i++) {
		char k[32];
		snprintf(k, sizeof k, "/p/%02d", i);
		mputs(k, k);
	}
	mdels("/p/07");
	mdels("/p/39"); /* the last key: `more` must not count it */
	for (uint64_t limit = 1; limit <= 40; limit++) {
		uint8_t from[64];
		size_t from_len = 0;
		size_t total = 0;
		int first = 1;
		for (;;) {
			struct eng_range_req q = {.prefix = "/p/",
						  .prefix_len = 3,
						  .limit = limit,
						  .flags = ENG_RANGE_COUNT};
			if (!first) {
				q.from = from;
				q.from_len = from_len;
			}
			struct tc_list l = {0};
			struct eng_range_res res = {0};
			TC_OK(tc_range(S.e, &q, &l, &res));
			char what[64];
			snprintf(what, sizeof what, "limit %" PRIu64 " at %zu",
				 limit, total);
			size_t after =
			    tm_assert_range(&M, &q, eng_rev(S.e), &l, what);
			cr_assert_eq(res.more, after > 0, "%s: more", what);
			cr_assert_eq(res.n_remaining, after, "%s: remaining",
				     what);
			cr_assert_leq(l.n, limit);
			if (after)
				cr_assert_eq(l.n, limit, "%s: short page",
					     what);
			total += l.n;
			if (l.n) {
				struct tc_rec *last = &l.v[l.n - 1];
				memcpy(from, last->key, last->key_len);
				from[last->key_len] = 0;
				from_len = last->key_len + 1;
			}
			tc_list_free(&l);
			first = 0;
			if (!res.more)
				break;
		}
		cr_assert_eq(total, 38, "limit %" PRIu64 ": %zu keys in pages",
			     limit, total);
	}
}

struct pol {
	int skip_odd;	      /* skip records whose last key byte is odd */
	const char *stop_key; /* STOP on this key */
	struct tc_list l;     /* taken records */
	size_t calls;
	int called_after_stop;
	int stopped;
};

static enum eng_take pol_fn(void *ud, const struct eng_record *r)
{
	struct pol *p = ud;
	p->calls++;
	if (p->stopped)
		p->called_after_stop = 1;
	if (p->stop_key && r->key_len == strlen(p->stop_key) &&
	    memcmp(r->key, p->stop_key, r->key_len) == 0) {
		p->stopped = 1;
		return ENG_STOP;
	}
	if (p->skip_odd && (r->key[r->key_len - 1] & 1))
		return ENG_SKIP;
	tc_list_add(&p->l, r);
	return ENG_TAKE;
}

Test(eng_range, take_skip_stop)
{
	for (int i = 0; i < 20; i++) {
		char k[32];
		snprintf(k, sizeof k, "/t/%02d", i);
		mputs(k, k);
	}
	eng_rd *r;
	struct eng_range_res res = {0};
	struct eng_range_req q = {.prefix = "/t/",
				  .prefix_len = 3,
				  .limit = 5,
				  .flags = ENG_RANGE_COUNT};

	/* SKIP does not count: limit 5 takes 00,02,04,06,08 and visits 9. */
	struct pol p = {.skip_odd = 1};
	TC_OK(eng_rd_begin(S.e, &r));
	TC_OK(eng_range(r, &q, pol_fn, &p, &res));
	eng_rd_end(r);
	cr_assert_eq(res.n_taken, 5);
	cr_assert_eq(res.n_visited, 9);
	cr_assert_eq(p.calls, 9);
	cr_assert_str_eq((char *)p.l.v[4].key, "/t/08");
	cr_assert_eq(res.more, 1);
	/* Every key left after the last visited (09..19), filter or not. */
	cr_assert_eq(res.n_remaining, 11);
	tc_list_free(&p.l);

	/* STOP: the stopped record is visited but not taken, and the callback
	   is not called again. */
	struct pol s = {.stop_key = "/t/03"};
	q.limit = 0;
	TC_OK(eng_rd_begin(S.e, &r));
	TC_OK(eng_range(r, &q, pol_fn, &s, &res));
	eng_rd_end(r);
	cr_assert_eq(res.n_taken, 3);
	cr_assert_eq(res.n_visited, 4);
	cr_assert_eq(s.calls, 4);
	cr_assert_eq(s.called_after_stop, 0);
	/* 03..19 remain (the stopped record among them), counted or
	   remembered from the first range. */
	cr_assert_eq(res.n_remaining, 17);
	tc_list_free(&s.l);

	/* STOP together with SKIP and a limit that is not reached. */
	struct pol s2 = {.skip_odd = 1, .stop_key = "/t/10"};
	q.limit = 100;
	TC_OK(eng_rd_begin(S.e, &r));
	TC_OK(eng_range(r, &q, pol_fn, &s2, &res));
	eng_rd_end(r);
	cr_assert_eq(res.n_taken, 5);
	cr_assert_eq(res.n_visited, 11);
	cr_assert_eq(s2.called_after_stop, 0);
	tc_list_free(&s2.l);

	/* Limit reached exactly at the last key: no more. */
	struct pol all = {0};
	q.limit = 20;
	TC_OK(eng_rd_begin(S.e, &r));
	TC_OK(eng_range(r, &q, pol_fn, &all, &res));
	eng_rd_end(r);
	cr_assert_eq(res.n_taken, 20);
	cr_assert_eq(res.more, 0);
	cr_assert_eq(res.n_remaining, 0);
	tc_list_free(&all.l);
}

Test(eng_range, at_rev)
{
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 12; i++) {
			char k[32], v[32];
			snprintf(k, sizeof k, "/h/%02d", (i * 7 + round) % 15);
			snprintf(v, sizeof v, "r%d.%d", round, i);
			if ((i + round) % 5 == 0)
				mdels(k);
			else
				mputs(k, v);
		}
	}
	int64_t now = eng_rev(S.e);
	for (int64_t rev = 1; rev <= now; rev++) {
		char what[64];
		snprintf(what, sizeof what, "at %" PRId64, rev);
		struct eng_range_req q = {.prefix = "/h/",
					  .prefix_len = 3,
					  .at_rev = rev,
					  .flags = ENG_RANGE_COUNT};
		check_range(&q, what);
		q.limit = 3;
		check_range(&q, what);
		q.from = "/h/05";
		q.from_len = 5;
		q.end = "/h/12";
		q.end_len = 5;
		check_range(&q, what);
	}
}

Test(eng_range, future_and_compacted)
{
	mputs("/f/a", "1");
	mputs("/f/b", "2");
	mputs("/f/a", "3");
	int64_t now = eng_rev(S.e);
	struct eng_range_req q = {.prefix = "/f/", .prefix_len = 3};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	q.at_rev = now + 1;
	TC_RC(tc_range(S.e, &q, &l, &res), LP_E_FUTURE);
	q.at_rev = now + 1000;
	TC_RC(tc_range(S.e, &q, &l, &res), LP_E_FUTURE);
	cr_assert_eq(l.n, 0);
	int64_t done;
	TC_OK(eng_compact(S.e, 3, &done));
	cr_assert_eq(done, 3);
	q.at_rev = 2;
	TC_RC(tc_range(S.e, &q, &l, &res), LP_E_COMPACTED);
	cr_assert_eq(l.n, 0);
	q.at_rev = 3;
	check_range(&q, "at the compacted revision");
	q.at_rev = 0;
	check_range(&q, "latest");
}

/* ------------------------------------------------------------- pinned pages */

#define PG_KEYS 300
#define PG_LIMIT 23

Test(eng_range, pages_at_pinned_revision_ignore_later_changes)
{
	uint64_t seed = ts_seed("eng_range.pages_at_pinned_revision", 42);
	uint64_t st = seed;
	for (int i = 0; i < PG_KEYS; i++) {
		char k[32], v[32];
		snprintf(k, sizeof k, "/pg/%04d", i * 2);
		snprintf(v, sizeof v, "v%d", i);
		mputs(k, v);
	}
	/* Some history before R, so that compaction has work to do. */
	for (int i = 0; i < PG_KEYS; i += 3) {
		char k[32];
		snprintf(k, sizeof k, "/pg/%04d", i * 2);
		mputs(k, "updated");
	}
	const int64_t R = eng_rev(S.e);
	eng_pin *pin;
	TC_OK(eng_pin_rev(S.e, R, &pin));

	uint8_t from[64];
	size_t from_len = 0, total = 0, remaining = 0;
	int first = 1;
	for (int page = 0;; page++) {
		struct eng_range_req q = {.prefix = "/pg/",
					  .prefix_len = 4,
					  .at_rev = R,
					  .limit = PG_LIMIT};
		if (first)
			q.flags = ENG_RANGE_COUNT;
		else {
			q.from = from;
			q.from_len = from_len;
		}
		struct tc_list l = {0};
		struct eng_range_res res = {0};
		lp_err rc = tc_range(S.e, &q, &l, &res);
		cr_assert_eq(rc, LP_OK, "page %d: %s (seed %" PRIu64 ")", page,
			     lp_errname(rc), seed);
		char what[64];
		snprintf(what, sizeof what, "page %d seed %" PRIu64, page,
			 seed);
		size_t after = tm_assert_range(&M, &q, R, &l, what);
		cr_assert_eq(res.rev, R);
		cr_assert_eq(res.more, after > 0, "%s: more", what);
		if (first) {
			cr_assert_eq(res.n_remaining, PG_KEYS - PG_LIMIT);
			remaining = res.n_remaining;
		} else {
			cr_assert_eq(remaining, after + l.n, "%s: remaining",
				     what);
			remaining = after;
		}
		total += l.n;
		if (l.n) {
			struct tc_rec *last = &l.v[l.n - 1];
			memcpy(from, last->key, last->key_len);
			from[last->key_len] = 0;
			from_len = last->key_len + 1;
		}
		tc_list_free(&l);
		first = 0;
		if (!res.more)
			break;

		/* Between pages: new keys between old ones, updates and
		   deletes of keys on the next pages, a key right after the
		   continue point, and a compaction that the pin clamps. */
		for (int j = 0; j < 8; j++) {
			int n = (int)(ts_rand(&st) % (2 * PG_KEYS));
			char k[32];
			snprintf(k, sizeof k, "/pg/%04d", n);
			switch (ts_rand(&st) % 3) {
			case 0:
				mputs(k, "later");
				break;
			case 1:
				mdels(k);
				break;
			default:
				snprintf(k, sizeof k, "/pg/%04d.5", n);
				mputs(k, "inserted");
				break;
			}
		}
		uint8_t next[80];
		memcpy(next, from, from_len - 1);
		memcpy(next + from_len - 1, "\x01", 1);
		mput(next, from_len, "right after the token");
		int64_t done;
		TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
		cr_assert_eq(done, R,
			     "compaction not clamped to the pin: %" PRId64
			     " (pin %" PRId64 ")",
			     done, R);
		cr_assert_leq(eng_compacted(S.e), R);
		tc_check(S.e);
	}
	cr_assert_eq(total, PG_KEYS);
	eng_unpin(pin);

	/* Unpinned, compaction goes all the way and R is gone. */
	int64_t now = eng_rev(S.e), done;
	TC_OK(eng_compact(S.e, now, &done));
	cr_assert_eq(done, now);
	struct eng_range_req q = {
	    .prefix = "/pg/", .prefix_len = 4, .at_rev = R};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	TC_RC(tc_range(S.e, &q, &l, &res), LP_E_COMPACTED);
	q.at_rev = 0;
	q.flags = ENG_RANGE_COUNT;
	check_range(&q, "latest after compaction");
}

/* Deleted keys are not given to the callback, at the latest revision or at
   an old one. */
Test(eng_range, deleted_keys_are_invisible)
{
	for (int i = 0; i < 50; i++) {
		char k[32];
		snprintf(k, sizeof k, "/d/%02d", i);
		mputs(k, "x");
	}
	int64_t mid = eng_rev(S.e);
	for (int i = 0; i < 50; i += 2) {
		char k[32];
		snprintf(k, sizeof k, "/d/%02d", i);
		mdels(k);
	}
	struct eng_range_req q = {.prefix = "/d/",
				  .prefix_len = 3,
				  .flags = ENG_RANGE_COUNT,
				  .limit = 7};
	struct eng_range_res res = check_range(&q, "latest");
	cr_assert_eq(res.n_remaining, 25 - 7);
	q.at_rev = mid;
	res = check_range(&q, "mid");
	cr_assert_eq(res.n_remaining, 50 - 7);
	/* Everything deleted: empty, no more. */
	for (int i = 1; i < 50; i += 2) {
		char k[32];
		snprintf(k, sizeof k, "/d/%02d", i);
		mdels(k);
	}
	q.at_rev = 0;
	res = check_range(&q, "all deleted");
	cr_assert_eq(res.n_visited, 0);
	cr_assert_eq(res.more, 0);
}

/* A first page of /c/ (limit 2, counted), checked against the model. */
static void first_page(const char *what)
{
	struct eng_range_req q = {.prefix = "/c/",
				  .prefix_len = 3,
				  .limit = 2,
				  .flags = ENG_RANGE_COUNT};
	check_range(&q, what);
	check_range(&q, what); /* the second one finds the count kept */
}

static void txn_commit(eng_txn *t, lp_err want)
{
	struct eng_commit_res res = {0};
	cr_assert_eq(eng_txn_commit(t, &res), want);
	eng_txn_free(t);
}

Test(eng_range, kept_counts_follow_every_write)
{
	for (int i = 0; i < 6; i++) {
		char k[16];
		snprintf(k, sizeof k, "/c/%d", i);
		mputs(k, "v");
	}
	mputs("/d/1", "v");
	first_page("fresh");
	mputs("/c/9", "v");
	first_page("create");
	mputs("/c/1", "v2");
	first_page("update");
	mdels("/c/2");
	first_page("delete");
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_del(t, "/c/2", 4, NULL));
	txn_commit(t, LP_OK);
	first_page("delete of a missing key");
	mputs("/d/2", "v");
	mputs("/c", "v");
	mputs("/c0", "v");
	first_page("writes outside the prefix");

	/* a failed compare writes nothing */
	struct eng_cmp must_not_exist = {ENG_CMP_ABSENT, 0};
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/c/7", 4, "v", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/c/1", 4, "v", 1, ENG_NO_SLOT, &must_not_exist));
	txn_commit(t, LP_E_EXISTS);
	first_page("failed compare");

	/* one txn: two creates, an update and a delete */
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/c/7", 4, "v", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/c/8", 4, "v", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/c/1", 4, "v3", 2, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_del(t, "/c/3", 4, NULL));
	struct eng_commit_res res = {0};
	TC_OK(eng_txn_commit(t, &res));
	eng_txn_free(t);
	tm_put(&M, "/c/7", 4, "v", 1, ENG_NO_SLOT, res.rev);
	tm_put(&M, "/c/8", 4, "v", 1, ENG_NO_SLOT, res.rev);
	tm_put(&M, "/c/1", 4, "v3", 2, ENG_NO_SLOT, res.rev);
	tm_del(&M, "/c/3", 4, res.rev);
	first_page("multi-key txn");

	/* a chain: two txns in one group, a create and a delete */
	eng_txn *ts[2];
	TC_OK(eng_txn_new(S.e, &ts[0]));
	TC_OK(eng_txn_put(ts[0], "/c/5x", 5, "v", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_new(S.e, &ts[1]));
	TC_OK(eng_txn_del(ts[1], "/c/4", 4, NULL));
	struct eng_commit_res r[2];
	TC_OK(eng_txn_commit_chain(ts, 2, r));
	eng_txn_free(ts[0]);
	eng_txn_free(ts[1]);
	tm_put(&M, "/c/5x", 5, "v", 1, ENG_NO_SLOT, r[0].rev);
	tm_del(&M, "/c/4", 4, r[1].rev);
	first_page("chain");

	/* everything deleted, then one created again */
	const char *left[] = {"/c/0", "/c/1", "/c/5", "/c/5x",
			      "/c/7", "/c/8", "/c/9"};
	for (size_t i = 0; i < sizeof left / sizeof *left; i++)
		mdels(left[i]);
	first_page("emptied");
	mputs("/c/a", "v");
	first_page("one again");
}
