/*
 * common.h -- helpers shared by the engine tests (header-only, static
 * inline): opening stores in temporary directories, one-op writes, copied
 * records, a ready-callback waiter for watchers, and a history model of the
 * store that every read can be checked against.
 *
 * Invariants
 *  1. Helpers that use cr_assert run on the test's main thread only
 *     (Criterion aborts a test by longjmp, which must not happen on another
 *     thread). Helpers meant for threads return an lp_err instead.
 *  2. The model (struct tm_model) keeps every version of every key, in revision
 *     order, and its keys sorted by tc_keycmp (byte-wise, a proper prefix
 *     sorts first): the order engine.h promises for ranges.
 *  3. Safety timeouts are generous and scaled by ts_slow(); no test checks
 *     how long anything took.
 */
#ifndef LAPIS_TEST_ENGINE_COMMON_H
#define LAPIS_TEST_ENGINE_COMMON_H

#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lapis/engine.h"
#include "support.h"

/* ------------------------------------------------------------------ asserts */

#define TC_OK(expr)                                                            \
	do {                                                                   \
		lp_err tc_rc_ = (expr);                                        \
		cr_assert_eq(tc_rc_, LP_OK, "%s: %s (%s)", #expr,              \
			     lp_errname(tc_rc_), lp_strerror(tc_rc_));         \
	} while (0)

#define TC_RC(expr, want)                                                      \
	do {                                                                   \
		lp_err tc_rc_ = (expr);                                        \
		lp_err tc_want_ = (want);                                      \
		cr_assert_eq(tc_rc_, tc_want_, "%s: got %s, want %s", #expr,   \
			     lp_errname(tc_rc_), lp_errname(tc_want_));        \
	} while (0)

static inline void *tc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

static inline void *tc_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		abort();
	return q;
}

static inline uint8_t *tc_dup(const void *p, size_t n)
{
	uint8_t *q = tc_xmalloc(n + 1);
	if (n)
		memcpy(q, p, n);
	q[n] = 0; /* handy for printing */
	return q;
}

/* Byte-wise key order: memcmp over the common length, a proper prefix
   first. */
static inline int tc_keycmp(const void *a, size_t al, const void *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c < 0 ? -1 : 1;
	return al < bl ? -1 : al > bl ? 1 : 0;
}

/* ------------------------------------------------------------------- stores */

struct tc_store {
	char *dir;
	eng *e;
	struct eng_opts o;
};

/* Open a store in dir (malloc'd; the store takes it); o (may be NULL)
   gives options, its dir is ignored. nosync defaults to 1 when o is NULL. */
static inline void tc_open_dir(struct tc_store *s, char *dir,
			       const struct eng_opts *o)
{
	memset(s, 0, sizeof *s);
	if (o)
		s->o = *o;
	else
		s->o.nosync = 1;
	s->dir = dir;
	s->o.dir = s->dir;
	lp_err rc = eng_open(&s->o, &s->e);
	cr_assert_eq(rc, LP_OK, "eng_open(%s): %s", s->dir, lp_errname(rc));
}

/* The same in a new temporary directory. */
static inline void tc_open(struct tc_store *s, const char *tag,
			   const struct eng_opts *o)
{
	tc_open_dir(s, ts_tmpdir(tag), o);
}

static inline void tc_check(eng *e)
{
	char msg[1024] = "";
	lp_err rc = eng_check(e, msg, sizeof msg);
	cr_assert_eq(rc, LP_OK, "eng_check: %s: %s", lp_errname(rc), msg);
}

/* Check, close and open again with the same options. */
static inline void tc_reopen(struct tc_store *s)
{
	tc_check(s->e);
	eng_close(s->e);
	s->e = NULL;
	lp_err rc = eng_open(&s->o, &s->e);
	cr_assert_eq(rc, LP_OK, "eng_open again: %s", lp_errname(rc));
}

/* Check (when open), close and remove the directory. */
static inline void tc_done(struct tc_store *s)
{
	if (s->e) {
		tc_check(s->e);
		eng_close(s->e);
		s->e = NULL;
	}
	ts_rmtree_free(s->dir);
	s->dir = NULL;
}

/* ------------------------------------------------------------------ records */

struct tc_rec {
	uint8_t *key;
	size_t key_len;
	uint8_t *value; /* NUL-terminated copy */
	size_t value_len;
	int64_t create_rev, mod_rev, version;
};

