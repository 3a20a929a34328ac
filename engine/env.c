/*
 * env.c -- opening and closing the store, the reader gate, map growth, meta.
 *
 * Threads: eng_open/eng_close on the owner's thread; the gate on every
 * reader (enter/leave) and on the writer (close/open around a resize).
 *
 * Invariants:
 *  1. mdb_env_set_mapsize runs only with the gate closed and every gate
 *     counter at zero, so no transaction of this process is active.
 *  2. One environment path is open at most once per process (LMDB's lock
 *     file must not be opened twice in one process): open_paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eng_int.h"
#include "lapis/assert.h"
#include "lapis/clock.h"
#include "lapis/log.h"

#define DEFAULT_MAP (32ull << 30) /* address space only: the file grows as used */
#define DEFAULT_READERS 1024	  /* LMDB's 126 is far too few for a server */
#define DEFAULT_REPLAYS 16
#define DEFAULT_PIN_SECONDS 120

static _Atomic uint64_t next_gen = 1;

/* Paths open in this process, guarded by paths_mu. */
static pthread_mutex_t paths_mu = PTHREAD_MUTEX_INITIALIZER;
struct open_path {
	struct open_path *next;
	dev_t dev;
	ino_t ino;
};
static struct open_path *open_paths;

lp_err eng__from_mdb(int mrc, const char *what)
{
	switch (mrc) {
	case MDB_SUCCESS:
		return LP_OK;
	case MDB_NOTFOUND:
		return LP_E_NOTFOUND;
	case MDB_KEYEXIST:
		return LP_E_EXISTS;
	case MDB_MAP_FULL:
		return LP_E_FULL;
	case MDB_READERS_FULL:
		lp_warn("lmdb %s: %s", what, mdb_strerror(mrc));
		return LP_ERR(LP_E_READERSFULL);
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_VERSION_MISMATCH:
		lp_error("lmdb %s: %s", what, mdb_strerror(mrc));
		return LP_ERR(LP_E_CORRUPT);
	case ENOMEM:
		return LP_ERR(LP_E_NOMEM);
	case ENOSPC:
	case EDQUOT:
		lp_error("lmdb %s: %s", what, mdb_strerror(mrc));
		return LP_ERR(LP_E_FULL);
	default:
		lp_error("lmdb %s: %s", what, mdb_strerror(mrc));
		return LP_ERR(LP_E_IO);
	}
}

int64_t eng__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ gate */

static _Thread_local int gate_slot = -1;
static _Thread_local int gate_depth; /* this thread's reads, any store */
static _Atomic unsigned gate_next;

bool eng__gate_held(void)
{
	return gate_depth > 0;
}

void eng__gate_enter(eng *e, int *slot)
{
	if (gate_slot < 0)
		gate_slot = (int)(atomic_fetch_add(&gate_next, 1) % GATE_SLOTS);
	int s = gate_slot;
	for (;;) {
		atomic_fetch_add(&e->gate.slot[s].n, 1);
		if (!atomic_load(&e->gate.closed))
			break;
		atomic_fetch_sub(&e->gate.slot[s].n, 1);
		pthread_mutex_lock(&e->gate.mu);
		while (atomic_load(&e->gate.closed))
			pthread_cond_wait(&e->gate.cv, &e->gate.mu);
		pthread_mutex_unlock(&e->gate.mu);
	}
	*slot = s;
	gate_depth++;
}

void eng__gate_leave(eng *e, int slot)
{
	long n = atomic_fetch_sub(&e->gate.slot[slot].n, 1);
	LP_ASSERT(n > 0);
	gate_depth--;
}

void eng__gate_close(eng *e)
{
	pthread_mutex_lock(&e->gate.mu);
	atomic_store(&e->gate.closed, 1);
	pthread_mutex_unlock(&e->gate.mu);
	for (int i = 0; i < GATE_SLOTS; i++) {
		while (atomic_load(&e->gate.slot[i].n) != 0)
			sched_yield();
	}
}

void eng__gate_open(eng *e)
{
	pthread_mutex_lock(&e->gate.mu);
	atomic_store(&e->gate.closed, 0);
	pthread_cond_broadcast(&e->gate.cv);
	pthread_mutex_unlock(&e->gate.mu);
}

