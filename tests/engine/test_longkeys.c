/*
 * test_longkeys.c -- keys longer than LMDB's 511-byte key limit (DESIGN.md
 * "Keys, values, revisions": up to 1 KiB): put, get, update, delete, reads
 * at old revisions, and byte-wise order in ranges when long and short keys
 * share long prefixes.
 *
 * Invariants checked
 *  1. Every key of 1..ENG_KEY_MAX bytes reads back as itself, with its own
 *     record, however long the prefix it shares with others.
 *  2. Ranges (whole, prefix, from/end bounds, paged with from = last key +
 *     "\0") return keys in memcmp order, shorter first on a common prefix,
 *     exactly as the model sorted with tc_keycmp, at the latest revision and
 *     at old ones.
 * The random key sets branch around byte 480-512, where an engine that
 * shortens or hashes long keys changes representation.
 */
#include "common.h"

static struct tc_store S;
static struct tm_model M;

static void setup(void)
{
	tc_open(&S, "longkeys", NULL);
	tm_init(&M);
}

static void teardown(void)
{
	tc_done(&S);
	tm_free(&M);
}

TestSuite(eng_longkeys, .init = setup, .fini = teardown);

static int64_t mput(const void *k, size_t kl, const char *v)
{
	struct eng_commit_res res = {0};
	lp_err rc = tc_put(S.e, k, kl, v, strlen(v), ENG_NO_SLOT, NULL, &res);
	cr_assert_eq(rc, LP_OK, "put of a %zu-byte key: %s", kl,
		     lp_errname(rc));
	tm_put(&M, k, kl, v, strlen(v), ENG_NO_SLOT, res.rev);
	return res.rev;
}

static int64_t mdel(const void *k, size_t kl)
{
	struct eng_commit_res res = {0};
	lp_err rc = tc_del(S.e, k, kl, NULL, &res);
	cr_assert_eq(rc, LP_OK, "del of a %zu-byte key: %s", kl,
		     lp_errname(rc));
	tm_del(&M, k, kl, res.rev);
	return res.rev;
}

/* Fill n bytes with a repeating, readable pattern. */
static void pattern(char *p, size_t n, char base)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(base + (char)(i % 26));
}

/* kube's worst case: /registry/<group 253>/<resource 63>/<ns 63>/<name 253>. */
static size_t kube_key(char *buf, char name_base)
{
	size_t n = 0;
	memcpy(buf, "/registry/", 10);
	n = 10;
	pattern(buf + n, 253, 'a');
	n += 253;
	buf[n++] = '/';
	pattern(buf + n, 63, 'a');
	n += 63;
	buf[n++] = '/';
	pattern(buf + n, 63, 'a');
	n += 63;
	buf[n++] = '/';
	pattern(buf + n, 253, name_base);
	n += 253;
	return n;
}

/* Check that every key of the model reads back right at rev (0: latest). */
static void check_gets(int64_t rev)
{
	int64_t at = rev ? rev : eng_rev(S.e);
	for (size_t i = 0; i < M.n; i++) {
		const struct tm_key *k = M.keys[i];
		const struct tm_ver *v = tm_at(k, at);
		struct tc_rec r = {0};
		lp_err rc = tc_get(S.e, k->key, k->key_len, rev, &r);
		if (!v) {
			cr_assert_eq(rc, LP_E_NOTFOUND,
				     "get of %zu-byte key %zu"
				     " at %" PRId64 ": %s",
				     k->key_len, i, at, lp_errname(rc));
			continue;
		}
		cr_assert_eq(rc, LP_OK,
			     "get of %zu-byte key %zu at %" PRId64 ": %s",
			     k->key_len, i, at, lp_errname(rc));
		cr_assert_eq(r.key_len, k->key_len);
		cr_assert(memcmp(r.key, k->key, k->key_len) == 0);
		tm_assert_rec(&r, v, "get");
		tc_rec_free(&r);
	}
}

