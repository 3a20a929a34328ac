/*
 * read.c -- read snapshots, point reads and range walks, at the latest
 * revision or an older one.
 *
 * Threads: any. An eng_rd belongs to the thread that began it.
 *
 * Invariants:
 *  1. Each thread parks at most one reset read transaction per engine in a
 *     thread-local slot and renews it for its next snapshot (LMDB's fastest
 *     read path), with the cursors of its range walks (renewed per walk);
 *     every eng_rd is on e->rd_all so eng_close can free it.
 *  2. A reader holds a gate slot from begin to end (see env.c).
 *  3. Latest reads use only the state database; older revisions merge state
 *     and hist (a key's value at R is the state record if its mod_rev <= R,
 *     else the newest hist entry at or below R, absent if a tombstone).
 *  4. Range walks yield keys in byte order: long keys that share their first
 *     IK_SHORT_MAX bytes are collected and sorted by full key (eng_int.h).
 *  5. Nothing a reader returns was committed without being durable
 *     (writer.c, invariant 8). A snapshot taken while a commit's log
 *     record was being flushed is unsettled: before it reads its revision,
 *     a range, the change log or an older revision (eng__rd_meta), it
 *     waits until the newest commit it may hold is durable. A point read
 *     of the latest value waits only if the key is absent or its record is
 *     newer than the durable revision seen at begin: a key unchanged since
 *     then reads the same in every durable state after it.
 */
#include <stdlib.h>
#include <string.h>

#include "eng_int.h"
#include "lapis/assert.h"

static _Thread_local struct {
	uint64_t gen;
	eng_rd *rd;
} tls_rd;

/*
 * A thread's parked read transaction holds an LMDB reader slot: when the
 * thread exits, a pthread key destructor gives it back, provided its engine
 * is still open (live_mu orders that against eng_close).
 */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static eng *live_engines;
static pthread_key_t rd_key;
static pthread_once_t rd_once = PTHREAD_ONCE_INIT;

void eng__live_add(eng *e)
{
	pthread_mutex_lock(&live_mu);
	e->live_next = live_engines;
	live_engines = e;
	pthread_mutex_unlock(&live_mu);
}

void eng__live_remove(eng *e)
{
	pthread_mutex_lock(&live_mu);
	for (eng **pp = &live_engines; *pp; pp = &(*pp)->live_next) {
		if (*pp == e) {
			*pp = e->live_next;
			break;
		}
	}
	pthread_mutex_unlock(&live_mu);
}

static void rd_thread_exit(void *unused)
{
	(void)unused;
	eng_rd *r = tls_rd.rd;
	if (!r)
		return;
	pthread_mutex_lock(&live_mu);
	for (eng *e = live_engines; e; e = e->live_next) {
		if (e->gen != tls_rd.gen)
			continue;
		bool found = false;
		pthread_mutex_lock(&e->rd_mu);
		for (eng_rd **pp = &e->rd_all; *pp; pp = &(*pp)->next) {
			if (*pp == r && !r->busy) {
				*pp = r->next;
				found = true;
				break;
			}
		}
		pthread_mutex_unlock(&e->rd_mu);
		if (found)
			eng__rd_free(r);
		break;
	}
	pthread_mutex_unlock(&live_mu);
	tls_rd.rd = NULL;
	tls_rd.gen = 0;
}

static void rd_key_init(void)
{
	pthread_key_create(&rd_key, rd_thread_exit);
}

void eng__rd_free(eng_rd *r)
{
	/* A read-only txn's cursors are closed explicitly, before or after
	   the txn ends (LMDB). */
	for (size_t i = 0; i < sizeof r->cur / sizeof r->cur[0]; i++)
		if (r->cur[i])
			mdb_cursor_close(r->cur[i]);
	if (r->txn)
		mdb_txn_abort(r->txn);
	free(r->grp);
	free(r);
}

static void rd_unlink_free(eng *e, eng_rd *r)
{
	pthread_mutex_lock(&e->rd_mu);
	for (eng_rd **pp = &e->rd_all; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&e->rd_mu);
	eng__rd_free(r);
}

