/*
 * test_flush_order.c -- in sync mode a commit is acknowledged only once
 * LMDB's newest meta page is on the disk, not merely in the page cache.
 *
 * A SIGKILLed process (test_crash.c) keeps its page cache, so no crash test
 * run here can tell a flushed commit from one that is only written. This
 * one watches the writes themselves: the test executable defines pwrite,
 * fdatasync and fsync, which LMDB's calls reach first (the executable's
 * symbols come first in the lookup order; CMake exports them), and passes
 * each call on to the next definition (libc's, or a sanitizer's wrapper).
 *
 * What counts
 *  - A meta page write: a pwrite to this test's data.mdb that starts in
 *    its first two pages (LMDB keeps its two meta pages there). It is
 *    durable when it went through a descriptor opened O_DSYNC (LMDB's way
 *    in sync mode), or once an fdatasync or fsync of data.mdb that began
 *    after it returned has returned.
 *  - The on_commit hook runs for every group before any caller of it is
 *    acknowledged (test_durability.c checks that order). At each call, the
 *    newest meta page written so far must be durable.
 *
 * With the write-ahead log (engine/wal.c, the default for a synced store),
 * LMDB flushes nothing at commit; what must be durable at the call for
 * group g is g's record, the g-th record written to a log segment (wal.0,
 * wal.1; a write that starts with a record's magic): durable once an
 * fdatasync or fsync of that descriptor that began after it returned has
 * returned. (Checking the newest write instead would also pass wrongly
 * flushed records whenever a later one happened to be flushed.)
 *
 * Readers, too, see nothing of a commit before its record is flushed
 * (engine/writer.c, invariant 8; read.c, invariant 5): a test holds the
 * log's flush of one commit and reads beside it.
 *
 * The checks can fail: in the nosync case LMDB flushes nothing, and the
 * hook sees the newest meta page not durable; a run with the log whose
 * flushes the test does not count sees every group's record not durable.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"

/* More records than the test's groups (two rounds of F_THREADS *
   F_TXNS writes at most). */
#define F_RECS_MAX 4096
#define REC_MAGIC 0x4c57414cu /* engine/wal.c's "LWAL" */

static struct {
	pthread_mutex_t mu;
	char path[PATH_MAX]; /* this test's data.mdb; "" while not watching */
	char seg[2][PATH_MAX]; /* its log segments */
	uint64_t meta_done;  /* meta page writes returned */
	uint64_t durable;    /* the newest of them known on the disk */
	uint64_t dsync_writes, flushes;
	uint64_t log_done[2], log_durable[2]; /* the same for each segment */
	uint64_t log_flushes;
	/* record k (from 0): its segment and its write's number there */
	struct {
		int seg;
		uint64_t write;
	} recs[F_RECS_MAX];
	uint64_t n_recs;
	bool lose_log_flushes; /* the log's flushes do not count */
	bool hold_log_flushes; /* a flush of the log waits until cleared */
	int log_flushes_held;  /* flushes waiting so */
	pthread_cond_t cv;     /* signalled as those two change */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* 0: data.mdb, 1 and 2: log segment 0 and 1, -1: another file. */
static int which_file(int fd)
{
	char link[64], target[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof target - 1);
	if (n <= 0)
		return -1;
	target[n] = 0;
	pthread_mutex_lock(&W.mu);
	int r = !W.path[0]		    ? -1
		: !strcmp(target, W.path)   ? 0
		: !strcmp(target, W.seg[0]) ? 1
		: !strcmp(target, W.seg[1]) ? 2
					    : -1;
	pthread_mutex_unlock(&W.mu);
	return r;
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*sync_fn)(int);

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static _Atomic(pwrite_fn) real;
	if (!atomic_load(&real))
		atomic_store(&real, (pwrite_fn)dlsym(RTLD_NEXT, "pwrite"));
	int file = which_file(fd);
	bool meta = off < 2 * sysconf(_SC_PAGESIZE) && file == 0;
	bool dsync = meta && (fcntl(fd, F_GETFL) & O_DSYNC);
	ssize_t r = atomic_load(&real)(fd, buf, n, off);
	if (file > 0 && r == (ssize_t)n) {
		uint32_t magic = 0;
		if (n >= sizeof magic)
			memcpy(&magic, buf, sizeof magic);
		pthread_mutex_lock(&W.mu);
		W.log_done[file - 1]++;
		if (magic == REC_MAGIC && W.n_recs < F_RECS_MAX) {
			W.recs[W.n_recs].seg = file - 1;
			W.recs[W.n_recs].write = W.log_done[file - 1];
			W.n_recs++;
		}
		pthread_mutex_unlock(&W.mu);
	}
	if (meta && r == (ssize_t)n) {
		pthread_mutex_lock(&W.mu);
		W.meta_done++;
		if (dsync) {
			W.durable = W.meta_done;
			W.dsync_writes++;
		}
		pthread_mutex_unlock(&W.mu);
	}
	return r;
}

