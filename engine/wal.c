/*
 * wal.c -- the write-ahead log of a synced store.
 *
 * A synced commit through LMDB alone writes every page the transaction
 * touched, scattered over data.mdb, flushes them, then writes and flushes a
 * meta page: about fourteen scattered pages and two flushes for one small
 * write. With the log, LMDB commits without flushing (MDB_NOSYNC) and a
 * group is durable once its record -- the txns' operations at their
 * revisions, appended to a preallocated segment -- is flushed: one
 * sequential write and one fdatasync per group. A checkpoint, in a thread
 * of its own, makes LMDB's file durable up to a commit and records where
 * the log goes on from there. Between checkpoints, the same thread starts
 * the writeback of LMDB's dirty pages as records come (ckpt_main), so that
 * no checkpoint has a second of pages to flush at once.
 *
 * Files (in the data directory)
 *   wal.ckpt  two slots, written in turn; the valid one with the higher
 *             epoch is the checkpoint: data.mdb's device and inode (kept
 *             for the format, not read: metas_follow tells the file by
 *             its meta pages) and page size, the revision, a copy of
 *             LMDB's two meta pages
 *             as they were right after that commit, and the segment and
 *             sequence number of the first record after it.
 *   wal.0/1   segments of records {magic, length, seq, checksum, payload}.
 *             Records after a checkpoint start at offset 0 of its segment
 *             and may go on at offset 0 of the other one; replay stops at
 *             the first record that is not the next in sequence or whose
 *             checksum fails (a torn or stale one).
 *
 * Invariants
 *  1. A record is written (and its writeback started) before its LMDB
 *     transaction commits, and flushed right after it; no caller is
 *     acknowledged and no reader sees the commit before that flush
 *     (writer.c invariants 3 and 8). A record whose commit fails is erased
 *     before the next one.
 *  2. The checkpoint's snapshot is never overwritten: a read transaction
 *     opened right after its commit is held until the next checkpoint is
 *     durable, so LMDB reuses none of its pages. Whatever LMDB wrote after
 *     it (pages, meta pages) may be lost or torn by a system crash;
 *     recovery writes the saved meta pages back, which makes data.mdb that
 *     snapshot again, and replays the records after it.
 *  3. The writer switches segments only when it hands a checkpoint over,
 *     and hands one over only when none is in flight: records after the
 *     durable checkpoint span at most its segment and the other one.
 *  4. A commit that is not logged (a group too large for a segment,
 *     compaction, a revision bump) is followed by a synchronous checkpoint
 *     before anyone is told it is done. Compaction slices are not logged:
 *     a system crash may undo the ones after the last checkpoint, which
 *     only leaves history the next compaction deletes.
 *  5. A failed flush or checkpoint breaks the log: every later write fails
 *     (after a failed fsync, the page cache no longer says what is on the
 *     disk). A segment that cannot grow (a full disk) fails only the group
 *     at hand: nothing of it was written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eng_int.h"
#include "lapis/clock.h"
#include "lapis/log.h"

#define REC_MAGIC 0x4c57414cu  /* "LWAL" */
#define CKPT_MAGIC 0x4c43504bu /* "LCPK" */
#define CKPT_VERSION 1u
#define META_MAX (64u << 10) /* LMDB's page size at most */
#define CKPT_SLOT (4096u + 2 * META_MAX)
#define ZERO_CHUNK (1u << 20)

struct ckpt_head {
	uint32_t magic, version;
	uint64_t epoch;
	uint64_t dev, ino; /* data.mdb's */
	int64_t rev;
	uint32_t psize, seg;
	uint64_t seq; /* of the first record after the checkpoint */
	uint64_t sum; /* over this head (sum 0) and the meta pages */
};

struct rec_head {
	uint32_t magic, len;
	uint64_t seq;
	uint64_t sum; /* over seq, len and the payload */
};

struct ckpt_job {
	uint8_t *slot;	/* a checkpoint slot: its head, then the meta pages */
	uint8_t *metas; /* = slot + sizeof(struct ckpt_head), 2 * psize */
	int64_t rev;
	uint32_t seg;
	uint64_t seq;
	MDB_txn *rd; /* reader on the snapshot */
};

