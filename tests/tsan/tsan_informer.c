/*
 * tsan_informer.c -- an informer with indexes fed by writer threads while
 * reader threads query it, for ThreadSanitizer (Criterion aborts under
 * TSan, Criterion issue #274, so this is a plain program: exit 0 on
 * success, 1 on a failed check).
 *
 * Running together on one store with a small watch ring (so the informer
 * overflows and lists again) and a compacting thread (so a re-list can
 * meet LP_E_COMPACTED):
 *   - writer threads putting JSON objects whose namespace and owner UIDs
 *     change at random, deleting, and committing two-key transactions;
 *   - the informer thread, with the namespace index and an owner-UID
 *     indexer, whose handlers read each decoded object and publish the
 *     latest one in a shared slot (a reference handed to other threads);
 *   - reader threads querying inf_index, inf_by_namespace, inf_index_count,
 *     inf_index_values and inf_get, keeping decoded objects past the cache
 *     lock (inf_keep) and reading them afterwards, and taking the slot's
 *     object, so the last reference to a tree is often dropped on a thread
 *     that is not the informer's;
 *   - a second informer as the controllers run theirs: heads only
 *     (inf_opts.whole says no to all), objects without an owner left as
 *     bytes (inf_opts.eager) and decoded by its handlers (inf_json) while
 *     the readers walk it (inf_list) and copy from it (inf_get).
 *
 * Invariants checked (besides TSan's own)
 *  1. Every object inf_index hands out under a value really has that value
 *     (its namespace, or an ownerReference with that UID), and a value's
 *     count equals the number of objects visited under it.
 *  2. At the end, once the informer reached the last revision, every index
 *     equals the one computed from a fresh list of the store: the same
 *     values with the same counts (invariant 1 then makes them the same
 *     sets), and no index was rebuilt; the second informer's owner index
 *     too.
 * The seed is printed; LAPIS_SEED overrides it. Nothing sleeps on time
 * but the compacting thread's pauses between compactions.
 */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../controllers/informer.h"
#include "lapis/engine.h"
#include "support.h"

#define WRITERS 2
#define READERS 3
#define OPS 2500 /* per writer */
#define KEYS 200
#define N_NS 5
#define N_OWNERS 13
#define PFX "/t/"

static eng *E;
static inf *I, *L; /* L: heads, decoded on demand */
static unsigned OWNER, LOWNER;
static _Atomic int writers_done;
static _Atomic int failures;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

/* The latest object the handlers saw (kept by inf_keep); guarded by
   slot_mu. */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *slot;
static struct inf_tree *slot_tree;
static _Atomic long handled;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&fail_mu);
	if (atomic_fetch_add(&failures, 1) < 20) {
		fprintf(stderr, "tsan_informer: FAIL: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&fail_mu);
}

/* ------------------------------------------------------------ objects */

static json_t *refs_of(const json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"),
			       "ownerReferences");
}

static const char *ns_of(const json_t *obj)
{
	const char *ns = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "namespace"));
	return ns ? ns : "";
}

static int has_owner(const json_t *obj, const char *uid)
{
	size_t k;
	json_t *r;
	json_array_foreach(refs_of(obj), k, r)
	{
		const char *u = json_string_value(json_object_get(r, "uid"));
		if (u && !strcmp(u, uid))
			return 1;
	}
	return 0;
}

static void index_owner(void *ud, const struct inf_obj *o, struct inf_emit *em)
{
	(void)ud;
	size_t k;
	json_t *r;
	json_array_foreach(refs_of(o->json), k, r)
	{
		inf_emit(em, json_string_value(json_object_get(r, "uid")));
	}
}

