/*
 * test_wal.c -- the write-ahead log (engine/wal.c) brings back what a
 * system crash takes from data.mdb.
 *
 * A SIGKILLed process keeps its page cache, so a kill alone leaves LMDB's
 * file whole. A system crash may lose or tear whatever LMDB wrote without
 * a flush after the last checkpoint; the worst of it for LMDB is the meta
 * pages. Here a forked child commits in sync mode from several threads,
 * with values large enough that the log rolls over segments and
 * checkpoints run in the background; each acknowledged commit is reported
 * on a pipe. After a SIGKILL the parent zeroes both meta pages of data.mdb
 * (LMDB alone then refuses the file) and reopens.
 *
 * Invariants checked
 *  1. Every acknowledged txn is there, at its revision, with its value.
 *  2. eng_check passes, and the revision goes on above every ack.
 *  3. Opened without the log (nosync), the store first recovers it, then
 *     removes it; opened with it, the log is kept.
 *  4. Replay stops at stale records: a segment reused after a checkpoint
 *     still holds older records past the newest ones.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "lapis/clock.h"

#define W_THREADS 3
#define W_VAL 12000 /* bytes per value: ~4 MiB of log every ~330 txns */
#define W_ACKS 900

struct wack {
	int64_t id, rev;
};

static size_t wkey(char *b, size_t n, int64_t id)
{
	return (size_t)snprintf(b, n, "/wal/t%d/k%d", (int)(id / 1000000),
				(int)(id % 1000000 % 50));
}

static void wval(char *b, int64_t id)
{
	memset(b, 'a' + (int)(id % 26), W_VAL);
	snprintf(b, 32, "id=%" PRId64 ";", id);
}

struct warg {
	eng *e;
	int t, fd;
};

static void *wchild_thread(void *p)
{
	struct warg *a = p;
	char *v = malloc(W_VAL);
	if (!v)
		_exit(3);
	for (int64_t seq = 0;; seq++) {
		int64_t id = (int64_t)a->t * 1000000 + seq;
		char k[64];
		size_t kl = wkey(k, sizeof k, id);
		wval(v, id);
		struct eng_commit_res res = {0};
		if (tc_put(a->e, k, kl, v, W_VAL, ENG_NO_SLOT, NULL, &res))
			_exit(4);
		struct wack ak = {id, res.rev};
		if (write(a->fd, &ak, sizeof ak) != (ssize_t)sizeof ak)
			_exit(5);
	}
	return NULL;
}

static void wchild(const char *dir, int fd)
{
	struct eng_opts o = {.dir = dir};
	eng *e;
	if (eng_open(&o, &e))
		_exit(2);
	pthread_t th[W_THREADS];
	struct warg a[W_THREADS];
	for (int i = 0; i < W_THREADS; i++) {
		a[i] = (struct warg){e, i, fd};
		if (pthread_create(&th[i], NULL, wchild_thread, &a[i]))
			_exit(6);
	}
	for (int i = 0; i < W_THREADS; i++)
		pthread_join(th[i], NULL);
	_exit(7);
}