static inline void tc_rec_copy(struct tc_rec *d, const struct eng_record *s)
{
	d->key = tc_dup(s->key, s->key_len);
	d->key_len = s->key_len;
	d->value = tc_dup(s->value, s->value_len);
	d->value_len = s->value_len;
	d->create_rev = s->create_rev;
	d->mod_rev = s->mod_rev;
	d->version = s->version;
}

static inline void tc_rec_free(struct tc_rec *r)
{
	if (!r)
		return;
	free(r->key);
	free(r->value);
	memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ one-op writes */

/* Put one key; res (may be NULL) receives the commit result, also on a
   failed commit. */
static inline lp_err tc_put(eng *e, const void *k, size_t kl, const void *v,
			    size_t vl, uint32_t slot, const struct eng_cmp *cmp,
			    struct eng_commit_res *res)
{
	eng_txn *t = NULL;
	struct eng_commit_res r = {0};
	lp_err rc = eng_txn_new(e, &t);
	if (rc)
		return rc;
	rc = eng_txn_put(t, k, kl, v, vl, slot, cmp);
	if (rc == LP_OK) {
		r.failed_op = -2;
		rc = eng_txn_commit(t, &r);
		/* On a failed compare res carries failed_op too. */
		if (res)
			*res = r;
	}
	eng_txn_free(t);
	return rc;
}

static inline lp_err tc_del(eng *e, const void *k, size_t kl,
			    const struct eng_cmp *cmp,
			    struct eng_commit_res *res)
{
	eng_txn *t = NULL;
	struct eng_commit_res r = {0};
	lp_err rc = eng_txn_new(e, &t);
	if (rc)
		return rc;
	rc = eng_txn_del(t, k, kl, cmp);
	if (rc == LP_OK) {
		r.failed_op = -2;
		rc = eng_txn_commit(t, &r);
		/* On a failed compare res carries failed_op too. */
		if (res)
			*res = r;
	}
	eng_txn_free(t);
	return rc;
}

/* Put a string value under a string key without slot or compare; asserts
   success and returns the revision. */
static inline int64_t tc_puts(eng *e, const char *k, const char *v)
{
	struct eng_commit_res r = {0};
	lp_err rc =
	    tc_put(e, k, strlen(k), v, strlen(v), ENG_NO_SLOT, NULL, &r);
	cr_assert_eq(rc, LP_OK, "put %s: %s", k, lp_errname(rc));
	return r.rev;
}

/* A new, uncommitted txn with one put of string k=v under the given
   compare. */
static inline eng_txn *tc_put_txn(eng *e, const char *k, const char *v,
				  enum eng_cmp_kind kind, int64_t mod)
{
	eng_txn *t = NULL;
	struct eng_cmp c = {.kind = kind, .mod_rev = mod};
	lp_err rc = eng_txn_new(e, &t);
	cr_assert_eq(rc, LP_OK, "eng_txn_new: %s", lp_errname(rc));
	rc = eng_txn_put(t, k, strlen(k), v, strlen(v), ENG_NO_SLOT, &c);
	cr_assert_eq(rc, LP_OK, "eng_txn_put %s: %s", k, lp_errname(rc));
	return t;
}

static inline int64_t tc_dels(eng *e, const char *k)
{
	struct eng_commit_res r = {0};
	lp_err rc = tc_del(e, k, strlen(k), NULL, &r);
	cr_assert_eq(rc, LP_OK, "del %s: %s", k, lp_errname(rc));
	return r.rev;
}

/* Read one key at at_rev in its own snapshot; *out (a copy) only on success. */
static inline lp_err tc_get(eng *e, const void *k, size_t kl, int64_t at_rev,
			    struct tc_rec *out)
{
	eng_rd *r = NULL;
	struct eng_record rec = {0};
	lp_err rc = eng_rd_begin(e, &r);
	if (rc)
		return rc;
	rc = eng_get(r, k, kl, at_rev, &rec);
	if (rc == LP_OK && out)
		tc_rec_copy(out, &rec);
	eng_rd_end(r);
	return rc;
}

/* Assert that string key k reads value v with the given revisions. */
static inline void tc_expect(eng *e, const char *k, int64_t at_rev,
			     const char *v, int64_t create_rev, int64_t mod_rev,
			     int64_t version)
{
	struct tc_rec r = {0};
	lp_err rc = tc_get(e, k, strlen(k), at_rev, &r);
	cr_assert_eq(rc, LP_OK, "get %s at %" PRId64 ": %s", k, at_rev,
		     lp_errname(rc));
	cr_assert_eq(r.key_len, strlen(k));
	cr_assert(memcmp(r.key, k, r.key_len) == 0);
	cr_assert_eq(r.value_len, strlen(v), "get %s: value '%s', want '%s'", k,
		     (char *)r.value, v);
	cr_assert(memcmp(r.value, v, r.value_len) == 0,
		  "get %s: value '%s', want '%s'", k, (char *)r.value, v);
	cr_assert_eq(r.create_rev, create_rev,
		     "%s create_rev %" PRId64 " want %" PRId64, k, r.create_rev,
		     create_rev);
	cr_assert_eq(r.mod_rev, mod_rev, "%s mod_rev %" PRId64 " want %" PRId64,
		     k, r.mod_rev, mod_rev);
	cr_assert_eq(r.version, version, "%s version %" PRId64 " want %" PRId64,
		     k, r.version, version);
	tc_rec_free(&r);
}

/* ------------------------------------------------------------------- ranges */

/* Records collected by tc_collect. */
struct tc_list {
	struct tc_rec *v;
	size_t n, cap;
};

static inline void tc_list_add(struct tc_list *l, const struct eng_record *r)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = tc_xrealloc(l->v, l->cap * sizeof *l->v);
	}
	tc_rec_copy(&l->v[l->n++], r);
}

