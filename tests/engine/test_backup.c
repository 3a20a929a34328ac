/*
 * test_backup.c -- hot backup and restore (DESIGN.md "Engine on LMDB":
 * backup is a consistent copy at a revision; restore is "start on a copy"
 * with the revision bumped and older revisions compacted).
 *
 * Invariants checked
 *  1. A backup of a quiet store opens (as data.mdb in a new directory) with
 *     the same revision, compacted revision, keys and content hash, and
 *     passes eng_check; old revisions above the compacted one read the same.
 *  2. A backup taken while a thread writes is consistent: its content equals
 *     the writer's log replayed to the backup's revision.
 *  3. eng_bump adds the bump to the revision, marks everything before the
 *     new revision compacted (reads and watches from older revisions fail
 *     LP_E_COMPACTED), keeps the latest state, and persists.
 */
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static struct tc_store S;
static char *BAK_DIR;

static void setup(void)
{
	tc_open(&S, "backup", NULL);
	BAK_DIR = ts_tmpdir("backup-out");
}

static void teardown(void)
{
	tc_done(&S);
	ts_rmtree_free(BAK_DIR);
}

TestSuite(eng_backup, .init = setup, .fini = teardown);

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb");
	cr_assert_not_null(in, "open %s", from);
	FILE *out = fopen(to, "wb");
	cr_assert_not_null(out, "create %s", to);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
}

/* A new store directory (tag) holding a copy of the backup file at path
   as its data.mdb, opened (nosync, or read-only) and checked. */
static void open_copy(const char *path, const char *tag, bool readonly,
		      struct tc_store *copy)
{
	memset(copy, 0, sizeof *copy);
	copy->dir = ts_tmpdir(tag);
	char dst[4200];
	snprintf(dst, sizeof dst, "%s/data.mdb", copy->dir);
	copy_file(path, dst);
	copy->o.dir = copy->dir;
	copy->o.nosync = !readonly;
	copy->o.readonly = readonly;
	TC_OK(eng_open(&copy->o, &copy->e));
	tc_check(copy->e);
}

struct prog {
	uint64_t last;
	int calls;
	int backwards;
	int stop_after; /* progress says stop at this call; 0: never */
};

static bool progress(void *ud, uint64_t bytes)
{
	struct prog *p = ud;
	if (bytes < p->last)
		p->backwards = 1;
	p->last = bytes;
	p->calls++;
	return p->stop_after == 0 || p->calls < p->stop_after;
}

/* Back up S into BAK_DIR/backup.mdb and open it as a store of its own. */
static void backup_and_open(struct tc_store *copy, struct prog *pg)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/backup.mdb", BAK_DIR);
	TC_OK(eng_backup(S.e, path, pg ? progress : NULL, pg));
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0, "no backup file");
	cr_assert_gt(sb.st_size, 0);
	snprintf(tmp, sizeof tmp, "%s.tmp.*", path);
	glob_t g;
	cr_assert_eq(glob(tmp, 0, NULL, &g), GLOB_NOMATCH,
		     "a temporary file was left behind");
	open_copy(path, "restored", false, copy);
}

static void write_some(eng *e, int n, int salt)
{
	for (int i = 0; i < n; i++) {
		char k[32], v[64];
		snprintf(k, sizeof k, "/b/%03d", (i * 7 + salt) % 150);
		int vl = snprintf(v, sizeof v, "{\"i\":%d,\"rv\":\"\"}", i);
		if (i % 9 == 4)
			tc_del(e, k, strlen(k), NULL, NULL);
		else
			TC_OK(tc_put(e, k, strlen(k), v, (size_t)vl,
				     (uint32_t)vl - 2, NULL, NULL));
	}
}