struct eng_wal {
	int ckpt_fd, seg_fd[2];
	unsigned psize;
	uint64_t dev, ino;
	uint64_t epoch;		/* of the durable checkpoint */
	struct ckpt_head found; /* at open: the checkpoint to recover from */
	bool have_found;
	/* the committing thread's */
	uint32_t active;
	uint64_t off, zero_end[2];
	uint64_t seq; /* the next record's */
	int64_t last_ckpt_ns;
	uint8_t *buf; /* a group's record */
	size_t cap;
	/* the checkpoint in flight and the thread that runs it */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool busy;   /* a checkpoint in flight */
	bool queued; /* ... handed to the thread, not yet taken */
	bool stop, started;
	_Atomic bool broken;
	struct ckpt_job job;
	MDB_txn *held; /* reader on the durable checkpoint */
	pthread_t thr;
	_Atomic uint64_t checkpoints, records, writebacks;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t ckpt_sum(const struct ckpt_head *h, const uint8_t *metas)
{
	struct ckpt_head c = *h;
	c.sum = 0;
	return eng__hash64(eng__hash64(CKPT_MAGIC, &c, sizeof c), metas,
			   2 * (size_t)h->psize);
}

static uint64_t rec_sum(const struct rec_head *h, const uint8_t *p)
{
	return eng__hash64(h->seq ^ ((uint64_t)h->len << 32), p, h->len);
}

/* All n bytes at off, read or written (short transfers and EINTR go
   on). */
static bool full_io(int fd, void *b, size_t n, uint64_t off, bool wr)
{
	uint8_t *p = b;
	while (n) {
		ssize_t r = wr ? pwrite(fd, p, n, (off_t)off)
			       : pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

static bool full_pread(int fd, void *b, size_t n, uint64_t off)
{
	return full_io(fd, b, n, off, false);
}

static bool full_pwrite(int fd, const void *b, size_t n, uint64_t off)
{
	return full_io(fd, (void *)b, n, off, true);
}

/* The log's files: the checkpoint, then segments 0 and 1. */
static const char *const wal_files[] = {"wal.ckpt", "wal.0", "wal.1"};

static int open_in(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC, 0600);
}

/* Make the directory's entries (files made or removed) durable. */
static bool sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = fsync(fd) == 0;
	close(fd);
	return ok;
}

/* Whether some process has LMDB's lock file open (LMDB's own test: the
   first opener can lock byte 0 exclusively). */
static bool lmdb_in_use(const char *dir)
{
	int fd = open_in(dir, "lock.mdb", O_RDWR);
	if (fd < 0)
		return false;
	struct flock fl = {
	    .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	bool busy = fcntl(fd, F_SETLK, &fl) != 0;
	close(fd);
	return busy;
}

/* Read the checkpoint slots; the valid one with the higher epoch, with its
   meta pages in *metas (malloc'd). */
static bool read_ckpt(int fd, struct ckpt_head *out, uint8_t **metas)
{
	bool found = false;
	uint8_t *slot = malloc(CKPT_SLOT);
	if (!slot)
		return false;
	for (uint32_t i = 0; i < 2; i++) {
		struct ckpt_head h;
		uint64_t at = (uint64_t)i * CKPT_SLOT;
		if (!full_pread(fd, &h, sizeof h, at) ||
		    h.magic != CKPT_MAGIC || h.version != CKPT_VERSION ||
		    h.psize < 512 || h.psize > META_MAX ||
		    (h.psize & (h.psize - 1)) || h.seg > 1 ||
		    !full_pread(fd, slot + sizeof h, 2 * (size_t)h.psize,
				at + sizeof h) ||
		    h.sum != ckpt_sum(&h, slot + sizeof h))
			continue;
		if (found && h.epoch <= out->epoch)
			continue;
		uint8_t *m = malloc(2 * (size_t)h.psize);
		if (!m)
			continue;
		memcpy(m, slot + sizeof h, 2 * (size_t)h.psize);
		free(*metas);
		*metas = m;
		*out = h;
		found = true;
	}
	free(slot);
	return found;
}

/* What data.mdb's meta page c is beside the one the checkpoint saved in
   its slot (sv): the same, a later one (LMDB went on: a higher txnid),
   torn, or an older or foreign one. */
enum slot_state { SLOT_SAME, SLOT_LATER, SLOT_TORN, SLOT_OTHER };

static enum slot_state meta_slot(const uint8_t *c, const uint8_t *sv,
				 unsigned psize)
{
	struct eng_lmdb_meta cm, sm;
	if (!memcmp(c, sv, psize))
		return SLOT_SAME;
	if (!eng__lmdb_meta(c, psize, &cm))
		return SLOT_TORN;
	return eng__lmdb_meta(sv, psize, &sm) && cm.psize == sm.psize &&
		       cm.txnid > sm.txnid
		   ? SLOT_LATER
		   : SLOT_OTHER;
}

/* Is cur, data.mdb's first two pages, the file this checkpoint was taken
   of, as a crash may have left it? Each meta page is either the saved one,
   a later one, or torn. 1: it is; -1: it is not (a meta page older than
   the checkpoint's, another page size: a file restored or replaced in
   place); 0: cannot tell (both torn). Device and inode numbers do not say
   it: a directory copied to another disk or host after a crash keeps its
   content, not its numbers, and a file copied over data.mdb keeps the
   inode. */
static int metas_follow(const uint8_t *cur, const uint8_t *saved,
			unsigned psize)
{
	int seen = 0;
	for (unsigned i = 0; i < 2; i++) {
		enum slot_state st = meta_slot(
		    cur + (size_t)i * psize, saved + (size_t)i * psize, psize);
		if (st == SLOT_OTHER)
			return -1;
		seen += st != SLOT_TORN;
	}
	return seen ? 1 : 0;
}

static uint8_t *next_rec(struct eng_wal *w, uint32_t seg, uint64_t *off,
			 uint64_t seq, uint32_t *len);

/* Does the log hold a record after the checkpoint found at open? */
static bool records_after(struct eng_wal *w)
{
	uint64_t off = 0;
	uint32_t len;
	uint8_t *p = next_rec(w, w->found.seg, &off, w->found.seq, &len);
	free(p);
	return p != NULL;
}

static void wal_free(struct eng_wal *w)
{
	if (!w)
		return;
	if (w->ckpt_fd >= 0)
		close(w->ckpt_fd);
	for (int i = 0; i < 2; i++)
		if (w->seg_fd[i] >= 0)
			close(w->seg_fd[i]);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->job.slot);
	free(w->buf);
	free(w);
}

lp_err eng__wal_check_ro(const char *dir)
{
	struct eng_wal w = {.ckpt_fd = -1, .seg_fd = {-1, -1}};
	uint8_t *metas = NULL, *cur = NULL;
	lp_err rc = LP_OK;
	int dfd = -1;
	w.ckpt_fd = open_in(dir, wal_files[0], O_RDONLY);
	if (w.ckpt_fd < 0 || lmdb_in_use(dir) ||
	    !read_ckpt(w.ckpt_fd, &w.found, &metas))
		goto out;
	w.seg_fd[w.found.seg] =
	    open_in(dir, wal_files[1 + w.found.seg], O_RDONLY);
	size_t mlen = 2 * (size_t)w.found.psize;
	dfd = open_in(dir, "data.mdb", O_RDONLY);
	cur = malloc(mlen);
	if (w.seg_fd[w.found.seg] < 0 || dfd < 0 || !cur ||
	    !full_pread(dfd, cur, mlen, 0) || !records_after(&w))
		goto out;
	/* a commit past the checkpoint is in data.mdb when a meta page
	   there is a later one than the saved */
	bool past = false;
	for (unsigned i = 0; i < 2; i++)
		past |= meta_slot(cur + (size_t)i * w.found.psize,
				  metas + (size_t)i * w.found.psize,
				  w.found.psize) == SLOT_LATER;
	if (!past) {
		lp_error("%s: the write-ahead log holds writes data.mdb has "
			 "not got (a system crash no writer has recovered "
			 "yet); start lapis serve on it once, which recovers "
			 "them, before reading it",
			 dir);
		rc = LP_ERR(LP_E_CORRUPT);
	}
out:
	if (dfd >= 0)
		close(dfd);
	for (int i = 0; i < 2; i++)
		if (w.seg_fd[i] >= 0)
			close(w.seg_fd[i]);
	if (w.ckpt_fd >= 0)
		close(w.ckpt_fd);
	free(cur);
	free(metas);
	return rc;
}

lp_err eng__wal_prepare(eng *e)
{
	struct eng_wal *w = calloc(1, sizeof *w);
	if (!w)
		return LP_ERR(LP_E_NOMEM);
	w->ckpt_fd = w->seg_fd[0] = w->seg_fd[1] = -1;
	pthread_mutex_init(&w->mu, NULL);
	lp_cond_init_mono(&w->cv);
	w->ckpt_fd = open_in(e->dir, wal_files[0], O_RDWR | O_CREAT);
	for (int i = 0; i < 2; i++)
		w->seg_fd[i] =
		    open_in(e->dir, wal_files[1 + i], O_RDWR | O_CREAT);
	struct stat st;
	if (w->ckpt_fd < 0 || w->seg_fd[0] < 0 || w->seg_fd[1] < 0 ||
	    !sync_dir(e->dir)) {
		lp_error("%s: cannot open the write-ahead log: %s", e->dir,
			 strerror(errno));
		wal_free(w);
		return LP_ERR(LP_E_IO);
	}
	for (int i = 0; i < 2; i++)
		w->zero_end[i] =
		    fstat(w->seg_fd[i], &st) ? 0 : (uint64_t)st.st_size;
	/* Both slots zero-filled once: a checkpoint's flush then changes no
	   file size. */
	if (!fstat(w->ckpt_fd, &st) && st.st_size < 2 * (off_t)CKPT_SLOT) {
		uint8_t *z = calloc(1, 2 * CKPT_SLOT - (size_t)st.st_size);
		bool ok = z &&
			  full_pwrite(w->ckpt_fd, z,
				      2 * CKPT_SLOT - (size_t)st.st_size,
				      (uint64_t)st.st_size) &&
			  !fdatasync(w->ckpt_fd);
		free(z);
		if (!ok) {
			lp_error("%s/wal.ckpt: cannot fill: %s", e->dir,
				 strerror(errno));
			wal_free(w);
			return LP_ERR(LP_E_IO);
		}
	}
	uint8_t *metas = NULL;
	lp_err rc = LP_OK;
	if (read_ckpt(w->ckpt_fd, &w->found, &metas)) {
		w->epoch = w->found.epoch;
		int dfd = open_in(e->dir, "data.mdb", O_RDWR);
		int derr = dfd < 0 ? errno : 0;
		size_t mlen = 2 * (size_t)w->found.psize;
		uint8_t *cur = malloc(mlen);
		bool got = dfd >= 0 && cur && !fstat(dfd, &st) &&
			   full_pread(dfd, cur, mlen, 0);
		/* the file's identity is its content (metas_follow): with
		   both meta pages torn LMDB cannot open it at all, and the
		   log is all there is to go on */
		int ours = got ? metas_follow(cur, metas, w->found.psize) : -1;
		/* data.mdb gone or empty while the log's checkpoint shows
		   writes: LMDB would make a new, empty store of it, and the
		   cluster would come back empty with its revisions reused */
		bool blank = dfd < 0
				 ? derr == ENOENT
				 : cur && !fstat(dfd, &st) && st.st_size == 0;
		if (dfd >= 0 && !cur) {
			rc = LP_ERR(LP_E_NOMEM);
		} else if (blank && w->found.rev > 1) {
			lp_error("%s: data.mdb is %s, but the write-ahead log "
				 "shows the store at revision %lld; not "
				 "making a new, empty store over it. Restore "
				 "a backup with lapis restore, or, to start "
				 "anew, remove the store's directory",
				 e->dir, dfd < 0 ? "missing" : "empty",
				 (long long)w->found.rev);
			rc = LP_ERR(LP_E_CORRUPT);
		} else if (ours < 0 && records_after(w)) {
			lp_error("%s: data.mdb is not the file the write-ahead "
				 "log was written for (replaced or restored in "
				 "place?), and the log holds writes past it; "
				 "not opening. Restore a copy with lapis "
				 "restore; to open data.mdb as it is, without "
				 "the log's writes, move wal.ckpt, wal.0 and "
				 "wal.1 away",
				 e->dir);
			rc = LP_ERR(LP_E_CORRUPT);
		} else if (ours < 0) {
			lp_warn("%s: the write-ahead log belongs to another "
				"data.mdb and holds no write past it; ignoring "
				"it",
				e->dir);
		} else if (memcmp(cur, metas, mlen)) {
			/* LMDB went on after the checkpoint: back to it, then
			   replay (invariant 2). */
			if (lmdb_in_use(e->dir)) {
				lp_error(
				    "%s: another process has the store "
				    "open; it must recover its write-ahead "
				    "log alone",
				    e->dir);
				rc = LP_ERR(LP_E_LOCKED);
			} else if (!full_pwrite(dfd, metas, mlen, 0) ||
				   fdatasync(dfd)) {
				lp_error("%s/data.mdb: cannot restore the "
					 "checkpoint: %s",
					 e->dir, strerror(errno));
				rc = LP_ERR(LP_E_IO);
			} else {
				w->have_found = true;
			}
		} else {
			w->have_found = true;
		}
		if (dfd >= 0)
			close(dfd);
		free(cur);
	}
	free(metas);
	if (rc) {
		wal_free(w);
		return rc;
	}
	e->wal = w;
	return LP_OK;
}

/* The next record at *off of segment seg, if it is record seq: its payload
   (malloc'd) and length; *off moves past it. */
static uint8_t *next_rec(struct eng_wal *w, uint32_t seg, uint64_t *off,
			 uint64_t seq, uint32_t *len)
{
	struct rec_head h;
	if (!full_pread(w->seg_fd[seg], &h, sizeof h, *off) ||
	    h.magic != REC_MAGIC || h.seq != seq || h.len > ENG_WAL_SEG_MAX)
		return NULL;
	uint8_t *p = malloc(h.len ? h.len : 1);
	if (!p)
		return NULL;
	if (!full_pread(w->seg_fd[seg], p, h.len, *off + sizeof h) ||
	    rec_sum(&h, p) != h.sum) {
		free(p);
		return NULL;
	}
	*off += sizeof h + h.len;
	*len = h.len;
	return p;
}

static lp_err capture(eng *e, struct ckpt_job *j);
static lp_err ckpt_run(eng *e, struct ckpt_job *j);

/* Start the writeback of data.mdb's dirty pages, waiting for none of it. A
   writeback error stays for the checkpoint's flush to report. */
static void start_writeback(eng *e)
{
	int fd;
	if (!mdb_env_get_fd(e->env, &fd) &&
	    !sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE))
		atomic_fetch_add(&e->wal->writebacks, 1);
}