lp_err eng_rd_begin(eng *e, eng_rd **out)
{
	if (atomic_load(&e->closing))
		return LP_E_CLOSED;
	int slot;
	eng__gate_enter(e, &slot);
	eng_rd *r = NULL;
	if (tls_rd.gen == e->gen && tls_rd.rd && !tls_rd.rd->busy)
		r = tls_rd.rd;
	if (!r) {
		r = calloc(1, sizeof *r);
		if (!r) {
			eng__gate_leave(e, slot);
			return LP_ERR(LP_E_NOMEM);
		}
		r->e = e;
		pthread_mutex_lock(&e->rd_mu);
		r->next = e->rd_all;
		e->rd_all = r;
		pthread_mutex_unlock(&e->rd_mu);
		if (tls_rd.gen != e->gen || !tls_rd.rd) {
			tls_rd.gen = e->gen;
			tls_rd.rd = r;
			/* arm the exit hook (any non-NULL value) */
			pthread_once(&rd_once, rd_key_init);
			pthread_setspecific(rd_key, (void *)1);
		}
	}
	int mrc;
	for (int tries = 0;; tries++) {
		if (r->txn)
			mrc = mdb_txn_renew(r->txn);
		else
			mrc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &r->txn);
		if (mrc == MDB_MAP_RESIZED && tries < 3) {
			/* Another process grew the map (we are a reader
			   beside a server): adopt its size and retry. */
			if (r->txn) {
				mdb_txn_abort(r->txn);
				r->txn = NULL;
			}
			eng__gate_leave(e, slot);
			lp_err rc = eng__remap(e);
			eng__gate_enter(e, &slot);
			if (rc)
				break;
			continue;
		}
		if (mrc && r->txn) {
			mdb_txn_abort(r->txn);
			r->txn = NULL;
			if (tries < 3)
				continue;
		}
		break;
	}
	if (mrc) {
		lp_err rc = eng__from_mdb(mrc, "read txn");
		if (tls_rd.rd != r)
			rd_unlink_free(e, r);
		eng__gate_leave(e, slot);
		return rc;
	}
	/* Does the snapshot hold a commit whose record is still being
	   flushed? (invariant 5; vis_rev read after the snapshot) */
	r->unsettled = false;
	if (e->wal) {
		r->vis_rev = atomic_load(&e->vis_rev);
		r->durable_rev = atomic_load(&e->rev);
		r->unsettled = r->vis_rev > r->durable_rev;
	}
	r->slot = slot;
	r->busy = true;
	r->rev = -1;
	r->compacted = -1;
	*out = r;
	return LP_OK;
}

void eng_rd_end(eng_rd *r)
{
	if (!r)
		return;
	eng *e = r->e;
	LP_ASSERT(r->busy);
	r->busy = false;
	int slot = r->slot;
	if (tls_rd.gen == e->gen && tls_rd.rd == r) {
		mdb_txn_reset(r->txn);
	} else {
		rd_unlink_free(e, r);
	}
	eng__gate_leave(e, slot);
}

/* Wait until what r's snapshot holds is durable (invariant 5). */
static void settle(eng_rd *r)
{
	if (r->unsettled) {
		atomic_fetch_add(&r->e->durable_waits, 1);
		eng__wait_durable(r->e, r->vis_rev);
		r->unsettled = false;
	}
}

lp_err eng__rd_meta(eng_rd *r)
{
	settle(r);
	if (r->rev >= 0)
		return LP_OK;
	int64_t rev, compacted;
	lp_err rc;
	if ((rc = eng__rev_get(r->txn, r->e, &rev)) ||
	    (rc = eng__meta_get_i64(r->txn, r->e, "compacted", &compacted)))
		return rc == LP_E_NOTFOUND ? LP_ERR(LP_E_CORRUPT) : rc;
	r->rev = rev;
	r->compacted = compacted;
	return LP_OK;
}

int64_t eng_rd_rev(eng_rd *r)
{
	if (eng__rd_meta(r))
		return -1;
	return r->rev;
}

int64_t eng_rd_compacted(eng_rd *r)
{
	if (eng__rd_meta(r))
		return -1;
	return r->compacted;
}

