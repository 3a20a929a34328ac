/*
 * engine.h -- the one door to engine/: an MVCC key-value store on LMDB with
 * the etcd v3 data model (DESIGN.md "Engine on LMDB").
 *
 * The engine stores opaque byte values under byte-string keys and knows
 * nothing of HTTP, JSON or Kubernetes. Everything here could be implemented
 * over a real etcd v3 cluster as well.
 *
 * Model
 *  1. One global revision counter. A fresh store is at revision 1; every
 *     committed transaction that changes something gets the next revision
 *     (all its operations share it). Revisions are never reused and survive
 *     restart.
 *  2. A record carries create_rev, mod_rev, version (writes since creation,
 *     1 on create) and the value bytes.
 *  3. Keys are 1..ENG_KEY_MAX bytes and contain no NUL byte (range bounds may
 *     contain NUL: a continue token's start key ends in one). Ranges are in
 *     byte-wise key order, for long keys too.
 *  4. A value may carry a revision slot: an insertion point at which the
 *     writer splices the record's mod_rev in decimal at commit. Bytes returned
 *     by a read always carry their record's mod_rev there.
 *  5. Reads at an older revision see exactly the state at that revision;
 *     below the compacted revision they fail with LP_E_COMPACTED, ahead of the
 *     store with LP_E_FUTURE.
 *
 * Threads
 *  - eng_* calls are thread-safe unless a comment says otherwise.
 *  - One thread at a time runs LMDB write transactions: the engine's writer
 *    thread, or, when the writer is idle, the caller of eng_txn_commit()
 *    itself, which then commits its txn (with any queued before it) as one
 *    group on its own thread; either way eng_txn_commit() returns once its
 *    group is committed (engine/writer.c, invariant 6).
 *  - Never hold an eng_rd while calling eng_txn_commit(), eng_compact() or
 *    eng_wait_rev(): the writer may need every reader gone to grow the map.
 *  - Watch readiness callbacks and the on_commit hook run on the committing
 *    thread (the writer's, or a committing caller's); they must not block
 *    or call back into the engine, and a caller of eng_txn_commit() holds
 *    no lock that a readiness callback takes.
 */
#ifndef LAPIS_ENGINE_H
#define LAPIS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lapis/err.h"

typedef struct eng eng;             /* an open store */
typedef struct eng_rd eng_rd;       /* a short read snapshot */
typedef struct eng_txn eng_txn;     /* a write transaction being built */
typedef struct eng_watch eng_watch; /* a watch cursor */
typedef struct eng_pin eng_pin;     /* a revision held back from compaction */

/* Kubernetes keys reach about 650 bytes; we accept at least 1 KiB. */
#define ENG_KEY_MAX 1024
/* Values up to 64 MiB; the API server limits requests far below this. */
#define ENG_VALUE_MAX (64u << 20)
/* slot_off value for "this value has no revision slot". */
#define ENG_NO_SLOT UINT32_MAX

/* ---------------------------------------------------------------- open */

/* The read cache's size when eng_opts asks for the default: 32 MiB. */
#define ENG_READ_CACHE_DEFAULT ((uint64_t)32 << 20)

