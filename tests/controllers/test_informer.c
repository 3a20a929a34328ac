/*
 * test_informer.c -- tests of controllers/informer.c on a real engine in a
 * temporary directory: the first list, following writes, re-lists after
 * LP_E_OVERFLOW and LP_E_COMPACTED, and a write storm with compactions.
 *
 * Invariants of the tests
 *  1. The handlers feed a model of what the informer has told (key ->
 *     value and mod_rev) and check each call against it: an add only for a
 *     key it does not hold, an update or delete only for one it does, with
 *     the old state equal to what it was last told and revisions that only
 *     grow. A violation is recorded (handlers run on the informer thread,
 *     where cr_assert must not run) and checked by the main thread.
 *  2. Every test ends with the cache, the model and a fresh list of the
 *     store all equal, once the informer has reached the store's last
 *     revision under the prefix (inf_wait_rev, no sleeping).
 *  3. The informer is paused deterministically by a handler that blocks on
 *     the key "/p/gate" until the test opens the gate.
 *  4. Tests of the indexes write JSON objects (namespace, ownerReferences)
 *     and end with every index equal to one rebuilt from a fresh list of
 *     the store: the same values, each with the same keys
 *     (expect_indexes_exact).
 */
#include <sched.h>
#include <stdarg.h>
#include <unistd.h>

#include "../../controllers/informer.h"
#include "../engine/common.h"

#define PFX "/p/"
#define MAX_KEYS 1024

struct mkey {
	char *key;
	int present;
	int ever; /* was ever added */
	char *value;
	int64_t mod_rev;
};

struct model {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mkey keys[MAX_KEYS];
	int n;
	long adds, updates, deletes;
	int violations;
	char first[512]; /* the first violation */
	/* the gate */
	int gate_closed;
	int gate_waiting;
	int gate_uses; /* times a handler blocked on it */
	/* the commit hook */
	int hold_commits; /* the writer waits after its next commit */
	int commit_held;  /* it is waiting */
};

static struct model M;
static struct tc_store S;

static void violation(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void violation(const char *fmt, ...)
{
	if (M.violations++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(M.first, sizeof M.first, fmt, ap);
		va_end(ap);
	}
}

/* Under M.mu. */
static struct mkey *mfind(const uint8_t *k, size_t kl, int make)
{
	for (int j = 0; j < M.n; j++)
		if (strlen(M.keys[j].key) == kl &&
		    memcmp(M.keys[j].key, k, kl) == 0)
			return &M.keys[j];
	if (!make || M.n == MAX_KEYS)
		return NULL;
	struct mkey *m = &M.keys[M.n++];
	memset(m, 0, sizeof *m);
	m->key = (char *)tc_dup(k, kl);
	return m;
}

static int same(const struct mkey *m, const struct inf_obj *o)
{
	return m->present && m->mod_rev == o->mod_rev &&
	       strlen(m->value) == o->value_len &&
	       memcmp(m->value, o->value, o->value_len) == 0;
}

static void mset(struct mkey *m, const struct inf_obj *o)
{
	free(m->value);
	m->value = (char *)tc_dup(o->value, o->value_len);
	m->mod_rev = o->mod_rev;
	m->present = 1;
	m->ever = 1;
}

/* Block while the gate is closed, if this is the gate key. Under M.mu. */
static void gate(const struct inf_obj *o)
{
	if (o->key_len != strlen(PFX "gate") ||
	    memcmp(o->key, PFX "gate", o->key_len))
		return;
	if (!M.gate_closed)
		return;
	M.gate_uses++;
	M.gate_waiting = 1;
	pthread_cond_broadcast(&M.cv);
	while (M.gate_closed)
		pthread_cond_wait(&M.cv, &M.mu);
	M.gate_waiting = 0;
}

static void h_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	pthread_mutex_lock(&M.mu);
	M.adds++;
	struct mkey *m = mfind(o->key, o->key_len, 1);
	if (!m)
		violation("too many keys");
	else if (m->present)
		violation("add of %s, which is present", m->key);
	else if (o->mod_rev <= m->mod_rev)
		violation("add of %s at %" PRId64 " after %" PRId64, m->key,
			  o->mod_rev, m->mod_rev);
	if (m)
		mset(m, o);
	gate(o);
	pthread_mutex_unlock(&M.mu);
}

static void h_update(void *ud, const struct inf_obj *old,
		     const struct inf_obj *cur)
{
	(void)ud;
	pthread_mutex_lock(&M.mu);
	M.updates++;
	struct mkey *m = mfind(cur->key, cur->key_len, 0);
	if (!m || !m->present)
		violation("update of an absent key");
	else if (!same(m, old))
		violation("update of %s: old state at %" PRId64
			  " is not the last told (%" PRId64 ")",
			  m->key, old->mod_rev, m->mod_rev);
	else if (cur->mod_rev <= old->mod_rev)
		violation("update of %s goes back: %" PRId64 " -> %" PRId64,
			  m->key, old->mod_rev, cur->mod_rev);
	if (old->key_len != cur->key_len ||
	    memcmp(old->key, cur->key, cur->key_len))
		violation("update with two keys");
	if (m)
		mset(m, cur);
	gate(cur);
	pthread_mutex_unlock(&M.mu);
}

static void h_delete(void *ud, const struct inf_obj *last)
{
	(void)ud;
	pthread_mutex_lock(&M.mu);
	M.deletes++;
	struct mkey *m = mfind(last->key, last->key_len, 0);
	if (!m || !m->present)
		violation("delete of an absent key");
	else if (!same(m, last))
		violation("delete of %s: last state at %" PRId64
			  " is not the last told (%" PRId64 ")",
			  m->key, last->mod_rev, m->mod_rev);
	if (m)
		m->present = 0;
	pthread_mutex_unlock(&M.mu);
}

/* The engine's on_commit hook: while M.hold_commits is set, the writer
   stops after a commit and before publishing its events. */
static void commit_hook(void *ud, uint64_t group)
{
	(void)ud;
	(void)group;
	pthread_mutex_lock(&M.mu);
	if (M.hold_commits) {
		M.commit_held = 1;
		pthread_cond_broadcast(&M.cv);
		while (M.hold_commits)
			pthread_cond_wait(&M.cv, &M.mu);
	}
	pthread_mutex_unlock(&M.mu);
}

static void setup_ring(unsigned ring)
{
	memset(&M, 0, sizeof M);
	pthread_mutex_init(&M.mu, NULL);
	pthread_cond_init(&M.cv, NULL);
	struct eng_opts o = {.nosync = 1, .ring_events = ring};
	o.on_commit = commit_hook;
	tc_open(&S, "informer", &o);
}

static void setup(void)
{
	setup_ring(0);
}

static void setup_small_ring(void)
{
	setup_ring(16);
}

static void teardown(void)
{
	tc_done(&S);
	for (int j = 0; j < M.n; j++) {
		free(M.keys[j].key);
		free(M.keys[j].value);
	}
}