/* The newest hist entry of ik at or below rev, through cursor c. */
static lp_err hist_at(MDB_cursor *c, const uint8_t *ik, size_t ik_len,
		      int64_t rev, struct rec *out)
{
	uint8_t hk[HK_MAX];
	size_t hl = eng__hk(ik, ik_len, rev + 1, hk);
	MDB_val k = {hl, hk}, v;
	int mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	if (mrc == MDB_NOTFOUND)
		mrc = mdb_cursor_get(c, &k, &v, MDB_LAST);
	else if (!mrc)
		mrc = mdb_cursor_get(c, &k, &v, MDB_PREV);
	if (mrc == MDB_NOTFOUND)
		return LP_E_NOTFOUND;
	if (mrc)
		return eng__from_mdb(mrc, "hist seek");
	if (k.mv_size != ik_len + 9 || memcmp(k.mv_data, ik, ik_len) != 0 ||
	    ((const uint8_t *)k.mv_data)[ik_len] != 0)
		return LP_E_NOTFOUND;
	if (!eng__rec_decode(ik, ik_len, &v, out))
		return LP_ERR(LP_E_CORRUPT);
	if (out->h.flags & REC_TOMB)
		return LP_E_NOTFOUND;
	return LP_OK;
}

lp_err eng__rec_at(eng_rd *r, const uint8_t *ik, size_t ik_len, int64_t rev,
		   struct rec *out)
{
	eng *e = r->e;
	MDB_val k = {ik_len, (void *)ik}, v;
	int mrc = mdb_get(r->txn, e->db_state, &k, &v);
	if (!mrc) {
		struct rec s;
		if (!eng__rec_decode(ik, ik_len, &v, &s))
			return LP_ERR(LP_E_CORRUPT);
		if (s.h.mod_rev <= rev) {
			*out = s;
			return LP_OK;
		}
	} else if (mrc != MDB_NOTFOUND) {
		return eng__from_mdb(mrc, "state get");
	}
	MDB_cursor *c;
	mrc = mdb_cursor_open(r->txn, e->db_hist, &c);
	if (mrc)
		return eng__from_mdb(mrc, "cursor");
	lp_err rc = hist_at(c, ik, ik_len, rev, out);
	mdb_cursor_close(c);
	return rc;
}

static lp_err check_at(eng_rd *r, int64_t at_rev)
{
	lp_err rc = eng__rd_meta(r);
	if (rc)
		return rc;
	if (at_rev < 0)
		return LP_ERR(LP_E_INVAL);
	if (at_rev > r->rev)
		return LP_E_FUTURE;
	if (at_rev < r->compacted)
		return LP_E_COMPACTED;
	return LP_OK;
}

lp_err eng_get(eng_rd *r, const void *key, size_t key_len, int64_t at_rev,
	       struct eng_record *out)
{
	lp_err rc = eng__key_ok(key, key_len);
	if (rc)
		return rc;
	uint8_t ik[IK_MAX];
	size_t il = eng__ik(r->e, key, key_len, ik);
	struct rec rec;
	if (at_rev) {
		if ((rc = check_at(r, at_rev)))
			return rc;
		if ((rc = eng__rec_at(r, ik, il, at_rev, &rec)))
			return rc;
	} else {
		MDB_val k = {il, ik}, v;
		int mrc = mdb_get(r->txn, r->e->db_state, &k, &v);
		bool ok = !mrc && eng__rec_decode(ik, il, &v, &rec);
		/* a key that the commit in flight may have created,
		   changed or deleted: wait for it (invariant 5) */
		if (r->unsettled && (!ok || rec.h.mod_rev > r->durable_rev))
			settle(r);
		if (mrc)
			return eng__from_mdb(mrc, "get");
		if (!ok)
			return LP_ERR(LP_E_CORRUPT);
	}
	if (key_len > IK_SHORT_MAX &&
	    (rec.key_len != key_len || memcmp(rec.key, key, key_len) != 0))
		return LP_E_NOTFOUND; /* another long key under this hash */
	if (rec.key == ik) {
		/* A short key: point at the caller's key, not our stack. */
		rec.key = key;
	}
	eng__rec_public(&rec, out);
	return LP_OK;
}

/* ------------------------------------------------------------ range walks */

/* A stream of (ik, record) in ik order, from the state alone (latest) or
   state merged with hist (at an older revision). */
