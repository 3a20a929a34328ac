/*
 * bench_engine.c -- the engine benchmark: reads against raw LMDB, and write
 * throughput with group commit (docs/bench-engine.md has the figures).
 *
 *   bench-engine [--keys N] [--value-size B] [--seconds S] [--rounds R]
 *                [--dir D] [--threads T[,T...]] [--only get,scan,writes]
 *                [--order shuffled|sorted|roundrobin] [--quick]
 *
 * What it does, in order:
 *  1. Builds N keys /registry/bench/ns-XX/obj-%08u (16 namespaces) with
 *     values of B random printable bytes from a fixed seed (LAPIS_SEED), and
 *     loads them twice, in the same order (--order, shuffled by default):
 *     through the engine (nosync, 1000 puts per eng_txn) and into a raw LMDB
 *     environment (one unnamed database, same keys and values). Both copies
 *     are then read once in full so that every page is in the page cache
 *     and mapped before anything is timed.
 *  2. Reads, for each thread count T (default 1..nproc), thread i pinned to
 *     the i-th allowed CPU modulo their number: point gets (one snapshot per
 *     get, as the server does per request) and 500-key range scans from a
 *     random start key, through the engine and then on raw LMDB with the
 *     same per-thread key sequence. The raw loop is as fast as LMDB allows:
 *     one read txn per thread reused with mdb_txn_reset/mdb_txn_renew, one
 *     cursor reused with mdb_cursor_renew, no copies, no locks. Scans also
 *     get a paired figure: engine and raw scan the same range back to back
 *     in each thread, and the median of the per-op time ratios is printed
 *     (it moves far less with the machine's load than the rates do).
 *  3. Writes: 1, 8 and 64 writer threads, each committing one put per
 *     eng_txn in a loop, with the engine reopened in sync and then in nosync
 *     mode. After each engine round, a raw LMDB round on the same filesystem
 *     commits as many random puts per LMDB commit as the engine put in one
 *     group on average (1 for one writer: the cost of one synced commit),
 *     which is what the same batching costs LMDB itself on this disk.
 *     Each line gives the 4 KiB pages written per engine txn and per raw put
 *     (wchar of /proc/self/io over the rounds). In sync mode, one writer
 *     also commits create-then-update pairs of one key, as two commits and
 *     as one eng_txn_commit_chain (one fsync).
 *
 * Invariants:
 *  1. It is a benchmark, not a test: it prints figures, targets and whether
 *     they are met, and exits 0 whatever the figures are. It exits 1 when an
 *     engine or LMDB call fails, 2 on a usage error.
 *  2. Engine and raw loops do the same work around the store: the same key
 *     table (fixed-width keys built before timing), the same random index
 *     sequence per thread, the same touch of each value (its first and last
 *     byte summed into a per-thread sink that is published after the loop).
 *  3. Measured threads start together on a barrier and stop on one flag set
 *     by the main thread after S seconds; each thread counts into locals and
 *     stores them once, into its own cache-line-sized slot, with its own
 *     start and stop times (CLOCK_MONOTONIC).
 *  4. Each figure is the best of R rounds (--rounds, default 3), engine and
 *     raw alternating round by round: interference from a shared machine
 *     only ever lowers a rate, so the best round is the least disturbed one.
 *     The range of the per-round ratios is printed beside each ratio.
 *  5. Everything lives in one mkdtemp directory under --dir, $TMPDIR or
 *     /tmp, removed at exit.
 *
 * Runs on the main thread and the worker threads it starts per measurement.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <lmdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lapis/engine.h"
#include "lapis/err.h"

/* The fixed default seed; LAPIS_SEED overrides it. */
#define DEFAULT_SEED 0x1a915ull
#define PREFIX "/registry/bench/"
/* Namespaces the keys are spread over, so a scan crosses namespace bounds
   the way an all-namespaces list does. */
#define N_NAMESPACES 16
/* Keys are "/registry/bench/ns-XX/obj-%08u": fixed width for N < 10^8. */
#define KEY_LEN (sizeof(PREFIX) - 1 + 6 + 12)
#define MAX_KEYS 99999999u
/* Puts per eng_txn (and per raw txn) while loading: large enough that the
   per-commit cost vanishes, small enough to keep one batch near 1 MiB. */
#define LOAD_BATCH 1000
/* A page of a paginated list: kube's clients commonly ask for 500. */
#define SCAN_LIMIT 500
/* The engine's default initial map (engine.h); the raw baseline uses the
   same so that both map the same address space. */
#define MAP_SIZE (32ull << 30)
/* The engine's default reader slots (engine.h). */
#define MAX_READERS 1024
#define CACHE_LINE 64

static const unsigned writer_counts[] = {1, 8, 64};

/*
 * --order: the order keys are loaded in, which decides where LMDB puts the
 * leaf pages. Shuffled is the default: objects are created over time in no
 * particular order. Sorted and round-robin (over the namespaces) orders give
 * raw LMDB leaves in key order a constant stride in the file (1 and 16
 * pages) that the CPU's prefetchers follow; the engine writes change-log
 * pages in between, which breaks the stride, so those orders mostly measure
 * that (docs/bench-engine.md).
 */
enum { ORDER_SHUFFLED, ORDER_SORTED, ORDER_ROUNDROBIN };
static const char *const order_names[] = {"shuffled", "sorted", "roundrobin"};

/* --only: run some parts, e.g. under perf record. */
enum { ONLY_GET = 1, ONLY_SCAN = 2, ONLY_WRITES = 4, ONLY_ALL = 7 };

/* -------------------------------------------------------------------- setup */

struct opts {
	uint64_t keys;
	size_t value_size;
	double seconds;
	const char *dir;
	unsigned threads[64]; /* read thread counts to measure */
	unsigned n_threads;   /* 0: 1..nproc */
	unsigned rounds;      /* rounds per figure; the best counts */
	unsigned only;	      /* ONLY_* bits to run; all by default */
	int order;	      /* ORDER_*: the load order */
	int quick;
	int no_wal; /* sync writes through LMDB's own flush */
};

struct bench {
	struct opts o;
	uint64_t seed;
	char root[4096]; /* our mkdtemp directory */
	char eng_dir[4200];
	char raw_dir[4200];
	char *keys;	      /* n * KEY_LEN bytes, no NULs */
	uint32_t *load_order; /* key indexes in the order they are loaded */
	uint32_t n;
	int cpus[1024]; /* allowed CPUs, in order */
	unsigned ncpu;
	eng *e;
	MDB_env *env;
	MDB_dbi dbi;
};

/* splitmix64: small, fast and good enough for keys and filler bytes. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform index below n without a division (Lemire's multiply-shift). */
static inline uint32_t rnd_index(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rnd(s) >> 32) * (uint64_t)n) >> 32);
}

static inline const char *key_at(const struct bench *b, uint32_t i)
{
	return b->keys + (size_t)i * KEY_LEN;
}

/* The value of key i: value_size printable bytes, a function of the seed. */
static void gen_value(const struct bench *b, uint32_t i, uint8_t *buf)
{
	uint64_t s = b->seed ^ ((uint64_t)i * 0xd1b54a32d192ed03ull);
	size_t len = b->o.value_size;
	for (size_t off = 0; off < len; off += 8) {
		uint64_t r = rnd(&s);
		for (size_t k = 0; k < 8 && off + k < len; k++, r >>= 8)
			buf[off + k] = (uint8_t)(' ' + (r & 0xff) % 95);
	}
}

static int build_keys(struct bench *b)
{
	b->keys = malloc((size_t)b->n * KEY_LEN + 1);
	if (!b->keys)
		return -1;
	for (uint32_t i = 0; i < b->n; i++) {
		char tmp[KEY_LEN + 1];
		int w = snprintf(tmp, sizeof tmp, PREFIX "ns-%02u/obj-%08u",
				 i % N_NAMESPACES, i);
		if (w != (int)KEY_LEN)
			return -1;
		memcpy(b->keys + (size_t)i * KEY_LEN, tmp, KEY_LEN);
	}
	return 0;
}