struct eng_opts {
	const char *dir;	/* LMDB environment directory; created if missing */
	int nosync;		/* 1: no fsync at commit (tests, throwaway stores) */
	int no_wal;		/* synced stores: 1 flushes LMDB's pages at each
				   commit instead of a write-ahead log record
				   (engine/wal.c) */
	int readonly;		/* 1: open read-only (inspect, backup beside a server);
				   no writer thread, writes fail with LP_E_INVAL */
	uint64_t initial_map;	/* bytes of address space to map first; 0: 32 GiB */
	uint64_t max_size;	/* the store never grows past this; 0: no limit but
				   the disk. Writes that do not fit fail LP_E_FULL */
	uint64_t quota; /* etcd's --quota-backend-bytes: once the pages in
			   use (the file's high-water mark less LMDB's
			   free pages) pass this, a txn that puts fails
			   LP_E_FULL at once, while deletes and
			   compaction go on in the room above it and
			   free pages for puts to come back; max_size
			   then defaults to quota + quota / 4 + 64 MiB.
			   0: no quota */
	unsigned max_readers;	/* LMDB reader slots; 0: 1024 */
	unsigned ring_events;	/* events kept in memory for watchers; 0: 8192 */
	uint64_t ring_bytes;	/* and the most memory they may hold (an event
				   costs its key, its value twice, for the
				   server's framed copy, and its previous
				   value); 0: 64 MiB. A watcher whose next
				   event leaves the ring unread overflows */
	unsigned max_replays;	/* concurrent watch replays from the log; 0: 16 */
	unsigned pin_seconds;	/* the longest a pin holds compaction back; 0: 120 */
	int64_t read_cache;	/* bytes of records eng_get_copy may keep; 0:
				   ENG_READ_CACHE_DEFAULT; negative: no
				   cache */
	/* Test hook: called on the writer thread after group `group` (counted
	   from 1) is committed, and in sync mode durable, before any caller of
	   that group is acknowledged. */
	void (*on_commit)(void *ud, uint64_t group);
	/* Test hook: called on the writer thread after compaction slice `step`
	   (counted from 1 over the store's life) is committed: after a step
	   of its own, before the writes queued meanwhile are taken; after a
	   write group that carried it, once on_commit has run. A test may
	   block in it to hold a compaction in the middle. */
	void (*on_compact_step)(void *ud, uint64_t step);
	void *hook_ud;
};

/*
 * Open or create the store in o->dir.
 * Errors: LP_E_FORMAT (store written by an unknown format), LP_E_LOCKED (the
 * same environment is already open in this process), LP_E_CORRUPT, LP_E_IO,
 * LP_E_NOMEM, LP_E_INVAL.
 * On success *out is new: release it with eng_close().
 */
lp_err eng_open(const struct eng_opts *o, eng **out);

/*
 * Close the store: ends every watcher (their next gives LP_E_CLOSED), stops
 * the writer after the queued writes and the compactor, and closes LMDB.
 * No eng_rd may be open. Accepts NULL.
 */
void eng_close(eng *e);

/* ---------------------------------------------------------------- reads */

/* A record as read. Pointers are borrowed: valid until the eng_rd it came
   from ends (for txn results: until eng_txn_free; for events: while the
   event is referenced). */
struct eng_record {
	const uint8_t *key;
	size_t key_len;
	const uint8_t *value;
	size_t value_len;
	int64_t create_rev;
	int64_t mod_rev;
	int64_t version;
};

/*
 * Begin a short read snapshot of the latest committed state. Keep it short:
 * never hold it across network I/O or a wait (it pins pages and the file
 * grows). On a synced store, a snapshot taken while a commit's log record
 * is being flushed shows nothing of that commit before the flush: reads
 * through it that could see the commit (its revision, ranges, older
 * revisions, a key the commit may have changed) wait for the flush, at
 * most one fsync; eng_stats counts them (durable_waits).
 * Errors: LP_E_READERSFULL, LP_E_CLOSED, LP_E_IO.
 * *out is new: end it with eng_rd_end() on the same thread.
 */
lp_err eng_rd_begin(eng *e, eng_rd **out);
/* End a read snapshot; every record read through it becomes invalid. NULL ok. */
void eng_rd_end(eng_rd *r);
/* The store revision this snapshot sees. */
int64_t eng_rd_rev(eng_rd *r);
/* The compacted revision as this snapshot sees it (reads below it fail). */
int64_t eng_rd_compacted(eng_rd *r);

/* A record's value copied out of the store (eng_get_copy). */
struct eng_copy {
	char *value; /* value_len bytes and a NUL; the caller frees it */
	size_t value_len;
	int64_t create_rev, mod_rev, version;
};

/*
 * The latest record under key, copied: a snapshot of its own, begun and
 * ended inside (as eng_rd_begin, eng_get at 0, eng_rd_end). Answered from
 * the engine's read cache when it holds the key and nothing has been
 * committed since it was read: every commit empties the cache before its
 * effect is visible, so the answer is what eng_get would return.
 * Errors: as eng_rd_begin and eng_get; LP_E_NOMEM. *out is written only on
 * success.
 */
