/*
 * store.c -- see store.h.
 *
 * Invariants:
 *  1. A list is read at one revision: the first chunk's snapshot revision
 *     (or the token's / the requested one), every later chunk at_rev it,
 *     pinned so compaction cannot pass it while the list runs.
 *  2. A continue token's start key is joined to the request's own prefix:
 *     a token (even an edited one) never reads outside that prefix.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "object.h"
#include "store.h"

/* Objects per engine snapshot in a list: one short read transaction each. */
#define LIST_CHUNK 500

void reg_obj_free(struct reg_obj *o)
{
	free(o->bytes);
	json_decref(o->obj);
	memset(o, 0, sizeof *o);
}

lp_err reg_obj_decode(struct reg_obj *o)
{
	if (o->obj)
		return LP_OK;
	o->obj = reg_json_load(o->bytes, o->len, JSON_ALLOW_NUL, NULL);
	return o->obj ? LP_OK : LP_E_CORRUPT;
}

lp_err reg_get(eng *e, const struct reg_key *k, struct reg_obj *out)
{
	struct eng_copy c;
	lp_err rc = eng_get_copy(e, k->bytes, k->len, &c);
	if (rc)
		return rc;
	out->bytes = c.value;
	out->len = c.value_len;
	out->mod = c.mod_rev;
	out->obj = NULL;
	return LP_OK;
}

static lp_err add_sides(eng_txn *t, const struct reg_side *sides, int n)
{
	lp_err rc = LP_OK;
	for (int i = 0; !rc && i < n; i++) {
		const struct reg_side *sd = &sides[i];
		if (sd->del)
			rc = eng_txn_del(t, sd->key->bytes, sd->key->len, &sd->cmp);
		else
			rc = eng_txn_put(t, sd->key->bytes, sd->key->len, sd->value,
					 strlen(sd->value), ENG_NO_SLOT, &sd->cmp);
	}
	return rc;
}

/* obj as it is stored: resourceVersion emptied for the revision slot,
   canonical order (reg_encode). */
static lp_err encode_stored(json_t *obj, char **bytes, size_t *len,
			    uint32_t *slot)
{
	json_t *meta = json_object_get(obj, "metadata");
	if (json_is_object(meta))
		json_object_set_new(meta, "resourceVersion", json_string(""));
	return reg_encode(obj, bytes, len, slot);
}

/* bytes with rv_text in the revision slot, as a read would return them.
   NULL: no memory. */
static char *splice_rv(const char *bytes, size_t len, uint32_t slot,
		       const char *rv_text, size_t *out_len)
{
	size_t rl = rv_text ? strlen(rv_text) : 0;
	char *b = malloc(len + rl + 1);
	if (!b)
		return NULL;
	memcpy(b, bytes, slot);
	if (rl)
		memcpy(b + slot, rv_text, rl);
	memcpy(b + slot + rl, bytes + slot, len - slot + 1);
	*out_len = len + rl;
	return b;
}

lp_err reg_put(eng *e, const struct reg_key *k, json_t *obj,
	       const struct eng_cmp *cmp, bool dry, const char *rv_text,
	       char **out, size_t *out_len, int64_t *rev)
{
	if (!dry)
		return reg_put_sides(e, k, obj, cmp, NULL, 0, NULL, out,
				     out_len, rev);
	char *bytes;
	size_t len;
	uint32_t slot;
	lp_err rc = encode_stored(obj, &bytes, &len, &slot);
	if (rc)
		return rc;
	/* a dry run: the bytes a write would store, with rv_text spliced */
	*out = splice_rv(bytes, len, slot, rv_text, out_len);
	free(bytes);
	return *out ? LP_OK : LP_E_NOMEM;
}

/* A new txn with one put of the encoded bytes under k if cmp holds.
   Errors: LP_E_NOMEM, engine errors (nothing to free). */
static lp_err txn_of(eng *e, const struct reg_key *k, const char *bytes,
		     size_t len, uint32_t slot, const struct eng_cmp *cmp,
		     eng_txn **out)
{
	eng_txn *t;
	lp_err rc = eng_txn_new(e, &t);
	if (rc)
		return rc;
	rc = eng_txn_put(t, k->bytes, k->len, bytes, len, slot, cmp);
	if (rc) {
		eng_txn_free(t);
		return rc;
	}
	*out = t;
	return LP_OK;
}

/* txn_of obj, encoded as stored. */
static lp_err put_txn(eng *e, const struct reg_key *k, json_t *obj,
		      const struct eng_cmp *cmp, eng_txn **out)
{
	char *bytes;
	size_t len;
	uint32_t slot;
	lp_err rc = encode_stored(obj, &bytes, &len, &slot);
	if (rc)
		return rc;
	rc = txn_of(e, k, bytes, len, slot, cmp, out);
	free(bytes);
	return rc;
}

