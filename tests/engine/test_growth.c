/*
 * test_growth.c -- the map grows on its own (DESIGN.md "Engine on LMDB"),
 * and a configured maximum size ends in LP_E_FULL without harm.
 *
 * Invariants checked
 *  1. With a 1 MiB initial map, 20+ MiB of writes all succeed while reader
 *     threads keep reading (short snapshots); eng_stats counts the grows;
 *     every value reads back right afterwards.
 *  2. With max_size 4 MiB, writes eventually fail LP_E_FULL; a failed write
 *     consumes no revision; everything acknowledged before stays readable,
 *     eng_check passes, and the store reopens with the same content.
 *  3. A synced store keeps a tail of written zeros after the pages LMDB
 *     uses (env.c, eng__prealloc): after synced commits the file is longer
 *     than LMDB's pages by at least a MiB, the tail holds only zeros (no
 *     page in use was ever overwritten), the file stays within the map and
 *     the maximum size up to LP_E_FULL, and everything reads back after a
 *     reopen. A store without fsync keeps no tail.
 */
#include <fcntl.h>
#include <lmdb.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static struct tc_store S;

static void teardown(void)
{
	tc_done(&S);
}

/* The value of key i at version v: n bytes derived from (i, v). */
static void fill_value(uint8_t *p, size_t n, int i, int v)
{
	uint64_t st = ((uint64_t)i << 20) ^ (uint64_t)v;
	for (size_t j = 0; j < n; j += 8) {
		uint64_t x = ts_rand(&st);
		memcpy(p + j, &x, n - j < 8 ? n - j : 8);
	}
	/* A readable header so a mismatch message shows what was read. */
	snprintf((char *)p, n, "k%d v%d", i, v);
}

#define G_KEYS 800
#define G_VAL (16 * 1024)
#define G_READERS 2

struct g_shared {
	eng *e;
	_Atomic int written; /* keys [0, written) exist */
	_Atomic int version[G_KEYS];
	_Atomic int stop;
};

struct g_reader {
	struct g_shared *sh;
	uint64_t seed;
	long reads, ranges;
	char err[200];
};

static void *g_read(void *p)
{
	struct g_reader *a = p;
	uint64_t st = a->seed;
	uint8_t *want = tc_xmalloc(G_VAL);
	while (!atomic_load(&a->sh->stop)) {
		int n = atomic_load(&a->sh->written);
		if (n == 0)
			continue;
		int i = (int)(ts_rand(&st) % (uint64_t)n);
		char key[32];
		int kl = snprintf(key, sizeof key, "/g/%05d", i);
		eng_rd *r;
		lp_err rc = eng_rd_begin(a->sh->e, &r);
		if (rc) {
			snprintf(a->err, sizeof a->err, "rd_begin: %s",
				 lp_errname(rc));
			break;
		}
		struct eng_record rec;
		rc = eng_get(r, key, (size_t)kl, 0, &rec);
		if (rc) {
			eng_rd_end(r);
			snprintf(a->err, sizeof a->err, "get %s: %s", key,
				 lp_errname(rc));
			break;
		}
		/* The version may have moved on since; check the value matches
		   the version the record says it is. */
		fill_value(want, G_VAL, i, (int)rec.version);
		if (rec.value_len != G_VAL || memcmp(rec.value, want, G_VAL)) {
			snprintf(a->err, sizeof a->err,
				 "get %s: bad value '%.20s'"
				 " at version %" PRId64,
				 key, (const char *)rec.value, rec.version);
			eng_rd_end(r);
			break;
		}
		a->reads++;
		if (ts_rand(&st) % 4 == 0) {
			struct eng_range_req q = {.prefix = "/g/",
						  .prefix_len = 3,
						  .from = key,
						  .from_len = (size_t)kl,
						  .limit = 5};
			struct eng_range_res res = {0};
			struct tc_list l = {0};
			rc = eng_range(r, &q, tc_collect, &l, &res);
			if (rc || l.n == 0 ||
			    memcmp(l.v[0].key, key, (size_t)kl)) {
				snprintf(a->err, sizeof a->err,
					 "range from %s: %s (%zu records)", key,
					 lp_errname(rc), l.n);
				tc_list_free(&l);
				eng_rd_end(r);
				break;
			}
			tc_list_free(&l);
			a->ranges++;
		}
		eng_rd_end(r);
	}
	free(want);
	return NULL;
}