lp_err eng_get_copy(eng *e, const void *key, size_t key_len,
		    struct eng_copy *out);
/*
 * The read sequence: even while no commit is being made, odd while one is,
 * and moved by every commit that changes a record, before its effect is
 * visible to any reader. A value derived from reads of the latest state
 * that began when the sequence was even is still the latest state while the
 * sequence keeps that value: what the read cache relies on, and what lets
 * a caller keep answers of its own made from eng_get_copy.
 */
uint64_t eng_read_seq(eng *e);
/* The read cache's counts since open (all 0 without a cache). */
void eng_read_cache_stats(eng *e, uint64_t *hits, uint64_t *misses,
			  uint64_t *bytes);

/*
 * Read one key at revision at_rev (0: the snapshot's latest).
 * Errors: LP_E_NOTFOUND, LP_E_COMPACTED (at_rev below the compacted
 * revision), LP_E_FUTURE (at_rev above the snapshot's revision),
 * LP_E_KEYTOOLONG, LP_E_INVAL, LP_E_IO. *out is written only on success.
 */
lp_err eng_get(eng_rd *r, const void *key, size_t key_len, int64_t at_rev,
	       struct eng_record *out);

/* What a range callback says about the record it was given. */
enum eng_take {
	ENG_TAKE,  /* counts toward the limit */
	ENG_SKIP,  /* filtered out: does not count */
	ENG_STOP,  /* stop here; this record is not counted */
};
typedef enum eng_take (*eng_range_fn)(void *ud, const struct eng_record *rec);

enum {
	/* After the range stops, count every key left in it (n_remaining).
	   Costs a walk over the rest of the range's keys, except for a whole
	   prefix at the latest revision whose count the engine still knows
	   (engine/count.c: kept from an earlier walk and brought forward at
	   each commit). A paged list asks on its first page only and
	   carries the count (its snapshot is fixed, so later pages
	   subtract). */
	ENG_RANGE_COUNT = 1u << 0,
};

struct eng_range_req {
	const void *prefix;	/* keys starting with this; NULL/0: no prefix bound */
	size_t prefix_len;
	const void *from;	/* inclusive lower bound; NULL: the prefix itself */
	size_t from_len;
	const void *end;	/* exclusive upper bound; NULL: the prefix's end */
	size_t end_len;
	int64_t at_rev;		/* 0: the snapshot's latest */
	uint64_t limit;		/* stop after this many ENG_TAKE; 0: no limit */
	unsigned flags;		/* ENG_RANGE_* */
};

struct eng_range_res {
	uint64_t n_taken;	/* records the callback took */
	uint64_t n_visited;	/* records given to the callback */
	int more;		/* 1: keys remain in the range after the last visited */
	uint64_t n_remaining;	/* with ENG_RANGE_COUNT: how many */
	int64_t rev;		/* the revision read at */
};

/*
 * Call fn for each record in the range, in key order, at req->at_rev, until
 * the limit of taken records, ENG_STOP, or the end. Records are borrowed:
 * valid until the eng_rd ends.
 * Errors: LP_E_COMPACTED, LP_E_FUTURE, LP_E_INVAL, LP_E_IO. *res is written
 * only on success.
 */
lp_err eng_range(eng_rd *r, const struct eng_range_req *req, eng_range_fn fn,
		 void *ud, struct eng_range_res *res);

/*
 * Wait until the store has reached revision rev, at most timeout_ms.
 * Errors: LP_E_FUTURE (timed out), LP_E_CLOSED.
 */
lp_err eng_wait_rev(eng *e, int64_t rev, int timeout_ms);

/* The latest committed revision (no snapshot: a hint for callers). */
int64_t eng_rev(eng *e);
/* The latest compacted revision. */
int64_t eng_compacted(eng *e);

/* ---------------------------------------------------------------- writes */