/*
 * Grow the map (writer thread only, with no write txn open). Doubles it,
 * capped at max_size. Errors: LP_E_FULL at the maximum, LP_E_IO.
 */
lp_err eng__grow(eng *e)
{
	uint64_t cur = e->map_size;
	uint64_t next = cur * 2;
	if (e->max_size && next > e->max_size)
		next = e->max_size;
	if (next <= cur)
		return LP_E_FULL;
	eng__gate_close(e);
	int mrc = mdb_env_set_mapsize(e->env, (size_t)next);
	eng__gate_open(e);
	if (mrc)
		return eng__from_mdb(mrc, "set_mapsize");
	e->map_size = next;
	atomic_fetch_add(&e->map_grows, 1);
	lp_info("store map grown to %llu MiB", (unsigned long long)(next >> 20));
	return LP_OK;
}

/* Keep a tail of written zeros ahead of the pages LMDB uses. A synced
   commit that grows the file (or fills a hole) makes fdatasync write the
   inode as well, a second synchronous write; into blocks that are already
   written and synced it writes the data pages only. So while the tail is
   short, the writer writes PREALLOC_STEP more zeros at the end of the file
   before a group's transaction, and that group's fsync makes them
   durable: one commit in many pays for the block allocation. Measured
   with a raw LMDB loop of one synced 1 KiB put per commit on ext4: 215
   against 245 us per commit, 97 against 104 us of CPU.

   Called only by the thread committing a group (no LMDB write is in
   flight) and only on synced stores: LMDB writes pages only below its
   next page number, which is within the file, and the zeros go after the
   file's current end, so they never cover a page in use. The tail stays
   within the map and --max-size. A failed write (a full disk) truncates
   what it added and turns preallocation off for this open. */
#define PREALLOC_LEAD (2u << 20)
#define PREALLOC_STEP (256u << 10)

/* mdb_reader_check looks each reader pid up once (a lock probe on
   lock.mdb), cheap beside a commit; every 5 s bounds what a dead reader
   costs to 5 s of writes kept. */
#define READER_CHECK_MS 5000

void eng__reader_check(eng *e, bool now)
{
	int64_t t = lp_mono_ms();
	if (!now && t - e->readers_checked_ms < READER_CHECK_MS)
		return;
	e->readers_checked_ms = t;
	int dead = 0;
	if (mdb_reader_check(e->env, &dead) == 0 && dead > 0)
		lp_warn("%s: freed %d reader slot%s of a process that died "
			"inside a read (a killed backup or inspect?); the "
			"pages it held are used again",
			e->dir, dead, dead == 1 ? "" : "s");
}

/* The walk of LMDB's free list costs a read of its pages; while the file
   is under the quota nothing is walked, and past it a walk follows every
   group that grew the file, others at most every QUOTA_CHECK_MS. */
#define QUOTA_CHECK_MS 250

void eng__quota_update(eng *e, bool now)
{
	if (!e->quota)
		return;
	MDB_envinfo info;
	MDB_stat st;
	if (mdb_env_info(e->env, &info) || mdb_env_stat(e->env, &st))
		return;
	/* a group that grew the file is looked at at once, not 250 ms
	   later: writers would overshoot the quota by that much */
	int64_t t = lp_mono_ms();
	bool grew = (uint64_t)info.me_last_pgno > e->quota_last_pgno;
	e->quota_last_pgno = info.me_last_pgno;
	if (!now && !grew && t - e->quota_checked_ms < QUOTA_CHECK_MS)
		return;
	e->quota_checked_ms = t;
	uint64_t high = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
	if (high <= e->quota) {
		atomic_store(&e->over_quota, false);
		return;
	}
	/* LMDB's free list (dbi 0, open to read-only txns): each record is
	   an ID list whose first word is its length */
	MDB_txn *txn;
	MDB_cursor *c;
	if (mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))
		return;
	uint64_t free_pages = 0;
	if (!mdb_cursor_open(txn, 0, &c)) {
		MDB_val k, v;
		int mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
		while (!mrc) {
			if (v.mv_size >= sizeof(size_t)) {
				size_t n;
				memcpy(&n, v.mv_data, sizeof n);
				free_pages += n;
			}
			mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
		}
		mdb_cursor_close(c);
	}
	mdb_txn_abort(txn);
	uint64_t used = high - free_pages * st.ms_psize;
	bool over = used > e->quota;
	if (over != atomic_load(&e->over_quota))
		lp_warn(
		    "%s: %llu MiB of pages in use, %s the quota of %llu MiB%s",
		    e->dir, (unsigned long long)(used >> 20),
		    over ? "over" : "back under",
		    (unsigned long long)(e->quota >> 20),
		    over ? ": writes that put fail until deletes and "
			   "compaction free pages"
			 : "");
	atomic_store(&e->over_quota, over);
}