/* The test's custom indexer: the owner UIDs of ownerReferences. */
static void index_owner(void *ud, const struct inf_obj *o, struct inf_emit *em)
{
	(void)ud;
	json_t *refs = json_object_get(json_object_get(o->json, "metadata"),
				       "ownerReferences");
	size_t k;
	json_t *r;
	json_array_foreach(refs, k, r)
	{
		inf_emit(em, json_string_value(json_object_get(r, "uid")));
	}
}

static unsigned OWNER; /* the owner indexer's number */
static void expect_indexes_exact(inf *i, int with_owner);

static inf *start_indexed(uint32_t page, int with_owner)
{
	struct inf_opts o = {
	    .name = "test",
	    .e = S.e,
	    .prefix = PFX,
	    .prefix_len = strlen(PFX),
	    .handlers = {.on_add = h_add,
			 .on_update = h_update,
			 .on_delete = h_delete},
	    .list_page = page,
	};
	inf *i = NULL;
	cr_assert_eq(inf_new(&o, &i), LP_OK);
	if (with_owner)
		cr_assert_eq(
		    inf_add_indexer(i, "owner", index_owner, NULL, &OWNER),
		    LP_OK);
	cr_assert_eq(inf_start(i), LP_OK);
	return i;
}

static inf *start(uint32_t page)
{
	return start_indexed(page, 0);
}

static void close_gate(void)
{
	pthread_mutex_lock(&M.mu);
	M.gate_closed = 1;
	pthread_mutex_unlock(&M.mu);
}

static void wait_at_gate(void)
{
	pthread_mutex_lock(&M.mu);
	while (!M.gate_waiting)
		pthread_cond_wait(&M.cv, &M.mu);
	pthread_mutex_unlock(&M.mu);
}

static void open_gate(void)
{
	pthread_mutex_lock(&M.mu);
	M.gate_closed = 0;
	pthread_cond_broadcast(&M.cv);
	pthread_mutex_unlock(&M.mu);
}

static int64_t putk(const char *k, const char *v)
{
	return tc_puts(S.e, k, v);
}

/* Check invariant 2 once the informer has reached rev, the revision of
   the last write under the prefix (no writes may follow it). */
static void expect_all_equal(inf *i, int64_t rev)
{
	cr_assert_eq(inf_wait_rev(i, rev), LP_OK);
	struct tc_list l = {0};
	struct eng_range_req q = {.prefix = PFX, .prefix_len = strlen(PFX)};
	struct eng_range_res res;
	TC_OK(tc_range(S.e, &q, &l, &res));

	pthread_mutex_lock(&M.mu);
	int violations = M.violations;
	char first[512];
	snprintf(first, sizeof first, "%s", M.first);
	int present = 0;
	for (int j = 0; j < M.n; j++)
		present += M.keys[j].present;
	pthread_mutex_unlock(&M.mu);
	cr_assert_eq(violations, 0, "%d handler violations; first: %s",
		     violations, first);

	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_eq(st.objects, l.n, "cache holds %" PRIu64 ", list %zu",
		     st.objects, l.n);
	cr_assert_eq((size_t)present, l.n, "handlers left %d, list %zu",
		     present, l.n);
	for (size_t k = 0; k < l.n; k++) {
		const struct tc_rec *r = &l.v[k];
		struct inf_item *it = NULL;
		lp_err rc = inf_get(i, r->key, r->key_len, &it);
		cr_assert_eq(rc, LP_OK, "%s not cached: %s", (char *)r->key,
			     lp_errname(rc));
		cr_assert_eq(it->obj.mod_rev, r->mod_rev, "%s", (char *)r->key);
		cr_assert_eq(it->obj.create_rev, r->create_rev);
		cr_assert_eq(it->obj.version, r->version);
		cr_assert_eq(it->obj.value_len, r->value_len);
		cr_assert(memcmp(it->obj.value, r->value, r->value_len) == 0);
		inf_item_free(it);
		pthread_mutex_lock(&M.mu);
		struct mkey *m = mfind(r->key, r->key_len, 0);
		int ok = m && m->present && m->mod_rev == r->mod_rev &&
			 strcmp(m->value, (char *)r->value) == 0;
		pthread_mutex_unlock(&M.mu);
		cr_assert(ok, "handlers' last word on %s is not the store's",
			  (char *)r->key);
	}
	tc_list_free(&l);
}

static long n_adds(void)
{
	pthread_mutex_lock(&M.mu);
	long n = M.adds;
	pthread_mutex_unlock(&M.mu);
	return n;
}

/* Criterion runs a suite's init and a test's init both, so each test names
   its own store setup. No .timeout: Criterion 2.4.1 leaks a timeout record
   now and then (LeakSanitizer fails the run); CTest's TIMEOUT is the
   safety net. */

Test(inf, lists_syncs_then_follows_every_write, .init = setup, .fini = teardown)
{
	char k[64], v[64];
	for (int n = 0; n < 30; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		snprintf(v, sizeof v, "v0-%d", n);
		putk(k, v);
	}
	putk("/q/other", "x");
	putk("/p", "not under /p/");
	inf *i = start(7); /* pages of 7: 5 snapshots */
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	cr_assert(inf_has_synced(i));
	cr_assert_eq(n_adds(), 30);
	expect_all_equal(i, 0);

	/* 20 updates, 10 deletes, 5 creates, one txn of three changes. */
	for (int n = 0; n < 20; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		snprintf(v, sizeof v, "v1-%d", n);
		putk(k, v);
	}
	for (int n = 20; n < 30; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		tc_dels(S.e, k);
	}
	for (int n = 100; n < 105; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "new");
	}
	putk("/q/other", "y");
	eng_txn *t = NULL;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, PFX "k0000", 8, "txn", 3, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_put(t, PFX "k0200", 8, "txn", 3, ENG_NO_SLOT, NULL));
	TC_OK(eng_txn_del(t, PFX "k0001", 8, NULL));
	struct eng_commit_res cr;
	TC_OK(eng_txn_commit(t, &cr));
	eng_txn_free(t);
	cr_assert_eq(inf_wait_rev(i, cr.rev), LP_OK);

	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_eq(st.lists, 1);
	cr_assert_eq(st.relist_overflow + st.relist_compacted + st.relist_error,
		     0);
	cr_assert_eq(st.events, 20 + 10 + 5 + 3);
	cr_assert_eq(st.adds, 30 + 5 + 1);
	cr_assert_eq(st.updates, 20 + 1);
	cr_assert_eq(st.deletes, 10 + 1);
	cr_assert_eq(st.rev, cr.rev);
	expect_all_equal(i, cr.rev);
	inf_stop(i);
	cr_assert_eq(inf_wait_rev(i, cr.rev + 1), LP_E_CLOSED);
	inf_free(i);
}