enum eng_cmp_kind {
	ENG_CMP_NONE,	  /* no condition */
	ENG_CMP_ABSENT,	  /* the key must not exist (fails LP_E_EXISTS) */
	ENG_CMP_PRESENT,  /* the key must exist (fails LP_E_NOTFOUND) */
	ENG_CMP_MOD,	  /* the key must exist with mod_rev == mod_rev
			     (fails LP_E_NOTFOUND or LP_E_CONFLICT) */
	ENG_CMP_MOD_PREV, /* in a chain (eng_txn_commit_chain), after the
			     first txn: the key must exist with mod_rev ==
			     the revision the previous txn of the chain
			     committed at, which nobody knows before the
			     commit (a create and then its status). Fails
			     as ENG_CMP_MOD; mod_rev is ignored. Elsewhere:
			     LP_E_INVAL at commit. */
};

struct eng_cmp {
	enum eng_cmp_kind kind;
	int64_t mod_rev;
};

/* Start building a write transaction. Errors: LP_E_NOMEM, LP_E_INVAL (read-only). */
lp_err eng_txn_new(eng *e, eng_txn **out);

/*
 * Add a put. The key and value are copied. slot_off is ENG_NO_SLOT or the
 * offset in value (<= value_len) where the writer inserts the decimal
 * mod_rev. cmp may be NULL.
 * Errors: LP_E_KEYTOOLONG, LP_E_VALTOOLARGE, LP_E_INVAL (empty key, NUL in
 * the key, bad slot, the key already in this txn), LP_E_NOMEM.
 */
lp_err eng_txn_put(eng_txn *t, const void *key, size_t key_len,
		   const void *value, size_t value_len, uint32_t slot_off,
		   const struct eng_cmp *cmp);

/* Add a delete (of an absent key: no change). Errors as eng_txn_put. */
lp_err eng_txn_del(eng_txn *t, const void *key, size_t key_len,
		   const struct eng_cmp *cmp);

/* The outcome of a commit. */
struct eng_commit_res {
	int64_t rev;		/* the revision it committed at; when nothing
				   changed, the store's revision then */
	uint64_t group;		/* the commit group it went in (test hook) */
	int failed_op;		/* on a failed compare: which op (else -1) */
	lp_err rc;		/* this txn's outcome (what eng_txn_commit returns) */
};

/*
 * Queue the transaction for the writer and wait until it is committed (and
 * durable in sync mode) or refused. All or nothing.
 * Errors: a failed compare (LP_E_EXISTS, LP_E_NOTFOUND, LP_E_CONFLICT; see
 * res->failed_op and eng_txn_current()), LP_E_FULL, LP_E_CLOSED, LP_E_IO,
 * LP_E_INVAL (a compare ENG_CMP_MOD_PREV: only chains have one).
 * A transaction is committed once; then free it.
 */
lp_err eng_txn_commit(eng_txn *t, struct eng_commit_res *res);

/* The most transactions one eng_txn_commit_chain() takes. */
#define ENG_CHAIN_MAX 64

/*
 * Commit ts[0..n) in this order as one chain: each is a transaction of its
 * own with its own revision (consecutive when each changes something) and
 * its compares checked against the state the ones before it left; no other
 * transaction commits between them, and they share one LMDB commit -- one
 * fsync in sync mode -- unless the store is at its maximum size (then each
 * commits alone, as the txns of any group do). Waits until all are done;
 * all are durable before it returns.
 * Once one fails (a compare, or FULL at the maximum size), the ones after
 * it are not tried: their rc is LP_E_AGAIN and they write nothing; the ones
 * before it stay committed. So a create followed by a write of its status
 * either commits both, the create alone (the status write failed), or
 * neither. If the shared LMDB commit itself fails (LP_E_IO), every txn of
 * the chain fails with it and none is committed.
 * res (NULL or n entries) receives each txn's outcome, rc included.
 * Returns LP_OK when every txn committed, else the first txn's failure.
 * Errors: as eng_txn_commit; LP_E_INVAL (n is 0 or > ENG_CHAIN_MAX, a txn
 * twice, already committed, or of another store, ENG_CMP_MOD_PREV in the
 * first txn; nothing is queued).
 * Each txn is committed once; then free each.
 */