void eng__prealloc(eng *e)
{
	static const char zeros[PREALLOC_STEP];
	if (e->nosync || e->readonly || e->zero_off)
		return;
	MDB_envinfo ei;
	MDB_stat ms;
	if (mdb_env_info(e->env, &ei) || mdb_env_stat(e->env, &ms)) {
		e->zero_off = true;
		return;
	}
	uint64_t used = ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize;
	if (e->zero_end >= used + PREALLOC_LEAD)
		return; /* zero_end <= the file's size: no syscall needed */
	int fd;
	struct stat st;
	if (mdb_env_get_fd(e->env, &fd) || fstat(fd, &st)) {
		e->zero_off = true;
		return;
	}
	uint64_t size = (uint64_t)st.st_size;
	e->zero_end = size;
	if (size >= used + PREALLOC_LEAD)
		return;
	uint64_t limit = e->map_size;
	if (e->max_size && e->max_size < limit)
		limit = e->max_size;
	uint64_t end = size + PREALLOC_STEP;
	if (end > limit)
		end = limit;
	if (end <= size)
		return;
	size_t n = (size_t)(end - size);
	ssize_t w = pwrite(fd, zeros, n, (off_t)size);
	if (w != (ssize_t)n) {
		lp_warn("%s/data.mdb: cannot preallocate %zu bytes at %llu "
			"(%s); preallocation off",
			e->dir, n, (unsigned long long)size,
			w < 0 ? strerror(errno) : "short write");
		if (ftruncate(fd, (off_t)size))
			lp_warn("%s/data.mdb: truncate back to %llu: %s",
				e->dir, (unsigned long long)size,
				strerror(errno));
		e->zero_off = true;
		return;
	}
	e->zero_end = end;
}

/* Adopt a map size another process set (MDB_MAP_RESIZED). */
lp_err eng__remap(eng *e)
{
	eng__gate_close(e);
	int mrc = mdb_env_set_mapsize(e->env, 0);
	MDB_envinfo info;
	if (!mrc && !mdb_env_info(e->env, &info))
		e->map_size = info.me_mapsize;
	eng__gate_open(e);
	return eng__from_mdb(mrc, "set_mapsize(0)");
}

/* ------------------------------------------------------------ meta */

lp_err eng__meta_get_i64(MDB_txn *txn, eng *e, const char *name, int64_t *out)
{
	MDB_val k = {strlen(name), (void *)name}, v;
	int mrc = mdb_get(txn, e->db_meta, &k, &v);
	if (mrc)
		return eng__from_mdb(mrc, "meta get");
	if (v.mv_size != 8)
		return LP_ERR(LP_E_CORRUPT);
	memcpy(out, v.mv_data, 8);
	return LP_OK;
}

int eng__meta_put_i64(MDB_txn *txn, eng *e, const char *name, int64_t v)
{
	MDB_val k = {strlen(name), (void *)name}, d = {8, &v};
	return mdb_put(txn, e->db_meta, &k, &d, 0);
}

/* The store's revision is a key of the main database, beside the named
   databases' records: a commit rewrites that page anyway (a named
   database's root moved), so the revision written by every commit costs
   no page of its own, where a key of meta costs one. Stores written
   before kept it in meta, read from there until a commit writes it here. */
#define REV_KEY "lapis.rev"