/* Between checkpoints, while records come, the checkpoint thread starts the
   writeback of what LMDB wrote every WRITEBACK_MS, so that a checkpoint's
   flush finds little left to write. Left to the checkpoint, a second of
   pages went out at once (every page a commit writes is a new one while
   the checkpoint's reader is held: invariant 2), and for the tens of
   milliseconds that took the log's flushes queued behind it, which set
   the p99 of synced writes under load. But each flush of the log also
   waits for the pages written back since the one before (this VM's disk
   flushes its host's cache whole), so writing back often costs
   throughput where pages come fast: bench-engine's 64 writers, 10 s
   rounds, committed 9,400-9,600 txns/s at 20 ms, 11,300-13,100 at 100 ms,
   13,600-16,200 at 200 ms and 13,900-14,400 with no writeback between
   checkpoints, while bench-http's S4 at 16 connections kept its rate and
   its p99 went 4.9-5.7, 5.7-7.3, 6.9-10.5 and 9.4-14.7 ms. 100 ms keeps
   most of both. With no new record the thread looks again after
   IDLE_MS. */
#define WRITEBACK_MS 100
#define IDLE_MS 1000

static void *ckpt_main(void *arg)
{
	eng *e = arg;
	struct eng_wal *w = e->wal;
	pthread_setname_np(pthread_self(), "lapis-ckpt");
	uint64_t seen = atomic_load(&w->records);
	/* a checkpoint does not move it: one runs every second */
	struct timespec dl = lp_mono_deadline(WRITEBACK_MS);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->stop && !w->queued) {
			if (pthread_cond_timedwait(&w->cv, &w->mu, &dl) !=
			    ETIMEDOUT)
				continue;
			uint64_t r = atomic_load(&w->records);
			dl = lp_mono_deadline(r == seen ? IDLE_MS
							: WRITEBACK_MS);
			if (r != seen) {
				seen = r;
				pthread_mutex_unlock(&w->mu);
				start_writeback(e);
				pthread_mutex_lock(&w->mu);
			}
		}
		if (!w->queued)
			break;
		w->queued = false;
		pthread_mutex_unlock(&w->mu);
		lp_err rc = ckpt_run(e, &w->job);
		pthread_mutex_lock(&w->mu);
		if (rc)
			atomic_store(&w->broken, true);
		w->busy = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int eng_has_wal(const char *dir)
{
	char path[PATH_MAX];
	if (!dir)
		return 0;
	snprintf(path, sizeof path, "%s/%s", dir, wal_files[0]);
	return access(path, F_OK) == 0;
}