lp_err eng_txn_commit_chain(eng_txn *const *ts, size_t n,
			    struct eng_commit_res *res);

/*
 * Waiting for a commit without holding the thread, for callers that run on
 * a user-space scheduler (the server's write fibers, server/writes.c). A
 * thread with a parker installed has eng_txn_commit and eng_txn_commit_chain
 * queue their txns for the writer thread (in sync mode never committing a
 * group on the caller's thread; in nosync mode, where no commit waits for
 * the disk, committing them at once when no group is being committed) and
 * then call park(ud) until every txn is done; the
 * committing thread calls wake(ud) once they are, after marking them done,
 * from no lock of the engine's. park returns after that wake, or earlier (the
 * caller checks and parks again); a wake may come before park is called. A
 * caller inside a read (between eng_rd_begin and eng_rd_end) blocks as one
 * without a parker: the writer may need every reader gone to grow the map.
 */
struct eng_parker {
	void (*park)(void *ud);
	void (*wake)(void *ud);
	void *ud;
};

/* Install p (NULL: none) as this thread's parker; returns the previous
   one. p must stay valid while installed. */
const struct eng_parker *eng_set_parker(const struct eng_parker *p);

/*
 * After commit: op i's previous record (before this txn) in *prev, and for a
 * put the new record in *cur (its value carries the revision). Either may be
 * NULL. Returns 1 if a previous record existed. After a failed compare,
 * *prev is the current record of the key that failed. Records are valid
 * until eng_txn_free().
 */
int eng_txn_result(eng_txn *t, int i, struct eng_record *prev,
		   struct eng_record *cur);

/* Free a transaction (committed or not). NULL ok. */
void eng_txn_free(eng_txn *t);

/* ---------------------------------------------------------------- compaction */

/*
 * Compact to rev: drop history and change-log entries that no read at a
 * revision >= the effective target needs. The target is clamped to the
 * oldest live pin and to the current revision; *done (may be NULL) receives
 * it. Runs on the writer in short slices of at most ENG_COMPACT_STEP_MAX
 * entries, ENG_COMPACT_STEP_BYTES of deleted entries and a few milliseconds
 * of work, each committed with the writes
 * queued meanwhile or, when none are, on its own. Waits until finished;
 * the result is durable when it returns (in sync mode).
 * Errors: LP_E_CLOSED, LP_E_IO, LP_E_INVAL (read-only).
 */
#define ENG_COMPACT_STEP_MAX 1000
/* What one slice deletes, in key and value bytes: the pages its commit
   writes, and so the fsync it adds to the write group it rides in. */
#define ENG_COMPACT_STEP_BYTES (64 * 1024)
lp_err eng_compact(eng *e, int64_t rev, int64_t *done);

/*
 * eng_pin_rev: hold rev back from compaction while a read streams in chunks. A pin
 * expires after opts.pin_seconds. Errors: LP_E_COMPACTED, LP_E_NOMEM.
 * *out is new: release with eng_unpin() (NULL ok).
 */
lp_err eng_pin_rev(eng *e, int64_t rev, eng_pin **out);
void eng_unpin(eng_pin *p);

/*
 * Run kube-apiserver's compaction rule on a thread: every interval_ms,
 * compact to the revision recorded at the previous run. 0 turns it off.
 * Failures are logged and retried next interval; see eng_stats(). Calling
 * it again sets a new interval (0 stops compacting). Errors: LP_E_INVAL
 * (read-only), LP_E_NOMEM.
 */
lp_err eng_compactor_start(eng *e, uint64_t interval_ms);

/* ---------------------------------------------------------------- watch */

enum eng_ev_type { ENG_EV_PUT, ENG_EV_DEL };