struct iter {
	eng_rd *r;
	int64_t at_rev; /* 0: latest */
	MDB_cursor *cs, *ch, *cl;
	bool parked;	/* the cursors are r->cur[]: kept at the end */
	MDB_val sk, sv; /* state cursor's current entry */
	bool s_ok;
	bool s_step; /* latest: step cs before reading its next entry */
	MDB_val hk;  /* hist cursor's current entry */
	bool h_ok;
	bool prefetch; /* the caller will read the values (iter_next) */
	uintptr_t leaf; /* prefetch: the leaf page last asked for */
};

/* Values are read right after the walk hands them out (a list copies each
   into its page), and the store's pages are mostly not in the CPU's cache.
   Asking for a record's value lines as soon as it is decoded lets them
   arrive while the walk does its bookkeeping. Up to PREFETCH_MAX bytes:
   larger values stream well enough on their own. */
#define PREFETCH_MAX 4096u
static inline void prefetch_value(const struct rec *rec)
{
	size_t n = rec->value_len < PREFETCH_MAX ? rec->value_len
						 : PREFETCH_MAX;
	const char *v = (const char *)rec->value;
	for (size_t o = 0; o < n; o += 64)
		__builtin_prefetch(v + o);
}

/* A latest walk's records live in LMDB leaf pages, each record's node
   (header, key, value) at a lower address than the one before it, so
   every node's first touch inside mdb_cursor_get misses the cache (a
   third of a LIST page's LMDB time, perf). When the walk reaches a new
   leaf, ask for the page's whole node area at once. The page is found from
   the key, which LMDB keeps in the leaf (keys are never on overflow
   pages): the map is page-aligned, and the page header's upper bound
   (offset 14, LMDB's on-disk page format) is where the nodes begin. A
   prefetch is only a hint: the loads are within the key's own page. */
static inline void prefetch_leaf(struct iter *it, const void *key)
{
	unsigned ps = it->r->e->psize;
	if (!ps || (ps & (ps - 1)))
		return;
	uintptr_t base = (uintptr_t)key & ~(uintptr_t)(ps - 1);
	if (base == it->leaf)
		return;
	it->leaf = base;
	uint16_t upper;
	memcpy(&upper, (const char *)base + 14, sizeof upper);
	for (unsigned o = upper & ~63u; o < ps; o += 64)
		__builtin_prefetch((const char *)base + o);
}

/* Cursor i of the walk on dbi: r's kept cursor, renewed for this snapshot,
   when the walk parks (no malloc, no free per range); else a new one. */
static int iter_cursor(struct iter *it, int i, MDB_dbi dbi, MDB_cursor **out)
{
	eng_rd *r = it->r;
	if (!it->parked)
		return mdb_cursor_open(r->txn, dbi, out);
	int mrc = r->cur[i] ? mdb_cursor_renew(r->txn, r->cur[i])
			    : mdb_cursor_open(r->txn, dbi, &r->cur[i]);
	if (mrc)
		return mrc;
	*out = r->cur[i];
	return 0;
}

static lp_err iter_init(struct iter *it, eng_rd *r, int64_t at_rev,
			const uint8_t *lo, size_t lo_len)
{
	memset(it, 0, sizeof *it);
	it->r = r;
	it->at_rev = at_rev;
	it->parked = !r->walking;
	r->walking = true;
	eng *e = r->e;
	int mrc = iter_cursor(it, 0, e->db_state, &it->cs);
	if (mrc)
		return eng__from_mdb(mrc, "cursor");
	MDB_val k = {lo_len, (void *)lo};
	if (lo_len == 0)
		mrc = mdb_cursor_get(it->cs, &it->sk, &it->sv, MDB_FIRST);
	else {
		it->sk = k;
		mrc = mdb_cursor_get(it->cs, &it->sk, &it->sv, MDB_SET_RANGE);
	}
	if (mrc && mrc != MDB_NOTFOUND)
		return eng__from_mdb(mrc, "seek");
	it->s_ok = mrc == 0;
	if (!at_rev)
		return LP_OK;
	if ((mrc = iter_cursor(it, 1, e->db_hist, &it->ch)) ||
	    (mrc = iter_cursor(it, 2, e->db_hist, &it->cl)))
		return eng__from_mdb(mrc, "cursor");
	MDB_val hv;
	if (lo_len == 0)
		mrc = mdb_cursor_get(it->ch, &it->hk, &hv, MDB_FIRST);
	else {
		it->hk = k;
		mrc = mdb_cursor_get(it->ch, &it->hk, &hv, MDB_SET_RANGE);
	}
	if (mrc && mrc != MDB_NOTFOUND)
		return eng__from_mdb(mrc, "seek");
	it->h_ok = mrc == 0;
	return LP_OK;
}

