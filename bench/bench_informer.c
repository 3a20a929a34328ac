/*
 * bench_informer.c -- the informer benchmark: events per second from store
 * commit to an informer's handler, and on to a worker's sync through a
 * work queue, with 1..nproc writer threads (docs/bench-workqueue.md has
 * the figures).
 *
 *   bench-informer [--events N] [--rounds R] [--writers W[,W...]] [--quick]
 *
 * For each writer count W, three measurements, each on a fresh store (an
 * LMDB environment in a temporary directory, no fsync) and a fresh
 * informer that has synced the empty prefix before timing starts:
 *  1. raw:     the informer keeps bytes only (inf_opts.raw); its handler
 *              counts. The cost of list-watch and the cache alone.
 *  2. indexed: the informer decodes every object once (jansson) and keeps
 *              the namespace index and an owner-UID index (the GC's); the
 *              handler counts. What the controllers' shared informer does.
 *  3. sync:    as 2, and the handler queues the key (wq_add); two worker
 *              threads take keys, read the object from the cache (inf_get)
 *              and call done. Timed until every key has been synced.
 * W writer threads create N objects in all (distinct keys, one commit
 * each, as N API creates would), about 480-byte ConfigMap-like JSON with
 * a namespace out of 16 and an ownerReference, built before timing. The
 * clock runs from the start barrier until the last handler call (1, 2) or
 * the last sync (3): events/s = N / that. commits/s is N over the time the
 * writers took, for comparison: the informer keeps up when the two agree.
 *
 * Invariants:
 *  1. It is a benchmark, not a test: it prints figures and exits 0 whatever
 *     they are; 1 when an engine or informer call fails or an event goes
 *     missing, 2 on a usage error.
 *  2. Each figure is the best of R rounds (default 3): interference from a
 *     shared machine only ever lowers a rate.
 *  3. An informer that falls behind the engine's watch ring lists again;
 *     the lists column counts them (1 = no re-list), since a re-list
 *     delivers fewer, merged events: the handler then sees the objects,
 *     not every commit, and the event count is of objects delivered.
 *
 * Runs on the main thread, the writers, the informer's thread and the
 * workers it starts per measurement.
 */
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../controllers/informer.h"
#include "../controllers/workqueue.h"
#include "lapis/engine.h"

#define MAX_W 64
#define PFX "/registry/configmaps/"
#define SYNC_WORKERS 2

enum mode { RAW, INDEXED, SYNC, N_MODES };
static const char *const mode_name[N_MODES] = {"raw", "indexed", "sync"};

struct opts {
	uint64_t events;
	unsigned rounds;
	unsigned writers[MAX_W];
	unsigned n_writers;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, lp_err rc)
{
	fprintf(stderr, "bench-informer: %s: %s\n", what, lp_strerror(rc));
	exit(1);
}

/* ------------------------------------------------------------ objects */

static char **keys, **values; /* built once, before any timing */

static void build_objects(uint64_t n)
{
	keys = calloc(n, sizeof *keys);
	values = calloc(n, sizeof *values);
	if (!keys || !values)
		die("objects", LP_E_NOMEM);
	for (uint64_t i = 0; i < n; i++) {
		char ns[16], name[32], uid[64], owner[64];
		snprintf(ns, sizeof ns, "ns-%02u", (unsigned)(i % 16));
		snprintf(name, sizeof name, "cm-%08" PRIu64, i);
		snprintf(uid, sizeof uid, "0000%04x-1111-2222-3333-%012" PRIx64,
			 (unsigned)(i % 16), i);
		snprintf(owner, sizeof owner,
			 "ffff%04x-1111-2222-3333-%012" PRIx64,
			 (unsigned)(i % 16), i / 8);
		json_t *o = json_pack(
		    "{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s},s:[{s:s,s:s,"
		    "s:s,s:s,s:b,s:b}]},s:{s:s,s:s}}",
		    "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name",
		    name, "namespace", ns, "uid", uid, "resourceVersion", "1",
		    "creationTimestamp", "2024-01-01T00:00:00Z", "labels",
		    "app", "bench", "tier", "backend", "ownerReferences",
		    "apiVersion", "apps/v1", "kind", "Deployment", "name",
		    "owner", "uid", owner, "controller", 1,
		    "blockOwnerDeletion", 1, "data", "config.yaml",
		    "key: value\nother: thing\nmore: stuff\n", "note",
		    "a ConfigMap of a usual size, with one owner");
		keys[i] = malloc(strlen(PFX) + strlen(ns) + strlen(name) + 2);
		if (!o || !keys[i])
			die("objects", LP_E_NOMEM);
		sprintf(keys[i], PFX "%s/%s", ns, name);
		values[i] = json_dumps(o, JSON_COMPACT);
		json_decref(o);
	}
}

