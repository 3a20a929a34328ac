/*
 * test_basic.c -- revisions, record fields, persistence across restart, key
 * and value validation, open options (engine.h "Model" 1-3).
 *
 * Invariants checked
 *  1. A fresh store is at revision 1; the first write gets 2; every committed
 *     txn that changes something adds exactly 1; ops of one txn share it.
 *  2. A txn that changes nothing (delete of an absent key) consumes no
 *     revision.
 *  3. version is 1 on create, +1 per update, and starts again at 1 (with a
 *     new create_rev) after delete and recreate.
 *  4. Revision and data survive close and reopen.
 *  5. Bad keys and values are refused at eng_txn_put/eng_txn_del and never
 *     consume a revision.
 * Every test ends with eng_check (tc_done).
 */
#include <lmdb.h>

#include "common.h"

static struct tc_store S;

static void setup(void)
{
	tc_open(&S, "basic", NULL);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_basic, .init = setup, .fini = teardown);

Test(eng_basic, fresh_store_is_at_revision_1)
{
	cr_assert_eq(eng_rev(S.e), 1);
	cr_assert_leq(eng_compacted(S.e), 1);
	eng_rd *r;
	TC_OK(eng_rd_begin(S.e, &r));
	cr_assert_eq(eng_rd_rev(r), 1);
	cr_assert_leq(eng_rd_compacted(r), 1);
	struct eng_record rec = {0};
	TC_RC(eng_get(r, "a", 1, 0, &rec), LP_E_NOTFOUND);
	TC_RC(eng_get(r, "a", 1, 1, &rec), LP_E_NOTFOUND);
	eng_rd_end(r);
	struct eng_info in;
	TC_OK(eng_info(S.e, &in));
	cr_assert_eq(in.rev, 1);
	cr_assert_eq(in.n_keys, 0);
}

Test(eng_basic, first_write_gets_2_then_plus_1_per_txn)
{
	cr_assert_eq(tc_puts(S.e, "/a", "1"), 2);
	cr_assert_eq(tc_puts(S.e, "/b", "1"), 3);
	cr_assert_eq(tc_puts(S.e, "/a", "2"), 4);
	cr_assert_eq(tc_dels(S.e, "/b"), 5);
	cr_assert_eq(eng_rev(S.e), 5);

	/* Three ops in one txn share revision 6. */
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/x", 2, "x", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/a", 2, "3", 1, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_del(t, "/c", 2, NULL)); /* absent: no change */
	struct eng_commit_res res = {0};
	TC_OK(eng_txn_commit(t, &res));
	cr_assert_eq(res.rev, 6);
	cr_assert_eq(res.failed_op, -1);
	struct eng_record cur = {0};
	eng_txn_result(t, 0, NULL, &cur);
	cr_assert_eq(cur.mod_rev, 6);
	eng_txn_result(t, 1, NULL, &cur);
	cr_assert_eq(cur.mod_rev, 6);
	eng_txn_free(t);

	tc_expect(S.e, "/x", 0, "x", 6, 6, 1);
	tc_expect(S.e, "/a", 0, "3", 2, 6, 3);
	cr_assert_eq(eng_rev(S.e), 6);
	cr_assert_eq(tc_puts(S.e, "/y", "y"), 7);
}

Test(eng_basic, txn_that_changes_nothing_consumes_no_revision)
{
	cr_assert_eq(tc_puts(S.e, "/a", "1"), 2);
	struct eng_commit_res res = {0};
	TC_OK(tc_del(S.e, "/nope", 5, NULL, &res));
	cr_assert_eq(res.rev, 2, "a no-op delete reported rev %" PRId64,
		     res.rev);
	cr_assert_eq(eng_rev(S.e), 2);

	/* Two absent deletes in one txn: still nothing. */
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_del(t, "/n1", 3, NULL));
	TC_OK(eng_txn_del(t, "/n2", 3, NULL));
	TC_OK(eng_txn_commit(t, &res));
	cr_assert_eq(res.rev, 2);
	cr_assert_eq(eng_txn_result(t, 0, NULL, NULL), 0);
	cr_assert_eq(eng_txn_result(t, 1, NULL, NULL), 0);
	eng_txn_free(t);

	/* Deleting a key twice: the second is a no-op. */
	cr_assert_eq(tc_dels(S.e, "/a"), 3);
	TC_OK(tc_del(S.e, "/a", 2, NULL, &res));
	cr_assert_eq(res.rev, 3);
	cr_assert_eq(tc_puts(S.e, "/b", "1"), 4);
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), 4);
}