lp_err eng__rev_get(MDB_txn *txn, eng *e, int64_t *out)
{
	MDB_val k = {sizeof REV_KEY - 1, REV_KEY}, v;
	int mrc = mdb_get(txn, e->db_main, &k, &v);
	if (mrc == MDB_NOTFOUND)
		return eng__meta_get_i64(txn, e, "rev", out);
	if (mrc)
		return eng__from_mdb(mrc, "rev get");
	if (v.mv_size != 8)
		return LP_ERR(LP_E_CORRUPT);
	memcpy(out, v.mv_data, 8);
	return LP_OK;
}

int eng__rev_put(MDB_txn *txn, eng *e, int64_t rev)
{
	MDB_val k = {sizeof REV_KEY - 1, REV_KEY}, d = {8, &rev};
	return mdb_put(txn, e->db_main, &k, &d, 0);
}

static int meta_put_raw(MDB_txn *txn, eng *e, const char *name, const void *p,
			size_t n)
{
	MDB_val k = {strlen(name), (void *)name}, d = {n, (void *)p};
	return mdb_put(txn, e->db_meta, &k, &d, 0);
}

static lp_err random_bytes(void *p, size_t n)
{
	FILE *f = fopen("/dev/urandom", "rb");
	if (!f)
		return LP_ERR(LP_E_IO);
	size_t got = fread(p, 1, n, f);
	fclose(f);
	return got == n ? LP_OK : LP_ERR(LP_E_IO);
}

/* Open the named databases and read or create meta. */
static lp_err init_dbs(eng *e)
{
	MDB_txn *txn;
	unsigned tflags = e->readonly ? MDB_RDONLY : 0;
	int mrc = mdb_txn_begin(e->env, NULL, tflags, &txn);
	if (mrc == MDB_MAP_RESIZED) {
		mdb_env_set_mapsize(e->env, 0);
		mrc = mdb_txn_begin(e->env, NULL, tflags, &txn);
	}
	if (mrc)
		return eng__from_mdb(mrc, "txn_begin(init)");
	unsigned cflags = e->readonly ? 0 : MDB_CREATE;
	lp_err rc = LP_OK;
	if ((mrc = mdb_dbi_open(txn, NULL, 0, &e->db_main)) ||
	    (mrc = mdb_dbi_open(txn, "meta", cflags, &e->db_meta)) ||
	    (mrc = mdb_dbi_open(txn, "state", cflags, &e->db_state)) ||
	    (mrc = mdb_dbi_open(txn, "hist", cflags, &e->db_hist)) ||
	    (mrc = mdb_dbi_open(txn, "log", cflags, &e->db_log))) {
		rc = mrc == MDB_NOTFOUND ? LP_ERR(LP_E_FORMAT)
					 : eng__from_mdb(mrc, "dbi_open");
		if (mrc == MDB_NOTFOUND)
			lp_error("%s: not a lapis store", e->dir);
		goto fail;
	}
	MDB_val k = {6, "format"}, v;
	mrc = mdb_get(txn, e->db_meta, &k, &v);
	if (mrc == MDB_NOTFOUND) {
		if (e->readonly) {
			rc = LP_ERR(LP_E_FORMAT);
			lp_error("%s: not a lapis store (no format)", e->dir);
			goto fail;
		}
		uint32_t fmt = ENG_FORMAT;
		uint8_t cid[16];
		uint64_t seed;
		if ((rc = random_bytes(cid, sizeof cid)) ||
		    (rc = random_bytes(&seed, sizeof seed)))
			goto fail;
		if ((mrc = meta_put_raw(txn, e, "format", &fmt, 4)) ||
		    (mrc = meta_put_raw(txn, e, "cluster", cid, 16)) ||
		    (mrc = meta_put_raw(txn, e, "seed", &seed, 8)) ||
		    (mrc = eng__rev_put(txn, e, 1)) ||
		    (mrc = eng__meta_put_i64(txn, e, "compacted", 0))) {
			rc = eng__from_mdb(mrc, "meta init");
			goto fail;
		}
	} else if (mrc) {
		rc = eng__from_mdb(mrc, "meta format");
		goto fail;
	} else {
		uint32_t fmt = 0;
		if (v.mv_size == 4)
			memcpy(&fmt, v.mv_data, 4);
		if (fmt != ENG_FORMAT) {
			lp_error("%s: store format %u is not one this lapis "
				 "reads (format %u)",
				 e->dir, fmt, ENG_FORMAT);
			rc = LP_ERR(LP_E_FORMAT);
			goto fail;
		}
	}
	MDB_val ck = {7, "cluster"}, sk = {4, "seed"}, cv, sv;
	if (mdb_get(txn, e->db_meta, &ck, &cv) || cv.mv_size != 16 ||
	    mdb_get(txn, e->db_meta, &sk, &sv) || sv.mv_size != 8) {
		rc = LP_ERR(LP_E_CORRUPT);
		goto fail;
	}
	for (int i = 0; i < 16; i++)
		snprintf(e->cluster_id + 2 * i, 3, "%02x",
			 ((const uint8_t *)cv.mv_data)[i]);
	memcpy(&e->hash_seed, sv.mv_data, 8);
	int64_t rev, compacted;
	if ((rc = eng__rev_get(txn, e, &rev)) ||
	    (rc = eng__meta_get_i64(txn, e, "compacted", &compacted)))
		goto fail;
	atomic_store(&e->rev, rev);
	atomic_store(&e->compacted, compacted);
	/* Committing (a read-only txn too) keeps the database handles it
	   opened valid for the environment's life. */
	mrc = mdb_txn_commit(txn);
	return eng__from_mdb(mrc, "commit(init)");
fail:
	mdb_txn_abort(txn);
	return rc;
}