Test(eng_backup, backup_of_a_quiet_store_is_identical)
{
	write_some(S.e, 600, 0);
	TC_OK(eng_compact(S.e, 300, NULL));
	write_some(S.e, 100, 3);
	struct eng_info a, b;
	TC_OK(eng_info(S.e, &a));
	struct tc_store copy;
	struct prog pg = {0};
	backup_and_open(&copy, &pg);
	cr_assert_eq(pg.backwards, 0, "progress went backwards");
	TC_OK(eng_info(copy.e, &b));
	cr_assert_eq(b.rev, a.rev);
	cr_assert_eq(b.compacted, a.compacted);
	cr_assert_eq(b.n_keys, a.n_keys);
	cr_assert_eq(b.data_bytes, a.data_bytes);
	cr_assert_str_eq(b.hash, a.hash);
	cr_assert_eq(b.format, a.format);
	/* Old revisions read the same in both. */
	for (int64_t rev = a.compacted; rev <= a.rev; rev += 37) {
		struct eng_range_req q = {
		    .prefix = "/b/", .prefix_len = 3, .at_rev = rev};
		struct tc_list la = {0}, lb = {0};
		struct eng_range_res ra, rb;
		TC_OK(tc_range(S.e, &q, &la, &ra));
		TC_OK(tc_range(copy.e, &q, &lb, &rb));
		cr_assert_eq(la.n, lb.n, "at %" PRId64, rev);
		for (size_t i = 0; i < la.n; i++) {
			cr_assert_eq(la.v[i].mod_rev, lb.v[i].mod_rev);
			cr_assert_str_eq((char *)la.v[i].key,
					 (char *)lb.v[i].key);
			cr_assert_str_eq((char *)la.v[i].value,
					 (char *)lb.v[i].value);
		}
		tc_list_free(&la);
		tc_list_free(&lb);
	}
	/* The copy is a store of its own: it takes writes. */
	cr_assert_eq(tc_puts(copy.e, "/b/new", "n"), a.rev + 1);
	cr_assert_eq(eng_rev(S.e), a.rev);
	tc_done(&copy);
}

#define BW_MAX 200000

struct bw_log {
	_Atomic int key[BW_MAX]; /* by revision */
	_Atomic int val[BW_MAX];
	_Atomic int del[BW_MAX];
};

static struct bw_log LOG;

struct bw_arg {
	eng *e;
	_Atomic int stop;
	_Atomic long n;
	char err[160];
};

static void *bw_write(void *p)
{
	struct bw_arg *a = p;
	uint64_t st = 77;
	int live[100] = {0};
	for (int i = 0; !atomic_load(&a->stop); i++) {
		int k = (int)(ts_rand(&st) % 100);
		char key[32], v[32];
		int kl = snprintf(key, sizeof key, "/bw/%02d", k);
		int vl = snprintf(v, sizeof v, "%d", i);
		struct eng_commit_res res = {0};
		lp_err rc;
		int del = live[k] && ts_rand(&st) % 5 == 0;
		if (del)
			rc = tc_del(a->e, key, (size_t)kl, NULL, &res);
		else
			rc = tc_put(a->e, key, (size_t)kl, v, (size_t)vl,
				    ENG_NO_SLOT, NULL, &res);
		if (rc || res.rev >= BW_MAX) {
			snprintf(a->err, sizeof a->err,
				 "commit: %s rev %" PRId64, lp_errname(rc),
				 res.rev);
			return NULL;
		}
		live[k] = !del;
		atomic_store(&LOG.key[res.rev], k);
		atomic_store(&LOG.val[res.rev], i);
		atomic_store(&LOG.del[res.rev], del);
		atomic_fetch_add(&a->n, 1);
	}
	return NULL;
}

Test(eng_backup, backup_while_writing_is_consistent)
{
	static struct bw_arg a;
	memset(&a, 0, sizeof a);
	memset(&LOG, 0, sizeof LOG);
	a.e = S.e;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, bw_write, &a), 0);
	TC_OK(eng_wait_rev(S.e, 500, tc_wait_ms()));
	char path[4096];
	snprintf(path, sizeof path, "%s/backup.mdb", BAK_DIR);
	TC_OK(eng_backup(S.e, path, NULL, NULL));
	TC_OK(eng_wait_rev(S.e, eng_rev(S.e) + 100, tc_wait_ms()));
	atomic_store(&a.stop, 1);
	pthread_join(th, NULL);
	cr_assert_eq(a.err[0], 0, "writer: %s", a.err);

	struct tc_store copy;
	open_copy(path, "restored", false, &copy);
	int64_t R = eng_rev(copy.e);
	cr_assert_geq(R, 500);
	cr_assert_lt(R, eng_rev(S.e),
		     "the backup is newer than the writes after it");
	/* Replay the writer's log up to R into a model. */
	struct tm_model m;
	tm_init(&m);
	for (int64_t rev = 2; rev <= eng_rev(S.e); rev++) {
		char key[32], v[32];
		snprintf(key, sizeof key, "/bw/%02d",
			 atomic_load(&LOG.key[rev]));
		snprintf(v, sizeof v, "%d", atomic_load(&LOG.val[rev]));
		if (atomic_load(&LOG.del[rev]))
			tm_del(&m, key, strlen(key), rev);
		else
			tm_put(&m, key, strlen(key), v, strlen(v), ENG_NO_SLOT,
			       rev);
	}
	struct eng_range_req q = {.prefix = "/bw/", .prefix_len = 4};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	TC_OK(tc_range(copy.e, &q, &l, &res));
	tm_assert_range(&m, &q, R, &l, "backup content");
	tc_list_free(&l);
	/* The source read at R agrees. */
	q.at_rev = R;
	TC_OK(tc_range(S.e, &q, &l, &res));
	tm_assert_range(&m, &q, R, &l, "source at R");
	tc_list_free(&l);
	tm_free(&m);
	tc_done(&copy);
}