static int build_order(struct bench *b)
{
	b->load_order = malloc((size_t)b->n * sizeof *b->load_order);
	if (!b->load_order)
		return -1;
	uint32_t x = 0;
	switch (b->o.order) {
	case ORDER_SORTED:
		/* Key order: by namespace, then by the zero-padded number. */
		for (uint32_t ns = 0; ns < N_NAMESPACES; ns++)
			for (uint32_t i = ns; i < b->n; i += N_NAMESPACES)
				b->load_order[x++] = i;
		break;
	case ORDER_ROUNDROBIN:
		for (uint32_t i = 0; i < b->n; i++)
			b->load_order[x++] = i;
		break;
	case ORDER_SHUFFLED:
	default: {
		/* Fisher-Yates with the run's seed. */
		uint64_t s = b->seed ^ 0x0bde5;
		for (uint32_t i = 0; i < b->n; i++)
			b->load_order[x++] = i;
		for (uint32_t i = b->n - 1; i > 0; i--) {
			uint32_t j = rnd_index(&s, i + 1);
			uint32_t tmp = b->load_order[i];
			b->load_order[i] = b->load_order[j];
			b->load_order[j] = tmp;
		}
		break;
	}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *fs_name(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) != 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53UL:
		return "ext2/3/4";
	case 0x58465342UL:
		return "xfs";
	case 0x9123683EUL:
		return "btrfs";
	case 0x01021994UL:
		return "tmpfs";
	case 0x794C7630UL:
		return "overlayfs";
	case 0x2FC12FC1UL:
		return "zfs";
	case 0xF2F52010UL:
		return "f2fs";
	default:
		return "other";
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0)
		fprintf(stderr, "bench-engine: remove %s: %s\n", path,
			strerror(errno));
	return 0;
}

static void remove_root(struct bench *b)
{
	if (b->root[0])
		nftw(b->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	b->root[0] = '\0';
}

static int eng_fail(const char *what, lp_err rc)
{
	fprintf(stderr, "bench-engine: %s: %s (%s)\n", what, lp_strerror(rc),
		lp_errname(rc));
	return -1;
}

static int mdb_fail(const char *what, int rc)
{
	fprintf(stderr, "bench-engine: %s: %s\n", what, mdb_strerror(rc));
	return -1;
}

/* ------------------------------------------------------------------ workers */

/* The flag that ends a measurement, alone on its cache line. */
static struct {
	_Alignas(CACHE_LINE) atomic_int stop;
} g_run;

static inline int running(void)
{
	return !atomic_load_explicit(&g_run.stop, memory_order_relaxed);
}

struct phase;

/* One measured thread's slot: written by that thread only, read by main
   after the join. Aligned and sized to a cache line. */
struct worker {
	_Alignas(CACHE_LINE) struct phase *ph;
	struct bench *b;
	unsigned id;
	int cpu;	 /* -1: not pinned */
	uint64_t seed;	 /* its key sequence */
	uint64_t ops;	 /* gets, scans or commits */
	uint64_t recs;	 /* records seen (scans) */
	uint64_t misses; /* keys not found: a bug if not 0 */
	uint64_t sink;	 /* touched bytes summed, so nothing is elided */
	double t0, t1;	 /* its own start and stop times */
	int err;	 /* setup or loop failed (reported already) */
	double *ratios;	 /* paired loops: per-op ratios (malloc'd) */
	size_t n_ratios;
};

/* The most op pairs one paired thread records. */
#define MAX_PAIRS (1u << 20)

struct phase {
	const char *name;
	void (*loop)(struct worker *w);
	pthread_barrier_t barrier;
	/* paired loops: every thread's ratios, gathered by run_phase */
	double *ratios;
	size_t n_ratios;
};

/* Wait for every thread of the phase, then take the start time. Called once
   per worker, also when its setup failed, so that nobody waits forever. */
static void worker_go(struct worker *w)
{
	pthread_barrier_wait(&w->ph->barrier);
	w->t0 = now();
}

static void worker_done(struct worker *w, uint64_t ops, uint64_t recs,
			uint64_t misses, uint64_t sink)
{
	w->t1 = now();
	w->ops = ops;
	w->recs = recs;
	w->misses = misses;
	w->sink = sink;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		int rc =
		    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
		if (rc != 0)
			fprintf(stderr, "bench-engine: pin to cpu %d: %s\n",
				w->cpu, strerror(rc));
	}
	w->ph->loop(w);
	return NULL;
}

static inline uint64_t touch(const uint8_t *v, size_t len)
{
	return len ? (uint64_t)v[0] + v[len - 1] : 0;
}

struct result {
	double ops_s;
	double recs_s;
	uint64_t misses;
	int err;
};

/*
 * Run ph->loop on nthreads threads for seconds. pin: thread i goes to the
 * (i % ncpu)-th allowed CPU. seed_base selects the key sequences: the same
 * seed_base gives the same sequence per thread index.
 */
static int run_phase(struct bench *b, struct phase *ph, unsigned nthreads,
		     int pin, uint64_t seed_base, struct result *res)
{
	struct worker *w = NULL;
	pthread_t *tids = NULL;
	unsigned started = 0;
	int ret = -1;

	memset(res, 0, sizeof *res);
	w = aligned_alloc(CACHE_LINE, sizeof *w * nthreads);
	tids = calloc(nthreads, sizeof *tids);
	if (!w || !tids)
		goto fail;
	memset(w, 0, sizeof *w * nthreads);
	if (pthread_barrier_init(&ph->barrier, NULL, nthreads + 1) != 0)
		goto fail;
	atomic_store(&g_run.stop, 0);
	for (unsigned i = 0; i < nthreads; i++) {
		uint64_t s = seed_base ^ ((uint64_t)(i + 1) << 40);
		w[i].ph = ph;
		w[i].b = b;
		w[i].id = i;
		w[i].cpu = pin ? b->cpus[i % b->ncpu] : -1;
		w[i].seed = rnd(&s);
		int rc = pthread_create(&tids[i], NULL, worker_main, &w[i]);
		if (rc != 0) {
			fprintf(stderr, "bench-engine: pthread_create: %s\n",
				strerror(rc));
			/* The barrier counts nthreads + 1: the threads already
			   started would wait forever. There is no way back. */
			exit(1);
		}
		started++;
	}
	pthread_barrier_wait(&ph->barrier);
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	double secs = b->o.seconds;
	until.tv_sec += (time_t)secs;
	until.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ==
	       EINTR)
		;
	atomic_store(&g_run.stop, 1);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&ph->barrier);

	for (unsigned i = 0; i < nthreads; i++) {
		double dt = w[i].t1 - w[i].t0;
		if (w[i].err)
			res->err = 1;
		if (dt > 0) {
			res->ops_s += (double)w[i].ops / dt;
			res->recs_s += (double)w[i].recs / dt;
		}
		res->misses += w[i].misses;
		if (w[i].n_ratios) {
			double *v =
			    realloc(ph->ratios,
				    (ph->n_ratios + w[i].n_ratios) * sizeof *v);
			if (!v) {
				res->err = 1;
			} else {
				memcpy(v + ph->n_ratios, w[i].ratios,
				       w[i].n_ratios * sizeof *v);
				ph->ratios = v;
				ph->n_ratios += w[i].n_ratios;
			}
		}
		free(w[i].ratios);
	}
	if (res->err)
		fprintf(stderr, "bench-engine: %s with %u threads failed\n",
			ph->name, nthreads);
	ret = res->err ? -1 : 0;
fail:
	free(tids);
	free(w);
	return ret;
}

/* ------------------------------------------------------------- engine loops */

static void eng_get_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0, misses = 0, sink = 0;
	lp_err rc = LP_OK;

	worker_go(w);
	while (running()) {
		uint32_t i = rnd_index(&s, b->n);
		eng_rd *r;
		rc = eng_rd_begin(b->e, &r);
		if (rc != LP_OK)
			break;
		struct eng_record rec;
		rc = eng_get(r, key_at(b, i), KEY_LEN, 0, &rec);
		if (rc == LP_OK)
			sink += touch(rec.value, rec.value_len);
		eng_rd_end(r);
		if (rc == LP_E_NOTFOUND)
			misses++;
		else if (rc != LP_OK)
			break;
		rc = LP_OK;
		ops++;
	}
	worker_done(w, ops, 0, misses, sink);
	if (rc != LP_OK)
		w->err = eng_fail("eng_get loop", rc);
}