static lp_err claim_path(eng *e)
{
	struct stat st;
	if (stat(e->dir, &st))
		return LP_ERR(LP_E_IO);
	pthread_mutex_lock(&paths_mu);
	for (struct open_path *p = open_paths; p; p = p->next) {
		if (p->dev == st.st_dev && p->ino == st.st_ino) {
			pthread_mutex_unlock(&paths_mu);
			return LP_ERR(LP_E_LOCKED);
		}
	}
	struct open_path *p = malloc(sizeof *p);
	if (!p) {
		pthread_mutex_unlock(&paths_mu);
		return LP_ERR(LP_E_NOMEM);
	}
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->next = open_paths;
	open_paths = p;
	pthread_mutex_unlock(&paths_mu);
	return LP_OK;
}

static void release_path(eng *e)
{
	struct stat st;
	if (!e->dir || stat(e->dir, &st))
		return;
	pthread_mutex_lock(&paths_mu);
	for (struct open_path **pp = &open_paths; *pp; pp = &(*pp)->next) {
		if ((*pp)->dev == st.st_dev && (*pp)->ino == st.st_ino) {
			struct open_path *p = *pp;
			*pp = p->next;
			free(p);
			break;
		}
	}
	pthread_mutex_unlock(&paths_mu);
}

static void free_eng(eng *e)
{
	if (!e)
		return;
	pthread_mutex_destroy(&e->gate.mu);
	pthread_cond_destroy(&e->gate.cv);
	pthread_mutex_destroy(&e->rd_mu);
	pthread_mutex_destroy(&e->rev_mu);
	pthread_cond_destroy(&e->rev_cv);
	pthread_mutex_destroy(&e->pin_mu);
	pthread_mutex_destroy(&e->replay_mu);
	pthread_cond_destroy(&e->replay_cv);
	pthread_mutex_destroy(&e->cmp_mu);
	pthread_cond_destroy(&e->cmp_cv);
	eng__counts_free(e);
	free(e->dir);
	e->magic = 0;
	free(e);
}

#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u

bool eng__lmdb_meta(const uint8_t *pg, size_t len, struct eng_lmdb_meta *m)
{
	uint32_t magic, version;
	if (len < 152)
		return false;
	memcpy(&magic, pg + 16, 4);
	memcpy(&version, pg + 20, 4);
	memcpy(&m->psize, pg + 40, 4);
	memcpy(&m->last_pg, pg + 136, 8);
	memcpy(&m->txnid, pg + 144, 8);
	return magic == LMDB_MAGIC && version == LMDB_DATA_VERSION &&
	       m->psize >= 512 && m->psize <= (64u << 10) &&
	       !(m->psize & (m->psize - 1));
}

