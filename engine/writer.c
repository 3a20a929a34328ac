/*
 * writer.c -- write transactions, the single writer thread and group commit,
 * compaction and the revision bump.
 *
 * Threads: callers build an eng_txn on their own thread and hand it to the
 * writer with eng_txn_commit(), which waits. One thread at a time opens
 * LMDB write transactions: the writer thread, or a caller that found the
 * writer idle and commits its own group (invariant 6); below, "writer" is
 * whichever of the two commits a group.
 *
 *   caller                         writer
 *   eng_txn_new/put/del  (NEW)
 *   eng_txn_commit  ---queue--->   take every queued txn (a group)
 *        waits                      check compares, assign revisions, apply
 *                                   one LMDB commit (one fsync in sync mode)
 *                                   publish events to watchers
 *        <--- done ----------       mark each txn DONE, broadcast
 *
 * Invariants:
 *  1. A queued txn belongs to the writer until it is marked done; the caller
 *     touches nothing in it meanwhile.
 *  2. Compares are checked against the state as left by the txns before it
 *     in the same group; a txn with a failed compare writes nothing and takes
 *     no revision. A txn that changes nothing takes no revision.
 *  2a. The txns of a chain (eng_txn_commit_chain) are queued together and so
 *     run back to back in one group; once one of them fails, the rest of its
 *     chain is skipped (LP_E_AGAIN). A compare ENG_CMP_MOD_PREV reads the
 *     revision its predecessor just committed at (chain_prev->res.rev).
 *  3. No caller is acknowledged before its group's commit returned (durable
 *     in sync mode) and its events were published.
 *  4. MDB_MAP_FULL aborts the group; the writer grows the map and replays it.
 *     At the configured maximum, the group is replayed one txn per LMDB
 *     transaction so that only the txns that do not fit fail with FULL.
 *  5. Compaction runs in slices of at most COMPACT_STEP_NS of work,
 *     ENG_COMPACT_STEP_MAX entries and ENG_COMPACT_STEP_BYTES deleted (one
 *     entry more at most: a slice always makes progress). When writes are
 *     queued, the next slice
 *     goes into their group's transaction (after their txns, sharing the
 *     commit and its fsync; a group that fails with it is retried without
 *     it); otherwise it is a step, a transaction of its own whose commit
 *     syncs the data but not the meta page (step_begin). A compaction is
 *     reported done only after a closing sync.
 *  6. One thread at a time commits: the one that set q->busy. When the
 *     writer is idle, a caller leads: it takes the queue (its own txns and
 *     any queued before them) and commits that group on its own thread
 *     (lead_group), so a lone write costs no hand-off to the writer and back
 *     -- two thread wake-ups on its critical path, as much as a fast fsync
 *     on a busy machine. While a group commits, new txns queue and the next
 *     group is taken by the writer thread, so concurrent writers still meet
 *     in one group commit. A caller inside a read (the gate) never leads:
 *     the commit may have to wait for every reader to grow the map.
 *  7. A caller with a parker (eng_set_parker) leads only in nosync mode,
 *     where a commit costs CPU and never a wait for the disk (a lone write
 *     on a test server then commits at once, with no switch); in sync mode
 *     it never leads: it queues, signals the writer thread and parks, and
 *     so holds no thread through a flush. Its last txn carries the parker
 *     (none when it leads); whoever commits the group copies the wake while
 *     marking the txns done and calls it after unlocking q->mu, so a parked
 *     caller is woken once per commit call, after its txns are done, and
 *     may free them at once.
 *  8. With the write-ahead log, the commit overlaps its record's write:
 *     the record is written and its writeback started, LMDB commits, then
 *     the record is flushed, so the device writes it while LMDB writes
 *     its pages. Between that commit and the flush, vis_rev is ahead of
 *     rev; a reader that may see the commit waits for the flush (read.c,
 *     invariant 5), and the group is acknowledged only after it.
 *     Nothing is visible before it is durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "eng_int.h"
#include "lapis/assert.h"
#include "lapis/log.h"

/* A compaction slice stops after COMPACT_STEP_NS of work,
   ENG_COMPACT_STEP_MAX entries or ENG_COMPACT_STEP_BYTES deleted, whichever
   comes first (invariant 5), so a write that arrives during a compaction
   waits for the rest of at most one short step and its commit, and a group
   that carries a slice is only a little longer. bench-http's S5 measured
   2,000-entry steps over a 280 MB store, each with two synchronous writes,
   holding writes for whole steps (write p99 3.8x the steady one while
   compacting). The time bound follows the machine: a loaded one does less
   per slice, not more. The byte bound follows the disk: a synced commit
   here costs in proportion to the pages it writes, and deleting 2 ms worth
   of 1 KiB history entries (~375, in key order, four to a leaf) rewrote
   ~100 leaves, which made the groups that carried a slice the slow ones
   (S5 write p99 3.6x the steady one with 2 ms slices alone). */
#define COMPACT_STEP_NS 2000000 /* 2 ms */

enum op_type { OP_PUT, OP_DEL };

struct op {
	enum op_type type;
	uint8_t *key;
	size_t key_len;
	uint8_t *val;
	size_t val_len;
	uint32_t slot_off;
	struct eng_cmp cmp;
	/* results, written by the writer */
	uint8_t *prev_buf; /* the previous stored record (copy), or NULL */
	size_t prev_len;
	eng_event *ev;	   /* the change, once committed */
};

enum txn_state { TXN_NEW, TXN_QUEUED, TXN_DONE };

/* Up to this many ops, a put looks for its key among the txn's ops by a
   linear scan; past it, through a hash set (a bulk load adds thousands). */
#define DUP_LINEAR_MAX 16

struct eng_txn {
	eng *e;
	struct op *ops;
	int n_ops, cap_ops;
	uint32_t *dup_set;	/* op index + 1 by key hash; 0: empty */
	uint32_t dup_cap;	/* a power of two, > 2 * n_ops; 0: no set */
	enum txn_state state;	/* guarded by wq->mu once queued */
	pthread_cond_t cv;	/* signalled when state becomes TXN_DONE */
	bool chained;		/* follows its predecessor in one chain */
	struct eng_txn *chain_prev; /* that predecessor (queued with it) */
	bool cmp_prev;		    /* an op compares ENG_CMP_MOD_PREV */
	lp_err rc;
	struct eng_commit_res res;
	const struct eng_parker *parker; /* wake it when done (the last txn
					    of a parked caller's chain) */
	struct eng_txn *next;	/* in the writer's queue */
	int n_changes;		/* changes applied in this attempt */
};

enum cmp_req_kind { CREQ_COMPACT, CREQ_BUMP };

struct cmp_req {
	enum cmp_req_kind kind;
	int64_t target;
	lp_err rc;
	int64_t result;
	bool done;
	struct cmp_req *next;
};

struct wq {
	pthread_mutex_t mu;
	pthread_cond_t cv;	 /* the writer waits for work */
	pthread_cond_t done_cv;	 /* callers wait for their compaction request
				    (a txn's caller waits on the txn's cv) */
	eng_txn *head, **tail;
	struct cmp_req *creqs;	 /* compaction requests, in order */
	bool stop;
	bool busy;		 /* a thread runs a group or a compaction
				    request (invariant 6); under mu */
	uint64_t group_seq;	 /* the thread that set busy only */
	/* parked callers to wake once a group is marked done (the thread
	   that set busy only; kept for the next group) */
	struct eng_parker *wakes;
	size_t n_wakes, cap_wakes;
};

/* This thread's parker (eng_set_parker). */
static _Thread_local const struct eng_parker *tls_parker;

const struct eng_parker *eng_set_parker(const struct eng_parker *p)
{
	const struct eng_parker *old = tls_parker;
	tls_parker = p;
	return old;
}

/* ------------------------------------------------------------ building */