Test(eng_growth, map_grows_while_readers_read, .fini = teardown)
{
	struct eng_opts o = {.nosync = 1, .initial_map = 1u << 20};
	tc_open(&S, "growth", &o);
	uint64_t seed = ts_seed("eng_growth.map_grows", 99);
	static struct g_shared sh;
	memset(&sh, 0, sizeof sh);
	sh.e = S.e;
	static struct g_reader rd[G_READERS];
	pthread_t th[G_READERS];
	for (int i = 0; i < G_READERS; i++) {
		memset(&rd[i], 0, sizeof rd[i]);
		rd[i].sh = &sh;
		rd[i].seed = seed + (uint64_t)i;
		cr_assert_eq(pthread_create(&th[i], NULL, g_read, &rd[i]), 0);
	}
	uint8_t *val = tc_xmalloc(G_VAL);
	uint64_t st = seed;
	size_t bytes = 0;
	/* 800 keys of 16 KiB (12.5 MiB), then 600 updates (9.4 MiB more, plus
	   the history they leave): over 20 MiB through a 1 MiB first map. */
	for (int step = 0; step < G_KEYS + 600; step++) {
		int i = step < G_KEYS ? step : (int)(ts_rand(&st) % G_KEYS);
		int v = atomic_load(&sh.version[i]) + 1;
		fill_value(val, G_VAL, i, v);
		char key[32];
		int kl = snprintf(key, sizeof key, "/g/%05d", i);
		struct eng_commit_res res = {0};
		lp_err rc = tc_put(S.e, key, (size_t)kl, val, G_VAL,
				   ENG_NO_SLOT, NULL, &res);
		cr_assert_eq(rc, LP_OK, "write %d (%zu bytes so far): %s", step,
			     bytes, lp_errname(rc));
		atomic_store(&sh.version[i], v);
		if (step < G_KEYS)
			atomic_store(&sh.written, step + 1);
		bytes += G_VAL;
	}
	atomic_store(&sh.stop, 1);
	for (int i = 0; i < G_READERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < G_READERS; i++) {
		cr_assert_eq(rd[i].err[0], 0, "reader %d: %s", i, rd[i].err);
		cr_log_info("reader %d: %ld gets, %ld ranges", i, rd[i].reads,
			    rd[i].ranges);
	}
	struct eng_stats stt;
	eng_stats(S.e, &stt);
	cr_assert_gt(stt.map_grows, 0, "the map never grew");
	cr_assert_gt(stt.map_bytes, 20u << 20);
	tc_check(S.e);
	for (int i = 0; i < G_KEYS; i++) {
		char key[32];
		snprintf(key, sizeof key, "/g/%05d", i);
		struct tc_rec r = {0};
		TC_OK(tc_get(S.e, key, strlen(key), 0, &r));
		fill_value(val, G_VAL, i, atomic_load(&sh.version[i]));
		cr_assert_eq(r.value_len, G_VAL);
		cr_assert(memcmp(r.value, val, G_VAL) == 0, "%s", key);
		tc_rec_free(&r);
	}
	tc_reopen(&S);
	struct eng_info in;
	TC_OK(eng_info(S.e, &in));
	cr_assert_eq(in.n_keys, G_KEYS);
	free(val);
}

#define F_VAL (64 * 1024)

