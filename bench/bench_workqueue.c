/*
 * bench_workqueue.c -- the work queue benchmark: adds and get+done cycles
 * per second with 1..nproc worker threads (docs/bench-workqueue.md has the
 * figures).
 *
 *   bench-workqueue [--items N] [--rounds R] [--threads T[,T...]] [--quick]
 *
 * For each worker count T, three measurements on a fresh queue each (real
 * clock, default limits), every item a distinct key "ns-XX/obj-%08u" built
 * before timing:
 *  1. add:   the main thread adds N keys to an empty queue (adds/s; the
 *            same for every T, printed per row as a check of the noise).
 *  2. drain: the queue holds N keys and is shut down; T workers each loop
 *            wq_get/wq_done until LP_E_CLOSED (get+done/s). All T contend
 *            for the one queue lock: this is the worst case for it.
 *  3. flow:  T workers loop wq_get/wq_done while the main thread adds N
 *            keys, then shuts down; timed until every worker has left
 *            (items/s end to end: one add, one get, one done each). This is
 *            a controller's shape: an informer thread feeding workers.
 *
 * Invariants:
 *  1. It is a benchmark, not a test: it prints figures and exits 0 whatever
 *     they are; 1 when a queue call fails or an item goes missing, 2 on a
 *     usage error.
 *  2. Measured threads start together on a barrier; each counts into a
 *     local and stores it once after its loop. Times are CLOCK_MONOTONIC.
 *  3. Each figure is the best of R rounds (default 3): interference from a
 *     shared machine only ever lowers a rate.
 *  4. The workers do no work of their own between get and done, so the
 *     figures are the queue's own cost.
 *
 * Runs on the main thread and the worker threads it starts per measurement.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../controllers/workqueue.h"

#define MAX_T 64
#define KEY_LEN 32

struct opts {
	uint64_t items;
	unsigned rounds;
	unsigned threads[MAX_T];
	unsigned n_threads;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, lp_err rc)
{
	fprintf(stderr, "bench-workqueue: %s: %s\n", what, lp_strerror(rc));
	exit(1);
}

static char *keys; /* items * KEY_LEN bytes, key i at i * KEY_LEN */

static const char *key_at(uint64_t i)
{
	return keys + i * KEY_LEN;
}

static wq *new_queue(void)
{
	wq *q = NULL;
	struct wq_opts o = {.name = "bench"};
	lp_err rc = wq_new(&o, &q);
	if (rc)
		die("wq_new", rc);
	return q;
}

static void add_all(wq *q, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		lp_err rc = wq_add(q, key_at(i));
		if (rc)
			die("wq_add", rc);
	}
}

/* ------------------------------------------------------------ the workers */

struct worker {
	wq *q;
	pthread_barrier_t *start;
	pthread_t tid;
	uint64_t n; /* get+done cycles; written once at the end */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t n = 0;
	const char *k;
	pthread_barrier_wait(w->start);
	while (wq_get(w->q, &k) == LP_OK) {
		wq_done(w->q, k);
		n++;
	}
	w->n = n;
	return NULL;
}

/* Start t workers on q; they wait on the barrier with the caller. */
static void start_workers(struct worker *w, unsigned t, wq *q,
			  pthread_barrier_t *b)
{
	pthread_barrier_init(b, NULL, t + 1);
	for (unsigned i = 0; i < t; i++) {
		w[i] = (struct worker){.q = q, .start = b};
		int rc = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (rc) {
			fprintf(stderr, "bench-workqueue: pthread_create: %s\n",
				strerror(rc));
			exit(1);
		}
	}
}

static uint64_t join_workers(struct worker *w, unsigned t, pthread_barrier_t *b)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < t; i++) {
		pthread_join(w[i].tid, NULL);
		n += w[i].n;
	}
	pthread_barrier_destroy(b);
	return n;
}

static void check_count(uint64_t got, uint64_t want, const char *what)
{
	if (got != want) {
		fprintf(stderr,
			"bench-workqueue: %s: %" PRIu64
			" items handed out, %" PRIu64 " added\n",
			what, got, want);
		exit(1);
	}
}

/* ------------------------------------------------------- the measurements */

struct figures {
	double add, drain, flow; /* per second */
};