static void iter_done(struct iter *it)
{
	if (it->parked) {
		it->r->walking = false;
		return;
	}
	if (it->cs)
		mdb_cursor_close(it->cs);
	if (it->ch)
		mdb_cursor_close(it->ch);
	if (it->cl)
		mdb_cursor_close(it->cl);
}

/* Latest: the state cursor's next record. The cursor steps only when the
   next record is asked for, so a walk that stops at its limit reads no
   record beyond the one that tells it `more`. */
static inline lp_err iter_next_latest(struct iter *it, struct rec *out)
{
	if (it->s_step) {
		int mrc = mdb_cursor_get(it->cs, &it->sk, &it->sv, MDB_NEXT);
		if (mrc && mrc != MDB_NOTFOUND)
			return eng__from_mdb(mrc, "next");
		it->s_ok = mrc == 0;
	}
	if (!it->s_ok)
		return LP_E_NOTFOUND;
	it->s_step = true;
	if (it->prefetch)
		prefetch_leaf(it, it->sk.mv_data);
	if (!eng__rec_decode(it->sk.mv_data, it->sk.mv_size, &it->sv, out))
		return LP_ERR(LP_E_CORRUPT);
	if (it->prefetch)
		prefetch_value(out);
	return LP_OK;
}

/* At an older revision: the next ik of state or hist with its record as
   of it->at_rev, skipping keys absent then. */
static lp_err iter_next_at(struct iter *it, struct rec *out)
{
	int mrc;
	for (;;) {
		if (!it->s_ok && !it->h_ok)
			return LP_E_NOTFOUND;
		const uint8_t *ik;
		size_t il;
		int c;
		if (!it->h_ok) {
			c = -1;
		} else if (!it->s_ok) {
			c = 1;
		} else {
			c = eng__keycmp(it->sk.mv_data, it->sk.mv_size,
					it->hk.mv_data, it->hk.mv_size - 9);
		}
		if (c <= 0) {
			ik = it->sk.mv_data;
			il = it->sk.mv_size;
		} else {
			ik = it->hk.mv_data;
			il = it->hk.mv_size - 9;
		}
		lp_err rc = LP_E_NOTFOUND;
		bool have_state = c <= 0;
		if (have_state) {
			if (!eng__rec_decode(ik, il, &it->sv, out))
				return LP_ERR(LP_E_CORRUPT);
			if (out->h.mod_rev <= it->at_rev)
				rc = LP_OK;
		}
		if (rc == LP_E_NOTFOUND) {
			rc = hist_at(it->cl, ik, il, it->at_rev, out);
			if (rc && rc != LP_E_NOTFOUND)
				return rc;
		}
		/* Advance past ik on both cursors. Copy ik first: it points
		   into the entry a cursor is about to leave. */
		uint8_t next[IK_MAX + 1];
		memcpy(next, ik, il);
		next[il] = 1; /* ik \x01 sorts after every ik \0 rev */
		if (have_state) {
			mrc = mdb_cursor_get(it->cs, &it->sk, &it->sv, MDB_NEXT);
			if (mrc && mrc != MDB_NOTFOUND)
				return eng__from_mdb(mrc, "next");
			it->s_ok = mrc == 0;
		}
		if (it->h_ok && it->hk.mv_size - 9 == il &&
		    memcmp(it->hk.mv_data, next, il) == 0) {
			MDB_val hv;
			it->hk.mv_data = next;
			it->hk.mv_size = il + 1;
			mrc = mdb_cursor_get(it->ch, &it->hk, &hv,
					     MDB_SET_RANGE);
			if (mrc && mrc != MDB_NOTFOUND)
				return eng__from_mdb(mrc, "seek");
			it->h_ok = mrc == 0;
		}
		if (rc == LP_OK)
			return LP_OK;
	}
}

/* Next record: LP_OK with *out, LP_E_NOTFOUND at the end, or an error. */
static inline lp_err iter_next(struct iter *it, struct rec *out)
{
	return it->at_rev ? iter_next_at(it, out) : iter_next_latest(it, out);
}