/* A random object's JSON; new, free(). */
static char *random_obj(uint64_t *st, const char *name, int writer, int n)
{
	uint64_t x = ts_rand(st);
	json_t *meta = json_pack("{s:s}", "name", name);
	if (x % 6)
		json_object_set_new(
		    meta, "namespace",
		    json_sprintf("ns%u", (unsigned)(x >> 8) % N_NS));
	json_t *refs = json_array();
	for (unsigned k = 0; k < (unsigned)(x >> 16) % 4; k++)
		json_array_append_new(
		    refs, json_pack("{s:o,s:b}", "uid",
				    json_sprintf("u%u",
						 (unsigned)(x >> (20 + 4 * k)) %
						     N_OWNERS),
				    "blockOwnerDeletion", (int)(k % 2)));
	json_object_set_new(meta, "ownerReferences", refs);
	/* laid out as the registry stores objects (L keeps the head) */
	json_t *obj =
	    json_pack("{s:s,s:s,s:o,s:i,s:i}", "kind", "Thing", "apiVersion",
		      "v1", "metadata", meta, "writer", writer, "n", n);
	char *v = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	return v;
}

/* ------------------------------------------------------------ writers */

struct writer {
	int id;
	uint64_t seed;
	long puts, dels, txns;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t st = w->seed;
	char k[64], k2[64];
	for (int n = 0; n < OPS; n++) {
		uint64_t x = ts_rand(&st);
		snprintf(k, sizeof k, PFX "k%03u", (unsigned)(x % KEYS));
		unsigned op = (unsigned)(x >> 32) % 10;
		eng_txn *t = NULL;
		lp_err rc = eng_txn_new(E, &t);
		char *v = NULL, *v2 = NULL;
		if (rc == LP_OK && op < 7) {
			v = random_obj(&st, k, w->id, n);
			rc = eng_txn_put(t, k, strlen(k), v, strlen(v),
					 ENG_NO_SLOT, NULL);
			w->puts++;
		} else if (rc == LP_OK && op < 9) {
			rc = eng_txn_del(t, k, strlen(k), NULL);
			w->dels++;
		} else if (rc == LP_OK) {
			/* Two keys in one revision: two events, one rev. */
			snprintf(k2, sizeof k2, PFX "k%03u",
				 (unsigned)((x >> 8) % KEYS));
			v = random_obj(&st, k, w->id, n);
			v2 = random_obj(&st, k2, w->id, n);
			rc = eng_txn_put(t, k, strlen(k), v, strlen(v),
					 ENG_NO_SLOT, NULL);
			if (rc == LP_OK && strcmp(k, k2))
				rc = eng_txn_put(t, k2, strlen(k2), v2,
						 strlen(v2), ENG_NO_SLOT, NULL);
			w->txns++;
		}
		struct eng_commit_res cr;
		if (rc == LP_OK)
			rc = eng_txn_commit(t, &cr);
		eng_txn_free(t);
		free(v);
		free(v2);
		if (rc != LP_OK) {
			fail("writer %d: %s", w->id, lp_errname(rc));
			break;
		}
	}
	return NULL;
}

static void *compact_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&writers_done)) {
		int64_t done = 0;
		int64_t rev = eng_rev(E);
		lp_err rc = eng_compact(E, rev > 20 ? rev - 20 : rev, &done);
		if (rc != LP_OK && rc != LP_E_COMPACTED)
			fail("compact: %s", lp_errname(rc));
		struct timespec ts = {0, 2000000}; /* 2 ms: let history grow */
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ------------------------------------------------------------ handlers */

static void publish(const struct inf_obj *o)
{
	atomic_fetch_add(&handled, 1);
	if (!o->json)
		return;
	(void)ns_of(o->json); /* read the shared tree */
	json_t *j = inf_keep(o);
	pthread_mutex_lock(&slot_mu);
	struct inf_tree *old = slot_tree;
	slot = j;
	slot_tree = o->tree;
	pthread_mutex_unlock(&slot_mu);
	inf_unkeep(old);
}

static void on_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	publish(o);
}

static void on_update(void *ud, const struct inf_obj *old,
		      const struct inf_obj *cur)
{
	(void)ud;
	(void)refs_of(old->json);
	publish(cur);
}

static void on_delete(void *ud, const struct inf_obj *last)
{
	(void)ud;
	(void)refs_of(last->json);
	atomic_fetch_add(&handled, 1);
}