Test(inf, an_empty_prefix_syncs_and_a_stopped_informer_says_closed,
     .init = setup, .fini = teardown)
{
	inf *i = start(0);
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	struct inf_item *it = NULL;
	cr_assert_eq(inf_get(i, PFX "none", 7, &it), LP_E_NOTFOUND);
	int64_t rev = putk(PFX "a", "1");
	cr_assert_eq(inf_wait_rev(i, rev), LP_OK);
	cr_assert_eq(inf_get(i, PFX "a", 4, &it), LP_OK);
	cr_assert_eq(it->obj.value_len, 1);
	inf_item_free(it);
	inf_free(i); /* stops it */

	struct inf_opts o = {.e = S.e};
	cr_assert_eq(inf_new(&o, &i), LP_OK);
	inf_stop(i); /* never started */
	cr_assert_eq(inf_wait_synced(i), LP_E_CLOSED);
	inf_free(i);
	struct inf_opts bad = {0};
	cr_assert_eq(inf_new(&bad, &i), LP_E_INVAL);
}

Test(inf, a_relist_after_overflow_delivers_the_differences,
     .init = setup_small_ring, .fini = teardown)
{
	char k[64], v[64];
	for (int n = 0; n < 20; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "v0");
	}
	inf *i = start(0);
	cr_assert_eq(inf_wait_synced(i), LP_OK);

	close_gate();
	putk(PFX "gate", "shut");
	wait_at_gate(); /* the informer thread is blocked in on_add */

	for (int n = 0; n < 5; n++) { /* deleted unseen */
		snprintf(k, sizeof k, PFX "k%04d", n);
		tc_dels(S.e, k);
	}
	for (int n = 5; n < 10; n++) { /* updated twice, unseen */
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "v1");
		putk(k, "v2");
	}
	for (int n = 100; n < 105; n++) { /* created */
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "new");
	}
	putk(PFX "k0200", "born and gone while unseen");
	tc_dels(S.e, PFX "k0200");
	int64_t last = 0;
	for (int n = 0; n < 20; n++) { /* more than the ring holds */
		snprintf(v, sizeof v, "filler-%d", n);
		last = putk(PFX "k0010", v);
	}
	open_gate();

	expect_all_equal(i, last);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_geq(st.relist_overflow, 1, "the watch overflowed");
	cr_assert_geq(st.lists, 2);
	pthread_mutex_lock(&M.mu);
	struct mkey *gone = mfind((const uint8_t *)PFX "k0000", 8, 0);
	struct mkey *never = mfind((const uint8_t *)PFX "k0200", 8, 0);
	int gone_ok = gone && !gone->present && gone->ever;
	int never_ok = !never || !never->ever;
	pthread_mutex_unlock(&M.mu);
	cr_assert(gone_ok, "k0000's delete was delivered");
	cr_assert(never_ok, "a key born and gone while unseen is not told");
	inf_free(i);
}

Test(inf, a_compaction_during_the_list_makes_it_list_again, .init = setup,
     .fini = teardown)
{
	char k[64];
	putk(PFX "gate", "first"); /* sorts before the k keys */
	for (int n = 0; n < 20; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "v0");
	}
	close_gate();
	inf *i = start(0);
	wait_at_gate(); /* blocked in the first list's on_add */
	cr_assert(!inf_has_synced(i));

	for (int n = 0; n < 5; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		tc_dels(S.e, k);
	}
	for (int n = 5; n < 10; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		putk(k, "v1");
	}
	putk(PFX "k0100", "new");
	int64_t last = putk(PFX "gate", "second");
	int64_t done = 0;
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	cr_assert_eq(done, eng_rev(S.e));
	open_gate();

	cr_assert_eq(inf_wait_synced(i), LP_OK);
	expect_all_equal(i, last);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_geq(st.relist_compacted, 1,
		      "the watch from the list's revision was compacted");
	inf_free(i);
}

static void *put_x(void *arg)
{
	(void)arg;
	tc_puts(S.e, PFX "x", "1"); /* returns after the hook lets go */
	return NULL;
}

/* A regression test: the engine makes a commit visible before it publishes
   the commit's events, and a watch opened from a revision in that window
   is handed that revision's events again. The informer lists in the
   window, so its watch starts there, and it must not apply them twice. */
Test(inf, events_already_listed_are_not_applied_again, .init = setup,
     .fini = teardown)
{
	int64_t rev0 = putk(PFX "a", "0");
	pthread_mutex_lock(&M.mu);
	M.hold_commits = 1;
	pthread_mutex_unlock(&M.mu);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, put_x, NULL), 0);
	pthread_mutex_lock(&M.mu);
	while (!M.commit_held)
		pthread_cond_wait(&M.cv, &M.mu);
	pthread_mutex_unlock(&M.mu);
	cr_assert_eq(eng_rev(S.e), rev0 + 1, "x is committed, not published");

	inf *i = start(0);
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	/* The informer opens its watch right after syncing; nothing it does
	   then can be waited on from here, so look at the engine's count. */
	for (;;) {
		struct eng_stats es;
		eng_stats(S.e, &es);
		if (es.watchers >= 1)
			break;
		sched_yield();
	}
	pthread_mutex_lock(&M.mu);
	M.hold_commits = 0;
	pthread_cond_broadcast(&M.cv);
	pthread_mutex_unlock(&M.mu);
	pthread_join(t, NULL);

	int64_t last = putk(PFX "y", "1");
	expect_all_equal(i, last);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_eq(st.adds, 3, "a and x from the list, y from the watch");
	cr_assert_eq(st.updates, 0, "x's event is not an update of itself");
	cr_assert_eq(st.events, 1);
	inf_free(i);
}

/* The JSON of an object with a namespace (NULL: cluster-scoped) and
   owner UIDs (NULL: none). New: free(). */
static char *obj_json(const char *k, const char *ns, const char *o1,
		      const char *o2, const char *note)
{
	json_t *meta = json_pack("{s:s}", "name", k + strlen(PFX));
	if (ns)
		json_object_set_new(meta, "namespace", json_string(ns));
	json_t *refs = json_array();
	if (o1)
		json_array_append_new(refs, json_pack("{s:s}", "uid", o1));
	if (o2)
		json_array_append_new(refs, json_pack("{s:s}", "uid", o2));
	if (json_array_size(refs))
		json_object_set(meta, "ownerReferences", refs);
	json_decref(refs);
	json_t *obj =
	    json_pack("{s:o,s:s}", "metadata", meta, "note", note ? note : "");
	char *v = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	return v;
}

/* ------------------------------------------------------------ write storm */

#define STORM_WRITERS 2
#define STORM_OPS 1500
#define STORM_KEYS 150

struct storm_arg {
	int id;
	uint64_t seed;
	pthread_t tid;
	lp_err rc;
};