struct scan_acc {
	uint64_t sink;
};

static enum eng_take scan_touch(void *ud, const struct eng_record *rec)
{
	struct scan_acc *a = ud;
	a->sink += touch(rec->value, rec->value_len);
	return ENG_TAKE;
}

/* One engine scan: a snapshot, 500 records from key, touching each. */
static inline lp_err eng_scan_once(struct bench *b, const char *key,
				   struct scan_acc *acc, uint64_t *recs)
{
	struct eng_range_req req = {
	    .prefix = PREFIX,
	    .prefix_len = sizeof(PREFIX) - 1,
	    .from = key,
	    .from_len = KEY_LEN,
	    .limit = SCAN_LIMIT,
	};
	eng_rd *r;
	lp_err rc = eng_rd_begin(b->e, &r);
	if (rc != LP_OK)
		return rc;
	struct eng_range_res res;
	rc = eng_range(r, &req, scan_touch, acc, &res);
	eng_rd_end(r);
	*recs += res.n_visited;
	return rc;
}

static void eng_scan_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0, recs = 0;
	struct scan_acc acc = {0};
	lp_err rc = LP_OK;

	worker_go(w);
	while (running()) {
		rc = eng_scan_once(b, key_at(b, rnd_index(&s, b->n)), &acc,
				   &recs);
		if (rc != LP_OK)
			break;
		ops++;
	}
	worker_done(w, ops, recs, 0, acc.sink);
	if (rc != LP_OK)
		w->err = eng_fail("eng_range loop", rc);
}

/* ---------------------------------------------------------------- raw loops */

static void raw_get_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0, misses = 0, sink = 0;
	MDB_txn *txn = NULL;
	const char *what = "mdb_txn_begin";

	int rc = mdb_txn_begin(b->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0)
		mdb_txn_reset(txn);
	worker_go(w);
	while (rc == 0 && running()) {
		MDB_val k = {KEY_LEN, (void *)key_at(b, rnd_index(&s, b->n))};
		MDB_val v;
		rc = mdb_txn_renew(txn);
		if (rc != 0) {
			what = "mdb_txn_renew";
			break;
		}
		rc = mdb_get(txn, b->dbi, &k, &v);
		if (rc == 0)
			sink += touch(v.mv_data, v.mv_size);
		mdb_txn_reset(txn);
		if (rc == MDB_NOTFOUND)
			misses++;
		else if (rc != 0) {
			what = "mdb_get";
			break;
		}
		rc = 0;
		ops++;
	}
	worker_done(w, ops, 0, misses, sink);
	if (txn)
		mdb_txn_abort(txn);
	if (rc != 0)
		w->err = mdb_fail(what, rc);
}

/* One raw scan on the thread's reused txn and cursor: 0 or an LMDB error
   with *what set. */
static inline int raw_scan_once(MDB_txn *txn, MDB_cursor *cur, const char *key,
				uint64_t *sink, uint64_t *recs,
				const char **what)
{
	const size_t plen = sizeof(PREFIX) - 1;
	MDB_val k = {KEY_LEN, (void *)key};
	MDB_val v;
	int rc = mdb_txn_renew(txn);
	if (rc == 0)
		rc = mdb_cursor_renew(txn, cur);
	if (rc != 0) {
		*what = "mdb_txn_renew/mdb_cursor_renew";
		return rc;
	}
	/* Stop after the 500th record without looking further: the least
	   LMDB can do for a 500-record page. */
	unsigned taken = 0;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size >= plen &&
	       memcmp(k.mv_data, PREFIX, plen) == 0) {
		*sink += touch(v.mv_data, v.mv_size);
		if (++taken == SCAN_LIMIT)
			break;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	mdb_txn_reset(txn);
	*recs += taken;
	if (rc != 0 && rc != MDB_NOTFOUND) {
		*what = "mdb_cursor_get";
		return rc;
	}
	return 0;
}

/* The raw loop's txn (reset) and cursor, made before timing. */
static int raw_scan_setup(struct bench *b, MDB_txn **txn, MDB_cursor **cur,
			  const char **what)
{
	*what = "mdb_txn_begin";
	int rc = mdb_txn_begin(b->env, NULL, MDB_RDONLY, txn);
	if (rc == 0) {
		*what = "mdb_cursor_open";
		rc = mdb_cursor_open(*txn, b->dbi, cur);
		mdb_txn_reset(*txn);
	}
	return rc;
}

static void raw_scan_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0, recs = 0, sink = 0;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	const char *what;

	int rc = raw_scan_setup(b, &txn, &cur, &what);
	worker_go(w);
	while (rc == 0 && running()) {
		rc = raw_scan_once(txn, cur, key_at(b, rnd_index(&s, b->n)),
				   &sink, &recs, &what);
		if (rc == 0)
			ops++;
	}
	worker_done(w, ops, recs, 0, sink);
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	if (rc != 0)
		w->err = mdb_fail(what, rc);
}

/*
 * --paired: each op scans the same 500 records from the same key through
 * the engine and raw LMDB back to back (which goes first alternates), and
 * records raw time / engine time. Interference on a shared machine that
 * lasts longer than one pair (about 0.5 ms) slows both sides of it alike,
 * so the median of these ratios moves much less with the load than the
 * ratio of two throughputs measured seconds apart.
 */
static void paired_scan_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0, recs = 0, sink = 0;
	struct scan_acc acc = {0};
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	const char *what;
	lp_err erc = LP_OK;

	int rc = raw_scan_setup(b, &txn, &cur, &what);
	w->ratios = malloc(MAX_PAIRS * sizeof *w->ratios);
	if (!w->ratios && rc == 0) {
		what = "malloc";
		rc = ENOMEM;
	}
	worker_go(w);
	while (rc == 0 && running() && w->n_ratios < MAX_PAIRS) {
		const char *key = key_at(b, rnd_index(&s, b->n));
		double t[3];
		t[0] = now();
		if (ops % 2 == 0) {
			erc = eng_scan_once(b, key, &acc, &recs);
			t[1] = now();
			rc = raw_scan_once(txn, cur, key, &sink, &recs, &what);
		} else {
			rc = raw_scan_once(txn, cur, key, &sink, &recs, &what);
			t[1] = now();
			erc = eng_scan_once(b, key, &acc, &recs);
		}
		t[2] = now();
		if (erc != LP_OK)
			break;
		double te = ops % 2 == 0 ? t[1] - t[0] : t[2] - t[1];
		double tr = ops % 2 == 0 ? t[2] - t[1] : t[1] - t[0];
		if (rc == 0 && te > 0)
			w->ratios[w->n_ratios++] = tr / te;
		ops++;
	}
	worker_done(w, ops, recs, 0, sink + acc.sink);
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	if (erc != LP_OK)
		w->err = eng_fail("paired eng_range", erc);
	else if (rc != 0)
		w->err = mdb_fail(what, rc);
}

/* ------------------------------------------------------------------ writers */

static unsigned g_writers; /* writer threads of the running write phase */

/* One put per eng_txn. Writer w owns the keys with index % writers == w, so
   concurrent transactions never touch the same key. */