/* L's: decode what it left as bytes, on its thread. */
static bool l_eager(void *ud, const struct inf_obj *o)
{
	(void)ud;
	return memmem(o->value, o->value_len, "\"uid\"", 5) != NULL;
}

static bool l_whole(void *ud, const uint8_t *key, size_t len)
{
	(void)ud;
	(void)key;
	(void)len;
	return false;
}

static void l_read(const struct inf_obj *o)
{
	json_t *j = inf_json(L, o);
	if (!json_is_object(json_object_get(j, "metadata")))
		fail("L: no metadata decoded");
	if (json_object_get(j, "writer"))
		fail("L: more than the head decoded");
}

static void l_add(void *ud, const struct inf_obj *o)
{
	(void)ud;
	l_read(o);
}

static void l_update(void *ud, const struct inf_obj *old,
		     const struct inf_obj *cur)
{
	(void)ud;
	l_read(old);
	l_read(cur);
}

static void l_delete(void *ud, const struct inf_obj *last)
{
	(void)ud;
	l_read(last);
}

/* ------------------------------------------------------------ readers */

struct visit {
	unsigned idx;
	const char *value;
	size_t n;
	json_t *kept; /* one object kept past the lock */
	struct inf_tree *kept_tree;
};

static int visit_obj(void *ud, const struct inf_obj *o)
{
	struct visit *v = ud;
	v->n++;
	if (!o->json) {
		fail("an indexed object without its JSON");
		return 0;
	}
	int ok = v->idx == INF_IDX_NAMESPACE ? !strcmp(ns_of(o->json), v->value)
					     : has_owner(o->json, v->value);
	if (!ok)
		fail("index %u value %s holds an object without it", v->idx,
		     v->value);
	if (!v->kept) {
		v->kept = inf_keep(o);
		v->kept_tree = o->tree;
	}
	return 0;
}

struct reader {
	int id;
	uint64_t seed;
	long queries, objects, gets;
};

static void query(struct reader *r, unsigned idx, const char *value)
{
	struct visit v = {.idx = idx, .value = value};
	size_t n = inf_index(I, idx, value, visit_obj, &v);
	if (n != v.n)
		fail("inf_index says %zu, visited %zu", n, v.n);
	r->queries++;
	r->objects += (long)n;
	if (v.kept) { /* read after the lock, then maybe free it here */
		if (idx == OWNER && !has_owner(v.kept, value))
			fail("a kept object changed");
		inf_unkeep(v.kept_tree);
	}
}

static int count_value(void *ud, const char *value, size_t n)
{
	long *sum = ud;
	*sum += (long)n;
	(void)value;
	return 0;
}

/* Under L's lock: a tree its thread may have just set. */
static int l_walk(void *ud, const struct inf_obj *o)
{
	++*(long *)ud;
	if (o->json && !json_is_object(json_object_get(o->json, "metadata")))
		fail("L: a walked object has no metadata");
	return 0;
}