static void *storm_writer(void *arg)
{
	struct storm_arg *a = arg;
	uint64_t st = a->seed + (uint64_t)a->id * 104729;
	char k[64], note[32], ns[16], o1[16], o2[16];
	for (int n = 0; n < STORM_OPS && a->rc == LP_OK; n++) {
		uint64_t x = ts_rand(&st);
		unsigned kn = (unsigned)(x % STORM_KEYS);
		unsigned op = (unsigned)(x >> 32) % 10;
		unsigned y = (unsigned)(x >> 40);
		snprintf(k, sizeof k, "%sk%04u", op == 9 ? "/q/" : PFX, kn);
		/* Values are objects whose namespace and owners change, so
		   that the indexes move with the storm. */
		snprintf(note, sizeof note, "w%d-%d", a->id, n);
		snprintf(ns, sizeof ns, "ns%u", y % 5);
		snprintf(o1, sizeof o1, "u%u", (y >> 4) % 13);
		snprintf(o2, sizeof o2, "u%u", (y >> 8) % 13);
		lp_err rc;
		if (op < 6 || op == 9) {
			char *v =
			    obj_json(k, y % 7 ? ns : NULL, y % 3 ? o1 : NULL,
				     y % 2 ? o2 : NULL, note);
			rc = tc_put(S.e, k, strlen(k), v, strlen(v),
				    ENG_NO_SLOT, NULL, NULL);
			free(v);
		} else
			rc = tc_del(S.e, k, strlen(k), NULL, NULL);
		if (rc != LP_OK)
			a->rc = rc;
		if (a->id == 0 && n % 250 == 249) {
			/* Compact up to now, under the informer's feet. */
			int64_t done;
			rc = eng_compact(S.e, eng_rev(S.e), &done);
			if (rc != LP_OK)
				a->rc = rc;
		}
		if (a->id == 0 && n == 500) {
			close_gate();
			rc = tc_put(S.e, PFX "gate", 7, "storm", 5, ENG_NO_SLOT,
				    NULL, NULL);
			if (rc != LP_OK)
				a->rc = rc;
		}
		if (a->id == 0 && n == 900)
			open_gate(); /* the ring has overflowed by now */
	}
	return NULL;
}

Test(inf, a_write_storm_with_compactions_ends_equal_to_a_list,
     .init = setup_small_ring, .fini = teardown)
{
	uint64_t seed = ts_seed("inf_storm", 777);
	inf *i = start_indexed(16, 1); /* short pages: compaction can hit a
					  list */
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	struct storm_arg a[STORM_WRITERS];
	for (int w = 0; w < STORM_WRITERS; w++) {
		a[w] = (struct storm_arg){.id = w, .seed = seed};
		cr_assert_eq(
		    pthread_create(&a[w].tid, NULL, storm_writer, &a[w]), 0);
	}
	for (int w = 0; w < STORM_WRITERS; w++) {
		pthread_join(a[w].tid, NULL);
		cr_assert_eq(a[w].rc, LP_OK, "writer %d: %s", w,
			     lp_errname(a[w].rc));
	}
	/* The gate may not have been reached by the informer before it
	   opened; either way it is open now. */
	int64_t last = putk(PFX "zz-final", "end");
	expect_all_equal(i, last);
	expect_indexes_exact(i, 1);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_log_info("storm: lists %" PRIu64 " (overflow %" PRIu64
		    ", compacted %" PRIu64 ") events %" PRIu64 " adds %" PRIu64
		    " updates %" PRIu64 " deletes %" PRIu64,
		    st.lists, st.relist_overflow, st.relist_compacted,
		    st.events, st.adds, st.updates, st.deletes);
	cr_assert_eq(st.relist_error, 0);
	inf_free(i);
}

/* ------------------------------------------------------------ indexes */

static int64_t put_obj(const char *k, const char *ns, const char *o1,
		       const char *o2, const char *note)
{
	char *v = obj_json(k, ns, o1, o2, note);
	int64_t rev = tc_puts(S.e, k, v);
	free(v);
	return rev;
}