static void eng_write_loop(struct worker *w)
{
	struct bench *b = w->b;
	uint64_t s = w->seed, ops = 0;
	uint32_t per = b->n / g_writers;
	uint8_t *val = malloc(b->o.value_size);
	lp_err rc = LP_OK;

	if (!val) {
		fprintf(stderr, "bench-engine: out of memory\n");
		w->err = 1;
		worker_go(w);
		return;
	}
	gen_value(b, w->id, val);
	worker_go(w);
	while (running()) {
		uint32_t i = rnd_index(&s, per) * g_writers + w->id;
		eng_txn *t = NULL;
		/* Change a few bytes per write, as an update would. */
		uint64_t c = ops;
		for (size_t k = 0; k < 8 && k < b->o.value_size; k++, c /= 10)
			val[k] = (uint8_t)('0' + c % 10);
		rc = eng_txn_new(b->e, &t);
		if (rc == LP_OK)
			rc = eng_txn_put(t, key_at(b, i), KEY_LEN, val,
					 b->o.value_size, ENG_NO_SLOT, NULL);
		if (rc == LP_OK) {
			struct eng_commit_res cres;
			rc = eng_txn_commit(t, &cres);
		}
		eng_txn_free(t);
		if (rc != LP_OK)
			break;
		ops++;
	}
	worker_done(w, ops, 0, 0, 0);
	free(val);
	if (rc != LP_OK)
		w->err = eng_fail("write loop", rc);
}

/* --------------------------------------------------------------------- load */

static int eng_open_mode(struct bench *b, int nosync)
{
	struct eng_opts eo = {
	    .dir = b->eng_dir,
	    .nosync = nosync,
	    .no_wal = b->o.no_wal,
	};
	lp_err rc = eng_open(&eo, &b->e);
	if (rc != LP_OK)
		return eng_fail("eng_open", rc);
	return 0;
}

static int load_engine(struct bench *b, double *secs)
{
	uint8_t *val = malloc(b->o.value_size);
	eng_txn *t = NULL;
	int ret = -1;
	lp_err rc;

	if (!val)
		goto fail;
	double t0 = now();
	for (uint32_t i = 0; i < b->n; i += LOAD_BATCH) {
		rc = eng_txn_new(b->e, &t);
		if (rc != LP_OK) {
			eng_fail("eng_txn_new", rc);
			goto fail;
		}
		for (uint32_t x = i; x < b->n && x < i + LOAD_BATCH; x++) {
			uint32_t j = b->load_order[x];
			gen_value(b, j, val);
			rc = eng_txn_put(t, key_at(b, j), KEY_LEN, val,
					 b->o.value_size, ENG_NO_SLOT, NULL);
			if (rc != LP_OK) {
				eng_fail("eng_txn_put", rc);
				goto fail;
			}
		}
		struct eng_commit_res cres;
		rc = eng_txn_commit(t, &cres);
		if (rc != LP_OK) {
			eng_fail("eng_txn_commit (load)", rc);
			goto fail;
		}
		eng_txn_free(t);
		t = NULL;
	}
	*secs = now() - t0;
	ret = 0;
fail:
	eng_txn_free(t);
	free(val);
	return ret;
}

static int raw_open(struct bench *b)
{
	int rc = mdb_env_create(&b->env);
	if (rc != 0)
		return mdb_fail("mdb_env_create", rc);
	rc = mdb_env_set_mapsize(b->env, MAP_SIZE);
	if (rc == 0)
		rc = mdb_env_set_maxreaders(b->env, MAX_READERS);
	if (rc != 0)
		return mdb_fail("mdb_env_set_mapsize/maxreaders", rc);
	if (mkdir(b->raw_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench-engine: mkdir %s: %s\n", b->raw_dir,
			strerror(errno));
		return -1;
	}
	rc = mdb_env_open(b->env, b->raw_dir, MDB_NOTLS, 0600);
	if (rc != 0)
		return mdb_fail("mdb_env_open", rc);
	MDB_txn *txn;
	rc = mdb_txn_begin(b->env, NULL, 0, &txn);
	if (rc != 0)
		return mdb_fail("mdb_txn_begin", rc);
	rc = mdb_dbi_open(txn, NULL, 0, &b->dbi);
	if (rc != 0) {
		mdb_txn_abort(txn);
		return mdb_fail("mdb_dbi_open", rc);
	}
	rc = mdb_txn_commit(txn);
	if (rc != 0)
		return mdb_fail("mdb_txn_commit", rc);
	return 0;
}

/* Load with MDB_NOSYNC, then sync once and go back to the default flags. */
static int load_raw(struct bench *b, double *secs)
{
	uint8_t *val = malloc(b->o.value_size);
	MDB_txn *txn = NULL;
	int ret = -1, rc;

	if (!val)
		goto fail;
	double t0 = now();
	rc = mdb_env_set_flags(b->env, MDB_NOSYNC, 1);
	if (rc != 0) {
		mdb_fail("mdb_env_set_flags", rc);
		goto fail;
	}
	for (uint32_t i = 0; i < b->n; i += LOAD_BATCH) {
		rc = mdb_txn_begin(b->env, NULL, 0, &txn);
		if (rc != 0) {
			mdb_fail("mdb_txn_begin", rc);
			goto fail;
		}
		for (uint32_t x = i; x < b->n && x < i + LOAD_BATCH; x++) {
			uint32_t j = b->load_order[x];
			gen_value(b, j, val);
			MDB_val k = {KEY_LEN, (void *)key_at(b, j)};
			MDB_val v = {b->o.value_size, val};
			rc = mdb_put(txn, b->dbi, &k, &v, 0);
			if (rc != 0) {
				mdb_fail("mdb_put", rc);
				goto fail;
			}
		}
		rc = mdb_txn_commit(txn);
		txn = NULL;
		if (rc != 0) {
			mdb_fail("mdb_txn_commit", rc);
			goto fail;
		}
	}
	rc = mdb_env_sync(b->env, 1);
	if (rc == 0)
		rc = mdb_env_set_flags(b->env, MDB_NOSYNC, 0);
	if (rc != 0) {
		mdb_fail("mdb_env_sync/set_flags", rc);
		goto fail;
	}
	*secs = now() - t0;
	ret = 0;
fail:
	if (txn)
		mdb_txn_abort(txn);
	free(val);
	return ret;
}

/*
 * Write both stores' dirty pages to disk before anything is timed. The
 * engine loads with nosync and the raw copy is synced at the end of its
 * load: without this the kernel would write the engine's file back (about
 * 200 MB for the default data set) while the reads are being measured, and
 * charge that to whichever side runs then.
 */