static int flush(sync_fn real, int fd)
{
	uint64_t before = 0;
	int file = which_file(fd);
	bool data = file == 0;
	if (file > 0) {
		pthread_mutex_lock(&W.mu);
		if (W.hold_log_flushes) {
			W.log_flushes_held++;
			pthread_cond_broadcast(&W.cv);
			while (W.hold_log_flushes)
				pthread_cond_wait(&W.cv, &W.mu);
			W.log_flushes_held--;
		}
		before = W.log_done[file - 1];
		pthread_mutex_unlock(&W.mu);
		int r = real(fd);
		pthread_mutex_lock(&W.mu);
		if (r == 0 && before > W.log_durable[file - 1] &&
		    !W.lose_log_flushes)
			W.log_durable[file - 1] = before;
		W.log_flushes++;
		pthread_mutex_unlock(&W.mu);
		return r;
	}
	if (data) {
		pthread_mutex_lock(&W.mu);
		before = W.meta_done;
		pthread_mutex_unlock(&W.mu);
	}
	int r = real(fd);
	if (data && r == 0) {
		pthread_mutex_lock(&W.mu);
		if (before > W.durable)
			W.durable = before;
		W.flushes++;
		pthread_mutex_unlock(&W.mu);
	}
	return r;
}

/* The next definition of name (libc's, or a sanitizer's wrapper), looked
   up once into *slot. */
static sync_fn next_sync(_Atomic(sync_fn) *slot, const char *name)
{
	sync_fn f = atomic_load(slot);
	if (!f) {
		f = (sync_fn)dlsym(RTLD_NEXT, name);
		atomic_store(slot, f);
	}
	return f;
}

int fdatasync(int fd)
{
	static _Atomic(sync_fn) real;
	return flush(next_sync(&real, "fdatasync"), fd);
}

int fsync(int fd)
{
	static _Atomic(sync_fn) real;
	return flush(next_sync(&real, "fsync"), fd);
}

struct hook {
	bool wal; /* check the log, not LMDB's meta page */
	_Atomic uint64_t groups;
	_Atomic uint64_t bad;	   /* hook calls that saw an undurable meta */
	_Atomic uint64_t bad_group; /* the first of them */
};

static void on_commit(void *ud, uint64_t group)
{
	struct hook *h = ud;
	pthread_mutex_lock(&W.mu);
	bool ok;
	if (h->wal) {
		/* group g's record: the g-th written */
		ok = group >= 1 && group <= W.n_recs &&
		     W.log_durable[W.recs[group - 1].seg] >=
			 W.recs[group - 1].write;
	} else {
		ok = W.meta_done > 0 && W.durable == W.meta_done;
	}
	pthread_mutex_unlock(&W.mu);
	if (!ok && atomic_fetch_add(&h->bad, 1) == 0)
		atomic_store(&h->bad_group, group);
	atomic_fetch_add(&h->groups, 1);
}

#define F_THREADS 6
#define F_TXNS 60

static void *f_thread(void *p)
{
	eng *e = p;
	for (int i = 0; i < F_TXNS; i++) {
		char k[32], v[32];
		int kl = snprintf(k, sizeof k, "/f/%lx/%d",
				  (unsigned long)pthread_self() & 0xffff, i % 7);
		int vl = snprintf(v, sizeof v, "%d", i);
		if (tc_put(e, k, (size_t)kl, v, (size_t)vl, ENG_NO_SLOT, NULL,
			   NULL))
			return (void *)1;
	}
	return NULL;
}

/* Open a store, watch its data.mdb, run the writers (and a compaction
   between two rounds of them); returns the hook's counts. */