/* The stored bytes of a committed txn's first put, copied into *out. */
static lp_err put_result(eng_txn *t, char **out, size_t *out_len, int64_t *rev)
{
	struct eng_record cur;
	eng_txn_result(t, 0, NULL, &cur);
	char *b = malloc(cur.value_len + 1);
	if (!b)
		return LP_E_NOMEM;
	memcpy(b, cur.value, cur.value_len);
	b[cur.value_len] = 0;
	*out = b;
	*out_len = cur.value_len;
	if (rev)
		*rev = cur.mod_rev;
	return LP_OK;
}

/* Add the side keys to t (a txn_of), commit it, copy out its put's stored
   bytes, free t. */
static lp_err commit_put(eng_txn *t, const struct reg_side *sides,
			 int n_sides, int *failed_side, char **out,
			 size_t *out_len, int64_t *rev)
{
	lp_err rc = add_sides(t, sides, n_sides);
	struct eng_commit_res res = {.failed_op = -1};
	if (!rc)
		rc = eng_txn_commit(t, &res);
	if (rc && failed_side && res.failed_op > 0)
		*failed_side = res.failed_op - 1;
	if (!rc)
		rc = put_result(t, out, out_len, rev);
	eng_txn_free(t);
	return rc;
}

lp_err reg_put_sides(eng *e, const struct reg_key *k, json_t *obj,
		     const struct eng_cmp *cmp, const struct reg_side *sides,
		     int n_sides, int *failed_side, char **out, size_t *out_len,
		     int64_t *rev)
{
	if (failed_side)
		*failed_side = -1;
	eng_txn *t;
	lp_err rc = put_txn(e, k, obj, cmp, &t);
	if (rc)
		return rc;
	return commit_put(t, sides, n_sides, failed_side, out, out_len, rev);
}

lp_err reg_put_changed(eng *e, const struct reg_key *k, json_t *obj,
		       const struct eng_cmp *cmp, bool dry, const char *rv_text,
		       const struct reg_obj *cur, bool *unchanged, char **out,
		       size_t *out_len)
{
	char *bytes;
	size_t len;
	uint32_t slot;
	lp_err rc = encode_stored(obj, &bytes, &len, &slot);
	if (rc)
		return rc;
	size_t rl = strlen(rv_text);
	*unchanged = len + rl == cur->len && !memcmp(cur->bytes, bytes, slot) &&
		     !memcmp(cur->bytes + slot, rv_text, rl) &&
		     !memcmp(cur->bytes + slot + rl, bytes + slot, len - slot);
	if (*unchanged || dry) {
		*out = splice_rv(bytes, len, slot, rv_text, out_len);
		free(bytes);
		return *out ? LP_OK : LP_E_NOMEM;
	}
	eng_txn *t;
	rc = txn_of(e, k, bytes, len, slot, cmp, &t);
	free(bytes);
	if (rc)
		return rc;
	return commit_put(t, NULL, 0, NULL, out, out_len, NULL);
}

lp_err reg_put_then(eng *e, const struct reg_key *k, json_t *obj,
		    const struct eng_cmp *cmp, json_t *then, char **out,
		    size_t *out_len, int64_t *rev, lp_err *then_rc)
{
	static const struct eng_cmp after = {ENG_CMP_MOD_PREV, 0};
	eng_txn *ts[2] = {NULL, NULL};
	lp_err rc = put_txn(e, k, obj, cmp, &ts[0]);
	if (!rc)
		rc = put_txn(e, k, then, &after, &ts[1]);
	struct eng_commit_res res[2] = {{.rc = LP_E_AGAIN}, {.rc = LP_E_AGAIN}};
	if (!rc) {
		/* The call answers the first failure, or refuses the chain
		   before queueing it (res untouched). */
		lp_err crc = eng_txn_commit_chain(ts, 2, res);
		rc = res[0].rc == LP_OK ? LP_OK : crc;
	}
	if (!rc)
		rc = put_result(ts[0], out, out_len, rev);
	*then_rc = rc ? LP_E_AGAIN : res[1].rc;
	eng_txn_free(ts[0]);
	eng_txn_free(ts[1]);
	return rc;
}

lp_err reg_delete_sides(eng *e, const struct reg_key *k, int64_t mod,
			const struct reg_side *sides, int n_sides, int64_t *rev)
{
	eng_txn *t;
	lp_err rc = eng_txn_new(e, &t);
	if (rc)
		return rc;
	struct eng_cmp cmp = {ENG_CMP_MOD, mod};
	rc = eng_txn_del(t, k->bytes, k->len, &cmp);
	if (!rc)
		rc = add_sides(t, sides, n_sides);
	struct eng_commit_res cr = {0};
	if (!rc)
		rc = eng_txn_commit(t, &cr);
	eng_txn_free(t);
	if (rev)
		*rev = rc ? 0 : cr.rev;
	return rc;
}

lp_err reg_delete(eng *e, const struct reg_key *k, int64_t mod)
{
	return reg_delete_sides(e, k, mod, NULL, 0, NULL);
}