/* inf_get of a random key of informer x; the copy must be of that key. */
static void get_one(struct reader *r, inf *x, const char *who, uint64_t rnd)
{
	char k[64];
	snprintf(k, sizeof k, "k%03u", (unsigned)(rnd >> 8) % KEYS);
	struct inf_item *it = NULL;
	lp_err rc = inf_get_by_name(x, NULL, k, &it);
	if (rc == LP_OK) {
		/* Kept by the item past the lock. */
		const char *name = json_string_value(json_object_get(
		    json_object_get(it->obj.json, "metadata"), "name"));
		if (!name || strcmp(name + strlen(PFX), k))
			fail("%sinf_get %s: a bad object", who, k);
		inf_item_free(it);
	} else if (rc != LP_E_NOTFOUND) {
		fail("%sinf_get: %s", who, lp_errname(rc));
	}
	r->gets++;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t st = r->seed;
	char val[32];
	while (!atomic_load(&writers_done)) {
		uint64_t x = ts_rand(&st);
		switch (x % 8) {
		case 6: {
			long n = 0;
			inf_list(L, l_walk, &n);
			r->queries++;
			r->objects += n;
			break;
		}
		case 7:
			get_one(r, L, "L: ", x);
			break;
		case 0:
		case 1:
			snprintf(val, sizeof val, "u%u",
				 (unsigned)(x >> 8) % N_OWNERS);
			query(r, OWNER, val);
			break;
		case 2:
			snprintf(val, sizeof val, "ns%u",
				 (unsigned)(x >> 8) % N_NS);
			query(r, INF_IDX_NAMESPACE, (x >> 16) % 4 ? val : "");
			break;
		case 3: {
			snprintf(val, sizeof val, "u%u",
				 (unsigned)(x >> 8) % N_OWNERS);
			(void)inf_index_count(I, OWNER, val);
			long sum = 0;
			inf_index_values(I, INF_IDX_NAMESPACE, count_value,
					 &sum);
			r->queries += 2;
			break;
		}
		case 4:
			get_one(r, I, "", x);
			break;
		default: {
			/* A reference of our own to the slot's tree (which
			   holds one), then read it unlocked. */
			pthread_mutex_lock(&slot_mu);
			struct inf_obj so = {.json = slot, .tree = slot_tree};
			json_t *j = inf_keep(&so);
			pthread_mutex_unlock(&slot_mu);
			if (j &&
			    !json_is_object(json_object_get(j, "metadata")))
				fail("the slot's object has no metadata");
			inf_unkeep(so.tree);
			break;
		}
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ the end */

struct expect {
	long ns[N_NS + 1]; /* [N_NS]: cluster-scoped */
	long owner[N_OWNERS];
};

static enum eng_take expect_rec(void *ud, const struct eng_record *rec)
{
	struct expect *x = ud;
	json_t *obj =
	    json_loadb((const char *)rec->value, rec->value_len, 0, NULL);
	const char *ns = ns_of(obj);
	unsigned n;
	if (!*ns)
		x->ns[N_NS]++;
	else if (sscanf(ns, "ns%u", &n) == 1 && n < N_NS)
		x->ns[n]++;
	for (unsigned u = 0; u < N_OWNERS; u++) {
		char val[16];
		snprintf(val, sizeof val, "u%u", u);
		x->owner[u] += has_owner(obj, val);
	}
	json_decref(obj);
	return ENG_TAKE;
}

static void check_exact(void)
{
	struct expect x = {0};
	eng_rd *rd = NULL;
	lp_err rc = eng_rd_begin(E, &rd);
	struct eng_range_req q = {.prefix = PFX, .prefix_len = strlen(PFX)};
	struct eng_range_res res;
	if (rc == LP_OK)
		rc = eng_range(rd, &q, expect_rec, &x, &res);
	eng_rd_end(rd);
	if (rc) {
		fail("final list: %s", lp_errname(rc));
		return;
	}
	char val[16];
	long values = 0;
	for (unsigned n = 0; n <= N_NS; n++) {
		snprintf(val, sizeof val, "ns%u", n);
		const char *v = n == N_NS ? "" : val;
		size_t got = inf_index_count(I, INF_IDX_NAMESPACE, v);
		if ((long)got != x.ns[n])
			fail("namespace \"%s\": %zu in the index, %ld listed",
			     v, got, x.ns[n]);
		values += x.ns[n] > 0;
	}
	for (unsigned u = 0; u < N_OWNERS; u++) {
		snprintf(val, sizeof val, "u%u", u);
		size_t got = inf_index_count(I, OWNER, val);
		if ((long)got != x.owner[u])
			fail("owner %s: %zu in the index, %ld listed", val, got,
			     x.owner[u]);
		values += x.owner[u] > 0;
		got = inf_index_count(L, LOWNER, val);
		if ((long)got != x.owner[u])
			fail("L: owner %s: %zu in the index, %ld listed", val,
			     got, x.owner[u]);
	}
	struct inf_stats st;
	inf_stats(I, &st);
	if ((long)st.index_values != values)
		fail("%" PRIu64 " index values, %ld expected", st.index_values,
		     values);
	if (st.index_rebuilds)
		fail("%" PRIu64 " index rebuilds", st.index_rebuilds);
	fprintf(stderr,
		"tsan_informer: rev %" PRId64 ", %" PRIu64 " objects, %" PRIu64
		" events, lists %" PRIu64 " (overflow %" PRIu64
		", compacted %" PRIu64 "), %" PRIu64 " index values\n",
		st.rev, st.objects, st.events, st.lists, st.relist_overflow,
		st.relist_compacted, st.index_values);
}

int main(void)
{
	uint64_t seed = ts_seed("tsan_informer", 9191);
	char *dir = ts_tmpdir("tsan-informer");
	struct eng_opts o = {.dir = dir, .nosync = 1, .ring_events = 128};
	lp_err rc = eng_open(&o, &E);
	if (rc) {
		fprintf(stderr, "tsan_informer: open: %s\n", lp_errname(rc));
		return 1;
	}
	struct inf_opts io = {
	    .name = "tsan",
	    .e = E,
	    .prefix = PFX,
	    .prefix_len = strlen(PFX),
	    .handlers = {on_add, on_update, on_delete, NULL},
	    .list_page = 16, /* short pages: a compaction can hit a list */
	};
	struct inf_opts lo = {
	    .name = "tsan-lazy",
	    .e = E,
	    .prefix = PFX,
	    .prefix_len = strlen(PFX),
	    .handlers = {l_add, l_update, l_delete, NULL},
	    .list_page = 16,
	    .whole = l_whole,
	    .eager = l_eager,
	};
	if ((rc = inf_new(&io, &I)) ||
	    (rc = inf_add_indexer(I, "owner", index_owner, NULL, &OWNER)) ||
	    (rc = inf_start(I)) || (rc = inf_new(&lo, &L)) ||
	    (rc = inf_add_indexer(L, "owner", index_owner, NULL, &LOWNER)) ||
	    (rc = inf_start(L))) {
		fprintf(stderr, "tsan_informer: informer: %s\n",
			lp_errname(rc));
		return 1;
	}
	static struct writer wr[WRITERS];
	static struct reader rd[READERS];
	pthread_t twr[WRITERS], trd[READERS], tcp;
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
	/* A last write under the prefix: the revision to wait for. */
	char *v = random_obj(&seed, PFX "zz", 9, 0);
	eng_txn *t = NULL;
	struct eng_commit_res cr = {0};
	if ((rc = eng_txn_new(E, &t)) == LP_OK &&
	    (rc = eng_txn_put(t, PFX "zz", 5, v, strlen(v), ENG_NO_SLOT,
			      NULL)) == LP_OK)
		rc = eng_txn_commit(t, &cr);
	eng_txn_free(t);
	free(v);
	if (rc)
		fail("last write: %s", lp_errname(rc));
	atomic_store(&writers_done, 1);
	for (int i = 0; i < READERS; i++)
		pthread_join(trd[i], NULL);
	pthread_join(tcp, NULL);
	if (rc == LP_OK && (rc = inf_wait_rev(I, cr.rev)))
		fail("inf_wait_rev: %s", lp_errname(rc));
	if (rc == LP_OK && (rc = inf_wait_rev(L, cr.rev)))
		fail("L: inf_wait_rev: %s", lp_errname(rc));
	if (rc == LP_OK)
		check_exact();
	for (int i = 0; i < READERS; i++)
		fprintf(stderr,
			"tsan_informer: reader %d: %ld queries, %ld objects, "
			"%ld gets\n",
			i, rd[i].queries, rd[i].objects, rd[i].gets);
	fprintf(stderr, "tsan_informer: %ld handler calls\n",
		atomic_load(&handled));
	inf_free(I);
	inf_free(L);
	inf_unkeep(slot_tree);
	eng_close(E);
	ts_rmtree_free(dir);
	int nf = atomic_load(&failures);
	if (nf)
		fprintf(stderr,
			"tsan_informer: %d failures (seed %" PRIu64 ")\n", nf,
			seed);
	return nf ? 1 : 0;
}
