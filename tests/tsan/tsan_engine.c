/*
 * tsan_engine.c -- every kind of engine thread at once, for ThreadSanitizer
 * (Criterion aborts under TSan, Criterion issue #274, so this is a plain
 * program: exit 0 on success, 1 on a failed check).
 *
 * Running together on one store with a 1 MiB initial map (so the map grows
 * under readers) and a small watch ring (so watchers overflow and replay):
 *   - writer threads committing puts (with a revision slot), deletes,
 *     multi-op txns, compare-and-swaps and chains of two txns;
 *   - reader threads doing gets and paged ranges, some at a pinned
 *     revision;
 *   - watcher threads consuming events through the ready callback, re-
 *     watching after LP_E_OVERFLOW or LP_E_COMPACTED;
 *   - a thread compacting, and the periodic compactor;
 *   - in sync mode, the write-ahead log and its checkpoint thread.
 *
 * Invariants checked (besides TSan's own)
 *  1. Every commit succeeds (or fails its compare with LP_E_CONFLICT); each
 *     thread's revisions increase.
 *  2. Every record read carries its mod_rev in its slot, has mod_rev <= the
 *     snapshot's revision, and ranges come in strictly increasing key order.
 *  3. A watcher's revisions never go back, and have no gaps except across a
 *     re-watch after LP_E_COMPACTED.
 *  4. At the end the map has grown and eng_check passes.
 *  5. eng_get_copy (the read cache) never answers with a record older than
 *     the last write of that key acknowledged before the read began.
 * The seed is printed; LAPIS_SEED overrides it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lapis/engine.h"
#include "support.h"

#define WRITERS 3
#define READERS 2
#define WATCHERS 2
#define TXNS 1500
#define VAL 4096
#define SLOT_OFF 3 /* values are "rv=<rev>" followed by padding */

