/*
 * eng_int.h -- what the engine's files share and nothing outside engine/
 * includes (STYLE.md §1).
 *
 * Databases in the one LMDB environment:
 *   state  ik -> record                 the current state (latest reads touch
 *                                        only this)
 *   hist   ik \0 BE64(rev) -> record     superseded versions, keyed by their
 *                                        own mod_rev, and tombstones keyed by
 *                                        the delete's revision
 *   log    BE64(rev) BE32(idx) -> entry  the change log: one entry per change
 *   meta   name -> value                 rev, compacted, format, cluster, seed
 *
 * Internal keys (ik). LMDB keys are at most 511 bytes; ours up to ENG_KEY_MAX.
 * A key of at most IK_SHORT_MAX bytes is its own ik. A longer key K becomes
 * K[0:IK_SHORT_MAX] followed by 16 hex digits of a seeded 64-bit hash of K;
 * the record stores K in full. Every ik that starts with the same
 * IK_SHORT_MAX-byte prefix P sorts after the short key P and before any key
 * that sorts after P's extensions, so ik order equals key order except among
 * long keys that share P: range walks collect such a group and sort it by the
 * full key (engine/read.c). Keys contain no NUL, so `ik \0 rev` groups the
 * history of one ik together, in revision order.
 *
 * Invariants (checked by eng_check, engine/info.c):
 *  1. meta.compacted <= meta.rev; every record's mod_rev <= meta.rev.
 *  2. A state record's slot holds its mod_rev in decimal.
 *  3. For each ik, hist revisions are below the state record's mod_rev.
 *  4. The log holds every revision in (compacted, rev], in order (entries
 *     at or below compacted may linger while a compaction runs).
 */
#ifndef LAPIS_ENG_INT_H
#define LAPIS_ENG_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lapis/engine.h"

#define IK_SHORT_MAX 480
#define IK_HASH_HEX 16
#define IK_MAX (IK_SHORT_MAX + IK_HASH_HEX)
#define HK_MAX (IK_MAX + 1 + 8) /* 505 <= LMDB's 511 */
#define LOGK_LEN 12

#define ENG_FORMAT 1u
#define ENG_MAGIC 0x4c50454eu /* "LPEN" */

/* Record flags. */
#define REC_LONGKEY 1u /* the full key follows the header */
#define REC_TOMB 2u    /* a tombstone in hist: the key was deleted at mod_rev */

/* The header of every stored record; the full key (REC_LONGKEY) and then the
   value follow it. Stored in host byte order (an LMDB file is not portable
   across byte orders anyway). */
struct rec_hdr {
	uint32_t flags;
	uint32_t slot_off; /* ENG_NO_SLOT or offset of the revision in value */
	uint32_t slot_len; /* digits at slot_off */
	uint32_t key_len;  /* full key length with REC_LONGKEY, else 0 */
	int64_t create_rev;
	int64_t mod_rev;
	int64_t version;
};

/* A decoded record: points into LMDB memory or an owned buffer. */
struct rec {
	struct rec_hdr h;
	const uint8_t *key; /* full key */
	size_t key_len;
	const uint8_t *value;
	size_t value_len;
};

/* Change-log entry value: header then the full key. */
struct log_hdr {
	uint32_t type; /* enum eng_ev_type */
	uint32_t key_len;
	int64_t prev_mod; /* mod_rev of the record it replaced or deleted; 0 */
};

/* The big-reader gate that lets the writer grow the map: LMDB allows
   mdb_env_set_mapsize only while no transaction of the process is active.
   Readers bump a per-thread-slot counter (own cache line); the writer sets
   `closed` and waits for every counter to drain. */
#define GATE_SLOTS 64
struct gate {
	_Atomic int closed;
	pthread_mutex_t mu; /* guards the wait for !closed */
	pthread_cond_t cv;
	struct {
		_Atomic long n;
		char pad[64 - sizeof(long)];
	} slot[GATE_SLOTS];
};

struct wq; /* the writer's queue, engine/writer.c */
struct hub; /* watch ring and watchers, engine/watch.c */