/*
 * A change, immutable and reference-counted, shared by every watcher.
 * For ENG_EV_PUT, rec is the new record and prev the one it replaced
 * (prev.value NULL on create). For ENG_EV_DEL, rec is the deleted
 * object's last state with the delete's revision in its slot and
 * mod_rev == rev, and prev is that last state as stored.
 */
struct eng_event {
	enum eng_ev_type type;
	int64_t rev;
	struct eng_record rec;
	struct eng_record prev;
	/* private below */
	uint32_t idx_;		/* position of this change within its revision */
	long _Atomic refs_;
	void *_Atomic cache_;
	void (*cache_free_)(void *);
};

typedef struct eng_event eng_event;

void eng_event_ref(eng_event *ev);
void eng_event_unref(eng_event *ev); /* NULL ok */

/* A per-event cache for the server's framed encoding: the first setter wins
   (returns 1, the event owns p and frees it with fn); a later setter gets 0
   and keeps its p. get returns NULL or the winner's p, borrowed. */
int eng_event_cache_set(eng_event *ev, void *p, void (*fn)(void *));
void *eng_event_cache_get(eng_event *ev);

/* Called on the writer thread when an armed watcher may have events. */
typedef void (*eng_ready_fn)(void *ud);

/*
 * Watch every key with the given prefix (plen 0: all keys) for changes with
 * revision > from_rev, in order, exactly once. from_rev older than the
 * in-memory ring replays from the change log first.
 * Errors: LP_E_COMPACTED (from_rev < compacted revision, unless a tracked
 * prefix saw no change since: eng_watch_track), LP_E_CLOSED, LP_E_NOMEM.
 * *out is new: close with eng_watch_close().
 */
lp_err eng_watch_open(eng *e, const void *prefix, size_t plen, int64_t from_rev,
		      eng_ready_fn ready, void *ud, eng_watch **out);

/*
 * Track prefix (idempotent; up to 4,096 prefixes, later ones are ignored,
 * as is one that starts with a tracked prefix or that one starts with):
 * from now on the engine knows the newest revision at which a key under it
 * changed. eng_watch_open of a prefix that starts with a tracked one, from
 * a revision below the compacted one, then starts at the newest revision
 * instead of failing LP_E_COMPACTED when the tracking began at or before
 * from_rev and nothing under the tracked prefix changed after it: no event
 * is lost. This is what kube's watch cache serves for a resource that did
 * not change (its window ends at that resource's own oldest event), so a
 * client re-watching from its last event after a quiet hour is not sent
 * back to list. Any thread.
 */
void eng_watch_track(eng *e, const void *prefix, size_t plen);

/*
 * Next event, as a new reference in *ev.
 * Errors: LP_E_AGAIN (nothing yet: the ready callback is armed and runs once
 * when there may be more), LP_E_OVERFLOW (the watcher fell behind the ring:
 * it is over; restart from the last revision seen), LP_E_COMPACTED (a replay
 * was overtaken by compaction), LP_E_READERSFULL, LP_E_CLOSED, LP_E_IO.
 * Not thread-safe per watcher: one consumer at a time.
 */
lp_err eng_watch_next(eng_watch *w, eng_event **ev);

/* The revision of the last event returned (from_rev before any). */
int64_t eng_watch_rev(eng_watch *w);

/* Every change at or below this revision has been returned or filtered out
   by the prefix: what a bookmark may promise. Same thread as next. */
int64_t eng_watch_progress(eng_watch *w);

/* Close a watcher; once it returns, its ready callback never runs again.
   NULL ok. */
void eng_watch_close(eng_watch *w);

/* ---------------------------------------------------------------- backup, info */

/*
 * Write a consistent, compacted copy of the store to path (one file):
 * written to path.tmp, fsynced and renamed. progress (may be NULL) is called
 * with bytes written so far; when it returns false the copy stops, the
 * temporary file is removed and the result is LP_E_CLOSED. An in-process
 * backup holds a read snapshot for its whole copy and so delays map growth
 * until it is done.
 * Errors: LP_E_IO, LP_E_NOMEM, LP_E_CLOSED.
 */