/* The store goes on without the log: what was replayed is flushed, and
   the files go (the checkpoint first: without it the segments are never
   read). */
static lp_err drop_log(eng *e)
{
	struct eng_wal *w = e->wal;
	int mrc = mdb_env_sync(e->env, 1);
	if (mrc)
		return eng__from_mdb(mrc, "sync");
	for (int i = 0; i < 3; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", e->dir, wal_files[i]);
		if (unlink(path) && errno != ENOENT) {
			lp_error("%s: %s", path, strerror(errno));
			return LP_ERR(LP_E_IO);
		}
	}
	/* Gone for good before LMDB may reuse the checkpoint's pages. */
	if (!sync_dir(e->dir)) {
		lp_error("%s: %s", e->dir, strerror(errno));
		return LP_ERR(LP_E_IO);
	}
	if (w->held)
		mdb_txn_abort(w->held);
	e->wal = NULL;
	wal_free(w);
	return LP_OK;
}

lp_err eng__wal_start(eng *e, bool drop)
{
	struct eng_wal *w = e->wal;
	w->psize = e->psize;
	if (w->psize < 512 || w->psize > META_MAX) {
		lp_error("%s: page size %u is beyond the write-ahead log's",
			 e->dir, w->psize);
		return LP_ERR(LP_E_FORMAT);
	}
	struct stat st;
	int fd;
	if (mdb_env_get_fd(e->env, &fd) || fstat(fd, &st))
		return LP_ERR(LP_E_IO);
	w->dev = (uint64_t)st.st_dev;
	w->ino = (uint64_t)st.st_ino;
	w->job.slot = malloc(sizeof(struct ckpt_head) + 2 * (size_t)w->psize);
	if (!w->job.slot)
		return LP_ERR(LP_E_NOMEM);
	w->job.metas = w->job.slot + sizeof(struct ckpt_head);
	/* Keep the snapshot we start from until a checkpoint is durable
	   (invariant 2): replay must not overwrite it. */
	int mrc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &w->held);
	if (mrc)
		return eng__from_mdb(mrc, "wal reader");
	uint64_t seq = 0, n = 0;
	if (w->have_found) {
		uint32_t seg = w->found.seg;
		uint64_t off = 0;
		bool switched = false;
		seq = w->found.seq;
		for (;;) {
			uint32_t len;
			uint8_t *p = next_rec(w, seg, &off, seq, &len);
			if (!p) {
				if (switched)
					break;
				switched = true;
				seg ^= 1;
				off = 0;
				continue;
			}
			lp_err rc = eng__wal_replay(e, p, len);
			free(p);
			if (rc) {
				lp_error("%s: replaying the write-ahead log "
					 "(record %llu): %s",
					 e->dir, (unsigned long long)seq,
					 lp_strerror(rc));
				return rc;
			}
			seq++;
			n++;
		}
		if (n)
			lp_info("%s: recovered %llu write groups from the "
				"write-ahead log, at revision %lld",
				e->dir, (unsigned long long)n,
				(long long)atomic_load(&e->rev));
	}
	if (drop)
		return drop_log(e);
	if (!w->have_found) {
		/* A new log: no record of an earlier one may follow it */
		for (int i = 0; i < 2; i++) {
			if (ftruncate(w->seg_fd[i], 0) || fsync(w->seg_fd[i]))
				return LP_ERR(LP_E_IO);
			w->zero_end[i] = 0;
		}
	}
	w->seq = seq;
	w->active = w->have_found ? w->found.seg : 1;
	lp_err rc = eng__wal_checkpoint(e);
	if (rc)
		return rc;
	if (pthread_create(&w->thr, NULL, ckpt_main, e))
		return LP_ERR(LP_E_NOMEM);
	w->started = true;
	return LP_OK;
}