struct pin_node {
	struct pin_node *next, *prev;
	int64_t rev;
	int64_t expires_ms; /* monotonic */
};

struct eng_pin {
	eng *e;
	struct pin_node node;
};

/* Key counts of prefixes at a revision (count.c). 32 slots: a server
   lists a few dozen collections at most at any one time; the writer checks
   every slot for every change, so the number stays small. */
#define ENG_COUNT_SLOTS 32
struct count_slot {
	uint8_t *prefix; /* owned; NULL: a free slot */
	size_t len;
	int64_t rev;	 /* the revision the count is exact at */
	uint64_t n;	 /* live keys under prefix at rev */
	uint64_t used;	 /* counts.tick at the last use (eviction) */
	bool moving;	 /* the writer's update is bringing it forward */
	int64_t delta;	 /* creates - deletes of that update */
};
struct counts {
	pthread_mutex_t mu; /* guards everything here; a leaf lock */
	struct count_slot slot[ENG_COUNT_SLOTS];
	uint64_t tick;
};

struct eng {
	uint32_t magic;
	MDB_env *env;
	MDB_dbi db_state, db_hist, db_log, db_meta;
	MDB_dbi db_main; /* the unnamed database: the revision (env.c) */
	char *dir;
	bool readonly;
	bool nosync;
	uint64_t gen;		/* unique per open, for thread-local caches */
	uint64_t hash_seed;	/* seeds long-key hashes; stored in meta */
	char cluster_id[33];
	uint64_t map_size;	/* guarded by the writer (and gate) */
	unsigned psize; /* LMDB's page size (read.c's prefetch); set at open */
	uint64_t max_size;
	/* The zero-filled tail of data.mdb (env.c, eng__prealloc); guarded by
	   the writer. */
	uint64_t zero_end;
	bool zero_off;
	unsigned max_replays;
	unsigned ring_events;
	uint64_t ring_bytes;
	unsigned pin_seconds;
	void (*on_commit)(void *, uint64_t);
	void (*on_compact_step)(void *, uint64_t);
	void *hook_ud;

	/* rev: the latest committed and durable revision, what readers see
	   and callers are told; vis_rev: set before each logged commit, so
	   that no reader's snapshot is newer (writer.c, invariant 8). Both
	   set by the committing thread. */
	_Atomic int64_t rev;
	_Atomic int64_t vis_rev;
	_Atomic uint64_t durable_waits; /* readers that waited (read.c) */
	/* rcache.c's seqlock: odd while a group commits (writer.c) */
	_Atomic uint64_t cache_seq;
	struct rcache *rc;	   /* eng_get_copy's cache; NULL: off */
	_Atomic int64_t compacted; /* set by the writer */
	_Atomic int64_t compacting; /* target of the running compaction */
	_Atomic int closing;

	struct gate gate;

	/* eng_rd objects parked in thread-local caches; freed at close, or
	   when their thread exits (read.c) */
	pthread_mutex_t rd_mu;
	struct eng_rd *rd_all;
	struct eng *live_next;	/* in read.c's list of open engines */

	/* writer */
	struct wq *wq;
	pthread_t writer;
	bool writer_started;
	_Atomic uint64_t groups, txns, map_grows;
	_Atomic uint64_t led_groups; /* groups a caller committed (writer.c) */
	_Atomic uint64_t cmp_steps; /* compaction slices committed (writer.c) */
	_Atomic uint64_t cmp_folded;	/* of which in a write group's txn */
	_Atomic uint64_t cmp_step_most; /* the most work one slice did */
	_Atomic uint64_t cmp_step_bytes_most; /* the most one slice deleted */

	/* revision waiters */
	pthread_mutex_t rev_mu;
	pthread_cond_t rev_cv;

	/* pins, guarded by pin_mu */
	pthread_mutex_t pin_mu;
	struct pin_node pins; /* list head */
	uint64_t n_pins;

	/* replays in flight (bounded by max_replays) */
	pthread_mutex_t replay_mu;
	pthread_cond_t replay_cv;
	unsigned replays;