/* Tracks the last key taken, for the next chunk and the token. */
struct walk {
	reg_item_fn fn;
	void *ud;
	char *last;
	size_t last_len;
	size_t last_cap; /* bytes last can hold: grown, never shrunk */
	bool oom;
	bool stopped; /* fn said ENG_STOP: no further chunk */
};

static enum eng_take walk_cb(void *ud, const struct eng_record *rec)
{
	struct walk *w = ud;
	enum eng_take t = w->fn(w->ud, rec);
	if (t == ENG_STOP)
		w->stopped = true;
	if (t != ENG_TAKE)
		return t;
	/* every record taken passes here: grow the copy only when a longer
	   key comes, not once per record */
	if (rec->key_len + 1 > w->last_cap) {
		size_t cap = rec->key_len + 1 < 256 ? 256 : rec->key_len + 1;
		char *k = realloc(w->last, cap);
		if (!k) {
			w->oom = true;
			return ENG_STOP;
		}
		w->last = k;
		w->last_cap = cap;
	}
	memcpy(w->last, rec->key, rec->key_len);
	w->last[rec->key_len] = 0;
	w->last_len = rec->key_len;
	return ENG_TAKE;
}

lp_err reg_list(eng *e, const struct reg_list_req *q, reg_item_fn fn,
		void *ud, struct reg_list_res *res)
{
	memset(res, 0, sizeof *res);
	res->remaining = -1;
	const struct reg_key *prefix = q->prefix;
	int64_t at = q->at_rev;
	char *from = NULL;
	size_t from_len = 0;
	if (q->cont) {
		char *start;
		size_t sl;
		lp_err drc = reg_continue_decode(q->cont, &at, &start, &sl,
						 res->msg, sizeof res->msg);
		if (drc)
			return drc; /* LP_E_BADREQUEST, or memory */
		from = malloc(prefix->len + sl + 1);
		if (!from) {
			free(start);
			return LP_E_NOMEM;
		}
		memcpy(from, prefix->bytes, prefix->len);
		memcpy(from + prefix->len, start, sl);
		from_len = prefix->len + sl;
		free(start);
		if (at < 0)
			at = 0; /* rv -1: continue at the latest revision */
	}
	/* the count carried from the first page, if any */
	int64_t carried =
	    q->cont && q->count
		? reg_continue_remaining(q->cont, prefix->bytes, prefix->len)
		: -1;
	struct walk w = {.fn = fn, .ud = ud};
	eng_pin *pin = NULL;
	uint64_t want = q->limit;
	int64_t rev = at;
	bool first = true, more = false;
	uint64_t left = 0;
	lp_err rc;
	for (;;) {
		eng_rd *rd;
		if ((rc = eng_rd_begin(e, &rd)))
			break;
		uint64_t chunk = LIST_CHUNK;
		if (want && want - res->n_taken < chunk)
			chunk = want - res->n_taken;
		struct eng_range_req rq = {
			.prefix = prefix->bytes, .prefix_len = prefix->len,
			.from = from, .from_len = from_len, .at_rev = rev,
			.limit = chunk,
			.flags = (want && q->count && carried < 0) ? ENG_RANGE_COUNT : 0};
		struct eng_range_res rr;
		rc = eng_range(rd, &rq, walk_cb, &w, &rr);
		eng_rd_end(rd);
		if (rc)
			break;
		if (w.oom) {
			rc = LP_E_NOMEM;
			break;
		}
		res->n_taken += rr.n_taken;
		if (first) {
			rev = rr.rev;
			first = false;
			if (eng_pin_rev(e, rev, &pin) != LP_OK)
				pin = NULL;
		}
		more = rr.more;
		left = carried >= 0 ? (uint64_t)(carried > (int64_t)res->n_taken
						 ? carried - (int64_t)res->n_taken
						 : 0)
				    : rr.n_remaining;
		if (!more || w.stopped || (want && res->n_taken >= want))
			break;
		/* next chunk: strictly after the last key taken */
		free(from);
		from_len = w.last_len + 1;
		from = malloc(from_len);
		if (!from) {
			rc = LP_E_NOMEM;
			break;
		}
		memcpy(from, w.last, w.last_len);
		from[w.last_len] = 0;
	}
	eng_unpin(pin);
	free(from);
	if (!rc) {
		res->rev = rev;
		if (more && want && w.last) {
			size_t sl = w.last_len - prefix->len;
			char *start = malloc(sl + 1);
			if (start) {
				memcpy(start, w.last + prefix->len, sl);
				start[sl] = 0; /* last key + NUL: strictly after */
				res->token = reg_continue_encode_n(
				    rev, start, sl + 1,
				    q->count ? (int64_t)left : -1,
				    prefix->bytes, prefix->len);
				free(start);
			}
			if (!res->token)
				rc = LP_E_NOMEM;
			if (q->count)
				res->remaining = (int64_t)left;
		}
	}
	free(w.last);
	return rc;
}