lp_err eng_txn_new(eng *e, eng_txn **out)
{
	if (!e || !out)
		return LP_ERR(LP_E_INVAL);
	if (e->readonly)
		return LP_ERR(LP_E_INVAL);
	eng_txn *t = calloc(1, sizeof *t);
	if (!t)
		return LP_ERR(LP_E_NOMEM);
	if (pthread_cond_init(&t->cv, NULL)) {
		free(t);
		return LP_ERR(LP_E_NOMEM);
	}
	t->e = e;
	t->res.failed_op = -1;
	*out = t;
	return LP_OK;
}

static bool op_is(const struct op *op, const void *key, size_t key_len)
{
	return op->key_len == key_len && memcmp(op->key, key, key_len) == 0;
}

static uint32_t dup_hash(const void *key, size_t key_len)
{
	return (uint32_t)eng__hash64(0x6475702d736574ull, key, key_len);
}

/* Put op i in the hash set (which has room: dup_reserve). */
static void dup_insert(eng_txn *t, int i)
{
	uint32_t mask = t->dup_cap - 1;
	uint32_t h = dup_hash(t->ops[i].key, t->ops[i].key_len) & mask;
	while (t->dup_set[h])
		h = (h + 1) & mask;
	t->dup_set[h] = (uint32_t)i + 1;
}

/* Make room in the hash set for one more op once the txn is past
   DUP_LINEAR_MAX ops, keeping it at most half full. */
static lp_err dup_reserve(eng_txn *t)
{
	uint32_t need = (uint32_t)t->n_ops + 1;
	if (need <= DUP_LINEAR_MAX || 2 * need < t->dup_cap)
		return LP_OK;
	uint32_t cap = t->dup_cap ? t->dup_cap * 2 : 4 * DUP_LINEAR_MAX;
	uint32_t *set = calloc(cap, sizeof *set);
	if (!set)
		return LP_ERR(LP_E_NOMEM);
	free(t->dup_set);
	t->dup_set = set;
	t->dup_cap = cap;
	for (int i = 0; i < t->n_ops; i++)
		dup_insert(t, i);
	return LP_OK;
}

/* Whether the txn already has an op on this key: one key, one op. */
static bool has_key(const eng_txn *t, const void *key, size_t key_len)
{
	if (!t->dup_cap) {
		for (int i = 0; i < t->n_ops; i++)
			if (op_is(&t->ops[i], key, key_len))
				return true;
		return false;
	}
	uint32_t mask = t->dup_cap - 1;
	for (uint32_t h = dup_hash(key, key_len) & mask; t->dup_set[h];
	     h = (h + 1) & mask)
		if (op_is(&t->ops[t->dup_set[h] - 1], key, key_len))
			return true;
	return false;
}

static lp_err add_op(eng_txn *t, enum op_type type, const void *key,
		     size_t key_len, const void *value, size_t value_len,
		     uint32_t slot_off, const struct eng_cmp *cmp)
{
	if (!t || t->state != TXN_NEW)
		return LP_ERR(LP_E_INVAL);
	lp_err rc = eng__key_ok(key, key_len);
	if (rc)
		return rc;
	if (value_len > ENG_VALUE_MAX)
		return LP_ERR(LP_E_VALTOOLARGE);
	if (slot_off != ENG_NO_SLOT && slot_off > value_len)
		return LP_ERR(LP_E_INVAL);
	if (cmp && (cmp->kind < ENG_CMP_NONE || cmp->kind > ENG_CMP_MOD_PREV))
		return LP_ERR(LP_E_INVAL);
	if (has_key(t, key, key_len))
		return LP_ERR(LP_E_INVAL);
	if (dup_reserve(t) != LP_OK)
		return LP_ERR(LP_E_NOMEM);
	if (t->n_ops == t->cap_ops) {
		int cap = t->cap_ops ? t->cap_ops * 2 : 4;
		struct op *ops = realloc(t->ops, (size_t)cap * sizeof *ops);
		if (!ops)
			return LP_ERR(LP_E_NOMEM);
		t->ops = ops;
		t->cap_ops = cap;
	}
	struct op *op = &t->ops[t->n_ops];
	memset(op, 0, sizeof *op);
	op->type = type;
	op->key = malloc(key_len + value_len + 1);
	if (!op->key)
		return LP_ERR(LP_E_NOMEM);
	memcpy(op->key, key, key_len);
	op->key_len = key_len;
	op->val = op->key + key_len;
	if (value_len)
		memcpy(op->val, value, value_len);
	op->val_len = value_len;
	op->slot_off = slot_off;
	if (cmp)
		op->cmp = *cmp;
	if (cmp && cmp->kind == ENG_CMP_MOD_PREV)
		t->cmp_prev = true;
	t->n_ops++;
	if (t->dup_cap)
		dup_insert(t, t->n_ops - 1);
	return LP_OK;
}

lp_err eng_txn_put(eng_txn *t, const void *key, size_t key_len,
		   const void *value, size_t value_len, uint32_t slot_off,
		   const struct eng_cmp *cmp)
{
	if (!value && value_len)
		return LP_ERR(LP_E_INVAL);
	return add_op(t, OP_PUT, key, key_len, value, value_len, slot_off, cmp);
}

lp_err eng_txn_del(eng_txn *t, const void *key, size_t key_len,
		   const struct eng_cmp *cmp)
{
	return add_op(t, OP_DEL, key, key_len, NULL, 0, ENG_NO_SLOT, cmp);
}

static void reset_results(eng_txn *t)
{
	for (int i = 0; i < t->n_ops; i++) {
		struct op *op = &t->ops[i];
		free(op->prev_buf);
		op->prev_buf = NULL;
		op->prev_len = 0;
		eng_event_unref(op->ev);
		op->ev = NULL;
	}
	t->rc = LP_OK;
	t->n_changes = 0;
	t->res.failed_op = -1;
	t->res.rev = 0;
}

void eng_txn_free(eng_txn *t)
{
	if (!t)
		return;
	LP_ASSERT(t->state != TXN_QUEUED);
	reset_results(t);
	for (int i = 0; i < t->n_ops; i++)
		free(t->ops[i].key);
	free(t->ops);
	free(t->dup_set);
	pthread_cond_destroy(&t->cv);
	free(t);
}

int eng_txn_result(eng_txn *t, int i, struct eng_record *prev,
		   struct eng_record *cur)
{
	if (!t || i < 0 || i >= t->n_ops)
		return 0;
	struct op *op = &t->ops[i];
	if (cur) {
		memset(cur, 0, sizeof *cur);
		if (op->ev && op->ev->type == ENG_EV_PUT)
			*cur = op->ev->rec;
	}
	if (prev)
		memset(prev, 0, sizeof *prev);
	if (!op->prev_buf)
		return 0;
	if (prev) {
		uint8_t ik[IK_MAX];
		size_t il = eng__ik(t->e, op->key, op->key_len, ik);
		MDB_val v = {op->prev_len, op->prev_buf};
		struct rec r;
		if (!eng__rec_decode(ik, il, &v, &r))
			return 0;
		if (r.key == ik)
			r.key = op->key;
		eng__rec_public(&r, prev);
	}
	return 1;
}

/* ------------------------------------------------------------ applying */

/* The state record of ik in the write txn, decoded; copies it to *copy. */
static int state_get(eng *e, MDB_txn *w, const uint8_t *ik, size_t il,
		     struct rec *out, MDB_val *raw)
{
	MDB_val k = {il, (void *)ik};
	int mrc = mdb_get(w, e->db_state, &k, raw);
	if (mrc)
		return mrc;
	if (!eng__rec_decode(ik, il, raw, out))
		return MDB_CORRUPTED;
	return 0;
}

static bool same_key(const struct rec *r, const struct op *op)
{
	return r->key_len == op->key_len &&
	       memcmp(r->key, op->key, op->key_len) == 0;
}

/* Check op's compare; prev_rev is the revision the txn's chain predecessor
   committed at (ENG_CMP_MOD_PREV). Returns 0 (pass), an lp_err (fail) or
   -mrc. */