	/* compactor thread */
	pthread_t compactor;
	bool compactor_started;
	pthread_mutex_t cmp_mu;
	pthread_cond_t cmp_cv;
	uint64_t cmp_interval_ms;
	_Atomic int64_t cmp_last_ok, cmp_last_fail;
	_Atomic int cmp_last_err;

	struct hub *hub;

	struct counts counts; /* count.c */

	struct eng_wal *wal; /* wal.c; NULL: LMDB flushes each commit */

	/* the writer's last clearing of dead processes' reader slots
	   (eng__reader_check); monotonic ms */
	int64_t readers_checked_ms;

	/* eng_opts.quota; over_quota is set by the writer
	   (eng__quota_update), read by every submitter */
	uint64_t quota;
	_Atomic bool over_quota;
	int64_t quota_checked_ms; /* writer thread only */
	uint64_t quota_last_pgno; /* the file's last page at that check */
};

struct eng_rd {
	eng *e;
	MDB_txn *txn;
	int slot;	      /* gate slot held */
	bool busy;	      /* begun and not ended */
	int64_t rev;	      /* -1 until read */
	int64_t compacted;    /* -1 until read */
	/* The snapshot may hold a commit whose log record is still being
	   flushed (read.c, invariant 5): vis_rev and rev as read at begin. */
	bool unsettled;
	int64_t vis_rev, durable_rev;
	struct eng_rd *next;  /* in e->rd_all */
	/* scratch for sorting a long-key group in a range walk */
	struct rec *grp;
	size_t grp_cap;
	/* Cursors kept for range walks (state, hist, hist) and renewed for
	   each walk; `walking` while a walk uses them (a callback that ranges
	   on the same eng_rd gets cursors and scratch of its own). */
	MDB_cursor *cur[3];
	bool walking;
};

/* env.c */
lp_err eng__from_mdb(int mrc, const char *what);
void eng__gate_enter(eng *e, int *slot);
void eng__gate_leave(eng *e, int slot);
/* Whether the calling thread is inside a read (of any store): such a
   thread must not commit, since growing the map waits for every reader. */
bool eng__gate_held(void);
void eng__gate_close(eng *e);
void eng__gate_open(eng *e);
lp_err eng__grow(eng *e);
void eng__prealloc(eng *e);
/* Free the reader slots of processes that died inside a read (a killed
   `lapis backup` or `inspect`): such a slot pins its snapshot, and no page
   freed after it is used again, so the file grows with every write.
   Writer thread; at most every READER_CHECK_MS unless now. */
void eng__reader_check(eng *e, bool now);
/* Measure the pages in use against the quota (writer thread, or before it
   starts): at most every QUOTA_CHECK_MS unless now. */
void eng__quota_update(eng *e, bool now);
lp_err eng__remap(eng *e);
int64_t eng__now_ms(void);
lp_err eng__meta_get_i64(MDB_txn *txn, eng *e, const char *name, int64_t *out);
int eng__meta_put_i64(MDB_txn *txn, eng *e, const char *name, int64_t v);
lp_err eng__rev_get(MDB_txn *txn, eng *e, int64_t *out);
int eng__rev_put(MDB_txn *txn, eng *e, int64_t rev);

/* wal.c: the write-ahead log of a synced store. Records hold at most
   half a segment; a checkpoint is handed to its thread once a segment holds
   ENG_WAL_CKPT_BYTES or ENG_WAL_CKPT_NS after the last one. */
#define ENG_WAL_SEG_MAX (64u << 20)
#define ENG_WAL_CKPT_BYTES (4u << 20)
#define ENG_WAL_CKPT_NS 1000000000LL
/* One of LMDB's meta pages (lmdb's mdb.c: the page header, then MDB_meta:
   magic, version, address, map size, the two core DBs -- the free DB's
   md_pad is the page size --, the last page number and the txnid). */
struct eng_lmdb_meta {
	uint32_t psize;
	uint64_t last_pg, txnid;
};
/* Parse the meta page at pg (len bytes); false when it is none (torn,
   garbage, another format). */