Test(eng_basic, record_fields_create_mod_version)
{
	cr_assert_eq(tc_puts(S.e, "/k", "v1"), 2);
	tc_expect(S.e, "/k", 0, "v1", 2, 2, 1);
	cr_assert_eq(tc_puts(S.e, "/k", "v2"), 3);
	tc_expect(S.e, "/k", 0, "v2", 2, 3, 2);
	cr_assert_eq(tc_puts(S.e, "/other", "o"), 4);
	cr_assert_eq(tc_puts(S.e, "/k", "v3"), 5);
	tc_expect(S.e, "/k", 0, "v3", 2, 5, 3);
	cr_assert_eq(tc_dels(S.e, "/k"), 6);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/k", 2, 0, &r), LP_E_NOTFOUND);
	cr_assert_eq(tc_puts(S.e, "/k", "new"), 7);
	tc_expect(S.e, "/k", 0, "new", 7, 7, 1);
	cr_assert_eq(tc_puts(S.e, "/k", "new2"), 8);
	tc_expect(S.e, "/k", 0, "new2", 7, 8, 2);
	/* The old incarnation is still readable at its revisions. */
	tc_expect(S.e, "/k", 5, "v3", 2, 5, 3);
	tc_expect(S.e, "/k", 4, "v2", 2, 3, 2);
	TC_RC(tc_get(S.e, "/k", 2, 6, &r), LP_E_NOTFOUND);
	tc_expect(S.e, "/other", 0, "o", 4, 4, 1);
}

Test(eng_basic, txn_result_prev_and_cur)
{
	tc_puts(S.e, "/a", "old");
	tc_puts(S.e, "/b", "gone");
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, "new", 3, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, "/c", 2, "created", 7, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_del(t, "/b", 2, NULL));
	struct eng_commit_res res = {0};
	TC_OK(eng_txn_commit(t, &res));
	cr_assert_eq(res.rev, 4);
	struct eng_record prev = {0}, cur = {0};
	cr_assert_eq(eng_txn_result(t, 0, &prev, &cur), 1);
	cr_assert_eq(prev.value_len, 3);
	cr_assert(memcmp(prev.value, "old", 3) == 0);
	cr_assert_eq(prev.mod_rev, 2);
	cr_assert_eq(prev.version, 1);
	cr_assert_eq(cur.value_len, 3);
	cr_assert(memcmp(cur.value, "new", 3) == 0);
	cr_assert_eq(cur.mod_rev, 4);
	cr_assert_eq(cur.create_rev, 2);
	cr_assert_eq(cur.version, 2);
	cr_assert_eq(cur.key_len, 2);
	cr_assert(memcmp(cur.key, "/a", 2) == 0);
	cr_assert_eq(eng_txn_result(t, 1, &prev, &cur), 0);
	cr_assert_eq(cur.create_rev, 4);
	cr_assert_eq(cur.version, 1);
	cr_assert_eq(eng_txn_result(t, 2, &prev, NULL), 1);
	cr_assert_eq(prev.mod_rev, 3);
	cr_assert(memcmp(prev.value, "gone", 4) == 0);
	eng_txn_free(t);
}