static int check_cmp(eng *e, MDB_txn *w, struct op *op, int64_t prev_rev)
{
	uint8_t ik[IK_MAX];
	size_t il = eng__ik(e, op->key, op->key_len, ik);
	struct rec r;
	MDB_val raw;
	int mrc = state_get(e, w, ik, il, &r, &raw);
	if (mrc && mrc != MDB_NOTFOUND)
		return -mrc;
	bool present = mrc == 0;
	if (present && op->key_len > IK_SHORT_MAX && !same_key(&r, op)) {
		/* Two long keys under one hash: refuse the newcomer. */
		lp_warn("long key hash collision; refusing the write");
		return LP_E_KEYTOOLONG;
	}
	lp_err rc = LP_OK;
	switch (op->cmp.kind) {
	case ENG_CMP_NONE:
		break;
	case ENG_CMP_ABSENT:
		if (present)
			rc = LP_E_EXISTS;
		break;
	case ENG_CMP_PRESENT:
		if (!present)
			rc = LP_E_NOTFOUND;
		break;
	case ENG_CMP_MOD:
		if (!present)
			rc = LP_E_NOTFOUND;
		else if (r.h.mod_rev != op->cmp.mod_rev)
			rc = LP_E_CONFLICT;
		break;
	case ENG_CMP_MOD_PREV:
		if (!present)
			rc = LP_E_NOTFOUND;
		else if (r.h.mod_rev != prev_rev)
			rc = LP_E_CONFLICT;
		break;
	}
	if (rc && present) {
		op->prev_buf = malloc(raw.mv_size);
		if (op->prev_buf) {
			memcpy(op->prev_buf, raw.mv_data, raw.mv_size);
			op->prev_len = raw.mv_size;
		}
	}
	return (int)rc;
}

/* Build the stored bytes of a record: header, full key if long, value with
   the revision spliced at the slot (or slot_src's digits replaced). */
static uint8_t *build_rec(const struct rec_hdr *h0, const uint8_t *key,
			  size_t key_len, bool longkey, const uint8_t *val,
			  size_t val_len, uint32_t slot_off, uint32_t old_digits,
			  int64_t rev, size_t *out_len)
{
	char dig[24];
	size_t nd = slot_off == ENG_NO_SLOT ? 0 : eng__digits(rev, dig);
	size_t vlen = val_len - (slot_off == ENG_NO_SLOT ? 0 : old_digits) + nd;
	size_t klen = longkey ? key_len : 0;
	size_t n = sizeof(struct rec_hdr) + klen + vlen;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return NULL;
	struct rec_hdr h = *h0;
	h.flags = (h.flags & ~REC_LONGKEY) | (longkey ? REC_LONGKEY : 0);
	h.key_len = (uint32_t)klen;
	h.slot_off = slot_off;
	h.slot_len = (uint32_t)nd;
	memcpy(b, &h, sizeof h);
	uint8_t *p = b + sizeof h;
	if (klen)
		memcpy(p, key, klen);
	p += klen;
	if (slot_off == ENG_NO_SLOT) {
		if (val_len)
			memcpy(p, val, val_len);
	} else {
		if (slot_off)
			memcpy(p, val, slot_off);
		if (nd)
			memcpy(p + slot_off, dig, nd);
		if (val_len - slot_off - old_digits)
			memcpy(p + slot_off + nd, val + slot_off + old_digits,
			       val_len - slot_off - old_digits);
	}
	*out_len = n;
	return b;
}

static int log_put(eng *e, MDB_txn *w, int64_t rev, uint32_t idx,
		   enum eng_ev_type type, int64_t prev_mod, const struct op *op)
{
	uint8_t lk[LOGK_LEN];
	eng__logk(lk, rev, idx);
	uint8_t buf[sizeof(struct log_hdr) + ENG_KEY_MAX];
	struct log_hdr lh = {.type = (uint32_t)type,
			     .key_len = (uint32_t)op->key_len,
			     .prev_mod = prev_mod};
	memcpy(buf, &lh, sizeof lh);
	memcpy(buf + sizeof lh, op->key, op->key_len);
	MDB_val k = {LOGK_LEN, lk}, v = {sizeof lh + op->key_len, buf};
	return mdb_put(w, e->db_log, &k, &v, MDB_APPEND);
}

/* Apply one op at revision rev, change number *idx. Returns an mdb code. */
static int apply_op(eng *e, MDB_txn *w, struct op *op, int64_t rev,
		    uint32_t *idx, bool *changed)
{
	uint8_t ik[IK_MAX];
	size_t il = eng__ik(e, op->key, op->key_len, ik);
	bool longkey = op->key_len > IK_SHORT_MAX;
	struct rec prev;
	MDB_val raw;
	int mrc = state_get(e, w, ik, il, &prev, &raw);
	if (mrc && mrc != MDB_NOTFOUND)
		return mrc;
	bool present = mrc == 0;
	*changed = false;
	if (!present && op->type == OP_DEL)
		return 0;
	uint8_t hk[HK_MAX];
	if (present) {
		op->prev_buf = malloc(raw.mv_size);
		if (!op->prev_buf)
			return ENOMEM;
		memcpy(op->prev_buf, raw.mv_data, raw.mv_size);
		op->prev_len = raw.mv_size;
		/* Re-point prev into our copy: the put below may move pages. */
		MDB_val cv = {op->prev_len, op->prev_buf};
		eng__rec_decode(ik, il, &cv, &prev);
		if (prev.key == ik)
			prev.key = op->key;
		MDB_val hkv = {eng__hk(ik, il, prev.h.mod_rev, hk), hk};
		if ((mrc = mdb_put(w, e->db_hist, &hkv, &cv, 0)))
			return mrc;
	}
	uint32_t my_idx = (*idx)++;
	if (op->type == OP_PUT) {
		struct rec_hdr h = {
			.create_rev = present ? prev.h.create_rev : rev,
			.mod_rev = rev,
			.version = present ? prev.h.version + 1 : 1};
		size_t n;
		uint8_t *b = build_rec(&h, op->key, op->key_len, longkey,
				       op->val, op->val_len, op->slot_off, 0,
				       rev, &n);
		if (!b)
			return ENOMEM;
		MDB_val k = {il, ik}, v = {n, b};
		mrc = mdb_put(w, e->db_state, &k, &v, 0);
		if (!mrc)
			mrc = log_put(e, w, rev, my_idx, ENG_EV_PUT,
				      present ? prev.h.mod_rev : 0, op);
		if (!mrc) {
			struct rec cur;
			eng__rec_decode(ik, il, &v, &cur);
			if (cur.key == ik)
				cur.key = op->key;
			op->ev = eng__event_new(ENG_EV_PUT, rev, my_idx, &cur,
						present ? &prev : NULL);
			if (!op->ev)
				mrc = ENOMEM;
		}
		free(b);
		if (mrc)
			return mrc;
	} else {
		struct rec_hdr h = {.flags = REC_TOMB,
				    .slot_off = ENG_NO_SLOT,
				    .create_rev = prev.h.create_rev,
				    .mod_rev = rev,
				    .version = prev.h.version};
		size_t n;
		uint8_t *b = build_rec(&h, op->key, op->key_len, longkey, NULL,
				       0, ENG_NO_SLOT, 0, rev, &n);
		if (!b)
			return ENOMEM;
		MDB_val hkv = {eng__hk(ik, il, rev, hk), hk}, v = {n, b};
		mrc = mdb_put(w, e->db_hist, &hkv, &v, 0);
		free(b);
		MDB_val k = {il, ik};
		if (!mrc)
			mrc = mdb_del(w, e->db_state, &k, NULL);
		if (!mrc)
			mrc = log_put(e, w, rev, my_idx, ENG_EV_DEL,
				      prev.h.mod_rev, op);
		if (mrc)
			return mrc;
		op->ev = eng__event_del(rev, my_idx, &prev);
		if (!op->ev)
			return ENOMEM;
	}
	*changed = true;
	return 0;
}

/* A chained txn whose predecessor failed is not tried (engine.h). */
static void skip_chained(eng_txn *t, int64_t rev)
{
	t->rc = LP_E_AGAIN;
	t->res.rev = rev;
}