static void run(int nosync, bool wal, struct hook *h)
{
	memset(h, 0, sizeof *h);
	h->wal = wal;
	struct eng_opts o = {.nosync = nosync,
			     .no_wal = !wal,
			     .on_commit = on_commit,
			     .hook_ud = h};
	struct tc_store s;
	/* Watch from before the open: the log's first checkpoint writes */
	char *dir = ts_tmpdir(nosync ? "flush-nosync"
			      : wal  ? "flush-wal"
				     : "flush");
	pthread_mutex_lock(&W.mu);
	snprintf(W.path, sizeof W.path, "%s/data.mdb", dir);
	for (int i = 0; i < 2; i++)
		snprintf(W.seg[i], sizeof W.seg[i], "%s/wal.%d", dir, i);
	W.meta_done = W.durable = W.dsync_writes = W.flushes = 0;
	memset(W.log_done, 0, sizeof W.log_done);
	memset(W.log_durable, 0, sizeof W.log_durable);
	W.log_flushes = 0;
	W.n_recs = 0;
	pthread_mutex_unlock(&W.mu);
	tc_open_dir(&s, dir, &o);
	for (int round = 0; round < 2; round++) {
		pthread_t th[F_THREADS];
		for (int i = 0; i < F_THREADS; i++)
			cr_assert_eq(pthread_create(&th[i], NULL, f_thread, s.e),
				     0);
		for (int i = 0; i < F_THREADS; i++) {
			void *r;
			pthread_join(th[i], &r);
			cr_assert_null(r, "a commit failed");
		}
		if (round == 0) {
			int64_t done = 0;
			TC_OK(eng_compact(s.e, eng_rev(s.e) - 5, &done));
		}
	}
	struct eng_stats st;
	eng_stats(s.e, &st);
	cr_assert_eq(st.groups, atomic_load(&h->groups));
	pthread_mutex_lock(&W.mu);
	cr_log_info("%s: %" PRIu64 " groups, %" PRIu64
		    " meta page writes (%" PRIu64 " O_DSYNC), %" PRIu64
		    " flushes of data.mdb, %" PRIu64 " records, %" PRIu64
		    " flushes of the log",
		    nosync ? "nosync"
		    : wal  ? "wal"
			   : "sync",
		    st.groups, W.meta_done, W.dsync_writes, W.flushes, W.n_recs,
		    W.log_flushes);
	if (wal) {
		cr_assert_eq(W.n_recs, st.groups, "one record per group");
		cr_assert_geq(W.log_flushes, st.groups,
			      "every group flushed its log record");
	}
	cr_assert_geq(W.meta_done, st.groups,
		      "every group wrote a meta page that the test saw");
	W.path[0] = 0;
	pthread_mutex_unlock(&W.mu);
	tc_done(&s);
}

/* A synced store (wal: through its log) acknowledges nothing unflushed. */
static void expect_flushed(bool wal)
{
	static struct hook h;
	run(0, wal, &h);
	cr_assert_eq(atomic_load(&h.bad), 0,
		     "%" PRIu64 " groups (the first: %" PRIu64
		     ") were about to be acknowledged with the newest %s "
		     "not flushed",
		     atomic_load(&h.bad), atomic_load(&h.bad_group),
		     wal ? "log record" : "meta page");
}

Test(eng_flush_order, acknowledged_only_once_the_meta_page_is_on_disk)
{
	expect_flushed(false);
}

Test(eng_flush_order, with_the_log_acknowledged_once_the_record_is_on_disk)
{
	expect_flushed(true);
}

Test(eng_flush_order, without_sync_the_check_sees_unflushed_meta_pages)
{
	static struct hook h;
	run(1, false, &h);
	cr_assert_gt(atomic_load(&h.bad), 0,
		     "a nosync store flushes nothing: the check must see it");
}

Test(eng_flush_order, the_check_sees_unflushed_records)
{
	/* The log's flushes happen but are not counted: to the check, no
	   record is ever durable, and every group must be seen. */
	static struct hook h;
	pthread_mutex_lock(&W.mu);
	W.lose_log_flushes = true;
	pthread_mutex_unlock(&W.mu);
	run(0, true, &h);
	pthread_mutex_lock(&W.mu);
	W.lose_log_flushes = false;
	pthread_mutex_unlock(&W.mu);
	cr_assert_eq(atomic_load(&h.bad), atomic_load(&h.groups));
}

/* A reader beside the held flush of a commit that changes /k/changed. */
struct reader {
	eng *e;
	bool range; /* a range over /k/, else a point read of /k/changed */
	_Atomic bool done;
	lp_err rc;
	char value[16]; /* /k/changed's value as read */
	size_t n;	/* keys the range saw */
};