bool eng__lmdb_meta(const uint8_t *pg, size_t len, struct eng_lmdb_meta *m);

/* Before mdb_env_open: open the log and, where LMDB went on past the last
   checkpoint, write its meta pages back. */
lp_err eng__wal_prepare(eng *e);
/* For a read-only open of dir, which has a log: LP_E_CORRUPT (logged) when
   no process has the store open and the log holds records past its
   checkpoint that data.mdb has no commit past (a system crash no writer
   has recovered yet: data.mdb as it is lacks acknowledged writes). */
lp_err eng__wal_check_ro(const char *dir);
/* After the databases are open: replay the records after the checkpoint,
   checkpoint, start the checkpoint thread; with drop, flush data.mdb and
   remove the log instead. */
lp_err eng__wal_start(eng *e, bool drop);
/* The committing thread: room for a record of n bytes (the payload goes at
   the pointer returned, NULL: no memory); write it and start its writeback,
   unflushed (0, EFBIG: too large to log, or an errno); erase it after a
   failed commit; after a commit. */
uint8_t *eng__wal_buf(eng *e, size_t n);
int eng__wal_log(eng *e, size_t n);
void eng__wal_unlog(eng *e, size_t n);
void eng__wal_committed(eng *e);
/* After the commit of the record just logged: flush it (LP_E_IO breaks
   the log). */
lp_err eng__wal_flush(eng *e);
/* A checkpoint now, on the committing thread (or with no writer). */
lp_err eng__wal_checkpoint(eng *e);
void eng__wal_stats(eng *e, struct eng_stats *out);
void eng__wal_close(eng *e);
/* writer.c: apply one record's txns (at open, before any writer). */
lp_err eng__wal_replay(eng *e, const uint8_t *p, size_t n);

/* rcache.c: the read cache (budget 0: none); freed after the writer
   stops, before the environment closes. */
lp_err eng__rcache_new(eng *e, uint64_t budget);
void eng__rcache_free(eng *e);

/* keys.c */
size_t eng__ik(const eng *e, const uint8_t *key, size_t len, uint8_t *ik);
size_t eng__hk(const uint8_t *ik, size_t ik_len, int64_t rev, uint8_t *hk);
int64_t eng__hk_rev(const uint8_t *hk, size_t len);
void eng__be64(uint8_t *p, uint64_t v);
uint64_t eng__get_be64(const uint8_t *p);
void eng__logk(uint8_t *k, int64_t rev, uint32_t idx);
uint64_t eng__hash64(uint64_t seed, const void *p, size_t n);
lp_err eng__key_ok(const void *key, size_t len);
size_t eng__digits(int64_t v, char *buf);

/*
 * The three below run once per record of every range walk, so they are
 * inline (the build has no link-time optimization to inline across files).
 */

/* The order of the 8 bytes at a and b, as big-endian numbers. */
static inline int eng__word_cmp(const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	if (x == y)
		return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
	y = __builtin_bswap64(y);
#endif
	return x < y ? -1 : 1;
}

/* Byte order of a and b, then the shorter first: the order of keys and iks.
   Eight bytes at a time: range bounds and keys share long prefixes
   ("/registry/..."), and a libc memcmp call costs more than the compare.
   The last word ends at the common length and may overlap the one before
   (whose bytes were equal), instead of a byte loop over the rest: a range
   walk compares every key with its bound, and the byte loop was ~45% of
   that compare for "/registry/configmaps/NS/" (callgrind). */
static inline int eng__keycmp(const uint8_t *a, size_t al, const uint8_t *b,
			      size_t bl)
{
	size_t n = al < bl ? al : bl;
	if (n >= 8) {
		size_t last = n - 8;
		for (size_t i = 0; i < last; i += 8) {
			int c = eng__word_cmp(a + i, b + i);
			if (c)
				return c;
		}
		int c = eng__word_cmp(a + last, b + last);
		if (c)
			return c;
	} else {
		for (; n > 0; n--, a++, b++) {
			if (*a != *b)
				return *a < *b ? -1 : 1;
		}
	}
	return al < bl ? -1 : al > bl;
}