/* The delivery end of a walk: bounds, limit, callback, counting. */
struct walk {
	const uint8_t *lo;
	size_t lo_len;	   /* 0 once a record at or above lo was seen */
	const uint8_t *hi; /* NULL: no upper bound */
	size_t hi_len;
	eng_range_fn fn;
	void *ud;
	uint64_t limit; /* 0: none */
	bool count;
	bool have_total; /* total is the range's key count (count.c) */
	uint64_t total;
	uint64_t n_seen; /* records within the bounds so far */
	bool cut;	 /* stopped before the range's end, not counting */
	enum { W_DELIVER, W_COUNT, W_DONE } phase;
	struct eng_range_res res;
};

/* The walk stops delivering (limit or ENG_STOP) at the n_seen-th record,
   which is left for later. Counting what remains needs a walk over the
   rest of the range, unless the range's total is known. Returns true when
   the walk is over. */
static bool stop_delivering(struct walk *w)
{
	w->res.more = 1;
	w->res.n_remaining = 1;
	if (!w->count) {
		w->phase = W_DONE;
		w->cut = true;
	} else if (w->have_total && w->total >= w->n_seen) {
		w->res.n_remaining = w->total + 1 - w->n_seen;
		w->phase = W_DONE;
		w->cut = true;
	} else {
		w->phase = W_COUNT;
	}
	return w->phase == W_DONE;
}

/* Returns true when the walk is over. Records arrive in key order (long-key
   groups sorted first), so one at or above lo puts every later one there. */
static inline bool emit(struct walk *w, const struct rec *rec)
{
	if (w->lo_len) {
		if (eng__keycmp(rec->key, rec->key_len, w->lo, w->lo_len) < 0)
			return false;
		w->lo_len = 0;
	}
	if (w->hi &&
	    eng__keycmp(rec->key, rec->key_len, w->hi, w->hi_len) >= 0) {
		w->phase = W_DONE;
		return true;
	}
	w->n_seen++;
	if (w->phase == W_COUNT) {
		w->res.n_remaining++;
		return false;
	}
	if (w->res.n_taken == w->limit && w->limit)
		return stop_delivering(w);
	struct eng_record pub;
	eng__rec_public(rec, &pub);
	w->res.n_visited++;
	switch (w->fn(w->ud, &pub)) {
	case ENG_TAKE:
		w->res.n_taken++;
		return false;
	case ENG_SKIP:
		return false;
	case ENG_STOP:
		return stop_delivering(w);
	}
	return false;
}

static int cmp_rec_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return eng__keycmp(x->key, x->key_len, y->key, y->key_len);
}

/* A long-key group being collected: r's scratch, or a walk's own when a
   callback ranges on the eng_rd whose scratch the outer walk holds. */
struct group {
	struct rec *v;
	size_t n, cap;
};

static bool flush_group(struct group *g, struct walk *w)
{
	size_t n = g->n;
	g->n = 0;
	if (n > 1)
		qsort(g->v, n, sizeof *g->v, cmp_rec_key);
	for (size_t i = 0; i < n; i++)
		if (emit(w, &g->v[i]))
			return true;
	return false;
}

static lp_err group_add(struct group *g, const struct rec *rec)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct rec *v = realloc(g->v, cap * sizeof *v);
		if (!v)
			return LP_ERR(LP_E_NOMEM);
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = *rec;
	return LP_OK;
}

/* Does ik start a long-key group, and do two long iks share their prefix? */
static bool is_long(const struct rec *rec)
{
	return (rec->h.flags & REC_LONGKEY) != 0;
}

/* Walk it through w: short keys go straight to the callback; long keys
   sharing their first IK_SHORT_MAX bytes are sorted by full key first. */
static lp_err walk_records(struct iter *it, struct group *g, struct walk *w)
{
	lp_err rc;
	struct rec rec;
	for (;;) {
		it->prefetch = w->phase == W_DELIVER;
		if ((rc = iter_next(it, &rec)) != LP_OK)
			break;
		if (!is_long(&rec)) {
			if (g->n && flush_group(g, w))
				return LP_OK;
			if (emit(w, &rec))
				return LP_OK;
			continue;
		}
		if (g->n && memcmp(g->v[0].key, rec.key, IK_SHORT_MAX) != 0 &&
		    flush_group(g, w))
			return LP_OK;
		if ((rc = group_add(g, &rec)))
			return rc;
	}
	if (rc != LP_E_NOTFOUND)
		return rc;
	if (g->n)
		flush_group(g, w);
	return LP_OK;
}