static void check_whole(const void *prefix, size_t plen, int64_t rev,
			const char *what)
{
	struct eng_range_req q = {.prefix = prefix,
				  .prefix_len = plen,
				  .at_rev = rev,
				  .flags = ENG_RANGE_COUNT};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	lp_err rc = tc_range(S.e, &q, &l, &res);
	cr_assert_eq(rc, LP_OK, "%s: %s", what, lp_errname(rc));
	size_t after =
	    tm_assert_range(&M, &q, rev ? rev : eng_rev(S.e), &l, what);
	cr_assert_eq(after, 0);
	cr_assert_eq(res.more, 0, "%s: more", what);
	tc_list_free(&l);
}

/* Page through a prefix with the given limit; pages must equal the model. */
static void check_pages(const void *prefix, size_t plen, int64_t rev,
			uint64_t limit, const char *what)
{
	uint8_t from[ENG_KEY_MAX + 1];
	size_t from_len = 0, total = 0, remaining = 0;
	int first = 1;
	for (;;) {
		struct eng_range_req q = {.prefix = prefix,
					  .prefix_len = plen,
					  .at_rev = rev,
					  .limit = limit,
					  .flags = ENG_RANGE_COUNT};
		if (!first) {
			q.from = from;
			q.from_len = from_len;
		}
		struct tc_list l = {0};
		struct eng_range_res res = {0};
		lp_err rc = tc_range(S.e, &q, &l, &res);
		cr_assert_eq(rc, LP_OK, "%s: %s", what, lp_errname(rc));
		char w[96];
		snprintf(w, sizeof w, "%s limit %" PRIu64 " after %zu", what,
			 limit, total);
		size_t after =
		    tm_assert_range(&M, &q, rev ? rev : eng_rev(S.e), &l, w);
		cr_assert_eq(res.more, after > 0, "%s: more %d after %zu", w,
			     res.more, after);
		cr_assert_eq(res.n_remaining, after,
			     "%s: n_remaining %" PRIu64 " want %zu", w,
			     res.n_remaining, after);
		if (!first)
			cr_assert_eq(remaining, l.n + after);
		remaining = after;
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
}

Test(eng_longkeys, kube_worst_case_key)
{
	char k1[700], k2[700];
	size_t n1 = kube_key(k1, 'a');
	size_t n2 = kube_key(k2, 'b');
	cr_assert_eq(n1, 645);
	cr_assert_eq(mput("/registry/short", 15, "s"), 2);
	cr_assert_eq(mput(k1, n1, "one"), 3);
	cr_assert_eq(mput(k2, n2, "two"), 4);
	cr_assert_eq(mput(k1, n1, "one-2"), 5);
	struct tc_rec r = {0};
	TC_OK(tc_get(S.e, k1, n1, 0, &r));
	cr_assert_eq(r.key_len, n1);
	cr_assert(memcmp(r.key, k1, n1) == 0);
	cr_assert_str_eq((char *)r.value, "one-2");
	cr_assert_eq(r.create_rev, 3);
	cr_assert_eq(r.mod_rev, 5);
	cr_assert_eq(r.version, 2);
	tc_rec_free(&r);
	TC_OK(tc_get(S.e, k1, n1, 4, &r));
	cr_assert_str_eq((char *)r.value, "one");
	tc_rec_free(&r);
	/* A key that differs only in its last byte is another key. */
	k1[n1 - 1] ^= 1;
	TC_RC(tc_get(S.e, k1, n1, 0, &r), LP_E_NOTFOUND);
	k1[n1 - 1] ^= 1;
	/* A proper prefix of a long key is another key too. */
	TC_RC(tc_get(S.e, k1, n1 - 1, 0, &r), LP_E_NOTFOUND);
	TC_RC(tc_get(S.e, k1, 500, 0, &r), LP_E_NOTFOUND);
	cr_assert_eq(mdel(k1, n1), 6);
	TC_RC(tc_get(S.e, k1, n1, 0, &r), LP_E_NOTFOUND);
	TC_OK(tc_get(S.e, k1, n1, 5, &r));
	tc_rec_free(&r);
	/* A compare on a long key. */
	struct eng_cmp c = {.kind = ENG_CMP_MOD, .mod_rev = 4};
	struct eng_commit_res res = {0};
	TC_OK(tc_put(S.e, k2, n2, "three", 5, ENG_NO_SLOT, &c, &res));
	cr_assert_eq(res.rev, 7);
	tm_put(&M, k2, n2, "three", 5, ENG_NO_SLOT, 7);
	TC_RC(tc_put(S.e, k2, n2, "four", 4, ENG_NO_SLOT, &c, &res),
	      LP_E_CONFLICT);
	check_gets(0);
	check_whole("/registry/", 10, 0, "latest");
	check_whole("/registry/", 10, 5, "at 5");
	tc_reopen(&S);
	check_gets(0);
	check_gets(4);
}

Test(eng_longkeys, lengths_around_the_lmdb_limit)
{
	static const size_t lens[] = {1,   100, 478, 479,  480,	 481, 482,
				      495, 496, 497, 500,  505,	 510, 511,
				      512, 513, 600, 1000, 1023, 1024};
	char k[ENG_KEY_MAX];
	pattern(k, sizeof k, 'a');
	k[0] = '/';
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
		char v[32];
		snprintf(v, sizeof v, "len %zu", lens[i]);
		mput(k, lens[i], v);
	}
	check_gets(0);
	int64_t mid = eng_rev(S.e);
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i += 2)
		mdel(k, lens[i]);
	for (size_t i = 1; i < sizeof lens / sizeof *lens; i += 3)
		mput(k, lens[i], "again");
	check_gets(0);
	check_gets(mid);
	check_whole("/", 1, 0, "latest");
	check_whole("/", 1, mid, "mid");
	for (uint64_t limit = 1; limit <= 4; limit++) {
		check_pages("/", 1, 0, limit, "latest");
		check_pages("/", 1, mid, limit, "mid");
	}
	/* Prefixes that are themselves long keys' prefixes. */
	size_t plens[] = {479, 480, 481, 500, 512, 1000};
	for (size_t i = 0; i < sizeof plens / sizeof *plens; i++) {
		check_whole(k, plens[i], 0, "long prefix");
		check_whole(k, plens[i], mid, "long prefix at mid");
		check_pages(k, plens[i], mid, 2, "long prefix pages");
	}
}