Test(eng_basic, revision_and_data_survive_reopen)
{
	tc_puts(S.e, "/a", "1");
	tc_puts(S.e, "/b", "2");
	tc_puts(S.e, "/a", "3");
	tc_dels(S.e, "/b");
	int64_t before = eng_rev(S.e);
	cr_assert_eq(before, 5);
	struct eng_info i1, i2;
	TC_OK(eng_info(S.e, &i1));
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), before);
	TC_OK(eng_info(S.e, &i2));
	cr_assert_eq(i2.rev, before);
	cr_assert_str_eq(i1.hash, i2.hash);
	cr_assert_str_eq(i1.cluster_id, i2.cluster_id);
	tc_expect(S.e, "/a", 0, "3", 2, 4, 2);
	tc_expect(S.e, "/a", 2, "1", 2, 2, 1);
	tc_expect(S.e, "/b", 3, "2", 3, 3, 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/b", 2, 0, &r), LP_E_NOTFOUND);
	cr_assert_eq(tc_puts(S.e, "/c", "x"), before + 1);
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), before + 1);
	tc_expect(S.e, "/c", 0, "x", before + 1, before + 1, 1);
}

Test(eng_basic, bad_keys_are_refused)
{
	eng_txn *t;
	char big[ENG_KEY_MAX + 2];
	memset(big, 'k', sizeof big);
	big[0] = '/';
	TC_OK(eng_txn_new(S.e, &t));
	TC_RC(eng_txn_put(t, "", 0, "v", 1, ENG_NO_SLOT, NULL), LP_E_INVAL);
	TC_RC(eng_txn_del(t, "", 0, NULL), LP_E_INVAL);
	TC_RC(eng_txn_put(t, "a\0b", 3, "v", 1, ENG_NO_SLOT, NULL), LP_E_INVAL);
	TC_RC(eng_txn_put(t, "\0", 1, "v", 1, ENG_NO_SLOT, NULL), LP_E_INVAL);
	TC_RC(eng_txn_del(t, "ab\0", 3, NULL), LP_E_INVAL);
	TC_RC(eng_txn_put(t, big, ENG_KEY_MAX + 1, "v", 1, ENG_NO_SLOT, NULL),
	      LP_E_KEYTOOLONG);
	TC_RC(eng_txn_del(t, big, ENG_KEY_MAX + 1, NULL), LP_E_KEYTOOLONG);
	eng_txn_free(t);
	cr_assert_eq(eng_rev(S.e), 1);

	/* Exactly ENG_KEY_MAX bytes is fine. */
	struct eng_commit_res res = {0};
	TC_OK(tc_put(S.e, big, ENG_KEY_MAX, "v", 1, ENG_NO_SLOT, NULL, &res));
	cr_assert_eq(res.rev, 2);
	struct tc_rec r = {0};
	TC_OK(tc_get(S.e, big, ENG_KEY_MAX, 0, &r));
	cr_assert_eq(r.key_len, ENG_KEY_MAX);
	cr_assert(memcmp(r.key, big, ENG_KEY_MAX) == 0);
	tc_rec_free(&r);

	/* Reads refuse them too. */
	eng_rd *rd;
	struct eng_record rec = {0};
	TC_OK(eng_rd_begin(S.e, &rd));
	TC_RC(eng_get(rd, big, ENG_KEY_MAX + 1, 0, &rec), LP_E_KEYTOOLONG);
	TC_RC(eng_get(rd, "", 0, 0, &rec), LP_E_INVAL);
	lp_err rc = eng_get(rd, "a\0b", 3, 0, &rec);
	cr_assert(rc == LP_E_INVAL || rc == LP_E_NOTFOUND,
		  "get of a key with NUL: %s", lp_errname(rc));
	eng_rd_end(rd);

	/* Keys with every other byte value are fine. */
	uint8_t odd[255];
	for (int i = 0; i < 255; i++)
		odd[i] = (uint8_t)(i + 1);
	TC_OK(tc_put(S.e, odd, sizeof odd, "o", 1, ENG_NO_SLOT, NULL, &res));
	TC_OK(tc_get(S.e, odd, sizeof odd, 0, &r));
	cr_assert_eq(r.mod_rev, 3);
	tc_rec_free(&r);
}