/* Right after a commit, on the committing thread: the snapshot to
   checkpoint, and the records after it go to the other segment. */
static lp_err capture(eng *e, struct ckpt_job *j)
{
	struct eng_wal *w = e->wal;
	int fd;
	int mrc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &j->rd);
	if (mrc)
		return eng__from_mdb(mrc, "checkpoint reader");
	if (mdb_env_get_fd(e->env, &fd) ||
	    !full_pread(fd, j->metas, 2 * (size_t)w->psize, 0)) {
		mdb_txn_abort(j->rd);
		j->rd = NULL;
		return LP_ERR(LP_E_IO);
	}
	j->rev = atomic_load(&e->rev);
	w->active ^= 1;
	w->off = 0;
	j->seg = w->active;
	j->seq = w->seq;
	w->last_ckpt_ns = now_ns();
	return LP_OK;
}

/* Make data.mdb durable up to j's snapshot and record it. */
static lp_err ckpt_run(eng *e, struct ckpt_job *j)
{
	struct eng_wal *w = e->wal;
	int mrc = mdb_env_sync(e->env, 1);
	lp_err rc = LP_OK;
	if (mrc) {
		rc = eng__from_mdb(mrc, "checkpoint sync");
		goto out;
	}
	size_t mlen = 2 * (size_t)w->psize;
	struct ckpt_head h = {.magic = CKPT_MAGIC,
			      .version = CKPT_VERSION,
			      .epoch = w->epoch + 1,
			      .dev = w->dev,
			      .ino = w->ino,
			      .rev = j->rev,
			      .psize = w->psize,
			      .seg = j->seg,
			      .seq = j->seq};
	h.sum = ckpt_sum(&h, j->metas);
	memcpy(j->slot, &h, sizeof h);
	if (!full_pwrite(w->ckpt_fd, j->slot, sizeof h + mlen,
			 (h.epoch & 1) * (uint64_t)CKPT_SLOT) ||
	    fdatasync(w->ckpt_fd)) {
		lp_error("%s/wal.ckpt: %s", e->dir, strerror(errno));
		rc = LP_ERR(LP_E_IO);
		goto out;
	}
	w->epoch = h.epoch;
	MDB_txn *old = w->held;
	w->held = j->rd;
	j->rd = NULL;
	if (old)
		mdb_txn_abort(old);
	atomic_fetch_add(&w->checkpoints, 1);
out:
	if (j->rd) {
		mdb_txn_abort(j->rd);
		j->rd = NULL;
	}
	if (rc)
		lp_error("%s: checkpoint failed (%s); writes fail from now on",
			 e->dir, lp_strerror(rc));
	return rc;
}