/* Decode a stored record (state or hist) under ik; false if malformed.
   The result points into v's memory, and at ik for a short key. */
static inline bool eng__rec_decode(const uint8_t *ik, size_t ik_len,
				   const MDB_val *v, struct rec *out)
{
	if (v->mv_size < sizeof(struct rec_hdr))
		return false;
	memcpy(&out->h, v->mv_data, sizeof out->h);
	const uint8_t *p = (const uint8_t *)v->mv_data + sizeof out->h;
	size_t rest = v->mv_size - sizeof out->h;
	if (out->h.flags & REC_LONGKEY) {
		if (out->h.key_len > rest || out->h.key_len > ENG_KEY_MAX)
			return false;
		out->key = p;
		out->key_len = out->h.key_len;
		p += out->h.key_len;
		rest -= out->h.key_len;
	} else {
		out->key = ik;
		out->key_len = ik_len;
	}
	out->value = p;
	out->value_len = rest;
	if (out->h.slot_off != ENG_NO_SLOT &&
	    ((uint64_t)out->h.slot_off + out->h.slot_len > rest))
		return false;
	return true;
}

static inline void eng__rec_public(const struct rec *r, struct eng_record *out)
{
	out->key = r->key;
	out->key_len = r->key_len;
	out->value = r->value;
	out->value_len = r->value_len;
	out->create_rev = r->h.create_rev;
	out->mod_rev = r->h.mod_rev;
	out->version = r->h.version;
}

/* read.c */
void eng__live_add(eng *e);
void eng__live_remove(eng *e);
lp_err eng__rd_meta(eng_rd *r);
void eng__rd_free(eng_rd *r);
lp_err eng__rec_at(eng_rd *r, const uint8_t *ik, size_t ik_len, int64_t rev,
		   struct rec *out);
lp_err eng__range_all(eng_rd *r, const struct eng_range_req *req,
		      eng_range_fn fn, void *ud, struct eng_range_res *res);

/* count.c */
void eng__counts_init(eng *e);
void eng__counts_free(eng *e);
/* The count of live keys under prefix at rev, if known. */
bool eng__count_get(eng *e, const uint8_t *prefix, size_t len, int64_t rev,
		    uint64_t *n);
/* Record that at rev, n live keys start with prefix (a complete walk). */
void eng__count_put(eng *e, const uint8_t *prefix, size_t len, int64_t rev,
		    uint64_t n);
/* Writer thread: bring the counts at revision `from` to `to` across one
   committed group. begin takes the lock (and says whether any count is at
   `from`); then counts_key for each create (+1) and delete (-1) of the
   group; end(to) updates and releases. */
bool eng__counts_begin(eng *e, int64_t from);
void eng__counts_key(eng *e, const uint8_t *key, size_t len, int delta);
void eng__counts_end(eng *e, int64_t to);

/* writer.c */
lp_err eng__writer_start(eng *e);
void eng__writer_stop(eng *e);
uint64_t eng__queued(eng *e); /* txns waiting in the writer's queue */
/* A reader whose snapshot is no newer than revision v (vis_rev read
   after the snapshot was taken): wait until v is durable, or until a
   failed commit took it back (writer.c, invariant 8). Never on the
   committing thread. */
void eng__wait_durable(eng *e, int64_t v);

/* watch.c */
lp_err eng__hub_new(eng *e);
void eng__hub_close(eng *e);
void eng__hub_free(eng *e);
void eng__publish(eng *e, eng_event **evs, size_t n);
eng_event *eng__event_new(enum eng_ev_type type, int64_t rev, uint32_t idx,
			  const struct rec *cur, const struct rec *prev);
eng_event *eng__event_del(int64_t rev, uint32_t idx, const struct rec *prev);
uint64_t eng__n_watchers(eng *e);

/* compact.c */
int64_t eng__pin_clamp(eng *e, int64_t target);
void eng__compactor_stop(eng *e);

#endif