Test(eng_basic, same_key_twice_in_one_txn_is_refused)
{
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, "1", 1, ENG_NO_SLOT, NULL));
	TC_RC(eng_txn_put(t, "/a", 2, "2", 1, ENG_NO_SLOT, NULL), LP_E_INVAL);
	TC_RC(eng_txn_del(t, "/a", 2, NULL), LP_E_INVAL);
	eng_txn_free(t);

	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_del(t, "/b", 2, NULL));
	TC_RC(eng_txn_put(t, "/b", 2, "2", 1, ENG_NO_SLOT, NULL), LP_E_INVAL);
	eng_txn_free(t);
	cr_assert_eq(eng_rev(S.e), 1);
	struct tc_rec r = {0};
	TC_RC(tc_get(S.e, "/a", 2, 0, &r), LP_E_NOTFOUND);
}

/* Past 16 ops a txn finds repeated keys through a hash set: every earlier
   key is still refused, keys that only share a prefix are not, and the
   whole txn commits with each key once. */
Test(eng_basic, same_key_twice_in_a_large_txn_is_refused)
{
	enum { N = 1000 };
	eng_txn *t;
	char k[32];
	TC_OK(eng_txn_new(S.e, &t));
	for (int i = 0; i < N; i++) {
		int kl = snprintf(k, sizeof k, "/big/%d", i);
		TC_OK(eng_txn_put(t, k, (size_t)kl, "v", 1, ENG_NO_SLOT, NULL));
		/* Each step, one earlier key again: refused. */
		kl = snprintf(k, sizeof k, "/big/%d", (i * 7) % (i + 1));
		TC_RC(eng_txn_del(t, k, (size_t)kl, NULL), LP_E_INVAL);
	}
	for (int i = 0; i < N; i += 37) {
		int kl = snprintf(k, sizeof k, "/big/%d", i);
		TC_RC(eng_txn_put(t, k, (size_t)kl, "w", 1, ENG_NO_SLOT, NULL),
		      LP_E_INVAL);
		/* A longer key with the same prefix is another key. */
		kl = snprintf(k, sizeof k, "/big/%d/x", i);
		TC_OK(eng_txn_put(t, k, (size_t)kl, "x", 1, ENG_NO_SLOT, NULL));
	}
	struct eng_commit_res res;
	TC_OK(eng_txn_commit(t, &res));
	eng_txn_free(t);
	cr_assert_eq(res.rev, 2);
	struct eng_info info;
	TC_OK(eng_info(S.e, &info));
	cr_assert_eq(info.n_keys, N + (N + 36) / 37);
	tc_expect(S.e, "/big/999", 0, "v", 2, 2, 1);
	tc_expect(S.e, "/big/37/x", 0, "x", 2, 2, 1);
}

Test(eng_basic, values_empty_large_and_too_large)
{
	struct eng_commit_res res = {0};
	TC_OK(tc_put(S.e, "/empty", 6, "", 0, ENG_NO_SLOT, NULL, &res));
	struct tc_rec r = {0};
	TC_OK(tc_get(S.e, "/empty", 6, 0, &r));
	cr_assert_eq(r.value_len, 0);
	tc_rec_free(&r);

	/* A value larger than an LMDB page (overflow pages), with every byte
	   value including NUL. */
	size_t n = (1u << 20) + 17;
	uint8_t *v = tc_xmalloc(n);
	uint64_t st = 7;
	for (size_t i = 0; i < n; i++)
		v[i] = (uint8_t)ts_rand(&st);
	TC_OK(tc_put(S.e, "/big", 4, v, n, ENG_NO_SLOT, NULL, &res));
	TC_OK(tc_get(S.e, "/big", 4, 0, &r));
	cr_assert_eq(r.value_len, n);
	cr_assert(memcmp(r.value, v, n) == 0);
	tc_rec_free(&r);
	free(v);

	/* Too large: refused before it is copied (calloc'd pages are never
	   touched if the engine checks the size first). */
	uint8_t *huge = calloc(1, (size_t)ENG_VALUE_MAX + 1);
	cr_assert_not_null(huge);
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_RC(eng_txn_put(t, "/huge", 5, huge, (size_t)ENG_VALUE_MAX + 1,
			  ENG_NO_SLOT, NULL),
	      LP_E_VALTOOLARGE);
	eng_txn_free(t);
	free(huge);
	cr_assert_eq(eng_rev(S.e), 3);
}