/* Run a child until W_ACKS acknowledgements, kill it, return them all. */
static struct wack *wround(const char *dir, size_t *n_out)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		wchild(dir, fds[1]);
	}
	close(fds[1]);
	size_t cap = 2 * W_ACKS, n = 0;
	struct wack *acks = tc_xmalloc(cap * sizeof *acks);
	bool killed = false;
	for (;;) {
		struct wack ak;
		ssize_t r = read(fds[0], &ak, sizeof ak);
		if (r == 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		cr_assert_eq(r, (ssize_t)sizeof ak);
		if (n == cap) {
			cap *= 2;
			acks = tc_xrealloc(acks, cap * sizeof *acks);
		}
		acks[n++] = ak;
		if (n == W_ACKS && !killed) {
			kill(pid, SIGKILL);
			killed = true;
		}
	}
	close(fds[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the child ended on its own (status %d)", status);
	*n_out = n;
	return acks;
}

/* What a system crash may leave of LMDB's meta pages: nothing. */
static void zero_metas(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	int fd = open(path, O_WRONLY);
	cr_assert_geq(fd, 0, "%s", path);
	long ps = sysconf(_SC_PAGESIZE);
	char *z = calloc(2, (size_t)ps);
	cr_assert_eq(pwrite(fd, z, 2 * (size_t)ps, 0), 2 * ps);
	free(z);
	close(fd);
}

static bool exists_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void check_acks(eng *e, const struct wack *acks, size_t n)
{
	char *v = tc_xmalloc(W_VAL);
	int64_t max_rev = 0;
	for (size_t i = 0; i < n; i++) {
		char k[64];
		size_t kl = wkey(k, sizeof k, acks[i].id);
		struct tc_rec r = {0};
		TC_OK(tc_get(e, k, kl, acks[i].rev, &r));
		wval(v, acks[i].id);
		cr_assert_eq(r.mod_rev, acks[i].rev, "%s", k);
		cr_assert(r.value_len == W_VAL && !memcmp(r.value, v, W_VAL),
			  "%s at %" PRId64 ": '%.20s' want '%.20s'", k,
			  acks[i].rev, (char *)r.value, v);
		tc_rec_free(&r);
		if (acks[i].rev > max_rev)
			max_rev = acks[i].rev;
	}
	free(v);
	cr_assert_geq(eng_rev(e), max_rev);
	struct eng_commit_res res = {0};
	TC_OK(tc_put(e, "/after", 6, "x", 1, ENG_NO_SLOT, NULL, &res));
	cr_assert_gt(res.rev, max_rev);
	tc_check(e);
}

static void lost_metas(bool reopen_nosync)
{
	char *dir = ts_tmpdir("wal");
	for (int round = 0; round < 2; round++) {
		size_t n;
		struct wack *acks = wround(dir, &n);
		zero_metas(dir);
		struct eng_opts o = {.dir = dir, .nosync = reopen_nosync};
		eng *e;
		TC_OK(eng_open(&o, &e));
		check_acks(e, acks, n);
		cr_assert_eq(exists_in(dir, "wal.ckpt"), !reopen_nosync,
			     "the log is %s",
			     reopen_nosync ? "still there" : "gone");
		cr_log_info("round %d: %zu acknowledged, revision %" PRId64,
			    round, n, eng_rev(e));
		eng_close(e);
		free(acks);
	}
	ts_rmtree_free(dir);
}

Test(eng_wal, lost_meta_pages_are_recovered_from_the_log)
{
	lost_metas(false);
}

Test(eng_wal, a_store_opened_without_the_log_recovers_then_drops_it)
{
	lost_metas(true);
}

/* The log's own figures: a group is one record, and a checkpoint runs in
   the background once a segment holds ENG_WAL_CKPT_BYTES; a close leaves
   nothing to replay, a reopen finds the same revision. */
Test(eng_wal, records_checkpoints_and_a_clean_close)
{
	struct eng_opts o = {0};
	struct tc_store s;
	tc_open(&s, "wal-clean", &o);
	char *v = tc_xmalloc(W_VAL);
	for (int i = 0; i < 500; i++) {
		char k[32];
		int kl = snprintf(k, sizeof k, "/c/%d", i % 40);
		wval(v, i);
		TC_OK(tc_put(s.e, k, (size_t)kl, v, W_VAL, ENG_NO_SLOT, NULL,
			     NULL));
	}
	free(v);
	struct eng_stats st;
	eng_stats(s.e, &st);
	cr_assert_eq(st.wal_records, st.groups);
	/* the checkpoint handed over near the end runs on its own thread:
	   wait for it (a loaded machine takes a while to flush data.mdb) */
	for (int i = 0; i < 3000 && st.wal_checkpoints < 2; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		eng_stats(s.e, &st);
	}
	cr_assert_geq(st.wal_checkpoints, 2, "%" PRIu64 " checkpoints",
		      st.wal_checkpoints);
	int64_t rev = eng_rev(s.e);
	tc_reopen(&s);
	cr_assert_eq(eng_rev(s.e), rev);
	eng_stats(s.e, &st);
	cr_assert_eq(st.wal_records, 0);
	/* no_wal: LMDB's own flush, and no log files */
	eng_close(s.e);
	s.e = NULL;
	s.o.no_wal = 1;
	TC_OK(eng_open(&s.o, &s.e));
	cr_assert(!exists_in(s.dir, "wal.ckpt"));
	TC_OK(tc_put(s.e, "/x", 2, "y", 1, ENG_NO_SLOT, NULL, NULL));
	eng_stats(s.e, &st);
	cr_assert_eq(st.wal_records, 0);
	tc_done(&s);
}

/* Between checkpoints the checkpoint thread starts data.mdb's writeback
   every WRITEBACK_MS (100 ms) while records come (wal.c, ckpt_main), and
   an idle store starts none. */
Test(eng_wal, writeback_runs_while_records_come_and_not_when_idle)
{
	struct eng_opts o = {0};
	struct tc_store s;
	tc_open(&s, "wal-writeback", &o);
	struct eng_stats st;
	int64_t until = lp_mono_ms() + 20000;
	int i = 0;
	do {
		char k[32];
		int kl = snprintf(k, sizeof k, "/w/%d", i++ % 50);
		TC_OK(tc_put(s.e, k, (size_t)kl, "v", 1, ENG_NO_SLOT, NULL,
			     NULL));
		usleep(2000);
		eng_stats(s.e, &st);
	} while (st.wal_writebacks < 2 && lp_mono_ms() < until);
	cr_assert_geq(st.wal_writebacks, 2, "%" PRIu64 " writebacks in %d puts",
		      st.wal_writebacks, i);
	/* The last records may still start one; after that, none. */
	usleep(2500 * 1000);
	eng_stats(s.e, &st);
	uint64_t idle = st.wal_writebacks;
	usleep(2500 * 1000);
	eng_stats(s.e, &st);
	cr_assert_eq(st.wal_writebacks, idle, "writebacks on an idle store");
	tc_done(&s);
}

/* cp -a of a directory: the same bytes under new inodes (and, on another
   disk or host, another device). */
static void copy_dir(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", to, from,
		 to);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* cp of a file onto an existing one: new bytes, the same inode. */
static void copy_over(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A data directory copied after a system crash (its meta pages lost) is
   the same store: the log is its, whatever the file's device and inode,
   and brings every acknowledged write back (found by an audit: the log
   was ignored, the writes after the checkpoint lost and their revisions
   given again). */
Test(eng_wal, a_copied_directory_keeps_its_log)
{
	size_t n;
	char *dir = ts_tmpdir("wal-copied");
	struct wack *acks = wround(dir, &n);
	zero_metas(dir);
	char moved[PATH_MAX];
	snprintf(moved, sizeof moved, "%s.moved", dir);
	copy_dir(dir, moved);
	struct eng_opts o = {.dir = moved};
	eng *e;
	TC_OK(eng_open(&o, &e));
	check_acks(e, acks, n);
	eng_close(e);
	free(acks);
	ts_rmtree_free(dir);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", moved);
	cr_assert_eq(system(cmd), 0);
}

/* An older copy of data.mdb put in place of the file (same inode) is not
   the file the log was written for: with writes in the log past its
   checkpoint the store is not opened (writing the checkpoint's meta pages
   into it made it corrupt: found by an audit); after a clean close, with
   none, the log is ignored and the copy opens as it is. */
Test(eng_wal, an_older_data_file_put_in_place_is_not_the_logs)
{
	size_t n;
	char *dir = ts_tmpdir("wal-other");
	struct wack *acks = wround(dir, &n);
	free(acks);
	char data[PATH_MAX], old[PATH_MAX], newer[PATH_MAX];
	snprintf(data, sizeof data, "%s/data.mdb", dir);
	snprintf(old, sizeof old, "%s.old.mdb", dir);
	snprintf(newer, sizeof newer, "%s.newer.mdb", dir);
	/* recovered and closed: a whole store at old_rev, copied aside */
	struct eng_opts o = {.dir = dir};
	eng *e;
	TC_OK(eng_open(&o, &e));
	int64_t old_rev = eng_rev(e);
	eng_close(e);
	copy_over(data, old);
	acks = wround(dir, &n); /* more writes, killed: records in the log */
	copy_over(data, newer);
	copy_over(old, data);
	TC_RC(eng_open(&o, &e), LP_E_CORRUPT);
	/* nothing was written: the store put back recovers from its log */
	copy_over(newer, data);
	TC_OK(eng_open(&o, &e));
	check_acks(e, acks, n);
	eng_close(e);
	/* closed cleanly, the log holds nothing past its checkpoint: the
	   older copy put in place is opened as it is, the log ignored */
	copy_over(old, data);
	TC_OK(eng_open(&o, &e));
	cr_assert_eq(eng_rev(e), old_rev);
	tc_check(e);
	eng_close(e);
	unlink(old);
	unlink(newer);
	free(acks);
	ts_rmtree_free(dir);
}

/* What a system crash may leave when none of LMDB's writes after the last
   checkpoint reached the disk: data.mdb's meta pages are the ones the
   checkpoint saved (wal.ckpt's newer slot: a 64-byte head, epoch at 8,
   psize at 40, then the two pages; engine/wal.c). */
static void metas_back_to_checkpoint(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/wal.ckpt", dir);
	int cfd = open(path, O_RDONLY);
	cr_assert_geq(cfd, 0, "%s", path);
	const off_t slot = 4096 + 2 * (64 << 10);
	uint64_t ep[2] = {0, 0};
	uint32_t ps[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(pread(cfd, &ep[i], 8, i * slot + 8), 8);
		cr_assert_eq(pread(cfd, &ps[i], 4, i * slot + 40), 4);
	}
	int i = ep[1] > ep[0];
	size_t n = 2 * (size_t)ps[i];
	char *m = tc_xmalloc(n);
	cr_assert_eq(pread(cfd, m, n, i * slot + 64), (ssize_t)n);
	close(cfd);
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	int dfd = open(path, O_WRONLY);
	cr_assert_geq(dfd, 0);
	cr_assert_eq(pwrite(dfd, m, n, 0), (ssize_t)n);
	close(dfd);
	free(m);
}

/* After such a crash data.mdb lacks acknowledged writes the log holds: a
   read-only open (inspect, backup) refuses it rather than read an older
   store as it is (found by an audit: a backup after a crash lacked them,
   exit 0); a writer's open recovers them all. */
Test(eng_wal, a_read_only_open_refuses_a_store_the_log_must_recover)
{
	size_t n;
	char *dir = ts_tmpdir("wal-ro");
	struct wack *acks = wround(dir, &n);
	metas_back_to_checkpoint(dir);
	struct eng_opts ro = {.dir = dir, .readonly = 1};
	eng *e;
	TC_RC(eng_open(&ro, &e), LP_E_CORRUPT);
	struct eng_opts o = {.dir = dir};
	TC_OK(eng_open(&o, &e));
	check_acks(e, acks, n);
	eng_close(e);
	/* recovered and closed: read-only opens read it again */
	TC_OK(eng_open(&ro, &e));
	eng_close(e);
	free(acks);
	ts_rmtree_free(dir);
}