/* ------------------------------------------------------------ the log */

/* A group's record in the write-ahead log (wal.c): the number of txns,
   then for each txn that took a revision its revision and its ops, each
   with its key and value (before the revision slot is filled). Replaying
   them in order on the checkpoint's state applies exactly what the commit
   did: apply_op depends on nothing else. */
struct wal_txn {
	int64_t rev;
	uint32_t n_ops, pad;
};
struct wal_op {
	uint32_t type, key_len, val_len, slot_off;
};

static bool logged_txn(const eng_txn *t)
{
	return !t->rc && t->n_changes;
}

static size_t wal_size(const eng_txn *first, const eng_txn *stop)
{
	size_t n = 8;
	for (const eng_txn *t = first; t != stop; t = t->next) {
		if (!logged_txn(t))
			continue;
		n += sizeof(struct wal_txn);
		for (int i = 0; i < t->n_ops; i++)
			n += sizeof(struct wal_op) + t->ops[i].key_len +
			     t->ops[i].val_len;
	}
	return n;
}

static void wal_fill(uint8_t *p, const eng_txn *first, const eng_txn *stop)
{
	uint32_t n_txns = 0;
	uint8_t *q = p + 8;
	for (const eng_txn *t = first; t != stop; t = t->next) {
		if (!logged_txn(t))
			continue;
		n_txns++;
		struct wal_txn wt = {.rev = t->res.rev,
				     .n_ops = (uint32_t)t->n_ops};
		memcpy(q, &wt, sizeof wt);
		q += sizeof wt;
		for (int i = 0; i < t->n_ops; i++) {
			const struct op *op = &t->ops[i];
			struct wal_op wo = {.type = op->type,
					    .key_len = (uint32_t)op->key_len,
					    .val_len = (uint32_t)op->val_len,
					    .slot_off = op->slot_off};
			memcpy(q, &wo, sizeof wo);
			q += sizeof wo;
			memcpy(q, op->key, op->key_len);
			q += op->key_len;
			if (op->val_len)
				memcpy(q, op->val, op->val_len);
			q += op->val_len;
		}
	}
	memcpy(p, &n_txns, 4);
	memset(p + 4, 0, 4);
}

static int apply_op(eng *e, MDB_txn *w, struct op *op, int64_t rev,
		    uint32_t *idx, bool *changed);

/* One record's txns in one LMDB transaction. Returns an mdb code, or -1
   for a record that does not parse or does not follow the store. */
static int replay_once(eng *e, const uint8_t *p, size_t n)
{
	if (n < 8)
		return -1;
	uint32_t n_txns;
	memcpy(&n_txns, p, 4);
	size_t at = 8;
	MDB_txn *w;
	int mrc = mdb_txn_begin(e->env, NULL, 0, &w);
	if (mrc)
		return mrc;
	int64_t rev = atomic_load(&e->rev);
	for (uint32_t k = 0; k < n_txns; k++) {
		struct wal_txn wt;
		if (n - at < sizeof wt)
			goto bad;
		memcpy(&wt, p + at, sizeof wt);
		at += sizeof wt;
		bool skip = wt.rev <= rev; /* already in the checkpoint */
		if (!skip && wt.rev != rev + 1)
			goto bad;
		uint32_t idx = 0;
		for (uint32_t i = 0; i < wt.n_ops; i++) {
			struct wal_op wo;
			if (n - at < sizeof wo)
				goto bad;
			memcpy(&wo, p + at, sizeof wo);
			at += sizeof wo;
			if (wo.type > OP_DEL || wo.key_len == 0 ||
			    wo.key_len > ENG_KEY_MAX ||
			    wo.val_len > ENG_VALUE_MAX ||
			    n - at < (size_t)wo.key_len + wo.val_len ||
			    (wo.slot_off != ENG_NO_SLOT &&
			     wo.slot_off > wo.val_len))
				goto bad;
			struct op op = {.type = (enum op_type)wo.type,
					.key = (uint8_t *)p + at,
					.key_len = wo.key_len,
					.val = (uint8_t *)p + at + wo.key_len,
					.val_len = wo.val_len,
					.slot_off = wo.slot_off};
			at += (size_t)wo.key_len + wo.val_len;
			if (skip)
				continue;
			bool changed;
			mrc = apply_op(e, w, &op, wt.rev, &idx, &changed);
			free(op.prev_buf);
			eng_event_unref(op.ev);
			if (mrc)
				goto fail;
		}
		if (!skip)
			rev = wt.rev;
	}
	if (at != n)
		goto bad;
	if ((mrc = eng__rev_put(w, e, rev)) || (mrc = mdb_txn_commit(w)))
		return mrc;
	atomic_store(&e->rev, rev);
	return 0;
bad:
	mrc = -1;
fail:
	mdb_txn_abort(w);
	return mrc;
}

lp_err eng__wal_replay(eng *e, const uint8_t *p, size_t n)
{
	int mrc;
	while ((mrc = replay_once(e, p, n)) == MDB_MAP_FULL &&
	       eng__grow(e) == LP_OK)
		;
	if (mrc == -1)
		return LP_ERR(LP_E_CORRUPT);
	return mrc ? eng__from_mdb(mrc, "replay") : LP_OK;
}

struct cmp_run;
static int slice_run(eng *e, MDB_txn *w, struct cmp_run *cr);
static void slice_done(eng *e, struct cmp_run *cr, bool folded);

/* Set *at (e->rev or e->vis_rev) to v and wake the readers waiting in
   eng__wait_durable, which test both under rev_mu. */
static void store_and_wake(eng *e, _Atomic int64_t *at, int64_t v)
{
	pthread_mutex_lock(&e->rev_mu);
	atomic_store(at, v);
	pthread_cond_broadcast(&e->rev_cv);
	pthread_mutex_unlock(&e->rev_mu);
}

/* Run txns [first, stop) in one LMDB write transaction, with a slice of the
   running compaction cr (NULL: none) after them. Returns an mdb code: 0,
   MDB_MAP_FULL (nothing committed) or another failure. */
static int run_group(eng *e, eng_txn *first, eng_txn *stop, struct cmp_run *cr)
{
	MDB_txn *w;
	int mrc = mdb_txn_begin(e->env, NULL, 0, &w);
	if (mrc)
		return mrc;
	int64_t rev0 = atomic_load(&e->rev), rev = rev0;
	bool prev_failed = false;
	for (eng_txn *t = first; t != stop; t = t->next) {
		reset_results(t);
		if (t->chained && prev_failed) {
			skip_chained(t, rev);
			continue;
		}
		prev_failed = true; /* until it has been applied */
		/* The predecessor ran before t: in this group, or (at the
		   maximum size) in an earlier one-txn group. */
		int64_t prev_rev = t->chain_prev ? t->chain_prev->res.rev : 0;
		int failed = 0;
		for (int i = 0; i < t->n_ops; i++) {
			int c = check_cmp(e, w, &t->ops[i], prev_rev);
			if (c < 0) {
				mrc = -c;
				goto fail;
			}
			if (c > 0) {
				t->rc = (lp_err)c;
				t->res.failed_op = i;
				failed = 1;
				break;
			}
		}
		if (failed) {
			t->res.rev = rev;
			continue;
		}
		uint32_t idx = 0;
		for (int i = 0; i < t->n_ops; i++) {
			bool changed;
			mrc = apply_op(e, w, &t->ops[i], rev + 1, &idx, &changed);
			if (mrc)
				goto fail;
		}
		t->n_changes = (int)idx;
		if (idx)
			rev++;
		t->res.rev = rev;
		prev_failed = false;
	}
	if (cr && (mrc = slice_run(e, w, cr)))
		goto fail;
	if ((mrc = eng__rev_put(w, e, rev)))
		goto fail;
	/* The write-ahead log: the record is durable before the commit is
	   visible (wal.c, invariant 1). */
	size_t wlen = 0;
	bool logged = false, force = false;
	if (e->wal && rev != rev0) {
		wlen = wal_size(first, stop);
		uint8_t *p = eng__wal_buf(e, wlen);
		if (!p) {
			mrc = ENOMEM;
			goto fail;
		}
		wal_fill(p, first, stop);
		int r = eng__wal_log(e, wlen);
		if (r == EFBIG)
			force = true;
		else if (r) {
			mrc = r;
			goto fail;
		} else
			logged = true;
	}
	/* Invariant 8: readers wait for the flush from before the commit is
	   visible. rcache.c's seqlock: odd from before the commit is
	   visible. */
	if (logged)
		atomic_store(&e->vis_rev, rev);
	atomic_fetch_add(&e->cache_seq, 1);
	mrc = mdb_txn_commit(w);
	atomic_fetch_add(&e->cache_seq, 1);
	if (mrc) {
		if (logged) {
			/* a reader waiting for rev knows better now */
			eng__wal_unlog(e, wlen);
			store_and_wake(e, &e->vis_rev, rev0);
		}
		return mrc;
	}
	if (logged && eng__wal_flush(e)) {
		/* no reader may wait for a flush that failed */
		store_and_wake(e, &e->rev, rev);
		return EIO; /* visible, not durable: the log is broken */
	}
	atomic_store(&e->rev, rev);
	if (force && eng__wal_checkpoint(e))
		return EIO; /* visible, not durable: the log is broken */
	if (e->wal)
		eng__wal_committed(e);
	return 0;
fail:
	mdb_txn_abort(w);
	return mrc;
}