Test(eng_basic, open_twice_in_one_process_is_locked)
{
	struct eng_opts o = S.o;
	eng *e2 = NULL;
	TC_RC(eng_open(&o, &e2), LP_E_LOCKED);
	cr_assert_null(e2);
}

Test(eng_basic, readonly_open_reads_and_refuses_writes)
{
	tc_puts(S.e, "/a", "1");
	tc_puts(S.e, "/a", "2");
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	struct eng_opts o = S.o;
	o.readonly = 1;
	eng *ro;
	TC_OK(eng_open(&o, &ro));
	cr_assert_eq(eng_rev(ro), 3);
	tc_expect(ro, "/a", 0, "2", 2, 3, 2);
	tc_expect(ro, "/a", 2, "1", 2, 2, 1);
	eng_txn *t = NULL;
	lp_err rc = eng_txn_new(ro, &t);
	if (rc == LP_OK) {
		/* The header allows refusing at commit as well. */
		rc = eng_txn_put(t, "/b", 2, "x", 1, ENG_NO_SLOT, NULL);
		if (rc == LP_OK) {
			struct eng_commit_res res = {0};
			rc = eng_txn_commit(t, &res);
		}
		eng_txn_free(t);
	}
	cr_assert_eq(rc, LP_E_INVAL, "write on a read-only store: %s",
		     lp_errname(rc));
	TC_RC(eng_compact(ro, 2, NULL), LP_E_INVAL);
	TC_RC(eng_bump(ro, 10, NULL), LP_E_INVAL);
	tc_check(ro);
	eng_close(ro);
	/* And it opens read-write again afterwards. */
	TC_OK(eng_open(&S.o, &S.e));
	cr_assert_eq(tc_puts(S.e, "/b", "x"), 4);
}

struct waiter_arg {
	eng *e;
	int64_t want;
	lp_err rc;
};

static void *wait_thread(void *p)
{
	struct waiter_arg *a = p;
	a->rc = eng_wait_rev(a->e, a->want, tc_wait_ms());
	return NULL;
}

Test(eng_basic, wait_rev)
{
	TC_OK(eng_wait_rev(S.e, 1, 0));
	tc_puts(S.e, "/a", "1");
	TC_OK(eng_wait_rev(S.e, 2, 0));
	/* Nobody writes: a short wait times out with LP_E_FUTURE. */
	TC_RC(eng_wait_rev(S.e, 3, 5), LP_E_FUTURE);

	/* A waiter blocked in eng_wait_rev wakes when a write reaches it. */
	pthread_t th;
	struct waiter_arg a = {.e = S.e, .want = 4, .rc = LP_E_IO};
	cr_assert_eq(pthread_create(&th, NULL, wait_thread, &a), 0);
	tc_puts(S.e, "/a", "2");
	tc_puts(S.e, "/a", "3");
	pthread_join(th, NULL);
	TC_RC(a.rc, LP_OK);
}

struct writer_arg {
	eng *e;
	lp_err rc;
	int64_t rev;
};

static void *write_thread(void *p)
{
	struct writer_arg *a = p;
	struct eng_commit_res res = {0};
	a->rc = tc_put(a->e, "/a", 2, "later", 5, ENG_NO_SLOT, NULL, &res);
	a->rev = res.rev;
	return NULL;
}

/* A snapshot keeps seeing its revision while another thread commits (the
   default 32 GiB map never needs to grow here, so holding the snapshot
   cannot block the writer). */