/* A key exactly as long as an engine's internal form of a long key (for a
   480-byte cut plus 16 hex digits: 496) must still be treated as long:
   read back as itself, sorted among its group, and pass eng_check. */
Test(eng_longkeys, keys_of_every_length_near_the_cut_pass_check)
{
	char k[ENG_KEY_MAX];
	pattern(k, sizeof k, 'a');
	k[0] = '/';
	for (size_t len = 470; len <= 530; len++) {
		mput(k, len, "v");
		char msg[512] = "";
		lp_err rc = eng_check(S.e, msg, sizeof msg);
		cr_assert_eq(rc, LP_OK, "after a %zu-byte key: %s: %s", len,
			     lp_errname(rc), msg);
	}
	check_gets(0);
	check_whole("/", 1, 0, "470..530");
}

/* Random keys branching around bytes 470..520 of a common stem. */
static size_t rand_key(uint64_t *st, const char *stem, size_t stem_len,
		       char *out)
{
	static const char alpha[] = {'\x01', '-', '/', '0',    '9',    'a',
				     'f',    'g', 'z', '\x7f', '\x80', '\xff'};
	size_t base = 470 + (size_t)(ts_rand(st) % 50);
	if (base > stem_len)
		base = stem_len;
	memcpy(out, stem, base);
	size_t n = base;
	size_t tail;
	switch (ts_rand(st) % 4) {
	case 0:
		tail = ts_rand(st) % 4;
		break;
	case 1:
		tail = ts_rand(st) % 40;
		break;
	case 2:
		tail = ts_rand(st) % 300;
		break;
	default:
		tail = ENG_KEY_MAX - n;
		break;
	}
	if (n + tail > ENG_KEY_MAX)
		tail = ENG_KEY_MAX - n;
	for (size_t i = 0; i < tail; i++) {
		/* Mostly a few symbols so that keys share long prefixes. */
		uint64_t x = ts_rand(st);
		out[n++] = (x % 8 < 6) ? alpha[(x >> 8) % 3 + 4]
				       : alpha[(x >> 8) % sizeof alpha];
	}
	return n;
}