Test(eng_backup, bump_after_restore)
{
	write_some(S.e, 200, 1);
	struct tc_store copy;
	backup_and_open(&copy, NULL);
	int64_t old = eng_rev(copy.e);
	struct eng_info before;
	TC_OK(eng_info(copy.e, &before));
	int64_t nr = 0;
	TC_RC(eng_bump(copy.e, 0, &nr), LP_E_INVAL);
	TC_RC(eng_bump(copy.e, -5, &nr), LP_E_INVAL);
	cr_assert_eq(eng_rev(copy.e), old);
	TC_OK(eng_bump(copy.e, 1000, &nr));
	cr_assert_eq(nr, old + 1000);
	cr_assert_eq(eng_rev(copy.e), nr);
	cr_assert_eq(eng_compacted(copy.e), nr);
	struct eng_info after;
	TC_OK(eng_info(copy.e, &after));
	cr_assert_eq(after.rev, nr);
	cr_assert_eq(after.compacted, nr);
	cr_assert_eq(after.n_keys, before.n_keys);
	cr_assert_str_eq(after.hash, before.hash, "bump changed the content");
	tc_check(copy.e);

	/* Old revisions are gone for reads and watches. */
	struct tc_rec r = {0};
	TC_RC(tc_get(copy.e, "/b/001", 6, old, &r), LP_E_COMPACTED);
	TC_RC(tc_get(copy.e, "/b/001", 6, nr - 1, &r), LP_E_COMPACTED);
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w = NULL;
	TC_RC(eng_watch_open(copy.e, "", 0, old, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	TC_RC(eng_watch_open(copy.e, "", 0, nr - 1, tc_ready, &wt, &w),
	      LP_E_COMPACTED);
	/* The latest state reads at nr, and the next write gets nr + 1. */
	struct eng_range_req q = {
	    .prefix = "/b/", .prefix_len = 3, .at_rev = nr};
	struct tc_list l = {0};
	struct eng_range_res res = {0};
	TC_OK(tc_range(copy.e, &q, &l, &res));
	cr_assert_eq(l.n, before.n_keys);
	tc_list_free(&l);
	TC_OK(eng_watch_open(copy.e, "", 0, nr, tc_ready, &wt, &w));
	cr_assert_eq(tc_puts(copy.e, "/b/after", "a"), nr + 1);
	eng_event *ev = NULL;
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->rev, nr + 1);
	eng_event_unref(ev);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);

	/* It persists. */
	tc_reopen(&copy);
	cr_assert_eq(eng_rev(copy.e), nr + 1);
	cr_assert_eq(eng_compacted(copy.e), nr);
	TC_RC(tc_get(copy.e, "/b/001", 6, nr - 1, &r), LP_E_COMPACTED);
	tc_done(&copy);
}

/* Cut to `keep` bytes: the file a full disk or an interrupted copy leaves. */
static void truncate_to(const char *path, off_t keep)
{
	cr_assert_eq(truncate(path, keep), 0, "%s", path);
}

/* A backup cut short, empty or not LMDB's at all is refused with why, by
   eng_file_check and by a read-only open, never mapped (LMDB reading past
   the file's end is SIGBUS: found by an audit). */