lp_err eng__wal_checkpoint(eng *e)
{
	struct eng_wal *w = e->wal;
	if (!w)
		return LP_OK;
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv, &w->mu);
	if (atomic_load(&w->broken)) {
		pthread_mutex_unlock(&w->mu);
		return LP_ERR(LP_E_IO);
	}
	w->busy = true;
	pthread_mutex_unlock(&w->mu);
	struct ckpt_job *j = &w->job;
	/* A capture that fails (no reader slot) changes nothing */
	lp_err rc = capture(e, j);
	bool ran = !rc;
	if (ran)
		rc = ckpt_run(e, j);
	pthread_mutex_lock(&w->mu);
	if (rc && ran)
		atomic_store(&w->broken, true);
	w->busy = false;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

void eng__wal_committed(eng *e)
{
	struct eng_wal *w = e->wal;
	if (w->off < ENG_WAL_CKPT_BYTES &&
	    (w->off == 0 || now_ns() - w->last_ckpt_ns < ENG_WAL_CKPT_NS))
		return;
	pthread_mutex_lock(&w->mu);
	/* Past half a segment, wait for the checkpoint in flight rather than
	   run out of room (invariant 3). */
	while (w->busy && w->off >= ENG_WAL_SEG_MAX / 2)
		pthread_cond_wait(&w->cv, &w->mu);
	bool take = !w->busy && !atomic_load(&w->broken);
	w->busy |= take;
	pthread_mutex_unlock(&w->mu);
	if (!take)
		return;
	/* A capture that fails (no reader slot) is tried again after the
	   next commit. */
	bool ok = capture(e, &w->job) == LP_OK;
	pthread_mutex_lock(&w->mu);
	w->queued = ok;
	w->busy = ok;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

uint8_t *eng__wal_buf(eng *e, size_t n)
{
	struct eng_wal *w = e->wal;
	n += sizeof(struct rec_head);
	if (n > w->cap) {
		size_t cap = w->cap ? w->cap : 64 << 10;
		while (cap < n)
			cap *= 2;
		uint8_t *b = realloc(w->buf, cap);
		if (!b)
			return NULL;
		w->buf = b;
		w->cap = cap;
	}
	return w->buf + sizeof(struct rec_head);
}

/* Zeros ahead of the write position, so that a record's fdatasync finds
   its blocks allocated and flushes no file size. */
static bool zero_ahead(struct eng_wal *w, uint64_t end)
{
	static const uint8_t zeros[64 << 10];
	uint32_t s = w->active;
	if (end <= w->zero_end[s])
		return true;
	uint64_t to = (end + ZERO_CHUNK - 1) / ZERO_CHUNK * ZERO_CHUNK;
	for (uint64_t at = w->zero_end[s]; at < to;) {
		size_t k =
		    to - at < sizeof zeros ? (size_t)(to - at) : sizeof zeros;
		if (!full_pwrite(w->seg_fd[s], zeros, k, at))
			return false;
		at += k;
	}
	w->zero_end[s] = to;
	return true;
}

int eng__wal_log(eng *e, size_t len)
{
	struct eng_wal *w = e->wal;
	if (atomic_load(&w->broken))
		return EIO;
	size_t n = sizeof(struct rec_head) + len;
	if (len > ENG_WAL_SEG_MAX / 2 || w->off + n > ENG_WAL_SEG_MAX)
		return EFBIG; /* commit, then a checkpoint (invariant 4) */
	struct rec_head h = {
	    .magic = REC_MAGIC, .len = (uint32_t)len, .seq = w->seq};
	h.sum = rec_sum(&h, w->buf + sizeof h);
	memcpy(w->buf, &h, sizeof h);
	int fd = w->seg_fd[w->active];
	if (!zero_ahead(w, w->off + n)) {
		/* No room for the segment to grow (a full disk): this group
		   fails, nothing was written, the next one tries again. */
		int err = errno ? errno : EIO;
		lp_warn("%s/wal.%u: cannot grow: %s", e->dir, w->active,
			strerror(err));
		return err;
	}
	if (!full_pwrite(fd, w->buf, n, w->off)) {
		int err = errno ? errno : EIO;
		lp_error("%s/wal.%u: %s; writes fail from now on", e->dir,
			 w->active, strerror(err));
		atomic_store(&w->broken, true);
		return err;
	}
	/* The device starts on the record while LMDB commits (flushed by
	   eng__wal_flush); a failure here only leaves it to the flush. */
	(void)sync_file_range(fd, (off64_t)w->off, (off64_t)n,
			      SYNC_FILE_RANGE_WRITE);
	w->off += n;
	w->seq++;
	atomic_fetch_add(&w->records, 1);
	return 0;
}

lp_err eng__wal_flush(eng *e)
{
	struct eng_wal *w = e->wal;
	if (fdatasync(w->seg_fd[w->active]) == 0)
		return LP_OK;
	lp_error("%s/wal.%u: %s; writes fail from now on", e->dir, w->active,
		 strerror(errno));
	atomic_store(&w->broken, true);
	return LP_ERR(LP_E_IO);
}

void eng__wal_unlog(eng *e, size_t len)
{
	struct eng_wal *w = e->wal;
	size_t n = sizeof(struct rec_head) + len;
	w->off -= n;
	w->seq--;
	struct rec_head h = {0};
	int fd = w->seg_fd[w->active];
	if (!full_pwrite(fd, &h, sizeof h, w->off) || fdatasync(fd))
		atomic_store(&w->broken, true);
}

void eng__wal_stats(eng *e, struct eng_stats *out)
{
	struct eng_wal *w = e->wal;
	out->wal_checkpoints = w ? atomic_load(&w->checkpoints) : 0;
	out->wal_records = w ? atomic_load(&w->records) : 0;
	out->wal_writebacks = w ? atomic_load(&w->writebacks) : 0;
}

void eng__wal_close(eng *e)
{
	struct eng_wal *w = e->wal;
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		while (w->busy)
			pthread_cond_wait(&w->cv, &w->mu);
		w->stop = true;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thr, NULL);
		/* The last checkpoint leaves nothing to replay. */
		if (!atomic_load(&w->broken))
			eng__wal_checkpoint(e);
	}
	if (w->held)
		mdb_txn_abort(w->held);
	e->wal = NULL;
	wal_free(w);
}