static eng *E;
static _Atomic int writers_done;
static _Atomic int stop_all;
static _Atomic int64_t final_rev;
static _Atomic int failures;
/* the revision of each writer's key's last acknowledged put or delete */
static _Atomic int64_t acked[WRITERS][64];
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&fail_mu);
	if (atomic_fetch_add(&failures, 1) < 20) {
		fprintf(stderr, "tsan_engine: FAIL: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&fail_mu);
}

/* A value read back: "rv=" then the decimal mod_rev, then padding. */
static void check_rec(const struct eng_record *r, int64_t snap, const char *who)
{
	if (r->mod_rev > snap || r->create_rev > r->mod_rev || r->version < 1) {
		fail("%s: bad revisions create %" PRId64 " mod %" PRId64
		     " version %" PRId64 " snapshot %" PRId64,
		     who, r->create_rev, r->mod_rev, r->version, snap);
		return;
	}
	if (r->value_len < SLOT_OFF || memcmp(r->value, "rv=", SLOT_OFF)) {
		fail("%s: value without its header", who);
		return;
	}
	int64_t v = 0;
	size_t i = SLOT_OFF;
	while (i < r->value_len && r->value[i] >= '0' && r->value[i] <= '9')
		v = v * 10 + (r->value[i++] - '0');
	if (v != r->mod_rev)
		fail("%s: slot says %" PRId64 ", mod_rev %" PRId64, who, v,
		     r->mod_rev);
}

/* ------------------------------------------------------------------ writers */

struct writer {
	int id;
	uint64_t seed;
	long commits, conflicts;
};

/* A chain of two puts (eng_txn_commit_chain): consecutive revisions. */
static int chain_pair(struct writer *w, char *val, int64_t *last)
{
	eng_txn *ts[2] = {NULL, NULL};
	lp_err rc = LP_OK;
	for (int j = 0; j < 2 && !rc; j++) {
		char key[32];
		int kl = snprintf(key, sizeof key, "/t/%d/c%d", w->id, j);
		rc = eng_txn_new(E, &ts[j]);
		if (!rc)
			rc = eng_txn_put(ts[j], key, (size_t)kl, val, VAL / 2,
					 SLOT_OFF, NULL);
	}
	struct eng_commit_res res[2];
	if (!rc)
		rc = eng_txn_commit_chain(ts, 2, res);
	eng_txn_free(ts[0]);
	eng_txn_free(ts[1]);
	if (rc) {
		fail("writer %d: chain: %s", w->id, lp_errname(rc));
		return -1;
	}
	if (res[1].rev != res[0].rev + 1 || res[0].rev < *last)
		fail("writer %d: chain at %" PRId64 " and %" PRId64
		     " after %" PRId64,
		     w->id, res[0].rev, res[1].rev, *last);
	*last = res[1].rev;
	w->commits += 2;
	return 0;
}

static void *writer_main(void *p)
{
	struct writer *w = p;
	uint64_t st = w->seed;
	char *val = malloc(VAL);
	if (!val) {
		fail("writer: no memory");
		return NULL;
	}
	memcpy(val, "rv=", SLOT_OFF);
	memset(val + SLOT_OFF, 'x', VAL - SLOT_OFF);
	int64_t last = 0;
	for (int i = 0; i < TXNS && !atomic_load(&stop_all); i++) {
		if (i % 8 == 7) {
			if (chain_pair(w, val, &last))
				break;
			continue;
		}
		eng_txn *t;
		lp_err rc = eng_txn_new(E, &t);
		if (rc) {
			fail("writer %d: txn_new %s", w->id, lp_errname(rc));
			break;
		}
		int n = ts_rand(&st) % 6 == 0 ? 3 : 1;
		uint64_t used = 0; /* a txn names a key once */
		uint64_t wrote =
		    0; /* the keys /t/<id>/<k> it puts or deletes */
		for (int j = 0; j < n && !rc; j++) {
			int k = (int)(ts_rand(&st) % 64);
			if (used & (1ull << k))
				continue;
			used |= 1ull << k;
			char key[32];
			int kl =
			    snprintf(key, sizeof key, "/t/%d/%02d", w->id, k);
			uint64_t x = ts_rand(&st) % 10;
			if (x == 0) {
				rc = eng_txn_del(t, key, (size_t)kl, NULL);
				wrote |= 1ull << k;
			} else if (x == 1) {
				/* A CAS on a shared key; may conflict. */
				struct eng_cmp c = {.kind = ENG_CMP_MOD,
						    .mod_rev = eng_rev(E)};
				rc = eng_txn_put(t, "/t/shared", 9, val,
						 VAL / 4, SLOT_OFF, &c);
				break;
			} else {
				rc = eng_txn_put(
				    t, key, (size_t)kl, val,
				    (size_t)(VAL / 2 +
					     ts_rand(&st) % (VAL / 2)),
				    SLOT_OFF, NULL);
				wrote |= 1ull << k;
			}
		}
		struct eng_commit_res res;
		if (!rc)
			rc = eng_txn_commit(t, &res);
		eng_txn_free(t);
		if (rc == LP_E_CONFLICT || rc == LP_E_NOTFOUND) {
			w->conflicts++;
			continue;
		}
		if (rc) {
			fail("writer %d: commit %d: %s", w->id, i,
			     lp_errname(rc));
			break;
		}
		if (res.rev < last)
			fail("writer %d: revision went back %" PRId64
			     " -> %" PRId64,
			     w->id, last, res.rev);
		last = res.rev;
		for (int k = 0; k < 64; k++)
			if (wrote & (1ull << k))
				atomic_store(&acked[w->id][k], res.rev);
		w->commits++;
	}
	free(val);
	return NULL;
}

/* ------------------------------------------------------------------ readers */

struct reader {
	int id;
	uint64_t seed;
	long gets, ranges, pinned, copies;
	uint8_t last[64];
	size_t last_len;
	int64_t snap;
	int bad_order;
};

static enum eng_take reader_fn(void *ud, const struct eng_record *rec)
{
	struct reader *r = ud;
	if (r->last_len) {
		size_t n =
		    r->last_len < rec->key_len ? r->last_len : rec->key_len;
		int c = memcmp(r->last, rec->key, n);
		if (c > 0 || (c == 0 && r->last_len >= rec->key_len))
			r->bad_order = 1;
	}
	r->last_len =
	    rec->key_len < sizeof r->last ? rec->key_len : sizeof r->last;
	memcpy(r->last, rec->key, r->last_len);
	check_rec(rec, r->snap, "range");
	return ENG_TAKE;
}

/* Invariant 5: twice, so that the second may come from the cache. */
static void copy_read(struct reader *r, uint64_t *st)
{
	int w = (int)(ts_rand(st) % WRITERS), k = (int)(ts_rand(st) % 64);
	char key[32];
	int kl = snprintf(key, sizeof key, "/t/%d/%02d", w, k);
	for (int i = 0; i < 2; i++) {
		int64_t before = atomic_load(&acked[w][k]);
		struct eng_copy c;
		lp_err rc = eng_get_copy(E, key, (size_t)kl, &c);
		if (rc == LP_E_NOTFOUND)
			continue;
		if (rc) {
			fail("reader %d: get_copy %s", r->id, lp_errname(rc));
			return;
		}
		struct eng_record rec = {.key = (const uint8_t *)key,
					 .key_len = (size_t)kl,
					 .value = (const uint8_t *)c.value,
					 .value_len = c.value_len,
					 .create_rev = c.create_rev,
					 .mod_rev = c.mod_rev,
					 .version = c.version};
		check_rec(&rec, INT64_MAX, "get_copy");
		if (c.mod_rev < before)
			fail("reader %d: get_copy of %s at %" PRId64
			     " after a write at %" PRId64 " was acknowledged",
			     r->id, key, c.mod_rev, before);
		free(c.value);
		r->copies++;
	}
}

static void *reader_main(void *p)
{
	struct reader *r = p;
	uint64_t st = r->seed;
	while (!atomic_load(&writers_done) && !atomic_load(&stop_all)) {
		eng_pin *pin = NULL;
		int64_t at = 0;
		if (ts_rand(&st) % 8 == 0) {
			/* A paged read at a pinned revision. */
			at = eng_rev(E);
			if (eng_pin_rev(E, at, &pin) != LP_OK)
				at = 0;
			else
				r->pinned++;
		}
		copy_read(r, &st);
		eng_rd *rd;
		lp_err rc = eng_rd_begin(E, &rd);
		if (rc) {
			fail("reader %d: rd_begin %s", r->id, lp_errname(rc));
			eng_unpin(pin);
			break;
		}
		r->snap = at ? at : eng_rd_rev(rd);
		char key[32];
		int kl = snprintf(key, sizeof key, "/t/%d/%02d",
				  (int)(ts_rand(&st) % WRITERS),
				  (int)(ts_rand(&st) % 64));
		struct eng_record rec;
		rc = eng_get(rd, key, (size_t)kl, at, &rec);
		if (rc == LP_OK)
			check_rec(&rec, r->snap, "get");
		else if (rc != LP_E_NOTFOUND)
			fail("reader %d: get at %" PRId64 ": %s", r->id, at,
			     lp_errname(rc));
		r->gets++;
		struct eng_range_req q = {
		    .prefix = "/t/",
		    .prefix_len = 3,
		    .at_rev = at,
		    .limit = 1 + ts_rand(&st) % 20,
		    .flags = ts_rand(&st) % 2 ? ENG_RANGE_COUNT : 0};
		r->last_len = 0;
		r->bad_order = 0;
		struct eng_range_res res;
		rc = eng_range(rd, &q, reader_fn, r, &res);
		if (rc)
			fail("reader %d: range at %" PRId64 ": %s", r->id, at,
			     lp_errname(rc));
		else if (r->bad_order)
			fail("reader %d: range out of order", r->id);
		r->ranges++;
		eng_rd_end(rd);
		eng_unpin(pin);
	}
	return NULL;
}

/* ----------------------------------------------------------------- watchers */

struct watcher {
	int id;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fired;
	long events, overflows, compacted;
};

static void watcher_ready(void *ud)
{
	struct watcher *w = ud;
	pthread_mutex_lock(&w->mu);
	w->fired = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void *watcher_main(void *p)
{
	struct watcher *w = p;
	eng_watch *wt = NULL;
	int64_t last = eng_rev(E);
	int allow_gap = 0;
	lp_err rc = eng_watch_open(E, "", 0, last, watcher_ready, w, &wt);
	if (rc) {
		fail("watcher %d: open %s", w->id, lp_errname(rc));
		return NULL;
	}
	for (;;) {
		int64_t fin = atomic_load(&final_rev);
		if (fin && last >= fin)
			break;
		if (atomic_load(&stop_all))
			break;
		pthread_mutex_lock(&w->mu);
		w->fired = 0;
		pthread_mutex_unlock(&w->mu);
		eng_event *ev;
		rc = eng_watch_next(wt, &ev);
		if (rc == LP_OK) {
			if (ev->rev < last ||
			    (ev->rev > last + 1 && !allow_gap))
				fail("watcher %d: event %" PRId64
				     " after %" PRId64,
				     w->id, ev->rev, last);
			if (ev->rec.mod_rev != ev->rev)
				fail("watcher %d: event mod_rev %" PRId64
				     " rev %" PRId64,
				     w->id, ev->rec.mod_rev, ev->rev);
			allow_gap = 0;
			last = ev->rev;
			w->events++;
			eng_event_unref(ev);
			continue;
		}
		if (rc == LP_E_OVERFLOW || rc == LP_E_COMPACTED) {
			/* Re-watch from the last revision seen, or from the
			   compacted revision if that is gone too. */
			if (rc == LP_E_OVERFLOW)
				w->overflows++;
			else
				w->compacted++;
			eng_watch_close(wt);
			wt = NULL;
			rc = eng_watch_open(E, "", 0, last, watcher_ready, w,
					    &wt);
			if (rc == LP_E_COMPACTED) {
				w->compacted++;
				int64_t c = eng_compacted(E);
				allow_gap = 1;
				last = c > last ? c : last;
				rc = eng_watch_open(E, "", 0, last,
						    watcher_ready, w, &wt);
			}
			if (rc) {
				fail("watcher %d: re-open at %" PRId64 ": %s",
				     w->id, last, lp_errname(rc));
				return NULL;
			}
			continue;
		}
		if (rc != LP_E_AGAIN) {
			fail("watcher %d: next %s", w->id, lp_errname(rc));
			break;
		}
		/* Wait for the callback; the timeout only re-checks the end
		   condition. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&w->mu);
		while (!w->fired) {
			if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) ==
			    ETIMEDOUT)
				break;
		}
		pthread_mutex_unlock(&w->mu);
		if (w->id == 1) {
			/* The lazy one: dawdles after each wake-up so that it
			   falls behind the ring and re-watches. */
			struct timespec d = {0, 2 * 1000000L};
			nanosleep(&d, NULL);
		}
	}
	eng_watch_close(wt);
	return NULL;
}

/* ---------------------------------------------------------------- compactor */

static void *compact_main(void *p)
{
	(void)p;
	while (!atomic_load(&writers_done) && !atomic_load(&stop_all)) {
		int64_t target = eng_rev(E) - 200;
		int64_t done;
		if (target > 1) {
			lp_err rc = eng_compact(E, target, &done);
			/* done may exceed target: the periodic compactor
			   may have gone further already. */
			if (rc)
				fail("compact to %" PRId64 ": %s", target,
				     lp_errname(rc));
			else if (done > eng_rev(E))
				fail("compact to %" PRId64 " did %" PRId64
				     " beyond the revision",
				     target, done);
		}
		/* Writers and readers need the CPU more than we do. */
		struct timespec ts = {0, 5 * 1000000L};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(void)
{
	uint64_t seed = ts_seed("tsan_engine", 4242);
	char *dir = ts_tmpdir("tsan-engine");
	/* Synced: the write-ahead log's flushes and its checkpoint thread
	   run beside everything else (engine/wal.c). */
	struct eng_opts o = {
	    .dir = dir, .initial_map = 1u << 20, .ring_events = 64};
	lp_err rc = eng_open(&o, &E);
	if (rc) {
		fprintf(stderr, "tsan_engine: open: %s\n", lp_errname(rc));
		return 1;
	}
	if ((rc = eng_compactor_start(E, 20))) {
		fprintf(stderr, "tsan_engine: compactor: %s\n", lp_errname(rc));
		return 1;
	}
	static struct writer wr[WRITERS];
	static struct reader rd[READERS];
	static struct watcher wa[WATCHERS];
	pthread_t twr[WRITERS], trd[READERS], twa[WATCHERS], tcp;
	for (int i = 0; i < WATCHERS; i++) {
		wa[i].id = i;
		pthread_mutex_init(&wa[i].mu, NULL);
		pthread_cond_init(&wa[i].cv, NULL);
		pthread_create(&twa[i], NULL, watcher_main, &wa[i]);
	}
	for (int i = 0; i < READERS; i++) {
		rd[i].id = i;
		rd[i].seed = seed + 100 + (uint64_t)i;
		pthread_create(&trd[i], NULL, reader_main, &rd[i]);
	}
	pthread_create(&tcp, NULL, compact_main, NULL);
	for (int i = 0; i < WRITERS; i++) {
		wr[i].id = i;
		wr[i].seed = seed + (uint64_t)i;
		pthread_create(&twr[i], NULL, writer_main, &wr[i]);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(twr[i], NULL);
	atomic_store(&final_rev, eng_rev(E));
	atomic_store(&writers_done, 1);
	for (int i = 0; i < READERS; i++)
		pthread_join(trd[i], NULL);
	pthread_join(tcp, NULL);
	for (int i = 0; i < WATCHERS; i++)
		pthread_join(twa[i], NULL);

	struct eng_stats st;
	eng_stats(E, &st);
	if (st.map_grows == 0)
		fail("the map never grew");
	if (st.watchers != 0)
		fail("%" PRIu64 " watchers left", st.watchers);
	if (st.pins != 0)
		fail("%" PRIu64 " pins left", st.pins);
	char msg[512] = "";
	if ((rc = eng_check(E, msg, sizeof msg)))
		fail("eng_check: %s: %s", lp_errname(rc), msg);
	long commits = 0, conflicts = 0;
	for (int i = 0; i < WRITERS; i++) {
		commits += wr[i].commits;
		conflicts += wr[i].conflicts;
	}
	fprintf(stderr,
		"tsan_engine: rev %" PRId64 " compacted %" PRId64
		", %ld commits, %ld conflicts, %" PRIu64 " map grows, %" PRIu64
		" compaction slices (%" PRIu64 " in write groups)\n",
		st.rev, st.compacted, commits, conflicts, st.map_grows,
		st.compact_steps, st.compact_folded);
	for (int i = 0; i < READERS; i++)
		fprintf(stderr,
			"tsan_engine: reader %d: %ld gets, %ld ranges,"
			" %ld pinned, %ld copies\n",
			i, rd[i].gets, rd[i].ranges, rd[i].pinned,
			rd[i].copies);
	for (int i = 0; i < WATCHERS; i++)
		fprintf(stderr,
			"tsan_engine: watcher %d: %ld events, %ld "
			"overflows, %ld compacted\n",
			i, wa[i].events, wa[i].overflows, wa[i].compacted);
	eng_close(E);
	for (int i = 0; i < WATCHERS; i++) {
		pthread_mutex_destroy(&wa[i].mu);
		pthread_cond_destroy(&wa[i].cv);
	}
	ts_rmtree_free(dir);
	int nf = atomic_load(&failures);
	if (nf)
		fprintf(stderr, "tsan_engine: %d failures (seed %" PRIu64 ")\n",
			nf, seed);
	return nf ? 1 : 0;
}