static inline void tc_list_free(struct tc_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		tc_rec_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static inline enum eng_take tc_collect(void *ud, const struct eng_record *r)
{
	tc_list_add(ud, r);
	return ENG_TAKE;
}

/* Range in its own snapshot, collecting every record. */
static inline lp_err tc_range(eng *e, const struct eng_range_req *req,
			      struct tc_list *out, struct eng_range_res *res)
{
	eng_rd *r = NULL;
	lp_err rc = eng_rd_begin(e, &r);
	if (rc)
		return rc;
	rc = eng_range(r, req, tc_collect, out, res);
	eng_rd_end(r);
	return rc;
}

/* ------------------------------------------------------------ watch waiting */

/* A ready callback target: the callback sets `fired` under the mutex. */
struct tc_waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fired;
	long n_fired;
};

static inline void tc_waiter_init(struct tc_waiter *w)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->fired = 0;
	w->n_fired = 0;
}

static inline void tc_waiter_destroy(struct tc_waiter *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* The eng_ready_fn: runs on the writer thread, never blocks for long. */
static inline void tc_ready(void *ud)
{
	struct tc_waiter *w = ud;
	pthread_mutex_lock(&w->mu);
	w->fired = 1;
	w->n_fired++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Safety timeout for one wait: 20 s, scaled for sanitizers. */
static inline int tc_wait_ms(void)
{
	return 20000 * ts_slow();
}

/* Wait until the callback fired (returns 1) or the safety timeout passed
   (returns 0). */
static inline int tc_waiter_wait(struct tc_waiter *w, int timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	int ok = 1;
	pthread_mutex_lock(&w->mu);
	while (!w->fired) {
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT) {
			ok = w->fired;
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

/*
 * Next event, waiting for the ready callback while the watcher says
 * LP_E_AGAIN. Returns LP_E_AGAIN only when the safety timeout passed.
 * Thread-safe (no cr_assert).
 */
static inline lp_err tc_next_wait(eng_watch *w, struct tc_waiter *wt,
				  eng_event **ev)
{
	for (;;) {
		pthread_mutex_lock(&wt->mu);
		wt->fired = 0;
		pthread_mutex_unlock(&wt->mu);
		lp_err rc = eng_watch_next(w, ev);
		if (rc != LP_E_AGAIN)
			return rc;
		if (!tc_waiter_wait(wt, tc_wait_ms()))
			return LP_E_AGAIN;
	}
}

/* ------------------------------------------------------- values with a slot */

/* The bytes a read returns for value v with a slot at off holding rev. */
static inline uint8_t *tc_splice(const void *v, size_t vl, uint32_t off,
				 int64_t rev, size_t *out_len)
{
	if (off == ENG_NO_SLOT) {
		*out_len = vl;
		return tc_dup(v, vl);
	}
	char d[24];
	int n = snprintf(d, sizeof d, "%" PRId64, rev);
	uint8_t *p = tc_xmalloc(vl + (size_t)n + 1);
	memcpy(p, v, off);
	memcpy(p + off, d, (size_t)n);
	memcpy(p + off + n, (const uint8_t *)v + off, vl - off);
	p[vl + (size_t)n] = 0;
	*out_len = vl + (size_t)n;
	return p;
}

/* ---------------------------------------------------------------- the model */

/* One version of a key: a value or a tombstone, at revision rev. */
struct tm_ver {
	int64_t rev;
	int deleted;
	int64_t create_rev;
	int64_t version;
	uint8_t *val; /* as a read returns it (slot filled) */
	size_t val_len;
	uint8_t *raw; /* as written (slot empty), for DEL events */
	size_t raw_len;
	uint32_t slot;
};

struct tm_key {
	uint8_t *key;
	size_t key_len;
	struct tm_ver *v;
	size_t n_v, cap_v;
};

struct tm_model {
	struct tm_key **keys; /* sorted by tc_keycmp */
	size_t n, cap;
	int64_t rev; /* the store revision the model is at */
};

static inline void tm_init(struct tm_model *m)
{
	memset(m, 0, sizeof *m);
	m->rev = 1;
}

static inline void tm_free(struct tm_model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct tm_key *k = m->keys[i];
		for (size_t j = 0; j < k->n_v; j++) {
			free(k->v[j].val);
			free(k->v[j].raw);
		}
		free(k->v);
		free(k->key);
		free(k);
	}
	free(m->keys);
	memset(m, 0, sizeof *m);
}

/* Index of the first key >= (k, kl). */
static inline size_t tm_lower(const struct tm_model *m, const void *k,
			      size_t kl)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tc_keycmp(m->keys[mid]->key, m->keys[mid]->key_len, k, kl) <
		    0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline struct tm_key *tm_find(const struct tm_model *m, const void *k,
				     size_t kl)
{
	size_t i = tm_lower(m, k, kl);
	if (i < m->n &&
	    tc_keycmp(m->keys[i]->key, m->keys[i]->key_len, k, kl) == 0)
		return m->keys[i];
	return NULL;
}

static inline struct tm_key *tm_find_add(struct tm_model *m, const void *k,
					 size_t kl)
{
	size_t i = tm_lower(m, k, kl);
	if (i < m->n &&
	    tc_keycmp(m->keys[i]->key, m->keys[i]->key_len, k, kl) == 0)
		return m->keys[i];
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->keys = tc_xrealloc(m->keys, m->cap * sizeof *m->keys);
	}
	memmove(&m->keys[i + 1], &m->keys[i], (m->n - i) * sizeof *m->keys);
	struct tm_key *nk = tc_xmalloc(sizeof *nk);
	memset(nk, 0, sizeof *nk);
	nk->key = tc_dup(k, kl);
	nk->key_len = kl;
	m->keys[i] = nk;
	m->n++;
	return nk;
}

/* The live version of key k at rev, or NULL (absent or deleted then). */
static inline const struct tm_ver *tm_at(const struct tm_key *k, int64_t rev)
{
	if (!k)
		return NULL;
	const struct tm_ver *best = NULL;
	for (size_t j = 0; j < k->n_v && k->v[j].rev <= rev; j++)
		best = &k->v[j];
	if (!best || best->deleted)
		return NULL;
	return best;
}

static inline const struct tm_ver *tm_get(const struct tm_model *m,
					  const void *k, size_t kl, int64_t rev)
{
	return tm_at(tm_find(m, k, kl), rev);
}

static inline struct tm_ver *tm_push(struct tm_key *k)
{
	if (k->n_v == k->cap_v) {
		k->cap_v = k->cap_v ? 2 * k->cap_v : 4;
		k->v = tc_xrealloc(k->v, k->cap_v * sizeof *k->v);
	}
	struct tm_ver *v = &k->v[k->n_v++];
	memset(v, 0, sizeof *v);
	return v;
}

/* Record a put of (k, v with slot) at rev. */
static inline void tm_put(struct tm_model *m, const void *k, size_t kl,
			  const void *v, size_t vl, uint32_t slot, int64_t rev)
{
	struct tm_key *mk = tm_find_add(m, k, kl);
	const struct tm_ver *old = tm_at(mk, rev);
	int64_t cr = old ? old->create_rev : rev;
	int64_t ver = old ? old->version + 1 : 1;
	struct tm_ver *nv = tm_push(mk);
	nv->rev = rev;
	nv->create_rev = cr;
	nv->version = ver;
	nv->val = tc_splice(v, vl, slot, rev, &nv->val_len);
	nv->raw = tc_dup(v, vl);
	nv->raw_len = vl;
	nv->slot = slot;
	if (rev > m->rev)
		m->rev = rev;
}

/* Record a delete of k at rev; returns 1 if the key existed. */
static inline int tm_del(struct tm_model *m, const void *k, size_t kl,
			 int64_t rev)
{
	struct tm_key *mk = tm_find(m, k, kl);
	if (!tm_at(mk, rev))
		return 0;
	struct tm_ver *nv = tm_push(mk);
	nv->rev = rev;
	nv->deleted = 1;
	if (rev > m->rev)
		m->rev = rev;
	return 1;
}

/* Is key k inside the bounds of a range request? */
static inline int tm_in_range(const struct eng_range_req *q, const void *k,
			      size_t kl)
{
	if (q->prefix && q->prefix_len) {
		if (kl < q->prefix_len || memcmp(k, q->prefix, q->prefix_len))
			return 0;
	}
	if (q->from && tc_keycmp(k, kl, q->from, q->from_len) < 0)
		return 0;
	if (q->end && tc_keycmp(k, kl, q->end, q->end_len) >= 0)
		return 0;
	return 1;
}

/* Assert that a record equals the model's version of that key. */
static inline void tm_assert_rec(const struct tc_rec *r, const struct tm_ver *v,
				 const char *what)
{
	cr_assert_not_null(v, "%s: key %.60s... (%zu bytes) should not exist",
			   what, (char *)r->key, r->key_len);
	cr_assert_eq(r->mod_rev, v->rev,
		     "%s: key %.60s mod_rev %" PRId64 " want %" PRId64, what,
		     (char *)r->key, r->mod_rev, v->rev);
	cr_assert_eq(r->create_rev, v->create_rev,
		     "%s: key %.60s create_rev %" PRId64 " want %" PRId64, what,
		     (char *)r->key, r->create_rev, v->create_rev);
	cr_assert_eq(r->version, v->version,
		     "%s: key %.60s version %" PRId64 " want %" PRId64, what,
		     (char *)r->key, r->version, v->version);
	cr_assert_eq(r->value_len, v->val_len,
		     "%s: key %.60s value '%.80s' want '%.80s'", what,
		     (char *)r->key, (char *)r->value, (char *)v->val);
	cr_assert(memcmp(r->value, v->val, v->val_len) == 0,
		  "%s: key %.60s value '%.80s' want '%.80s'", what,
		  (char *)r->key, (char *)r->value, (char *)v->val);
}

/*
 * Assert that a collected range result equals the model: the records are
 * exactly the keys in range live at rev, in order, starting at the first
 * one; n records were returned (a limit may cut them short). Returns the
 * number of live keys in range after the last returned record.
 */
static inline size_t tm_assert_range(const struct tm_model *m,
				     const struct eng_range_req *q, int64_t rev,
				     const struct tc_list *got,
				     const char *what)
{
	size_t i = 0, gi = 0, after = 0;
	if (q->from)
		i = tm_lower(m, q->from, q->from_len);
	else if (q->prefix)
		i = tm_lower(m, q->prefix, q->prefix_len);
	for (; i < m->n; i++) {
		const struct tm_key *k = m->keys[i];
		if (!tm_in_range(q, k->key, k->key_len)) {
			if (q->end && tc_keycmp(k->key, k->key_len, q->end,
						q->end_len) >= 0)
				break;
			if (q->prefix && q->prefix_len &&
			    tc_keycmp(k->key, k->key_len, q->prefix,
				      q->prefix_len) > 0 &&
			    (k->key_len < q->prefix_len ||
			     memcmp(k->key, q->prefix, q->prefix_len)))
				break;
			continue;
		}
		const struct tm_ver *v = tm_at(k, rev);
		if (!v)
			continue;
		if (gi < got->n) {
			const struct tc_rec *r = &got->v[gi];
			size_t d = 0;
			while (d < r->key_len && d < k->key_len &&
			       r->key[d] == k->key[d])
				d++;
			cr_assert(
			    tc_keycmp(r->key, r->key_len, k->key, k->key_len) ==
				0,
			    "%s: record %zu is key '%.40s' (%zu bytes), want"
			    " '%.40s' (%zu bytes); they differ at byte %zu",
			    what, gi, (char *)r->key, r->key_len,
			    (char *)k->key, k->key_len, d);
			tm_assert_rec(r, v, what);
			gi++;
		} else {
			after++;
		}
	}
	cr_assert_eq(gi, got->n, "%s: got %zu records, the model has only %zu",
		     what, got->n, gi);
	return after;
}

#endif