static void index_owner(void *ud, const struct inf_obj *o, struct inf_emit *em)
{
	(void)ud;
	size_t k;
	json_t *r;
	json_array_foreach(json_object_get(json_object_get(o->json, "metadata"),
					   "ownerReferences"),
			   k, r)
	{
		inf_emit(em, json_string_value(json_object_get(r, "uid")));
	}
}

/* ------------------------------------------------------------ a round */

struct round {
	enum mode mode;
	eng *e;
	inf *i;
	wq *q;
	uint64_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic uint64_t handled, synced;
	int finished; /* under mu */
};

static void finish(struct round *r)
{
	pthread_mutex_lock(&r->mu);
	r->finished = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void on_add(void *ud, const struct inf_obj *o)
{
	struct round *r = ud;
	if (r->mode == SYNC) {
		/* The queue wants a NUL-terminated key. */
		char k[ENG_KEY_MAX + 1];
		memcpy(k, o->key, o->key_len);
		k[o->key_len] = '\0';
		lp_err rc = wq_add(r->q, k);
		if (rc)
			die("wq_add", rc);
	}
	if (atomic_fetch_add(&r->handled, 1) + 1 == r->n && r->mode != SYNC)
		finish(r);
}

static void on_update(void *ud, const struct inf_obj *old,
		      const struct inf_obj *cur)
{
	(void)old;
	on_add(ud, cur); /* not expected: keys are new */
}

struct writer {
	struct round *r;
	pthread_barrier_t *start;
	pthread_t tid;
	uint64_t from, to;
	double done_at;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pthread_barrier_wait(w->start);
	for (uint64_t k = w->from; k < w->to; k++) {
		eng_txn *t = NULL;
		struct eng_commit_res cr;
		lp_err rc = eng_txn_new(w->r->e, &t);
		if (rc == LP_OK)
			rc = eng_txn_put(t, keys[k], strlen(keys[k]), values[k],
					 strlen(values[k]), ENG_NO_SLOT, NULL);
		if (rc == LP_OK)
			rc = eng_txn_commit(t, &cr);
		eng_txn_free(t);
		if (rc)
			die("commit", rc);
	}
	w->done_at = now_s();
	return NULL;
}

static void *sync_main(void *arg)
{
	struct round *r = arg;
	const char *k;
	while (wq_get(r->q, &k) == LP_OK) {
		struct inf_item *it = NULL;
		lp_err rc = inf_get(r->i, k, strlen(k), &it);
		if (rc)
			die("inf_get", rc);
		inf_item_free(it);
		wq_done(r->q, k);
		if (atomic_fetch_add(&r->synced, 1) + 1 == r->n)
			finish(r);
	}
	return NULL;
}

static int rm_entry(const char *p, const struct stat *sb, int flag,
		    struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

struct figures {
	double events_s, commits_s;
	uint64_t lists;
};

static void one_round(enum mode mode, unsigned w, uint64_t n, struct figures *f)
{
	char dir[] = "/tmp/bench-informer-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", LP_E_IO);
	struct round r = {.mode = mode, .n = n};
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	struct eng_opts eo = {.dir = dir, .nosync = 1};
	lp_err rc = eng_open(&eo, &r.e);
	if (rc)
		die("eng_open", rc);
	struct inf_opts io = {
	    .name = "bench",
	    .e = r.e,
	    .prefix = PFX,
	    .prefix_len = strlen(PFX),
	    .handlers = {.on_add = on_add, .on_update = on_update, .ud = &r},
	    .raw = mode == RAW,
	};
	unsigned id;
	if ((rc = inf_new(&io, &r.i)))
		die("inf_new", rc);
	if (mode != RAW &&
	    (rc = inf_add_indexer(r.i, "owner", index_owner, NULL, &id)))
		die("inf_add_indexer", rc);
	pthread_t workers[SYNC_WORKERS];
	if (mode == SYNC) {
		struct wq_opts qo = {.name = "bench"};
		if ((rc = wq_new(&qo, &r.q)))
			die("wq_new", rc);
		for (unsigned k = 0; k < SYNC_WORKERS; k++)
			pthread_create(&workers[k], NULL, sync_main, &r);
	}
	if ((rc = inf_start(r.i)) || (rc = inf_wait_synced(r.i)))
		die("informer", rc);

	pthread_barrier_t b;
	pthread_barrier_init(&b, NULL, w + 1);
	struct writer wr[MAX_W];
	for (unsigned k = 0; k < w; k++) {
		wr[k] = (struct writer){.r = &r,
					.start = &b,
					.from = n * k / w,
					.to = n * (k + 1) / w};
		pthread_create(&wr[k].tid, NULL, writer_main, &wr[k]);
	}
	pthread_barrier_wait(&b);
	double t0 = now_s();
	pthread_mutex_lock(&r.mu);
	while (!r.finished)
		pthread_cond_wait(&r.cv, &r.mu);
	pthread_mutex_unlock(&r.mu);
	double t1 = now_s();
	double wend = t0;
	for (unsigned k = 0; k < w; k++) {
		pthread_join(wr[k].tid, NULL);
		if (wr[k].done_at > wend)
			wend = wr[k].done_at;
	}
	struct inf_stats st;
	inf_stats(r.i, &st);
	if (mode == SYNC) {
		wq_shutdown(r.q);
		for (unsigned k = 0; k < SYNC_WORKERS; k++)
			pthread_join(workers[k], NULL);
		wq_free(r.q);
	}
	inf_free(r.i);
	eng_close(r.e);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	pthread_barrier_destroy(&b);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	f->events_s = (double)n / (t1 - t0);
	f->commits_s = (double)n / (wend - t0);
	f->lists = st.lists;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-informer [--events N] [--rounds R] "
		   "[--writers W[,W...]] [--quick]\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long nproc = sysconf(_SC_NPROCESSORS_ONLN);
	o->events = 100000;
	o->rounds = 3;
	o->n_writers = 0;
	for (int a = 1; a < argc; a++) {
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;
		if (!strcmp(argv[a], "--quick")) {
			o->events = 5000;
			o->rounds = 1;
		} else if (!strcmp(argv[a], "--events") && v) {
			char *end;
			o->events = strtoull(v, &end, 10);
			if (*end || o->events == 0)
				return -1;
			a++;
		} else if (!strcmp(argv[a], "--rounds") && v) {
			o->rounds = (unsigned)atoi(v);
			if (o->rounds == 0)
				return -1;
			a++;
		} else if (!strcmp(argv[a], "--writers") && v) {
			const char *p = v;
			while (*p && o->n_writers < MAX_W) {
				char *end;
				unsigned long t = strtoul(p, &end, 10);
				if (end == p || t == 0 || t > MAX_W)
					return -1;
				o->writers[o->n_writers++] = (unsigned)t;
				p = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					return -1;
			}
			a++;
		} else {
			return -1;
		}
	}
	if (o->n_writers == 0) {
		unsigned max = nproc > 0 && nproc < MAX_W ? (unsigned)nproc : 1;
		for (unsigned t = 1; t <= max; t++)
			o->writers[o->n_writers++] = t;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	struct utsname u;
	uname(&u);
	printf("machine: nproc=%ld, kernel %s; events=%" PRIu64
	       " creates of ~%zu-byte objects, no fsync, best of %u rounds\n",
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, o.events,
	       (build_objects(o.events), strlen(values[0])), o.rounds);
	printf("%-8s %-8s %14s %14s %10s %6s\n", "writers", "mode", "commits/s",
	       "events/s", "ns/event", "lists");
	for (unsigned k = 0; k < o.n_writers; k++) {
		for (int m = 0; m < N_MODES; m++) {
			struct figures best = {0};
			for (unsigned r = 0; r < o.rounds; r++) {
				struct figures f;
				one_round((enum mode)m, o.writers[k], o.events,
					  &f);
				if (f.events_s > best.events_s)
					best = f;
			}
			printf("%-8u %-8s %14.0f %14.0f %10.0f %6" PRIu64 "\n",
			       o.writers[k], mode_name[m], best.commits_s,
			       best.events_s, 1e9 / best.events_s, best.lists);
			fflush(stdout);
		}
	}
	for (uint64_t i = 0; i < o.events; i++) {
		free(keys[i]);
		free(values[i]);
	}
	free(keys);
	free(values);
	return 0;
}