Test(eng_basic, snapshot_is_isolated_from_later_commits)
{
	tc_puts(S.e, "/a", "first");
	eng_rd *r;
	TC_OK(eng_rd_begin(S.e, &r));
	cr_assert_eq(eng_rd_rev(r), 2);
	pthread_t th;
	struct writer_arg a = {.e = S.e, .rc = LP_E_IO};
	cr_assert_eq(pthread_create(&th, NULL, write_thread, &a), 0);
	pthread_join(th, NULL);
	TC_RC(a.rc, LP_OK);
	cr_assert_eq(a.rev, 3);
	struct eng_record rec = {0};
	TC_OK(eng_get(r, "/a", 2, 0, &rec));
	cr_assert_eq(rec.mod_rev, 2);
	cr_assert(memcmp(rec.value, "first", 5) == 0);
	cr_assert_eq(eng_rd_rev(r), 2);
	TC_RC(eng_get(r, "/a", 2, 3, &rec), LP_E_FUTURE);
	eng_rd_end(r);
	tc_expect(S.e, "/a", 0, "later", 2, 3, 2);
}

static void write_same(eng *e)
{
	tc_puts(e, "/x/1", "one");
	tc_puts(e, "/x/2", "two");
	tc_puts(e, "/x/1", "uno");
	tc_dels(e, "/x/2");
	tc_puts(e, "/x/3", "three");
}

Test(eng_basic, info_and_hash)
{
	write_same(S.e);
	struct eng_info a;
	TC_OK(eng_info(S.e, &a));
	cr_assert_eq(a.rev, 6);
	cr_assert_eq(a.n_keys, 2);
	cr_assert_eq(a.data_bytes, 3 + 5);
	cr_assert_gt(a.format, 0);
	cr_assert_eq(strlen(a.cluster_id), 32);
	cr_assert_eq(strspn(a.cluster_id, "0123456789abcdef"), 32);
	cr_assert_eq(strlen(a.hash), 16);
	cr_assert_eq(strspn(a.hash, "0123456789abcdef"), 16);
	cr_assert_gt(a.file_bytes, 0);
	cr_assert_geq(a.map_bytes, a.file_bytes);

	/* The same writes in another store: same content hash, another
	   cluster id. */
	struct tc_store s2;
	tc_open(&s2, "basic2", NULL);
	write_same(s2.e);
	struct eng_info b;
	TC_OK(eng_info(s2.e, &b));
	cr_assert_str_eq(a.hash, b.hash);
	cr_assert_str_neq(a.cluster_id, b.cluster_id);
	/* A different value changes the hash. */
	tc_puts(s2.e, "/x/3", "THREE");
	TC_OK(eng_info(s2.e, &b));
	cr_assert_str_neq(a.hash, b.hash);
	tc_done(&s2);

	struct eng_stats st;
	eng_stats(S.e, &st);
	cr_assert_eq(st.rev, 6);
	cr_assert_eq(st.txns, 5);
	cr_assert_geq(st.groups, 1);
	cr_assert_leq(st.groups, 5);
	cr_assert_eq(st.watchers, 0);
	cr_assert_eq(st.pins, 0);
}

/* Running out of reader slots is an error, not a hang, and the slots come
   back when the snapshots end. */
Test(eng_basic, readers_full_is_an_error)
{
	tc_done(&S);
	struct eng_opts o = {.nosync = 1, .max_readers = 8};
	tc_open(&S, "readers", &o);
	tc_puts(S.e, "/a", "1");
	eng_rd *rd[64];
	int n = 0;
	lp_err rc = LP_OK;
	while (n < 64) {
		rc = eng_rd_begin(S.e, &rd[n]);
		if (rc)
			break;
		n++;
	}
	cr_assert_eq(rc, LP_E_READERSFULL, "reader %d: %s", n, lp_errname(rc));
	cr_assert_geq(n, 4, "only %d readers with 8 slots", n);
	cr_assert_leq(n, 8);
	for (int i = 0; i < n; i++)
		eng_rd_end(rd[i]);
	tc_expect(S.e, "/a", 0, "1", 2, 2, 1);
	cr_assert_eq(tc_puts(S.e, "/a", "2"), 3);
}