Test(eng_growth, full_store_fails_cleanly, .fini = teardown)
{
	struct eng_opts o = {
	    .nosync = 1, .initial_map = 1u << 20, .max_size = 4u << 20};
	tc_open(&S, "full", &o);
	uint8_t *val = tc_xmalloc(F_VAL);
	int acked = 0;
	lp_err rc = LP_OK;
	int64_t last_rev = 1;
	for (int i = 0; i < 1000; i++) {
		fill_value(val, F_VAL, i, 1);
		char key[32];
		int kl = snprintf(key, sizeof key, "/f/%04d", i);
		struct eng_commit_res res = {0};
		rc = tc_put(S.e, key, (size_t)kl, val, F_VAL, ENG_NO_SLOT, NULL,
			    &res);
		if (rc)
			break;
		cr_assert_eq(res.rev, last_rev + 1);
		last_rev = res.rev;
		acked++;
	}
	cr_assert_eq(rc, LP_E_FULL,
		     "after %d writes of 64 KiB into a 4 MiB store: %s", acked,
		     lp_errname(rc));
	cr_assert_gt(acked, 10, "only %d writes fit", acked);
	cr_assert_lt(acked, 64);
	/* The failed write consumed no revision; a huge one fails too. */
	cr_assert_eq(eng_rev(S.e), last_rev);
	uint8_t *huge = calloc(1, 8u << 20);
	cr_assert_not_null(huge);
	struct eng_commit_res res = {0};
	TC_RC(
	    tc_put(S.e, "/f/huge", 7, huge, 8u << 20, ENG_NO_SLOT, NULL, &res),
	    LP_E_FULL);
	free(huge);
	cr_assert_eq(eng_rev(S.e), last_rev);

	/* Everything acknowledged is there. */
	tc_check(S.e);
	for (int i = 0; i < acked; i++) {
		char key[32];
		snprintf(key, sizeof key, "/f/%04d", i);
		struct tc_rec r = {0};
		TC_OK(tc_get(S.e, key, strlen(key), 0, &r));
		fill_value(val, F_VAL, i, 1);
		cr_assert_eq(r.value_len, F_VAL);
		cr_assert(memcmp(r.value, val, F_VAL) == 0);
		cr_assert_eq(r.mod_rev, i + 2);
		tc_rec_free(&r);
	}
	struct tc_rec r = {0};
	char key[32];
	snprintf(key, sizeof key, "/f/%04d", acked);
	TC_RC(tc_get(S.e, key, strlen(key), 0, &r), LP_E_NOTFOUND);
	struct eng_info in;
	TC_OK(eng_info(S.e, &in));
	cr_assert_leq(in.map_bytes, 4u << 20);
	cr_assert_leq(in.file_bytes, 4u << 20);
	cr_assert_eq(in.n_keys, (uint64_t)acked);

	/* Reopen: the same content; small writes may or may not fit, but
	   whatever is acknowledged is kept. */
	tc_reopen(&S);
	cr_assert_eq(eng_rev(S.e), last_rev);
	struct eng_info in2;
	TC_OK(eng_info(S.e, &in2));
	cr_assert_str_eq(in.hash, in2.hash);
	rc = tc_put(S.e, "/f/small", 8, "s", 1, ENG_NO_SLOT, NULL, &res);
	cr_assert(rc == LP_OK || rc == LP_E_FULL, "small write: %s",
		  lp_errname(rc));
	if (rc == LP_OK)
		cr_assert_eq(res.rev, last_rev + 1);
	tc_check(S.e);
	free(val);
}

/* LMDB's used bytes ((last page + 1) * page size) and the file's size, read
   with LMDB itself while the engine is closed. */
