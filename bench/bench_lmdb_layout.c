/*
 * bench_lmdb_layout.c -- what the engine's LMDB layout costs a synced
 * commit, in raw LMDB with no engine code: the writes of one engine
 * transaction in the engine's four named databases (state, history, log,
 * meta), the same writes in one B-tree with a tag byte per kind (no meta
 * record: the revision is the log's last key), and a plain put.
 *
 * It answers one question: would a format with one B-tree bring the
 * engine's synced commits nearer raw LMDB's? For each layout and group
 * size it prints synced commits per second and the 4 KiB pages written
 * per engine transaction (wchar of /proc/self/io).
 *
 * usage: bench-lmdb-layout [DIR] [SECONDS]   (DIR: a disk directory,
 * default /tmp; SECONDS per run, default 2). A benchmark, not a test.
 */
#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_KEYS 10000
#define VAL_LEN 1048

enum layout { NAMED, ONE_TREE, RAW };
static const char *const layout_names[] = {"four named DBs", "one B-tree",
					   "raw put"};

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static long long written(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long v = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "wchar:", 6))
			v = atoll(line + 6);
	if (f)
		fclose(f);
	return v;
}

static int check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "bench-lmdb-layout: %s: %s\n", what,
			mdb_strerror(rc));
		exit(1);
	}
	return rc;
}

static void be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

struct env {
	MDB_env *env;
	MDB_dbi state, hist, log, meta;
	uint64_t rev;
};

/* key i of the dataset into k (after a tag byte when tagged); its length */
static size_t key_of(unsigned i, bool create, bool tagged, char *k)
{
	k[0] = 's';
	int n = create
		    ? snprintf(k + 1, 64, "/registry/bench/ns-03/new-%08u", i)
		    : snprintf(k + 1, 64, "/registry/bench/ns-%02u/obj-%08u",
			       i % 16, (unsigned)(i * 2654435761u % 100000000));
	return (size_t)n + (tagged ? 1 : 0);
}

static void open_env(struct env *e, const char *dir, enum layout l)
{
	static char val[VAL_LEN];
	memset(val, 'x', sizeof val);
	check(mdb_env_create(&e->env), "env_create");
	check(mdb_env_set_mapsize(e->env, (size_t)1 << 32), "mapsize");
	check(mdb_env_set_maxdbs(e->env, 8), "maxdbs");
	check(mdb_env_open(e->env, dir, MDB_NOTLS | MDB_NOSYNC, 0600),
	      "env_open");
	MDB_txn *t;
	check(mdb_txn_begin(e->env, NULL, 0, &t), "txn_begin");
	if (l == NAMED) {
		check(mdb_dbi_open(t, "meta", MDB_CREATE, &e->meta), "meta");
		check(mdb_dbi_open(t, "state", MDB_CREATE, &e->state), "state");
		check(mdb_dbi_open(t, "hist", MDB_CREATE, &e->hist), "hist");
		check(mdb_dbi_open(t, "log", MDB_CREATE, &e->log), "log");
	} else {
		check(mdb_dbi_open(t, NULL, 0, &e->state), "main");
		e->hist = e->log = e->meta = e->state;
	}
	bool tagged = l == ONE_TREE;
	for (unsigned i = 0; i < N_KEYS; i++) {
		char k[80];
		size_t n = key_of(i, false, tagged, k);
		MDB_val kv = {n, tagged ? k : k + 1}, vv = {VAL_LEN, val};
		check(mdb_put(t, e->state, &kv, &vv, 0), "load");
	}
	check(mdb_txn_commit(t), "load commit");
	check(mdb_env_set_flags(e->env, MDB_NOSYNC, 0), "set_flags");
	check(mdb_env_sync(e->env, 1), "sync");
	e->rev = 1;
}

/* One engine transaction's writes: an update copies the old record to
   history; both log the change; the named layout also puts the revision
   into meta. */
static void engine_txn(struct env *e, MDB_txn *t, enum layout l, unsigned i,
		       bool create)
{
	static char val[VAL_LEN];
	bool tagged = l == ONE_TREE;
	char k[80];
	size_t n = key_of(i, create, tagged, k);
	MDB_val kv = {n, tagged ? k : k + 1}, vv = {VAL_LEN, val};
	if (l == RAW) {
		check(mdb_put(t, e->state, &kv, &vv, 0), "put");
		return;
	}
	size_t kl = n - (tagged ? 1 : 0);
	e->rev++;
	if (!create) {
		MDB_val old;
		check(mdb_get(t, e->state, &kv, &old), "get");
		static char copy[VAL_LEN];
		memcpy(copy, old.mv_data, old.mv_size);
		uint8_t hk[96];
		hk[0] = 'h';
		memcpy(hk + 1, k + 1, kl);
		be64(hk + 1 + kl, e->rev - 1);
		MDB_val hkv = {kl + 8 + (tagged ? 1 : 0), tagged ? hk : hk + 1},
			ov = {old.mv_size, copy};
		check(mdb_put(t, e->hist, &hkv, &ov, 0), "hist");
	}
	check(mdb_put(t, e->state, &kv, &vv, 0), "state");
	uint8_t lk[9], lv[96] = {0};
	lk[0] = 'l';
	be64(lk + 1, e->rev);
	memcpy(lv + 24, k + 1, kl);
	MDB_val lkv = {tagged ? 9 : 8, tagged ? lk : lk + 1},
		lvv = {24 + kl, lv};
	check(mdb_put(t, e->log, &lkv, &lvv, tagged ? 0 : MDB_APPEND), "log");
	if (l == NAMED) {
		MDB_val mk = {3, "rev"}, mv = {8, &e->rev};
		check(mdb_put(t, e->meta, &mk, &mv, 0), "meta");
	}
}

static void run(const char *base, double seconds, enum layout l, unsigned group,
		bool create)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/lapis-layout-XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("bench-lmdb-layout: mkdtemp");
		exit(1);
	}
	struct env e = {0};
	open_env(&e, dir, l);
	srand(7);
	unsigned txns = 0, commits = 0, next_new = 0;
	long long w0 = written();
	double t0 = now_us(), t;
	while ((t = now_us()) - t0 < seconds * 1e6) {
		MDB_txn *w;
		check(mdb_txn_begin(e.env, NULL, 0, &w), "txn_begin");
		for (unsigned g = 0; g < group; g++, txns++)
			engine_txn(&e, w, l,
				   create ? next_new++
					  : (unsigned)rand() % N_KEYS,
				   create);
		check(mdb_txn_commit(w), "commit");
		commits++;
	}
	double us = t - t0;
	printf("%-8s %-15s group=%-3u %8.0f txns/s %7.0f us/commit "
	       "%5.1f pages/txn\n",
	       create ? "creates" : "updates", layout_names[l], group,
	       txns / (us / 1e6), us / commits,
	       (double)(written() - w0) / 4096.0 / txns);
	mdb_env_close(e.env);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-lmdb-layout: could not remove %s\n",
			dir);
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/tmp";
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: bench-lmdb-layout [DIR] [SECONDS]\n");
		return 2;
	}
	printf("lapis LMDB layout benchmark: synced commits in %s, %u keys "
	       "of %d B, %.1f s per run, layouts alternating\n",
	       base, N_KEYS, VAL_LEN, seconds);
	static const unsigned groups[] = {1, 36};
	for (int create = 0; create < 2; create++)
		for (size_t g = 0; g < 2; g++)
			for (int l = NAMED; l <= RAW; l++)
				run(base, seconds, (enum layout)l, groups[g],
				    create);
	return 0;
}