/* Bring the prefix counts (count.c) from revision `from` across the
   committed txns [first, stop): +1 per create, -1 per delete. */
static void update_counts(eng *e, eng_txn *first, eng_txn *stop, int64_t from)
{
	int64_t to = atomic_load(&e->rev);
	if (to == from)
		return;
	if (eng__counts_begin(e, from)) {
		for (eng_txn *t = first; t != stop; t = t->next) {
			for (int i = 0; !t->rc && i < t->n_ops; i++) {
				const struct op *op = &t->ops[i];
				if (!op->ev)
					continue; /* changed nothing */
				int d = op->type == OP_DEL ? -1
					: op->prev_buf	   ? 0
							   : 1;
				if (d)
					eng__counts_key(e, op->key,
							op->key_len, d);
			}
		}
	}
	eng__counts_end(e, to);
}

static void finish(eng *e, eng_txn *first, eng_txn *stop, uint64_t group,
		   int64_t from)
{
	update_counts(e, first, stop, from);
	/* Publish every change of the group in order, then acknowledge. */
	size_t n = 0;
	for (eng_txn *t = first; t != stop; t = t->next)
		if (!t->rc)
			n += (size_t)t->n_changes;
	if (n) {
		eng_event **evs = malloc(n * sizeof *evs);
		size_t k = 0;
		if (evs) {
			for (eng_txn *t = first; t != stop; t = t->next) {
				if (t->rc)
					continue;
				for (int i = 0; i < t->n_ops; i++)
					if (t->ops[i].ev)
						evs[k++] = t->ops[i].ev;
			}
			eng__publish(e, evs, k);
			free(evs);
		} else {
			/* Without memory for the list, publish one by one. */
			for (eng_txn *t = first; t != stop; t = t->next)
				for (int i = 0; !t->rc && i < t->n_ops; i++)
					if (t->ops[i].ev)
						eng__publish(e, &t->ops[i].ev, 1);
		}
	}
	for (eng_txn *t = first; t != stop; t = t->next) {
		t->res.group = group;
		if (!t->rc)
			atomic_fetch_add(&e->txns, 1);
	}
	pthread_mutex_lock(&e->rev_mu);
	pthread_cond_broadcast(&e->rev_cv);
	pthread_mutex_unlock(&e->rev_mu);
}

/* LMDB reports a short write (the disk filled during it) as EIO: with
   under this much left on the store's file system it is a full disk. */
#define FULL_DISK_LEFT (16u << 20)