lp_err eng_file_check(const char *path, char *msg, size_t msg_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msg_len, "%s: %s", path, strerror(errno));
		return LP_ERR(LP_E_IO);
	}
	/* both meta pages: the second at the first's page size (4096 when
	   the first is torn); the size after them, as a live writer grows
	   the file before it writes a meta page naming the new pages */
	uint8_t pg[2][512];
	struct eng_lmdb_meta m[2];
	bool ok[2] = {false, false};
	ssize_t n = pread(fd, pg[0], sizeof pg[0], 0);
	ok[0] = n == (ssize_t)sizeof pg[0] &&
		eng__lmdb_meta(pg[0], sizeof pg[0], &m[0]);
	off_t second = ok[0] ? (off_t)m[0].psize : 4096;
	n = pread(fd, pg[1], sizeof pg[1], second);
	ok[1] = n == (ssize_t)sizeof pg[1] &&
		eng__lmdb_meta(pg[1], sizeof pg[1], &m[1]);
	struct stat st;
	int serr = fstat(fd, &st) ? errno : 0;
	close(fd);
	if (serr) {
		snprintf(msg, msg_len, "%s: %s", path, strerror(serr));
		return LP_ERR(LP_E_IO);
	}
	if (st.st_size == 0) {
		snprintf(msg, msg_len, "%s is empty", path);
		return LP_ERR(LP_E_CORRUPT);
	}
	if (!ok[0] && !ok[1]) {
		snprintf(msg, msg_len,
			 "%s is no LMDB file (no valid meta page)", path);
		return LP_ERR(LP_E_CORRUPT);
	}
	/* LMDB opens at the valid meta page with the higher txnid */
	const struct eng_lmdb_meta *cur =
	    !ok[1] || (ok[0] && m[0].txnid >= m[1].txnid) ? &m[0] : &m[1];
	uint64_t need = (cur->last_pg + 1) * (uint64_t)cur->psize;
	if ((uint64_t)st.st_size < need) {
		snprintf(msg, msg_len,
			 "%s is truncated: %lld bytes, where its last page "
			 "ends at byte %llu",
			 path, (long long)st.st_size, (unsigned long long)need);
		return LP_ERR(LP_E_CORRUPT);
	}
	return LP_OK;
}