static int cmp_str_p(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* {value: {key: true}} for indexer x, as the informer holds it. */
struct idx_walk {
	inf *i;
	unsigned x;
	json_t *all;
	json_t *keys; /* of the value being walked */
	size_t counted;
};

static int walk_key(void *ud, const struct inf_obj *o)
{
	struct idx_walk *w = ud;
	char *k = (char *)tc_dup(o->key, o->key_len);
	json_object_set_new(w->keys, k, json_true());
	free(k);
	return 0;
}

static int walk_value(void *ud, const char *value, size_t n)
{
	struct idx_walk *w = ud;
	json_object_set_new(w->all, value, json_integer((json_int_t)n));
	return 0;
}

static json_t *index_of(inf *i, unsigned x)
{
	struct idx_walk w = {.i = i, .x = x, .all = json_object()};
	size_t nv = inf_index_values(i, x, walk_value, &w);
	cr_assert_eq(nv, json_object_size(w.all), "a value listed twice");
	json_t *out = json_object();
	const char *v;
	json_t *n;
	json_object_foreach(w.all, v, n)
	{
		w.keys = json_object();
		size_t got = inf_index(i, x, v, walk_key, &w);
		cr_assert_eq(got, (size_t)json_integer_value(n),
			     "index %u value %s: %zu objects, said %lld", x, v,
			     got, (long long)json_integer_value(n));
		cr_assert_eq(inf_index_count(i, x, v), got);
		cr_assert_eq(json_object_size(w.keys), got,
			     "index %u value %s: a key twice", x, v);
		json_object_set_new(out, v, w.keys);
	}
	json_decref(w.all);
	return out;
}

/* The same, rebuilt from a fresh list of the store. */
static json_t *index_from_list(unsigned x)
{
	struct tc_list l = {0};
	struct eng_range_req q = {.prefix = PFX, .prefix_len = strlen(PFX)};
	struct eng_range_res res;
	TC_OK(tc_range(S.e, &q, &l, &res));
	json_t *out = json_object();
	for (size_t k = 0; k < l.n; k++) {
		json_t *obj = json_loadb((const char *)l.v[k].value,
					 l.v[k].value_len, 0, NULL);
		if (!json_is_object(obj)) {
			json_decref(obj);
			continue;
		}
		json_t *meta = json_object_get(obj, "metadata");
		json_t *vals = json_array();
		if (x == INF_IDX_NAMESPACE) {
			const char *ns = json_string_value(
			    json_object_get(meta, "namespace"));
			json_array_append_new(vals, json_string(ns ? ns : ""));
		} else {
			size_t j;
			json_t *r;
			json_array_foreach(
			    json_object_get(meta, "ownerReferences"), j, r)
			{
				json_array_append(vals,
						  json_object_get(r, "uid"));
			}
		}
		size_t j;
		json_t *v;
		json_array_foreach(vals, j, v)
		{
			const char *s = json_string_value(v);
			json_t *keys = json_object_get(out, s);
			if (!keys) {
				keys = json_object();
				json_object_set_new(out, s, keys);
			}
			json_object_set_new(keys, (const char *)l.v[k].key,
					    json_true());
		}
		json_decref(vals);
		json_decref(obj);
	}
	tc_list_free(&l);
	return out;
}

static void expect_indexes_exact(inf *i, int with_owner)
{
	for (unsigned x = 0; x <= (with_owner ? OWNER : 0); x++) {
		if (x != INF_IDX_NAMESPACE && x != OWNER)
			continue;
		json_t *got = index_of(i, x);
		json_t *want = index_from_list(x);
		char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
		char *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
		cr_assert(
		    json_equal(got, want),
		    "index %u differs from a fresh list:\n got  %.2000s\n "
		    "want %.2000s",
		    x, g, w);
		free(g);
		free(w);
		json_decref(got);
		json_decref(want);
	}
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_eq(st.index_rebuilds, 0);
}

struct names {
	json_t *keys;
};

static int name_of(void *ud, const struct inf_obj *o)
{
	struct names *n = ud;
	json_array_append_new(n->keys,
			      json_stringn((const char *)o->key, o->key_len));
	return 0;
}

/* The keys inf_index gives, sorted, joined by spaces. */
static char *keys_at(inf *i, unsigned x, const char *value)
{
	struct names n = {json_array()};
	inf_index(i, x, value, name_of, &n);
	size_t cnt = json_array_size(n.keys);
	const char **v = calloc(cnt + 1, sizeof *v);
	for (size_t k = 0; k < cnt; k++)
		v[k] = json_string_value(json_array_get(n.keys, k));
	qsort(v, cnt, sizeof *v, cmp_str_p);
	char *out = calloc(1, 4096);
	for (size_t k = 0; k < cnt; k++) {
		strcat(out, k ? " " : "");
		strcat(out, v[k] + strlen(PFX));
	}
	free(v);
	json_decref(n.keys);
	return out;
}

#define EXPECT_KEYS(i, x, value, want)                                         \
	do {                                                                   \
		char *got_ = keys_at(i, x, value);                             \
		cr_assert_str_eq(got_, want, "index %u, %s", x, value);        \
		free(got_);                                                    \
	} while (0)

Test(inf, indexes_follow_adds_updates_and_deletes, .init = setup,
     .fini = teardown)
{
	put_obj(PFX "a", "ns1", "u1", NULL, NULL);
	put_obj(PFX "b", "ns1", "u1", "u2", NULL);
	put_obj(PFX "c", "ns2", "u2", "u2", NULL); /* a repeat counts once */
	put_obj(PFX "d", NULL, NULL, NULL, NULL);  /* cluster-scoped */
	putk(PFX "raw", "not json");
	inf *i = start_indexed(2, 1);
	unsigned id;
	cr_assert_eq(inf_add_indexer(i, "late", index_owner, NULL, &id),
		     LP_E_INVAL, "indexers are added before the start");
	cr_assert_eq(inf_indexer_find(i, "owner"), (int)OWNER);
	cr_assert_eq(inf_indexer_find(i, "namespace"), INF_IDX_NAMESPACE);
	cr_assert_eq(inf_indexer_find(i, "nope"), -1);
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "ns1", "a b");
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "ns2", "c");
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "", "d");
	EXPECT_KEYS(i, OWNER, "u1", "a b");
	EXPECT_KEYS(i, OWNER, "u2", "b c");
	cr_assert_eq(inf_index_count(i, OWNER, "u3"), 0);
	cr_assert_eq(inf_index_count(i, 99, "u1"), 0, "an unknown indexer");
	expect_indexes_exact(i, 1);

	/* The decoded object is there, shared and kept by a reference. */
	struct inf_item *it = NULL;
	cr_assert_eq(inf_get_by_name(i, NULL, "b", &it), LP_OK);
	cr_assert(json_is_object(it->obj.json));
	json_t *meta = json_object_get(it->obj.json, "metadata");
	cr_assert_str_eq(json_string_value(json_object_get(meta, "namespace")),
			 "ns1");
	inf_item_free(it);
	cr_assert_eq(inf_get(i, PFX "raw", strlen(PFX "raw"), &it), LP_OK);
	cr_assert_null(it->obj.json, "not JSON: bytes only");
	inf_item_free(it);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_eq(st.decode_errors, 1);
	cr_assert_eq(st.index_values, 3 + 2, "ns1 ns2 \"\", u1 u2");

	/* Owners change, a namespace empties, a key goes, one comes. */
	put_obj(PFX "a", "ns1", "u3", NULL, "moved to u3");
	put_obj(PFX "c", "ns1", NULL, NULL, "ns2 is empty now");
	tc_dels(S.e, PFX "b");
	int64_t last = put_obj(PFX "e", "ns3", "u1", NULL, NULL);
	cr_assert_eq(inf_wait_rev(i, last), LP_OK);
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "ns1", "a c");
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "ns2", "");
	EXPECT_KEYS(i, INF_IDX_NAMESPACE, "ns3", "e");
	EXPECT_KEYS(i, OWNER, "u1", "e");
	EXPECT_KEYS(i, OWNER, "u2", "");
	EXPECT_KEYS(i, OWNER, "u3", "a");
	inf_stats(i, &st);
	cr_assert_eq(st.index_values, 3 + 2, "ns1 ns3 \"\", u1 u3");
	expect_indexes_exact(i, 1);
	expect_all_equal(i, last);
	inf_free(i);

	/* A raw informer keeps bytes only and takes no indexer. */
	struct inf_opts o = {
	    .e = S.e, .prefix = PFX, .prefix_len = 3, .raw = 1};
	cr_assert_eq(inf_new(&o, &i), LP_OK);
	cr_assert_eq(inf_add_indexer(i, "owner", index_owner, NULL, &id),
		     LP_E_INVAL);
	cr_assert_eq(inf_start(i), LP_OK);
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	cr_assert_eq(inf_get(i, PFX "a", 4, &it), LP_OK);
	cr_assert_null(it->obj.json);
	inf_item_free(it);
	cr_assert_eq(inf_by_namespace(i, "ns1", name_of, NULL), 0);
	inf_free(i);
}

/* The informer pauses in its first list, the store changes under it and
   is compacted past the list's revision: the re-list must leave every
   index as a fresh list would build it. Then the watch overflows the ring
   while the informer is paused again, and the same must hold. */