static void used_and_size(const char *dir, uint64_t *used, uint64_t *size)
{
	MDB_env *env;
	cr_assert_eq(mdb_env_create(&env), 0);
	cr_assert_eq(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
	MDB_envinfo ei;
	MDB_stat ms;
	cr_assert_eq(mdb_env_info(env, &ei), 0);
	cr_assert_eq(mdb_env_stat(env, &ms), 0);
	*used = ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize;
	mdb_env_close(env);
	char path[4096];
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	*size = (uint64_t)st.st_size;
}

/* Whether data.mdb holds only zero bytes in [from, to). */
static bool zeros_between(const char *dir, uint64_t from, uint64_t to)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	static uint8_t buf[1 << 16];
	bool ok = true;
	for (uint64_t off = from; ok && off < to;) {
		size_t n = to - off < sizeof buf ? (size_t)(to - off) : sizeof buf;
		ssize_t r = pread(fd, buf, n, (off_t)off);
		cr_assert_gt(r, 0);
		for (ssize_t j = 0; j < r; j++)
			if (buf[j]) {
				ok = false;
				break;
			}
		off += (uint64_t)r;
	}
	close(fd);
	return ok;
}

#define P_VAL (16 * 1024)
#define P_MAX (8u << 20)

/* Keys /p/0000.. /p/<n-1>, one synced (or not) commit each, of P_VAL bytes
   from fill_value; val is the scratch buffer. */
static void put_values(uint8_t *val, int n)
{
	for (int i = 0; i < n; i++) {
		fill_value(val, P_VAL, i, 1);
		char key[32];
		snprintf(key, sizeof key, "/p/%04d", i);
		TC_OK(tc_put(S.e, key, strlen(key), val, P_VAL, ENG_NO_SLOT,
			     NULL, NULL));
	}
}

Test(eng_growth, synced_store_keeps_a_zero_tail, .fini = teardown)
{
	struct eng_opts o = {.max_size = P_MAX}; /* the map: P_MAX */
	tc_open(&S, "prealloc", &o);
	uint8_t *val = tc_xmalloc(P_VAL);
	put_values(val, 100);
	tc_check(S.e);
	eng_close(S.e);
	S.e = NULL;
	uint64_t used, size;
	used_and_size(S.dir, &used, &size);
	cr_assert_geq(size, used + (1u << 20), "file %llu, LMDB uses %llu",
		      (unsigned long long)size, (unsigned long long)used);
	cr_assert(zeros_between(S.dir, used, size));
	TC_OK(eng_open(&S.o, &S.e));
	for (int i = 0; i < 100; i++) {
		char key[32];
		snprintf(key, sizeof key, "/p/%04d", i);
		struct tc_rec r = {0};
		TC_OK(tc_get(S.e, key, strlen(key), 0, &r));
		fill_value(val, P_VAL, i, 1);
		cr_assert_eq(r.value_len, P_VAL);
		cr_assert(memcmp(r.value, val, P_VAL) == 0);
		tc_rec_free(&r);
	}
	/* Up to the maximum size: the tail never takes the file past it. */
	lp_err rc = LP_OK;
	for (int i = 100; i < 1000 && rc == LP_OK; i++) {
		fill_value(val, P_VAL, i, 1);
		char key[32];
		snprintf(key, sizeof key, "/p/%04d", i);
		rc = tc_put(S.e, key, strlen(key), val, P_VAL, ENG_NO_SLOT, NULL,
			    NULL);
		struct eng_info in;
		TC_OK(eng_info(S.e, &in));
		cr_assert_leq(in.file_bytes, P_MAX);
		cr_assert_leq(in.file_bytes, in.map_bytes);
	}
	TC_RC(rc, LP_E_FULL);
	tc_reopen(&S);
	free(val);
}

Test(eng_growth, store_without_fsync_keeps_no_tail, .fini = teardown)
{
	struct eng_opts o = {.nosync = 1};
	tc_open(&S, "noprealloc", &o);
	uint8_t *val = tc_xmalloc(P_VAL);
	put_values(val, 100);
	eng_close(S.e);
	S.e = NULL;
	uint64_t used, size;
	used_and_size(S.dir, &used, &size);
	cr_assert_lt(size, used + (64u << 10), "file %llu, LMDB uses %llu",
		     (unsigned long long)size, (unsigned long long)used);
	free(val);
}
