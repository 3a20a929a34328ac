/*
 * store.h -- Kubernetes objects in the engine: read, write with a compare,
 * delete, and paged lists at one revision (DESIGN.md: server/ and
 * controllers/ reach storage only through this registry).
 *
 * Threads: any. No call holds an engine snapshot across a wait on the
 * writer (engine.h's rule).
 */
#ifndef LAPIS_REG_STORE_H
#define LAPIS_REG_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lapis/engine.h"
#include "registry.h"

/* An object as stored: its bytes (copied, NUL-terminated) and revision. */
struct reg_obj {
	char *bytes;
	size_t len;
	int64_t mod;
	json_t *obj; /* decoded on demand by reg_obj_decode */
	/* obj is not what bytes hold: the server's read of a custom
	   resource converted it, or coerced it to newer schemas */
	bool converted;
};

void reg_obj_free(struct reg_obj *o);
/* Decode bytes into o->obj (kept). Errors: LP_E_CORRUPT. */
lp_err reg_obj_decode(struct reg_obj *o);

/* Read the latest object under k. Errors: LP_E_NOTFOUND, engine errors. */
lp_err reg_get(eng *e, const struct reg_key *k, struct reg_obj *out);

/*
 * Write obj under k (canonical order, revision slot) if cmp holds (NULL: no
 * condition). On success *out holds the stored bytes (malloc'd), *rev the
 * new revision (may be NULL). dry: write nothing; *out then carries rv_text
 * as resourceVersion. Errors: LP_E_EXISTS, LP_E_NOTFOUND, LP_E_CONFLICT,
 * LP_E_FULL, engine errors.
 */
lp_err reg_put(eng *e, const struct reg_key *k, json_t *obj,
	       const struct eng_cmp *cmp, bool dry, const char *rv_text,
	       char **out, size_t *out_len, int64_t *rev);

/*
 * reg_put of obj unless it would store exactly cur's bytes (cur as read,
 * its revision slot holding rv_text): then nothing is written and
 * *unchanged is set. *out is what reg_put gives, or with *unchanged (or
 * dry) the bytes that would be stored with rv_text as resourceVersion.
 * Encodes obj once (an update's no-op check and its write share it).
 * Errors: those of reg_put.
 */
lp_err reg_put_changed(eng *e, const struct reg_key *k, json_t *obj,
		       const struct eng_cmp *cmp, bool dry, const char *rv_text,
		       const struct reg_obj *cur, bool *unchanged, char **out,
		       size_t *out_len);

/* A second key written in the same transaction (an index or reservation,
   e.g. a Service's cluster IP): put value (del false) or delete, with cmp. */
struct reg_side {
	const struct reg_key *key;
	bool del;
	const char *value;
	struct eng_cmp cmp;
};

/* reg_put plus side keys, all or nothing. A failed compare on a side key
   gives LP_E_EXISTS / LP_E_CONFLICT / LP_E_NOTFOUND with *failed_side set
   to its index (else -1). */
lp_err reg_put_sides(eng *e, const struct reg_key *k, json_t *obj,
		     const struct eng_cmp *cmp, const struct reg_side *sides,
		     int n_sides, int *failed_side, char **out, size_t *out_len,
		     int64_t *rev);

/*
 * Write obj under k if cmp holds (as reg_put: ENG_CMP_ABSENT for a create,
 * ENG_CMP_MOD for an update), then write then under k as the next revision
 * of the same group commit (one fsync in sync mode; nothing commits
 * between the two), conditioned on the key still holding the first write
 * (ENG_CMP_MOD_PREV): an object and its status, seen by watchers as ADDED
 * (or MODIFIED) then MODIFIED. Both are encoded first (their
 * resourceVersions are overwritten). Returns once both are done (durable
 * in sync mode).
 * On success *out holds the first write's stored bytes (malloc'd) and
 * *rev its revision (may be NULL), and *then_rc the second write's
 * outcome: LP_OK, or its error (the first write then stands alone).
 * Errors (the first write's; nothing was written): LP_E_EXISTS,
 * LP_E_CONFLICT, LP_E_NOTFOUND, LP_E_FULL, LP_E_NOMEM, engine errors.
 */
lp_err reg_put_then(eng *e, const struct reg_key *k, json_t *obj,
		    const struct eng_cmp *cmp, json_t *then, char **out,
		    size_t *out_len, int64_t *rev, lp_err *then_rc);

/* reg_delete plus side keys (deleted or put), all or nothing; *rev (rev
   may be NULL) gets the revision the delete committed at. */
lp_err reg_delete_sides(eng *e, const struct reg_key *k, int64_t mod,
			const struct reg_side *sides, int n_sides,
			int64_t *rev);

/* Delete k if its revision is still mod. Errors: LP_E_CONFLICT,
   LP_E_NOTFOUND, engine errors. */
lp_err reg_delete(eng *e, const struct reg_key *k, int64_t mod);

/* What a list callback says of one object (borrowed bytes). */
typedef enum eng_take (*reg_item_fn)(void *ud, const struct eng_record *rec);

struct reg_list_req {
	const struct reg_key *prefix; /* the resource or namespace prefix */
	uint64_t limit;		/* 0: everything */
	const char *cont;	/* continue token or NULL */
	int64_t at_rev;		/* 0: latest; else read exactly at it */
	bool count;		/* fill remaining (no filtering callback) */
};

struct reg_list_res {
	int64_t rev;		/* the revision the list was read at */
	char *token;		/* continue token (new) or NULL */
	int64_t remaining;	/* remainingItemCount or -1 */
	uint64_t n_taken;
	char msg[256];		/* for LP_E_BADREQUEST: why the token is bad */
};

/*
 * List the prefix in key order at one revision, in chunks of short engine
 * snapshots (the revision pinned against compaction meanwhile), calling fn
 * for each object. A continue token reads at its revision (rv -1: latest)
 * strictly after its key, never outside the prefix.
 * Errors: LP_E_BADREQUEST (bad token: res->msg), LP_E_COMPACTED,
 * LP_E_FUTURE, LP_E_NOMEM, engine errors. On success the caller frees
 * res->token.
 */
lp_err reg_list(eng *e, const struct reg_list_req *q, reg_item_fn fn,
		void *ud, struct reg_list_res *res);

#endif