Test(inf, a_relist_after_compaction_or_overflow_keeps_indexes_exact,
     .init = setup_small_ring, .fini = teardown)
{
	char k[64], ns[16], o1[16], o2[16];
	putk(PFX "gate", "first"); /* sorts before the k keys */
	for (int n = 0; n < 40; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		snprintf(ns, sizeof ns, "ns%d", n % 4);
		snprintf(o1, sizeof o1, "u%d", n % 7);
		put_obj(k, n % 10 ? ns : NULL, o1, n % 3 ? NULL : "u-common",
			NULL);
	}
	close_gate();
	inf *i = start_indexed(8, 1);
	wait_at_gate();
	for (int n = 0; n < 40; n += 2) { /* half change: new owners, ns */
		snprintf(k, sizeof k, PFX "k%04d", n);
		snprintf(ns, sizeof ns, "ns%d", (n / 2) % 5);
		snprintf(o1, sizeof o1, "u%d", n % 11);
		put_obj(k, ns, o1, NULL, "second");
	}
	for (int n = 1; n < 40; n += 6) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		tc_dels(S.e, k);
	}
	put_obj(PFX "k0100", "ns9", "u-new", "u-common", NULL);
	int64_t last = putk(PFX "gate", "second");
	int64_t done = 0;
	TC_OK(eng_compact(S.e, eng_rev(S.e), &done));
	open_gate();
	cr_assert_eq(inf_wait_synced(i), LP_OK);
	expect_all_equal(i, last);
	expect_indexes_exact(i, 1);
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_geq(st.relist_compacted, 1);

	close_gate();
	putk(PFX "gate", "third");
	wait_at_gate(); /* paused in the watch's on_update */
	for (int n = 0; n < 40; n++) {
		snprintf(k, sizeof k, PFX "k%04d", n);
		snprintf(ns, sizeof ns, "ns%d", n % 3);
		snprintf(o1, sizeof o1, "u%d", n % 5);
		snprintf(o2, sizeof o2, "v%d", n % 2);
		if (n % 4 == 3)
			tc_dels(S.e, k);
		else
			put_obj(k, ns, o1, n % 2 ? o2 : NULL, "third");
	}
	tc_dels(S.e, PFX "k0100");
	last = put_obj(PFX "k0200", NULL, "u-common", NULL, NULL);
	open_gate();
	expect_all_equal(i, last);
	expect_indexes_exact(i, 1);
	inf_stats(i, &st);
	cr_assert_geq(st.relist_overflow, 1, "the ring holds 16 events");
	inf_free(i);
}

/* Periodic resync: every cached object comes back as an update whose old
   and new states are the same, and only while the informer runs. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int same; /* on_update calls with old == cur */
} R = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void r_update(void *ud, const struct inf_obj *old,
		     const struct inf_obj *cur)
{
	(void)ud;
	pthread_mutex_lock(&R.mu);
	if (old->mod_rev == cur->mod_rev && old->key_len == cur->key_len &&
	    !memcmp(old->key, cur->key, cur->key_len))
		R.same++;
	pthread_cond_broadcast(&R.cv);
	pthread_mutex_unlock(&R.mu);
}

Test(inf, a_periodic_resync_hands_every_object_back, .init = setup,
     .fini = teardown)
{
	tc_puts(S.e, PFX "a", "{}");
	tc_puts(S.e, PFX "b", "{}");
	tc_puts(S.e, PFX "c", "{}");
	struct inf_opts o = {.name = "resync",
			     .e = S.e,
			     .prefix = PFX,
			     .prefix_len = strlen(PFX),
			     .handlers = {.on_update = r_update},
			     .resync_ms = 5};
	inf *i = NULL;
	TC_OK(inf_new(&o, &i));
	TC_OK(inf_start(i));
	TC_OK(inf_wait_synced(i));
	/* Two rounds at least: wait for the calls, not for a time (the
	   safety net is only there for a hang). */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 60;
	pthread_mutex_lock(&R.mu);
	while (R.same < 6 &&
	       pthread_cond_timedwait(&R.cv, &R.mu, &dl) != ETIMEDOUT)
		;
	int same = R.same;
	pthread_mutex_unlock(&R.mu);
	cr_assert_geq(same, 6, "two resyncs of 3 objects");
	struct inf_stats st;
	inf_stats(i, &st);
	cr_assert_geq(st.resyncs, 1, "counted after its round's calls");
	cr_assert_eq(st.adds, 3);
	inf_stop(i);
	pthread_mutex_lock(&R.mu);
	same = R.same;
	pthread_mutex_unlock(&R.mu);
	inf_stats(i, &st);
	cr_assert_eq(st.updates, (uint64_t)same,
		     "every update was a resync: nothing was written");
	inf_free(i);
	pthread_mutex_lock(&R.mu);
	cr_assert_eq(R.same, same, "no handler call after inf_stop");
	pthread_mutex_unlock(&R.mu);
}

/* inf_opts.whole: keys it accepts are decoded whole; the others only as
   far as metadata when laid out as the registry stores objects, and whole
   (never wrongly) when laid out otherwise. */
static bool whole_under_w(void *ud, const uint8_t *key, size_t len)
{
	(void)ud;
	return len >= strlen(PFX "w/") &&
	       !memcmp(key, PFX "w/", strlen(PFX "w/"));
}

static json_t *cached(inf *i, const char *key)
{
	struct inf_item *it = NULL;
	TC_OK(inf_get(i, key, strlen(key), &it));
	json_t *j = json_incref(it->obj.json);
	inf_item_free(it);
	return j;
}

/* The bytes the cache keeps of key, as a new string. */
static char *cached_bytes(inf *i, const char *key)
{
	struct inf_item *it = NULL;
	TC_OK(inf_get(i, key, strlen(key), &it));
	char *b = (char *)tc_dup(it->obj.value, it->obj.value_len);
	inf_item_free(it);
	return b;
}

static void expect_bytes(inf *i, const char *key, const char *want)
{
	char *b = cached_bytes(i, key);
	cr_assert_str_eq(b, want, "%s", key);
	free(b);
}

