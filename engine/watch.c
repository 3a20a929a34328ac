/*
 * watch.c -- the watch hub: a bounded ring of recent changes shared by every
 * watcher, replay from the change log for watchers that start older, and the
 * readiness callbacks that let a server keep idle watches suspended.
 *
 * Threads: the writer publishes (eng__publish) and runs readiness callbacks;
 * any thread opens, reads (one consumer per watcher) and closes watchers.
 *
 * A change's position is (rev, idx). The ring holds changes by sequence
 * number in [head, tail); `floor` is the position of the newest change ever
 * evicted (or the store's revision at open), so every change after floor is
 * in the ring or about to be published into it.
 *
 *   eng_watch_open --from_rev >= floor.rev--> RING
 *          |                                   ^  \
 *          +--older--> REPLAY --caught up------+   +--evicted unread--> OVER
 *                       (eng_watch_next loads the log in chunks)
 *
 * Invariants:
 *  1. A watcher's pos only grows; every change after from_rev with its
 *     prefix is delivered exactly once, in position order. A commit is
 *     visible to readers before its events are published, so the ring may
 *     still receive changes at or below a new watcher's position: they are
 *     skipped.
 *  2. hub->mu guards the ring, the watcher list and each watcher's armed,
 *     seq and wake fields. A readiness callback runs outside hub->mu with
 *     the watcher's inflight count raised; eng_watch_close waits for it to
 *     drop, so no callback runs after close returns.
 *  3. The hub outlives the engine while watchers hold it (refs); after
 *     eng_close a watcher only sees LP_E_CLOSED. `active` counts
 *     eng_watch_next calls that may touch the engine; eng_close waits for
 *     them to finish after setting `closed`.
 *  4. At most e->max_replays watchers load from the log at once.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "eng_int.h"
#include "lapis/assert.h"

#define DEFAULT_RING 8192
/* The ring's memory bound: 8192 events of 1 KiB objects fit many times
   over, while 50 KiB objects written faster than a stalled watcher reads
   would otherwise pin 8192 of them and their frames (hundreds of MiB). A
   watcher left behind overflows and re-watches from the log, as kube's
   cacher closes a watcher that cannot keep up. */
#define DEFAULT_RING_BYTES (64u << 20)
#define REPLAY_SCAN 512	 /* log entries per replay chunk */
#define REPLAY_EVENTS 64 /* events per replay chunk */
#define WATCH_MAGIC 0x4c505754u

struct hub {
	pthread_mutex_t mu;
	eng_event **ring;
	uint64_t cap;
	uint64_t head, tail;	/* sequence numbers held: [head, tail) */
	uint64_t bytes, bytes_cap; /* what the events held cost (ev_cost) */
	int64_t floor_rev;	/* every change after (floor_rev, floor_idx) */
	uint32_t floor_idx;	/*   is in the ring or about to be */
	struct eng_watch *watchers;
	uint64_t n_watchers;
	_Atomic int closed;
	_Atomic long active;
	long refs;		/* the engine + each watcher; under mu */
	int64_t published;	/* the newest revision published */
	struct quiet *quiet;	/* tracked prefixes (eng_watch_track) */
	size_t n_quiet;
};

/* A tracked prefix: every change under it after since is seen, and last
   is the newest one's revision (0: none since). Under hub.mu. The array
   is sorted by bytes, and no tracked prefix starts with another: so the
   only one a key can start with is the greatest one not above it. */
struct quiet {
	uint8_t *p;
	size_t len;
	int64_t since, last;
};
#define QUIET_MAX 4096

static int bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* Number of tracked prefixes not above key (the last one of them is the
   only one key may start with). Under mu. */