lp_err eng_open(const struct eng_opts *o, eng **out)
{
	if (!o || !o->dir || !out)
		return LP_ERR(LP_E_INVAL);
	eng *e = calloc(1, sizeof *e);
	if (!e)
		return LP_ERR(LP_E_NOMEM);
	e->magic = ENG_MAGIC;
	pthread_mutex_init(&e->gate.mu, NULL);
	pthread_cond_init(&e->gate.cv, NULL);
	pthread_mutex_init(&e->rd_mu, NULL);
	pthread_mutex_init(&e->rev_mu, NULL);
	lp_cond_init_mono(&e->rev_cv);
	lp_cond_init_mono(&e->cmp_cv);
	pthread_mutex_init(&e->pin_mu, NULL);
	pthread_mutex_init(&e->replay_mu, NULL);
	pthread_cond_init(&e->replay_cv, NULL);
	pthread_mutex_init(&e->cmp_mu, NULL);
	eng__counts_init(e);
	e->pins.next = e->pins.prev = &e->pins;
	e->readonly = o->readonly != 0;
	e->nosync = o->nosync != 0;
	e->max_size = o->max_size;
	e->quota = o->quota;
	e->max_replays = o->max_replays ? o->max_replays : DEFAULT_REPLAYS;
	e->ring_events = o->ring_events;
	e->ring_bytes = o->ring_bytes;
	e->pin_seconds = o->pin_seconds ? o->pin_seconds : DEFAULT_PIN_SECONDS;
	e->on_commit = o->on_commit;
	e->on_compact_step = o->on_compact_step;
	e->hook_ud = o->hook_ud;
	e->gen = atomic_fetch_add(&next_gen, 1);
	e->dir = strdup(o->dir);
	lp_err rc;
	bool claimed = false;
	if (!e->dir) {
		rc = LP_ERR(LP_E_NOMEM);
		goto fail;
	}
	if (!e->readonly && mkdir(o->dir, 0700) && errno != EEXIST) {
		lp_error("%s: %s", o->dir, strerror(errno));
		rc = LP_ERR(LP_E_IO);
		goto fail;
	}
	if ((rc = claim_path(e)))
		goto fail;
	claimed = true;
	int mrc = mdb_env_create(&e->env);
	if (mrc) {
		rc = eng__from_mdb(mrc, "env_create");
		goto fail;
	}
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/data.mdb", o->dir);
	uint64_t file = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	/* the room above a quota, where deletes and compaction go on: over
	   the file as it is, should it be past the quota already (a quota
	   set on a grown store), or they would find none */
	if (e->quota && !e->max_size)
		e->max_size = (file > e->quota ? file : e->quota) +
			      e->quota / 4 + (64u << 20);
	uint64_t map = o->initial_map ? o->initial_map : DEFAULT_MAP;
	if (e->max_size && map > e->max_size)
		map = e->max_size;
	/* An existing file larger than the asked map keeps its size. */
	if (file > map)
		map = file;
	mdb_env_set_mapsize(e->env, (size_t)map);
	mdb_env_set_maxreaders(e->env,
			       o->max_readers ? o->max_readers : DEFAULT_READERS);
	mdb_env_set_maxdbs(e->env, 8);
	unsigned flags = MDB_NOTLS;
	if (e->readonly)
		flags |= MDB_RDONLY;
	/* With the log, a commit is durable by its record (wal.c). A store
	   opened without it first recovers a log left from before, then
	   drops it. */
	bool want_wal = !e->readonly && !e->nosync && !o->no_wal;
	if ((want_wal || (!e->readonly && eng_has_wal(o->dir))) &&
	    (rc = eng__wal_prepare(e)))
		goto fail;
	if (e->readonly && eng_has_wal(o->dir) &&
	    (rc = eng__wal_check_ro(o->dir)))
		goto fail;
	if (e->nosync || want_wal)
		flags |= MDB_NOSYNC | MDB_NOMETASYNC;
	/* A file cut short would be SIGBUS once mapped: refused first (an
	   empty one a writer makes a new store of). After the log's
	   recovery, which puts back the meta pages of a durable commit. */
	if (stat(path, &st) == 0 && (e->readonly || st.st_size > 0)) {
		char why[PATH_MAX + 128];
		if ((rc = eng_file_check(path, why, sizeof why))) {
			lp_error("%s: cannot open store: %s", o->dir, why);
			goto fail;
		}
	}
	mrc = mdb_env_open(e->env, o->dir, flags, 0600);
	if (mrc) {
		rc = mrc == ENOENT ? LP_ERR(LP_E_NOTFOUND)
				   : eng__from_mdb(mrc, "env_open");
		lp_error("%s: cannot open store: %s", o->dir, mdb_strerror(mrc));
		goto fail;
	}
	MDB_envinfo info;
	mdb_env_info(e->env, &info);
	e->map_size = info.me_mapsize;
	MDB_stat est;
	e->psize = mdb_env_stat(e->env, &est) == 0 ? est.ms_psize : 0;
	if ((rc = init_dbs(e)))
		goto fail;
	if (e->wal && (rc = eng__wal_start(e, !want_wal)))
		goto fail;
	/* no cache where another process writes (invariant 1 of rcache.c
	   counts this process's commits only) */
	if ((rc = eng__rcache_new(e, o->readonly || o->read_cache < 0 ? 0
				     : o->read_cache ? (uint64_t)o->read_cache
						     : ENG_READ_CACHE_DEFAULT)))
		goto fail;
	if ((rc = eng__hub_new(e)))
		goto fail;
	if (!e->readonly) {
		eng__reader_check(e, true);
		eng__quota_update(e, true);
	}
	if (!e->readonly && (rc = eng__writer_start(e)))
		goto fail;
	eng__live_add(e);
	*out = e;
	return LP_OK;
fail:
	eng__hub_free(e);
	eng__rcache_free(e);
	eng__wal_close(e);
	if (e->env)
		mdb_env_close(e->env);
	if (claimed)
		release_path(e);
	free_eng(e);
	return rc;
}