Test(inf, only_metadata_is_decoded_where_whole_says_no, .init = setup,
     .fini = teardown)
{
	const char *obj = "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
			  "\"metadata\":{\"name\":\"a\",\"namespace\":\"ns1\","
			  "\"labels\":{\"q\":\"\\\"}\"}},"
			  "\"data\":{\"k\":\"v\"}}";
	tc_puts(S.e, PFX "w/a", obj);
	tc_puts(S.e, PFX "m/a", obj);
	/* not the registry's layout: metadata first, an escape in kind */
	tc_puts(S.e, PFX "m/b",
		"{\"metadata\":{},\"apiVersion\":\"v1\",\"kind\":\"K\","
		"\"spec\":1}");
	/* a custom resource's: apiVersion first */
	tc_puts(S.e, PFX "m/e",
		"{\"apiVersion\":\"g.io/v1\",\"kind\":\"K\",\"metadata\":"
		"{\"name\":\"e\"},\"spec\":1}");
	tc_puts(S.e, PFX "m/c",
		"{\"kind\":\"K\\/b\",\"apiVersion\":\"v1\",\"metadata\":{},"
		"\"spec\":1}");
	tc_puts(S.e, PFX "m/d",
		"{\"kind\":\"K\",\"apiVersion\":\"v1\","
		"\"metadata\":{\"name\":\"d\"} ");
	/* managedFields first, in the middle, last and alone */
	static const char *const mf[][2] = {
	    {"{\"managedFields\":[{\"a\":\"}\"}],\"name\":\"f\"}",
	     "{\"name\":\"f\"}"},
	    {"{\"name\":\"g\",\"managedFields\":[],\"uid\":\"u\"}",
	     "{\"name\":\"g\",\"uid\":\"u\"}"},
	    {"{\"name\":\"h\",\"managedFields\":[{}]}", "{\"name\":\"h\"}"},
	    {"{\"managedFields\":[]}", "{}"},
	    /* a string ending in an escaped backslash, then one with an
	       escaped quote and brace, before managedFields */
	    {"{\"labels\":{\"b\":\"x\\\\\",\"c\":\"\\\"}\\\\\\\"\"},"
	     "\"managedFields\":[{\"m\":\"\\\"]\"}]}",
	     "{\"labels\":{\"b\":\"x\\\\\",\"c\":\"\\\"}\\\\\\\"\"}}"},
	};
	char key[64], val[256], head[256];
	for (size_t k = 0; k < sizeof mf / sizeof mf[0]; k++) {
		snprintf(key, sizeof key, PFX "m/mf%zu", k);
		snprintf(
		    val, sizeof val,
		    "{\"kind\":\"K\",\"apiVersion\":\"v1\",\"metadata\":%s,"
		    "\"data\":{\"x\":\"y\"}}",
		    mf[k][0]);
		tc_puts(S.e, key, val);
	}
	struct inf_opts o = {.name = "whole",
			     .e = S.e,
			     .prefix = PFX,
			     .prefix_len = strlen(PFX),
			     .whole = whole_under_w};
	inf *i = NULL;
	TC_OK(inf_new(&o, &i));
	TC_OK(inf_start(i));
	TC_OK(inf_wait_synced(i));

	json_t *w = cached(i, PFX "w/a"), *m = cached(i, PFX "m/a");
	json_t *want = json_loads(obj, 0, NULL);
	cr_assert(json_equal(w, want), "decoded whole");
	json_object_del(want, "data");
	cr_assert(json_equal(m, want), "apiVersion, kind and metadata only");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(m, "metadata"), "labels"),
		"q")),
	    "\"}", "escapes inside metadata decoded");
	json_decref(want);
	json_decref(w);
	json_decref(m);
	for (const char *const *k =
		 (const char *const[]){PFX "m/b", PFX "m/c", NULL};
	     *k; k++) {
		json_t *j = cached(i, *k);
		cr_assert_eq(json_integer_value(json_object_get(j, "spec")), 1,
			     "%s: another layout is decoded whole", *k);
		json_decref(j);
	}
	json_t *e = cached(i, PFX "m/e");
	cr_assert_null(json_object_get(e, "spec"), "custom layout: head only");
	cr_assert_str_eq(json_string_value(json_object_get(e, "kind")), "K");
	cr_assert_str_eq(json_string_value(json_object_get(e, "apiVersion")),
			 "g.io/v1");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(e, "metadata"), "name")),
			 "e");
	json_decref(e);
	/* A broken value past metadata: the head decodes; a whole decode
	   would have failed. Either way the namespace index still works. */
	json_t *d = cached(i, PFX "m/d");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(d, "metadata"), "name")),
			 "d");
	json_decref(d);
	/* the bytes kept: the head only where whole says no, and only
	   of the registry's layouts */
	char *wb = cached_bytes(i, PFX "w/a");
	cr_assert_str_eq(wb, obj, "kept whole");
	free(wb);
	expect_bytes(i, PFX "m/a",
		     "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
		     "\"metadata\":{\"name\":\"a\",\"namespace\":\"ns1\","
		     "\"labels\":{\"q\":\"\\\"}\"}}}");
	expect_bytes(i, PFX "m/e",
		     "{\"apiVersion\":\"g.io/v1\",\"kind\":\"K\",\"metadata\":"
		     "{\"name\":\"e\"}}");
	expect_bytes(i, PFX "m/b",
		     "{\"metadata\":{},\"apiVersion\":\"v1\",\"kind\":\"K\","
		     "\"spec\":1}");
	for (size_t k = 0; k < sizeof mf / sizeof mf[0]; k++) {
		snprintf(key, sizeof key, PFX "m/mf%zu", k);
		snprintf(
		    head, sizeof head,
		    "{\"kind\":\"K\",\"apiVersion\":\"v1\",\"metadata\":%s}",
		    mf[k][1]);
		expect_bytes(i, key, head);
		json_t *j = cached(i, key);
		cr_assert_not_null(j, "%s decodes", key);
		cr_assert_null(json_object_get(json_object_get(j, "metadata"),
					       "managedFields"));
		json_decref(j);
	}
	size_t n = inf_index_count(i, INF_IDX_NAMESPACE, "ns1");
	cr_assert_eq(n, 2,
		     "both copies of the object are indexed by namespace");
	inf_stop(i);
	inf_free(i);
}

/* The informer's thread is a background one (inf_background_thread): its
   handlers run under SCHED_BATCH, in a thread named "informer", so the
   writer that wakes it after each commit is not preempted by it. */
static struct {
	pthread_mutex_t mu;
	int policy;
	char name[16];
} B = {.mu = PTHREAD_MUTEX_INITIALIZER, .policy = -1};

static void b_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	(void)o;
	pthread_mutex_lock(&B.mu);
	B.policy = sched_getscheduler(0);
	pthread_getname_np(pthread_self(), B.name, sizeof B.name);
	pthread_mutex_unlock(&B.mu);
}

Test(inf, handlers_run_on_a_background_thread, .init = setup,
     .fini = teardown)
{
	tc_puts(S.e, PFX "a", "{}");
	struct inf_opts o = {.name = "batch",
			     .e = S.e,
			     .prefix = PFX,
			     .prefix_len = strlen(PFX),
			     .handlers = {.on_add = b_add}};
	inf *i = NULL;
	TC_OK(inf_new(&o, &i));
	TC_OK(inf_start(i));
	TC_OK(inf_wait_synced(i));
	pthread_mutex_lock(&B.mu);
	int policy = B.policy;
	char name[16];
	memcpy(name, B.name, sizeof name);
	pthread_mutex_unlock(&B.mu);
	cr_assert_eq(policy, SCHED_BATCH, "policy %d", policy);
	cr_assert_str_eq(name, "informer");
	cr_assert_eq(sched_getscheduler(0), SCHED_OTHER,
		     "the caller's own thread is left alone");
	inf_stop(i);
	inf_free(i);
}

/* inf_opts.eager: what it rejects is cached as bytes, in no index, and
   decoded when a handler asks (once: the cache keeps the tree); inf_get
   decodes a copy of its own and leaves the cache as it is. */
static struct {
	inf *i;
	int calls;	     /* handler calls */
	int lazy_on_arrival; /* a current object came with no json */
	int decoded;	     /* inf_json gave an object with its name */
	int twice_same;	     /* and the same tree when asked again */
	int old_kept;	     /* an update's old state had its json */
} L;

static bool eager_owned(void *ud, const struct inf_obj *o)
{
	(void)ud;
	return memmem(o->value, o->value_len, "ownerReferences", 15) != NULL;
}