Test(eng_longkeys, mixed_long_and_short_keys_in_order)
{
	uint64_t seed = ts_seed("eng_longkeys.mixed_long_and_short_keys", 7);
	uint64_t st = seed;
	char stem[ENG_KEY_MAX];
	memcpy(stem, "/registry/", 10);
	pattern(stem + 10, sizeof stem - 10, 'a');
	char k[ENG_KEY_MAX];
	size_t kl;

	/* Fixed shapes: the stem cut at each length near the boundary, with
	   low, middle and high bytes appended. */
	for (size_t len = 476; len <= 516; len++) {
		mput(stem, len, "stem");
		static const char tails[] = {'\x01', '0', 'a', 'z', '\xff'};
		for (size_t t = 0; t < sizeof tails; t++) {
			memcpy(k, stem, len);
			k[len] = tails[t];
			mput(k, len + 1, "tail");
			memset(k + len + 1, tails[t], 200);
			mput(k, len + 201, "long tail");
		}
	}
	/* Random keys, and short keys under the same top prefix. */
	for (int i = 0; i < 400; i++) {
		kl = rand_key(&st, stem, sizeof stem, k);
		char v[32];
		snprintf(v, sizeof v, "r%d", i);
		mput(k, kl, v);
	}
	for (int i = 0; i < 20; i++) {
		kl = (size_t)snprintf(k, sizeof k, "/registry/%c%d",
				      'a' + i % 26, i);
		mput(k, kl, "short");
	}
	int64_t r1 = eng_rev(S.e);
	/* History: delete and update some long keys after r1. */
	for (size_t i = 0; i < M.n; i += 3) {
		if (i % 2)
			mdel(M.keys[i]->key, M.keys[i]->key_len);
		else
			mput(M.keys[i]->key, M.keys[i]->key_len, "later");
	}
	check_gets(0);
	check_gets(r1);
	check_whole("/registry/", 10, 0, "latest");
	check_whole("/registry/", 10, r1, "at r1");
	for (uint64_t limit = 1; limit <= 9; limit += 4) {
		check_pages("/registry/", 10, 0, limit, "latest");
		check_pages("/registry/", 10, r1, limit, "at r1");
	}
	/* Long prefixes and long from/end bounds. */
	for (int i = 0; i < 30; i++) {
		size_t plen = 470 + (size_t)(ts_rand(&st) % 60);
		check_whole(stem, plen, 0, "long prefix");
		check_whole(stem, plen, r1, "long prefix at r1");
		check_pages(stem, plen, 0, 3, "long prefix");
		const struct tm_key *a = M.keys[ts_rand(&st) % M.n];
		const struct tm_key *b = M.keys[ts_rand(&st) % M.n];
		if (tc_keycmp(a->key, a->key_len, b->key, b->key_len) > 0) {
			const struct tm_key *x = a;
			a = b;
			b = x;
		}
		struct eng_range_req q = {.from = a->key,
					  .from_len = a->key_len,
					  .end = b->key,
					  .end_len = b->key_len,
					  .flags = ENG_RANGE_COUNT};
		struct tc_list l = {0};
		struct eng_range_res res = {0};
		TC_OK(tc_range(S.e, &q, &l, &res));
		size_t after =
		    tm_assert_range(&M, &q, eng_rev(S.e), &l, "from/end");
		cr_assert_eq(after, 0);
		tc_list_free(&l);
		q.at_rev = r1;
		q.limit = 5;
		TC_OK(tc_range(S.e, &q, &l, &res));
		after = tm_assert_range(&M, &q, r1, &l, "from/end at r1");
		cr_assert_eq(res.n_remaining, after);
		tc_list_free(&l);
	}
	tc_reopen(&S);
	check_whole("/registry/", 10, 0, "after reopen");
}