void eng_close(eng *e)
{
	if (!e)
		return;
	LP_ASSERT(e->magic == ENG_MAGIC);
	atomic_store(&e->closing, 1);
	eng__compactor_stop(e);
	eng__hub_close(e);
	if (!e->readonly)
		eng__writer_stop(e);
	eng__wal_close(e);
	pthread_mutex_lock(&e->rev_mu);
	pthread_cond_broadcast(&e->rev_cv);
	pthread_mutex_unlock(&e->rev_mu);
	/* Parked read transactions of every thread (each is reset, not busy);
	   off the live list first, so no exiting thread frees one meanwhile. */
	eng__live_remove(e);
	pthread_mutex_lock(&e->rd_mu);
	struct eng_rd *r = e->rd_all;
	e->rd_all = NULL;
	pthread_mutex_unlock(&e->rd_mu);
	while (r) {
		struct eng_rd *next = r->next;
		LP_ASSERT_CTX(!r->busy, "eng_close with a read still open");
		eng__rd_free(r);
		r = next;
	}
	/* Pins still held by callers are left to eng_unpin: unlink them. */
	pthread_mutex_lock(&e->pin_mu);
	while (e->pins.next != &e->pins) {
		struct pin_node *n = e->pins.next;
		n->next->prev = n->prev;
		n->prev->next = n->next;
		n->next = n->prev = n;
	}
	pthread_mutex_unlock(&e->pin_mu);
	eng__rcache_free(e);
	mdb_env_close(e->env);
	eng__hub_free(e);
	release_path(e);
	free_eng(e);
}

int64_t eng_rev(eng *e)
{
	return atomic_load(&e->rev);
}

int64_t eng_compacted(eng *e)
{
	return atomic_load(&e->compacted);
}

lp_err eng_wait_rev(eng *e, int64_t rev, int timeout_ms)
{
	if (atomic_load(&e->rev) >= rev)
		return LP_OK;
	struct timespec dl = lp_mono_deadline(timeout_ms);
	lp_err rc = LP_OK;
	pthread_mutex_lock(&e->rev_mu);
	while (atomic_load(&e->rev) < rev) {
		if (atomic_load(&e->closing)) {
			rc = LP_E_CLOSED;
			break;
		}
		if (pthread_cond_timedwait(&e->rev_cv, &e->rev_mu, &dl) ==
		    ETIMEDOUT) {
			rc = atomic_load(&e->rev) >= rev ? LP_OK : LP_E_FUTURE;
			break;
		}
	}
	pthread_mutex_unlock(&e->rev_mu);
	return rc;
}

void eng_stats(eng *e, struct eng_stats *out)
{
	memset(out, 0, sizeof *out);
	out->rev = atomic_load(&e->rev);
	out->compacted = atomic_load(&e->compacted);
	out->groups = atomic_load(&e->groups);
	out->durable_waits = atomic_load(&e->durable_waits);
	out->led_groups = atomic_load(&e->led_groups);
	out->txns = atomic_load(&e->txns);
	out->map_grows = atomic_load(&e->map_grows);
	out->compact_steps = atomic_load(&e->cmp_steps);
	out->compact_folded = atomic_load(&e->cmp_folded);
	out->compact_step_most = atomic_load(&e->cmp_step_most);
	out->compact_step_bytes_most = atomic_load(&e->cmp_step_bytes_most);
	out->queued = e->wq ? eng__queued(e) : 0;
	MDB_envinfo info;
	if (!mdb_env_info(e->env, &info))
		out->map_bytes = info.me_mapsize;
	out->watchers = eng__n_watchers(e);
	pthread_mutex_lock(&e->replay_mu);
	out->replays = e->replays;
	pthread_mutex_unlock(&e->replay_mu);
	pthread_mutex_lock(&e->pin_mu);
	out->pins = e->n_pins;
	pthread_mutex_unlock(&e->pin_mu);
	out->compactor_last_ok = atomic_load(&e->cmp_last_ok);
	out->compactor_last_fail = atomic_load(&e->cmp_last_fail);
	out->compactor_last_err = (lp_err)atomic_load(&e->cmp_last_err);
	pthread_mutex_lock(&e->cmp_mu);
	out->compactor_interval_ms = e->cmp_interval_ms;
	pthread_mutex_unlock(&e->cmp_mu);
	eng__wal_stats(e, out);
}