static void l_check(const struct inf_obj *o)
{
	/* "c" is left alone: the cache keeps it as bytes */
	if (o->key_len == strlen(PFX "c") &&
	    !memcmp(o->key, PFX "c", o->key_len))
		return;
	L.lazy_on_arrival += o->json == NULL;
	json_t *j = inf_json(L.i, o);
	const char *name = json_string_value(
	    json_object_get(json_object_get(j, "metadata"), "name"));
	L.decoded += name && name[0] == (char)o->key[strlen(PFX)];
	L.twice_same += j && inf_json(L.i, o) == j && o->json == j;
}

static void l_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	L.calls++;
	l_check(o);
}

static void l_update(void *ud, const struct inf_obj *old,
		     const struct inf_obj *cur)
{
	(void)ud;
	L.calls++;
	L.old_kept += old->json != NULL;
	l_check(cur);
}

static int l_count_lazy(void *ud, const struct inf_obj *o)
{
	*(int *)ud += o->json == NULL;
	return 0;
}

Test(inf, values_eager_rejects_are_decoded_when_a_handler_asks, .init = setup,
     .fini = teardown)
{
	const char *plain =
	    "{\"kind\":\"K\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"n\"},"
	    "\"data\":{\"k\":\"v\"}}";
	char buf[256];
	snprintf(buf, sizeof buf, plain, "a");
	tc_puts(S.e, PFX "a", buf);
	tc_puts(S.e, PFX "b",
		"{\"kind\":\"K\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
		"\"b\",\"namespace\":\"n\",\"ownerReferences\":[{\"uid\":"
		"\"u1\"}]}}");
	snprintf(buf, sizeof buf, plain, "c");
	tc_puts(S.e, PFX "c", buf);
	memset(&L, 0, sizeof L);
	struct inf_opts o = {
	    .name = "eager",
	    .e = S.e,
	    .prefix = PFX,
	    .prefix_len = strlen(PFX),
	    .handlers = {.on_add = l_add, .on_update = l_update},
	    .eager = eager_owned};
	TC_OK(inf_new(&o, &L.i));
	TC_OK(inf_add_indexer(L.i, "owner", index_owner, NULL, &OWNER));
	TC_OK(inf_start(L.i));
	TC_OK(inf_wait_synced(L.i));
	cr_assert_eq(L.calls, 3);
	cr_assert_eq(L.lazy_on_arrival, 1, "a arrives as bytes, b decoded");
	cr_assert_eq(L.decoded, 2);
	cr_assert_eq(L.twice_same, 2, "decoded once, kept in the cache");
	/* only what eager took is indexed */
	cr_assert_eq(inf_index_count(L.i, INF_IDX_NAMESPACE, "n"), 1);
	cr_assert_eq(inf_index_count(L.i, OWNER, "u1"), 1);
	/* c: bytes in the cache, a decoded copy from inf_get */
	int lazy = 0;
	inf_list(L.i, l_count_lazy, &lazy);
	cr_assert_eq(lazy, 1, "only c is still bytes");
	json_t *c = cached(L.i, PFX "c");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(c, "metadata"), "name")),
			 "c");
	cr_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(c, "data"), "k")),
	    "v", "decoded whole (no whole predicate)");
	json_decref(c);
	lazy = 0;
	inf_list(L.i, l_count_lazy, &lazy);
	cr_assert_eq(lazy, 1, "inf_get left the cache as it was");
	/* an update: the old state decoded before, the new one as bytes */
	snprintf(buf, sizeof buf, plain, "a");
	int64_t rev = tc_puts(S.e, PFX "a", buf);
	TC_OK(inf_wait_rev(L.i, rev));
	cr_assert_eq(L.calls, 4);
	cr_assert_eq(L.old_kept, 1);
	cr_assert_eq(L.lazy_on_arrival, 2);
	cr_assert_eq(L.decoded, 3);
	/* a value that is not JSON: no tree, counted once */
	rev = tc_puts(S.e, PFX "d", "not json");
	TC_OK(inf_wait_rev(L.i, rev));
	struct inf_stats st;
	inf_stats(L.i, &st);
	cr_assert_eq(st.decode_errors, 1);
	cr_assert_eq(L.decoded, 3);
	inf_stop(L.i);
	inf_free(L.i);
}

/* Under a steady stream the informer pauses between batches (batch_ms)
   and commits do not wake it; inf_wait_rev and inf_stop end the pause.
   The pause is reached deterministically: the handler of "g" holds the
   informer while "b" is committed, so both are one batch, nothing has
   asked for the thread since, and the test commits "c" once the pause
   has begun (inf_stats). With a minute's pause, "c" handled
   before inf_wait_rev asks means a commit woke the thread. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int closed, held, adds;
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void p_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	pthread_mutex_lock(&P.mu);
	if (o->key_len == strlen(PFX "g") && !memcmp(o->key, PFX "g", 4)) {
		P.held = 1;
		pthread_cond_broadcast(&P.cv);
		while (P.closed)
			pthread_cond_wait(&P.cv, &P.mu);
	}
	P.adds++;
	pthread_cond_broadcast(&P.cv);
	pthread_mutex_unlock(&P.mu);
}

static int p_adds(void)
{
	pthread_mutex_lock(&P.mu);
	int n = P.adds;
	pthread_mutex_unlock(&P.mu);
	return n;
}

Test(inf, commits_do_not_wake_a_pause_that_inf_wait_rev_ends, .init = setup,
     .fini = teardown)
{
	P.closed = 1;
	P.held = P.adds = 0;
	struct inf_opts o = {.name = "pause",
			     .e = S.e,
			     .prefix = PFX,
			     .prefix_len = strlen(PFX),
			     .handlers = {.on_add = p_add},
			     .batch_ms = 60000};
	inf *i = NULL;
	TC_OK(inf_new(&o, &i));
	TC_OK(inf_start(i));
	TC_OK(inf_wait_synced(i));
	/* idle: the commit of g wakes it; its handler holds it */
	tc_puts(S.e, PFX "g", "{}");
	pthread_mutex_lock(&P.mu);
	while (!P.held)
		pthread_cond_wait(&P.cv, &P.mu);
	pthread_mutex_unlock(&P.mu);
	tc_puts(S.e, PFX "b", "{}");
	pthread_mutex_lock(&P.mu);
	P.closed = 0;
	pthread_cond_broadcast(&P.cv);
	while (P.adds < 2) /* b comes in the same batch, before the pause */
		pthread_cond_wait(&P.cv, &P.mu);
	pthread_mutex_unlock(&P.mu);
	/* pausing now (or about to): a commit does not wake it */
	struct inf_stats st;
	for (inf_stats(i, &st); st.pauses == 0; inf_stats(i, &st))
		usleep(1000);
	int64_t rev = tc_puts(S.e, PFX "c", "{}");
	usleep(50 * 1000);
	cr_assert_eq(p_adds(), 2, "a commit woke the pause");
	TC_OK(inf_wait_rev(i, rev));
	cr_assert_eq(p_adds(), 3);
	inf_stop(i); /* ends the next pause too */
	inf_free(i);
}