static int flush_stores(struct bench *b)
{
	int fd = open(b->root, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || syncfs(fd) != 0) {
		fprintf(stderr, "bench-engine: syncfs %s: %s\n", b->root,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Read both copies in full, untimed, so that every page is cached and
   mapped, and check that they hold the same number of records. */
static int warm_up(struct bench *b)
{
	eng_rd *r = NULL;
	struct scan_acc acc = {0};
	struct eng_range_req req = {
	    .prefix = PREFIX,
	    .prefix_len = sizeof(PREFIX) - 1,
	};
	struct eng_range_res res;
	lp_err rc = eng_rd_begin(b->e, &r);
	if (rc == LP_OK)
		rc = eng_range(r, &req, scan_touch, &acc, &res);
	eng_rd_end(r);
	if (rc != LP_OK)
		return eng_fail("warm-up eng_range", rc);

	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t n = 0;
	int mrc = mdb_txn_begin(b->env, NULL, MDB_RDONLY, &txn);
	if (mrc != 0)
		return mdb_fail("mdb_txn_begin", mrc);
	mrc = mdb_cursor_open(txn, b->dbi, &cur);
	if (mrc != 0) {
		mdb_txn_abort(txn);
		return mdb_fail("mdb_cursor_open", mrc);
	}
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		acc.sink += touch(v.mv_data, v.mv_size);
		n++;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (res.n_visited != b->n || n != b->n) {
		fprintf(stderr,
			"bench-engine: warm-up saw %" PRIu64
			" engine and %" PRIu64 " raw records, want %" PRIu32
			"\n",
			res.n_visited, n, b->n);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------- report */

static const char *flag_names(unsigned f, char *buf, size_t len)
{
	static const struct {
		unsigned flag;
		const char *name;
	} names[] = {
	    {MDB_FIXEDMAP, "MDB_FIXEDMAP"},
	    {MDB_NOSUBDIR, "MDB_NOSUBDIR"},
	    {MDB_RDONLY, "MDB_RDONLY"},
	    {MDB_WRITEMAP, "MDB_WRITEMAP"},
	    {MDB_NOMETASYNC, "MDB_NOMETASYNC"},
	    {MDB_NOSYNC, "MDB_NOSYNC"},
	    {MDB_MAPASYNC, "MDB_MAPASYNC"},
	    {MDB_NOTLS, "MDB_NOTLS"},
	    {MDB_NOLOCK, "MDB_NOLOCK"},
	    {MDB_NORDAHEAD, "MDB_NORDAHEAD"},
	    {MDB_NOMEMINIT, "MDB_NOMEMINIT"},
	};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(f & names[i].flag))
			continue;
		int w = snprintf(buf + used, len - used, "%s%s",
				 used ? "|" : "", names[i].name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	if (!used)
		snprintf(buf, len, "0 (defaults)");
	return buf;
}

/* A ratio cut (not rounded) to two decimals for printing, so that a printed
   0.80 is never a 0.7996 that missed a 0.80 target. */
static double cut2(double x)
{
	return x > 0 ? (double)(int64_t)(x * 100.0) / 100.0 : 0;
}

static const char *target_word(double ratio, double target)
{
	return ratio >= target ? "met" : "NOT MET";
}

/* Engine and raw figures of one (op, threads): the best round of each, and
   the range of the per-round ratios. */
struct pair {
	struct result e, r;
	double ratio_min, ratio_max;
};

static void print_pair(const char *op, unsigned t, const struct pair *p,
		       int scan)
{
	double ratio = p->r.ops_s > 0 ? p->e.ops_s / p->r.ops_s : 0;
	printf("%-7s threads=%-2u engine=%.0f/s raw=%.0f/s ratio=%.2f "
	       "(target >= 0.80: %s)",
	       op, t, p->e.ops_s, p->r.ops_s, cut2(ratio),
	       target_word(ratio, 0.8));
	if (scan)
		printf(" records/s engine=%.0f raw=%.0f", p->e.recs_s,
		       p->r.recs_s);
	printf(" rounds %.2f..%.2f", cut2(p->ratio_min), cut2(p->ratio_max));
	if (p->e.misses || p->r.misses)
		printf(" MISSES engine=%" PRIu64 " raw=%" PRIu64, p->e.misses,
		       p->r.misses);
	printf("\n");
	fflush(stdout);
}

static void keep_best(struct result *best, const struct result *r)
{
	uint64_t misses = best->misses + r->misses;
	if (r->ops_s > best->ops_s)
		*best = *r;
	best->misses = misses;
}

/*
 * Measure the engine phase and the raw phase alternately, o.rounds times
 * each, with the same key sequences in both. Throughput on a shared machine
 * is only ever lowered by interference, so the best round of each side is
 * the figure; the per-round ratios show the noise.
 */
static int measure_pair(struct bench *b, struct phase *pe, struct phase *pr,
			unsigned t, uint64_t seed_base, struct pair *p)
{
	memset(p, 0, sizeof *p);
	for (unsigned i = 0; i < b->o.rounds; i++) {
		struct result er, rr;
		uint64_t sb = seed_base ^ ((uint64_t)i << 8);
		if (run_phase(b, pe, t, 1, sb, &er) ||
		    run_phase(b, pr, t, 1, sb, &rr))
			return -1;
		keep_best(&p->e, &er);
		keep_best(&p->r, &rr);
		double ratio = rr.ops_s > 0 ? er.ops_s / rr.ops_s : 0;
		if (i == 0 || ratio < p->ratio_min)
			p->ratio_min = ratio;
		if (i == 0 || ratio > p->ratio_max)
			p->ratio_max = ratio;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The paired scan figure for t threads: o.rounds rounds of o.seconds. */
static int measure_paired(struct bench *b, unsigned t, uint64_t seed_base)
{
	struct phase ph = {.name = "paired scan", .loop = paired_scan_loop};
	for (unsigned i = 0; i < b->o.rounds; i++) {
		struct result r;
		if (run_phase(b, &ph, t, 1, seed_base ^ ((uint64_t)i << 8),
			      &r)) {
			free(ph.ratios);
			return -1;
		}
	}
	size_t n = ph.n_ratios;
	if (n == 0) {
		printf("scan500 threads=%-2u paired: no pairs\n", t);
		return 0;
	}
	qsort(ph.ratios, n, sizeof *ph.ratios, cmp_double);
	double med = ph.ratios[n / 2];
	printf("scan500 threads=%-2u paired ratio=%.2f (target >= 0.80: %s) "
	       "median of %zu per-op raw/engine time ratios, quartiles "
	       "%.2f..%.2f\n",
	       t, cut2(med), target_word(med, 0.8), n, cut2(ph.ratios[n / 4]),
	       cut2(ph.ratios[n * 3 / 4]));
	fflush(stdout);
	free(ph.ratios);
	return 0;
}

/* ------------------------------------------------------------------- phases */

#define MAX_T 64

static int run_reads(struct bench *b)
{
	struct phase eget = {.name = "engine get", .loop = eng_get_loop};
	struct phase rget = {.name = "raw get", .loop = raw_get_loop};
	struct phase escan = {.name = "engine scan", .loop = eng_scan_loop};
	struct phase rscan = {.name = "raw scan", .loop = raw_scan_loop};
	struct pair res[MAX_T][2]; /* [thread count][get, scan] */
	unsigned ts[MAX_T], nt = 0;

	if (b->o.n_threads) {
		for (unsigned i = 0; i < b->o.n_threads; i++)
			ts[nt++] = b->o.threads[i];
	} else {
		for (unsigned t = 1; t <= b->ncpu && nt < MAX_T; t++)
			ts[nt++] = t;
	}
	printf("\n== reads: best of %u rounds of %.1f s, engine and raw "
	       "alternating; one snapshot per op; thread i pinned to allowed "
	       "cpu i %% %u ==\n",
	       b->o.rounds, b->o.seconds, b->ncpu);
	for (unsigned i = 0; i < nt; i++) {
		unsigned t = ts[i];
		uint64_t sb = b->seed ^ ((uint64_t)t << 20);
		memset(res[i], 0, sizeof res[i]);
		if (b->o.only & ONLY_GET) {
			if (measure_pair(b, &eget, &rget, t, sb, &res[i][0]))
				return -1;
			print_pair("get", t, &res[i][0], 0);
		}
		if (b->o.only & ONLY_SCAN) {
			if (measure_pair(b, &escan, &rscan, t, sb, &res[i][1]))
				return -1;
			print_pair("scan500", t, &res[i][1], 1);
			if (measure_paired(b, t, sb ^ 0x9a1dull))
				return -1;
		}
	}
	/* Scaling: the largest thread count measured against one thread. */
	unsigned one = nt, top = 0;
	for (unsigned i = 0; i < nt; i++) {
		if (ts[i] == 1)
			one = i;
		if (ts[i] > ts[top])
			top = i;
	}
	if (one < nt && ts[top] > 1) {
		static const char *const ops[] = {"get", "scan500"};
		for (int op = 0; op < 2; op++) {
			if (!(b->o.only & (op ? ONLY_SCAN : ONLY_GET)))
				continue;
			const struct pair *p1 = &res[one][op];
			const struct pair *pn = &res[top][op];
			printf("scaling %-7s threads=%u vs 1: engine=%.2fx "
			       "raw=%.2fx (ideal %.2fx)\n",
			       ops[op], ts[top],
			       p1->e.ops_s > 0 ? pn->e.ops_s / p1->e.ops_s : 0,
			       p1->r.ops_s > 0 ? pn->r.ops_s / p1->r.ops_s : 0,
			       (double)(ts[top] < b->ncpu ? ts[top] : b->ncpu));
		}
	}
	return 0;
}

/*
 * One round of raw LMDB commits on the main thread for o.seconds: `puts`
 * random puts of value_size bytes per mdb_txn_commit, with MDB_NOSYNC or the
 * default (synced) flags. Gives puts/s and microseconds per commit.
 */
static int raw_commit_round(struct bench *b, int nosync, unsigned puts,
			    uint64_t seed, double *puts_s, double *us,
			    uint64_t *n_puts)
{
	uint8_t *val = malloc(b->o.value_size);
	uint64_t s = seed, n = 0;
	int rc;

	if (!val)
		return -1;
	gen_value(b, 0, val);
	rc = mdb_env_set_flags(b->env, MDB_NOSYNC, nosync);
	if (rc != 0) {
		free(val);
		return mdb_fail("mdb_env_set_flags", rc);
	}
	double t0 = now(), t1 = t0, end = t0 + b->o.seconds;
	while (t1 < end) {
		MDB_txn *txn;
		rc = mdb_txn_begin(b->env, NULL, 0, &txn);
		if (rc != 0)
			break;
		for (unsigned j = 0; j < puts && rc == 0; j++) {
			MDB_val k = {KEY_LEN,
				     (void *)key_at(b, rnd_index(&s, b->n))};
			MDB_val v = {b->o.value_size, val};
			val[0] = (uint8_t)('a' + (n + j) % 26);
			rc = mdb_put(txn, b->dbi, &k, &v, 0);
		}
		if (rc != 0) {
			mdb_txn_abort(txn);
			break;
		}
		rc = mdb_txn_commit(txn);
		if (rc != 0)
			break;
		n++;
		t1 = now();
	}
	free(val);
	if (rc == 0)
		rc = mdb_env_set_flags(b->env, MDB_NOSYNC, 0);
	if (rc != 0)
		return mdb_fail("raw commit", rc);
	*us = n ? (t1 - t0) * 1e6 / (double)n : 0;
	*n_puts = n * puts;
	*puts_s = t1 > t0 ? (double)(n * puts) / (t1 - t0) : 0;
	return 0;
}

/* A write figure: the engine's best round, the raw LMDB baseline's best
   round at the engine's batching, and the engine's mean group size. */
struct wfig {
	double eng_s;	/* engine txns/s */
	double group;	/* engine txns per commit group */
	unsigned batch; /* raw puts per commit: the group size, rounded */
	double raw_s;	/* raw puts/s at that batch */
	double raw_us;	/* raw microseconds per commit at that batch */
	double eng_pg;	/* engine: 4 KiB pages written per txn, all rounds */
	double raw_pg;	/* raw: 4 KiB pages written per put, all rounds */
};

/* Bytes this process has passed to write(2)/pwrite(2) so far (wchar in
   /proc/self/io): LMDB writes every dirty page of a commit with pwrite,
   so the difference over a round is what its commits wrote. 0 if unknown. */
static uint64_t written_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	uint64_t v = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "wchar:", 6) == 0)
			v = strtoull(line + 6, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Measure the engine with `writers` threads (o.rounds rounds), each round
 * followed by a raw LMDB round that commits as many puts per LMDB commit as
 * the engine's round put in one group: the raw cost of the same batching on
 * the same disk, so the two alternate as the disk's speed drifts.
 */
static int measure_writes(struct bench *b, int nosync, unsigned writers,
			  unsigned idx, struct wfig *f)
{
	struct phase wph = {.name = "engine write", .loop = eng_write_loop};
	uint64_t groups = 0, txns = 0, eng_bytes = 0, raw_bytes = 0,
		 raw_puts = 0;

	memset(f, 0, sizeof *f);
	g_writers = writers;
	for (unsigned r = 0; r < b->o.rounds; r++) {
		struct eng_stats st0, st1;
		struct result rr;
		uint64_t sb = b->seed ^ 0x77 ^ ((uint64_t)idx << 24) ^
			      ((uint64_t)nosync << 32) ^ ((uint64_t)r << 8);
		eng_stats(b->e, &st0);
		uint64_t w0 = written_bytes();
		if (run_phase(b, &wph, writers, 0, sb, &rr))
			return -1;
		eng_bytes += written_bytes() - w0;
		eng_stats(b->e, &st1);
		uint64_t g = st1.groups - st0.groups, t = st1.txns - st0.txns;
		groups += g;
		txns += t;
		if (rr.ops_s > f->eng_s)
			f->eng_s = rr.ops_s;
		double mean = g ? (double)t / (double)g : 1;
		unsigned batch = (unsigned)(mean + 0.5);
		if (batch < 1)
			batch = 1;
		double ps, us;
		w0 = written_bytes();
		uint64_t np;
		if (raw_commit_round(b, nosync, batch, sb ^ 0x5eed, &ps, &us,
				     &np))
			return -1;
		raw_bytes += written_bytes() - w0;
		raw_puts += np;
		if (ps > f->raw_s) {
			f->raw_s = ps;
			f->raw_us = us;
			f->batch = batch;
		}
	}
	f->group = groups ? (double)txns / (double)groups : 0;
	f->eng_pg = txns ? (double)eng_bytes / 4096.0 / (double)txns : 0;
	f->raw_pg =
	    raw_puts ? (double)raw_bytes / 4096.0 / (double)raw_puts : 0;
	return 0;
}

/* One txn putting key i (value with its first byte varied). */
static lp_err pair_txn(struct bench *b, uint32_t i, uint8_t *val, eng_txn **out)
{
	lp_err rc = eng_txn_new(b->e, out);
	if (rc == LP_OK)
		rc = eng_txn_put(*out, key_at(b, i), KEY_LEN, val,
				 b->o.value_size, ENG_NO_SLOT, NULL);
	return rc;
}

/*
 * The API server's create-then-status: two txns on one key, each its own
 * revision, from one synchronous writer -- as two eng_txn_commit calls (two
 * LMDB commits, two fsyncs) or as one eng_txn_commit_chain (one). Pairs/s.
 */
static int chain_round(struct bench *b, int chained, uint64_t seed,
		       double *pairs_s)
{
	uint8_t *val = malloc(b->o.value_size);
	uint64_t s = seed, n = 0;
	lp_err rc = LP_OK;

	if (!val)
		return -1;
	gen_value(b, 1, val);
	double t0 = now(), t1 = t0, end = t0 + b->o.seconds;
	while (t1 < end && rc == LP_OK) {
		uint32_t i = rnd_index(&s, b->n);
		eng_txn *ts[2] = {NULL, NULL};
		val[0] = (uint8_t)('a' + n % 26);
		rc = pair_txn(b, i, val, &ts[0]);
		if (rc == LP_OK) {
			val[1] = (uint8_t)('a' + n % 26);
			rc = pair_txn(b, i, val, &ts[1]);
		}
		if (rc == LP_OK && chained)
			rc = eng_txn_commit_chain(ts, 2, NULL);
		for (int k = 0; k < 2 && rc == LP_OK && !chained; k++)
			rc = eng_txn_commit(ts[k], NULL);
		eng_txn_free(ts[0]);
		eng_txn_free(ts[1]);
		n++;
		t1 = now();
	}
	free(val);
	if (rc != LP_OK)
		return eng_fail("chain round", rc);
	*pairs_s = t1 > t0 ? (double)n / (t1 - t0) : 0;
	return 0;
}

/* Best of o.rounds rounds, the two ways alternating. */
static int run_chain(struct bench *b)
{
	double best[2] = {0, 0};
	for (unsigned r = 0; r < b->o.rounds; r++) {
		for (int chained = 0; chained < 2; chained++) {
			double ps;
			if (chain_round(b, chained, b->seed ^ 0xc4a1 ^ r, &ps))
				return -1;
			if (ps > best[chained])
				best[chained] = ps;
		}
	}
	printf("sync   chain: create+update of one key, 1 writer: "
	       "two commits %.0f pairs/s, one eng_txn_commit_chain %.0f "
	       "pairs/s (%.2fx)\n",
	       best[0], best[1], best[0] > 0 ? best[1] / best[0] : 0);
	fflush(stdout);
	return 0;
}

/*
 * The disk's own price of a group: the mean time of one fdatasync after
 * pwrite of `pages` 4 KiB pages at random page numbers (scattered, as LMDB
 * reuses freed pages) or at consecutive ones, in a 64 MiB file of this
 * filesystem written and synced beforehand (so only data blocks are
 * flushed, as for LMDB's pages inside its file). No LMDB: what any store
 * that writes those pages per commit pays here. Returns 0, or -1.
 */
#define PROBE_FILE_PAGES 16384u

static int disk_probe(struct bench *b, unsigned pages, bool scattered,
		      double *us)
{
	char path[4300];
	snprintf(path, sizeof path, "%s/disk-probe", b->root);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	static uint8_t page[4096];
	memset(page, 0x5a, sizeof page);
	int rc = 0;
	for (unsigned i = 0; i < PROBE_FILE_PAGES && !rc; i++)
		rc = pwrite(fd, page, sizeof page, (off_t)i * 4096) !=
		     (ssize_t)sizeof page;
	if (!rc)
		rc = fsync(fd);
	uint64_t s = b->seed ^ pages;
	unsigned n = 0;
	double t0 = now(), t1 = t0, end = t0 + b->o.seconds / 2;
	while (!rc && (t1 < end || n < 20)) {
		uint32_t base = rnd_index(&s, PROBE_FILE_PAGES - pages);
		for (unsigned j = 0; j < pages && !rc; j++) {
			uint32_t pg = scattered
					  ? rnd_index(&s, PROBE_FILE_PAGES)
					  : base + j;
			page[0] = (uint8_t)n;
			rc = pwrite(fd, page, sizeof page, (off_t)pg * 4096) !=
			     (ssize_t)sizeof page;
		}
		if (!rc)
			rc = fdatasync(fd);
		n++;
		t1 = now();
	}
	close(fd);
	unlink(path);
	*us = (t1 - t0) * 1e6 / n;
	return rc ? -1 : 0;
}

/* What the disk allows: a lone txn's pages against a group's, flushed. */
static void disk_ceiling(struct bench *b, const struct wfig *s1,
			 const struct wfig *sn)
{
	unsigned p1 = (unsigned)(s1->eng_pg + 0.5);
	unsigned pg = (unsigned)(sn->eng_pg * sn->group + 0.5);
	if (p1 < 1)
		p1 = 1;
	if (pg < p1 || pg > PROBE_FILE_PAGES / 2)
		return;
	double u1, ug, uc;
	if (disk_probe(b, p1, true, &u1) || disk_probe(b, pg, true, &ug) ||
	    disk_probe(b, pg, false, &uc)) {
		printf("disk probe: failed (%s)\n", strerror(errno));
		return;
	}
	printf("disk alone (pwrite of 4 KiB pages + one fdatasync, no LMDB): "
	       "%u scattered pages (a lone txn's) %.0f us; %u scattered "
	       "(a %.1f-txn group's) %.0f us, %u consecutive %.0f us\n",
	       p1, u1, pg, sn->group, ug, pg, uc);
	printf("disk ceiling of the group-commit ratio at these pages: "
	       "%.1fx scattered, %.1fx consecutive (group x lone flush / group "
	       "flush)\n",
	       sn->group * u1 / ug, sn->group * u1 / uc);
}

static int run_writes(struct bench *b)
{
	const unsigned nw = sizeof writer_counts / sizeof writer_counts[0];
	struct wfig f[2][sizeof writer_counts / sizeof writer_counts[0]];

	printf("\n== writes: best of %u rounds of %.1f s, one put of %zu B "
	       "per eng_txn, writers not pinned, disjoint keys; each engine "
	       "round is followed by a raw LMDB round (one thread) committing "
	       "as many puts per LMDB commit as the engine's mean group; "
	       "engine sync mode: %s ==\n",
	       b->o.rounds, b->o.seconds, b->o.value_size,
	       b->o.no_wal ? "LMDB flushes each commit (--no-wal)"
			   : "write-ahead log (engine/wal.c)");
	for (int mode = 0; mode < 2; mode++) {
		int nosync = mode;
		if (eng_open_mode(b, nosync))
			return -1;
		for (unsigned i = 0; i < nw; i++) {
			unsigned w = writer_counts[i];
			if (w > b->n)
				w = b->n;
			if (measure_writes(b, nosync, w, i, &f[mode][i]))
				goto fail;
			const struct wfig *x = &f[mode][i];
			printf("%-6s writers=%-2u engine=%.0f txns/s "
			       "(%.1f txns/group) raw=%.0f puts/s at %u "
			       "puts/commit (%.0f us/commit) ratio=%.2f; "
			       "pages written per txn %.1f, per raw put %.1f\n",
			       nosync ? "nosync" : "sync", w, x->eng_s,
			       x->group, x->raw_s, x->batch, x->raw_us,
			       x->raw_s > 0 ? x->eng_s / x->raw_s : 0,
			       x->eng_pg, x->raw_pg);
			fflush(stdout);
		}
		if (!nosync && run_chain(b))
			goto fail;
		eng_close(b->e);
		b->e = NULL;
	}

	const struct wfig *s1 = &f[0][0], *sn = &f[0][nw - 1];
	double gc = s1->eng_s > 0 ? sn->eng_s / s1->eng_s : 0;
	double ceiling = s1->raw_s > 0 ? sn->raw_s / s1->raw_s : 0;
	printf("group-commit ratio (sync, %u writers / 1 writer) = %.1fx; "
	       "raw LMDB on this disk, %u puts per commit vs 1: %.1fx\n",
	       writer_counts[nw - 1], gc, sn->batch, ceiling);
	printf("raw LMDB synced commit (flags 0, one mdb_put + "
	       "mdb_txn_commit): %.1f us/commit\n",
	       s1->raw_us);
	if (s1->raw_us >= 100)
		printf("target: synced commit >= 100 us, so %u sync writers "
		       ">= 20x one writer: %.1fx, %s\n",
		       writer_counts[nw - 1], gc, target_word(gc, 20));
	else
		printf("target (%u sync writers >= 20x one writer) not "
		       "applicable: a synced commit costs %.1f us < 100 us "
		       "here (ratio %.1fx)\n",
		       writer_counts[nw - 1], s1->raw_us, gc);
	disk_ceiling(b, s1, sn);
	return 0;
fail:
	eng_close(b->e);
	b->e = NULL;
	return -1;
}

/* --------------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: bench-engine [--keys N] [--value-size B] [--seconds S]\n"
	    "                    [--rounds R] [--dir D] [--threads T[,T...]]\n"
	    "                    [--order shuffled|sorted|roundrobin]\n"
	    "                    [--only get,scan,writes] [--quick] "
	    "[--no-wal]\n"
	    "  --keys N        keys to load (default 100000; --quick 10000)\n"
	    "  --value-size B  bytes per value (default 1024)\n"
	    "  --seconds S     seconds per round (default 2; --quick 0.3)\n"
	    "  --rounds R      rounds per figure, the best counts\n"
	    "                  (default 3; --quick 1)\n"
	    "  --dir D         where the temporary store directory goes\n"
	    "                  (default $TMPDIR or /tmp); removed at exit\n"
	    "  --threads T     read thread counts (default 1..nproc)\n"
	    "  --order O       load order: shuffled (default), sorted or\n"
	    "                  roundrobin (over the namespaces)\n"
	    "  --only P        run only these parts: get,scan,writes\n"
	    "                  (for profiling; default all)\n"
	    "  --quick         a smoke run of a few seconds\n"
	    "  --no-wal        synced engine writes flush LMDB's pages at "
	    "each\n"
	    "                  commit, without the write-ahead log\n"
	    "  LAPIS_SEED      overrides the fixed random seed\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int have_keys = 0, have_secs = 0, have_rounds = 0;
	memset(o, 0, sizeof *o);
	o->value_size = 1024;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t u;
		if (strcmp(a, "--quick") == 0) {
			o->quick = 1;
			continue;
		}
		if (strcmp(a, "--no-wal") == 0) {
			o->no_wal = 1;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (!v)
			return -1;
		i++;
		if (strcmp(a, "--keys") == 0) {
			if (parse_u64(v, &u) || u < 1 || u > MAX_KEYS)
				return -1;
			o->keys = u;
			have_keys = 1;
		} else if (strcmp(a, "--value-size") == 0) {
			if (parse_u64(v, &u) || u < 1 || u > ENG_VALUE_MAX)
				return -1;
			o->value_size = (size_t)u;
		} else if (strcmp(a, "--seconds") == 0) {
			char *end;
			o->seconds = strtod(v, &end);
			if (end == v || *end || !(o->seconds > 0) ||
			    o->seconds > 3600)
				return -1;
			have_secs = 1;
		} else if (strcmp(a, "--rounds") == 0) {
			if (parse_u64(v, &u) || u < 1 || u > 100)
				return -1;
			o->rounds = (unsigned)u;
			have_rounds = 1;
		} else if (strcmp(a, "--order") == 0) {
			int found = -1;
			for (int k = 0; k < 3; k++)
				if (strcmp(v, order_names[k]) == 0)
					found = k;
			if (found < 0)
				return -1;
			o->order = found;
		} else if (strcmp(a, "--only") == 0) {
			char buf[64];
			snprintf(buf, sizeof buf, "%s", v);
			char *save = NULL;
			for (char *tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (strcmp(tok, "get") == 0)
					o->only |= ONLY_GET;
				else if (strcmp(tok, "scan") == 0)
					o->only |= ONLY_SCAN;
				else if (strcmp(tok, "writes") == 0)
					o->only |= ONLY_WRITES;
				else
					return -1;
			}
		} else if (strcmp(a, "--dir") == 0) {
			o->dir = v;
		} else if (strcmp(a, "--threads") == 0) {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", v);
			char *save = NULL;
			for (char *tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (parse_u64(tok, &u) || u < 1 || u > MAX_T ||
				    o->n_threads >= MAX_T)
					return -1;
				o->threads[o->n_threads++] = (unsigned)u;
			}
			if (!o->n_threads)
				return -1;
		} else {
			return -1;
		}
	}
	if (!have_keys)
		o->keys = o->quick ? 10000 : 100000;
	if (!have_secs)
		o->seconds = o->quick ? 0.3 : 2.0;
	if (!o->only)
		o->only = ONLY_ALL;
	if (!have_rounds)
		o->rounds = o->quick ? 1 : 3;
	return 0;
}

static void print_machine(struct bench *b)
{
	struct utsname u;
	char model[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof line, f)) {
			char *c = strchr(line, ':');
			if (strncmp(line, "model name", 10) == 0 && c) {
				snprintf(model, sizeof model, "%s", c + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		}
		fclose(f);
	}
	double load[3] = {0, 0, 0};
	if (getloadavg(load, 3) < 0)
		load[0] = load[1] = load[2] = -1;
	if (uname(&u) != 0)
		snprintf(u.release, sizeof u.release, "?");
	printf("machine: %s, nproc=%ld, allowed cpus=%u, kernel %s, "
	       "load %.2f %.2f %.2f\n",
	       model, sysconf(_SC_NPROCESSORS_ONLN), b->ncpu, u.release,
	       load[0], load[1], load[2]);
	printf("store dir: %s (%s)\n", b->root, fs_name(b->root));
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	int ret = 1;

	if (parse_args(argc, argv, &b->o)) {
		usage(stderr);
		return 2;
	}
	b->n = (uint32_t)b->o.keys;
	b->seed = DEFAULT_SEED;
	const char *env_seed = getenv("LAPIS_SEED");
	if (env_seed && parse_u64(env_seed, &b->seed)) {
		fprintf(stderr, "bench-engine: bad LAPIS_SEED\n");
		return 2;
	}

	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE && b->ncpu < 1024; c++)
			if (CPU_ISSET(c, &set))
				b->cpus[b->ncpu++] = c;
	}
	if (!b->ncpu) {
		b->cpus[0] = 0;
		b->ncpu = 1;
	}

	const char *base = b->o.dir;
	if (!base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	/* The root is at most 4095 bytes, so the two names below fit. */
	int w =
	    snprintf(b->root, sizeof b->root, "%s/lapis-bench-XXXXXX", base);
	if (w < 0 || (size_t)w >= sizeof b->root) {
		fprintf(stderr, "bench-engine: --dir too long\n");
		b->root[0] = '\0';
		return 2;
	}
	if (!mkdtemp(b->root)) {
		fprintf(stderr, "bench-engine: mkdtemp %s: %s\n", b->root,
			strerror(errno));
		b->root[0] = '\0';
		return 1;
	}
	if (snprintf(b->eng_dir, sizeof b->eng_dir, "%s/engine", b->root) < 0 ||
	    snprintf(b->raw_dir, sizeof b->raw_dir, "%s/raw", b->root) < 0)
		goto fail;

	int major, minor, patch;
	const char *ver = mdb_version(&major, &minor, &patch);
	printf("lapis engine benchmark%s\n", b->o.quick ? " (--quick)" : "");
	print_machine(b);
	printf("seed=0x%" PRIx64 " (LAPIS_SEED overrides)\n", b->seed);
	printf("data: %" PRIu32 " keys of %zu B (" PREFIX
	       "ns-XX/obj-%%08u, %d namespaces), values %zu B random "
	       "printable, loaded in %s order\n",
	       b->n, KEY_LEN, N_NAMESPACES, b->o.value_size,
	       order_names[b->o.order]);

	if (build_keys(b) || build_order(b)) {
		fprintf(stderr, "bench-engine: out of memory\n");
		goto fail;
	}
	double te, tr;
	if (eng_open_mode(b, 1) || load_engine(b, &te))
		goto fail;
	if (raw_open(b) || load_raw(b, &tr))
		goto fail;
	struct eng_info info;
	lp_err rc = eng_info(b->e, &info);
	if (rc != LP_OK) {
		eng_fail("eng_info", rc);
		goto fail;
	}
	MDB_envinfo ei;
	MDB_stat ms;
	mdb_env_info(b->env, &ei);
	mdb_env_stat(b->env, &ms);
	unsigned flags = 0;
	mdb_env_get_flags(b->env, &flags);
	char fbuf[256];
	printf("load: engine %.2f s (%.0f keys/s, %d puts per eng_txn, "
	       "nosync), file %.1f MiB; raw %.2f s (%.0f keys/s), file "
	       "%.1f MiB\n",
	       te, te > 0 ? b->n / te : 0, LOAD_BATCH,
	       (double)info.file_bytes / 1048576.0, tr, tr > 0 ? b->n / tr : 0,
	       (double)(ei.me_last_pgno + 1) * ms.ms_psize / 1048576.0);
	printf("engine: rev %" PRId64 ", %" PRIu64 " keys, map %.0f GiB "
	       "(default), eng_rd per get/scan\n",
	       info.rev, info.n_keys, (double)info.map_bytes / (1u << 30));
	printf("baseline: %s (%d.%d.%d), env flags %s, map %.0f GiB, "
	       "maxreaders %u, page %u B, depth %u, one unnamed DB; one "
	       "MDB_RDONLY txn per thread reused with "
	       "mdb_txn_reset/mdb_txn_renew around each get and scan, cursor "
	       "reused with mdb_cursor_renew (MDB_SET_RANGE + MDB_NEXT); "
	       "threads pinned like the engine's\n",
	       ver, major, minor, patch, flag_names(flags, fbuf, sizeof fbuf),
	       (double)ei.me_mapsize / (1u << 30), ei.me_maxreaders,
	       ms.ms_psize, ms.ms_depth);
	if (flush_stores(b) || warm_up(b))
		goto fail;
	fflush(stdout);

	if ((b->o.only & (ONLY_GET | ONLY_SCAN)) && run_reads(b))
		goto fail;
	eng_close(b->e);
	b->e = NULL;
	if ((b->o.only & ONLY_WRITES) && run_writes(b))
		goto fail;
	double load[3];
	if (getloadavg(load, 3) == 3)
		printf(
		    "\nload average at the end: %.2f %.2f %.2f (figures from "
		    "a loaded machine are lower bounds)\n",
		    load[0], load[1], load[2]);
	ret = 0;
fail:
	eng_close(b->e);
	if (b->env)
		mdb_env_close(b->env);
	free(b->keys);
	free(b->load_order);
	remove_root(b);
	return ret;
}