static void one_round(unsigned t, uint64_t n, struct figures *f)
{
	struct worker w[MAX_T];
	pthread_barrier_t b;

	/* 1 and 2: fill, then drain. */
	wq *q = new_queue();
	double t0 = now_s();
	add_all(q, n);
	double t1 = now_s();
	f->add = (double)n / (t1 - t0);
	wq_shutdown(q);
	start_workers(w, t, q, &b);
	pthread_barrier_wait(&b);
	t0 = now_s();
	uint64_t got = join_workers(w, t, &b);
	t1 = now_s();
	check_count(got, n, "drain");
	f->drain = (double)n / (t1 - t0);
	wq_free(q);

	/* 3: add while the workers take. */
	q = new_queue();
	start_workers(w, t, q, &b);
	pthread_barrier_wait(&b);
	t0 = now_s();
	add_all(q, n);
	wq_shutdown(q);
	got = join_workers(w, t, &b);
	t1 = now_s();
	check_count(got, n, "flow");
	f->flow = (double)n / (t1 - t0);
	wq_free(q);
}

static void best(struct figures *acc, const struct figures *f)
{
	if (f->add > acc->add)
		acc->add = f->add;
	if (f->drain > acc->drain)
		acc->drain = f->drain;
	if (f->flow > acc->flow)
		acc->flow = f->flow;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: bench-workqueue [--items N] [--rounds R]\n"
	       "                       [--threads T[,T...]] [--quick]\n"
	       "  --items N    distinct keys per measurement (default 500000;\n"
	       "               --quick 20000)\n"
	       "  --rounds R   rounds per figure, the best counts (default 3;\n"
	       "               --quick 1)\n"
	       "  --threads T  worker thread counts (default 1..nproc)\n"
	       "  --quick      a smoke run of a second or so\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int quick = 0;
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t u;
		if (strcmp(a, "--quick") == 0) {
			quick = 1;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (!v)
			return -1;
		i++;
		if (strcmp(a, "--items") == 0) {
			/* 10^8 keys of 32 bytes is 3.2 GB before the queue's
			   own entries: far past any use. */
			if (parse_u64(v, &u) || u < 1 || u > 100000000)
				return -1;
			o->items = u;
		} else if (strcmp(a, "--rounds") == 0) {
			if (parse_u64(v, &u) || u < 1 || u > 100)
				return -1;
			o->rounds = (unsigned)u;
		} else if (strcmp(a, "--threads") == 0) {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", v);
			char *save = NULL;
			for (char *tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (parse_u64(tok, &u) || u < 1 || u > MAX_T ||
				    o->n_threads >= MAX_T)
					return -1;
				o->threads[o->n_threads++] = (unsigned)u;
			}
			if (!o->n_threads)
				return -1;
		} else {
			return -1;
		}
	}
	if (!o->items)
		o->items = quick ? 20000 : 500000;
	if (!o->rounds)
		o->rounds = quick ? 1 : 3;
	if (!o->n_threads) {
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		if (np < 1)
			np = 1;
		if (np > MAX_T)
			np = MAX_T;
		for (long t = 1; t <= np; t++)
			o->threads[o->n_threads++] = (unsigned)t;
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
	keys = malloc(o.items * KEY_LEN);
	if (!keys) {
		fprintf(stderr, "bench-workqueue: out of memory\n");
		return 1;
	}
	for (uint64_t i = 0; i < o.items; i++)
		snprintf(keys + i * KEY_LEN, KEY_LEN, "ns-%02u/obj-%08" PRIu64,
			 (unsigned)(i % 16), i);

	struct utsname u;
	if (uname(&u))
		snprintf(u.release, sizeof u.release, "?");
	printf("machine: nproc=%ld, kernel %s; items=%" PRIu64
	       " distinct keys, best of %u rounds\n",
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, o.items, o.rounds);
	printf("%-8s %14s %16s %16s %12s\n", "workers", "add/s (1 thr)",
	       "drain get+done/s", "flow items/s", "flow ns/item");
	for (unsigned i = 0; i < o.n_threads; i++) {
		unsigned t = o.threads[i];
		struct figures acc = {0};
		for (unsigned r = 0; r < o.rounds; r++) {
			struct figures f;
			one_round(t, o.items, &f);
			best(&acc, &f);
		}
		printf("%-8u %14.0f %16.0f %16.0f %12.0f\n", t, acc.add,
		       acc.drain, acc.flow, 1e9 / acc.flow);
		fflush(stdout);
	}
	free(keys);
	return 0;
}
