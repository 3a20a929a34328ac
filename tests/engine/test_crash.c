/*
 * test_crash.c -- kill -9 in the middle of commits, then reopen
 * (STYLE.md §7 "Crash tests kill the process mid-commit and reopen").
 *
 * A forked child opens the store in sync mode and commits from several
 * threads; each txn writes three keys (a, b, c) with one payload id. After
 * each acknowledged commit the child writes (id, rev) to a pipe; the parent
 * SIGKILLs it after some acknowledgements, collects what was acknowledged,
 * reopens and checks. Five rounds on the same store.
 *
 * Invariants checked
 *  1. Every acknowledged txn is present at its revision (all three keys).
 *  2. Nothing is half-written: replaying the whole change log, every
 *     revision holds exactly the three puts of one txn, with one payload.
 *  3. The revision continues above the highest acknowledged one.
 *  4. eng_check passes after every crash.
 *  5. With a thread compacting all along (kill_during_compaction...): the
 *     same, except that a revision below the compacted one reads
 *     LP_E_COMPACTED and its keys then hold a newer version.
 */
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define C_THREADS 3
#define C_SLOTS 8
#define C_ACKS 120
#define C_ROUNDS 5

struct ack {
	int64_t id;
	int64_t rev;
};

/* Payload id: round, thread and sequence; the slot is seq % C_SLOTS. */
static int64_t make_id(int round, int t, int64_t seq)
{
	return (int64_t)round * 100000000 + (int64_t)t * 1000000 + seq;
}

static int id_thread(int64_t id)
{
	return (int)(id / 1000000 % 100);
}

static int id_slot(int64_t id)
{
	return (int)(id % 1000000 % C_SLOTS);
}

static size_t key_of(char *buf, size_t n, int t, int slot, char which)
{
	return (size_t)snprintf(buf, n, "/crash/t%d/s%d/%c", t, slot, which);
}

static size_t val_of(char *buf, size_t n, int64_t id)
{
	/* Some padding so that a commit spans more than a few bytes. */
	return (size_t)snprintf(buf, n, "id=%" PRId64 ";%0200d", id, 0);
}

struct child_arg {
	eng *e;
	int round, t, fd;
};

/* Compact to a few revisions behind the latest, over and over: a kill lands
   before, between or after compaction steps (whose commits do not sync the
   meta page). */
static void *child_compactor(void *p)
{
	eng *e = p;
	for (;;) {
		int64_t target = eng_rev(e) - 20;
		if (target > 1 && eng_compact(e, target, NULL))
			_exit(8);
	}
	return NULL;
}

static void *child_thread(void *p)
{
	struct child_arg *a = p;
	for (int64_t seq = 0;; seq++) {
		int64_t id = make_id(a->round, a->t, seq);
		char v[256];
		size_t vl = val_of(v, sizeof v, id);
		eng_txn *t;
		if (eng_txn_new(a->e, &t))
			_exit(3);
		for (char w = 'a'; w <= 'c'; w++) {
			char k[64];
			size_t kl = key_of(k, sizeof k, a->t, id_slot(id), w);
			if (eng_txn_put(t, k, kl, v, vl, ENG_NO_SLOT, NULL))
				_exit(3);
		}
		struct eng_commit_res res = {0};
		if (eng_txn_commit(t, &res))
			_exit(4);
		eng_txn_free(t);
		struct ack ak = {id, res.rev};
		if (write(a->fd, &ak, sizeof ak) != (ssize_t)sizeof ak)
			_exit(5);
	}
	return NULL;
}

/* The child: never returns. */
static void child_main(const char *dir, int round, int fd, bool compact)
{
	struct eng_opts o = {.dir = dir, .nosync = 0};
	eng *e;
	if (eng_open(&o, &e))
		_exit(2);
	pthread_t th[C_THREADS];
	struct child_arg a[C_THREADS];
	for (int i = 0; i < C_THREADS; i++) {
		a[i] = (struct child_arg){e, round, i, fd};
		if (pthread_create(&th[i], NULL, child_thread, &a[i]))
			_exit(6);
	}
	pthread_t tc;
	if (compact && pthread_create(&tc, NULL, child_compactor, e))
		_exit(6);
	for (int i = 0; i < C_THREADS; i++)
		pthread_join(th[i], NULL);
	_exit(7);
}