/* A callback that ranges again on the snapshot its walk runs in. */
struct nested {
	eng_rd *rd;
	int64_t rev;	  /* the inner walks' at_rev (0: latest) */
	int64_t want_rev; /* what the model says they see */
	struct tc_list outer;
	size_t inner_walks;
};

static enum eng_take nested_fn(void *ud, const struct eng_record *r)
{
	struct nested *x = ud;
	tc_list_add(&x->outer, r);
	/* The whole prefix, so the inner walk sorts the long-key groups the
	   outer one is delivering from. */
	struct eng_range_req q = {.prefix = "/registry/",
				  .prefix_len = 10,
				  .at_rev = x->rev,
				  .flags = ENG_RANGE_COUNT};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	lp_err rc = eng_range(x->rd, &q, tc_collect, &l, &res);
	cr_assert_eq(rc, LP_OK, "inner range: %s", lp_errname(rc));
	size_t after = tm_assert_range(&M, &q, x->want_rev, &l, "inner");
	cr_assert_eq(after, 0);
	tc_list_free(&l);
	x->inner_walks++;
	return ENG_TAKE;
}

/*
 * A range callback may range on the same eng_rd: the outer walk keeps the
 * eng_rd's cursors and its long-key sort scratch, so the inner walk must
 * use its own, and the outer walk go on where it was, in order.
 */
Test(eng_longkeys, range_inside_a_range_callback)
{
	uint64_t st = ts_seed("eng_longkeys.range_inside_a_range_callback", 11);
	char stem[ENG_KEY_MAX];
	memcpy(stem, "/registry/", 10);
	pattern(stem + 10, sizeof stem - 10, 'a');
	char k[ENG_KEY_MAX];
	for (int i = 0; i < 40; i++) {
		size_t kl = rand_key(&st, stem, sizeof stem, k);
		mput(k, kl, "v1");
	}
	for (int i = 0; i < 5; i++) {
		size_t kl =
		    (size_t)snprintf(k, sizeof k, "/registry/%c%d", 'a' + i, i);
		mput(k, kl, "short");
	}
	int64_t r1 = eng_rev(S.e);
	for (size_t i = 0; i < M.n; i += 2)
		mput(M.keys[i]->key, M.keys[i]->key_len, "v2");
	int64_t now = eng_rev(S.e);

	const int64_t outer_revs[] = {0, r1};
	for (size_t o = 0; o < 2; o++) {
		for (size_t in = 0; in < 2; in++) {
			struct nested x = {.rev = in ? r1 : 0,
					   .want_rev = in ? r1 : now};
			TC_OK(eng_rd_begin(S.e, &x.rd));
			struct eng_range_req q = {.prefix = "/registry/",
						  .prefix_len = 10,
						  .at_rev = outer_revs[o],
						  .limit = 30,
						  .flags = ENG_RANGE_COUNT};
			struct eng_range_res res = {0};
			lp_err rc = eng_range(x.rd, &q, nested_fn, &x, &res);
			cr_assert_eq(rc, LP_OK, "outer: %s", lp_errname(rc));
			size_t after =
			    tm_assert_range(&M, &q, outer_revs[o] ? r1 : now,
					    &x.outer, "outer");
			cr_assert_eq(res.n_remaining, after);
			cr_assert_eq(x.inner_walks, x.outer.n);
			cr_assert_eq(x.outer.n, 30);
			/* The walk's cursors serve the next walk as well. */
			struct tc_list l = {0};
			q.limit = 0;
			TC_OK(eng_range(x.rd, &q, tc_collect, &l, &res));
			after = tm_assert_range(
			    &M, &q, outer_revs[o] ? r1 : now, &l, "after");
			cr_assert_eq(after, 0);
			tc_list_free(&l);
			eng_rd_end(x.rd);
			tc_list_free(&x.outer);
		}
	}
}