lp_err eng__range_all(eng_rd *r, const struct eng_range_req *req,
		      eng_range_fn fn, void *ud, struct eng_range_res *res)
{
	/* Bounds: lo = max(prefix, from); hi = min(end, prefix's end). */
	const uint8_t *lo = req->prefix;
	size_t lo_len = req->prefix ? req->prefix_len : 0;
	/* Is the range the whole prefix? Then its key count can be looked
	   up and recorded (count.c). */
	bool whole = true;
	if (req->from && (!lo || eng__keycmp(req->from, req->from_len, lo,
					     lo_len) > 0)) {
		lo = req->from;
		lo_len = req->from_len;
		whole = false;
	}
	uint8_t pend[ENG_KEY_MAX];
	const uint8_t *hi = NULL;
	size_t hi_len = 0;
	if (req->prefix && req->prefix_len) {
		if (req->prefix_len > ENG_KEY_MAX)
			return LP_ERR(LP_E_KEYTOOLONG);
		size_t n = req->prefix_len;
		memcpy(pend, req->prefix, n);
		while (n > 0 && pend[n - 1] == 0xff)
			n--;
		if (n > 0) {
			pend[n - 1]++;
			hi = pend;
			hi_len = n;
		}
	}
	if (req->end && (!hi || eng__keycmp(req->end, req->end_len, hi,
					    hi_len) < 0)) {
		hi = req->end;
		hi_len = req->end_len;
		whole = false;
	}
	struct walk w = {.lo = lo, .lo_len = lo_len, .hi = hi, .hi_len = hi_len,
			 .fn = fn, .ud = ud, .limit = req->limit,
			 .count = (req->flags & ENG_RANGE_COUNT) != 0};
	int64_t at_rev = req->at_rev;
	lp_err rc = eng__rd_meta(r);
	if (rc)
		return rc;
	if (at_rev) {
		if ((rc = check_at(r, at_rev)))
			return rc;
		if (at_rev == r->rev)
			at_rev = 0; /* the snapshot is that revision */
	}
	w.res.rev = req->at_rev ? req->at_rev : r->rev;
	if (hi && lo && eng__keycmp(lo, lo_len, hi, hi_len) >= 0) {
		*res = w.res;
		return LP_OK;
	}
	/* Counts are kept for the latest revision only (count.c). */
	bool countable = w.count && whole && !at_rev;
	const uint8_t *cp = req->prefix ? req->prefix : (const uint8_t *)"";
	size_t cl = req->prefix ? req->prefix_len : 0;
	if (countable)
		w.have_total = eng__count_get(r->e, cp, cl, r->rev, &w.total);
	/* Seek to the bound's first IK_SHORT_MAX bytes: every key >= lo has an
	   ik >= that (eng_int.h). */
	struct iter it;
	rc = iter_init(&it, r, at_rev, lo,
		       lo_len > IK_SHORT_MAX ? IK_SHORT_MAX : lo_len);
	struct group g = {0};
	if (it.parked)
		g = (struct group){.v = r->grp, .cap = r->grp_cap};
	if (!rc)
		rc = walk_records(&it, &g, &w);
	/* A counted walk that was not cut short saw every key of the range
	   (it ran to the range's end). */
	if (!rc && countable && !w.cut && (!w.have_total || w.total != w.n_seen))
		eng__count_put(r->e, cp, cl, r->rev, w.n_seen);
	if (it.parked) {
		r->grp = g.v;
		r->grp_cap = g.cap;
	} else {
		free(g.v);
	}
	iter_done(&it);
	if (!rc)
		*res = w.res;
	return rc;
}

lp_err eng_range(eng_rd *r, const struct eng_range_req *req, eng_range_fn fn,
		 void *ud, struct eng_range_res *res)
{
	if (!r || !req || !fn)
		return LP_ERR(LP_E_INVAL);
	if ((req->prefix_len && !req->prefix) || (req->from_len && !req->from) ||
	    (req->end_len && !req->end) || req->at_rev < 0)
		return LP_ERR(LP_E_INVAL);
	return eng__range_all(r, req, fn, ud, res);
}