/* Run one child and return its acknowledgements (n in *n_out). */
static struct ack *crash_round(const char *dir, int round, bool compact,
			       size_t *n_out)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		close(fds[0]);
		child_main(dir, round, fds[1], compact);
	}
	close(fds[1]);
	size_t cap = 4096, n = 0;
	struct ack *acks = tc_xmalloc(cap * sizeof *acks);
	int killed = 0;
	for (;;) {
		struct ack ak;
		ssize_t r = read(fds[0], &ak, sizeof ak);
		if (r == 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		cr_assert_eq(r, (ssize_t)sizeof ak,
			     "short read from the child");
		if (n == cap) {
			cap *= 2;
			acks = tc_xrealloc(acks, cap * sizeof *acks);
		}
		acks[n++] = ak;
		if (n == (size_t)(C_ACKS + 37 * round) && !killed) {
			kill(pid, SIGKILL);
			killed = 1;
		}
	}
	close(fds[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the child ended on its own (status %d) after %zu acks",
		  status, n);
	*n_out = n;
	return acks;
}

static void check_after_crash(eng *e, const struct ack *acks, size_t n,
			      int64_t *max_rev)
{
	for (size_t i = 0; i < n; i++) {
		int t = id_thread(acks[i].id), s = id_slot(acks[i].id);
		char v[256];
		size_t vl = val_of(v, sizeof v, acks[i].id);
		if (acks[i].rev > *max_rev)
			*max_rev = acks[i].rev;
		for (char w = 'a'; w <= 'c'; w++) {
			char k[64];
			size_t kl = key_of(k, sizeof k, t, s, w);
			struct tc_rec r = {0};
			lp_err rc = tc_get(e, k, kl, acks[i].rev, &r);
			if (rc == LP_E_COMPACTED &&
			    acks[i].rev < eng_compacted(e)) {
				/* Below the compacted revision a read at it is
				   refused even when the record is still the
				   latest (as etcd): the latest is then either
				   this very record or a newer one. */
				TC_OK(tc_get(e, k, kl, 0, &r));
				cr_assert_geq(r.mod_rev, acks[i].rev,
					      "acknowledged %s at %" PRId64
					      " lost: latest at %" PRId64,
					      k, acks[i].rev, r.mod_rev);
				if (r.mod_rev > acks[i].rev) {
					tc_rec_free(&r);
					continue;
				}
			} else {
				cr_assert_eq(rc, LP_OK,
					     "acknowledged %s at %" PRId64
					     " lost: %s",
					     k, acks[i].rev, lp_errname(rc));
			}
			cr_assert_eq(r.mod_rev, acks[i].rev, "%s", k);
			cr_assert_eq(r.value_len, vl);
			cr_assert(memcmp(r.value, v, vl) == 0,
				  "%s at %" PRId64 ": '%.30s' want '%.30s'", k,
				  acks[i].rev, (char *)r.value, v);
			tc_rec_free(&r);
		}
	}
	cr_assert_geq(eng_rev(e), *max_rev);
}

/* Replay the whole change log: each revision is one txn of three puts.
   The newest revision is the child's, so the replay ends with it. */
static void check_log_whole(eng *e)
{
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	TC_OK(eng_watch_open(e, "/crash/", 7, 1, tc_ready, &wt, &w));
	const int64_t now = eng_rev(e);
	int64_t rev = 0;
	int in_rev = 0;
	char first[64] = "";
	uint8_t val[256];
	size_t val_len = 0;
	while (!(rev == now && in_rev == 3)) {
		eng_event *ev;
		lp_err rc = tc_next_wait(w, &wt, &ev);
		cr_assert_eq(rc, LP_OK,
			     "log replay after %" PRId64 " (store at %" PRId64
			     "): %s",
			     rev, now, lp_errname(rc));
		cr_assert_eq(ev->type, ENG_EV_PUT);
		cr_assert_leq(ev->rev, now);
		if (ev->rev != rev) {
			cr_assert(in_rev == 0 || in_rev == 3,
				  "revision %" PRId64 " has %d of 3 puts", rev,
				  in_rev);
			cr_assert_gt(ev->rev, rev);
			rev = ev->rev;
			in_rev = 0;
			snprintf(first, sizeof first, "%.*s",
				 (int)ev->rec.key_len - 1,
				 (const char *)ev->rec.key);
			val_len = ev->rec.value_len;
			cr_assert_leq(val_len, sizeof val);
			memcpy(val, ev->rec.value, val_len);
		}
		/* Same txn: same /crash/tX/sY/ prefix and the same payload. */
		cr_assert_eq(ev->rec.key_len, strlen(first) + 1);
		cr_assert(memcmp(ev->rec.key, first, strlen(first)) == 0,
			  "revision %" PRId64 " mixes keys", rev);
		cr_assert_eq(ev->rec.value_len, val_len);
		cr_assert(memcmp(ev->rec.value, val, val_len) == 0,
			  "revision %" PRId64 " mixes payloads", rev);
		in_rev++;
		cr_assert_leq(in_rev, 3,
			      "revision %" PRId64 " has more than 3"
			      " puts",
			      rev);
		eng_event_unref(ev);
	}
	eng_event *ev;
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

Test(eng_crash, kill_during_sync_commits_loses_nothing_acknowledged)
{
	char *dir = ts_tmpdir("crash");
	int64_t max_rev = 1;
	for (int round = 0; round < C_ROUNDS; round++) {
		size_t n;
		struct ack *acks = crash_round(dir, round, false, &n);
		cr_assert_geq(n, C_ACKS);
		struct eng_opts o = {.dir = dir, .nosync = 1};
		eng *e;
		TC_OK(eng_open(&o, &e));
		tc_check(e);
		check_after_crash(e, acks, n, &max_rev);
		check_log_whole(e);
		/* The revision continues above everything acknowledged. */
		struct eng_commit_res res = {0};
		TC_OK(tc_put(e, "/after", 6, "x", 1, ENG_NO_SLOT, NULL, &res));
		cr_assert_gt(res.rev, max_rev);
		max_rev = res.rev;
		tc_check(e);
		eng_close(e);
		free(acks);
		cr_log_info("round %d: %zu acknowledged, revision %" PRId64,
			    round, n, max_rev);
	}
	ts_rmtree_free(dir);
}

Test(eng_crash, kill_during_compaction_loses_nothing_acknowledged)
{
	char *dir = ts_tmpdir("crash-compact");
	int64_t max_rev = 1;
	for (int round = 0; round < C_ROUNDS; round++) {
		size_t n;
		struct ack *acks = crash_round(dir, round, true, &n);
		cr_assert_geq(n, C_ACKS);
		struct eng_opts o = {.dir = dir, .nosync = 1};
		eng *e;
		TC_OK(eng_open(&o, &e));
		tc_check(e);
		int64_t compacted = eng_compacted(e);
		cr_assert_leq(compacted, eng_rev(e));
		check_after_crash(e, acks, n, &max_rev);
		struct eng_commit_res res = {0};
		TC_OK(tc_put(e, "/after", 6, "x", 1, ENG_NO_SLOT, NULL, &res));
		cr_assert_gt(res.rev, max_rev);
		max_rev = res.rev;
		/* What the killed compaction left, the next one finishes. */
		TC_OK(eng_compact(e, res.rev, NULL));
		tc_check(e);
		eng_close(e);
		free(acks);
		cr_log_info("round %d: %zu acknowledged, revision %" PRId64
			    ", compacted %" PRId64 " when reopened",
			    round, n, max_rev, compacted);
	}
	ts_rmtree_free(dir);
}