/* The engine closed, open its LMDB environment directly: the main database
   (dbi 1, whose records name the others) and meta. */
static void raw_open(const char *dir, unsigned flags, MDB_env **env,
		     MDB_txn **txn, MDB_dbi *main, MDB_dbi *meta)
{
	cr_assert_eq(mdb_env_create(env), 0);
	cr_assert_eq(mdb_env_set_maxdbs(*env, 8), 0);
	cr_assert_eq(mdb_env_set_mapsize(*env, 64u << 20), 0);
	cr_assert_eq(mdb_env_open(*env, dir, flags, 0600), 0);
	cr_assert_eq(mdb_txn_begin(*env, NULL, flags & MDB_RDONLY, txn), 0);
	cr_assert_eq(mdb_dbi_open(*txn, NULL, 0, main), 0);
	cr_assert_eq(mdb_dbi_open(*txn, "meta", 0, meta), 0);
}

/* meta's record in the main database (its root page, depth, entries). */
static void meta_record(const char *dir, uint8_t *out, size_t *n)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi main, meta;
	raw_open(dir, MDB_RDONLY, &env, &txn, &main, &meta);
	MDB_val k = {4, "meta"}, v;
	cr_assert_eq(mdb_get(txn, main, &k, &v), 0);
	cr_assert_leq(v.mv_size, 64);
	memcpy(out, v.mv_data, v.mv_size);
	*n = v.mv_size;
	MDB_val rk = {3, "rev"}, rv;
	cr_assert_eq(mdb_get(txn, meta, &rk, &rv), MDB_NOTFOUND,
		     "a new store keeps its revision out of meta");
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Every commit writes the revision; it lives in the main database, whose
   page a commit rewrites anyway, so meta's page is not rewritten. */
Test(eng_basic, commits_leave_meta_untouched)
{
	tc_puts(S.e, "/a", "1");
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	uint8_t before[64], after[64];
	size_t nb, na;
	meta_record(S.dir, before, &nb);
	TC_OK(eng_open(&S.o, &S.e));
	tc_puts(S.e, "/b", "2");
	tc_puts(S.e, "/a", "3");
	tc_dels(S.e, "/b");
	int64_t rev = eng_rev(S.e);
	cr_assert_eq(rev, 5);
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	meta_record(S.dir, after, &na);
	cr_assert(nb == na && !memcmp(before, after, nb),
		  "meta was rewritten by a commit");
	TC_OK(eng_open(&S.o, &S.e));
	cr_assert_eq(eng_rev(S.e), rev);
}

/* A store written before the revision moved keeps it in meta: it opens at
   that revision and its next commit continues from it. */
Test(eng_basic, store_with_revision_in_meta_continues)
{
	tc_puts(S.e, "/a", "1");
	tc_puts(S.e, "/a", "2");
	int64_t rev = eng_rev(S.e);
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi main, meta;
	raw_open(S.dir, 0, &env, &txn, &main, &meta);
	MDB_val k = {9, "lapis.rev"}, rk = {3, "rev"}, rv = {8, &rev};
	cr_assert_eq(mdb_del(txn, main, &k, NULL), 0);
	cr_assert_eq(mdb_put(txn, meta, &rk, &rv, 0), 0);
	cr_assert_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	TC_OK(eng_open(&S.o, &S.e));
	cr_assert_eq(eng_rev(S.e), rev);
	tc_expect(S.e, "/a", 0, "2", 2, 3, 2);
	cr_assert_eq(tc_puts(S.e, "/b", "x"), rev + 1);
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), rev + 1);
	tc_expect(S.e, "/b", 0, "x", rev + 1, rev + 1, 1);
	tc_expect(S.e, "/a", 2, "1", 2, 2, 1);
}