static lp_err mdb_to_err(eng *e, int mrc)
{
	struct statvfs vfs;
	if (mrc == EIO && statvfs(e->dir, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < FULL_DISK_LEFT) {
		lp_error("%s: lmdb commit: input/output error with %llu bytes "
			 "left on the file system: the disk is full",
			 e->dir,
			 (unsigned long long)vfs.f_bavail * vfs.f_frsize);
		return LP_ERR(LP_E_FULL);
	}
	return eng__from_mdb(mrc, "commit");
}

/* Keep pk's wake for after the group's unlock; false: out of memory. */
static bool note_wake(struct wq *q, const struct eng_parker *pk)
{
	if (q->n_wakes == q->cap_wakes) {
		size_t cap = q->cap_wakes ? 2 * q->cap_wakes : 64;
		struct eng_parker *w = realloc(q->wakes, cap * sizeof *w);
		if (!w)
			return false;
		q->wakes = w;
		q->cap_wakes = cap;
	}
	q->wakes[q->n_wakes++] = *pk;
	return true;
}

/* Commit a group taken from the queue; every txn gets its rc. With cr, a
   slice of that running compaction shares the group's transaction (and its
   fsync); should the group fail with it, it is retried without it, so that
   compaction never fails a write. */
static void commit_group(eng *e, eng_txn *head, struct cmp_run *cr)
{
	struct wq *q = e->wq;
	int mrc;
	int64_t from = atomic_load(&e->rev); /* the writer alone moves it */
	eng__reader_check(e, false);
	eng__prealloc(e);
	for (;;) {
		mrc = run_group(e, head, NULL, cr);
		if (mrc == MDB_MAP_FULL && eng__grow(e) == LP_OK)
			continue;
		if (mrc && cr) {
			cr = NULL;
			continue;
		}
		break;
	}
	/* Group numbers count successful LMDB commits, one per on_commit call. */
	uint64_t group = q->group_seq;
	if (mrc == MDB_MAP_FULL) {
		/* At the maximum size: one txn at a time, so that the ones
		   that fit still commit. */
		bool prev_failed = false;
		for (eng_txn *t = head; t; t = t->next) {
			if (t->chained && prev_failed) {
				reset_results(t);
				skip_chained(t, atomic_load(&e->rev));
				continue;
			}
			eng_txn *next = t->next;
			t->next = NULL;
			from = atomic_load(&e->rev);
			int m = run_group(e, t, NULL, NULL);
			prev_failed = m || t->rc;
			if (m) {
				reset_results(t);
				t->rc = mdb_to_err(e, m);
				t->res.rev = atomic_load(&e->rev);
			} else {
				group = ++q->group_seq;
				if (e->on_commit)
					e->on_commit(e->hook_ud, group);
				atomic_fetch_add(&e->groups, 1);
				finish(e, t, NULL, group, from);
			}
			t->next = next;
		}
	} else if (mrc) {
		for (eng_txn *t = head; t; t = t->next) {
			reset_results(t);
			t->rc = mdb_to_err(e, mrc);
			t->res.rev = atomic_load(&e->rev);
		}
	} else {
		group = ++q->group_seq;
		if (e->on_commit)
			e->on_commit(e->hook_ud, group);
		atomic_fetch_add(&e->groups, 1);
		finish(e, head, NULL, group, from);
		if (cr)
			slice_done(e, cr, true);
	}
	eng__quota_update(e, false);
	pthread_mutex_lock(&q->mu);
	q->n_wakes = 0;
	for (eng_txn *t = head; t;) {
		eng_txn *next = t->next;
		t->next = NULL;
		if (t->res.group == 0)
			t->res.group = group;
		t->res.rc = t->rc;
		const struct eng_parker *pk = t->parker;
		t->state = TXN_DONE;
		/* Wake only this txn's caller: a broadcast to every waiter
		   would also wake those queued for the next group. A parked
		   caller may free t as soon as it is done: its wake is
		   copied first, and called after the unlock. */
		if (!pk)
			pthread_cond_signal(&t->cv);
		else if (!note_wake(q, pk))
			pk->wake(pk->ud); /* no memory: under the lock */
		t = next;
	}
	pthread_mutex_unlock(&q->mu);
	for (size_t i = 0; i < q->n_wakes; i++)
		q->wakes[i].wake(q->wakes[i].ud);
}

/* Commit the queue on the caller's thread (invariant 6). Call with q->mu
   held and q->busy clear; returns with q->mu held. */
static void lead_group(eng *e)
{
	struct wq *q = e->wq;
	eng_txn *head = q->head;
	q->head = NULL;
	q->tail = &q->head;
	q->busy = true;
	pthread_mutex_unlock(&q->mu);
	commit_group(e, head, NULL);
	pthread_mutex_lock(&q->mu);
	q->busy = false;
	atomic_fetch_add(&e->led_groups, 1);
	/* What queued meanwhile (and a stop) is the writer thread's. */
	if (q->head || q->creqs || q->stop)
		pthread_cond_signal(&q->cv);
}

/* Queue ts[0..n) one after the other, under one lock so that the writer
   takes them into the same group, and wait until all are done. */
static lp_err submit(eng_txn *const *ts, size_t n)
{
	eng *e = ts[0]->e;
	struct wq *q = e->wq;
	pthread_mutex_lock(&q->mu);
	if (q->stop) {
		pthread_mutex_unlock(&q->mu);
		return LP_E_CLOSED;
	}
	/* A parked caller is woken once, by the last txn: the writer marks
	   a chain's txns done together, under one lock. */
	bool in_read = eng__gate_held();
	const struct eng_parker *pk = in_read ? NULL : tls_parker;
	/* Invariants 6 and 7: a parked caller leads only where a commit
	   never waits for the disk. */
	bool lead = !in_read && (!pk || e->nosync) && !q->busy && !q->creqs;
	if (lead)
		pk = NULL;
	for (size_t i = 0; i < n; i++) {
		eng_txn *t = ts[i];
		t->state = TXN_QUEUED;
		t->chained = i > 0;
		t->chain_prev = i > 0 ? ts[i - 1] : NULL;
		t->parker = i == n - 1 ? pk : NULL;
		t->next = NULL;
		*q->tail = t;
		q->tail = &t->next;
	}
	if (lead)
		lead_group(e);
	else
		pthread_cond_signal(&q->cv);
	if (pk) {
		while (ts[n - 1]->state != TXN_DONE) {
			pthread_mutex_unlock(&q->mu);
			pk->park(pk->ud);
			pthread_mutex_lock(&q->mu);
		}
	}
	for (size_t i = 0; i < n; i++)
		while (ts[i]->state != TXN_DONE)
			pthread_cond_wait(&ts[i]->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
	return LP_OK;
}

void eng__wait_durable(eng *e, int64_t v)
{
	if (atomic_load(&e->rev) >= v)
		return;
	pthread_mutex_lock(&e->rev_mu);
	for (;;) {
		int64_t now = atomic_load(&e->vis_rev);
		if (now < v)
			v = now;
		if (atomic_load(&e->rev) >= v || atomic_load(&e->closing))
			break;
		pthread_cond_wait(&e->rev_cv, &e->rev_mu);
	}
	pthread_mutex_unlock(&e->rev_mu);
}

/* Over the quota a txn that puts fails at once (etcd's capped applier:
   deletes go on, and free the pages that let puts come back). */
static bool over_quota(eng_txn *const *ts, size_t n)
{
	if (!atomic_load_explicit(&ts[0]->e->over_quota, memory_order_relaxed))
		return false;
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < ts[i]->n_ops; j++)
			if (ts[i]->ops[j].type == OP_PUT)
				return true;
	return false;
}

lp_err eng_txn_commit(eng_txn *t, struct eng_commit_res *res)
{
	if (!t || t->state != TXN_NEW || t->cmp_prev)
		return LP_ERR(LP_E_INVAL);
	if (over_quota(&t, 1))
		return LP_E_FULL;
	lp_err rc = submit(&t, 1);
	if (rc)
		return rc;
	if (res)
		*res = t->res;
	return t->rc;
}

lp_err eng_txn_commit_chain(eng_txn *const *ts, size_t n,
			    struct eng_commit_res *res)
{
	if (!ts || n == 0 || n > ENG_CHAIN_MAX || !ts[0] || ts[0]->cmp_prev)
		return LP_ERR(LP_E_INVAL);
	for (size_t i = 0; i < n; i++) {
		if (!ts[i] || ts[i]->state != TXN_NEW || ts[i]->e != ts[0]->e)
			return LP_ERR(LP_E_INVAL);
		for (size_t j = 0; j < i; j++)
			if (ts[j] == ts[i])
				return LP_ERR(LP_E_INVAL);
	}
	if (over_quota(ts, n))
		return LP_E_FULL;
	lp_err rc = submit(ts, n);
	if (rc)
		return rc;
	lp_err first = LP_OK;
	for (size_t i = 0; i < n; i++) {
		if (res)
			res[i] = ts[i]->res;
		if (!first)
			first = ts[i]->rc;
	}
	return first;
}

/* ------------------------------------------------------------ compaction */

/* What one compaction slice has done and may still do. */
struct step_budget {
	int64_t end_ns;
	int work;     /* entries visited, and one per key looked up */
	int entries;  /* hist entries walked */
	size_t bytes; /* key and value bytes of the entries deleted */
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void budget_start(struct step_budget *b)
{
	b->end_ns = mono_ns() + COMPACT_STEP_NS;
	b->work = 0;
	b->entries = 0;
	b->bytes = 0;
}

/* Whether the slice may do one more unit of work. The first unit always
   may: however slow the machine, every slice makes progress. */
static bool budget_left(const struct step_budget *b)
{
	if (b->work == 0)
		return true;
	return b->work < ENG_COMPACT_STEP_MAX &&
	       b->bytes < ENG_COMPACT_STEP_BYTES && mono_ns() < b->end_ns;
}

/*
 * Begin a compaction step's transaction with MDB_NOMETASYNC, LMDB's
 * per-transaction flag for "sync the data pages, not the meta page". Debian's
 * LMDB 0.9.24 does not honour it at commit: strace shows the meta page still
 * written through LMDB's O_DSYNC descriptor, so a step costs the same two
 * flushes as any commit (what session 16's S5 figures measured). Where it is
 * honoured, the meta page reaches the disk with the next synced commit (a
 * write group's, or do_compact's closing sync); LMDB keeps atomicity and
 * consistency, and a system crash may undo the last step, which only
 * leaves history that the next compaction deletes (eng_int.h, invariant
 * 4). Never MDB_NOSYNC here: a meta page on disk must never point at
 * unsynced pages.
 */
static int step_begin(eng *e, MDB_txn **w)
{
	return mdb_txn_begin(e->env, NULL, MDB_NOMETASYNC, w);
}

/* The newest hist entry of ik at or below target (r*): its revision (0:
   none) and whether it is a tombstone. Returns 0 or an mdb code. */
static int find_rstar(eng *e, MDB_txn *w, const uint8_t *ik, size_t il,
		      int64_t target, int64_t *rstar, bool *tomb)
{
	uint8_t hk[HK_MAX];
	MDB_val q = {eng__hk(ik, il, target + 1, hk), hk}, qv;
	MDB_cursor *c2;
	*rstar = 0;
	*tomb = false;
	int mrc = mdb_cursor_open(w, e->db_hist, &c2);
	if (mrc)
		return mrc;
	int m2 = mdb_cursor_get(c2, &q, &qv, MDB_SET_RANGE);
	m2 = m2 == MDB_NOTFOUND ? mdb_cursor_get(c2, &q, &qv, MDB_LAST)
	     : m2		? m2
				: mdb_cursor_get(c2, &q, &qv, MDB_PREV);
	if (!m2 && q.mv_size == il + 9 && memcmp(q.mv_data, ik, il) == 0 &&
	    ((uint8_t *)q.mv_data)[il] == 0) {
		struct rec hr;
		*rstar = eng__hk_rev(q.mv_data, q.mv_size);
		if (eng__rec_decode(ik, il, &qv, &hr))
			*tomb = (hr.h.flags & REC_TOMB) != 0;
	}
	mdb_cursor_close(c2);
	return m2 == MDB_NOTFOUND ? 0 : m2;
}

/* The mod_rev of ik's state record, 0 when it has none. */
static int state_mod_rev(eng *e, MDB_txn *w, const uint8_t *ik, size_t il,
			 int64_t *mod)
{
	MDB_val sk = {il, (void *)ik}, sv;
	*mod = 0;
	int m2 = mdb_get(w, e->db_state, &sk, &sv);
	if (m2 == MDB_NOTFOUND)
		return 0;
	if (!m2) {
		struct rec sr;
		if (eng__rec_decode(ik, il, &sv, &sr))
			*mod = sr.h.mod_rev;
	}
	return m2;
}

/* A compaction in progress. A slice of it (a step of its own, or folded
   into a write group's transaction) computes where the next one starts
   (next*); slice_done adopts that once the slice's transaction committed, so
   a slice that is rolled back (MDB_MAP_FULL, a failed group) is simply run
   again. */
struct cmp_run {
	int64_t target;
	bool in_log;		/* hist is done; now the log */
	bool finished;		/* both are done */
	uint8_t resume[HK_MAX]; /* hist seek key (see compact_hist_slice) */
	size_t resume_len;
	uint8_t next[HK_MAX];
	size_t next_len;
	bool next_finished;
	struct step_budget b;
};

/*
 * A bounded slice of compacting hist to target in w, from the seek key
 * cr->resume (empty at the start): an ik\x01 to start at the next ik, or a
 * whole hist key to go on within one ik. Returns 0 or an mdb code. Rule per
 * ik (see eng_int.h): with r* the newest hist entry at or below target, drop
 * entries older than r*, and r* itself when it is a tombstone or the state
 * record is at or below target.
 *
 * A slice may stop in the middle of an ik; the next one finds r* and the
 * state afresh. Between the two, a write to that key can only add a hist
 * entry newer than all of the key's others (eng_int.h, invariant 3), which
 * becomes r* if at or below target: what was deleted was older than the old
 * r*, so older than the new one too.
 */
static int compact_hist_slice(eng *e, MDB_txn *w, struct cmp_run *cr)
{
	struct step_budget *b = &cr->b;
	int64_t target = cr->target;
	MDB_cursor *c;
	int mrc = mdb_cursor_open(w, e->db_hist, &c);
	if (mrc)
		return mrc;
	cr->next_finished = false;
	uint8_t *next = cr->next;
	size_t next_len = cr->resume_len;
	memcpy(next, cr->resume, next_len);
	MDB_val k = {next_len, next}, v;
	mrc = mdb_cursor_get(c, &k, &v, next_len ? MDB_SET_RANGE : MDB_FIRST);
	bool stopped = false;
	while (!stopped && budget_left(b)) {
		if (mrc == MDB_NOTFOUND) {
			cr->next_finished = true;
			mrc = 0;
			break;
		}
		if (mrc)
			goto out;
		uint8_t ik[IK_MAX];
		size_t il = k.mv_size - 9;
		memcpy(ik, k.mv_data, il);
		/* The state record bounds what hist must keep. */
		int64_t s_mod, rstar;
		bool rstar_tomb;
		if ((mrc = state_mod_rev(e, w, ik, il, &s_mod)) ||
		    (mrc =
			 find_rstar(e, w, ik, il, target, &rstar, &rstar_tomb)))
			goto out;
		b->work++;
		bool drop_rstar = rstar_tomb || (s_mod && s_mod <= target);
		/* Walk this ik's entries up to r*. */
		uint8_t dk[HK_MAX]; /* the key just deleted */
		for (;;) {
			if (k.mv_size != il + 9 ||
			    memcmp(k.mv_data, ik, il) != 0 ||
			    ((uint8_t *)k.mv_data)[il] != 0)
				break;
			int64_t r = eng__hk_rev(k.mv_data, k.mv_size);
			if (r > rstar || rstar == 0)
				break;
			if (b->entries && !budget_left(b)) {
				/* Out of budget: the next slice starts at
				   this entry. */
				memcpy(next, k.mv_data, k.mv_size);
				next_len = k.mv_size;
				stopped = true;
				break;
			}
			b->work++;
			b->entries++;
			if (r < rstar || drop_rstar) {
				/* Re-seek the deleted key's successor from a
				   copy of the key: k points into the page,
				   whose nodes the delete moves, so seeking from
				   k would land on whatever moved there and skip
				   versions. */
				b->bytes += k.mv_size + v.mv_size;
				memcpy(dk, k.mv_data, k.mv_size);
				k.mv_data = dk;
				if ((mrc = mdb_del(w, e->db_hist, &k, NULL)))
					goto out;
				mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
			} else {
				mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
			}
			if (mrc == MDB_NOTFOUND)
				break;
			if (mrc)
				goto out;
		}
		if (stopped)
			break;
		/* On to the next ik. */
		memcpy(next, ik, il);
		next[il] = 1;
		next_len = il + 1;
		k.mv_data = next;
		k.mv_size = il + 1;
		mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	}
	/* Out of budget after a seek: NOTFOUND is for the next slice to see. */
	if (mrc == MDB_NOTFOUND)
		mrc = 0;
	if (mrc)
		goto out;
	cr->next_len = next_len;
out:
	mdb_cursor_close(c);
	return mrc;
}

/* A bounded slice of dropping log entries at or below target in w. */
static int compact_log_slice(eng *e, MDB_txn *w, struct cmp_run *cr)
{
	MDB_cursor *c;
	int mrc = mdb_cursor_open(w, e->db_log, &c);
	if (mrc)
		return mrc;
	cr->next_finished = false;
	MDB_val k, v;
	while (budget_left(&cr->b)) {
		mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
		if (mrc == MDB_NOTFOUND ||
		    (!mrc && (int64_t)eng__get_be64(k.mv_data) > cr->target)) {
			cr->next_finished = true;
			mrc = 0;
			break;
		}
		if (mrc)
			break;
		size_t n = k.mv_size + v.mv_size;
		if ((mrc = mdb_cursor_del(c, 0)))
			break;
		cr->b.work++;
		cr->b.bytes += n;
	}
	mdb_cursor_close(c);
	return mrc;
}

/* Run the running compaction's next slice in w (not committed yet). */
static int slice_run(eng *e, MDB_txn *w, struct cmp_run *cr)
{
	budget_start(&cr->b);
	return cr->in_log ? compact_log_slice(e, w, cr)
			  : compact_hist_slice(e, w, cr);
}

/* The slice's transaction committed: adopt where it left off, count it. */
static void slice_done(eng *e, struct cmp_run *cr, bool folded)
{
	if (!cr->in_log) {
		memcpy(cr->resume, cr->next, cr->next_len);
		cr->resume_len = cr->next_len;
		cr->in_log = cr->next_finished;
	} else {
		cr->finished = cr->next_finished;
	}
	uint64_t n = atomic_fetch_add(&e->cmp_steps, 1) + 1;
	if (folded)
		atomic_fetch_add(&e->cmp_folded, 1);
	if ((uint64_t)cr->b.work > atomic_load(&e->cmp_step_most))
		atomic_store(&e->cmp_step_most, (uint64_t)cr->b.work);
	if (cr->b.bytes > atomic_load(&e->cmp_step_bytes_most))
		atomic_store(&e->cmp_step_bytes_most, cr->b.bytes);
	if (e->on_compact_step)
		e->on_compact_step(e->hook_ud, n);
}

/* A slice in a transaction of its own (no write was waiting). */
static int compact_step(eng *e, struct cmp_run *cr)
{
	MDB_txn *w;
	int mrc = step_begin(e, &w);
	if (mrc)
		return mrc;
	if ((mrc = slice_run(e, w, cr))) {
		mdb_txn_abort(w);
		return mrc;
	}
	return mdb_txn_commit(w);
}

/* Record the compacted revision (a step's transaction: see step_begin). */
static int set_compacted(eng *e, int64_t target)
{
	MDB_txn *w;
	int mrc = step_begin(e, &w);
	if (mrc)
		return mrc;
	if ((mrc = eng__meta_put_i64(w, e, "compacted", target))) {
		mdb_txn_abort(w);
		return mrc;
	}
	return mdb_txn_commit(w);
}

/* Run an mdb step, growing the map on MDB_MAP_FULL. */
#define WITH_GROWTH(e, call)                                                  \
	({                                                                    \
		int m_;                                                       \
		while ((m_ = (call)) == MDB_MAP_FULL && eng__grow(e) == LP_OK) \
			;                                                     \
		m_;                                                           \
	})

static bool take_and_commit(eng *e, struct cmp_run *cr);

uint64_t eng__queued(eng *e)
{
	uint64_t n = 0;
	pthread_mutex_lock(&e->wq->mu);
	for (eng_txn *t = e->wq->head; t; t = t->next)
		n++;
	pthread_mutex_unlock(&e->wq->mu);
	return n;
}

static lp_err do_compact(eng *e, int64_t target, int64_t *done)
{
	int64_t rev = atomic_load(&e->rev);
	if (target > rev)
		target = rev;
	target = eng__pin_clamp(e, target);
	int64_t cur = atomic_load(&e->compacted);
	if (target <= cur) {
		*done = cur;
		return LP_OK;
	}
	/* First make the new bound visible, then delete: a read that sees the
	   deletions also sees the bound. */
	int mrc = WITH_GROWTH(e, set_compacted(e, target));
	if (mrc)
		return eng__from_mdb(mrc, "compact meta");
	atomic_store(&e->compacted, target);
	/* Slices until done: folded into the group of the writes queued
	   meanwhile, which then pay no extra fsync and no wait for a step;
	   in a step of their own when none is waiting. */
	struct cmp_run *cr = calloc(1, sizeof *cr);
	if (!cr)
		return LP_ERR(LP_E_NOMEM);
	cr->target = target;
	while (!cr->finished) {
		if (take_and_commit(e, cr))
			continue;
		mrc = WITH_GROWTH(e, compact_step(e, cr));
		if (mrc) {
			free(cr);
			return eng__from_mdb(mrc, "compact");
		}
		slice_done(e, cr, false);
	}
	free(cr);
	/* The steps left their meta pages unsynced: make the result durable
	   before reporting it (a no-op in nosync mode). */
	if (e->wal) {
		lp_err rc = eng__wal_checkpoint(e); /* wal.c, invariant 4 */
		if (rc)
			return rc;
	} else if ((mrc = mdb_env_sync(e->env, 0)))
		return eng__from_mdb(mrc, "compact sync");
	eng__quota_update(e, true); /* what it freed lets puts back in */
	*done = target;
	return LP_OK;
}

static int bump_txn(eng *e, int64_t new_rev)
{
	MDB_txn *w;
	int mrc = mdb_txn_begin(e->env, NULL, 0, &w);
	if (mrc)
		return mrc;
	if ((mrc = mdb_drop(w, e->db_hist, 0)) ||
	    (mrc = mdb_drop(w, e->db_log, 0)) ||
	    (mrc = eng__rev_put(w, e, new_rev)) ||
	    (mrc = eng__meta_put_i64(w, e, "compacted", new_rev))) {
		mdb_txn_abort(w);
		return mrc;
	}
	return mdb_txn_commit(w);
}

static lp_err do_bump(eng *e, int64_t bump, int64_t *out)
{
	int64_t nr = atomic_load(&e->rev) + bump;
	int mrc = WITH_GROWTH(e, bump_txn(e, nr));
	if (mrc)
		return eng__from_mdb(mrc, "bump");
	atomic_store(&e->vis_rev, nr);
	atomic_store(&e->rev, nr);
	atomic_store(&e->compacted, nr);
	lp_err rc = eng__wal_checkpoint(e); /* wal.c, invariant 4 */
	if (rc)
		return rc;
	*out = nr;
	return LP_OK;
}

/* ------------------------------------------------------------ thread */

/* Commit what is queued, if anything, with a slice of cr; returns whether
   there was a group. */
static bool take_and_commit(eng *e, struct cmp_run *cr)
{
	struct wq *q = e->wq;
	pthread_mutex_lock(&q->mu);
	eng_txn *head = q->head;
	q->head = NULL;
	q->tail = &q->head;
	pthread_mutex_unlock(&q->mu);
	if (head)
		commit_group(e, head, cr);
	return head != NULL;
}

static void *writer_main(void *arg)
{
	eng *e = arg;
	pthread_setname_np(pthread_self(), "lapis-writer");
	struct wq *q = e->wq;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		/* A leading caller signals when it is done (invariant 6). */
		while (q->busy || (!q->head && !q->creqs && !q->stop))
			pthread_cond_wait(&q->cv, &q->mu);
		if (!q->head && !q->creqs)
			break; /* stopped and drained */
		q->busy = true;
		if (q->head) {
			eng_txn *head = q->head;
			q->head = NULL;
			q->tail = &q->head;
			pthread_mutex_unlock(&q->mu);
			commit_group(e, head, NULL);
			pthread_mutex_lock(&q->mu);
			q->busy = false;
			continue;
		}
		struct cmp_req *cr = q->creqs;
		q->creqs = cr->next;
		pthread_mutex_unlock(&q->mu);
		lp_err rc;
		int64_t result = 0;
		if (cr->kind == CREQ_COMPACT)
			rc = do_compact(e, cr->target, &result);
		else
			rc = do_bump(e, cr->target, &result);
		pthread_mutex_lock(&q->mu);
		q->busy = false;
		cr->rc = rc;
		cr->result = result;
		cr->done = true;
		pthread_cond_broadcast(&q->done_cv);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static lp_err submit_creq(eng *e, enum cmp_req_kind kind, int64_t target,
			  int64_t *result)
{
	if (e->readonly)
		return LP_ERR(LP_E_INVAL);
	struct wq *q = e->wq;
	struct cmp_req cr = {.kind = kind, .target = target};
	pthread_mutex_lock(&q->mu);
	if (q->stop) {
		pthread_mutex_unlock(&q->mu);
		return LP_E_CLOSED;
	}
	struct cmp_req **pp = &q->creqs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = &cr;
	pthread_cond_signal(&q->cv);
	while (!cr.done)
		pthread_cond_wait(&q->done_cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
	if (!cr.rc && result)
		*result = cr.result;
	return cr.rc;
}

lp_err eng_compact(eng *e, int64_t rev, int64_t *done)
{
	if (!e || rev < 0)
		return LP_ERR(LP_E_INVAL);
	return submit_creq(e, CREQ_COMPACT, rev, done);
}

lp_err eng_bump(eng *e, int64_t bump, int64_t *new_rev)
{
	if (!e || bump < 1)
		return LP_ERR(LP_E_INVAL);
	return submit_creq(e, CREQ_BUMP, bump, new_rev);
}

lp_err eng__writer_start(eng *e)
{
	struct wq *q = calloc(1, sizeof *q);
	if (!q)
		return LP_ERR(LP_E_NOMEM);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_cond_init(&q->done_cv, NULL);
	q->tail = &q->head;
	e->wq = q;
	atomic_store(&e->vis_rev, atomic_load(&e->rev));
	if (pthread_create(&e->writer, NULL, writer_main, e)) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cv);
		pthread_cond_destroy(&q->done_cv);
		free(q);
		e->wq = NULL;
		return LP_ERR(LP_E_NOMEM);
	}
	e->writer_started = true;
	return LP_OK;
}

void eng__writer_stop(eng *e)
{
	struct wq *q = e->wq;
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (e->writer_started)
		pthread_join(e->writer, NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	pthread_cond_destroy(&q->done_cv);
	free(q->wakes);
	free(q);
	e->wq = NULL;
}