lp_err eng_backup(eng *e, const char *path,
		  bool (*progress)(void *ud, uint64_t bytes), void *ud);

struct eng_info {
	int64_t rev;
	int64_t compacted;
	uint64_t n_keys;	/* keys in the current state */
	uint64_t data_bytes;	/* sum of current values' lengths */
	uint64_t file_bytes;	/* size of the data file */
	uint64_t map_bytes;	/* size of the map */
	uint64_t n_history;	/* history entries (superseded and deleted) */
	uint64_t n_log;		/* change-log entries */
	uint32_t format;	/* store format version */
	char cluster_id[33];	/* hex, NUL-terminated */
	/* Content hash over (key, value, create_rev, mod_rev, version) of the
	   current state in key order: equal for equal logical content. */
	char hash[17];		/* hex, NUL-terminated */
};

/* Fill *out (walks the current state for the hash). Errors: LP_E_IO. */
lp_err eng_info(eng *e, struct eng_info *out);

/*
 * Check the invariants between current state, history, change log and meta.
 * Returns LP_OK or LP_E_CORRUPT with the first violation described in msg
 * (NUL-terminated, truncated to msg_len).
 */
lp_err eng_check(eng *e, char *msg, size_t msg_len);

/*
 * For restore: add bump to the revision and mark everything before the new
 * revision compacted (history and log dropped), so watchers of the old
 * store re-list. Errors: LP_E_INVAL (bump < 1, read-only), LP_E_IO.
 */
lp_err eng_bump(eng *e, int64_t bump, int64_t *new_rev);

struct eng_stats {
	int64_t rev;
	int64_t compacted;
	uint64_t groups;		/* commit groups */
	uint64_t led_groups;		/* of which committed on a caller's thread */
	uint64_t txns;			/* transactions committed */
	uint64_t map_grows;		/* times the map was grown */
	uint64_t compact_steps;		/* compaction slices committed */
	uint64_t compact_folded;	/* of which in a write group's commit */
	uint64_t compact_step_most;	/* the most entries one slice touched
					   (<= ENG_COMPACT_STEP_MAX) */
	uint64_t compact_step_bytes_most; /* the most bytes one slice deleted
					   (< ENG_COMPACT_STEP_BYTES + one
					   entry) */
	uint64_t queued;		/* txns waiting for the writer now */
	uint64_t map_bytes;
	uint64_t watchers;		/* open watchers */
	uint64_t replays;		/* watchers replaying now */
	uint64_t pins;			/* live pins */
	int64_t compactor_last_ok;	/* unix seconds of the last success; 0 never */
	int64_t compactor_last_fail;	/* unix seconds of the last failure; 0 never */
	lp_err compactor_last_err;
	uint64_t compactor_interval_ms;	/* 0: off */
	uint64_t wal_records;		/* write-ahead log records written */
	uint64_t wal_checkpoints;	/* and checkpoints (engine/wal.c) */
	uint64_t wal_writebacks;	/* writebacks of data.mdb started
					   between checkpoints */
	uint64_t durable_waits;		/* reads that needed a commit whose
					   log record was being flushed, and
					   so waited for the flush */
};

void eng_stats(eng *e, struct eng_stats *out);

/* A 64-bit hash of n bytes at p from seed (not cryptographic): the one the
   engine's content hash uses, for callers' checksums. */
uint64_t eng_hash64(uint64_t seed, const void *p, size_t n);

/*
 * Is the LMDB file at path whole: a valid meta page, and the file long
 * enough for the last page it names? LMDB maps the file and would die of
 * SIGBUS reading past its end (a backup cut short by a full disk or an
 * interrupted copy). Returns LP_OK, LP_E_CORRUPT with why in msg (empty,
 * not an LMDB file, truncated), or LP_E_IO (cannot read it).
 */
lp_err eng_file_check(const char *path, char *msg, size_t msg_len);

/* Whether the store directory holds a write-ahead log (engine/wal.c). A
   read-only open reads data.mdb as it is; after a system crash only a
   writer's open recovers the store from the log. */
int eng_has_wal(const char *dir);

#endif