Test(eng_backup, a_truncated_or_foreign_file_is_refused)
{
	write_some(S.e, 400, 2);
	char path[4096], msg[4200];
	snprintf(path, sizeof path, "%s/backup.mdb", BAK_DIR);
	TC_OK(eng_backup(S.e, path, NULL, NULL));
	TC_OK(eng_file_check(path, msg, sizeof msg));
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);

	struct tc_store copy = {0};
	copy.dir = ts_tmpdir("cut");
	char dst[4200];
	snprintf(dst, sizeof dst, "%s/data.mdb", copy.dir);
	copy_file(path, dst);
	truncate_to(dst, sb.st_size / 2);
	TC_RC(eng_file_check(dst, msg, sizeof msg), LP_E_CORRUPT);
	cr_assert(strstr(msg, "is truncated"), "%s", msg);
	copy.o.dir = copy.dir;
	copy.o.readonly = 1;
	TC_RC(eng_open(&copy.o, &copy.e), LP_E_CORRUPT);
	copy.o.readonly = 0;
	copy.o.nosync = 1;
	TC_RC(eng_open(&copy.o, &copy.e), LP_E_CORRUPT);

	truncate_to(dst, 0);
	TC_RC(eng_file_check(dst, msg, sizeof msg), LP_E_CORRUPT);
	cr_assert(strstr(msg, "is empty"), "%s", msg);
	copy.o.readonly = 1;
	TC_RC(eng_open(&copy.o, &copy.e), LP_E_CORRUPT);

	FILE *f = fopen(dst, "wb");
	cr_assert_not_null(f);
	for (int i = 0; i < 3000; i++)
		fputs("not a store ", f);
	fclose(f);
	TC_RC(eng_file_check(dst, msg, sizeof msg), LP_E_CORRUPT);
	cr_assert(strstr(msg, "no LMDB file"), "%s", msg);
	ts_rmtree_free(copy.dir);
}

struct bk_arg {
	const char *path;
	lp_err rc;
};

static void *bk_thread(void *p)
{
	struct bk_arg *a = p;
	a->rc = eng_backup(S.e, a->path, NULL, NULL);
	return NULL;
}

/* Backups to one path at once each write a temporary file of their own
   and rename a whole one (found by an audit: they shared FILE.tmp and one
   could report success for a corrupt file). */
Test(eng_backup, backups_to_one_path_at_once_leave_a_whole_file)
{
	write_some(S.e, 400, 5);
	char path[4096], msg[4200];
	snprintf(path, sizeof path, "%s/same.mdb", BAK_DIR);
	for (int round = 0; round < 4; round++) {
		pthread_t th[3];
		struct bk_arg a[3];
		for (int i = 0; i < 3; i++) {
			a[i] = (struct bk_arg){.path = path};
			cr_assert_eq(
			    pthread_create(&th[i], NULL, bk_thread, &a[i]), 0);
		}
		for (int i = 0; i < 3; i++) {
			pthread_join(th[i], NULL);
			TC_OK(a[i].rc);
		}
		TC_OK(eng_file_check(path, msg, sizeof msg));
		struct tc_store copy;
		open_copy(path, "same", true, &copy);
		tc_done(&copy);
	}
}

/* A backup whose progress says stop (the CLI's SIGINT) ends with
   LP_E_CLOSED and leaves no file: neither the backup nor its temporary
   (a stopped `lapis backup` left FILE.tmp.XXXXXX behind). */
Test(eng_backup, a_stopped_backup_leaves_nothing)
{
	char big[2048];
	memset(big, 'x', sizeof big);
	for (int i = 0; i < 600; i++) {
		char k[32];
		int kl = snprintf(k, sizeof k, "/big/%04d", i);
		TC_OK(tc_put(S.e, k, (size_t)kl, big, sizeof big, ENG_NO_SLOT,
			     NULL, NULL));
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/stopped.mdb", BAK_DIR);
	struct prog pg = {.stop_after = 2};
	cr_assert_eq(eng_backup(S.e, path, progress, &pg), LP_E_CLOSED);
	cr_assert_eq(pg.calls, 2, "the copy went on after stop: %d calls",
		     pg.calls);
	char pat[4200];
	snprintf(pat, sizeof pat, "%s/*", BAK_DIR);
	glob_t g;
	int gr = glob(pat, 0, NULL, &g);
	cr_assert_eq(gr, GLOB_NOMATCH, "left behind: %s",
		     gr == 0 ? g.gl_pathv[0] : "?");
	if (gr == 0)
		globfree(&g);
	/* and the store goes on: a whole backup still works */
	pg = (struct prog){0};
	TC_OK(eng_backup(S.e, path, progress, &pg));
	cr_assert_gt(pg.calls, 2);
}