static size_t quiet_upper(const struct hub *h, const uint8_t *key, size_t len)
{
	size_t lo = 0, hi = h->n_quiet;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bytes_cmp(h->quiet[mid].p, h->quiet[mid].len, key, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The tracked prefix key starts with, or NULL. Under mu. */
static struct quiet *quiet_of(struct hub *h, const uint8_t *key, size_t len)
{
	size_t i = quiet_upper(h, key, len);
	if (!i)
		return NULL;
	struct quiet *q = &h->quiet[i - 1];
	return q->len <= len && !memcmp(key, q->p, q->len) ? q : NULL;
}

enum wmode { W_REPLAY, W_RING, W_OVER };

struct eng_watch {
	uint32_t magic;
	eng *e;
	struct hub *hub;
	uint8_t *prefix;
	size_t plen;
	int64_t pos_rev;	/* last position consumed */
	uint32_t pos_idx;
	int64_t last_rev;	/* last event returned */
	enum wmode mode;
	uint64_t seq;		/* W_RING: next sequence number; under mu */
	eng_event **rbuf;	/* W_REPLAY: loaded events */
	size_t rn, rpos;
	eng_ready_fn ready;
	void *ud;
	bool caught_up;		/* the last next said LP_E_AGAIN */
	bool armed;		/* under mu */
	bool closed;		/* under mu */
	_Atomic int inflight;	/* callbacks running */
	struct eng_watch *next, *prev, *wake_next;
};

static int pos_cmp(int64_t ar, uint32_t ai, int64_t br, uint32_t bi)
{
	if (ar != br)
		return ar < br ? -1 : 1;
	if (ai != bi)
		return ai < bi ? -1 : 1;
	return 0;
}

/* ------------------------------------------------------------ events */

static eng_event *ev_alloc(size_t extra)
{
	eng_event *ev = calloc(1, sizeof *ev + extra);
	if (!ev)
		return NULL;
	atomic_store(&ev->refs_, 1);
	return ev;
}

static void fill(struct eng_record *dst, const uint8_t *key, size_t key_len,
		 const uint8_t *val, size_t val_len, const struct rec_hdr *h)
{
	dst->key = key;
	dst->key_len = key_len;
	dst->value = val;
	dst->value_len = val_len;
	dst->create_rev = h->create_rev;
	dst->mod_rev = h->mod_rev;
	dst->version = h->version;
}

eng_event *eng__event_new(enum eng_ev_type type, int64_t rev, uint32_t idx,
			  const struct rec *cur, const struct rec *prev)
{
	size_t pl = prev ? prev->value_len : 0;
	eng_event *ev = ev_alloc(cur->key_len + cur->value_len + pl + 1);
	if (!ev)
		return NULL;
	uint8_t *p = (uint8_t *)(ev + 1);
	uint8_t *key = p;
	memcpy(key, cur->key, cur->key_len);
	p += cur->key_len;
	memcpy(p, cur->value, cur->value_len);
	ev->type = type;
	ev->rev = rev;
	ev->idx_ = idx;
	fill(&ev->rec, key, cur->key_len, p, cur->value_len, &cur->h);
	p += cur->value_len;
	if (prev) {
		memcpy(p, prev->value, pl);
		fill(&ev->prev, key, cur->key_len, p, pl, &prev->h);
	}
	return ev;
}

eng_event *eng__event_del(int64_t rev, uint32_t idx, const struct rec *prev)
{
	char dig[24];
	bool slot = prev->h.slot_off != ENG_NO_SLOT;
	size_t nd = slot ? eng__digits(rev, dig) : 0;
	size_t vl = prev->value_len - (slot ? prev->h.slot_len : 0) + nd;
	eng_event *ev = ev_alloc(prev->key_len + vl + prev->value_len + 1);
	if (!ev)
		return NULL;
	uint8_t *p = (uint8_t *)(ev + 1);
	uint8_t *key = p;
	memcpy(key, prev->key, prev->key_len);
	p += prev->key_len;
	uint8_t *v = p;
	if (slot) {
		uint32_t so = prev->h.slot_off;
		memcpy(v, prev->value, so);
		memcpy(v + so, dig, nd);
		memcpy(v + so + nd, prev->value + so + prev->h.slot_len,
		       prev->value_len - so - prev->h.slot_len);
	} else {
		memcpy(v, prev->value, prev->value_len);
	}
	p += vl;
	memcpy(p, prev->value, prev->value_len);
	ev->type = ENG_EV_DEL;
	ev->rev = rev;
	ev->idx_ = idx;
	struct rec_hdr h = prev->h;
	h.mod_rev = rev;
	fill(&ev->rec, key, prev->key_len, v, vl, &h);
	fill(&ev->prev, key, prev->key_len, p, prev->value_len, &prev->h);
	return ev;
}

void eng_event_ref(eng_event *ev)
{
	long n = atomic_fetch_add(&ev->refs_, 1);
	LP_ASSERT(n > 0);
}

void eng_event_unref(eng_event *ev)
{
	if (!ev)
		return;
	long n = atomic_fetch_sub(&ev->refs_, 1);
	LP_ASSERT(n > 0);
	if (n > 1)
		return;
	void *c = atomic_load(&ev->cache_);
	if (c && ev->cache_free_)
		ev->cache_free_(c);
	free(ev);
}

int eng_event_cache_set(eng_event *ev, void *p, void (*fn)(void *))
{
	void *expect = NULL;
	if (!atomic_compare_exchange_strong(&ev->cache_, &expect, p))
		return 0;
	ev->cache_free_ = fn;
	return 1;
}

void *eng_event_cache_get(eng_event *ev)
{
	return atomic_load(&ev->cache_);
}

/* ------------------------------------------------------------ hub */

lp_err eng__hub_new(eng *e)
{
	struct hub *h = calloc(1, sizeof *h);
	if (!h)
		return LP_ERR(LP_E_NOMEM);
	h->cap = e->ring_events ? e->ring_events : DEFAULT_RING;
	h->bytes_cap = e->ring_bytes ? e->ring_bytes : DEFAULT_RING_BYTES;
	h->ring = calloc(h->cap, sizeof *h->ring);
	if (!h->ring) {
		free(h);
		return LP_ERR(LP_E_NOMEM);
	}
	pthread_mutex_init(&h->mu, NULL);
	h->floor_rev = atomic_load(&e->rev);
	h->floor_idx = UINT32_MAX;
	h->published = h->floor_rev;
	h->refs = 1;
	e->hub = h;
	return LP_OK;
}

static void hub_unref(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	long n = --h->refs;
	pthread_mutex_unlock(&h->mu);
	if (n)
		return;
	for (uint64_t s = h->head; s < h->tail; s++)
		eng_event_unref(h->ring[s % h->cap]);
	for (size_t i = 0; i < h->n_quiet; i++)
		free(h->quiet[i].p);
	free(h->quiet);
	free(h->ring);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static bool matches(const struct eng_watch *w, const eng_event *ev)
{
	return w->plen == 0 ||
	       (ev->rec.key_len >= w->plen &&
		memcmp(ev->rec.key, w->prefix, w->plen) == 0);
}

/* Call the readiness callbacks of the watchers on the wake list. */
static void wake_list(struct eng_watch *list)
{
	while (list) {
		struct eng_watch *w = list;
		list = w->wake_next;
		w->ready(w->ud);
		atomic_fetch_sub(&w->inflight, 1);
	}
}

/* What an event held by the ring costs (eng_opts.ring_bytes): its key,
   its value twice (the server frames it once for its watchers) and its
   previous value. */
static uint64_t ev_cost(const eng_event *ev)
{
	return sizeof *ev + ev->rec.key_len + 2 * (uint64_t)ev->rec.value_len +
	       ev->prev.value_len;
}

void eng__publish(eng *e, eng_event **evs, size_t n)
{
	struct hub *h = e->hub;
	struct eng_watch *wake = NULL;
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < n; i++) {
		uint64_t cost = ev_cost(evs[i]);
		while (h->tail - h->head == h->cap ||
		       (h->tail > h->head && h->bytes + cost > h->bytes_cap)) {
			eng_event *old = h->ring[h->head % h->cap];
			h->floor_rev = old->rev;
			h->floor_idx = old->idx_;
			h->bytes -= ev_cost(old);
			eng_event_unref(old);
			h->head++;
		}
		h->bytes += cost;
		eng_event_ref(evs[i]);
		h->ring[h->tail % h->cap] = evs[i];
		h->tail++;
		if (evs[i]->rev > h->published)
			h->published = evs[i]->rev;
		struct quiet *q = h->n_quiet ? quiet_of(h, evs[i]->rec.key,
						       evs[i]->rec.key_len)
					     : NULL;
		if (q)
			q->last = evs[i]->rev;
	}
	for (struct eng_watch *w = h->watchers; w; w = w->next) {
		if (!w->armed)
			continue;
		bool hit = w->seq < h->head;
		for (size_t i = 0; !hit && i < n; i++)
			hit = matches(w, evs[i]);
		if (!hit)
			continue;
		w->armed = false;
		atomic_fetch_add(&w->inflight, 1);
		w->wake_next = wake;
		wake = w;
	}
	pthread_mutex_unlock(&h->mu);
	wake_list(wake);
}

void eng__hub_close(eng *e)
{
	struct hub *h = e->hub;
	if (!h)
		return;
	struct eng_watch *wake = NULL;
	pthread_mutex_lock(&h->mu);
	atomic_store(&h->closed, 1);
	for (struct eng_watch *w = h->watchers; w; w = w->next) {
		if (!w->armed)
			continue;
		w->armed = false;
		atomic_fetch_add(&w->inflight, 1);
		w->wake_next = wake;
		wake = w;
	}
	pthread_mutex_unlock(&h->mu);
	wake_list(wake);
	while (atomic_load(&h->active) != 0)
		sched_yield();
}

void eng__hub_free(eng *e)
{
	if (!e->hub)
		return;
	hub_unref(e->hub);
	e->hub = NULL;
}

uint64_t eng__n_watchers(eng *e)
{
	struct hub *h = e->hub;
	if (!h)
		return 0;
	pthread_mutex_lock(&h->mu);
	uint64_t n = h->n_watchers;
	pthread_mutex_unlock(&h->mu);
	return n;
}

/* First sequence number in the ring after position (rev, idx). Under mu. */
static uint64_t ring_after(struct hub *h, int64_t rev, uint32_t idx)
{
	uint64_t lo = h->head, hi = h->tail;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		eng_event *ev = h->ring[mid % h->cap];
		if (pos_cmp(ev->rev, ev->idx_, rev, idx) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ------------------------------------------------------------ watchers */

lp_err eng_watch_open(eng *e, const void *prefix, size_t plen, int64_t from_rev,
		      eng_ready_fn ready, void *ud, eng_watch **out)
{
	if (!e || !out || !ready || from_rev < 0 || (plen && !prefix))
		return LP_ERR(LP_E_INVAL);
	struct hub *h = e->hub;
	if (atomic_load(&h->closed))
		return LP_E_CLOSED;
	int64_t compacted = atomic_load(&e->compacted);
	if (from_rev < compacted) {
		/* nothing under a tracked prefix around ours changed after
		   from_rev: start from the newest revision, losing nothing */
		int64_t start = -1;
		pthread_mutex_lock(&h->mu);
		const struct quiet *q = plen ? quiet_of(h, prefix, plen) : NULL;
		if (q && q->since <= from_rev && q->last <= from_rev)
			start = h->published > compacted ? h->published
							 : compacted;
		pthread_mutex_unlock(&h->mu);
		if (start < 0)
			return LP_E_COMPACTED;
		from_rev = start;
	}
	eng_watch *w = calloc(1, sizeof *w);
	if (!w)
		return LP_ERR(LP_E_NOMEM);
	if (plen) {
		w->prefix = malloc(plen);
		if (!w->prefix) {
			free(w);
			return LP_ERR(LP_E_NOMEM);
		}
		memcpy(w->prefix, prefix, plen);
	}
	w->magic = WATCH_MAGIC;
	w->e = e;
	w->hub = h;
	w->plen = plen;
	w->pos_rev = from_rev;
	w->pos_idx = UINT32_MAX;
	w->last_rev = from_rev;
	w->ready = ready;
	w->ud = ud;
	pthread_mutex_lock(&h->mu);
	if (pos_cmp(from_rev, UINT32_MAX, h->floor_rev, h->floor_idx) >= 0) {
		w->mode = W_RING;
		w->seq = ring_after(h, from_rev, UINT32_MAX);
	} else {
		w->mode = W_REPLAY;
	}
	w->next = h->watchers;
	if (h->watchers)
		h->watchers->prev = w;
	h->watchers = w;
	h->n_watchers++;
	h->refs++;
	pthread_mutex_unlock(&h->mu);
	*out = w;
	return LP_OK;
}

void eng_watch_track(eng *e, const void *prefix, size_t plen)
{
	if (!e || !e->hub || !plen || !prefix)
		return;
	struct hub *h = e->hub;
	const uint8_t *pre = prefix;
	pthread_mutex_lock(&h->mu);
	size_t at = quiet_upper(h, pre, plen);
	/* already tracked, or nested with a tracked one (it would start
	   with the one before or be the start of the one after): ignored */
	if (at && h->quiet[at - 1].len <= plen &&
	    !memcmp(pre, h->quiet[at - 1].p, h->quiet[at - 1].len))
		goto out;
	if (at < h->n_quiet && plen <= h->quiet[at].len &&
	    !memcmp(h->quiet[at].p, pre, plen))
		goto out;
	if (h->n_quiet >= QUIET_MAX)
		goto out;
	struct quiet *nq = realloc(h->quiet, (h->n_quiet + 1) * sizeof *nq);
	if (!nq)
		goto out;
	h->quiet = nq;
	uint8_t *p = malloc(plen);
	if (!p)
		goto out;
	memcpy(p, pre, plen);
	memmove(&h->quiet[at + 1], &h->quiet[at],
		(h->n_quiet - at) * sizeof *h->quiet);
	h->quiet[at] =
	    (struct quiet){.p = p, .len = plen, .since = h->published, .last = 0};
	h->n_quiet++;
out:
	pthread_mutex_unlock(&h->mu);
}

static void replay_enter(eng *e)
{
	pthread_mutex_lock(&e->replay_mu);
	while (e->replays >= e->max_replays)
		pthread_cond_wait(&e->replay_cv, &e->replay_mu);
	e->replays++;
	pthread_mutex_unlock(&e->replay_mu);
}

static void replay_leave(eng *e)
{
	pthread_mutex_lock(&e->replay_mu);
	e->replays--;
	pthread_cond_signal(&e->replay_cv);
	pthread_mutex_unlock(&e->replay_mu);
}

/* Exact hist record of ik at rev. */
static lp_err hist_exact(eng *e, MDB_txn *txn, const uint8_t *ik, size_t il,
			 int64_t rev, struct rec *out)
{
	uint8_t hk[HK_MAX];
	MDB_val k = {eng__hk(ik, il, rev, hk), hk}, v;
	int mrc = mdb_get(txn, e->db_hist, &k, &v);
	if (mrc)
		return mrc == MDB_NOTFOUND ? LP_ERR(LP_E_CORRUPT)
					   : eng__from_mdb(mrc, "hist get");
	if (!eng__rec_decode(ik, il, &v, out))
		return LP_ERR(LP_E_CORRUPT);
	return LP_OK;
}

/* Build the event of one log entry, read in txn. */
static lp_err log_event(eng *e, MDB_txn *txn, int64_t rev, uint32_t idx,
			const struct log_hdr *lh, const uint8_t *key,
			eng_event **out)
{
	uint8_t ik[IK_MAX];
	size_t il = eng__ik(e, key, lh->key_len, ik);
	struct rec cur, prev;
	lp_err rc;
	bool has_prev = lh->prev_mod != 0;
	if (has_prev && (rc = hist_exact(e, txn, ik, il, lh->prev_mod, &prev)))
		return rc;
	if (lh->type == ENG_EV_DEL) {
		if (!has_prev)
			return LP_ERR(LP_E_CORRUPT);
		*out = eng__event_del(rev, idx, &prev);
		return *out ? LP_OK : LP_ERR(LP_E_NOMEM);
	}
	MDB_val k = {il, ik}, v;
	int mrc = mdb_get(txn, e->db_state, &k, &v);
	bool in_state = false;
	if (!mrc) {
		if (!eng__rec_decode(ik, il, &v, &cur))
			return LP_ERR(LP_E_CORRUPT);
		in_state = cur.h.mod_rev == rev;
	} else if (mrc != MDB_NOTFOUND) {
		return eng__from_mdb(mrc, "state get");
	}
	if (!in_state && (rc = hist_exact(e, txn, ik, il, rev, &cur)))
		return rc;
	*out = eng__event_new(ENG_EV_PUT, rev, idx, &cur,
			      has_prev ? &prev : NULL);
	return *out ? LP_OK : LP_ERR(LP_E_NOMEM);
}

/* Load the next chunk of the log after w's position into w->rbuf. */
static lp_err load_chunk(eng_watch *w)
{
	eng *e = w->e;
	if (!w->rbuf) {
		w->rbuf = calloc(REPLAY_EVENTS, sizeof *w->rbuf);
		if (!w->rbuf)
			return LP_ERR(LP_E_NOMEM);
	}
	w->rn = w->rpos = 0;
	replay_enter(e);
	eng_rd *r;
	lp_err rc = eng_rd_begin(e, &r);
	if (rc) {
		replay_leave(e);
		return rc;
	}
	if ((rc = eng__rd_meta(r)))
		goto out;
	if (w->pos_rev < r->compacted) {
		rc = LP_E_COMPACTED;
		goto out;
	}
	MDB_cursor *c;
	int mrc = mdb_cursor_open(r->txn, e->db_log, &c);
	if (mrc) {
		rc = eng__from_mdb(mrc, "cursor");
		goto out;
	}
	uint8_t lk[LOGK_LEN];
	if (w->pos_idx == UINT32_MAX)
		eng__logk(lk, w->pos_rev + 1, 0);
	else
		eng__logk(lk, w->pos_rev, w->pos_idx + 1);
	MDB_val k = {LOGK_LEN, lk}, v;
	mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	int scanned = 0;
	bool progressed = false;
	while (!mrc && scanned < REPLAY_SCAN && w->rn < REPLAY_EVENTS) {
		if (k.mv_size != LOGK_LEN || v.mv_size < sizeof(struct log_hdr)) {
			rc = LP_ERR(LP_E_CORRUPT);
			break;
		}
		const uint8_t *kp = k.mv_data;
		int64_t rev = (int64_t)eng__get_be64(kp);
		uint32_t idx = ((uint32_t)kp[8] << 24) | ((uint32_t)kp[9] << 16) |
			       ((uint32_t)kp[10] << 8) | kp[11];
		struct log_hdr lh;
		memcpy(&lh, v.mv_data, sizeof lh);
		const uint8_t *key = (const uint8_t *)v.mv_data + sizeof lh;
		if (lh.key_len > v.mv_size - sizeof lh || lh.key_len == 0 ||
		    lh.key_len > ENG_KEY_MAX) {
			rc = LP_ERR(LP_E_CORRUPT);
			break;
		}
		bool hit = w->plen == 0 ||
			   (lh.key_len >= w->plen &&
			    memcmp(key, w->prefix, w->plen) == 0);
		if (hit) {
			eng_event *ev = NULL;
			if ((rc = log_event(e, r->txn, rev, idx, &lh, key, &ev)))
				break;
			w->rbuf[w->rn++] = ev;
		}
		w->pos_rev = rev;
		w->pos_idx = idx;
		progressed = true;
		scanned++;
		mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = eng__from_mdb(mrc, "log next");
	if (!rc && !progressed) {
		/* Nothing after pos in this snapshot: either the ring covers
		   us by now, or writes in between are not yet published.
		   Move the position to the snapshot's revision so the switch
		   to the ring can happen. */
		if (pos_cmp(w->pos_rev, w->pos_idx, r->rev, UINT32_MAX) < 0) {
			w->pos_rev = r->rev;
			w->pos_idx = UINT32_MAX;
		}
	}
out:
	eng_rd_end(r);
	replay_leave(e);
	return rc;
}

static lp_err deliver(eng_watch *w, eng_event *ev, eng_event **out)
{
	w->caught_up = false;
	w->last_rev = ev->rev;
	*out = ev;
	return LP_OK;
}

static lp_err next_locked_out(eng_watch *w, eng_event **out)
{
	struct hub *h = w->hub;
	for (;;) {
		if (atomic_load(&h->closed))
			return LP_E_CLOSED;
		if (w->mode == W_OVER)
			return LP_E_OVERFLOW;
		if (w->mode == W_REPLAY) {
			if (w->rpos < w->rn) {
				eng_event *ev = w->rbuf[w->rpos];
				w->rbuf[w->rpos++] = NULL;
				return deliver(w, ev, out);
			}
			pthread_mutex_lock(&h->mu);
			if (pos_cmp(w->pos_rev, w->pos_idx, h->floor_rev,
				    h->floor_idx) >= 0) {
				w->mode = W_RING;
				w->seq = ring_after(h, w->pos_rev, w->pos_idx);
			}
			pthread_mutex_unlock(&h->mu);
			if (w->mode == W_RING)
				continue;
			int64_t before_rev = w->pos_rev;
			uint32_t before_idx = w->pos_idx;
			lp_err rc = load_chunk(w);
			if (rc)
				return rc;
			if (w->rn == 0 && before_rev == w->pos_rev &&
			    before_idx == w->pos_idx) {
				/* No progress and not covered by the ring: the
				   changes in between were compacted away. */
				return LP_E_COMPACTED;
			}
			continue;
		}
		pthread_mutex_lock(&h->mu);
		if (w->seq < h->head) {
			w->mode = W_OVER;
			pthread_mutex_unlock(&h->mu);
			return LP_E_OVERFLOW;
		}
		while (w->seq < h->tail) {
			eng_event *ev = h->ring[w->seq % h->cap];
			w->seq++;
			/* A change committed before the watcher opened but
			   published after: already behind its position. */
			if (pos_cmp(ev->rev, ev->idx_, w->pos_rev, w->pos_idx) <= 0)
				continue;
			w->pos_rev = ev->rev;
			w->pos_idx = ev->idx_;
			if (matches(w, ev)) {
				eng_event_ref(ev);
				pthread_mutex_unlock(&h->mu);
				return deliver(w, ev, out);
			}
		}
		w->armed = true;
		w->caught_up = true;
		pthread_mutex_unlock(&h->mu);
		return LP_E_AGAIN;
	}
}

lp_err eng_watch_next(eng_watch *w, eng_event **ev)
{
	if (!w || !ev)
		return LP_ERR(LP_E_INVAL);
	LP_ASSERT(w->magic == WATCH_MAGIC);
	struct hub *h = w->hub;
	atomic_fetch_add(&h->active, 1);
	lp_err rc = next_locked_out(w, ev);
	atomic_fetch_sub(&h->active, 1);
	return rc;
}

int64_t eng_watch_rev(eng_watch *w)
{
	return w->last_rev;
}

int64_t eng_watch_progress(eng_watch *w)
{
	/* Publishes are whole transactions, so a caught-up watcher has seen
	   every change of its position's revision. */
	if (w->caught_up || w->pos_idx == UINT32_MAX)
		return w->pos_rev;
	return w->pos_rev - 1;
}

void eng_watch_close(eng_watch *w)
{
	if (!w)
		return;
	LP_ASSERT(w->magic == WATCH_MAGIC);
	struct hub *h = w->hub;
	pthread_mutex_lock(&h->mu);
	w->closed = true;
	w->armed = false;
	if (w->prev)
		w->prev->next = w->next;
	else
		h->watchers = w->next;
	if (w->next)
		w->next->prev = w->prev;
	h->n_watchers--;
	pthread_mutex_unlock(&h->mu);
	while (atomic_load(&w->inflight) != 0)
		sched_yield();
	for (size_t i = w->rpos; i < w->rn; i++)
		eng_event_unref(w->rbuf[i]);
	free(w->rbuf);
	free(w->prefix);
	w->magic = 0;
	free(w);
	hub_unref(h);
}