static void *reader_main(void *p)
{
	struct reader *r = p;
	if (r->range) {
		struct eng_range_req q = {.prefix = (const uint8_t *)"/k/",
					  .prefix_len = 3};
		struct tc_list l = {0};
		struct eng_range_res res;
		r->rc = tc_range(r->e, &q, &l, &res);
		r->n = l.n;
		for (size_t i = 0; i < l.n; i++)
			if (l.v[i].key_len == 10 &&
			    !memcmp(l.v[i].key, "/k/changed", 10))
				snprintf(r->value, sizeof r->value, "%s",
					 (const char *)l.v[i].value);
		tc_list_free(&l);
	} else {
		struct eng_copy c;
		r->rc = eng_get_copy(r->e, "/k/changed", 10, &c);
		if (!r->rc) {
			snprintf(r->value, sizeof r->value, "%s", c.value);
			free(c.value);
		}
	}
	atomic_store(&r->done, true);
	return NULL;
}

struct writer {
	eng *e;
	lp_err rc;
};

static void *writer_main(void *p)
{
	struct writer *w = p;
	w->rc =
	    tc_put(w->e, "/k/changed", 10, "new", 3, ENG_NO_SLOT, NULL, NULL);
	return NULL;
}

Test(eng_flush_order, readers_wait_for_the_flush_of_what_they_may_see)
{
	char *dir = ts_tmpdir("flush-readers");
	pthread_mutex_lock(&W.mu);
	snprintf(W.path, sizeof W.path, "%s/data.mdb", dir);
	for (int i = 0; i < 2; i++)
		snprintf(W.seg[i], sizeof W.seg[i], "%s/wal.%d", dir, i);
	pthread_mutex_unlock(&W.mu);
	struct eng_opts o = {0}; /* synced, through the log */
	struct tc_store s;
	tc_open_dir(&s, dir, &o);
	tc_puts(s.e, "/k/changed", "old");
	tc_puts(s.e, "/k/same", "same");
	int64_t rev0 = eng_rev(s.e);
	struct eng_stats st;
	eng_stats(s.e, &st);
	uint64_t waits0 = st.durable_waits;

	/* The next commit is visible in LMDB and its record not flushed. */
	pthread_mutex_lock(&W.mu);
	W.hold_log_flushes = true;
	pthread_mutex_unlock(&W.mu);
	struct writer wr = {.e = s.e};
	pthread_t tw;
	cr_assert_eq(pthread_create(&tw, NULL, writer_main, &wr), 0);
	pthread_mutex_lock(&W.mu);
	while (W.log_flushes_held == 0)
		pthread_cond_wait(&W.cv, &W.mu);
	pthread_mutex_unlock(&W.mu);

	/* Meanwhile: the durable revision, and a key the commit does not
	   touch read at once. */
	cr_assert_eq(eng_rev(s.e), rev0);
	struct eng_copy c;
	TC_OK(eng_get_copy(s.e, "/k/same", 7, &c));
	cr_assert_str_eq(c.value, "same");
	free(c.value);

	/* The changed key and a range wait for the flush. */
	struct reader rp = {.e = s.e}, rr = {.e = s.e, .range = true};
	pthread_t tp, tr;
	cr_assert_eq(pthread_create(&tp, NULL, reader_main, &rp), 0);
	cr_assert_eq(pthread_create(&tr, NULL, reader_main, &rr), 0);
	for (;;) {
		eng_stats(s.e, &st);
		if (st.durable_waits >= waits0 + 2 || atomic_load(&rp.done) ||
		    atomic_load(&rr.done))
			break;
		sched_yield();
	}
	cr_assert(!atomic_load(&rp.done),
		  "a point read returned \"%s\" before the flush", rp.value);
	cr_assert(!atomic_load(&rr.done), "a range returned before the flush");

	pthread_mutex_lock(&W.mu);
	W.hold_log_flushes = false;
	pthread_cond_broadcast(&W.cv);
	pthread_mutex_unlock(&W.mu);
	pthread_join(tw, NULL);
	pthread_join(tp, NULL);
	pthread_join(tr, NULL);
	TC_OK(wr.rc);
	TC_OK(rp.rc);
	TC_OK(rr.rc);
	cr_assert_str_eq(rp.value, "new");
	cr_assert_str_eq(rr.value, "new");
	cr_assert_eq(rr.n, 2);
	cr_assert_eq(eng_rev(s.e), rev0 + 1);
	pthread_mutex_lock(&W.mu);
	W.path[0] = 0;
	pthread_mutex_unlock(&W.mu);
	tc_check(s.e);
	tc_done(&s);
}
