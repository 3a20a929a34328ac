/*
 * writes.c -- the write pool: writes (create, update, patch, delete,
 * deletecollection) run on worker threads while their connection is
 * suspended, and a timer answers 504 for a write that outlives
 * --request-timeout.
 *
 * Why: the engine's single writer commits every queued transaction with one
 * fsync (engine/writer.c), but a write waits in eng_txn_commit until that
 * fsync. Run on MHD's pool (one thread per core), a write blocked the
 * thread, so at most nproc writes ever met in one group and every other
 * connection on that thread waited too. Here a write costs MHD a suspend
 * and a resume; the workers are many and mostly sleep in the commit, so
 * concurrent writes share one group commit. The handlers run unchanged: a
 * worker calls srv_dispatch, and srv_reply_* store the response in
 * r->wresp instead of queueing it (http.c invariant 3).
 *
 * Threads: MHD pool threads call srv__wpool_submit and srv__wpool_answer;
 * the workers run handlers; the timer thread answers late writes;
 * srv_stop's thread closes the pool.
 *
 * A request's state (p->mu guards it and every r->job field):
 *
 *   submit --> QUEUED --worker takes it--> RUNNING --handler done--> READY
 *                 |                           |                       |
 *                 +--deadline (timer)--+------+--deadline (timer)     |
 *                                      v                              |
 *                                  TIMED_OUT (504 stored)             |
 *                                      |                              |
 *                 srv__wpool_answer <--+------ resume ----------------+
 *                 queues r->job.resp: SENT
 *
 * Invariants:
 *  1. Exactly one of the worker (RUNNING -> READY) and the timer (QUEUED or
 *     RUNNING -> TIMED_OUT) resumes the connection, after the transition
 *     under p->mu and after storing r->job.resp; nobody touches the
 *     connection between the submit's suspend and that resume.
 *  2. A worker holds a reference on r from submit until it is done with the
 *     handler (or, for a request timed out while queued, the timer drops
 *     it). The connection's reference is dropped at completion; whoever is
 *     last frees r, so a client that went away, or a 504 sent while the
 *     handler still waits for its commit, leaks nothing and frees nothing
 *     in use.
 *  3. After srv__wpool_close returns, no request is queued or running and
 *     every connection the pool suspended has been resumed: MHD may stop.
 *     A write submitted after close starts runs inline (submit says false).
 *  4. A request is on the in-flight list exactly while QUEUED or RUNNING.
 *
 * Lock order: p->mu, then libmicrohttpd's own (MHD_suspend_connection runs
 * under p->mu); MHD_resume_connection is always called without p->mu, and
 * MHD holds none of its locks when it calls the access handler.
 */
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "http.h"
#include "lapis/assert.h"
#include "lapis/log.h"

/* Workers mostly sleep in eng_txn_commit, so the count bounds how many
   writes can share one group commit, not CPU use: 64 covers the concurrent
   writers of a busy control plane (kube's default max-mutating-requests-
   inflight is 200) at 64 mostly idle stacks. */
#define DEFAULT_WORKERS 64u

enum wstate { W_NONE, W_QUEUED, W_RUNNING, W_READY, W_TIMED_OUT, W_SENT };

/* A worker and its own wake-up. Idle workers wait on a stack, and a submit
   wakes the one that went idle last: at low concurrency the same one or two
   workers run every write, with their stacks, malloc caches and the CPU
   cache warm (a shared condition variable wakes them in turn, each cold). */
struct worker {
	struct srv_wpool *p;
	pthread_t th;
	pthread_cond_t cv;	  /* waits for woken */
	struct worker *next_idle; /* on p->idle; under p->mu */
	bool woken;		  /* popped off p->idle by a submit; mu */
};

struct srv_wpool {
	pthread_mutex_t mu;
	struct worker *idle;	 /* idle workers, the last idle on top; mu */
	pthread_cond_t timer_cv; /* the timer waits for the next deadline */
	struct srv_req *q_head, *q_tail; /* QUEUED, oldest first; under mu */
	struct srv_req *flight; /* QUEUED or RUNNING (invariant 4); mu */
	bool closed;		/* no new requests; under mu */
	bool timer_stop;	/* under mu */
	int64_t timer_next;	/* the timer's next wake-up; under mu */
	uint64_t timeout_ms;	/* 0: none; read-only */
	unsigned n_workers;	/* running; start and close only */
	struct worker *workers;
	pthread_t timer;
	bool timer_started;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ lists */

/* Call with p->mu held. */
static void flight_add(struct srv_wpool *p, struct srv_req *r)
{
	r->job.f_prev = NULL;
	r->job.f_next = p->flight;
	if (p->flight)
		p->flight->job.f_prev = r;
	p->flight = r;
}

/* Call with p->mu held. */
static void flight_remove(struct srv_wpool *p, struct srv_req *r)
{
	if (r->job.f_prev)
		r->job.f_prev->job.f_next = r->job.f_next;
	else
		p->flight = r->job.f_next;
	if (r->job.f_next)
		r->job.f_next->job.f_prev = r->job.f_prev;
	r->job.f_prev = r->job.f_next = NULL;
}

/* Call with p->mu held. */
static struct srv_req *queue_pop(struct srv_wpool *p)
{
	struct srv_req *r = p->q_head;
	if (r) {
		p->q_head = r->job.q_next;
		if (!p->q_head)
			p->q_tail = NULL;
		r->job.q_next = NULL;
	}
	return r;
}

/* Call with p->mu held. */
static void queue_remove(struct srv_wpool *p, struct srv_req *r)
{
	struct srv_req *prev = NULL;
	for (struct srv_req *q = p->q_head; q; prev = q, q = q->job.q_next) {
		if (q != r)
			continue;
		if (prev)
			prev->job.q_next = r->job.q_next;
		else
			p->q_head = r->job.q_next;
		if (p->q_tail == r)
			p->q_tail = prev;
		r->job.q_next = NULL;
		return;
	}
	LP_UNREACHABLE();
}

/* ------------------------------------------------------------ submit */

bool srv__wpool_submit(struct srv_wpool *p, struct srv_req *r)
{
	if (!p || !srv__req_detach(r))
		return false; /* out of memory: inline is still correct */
	pthread_mutex_lock(&p->mu);
	if (p->closed) {
		pthread_mutex_unlock(&p->mu);
		r->deferred = false; /* the copies stay valid; unused */
		return false;
	}
	atomic_fetch_add(&r->refs, 1); /* the worker's (invariant 2) */
	/* Suspended before any worker can see it: the resume always
	   follows the suspend (invariant 1). */
	MHD_suspend_connection(r->conn);
	r->job.state = W_QUEUED;
	if (r->timeout_ms)
		r->job.deadline_ms = r->start_ms + r->timeout_ms;
	else if (p->timeout_ms)
		r->job.deadline_ms = r->start_ms + (int64_t)p->timeout_ms;
	else
		r->job.deadline_ms = INT64_MAX;
	if (p->q_tail)
		p->q_tail->job.q_next = r;
	else
		p->q_head = r;
	p->q_tail = r;
	flight_add(p, r);
	bool sooner = r->job.deadline_ms < p->timer_next; /* than it plans */
	struct worker *w = p->idle; /* none idle: a busy one takes it next */
	if (w) {
		p->idle = w->next_idle;
		w->woken = true;
	}
	pthread_mutex_unlock(&p->mu);
	/* Signalled after the unlock: a worker woken under the lock would
	   only block on it again, a second wake-up on every write. */
	if (w)
		pthread_cond_signal(&w->cv);
	if (sooner)
		pthread_cond_signal(&p->timer_cv);
	return true;
}

bool srv__wpool_answer(struct srv_wpool *p, struct srv_req *r)
{
	pthread_mutex_lock(&p->mu);
	LP_ASSERT(r->job.state == W_READY || r->job.state == W_TIMED_OUT ||
		  r->job.state == W_SENT);
	struct MHD_Response *resp = r->job.resp;
	unsigned code = r->job.code;
	r->job.resp = NULL;
	r->job.state = W_SENT;
	pthread_mutex_unlock(&p->mu);
	if (!resp)
		return code != 0; /* queued already; or no answer: close */
	enum MHD_Result ok = MHD_queue_response(r->conn, code, resp);
	MHD_destroy_response(resp);
	return ok == MHD_YES;
}

/* ------------------------------------------------------------ workers */

static void run(struct srv_wpool *p, struct srv_req *r)
{
	srv_dispatch(r);
	if (!r->answered)
		srv_reply_fail(r, LP_E_IO, "no response");
	struct MHD_Response *discard = NULL;
	bool resume = false;
	pthread_mutex_lock(&p->mu);
	if (r->job.state == W_RUNNING) {
		r->job.state = W_READY;
		r->job.resp = r->wresp;
		r->job.code = r->wresp ? r->wcode : 0;
		flight_remove(p, r);
		resume = true;
	} else {
		/* timed out: the client has its 504 (kube, too, may still
		   commit a write whose request timed out) */
		LP_ASSERT(r->job.state == W_TIMED_OUT ||
			  r->job.state == W_SENT);
		discard = r->wresp;
	}
	r->wresp = NULL;
	pthread_mutex_unlock(&p->mu);
	if (discard)
		MHD_destroy_response(discard);
	if (resume)
		MHD_resume_connection(r->conn);
	srv__req_unref(r);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct srv_wpool *p = w->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct srv_req *r = queue_pop(p);
		if (!r) {
			if (p->closed)
				break; /* closed and drained (invariant 3) */
			w->woken = false;
			w->next_idle = p->idle;
			p->idle = w;
			while (!w->woken)
				pthread_cond_wait(&w->cv, &p->mu);
			continue;
		}
		r->job.state = W_RUNNING;
		pthread_mutex_unlock(&p->mu);
		run(p, r);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ------------------------------------------------------------ timer */

/* Answer r with kube's timeout Status (finisher.go: a request whose
   context ends first). Call with p->mu held; the caller resumes. */
static void time_out(struct srv_wpool *p, struct srv_req *r)
{
	struct srv_error err = {.code = LP_E_TIMEOUT};
	snprintf(err.message, sizeof err.message,
		 "Timeout: request did not complete within requested timeout - "
		 "context deadline exceeded");
	unsigned code = 0;
	r->job.resp = srv__status_response(&err, &code);
	r->job.code = code; /* 0 (OOM): the connection is closed */
	r->job.state = W_TIMED_OUT;
	flight_remove(p, r);
}

static void *timer_main(void *arg)
{
	struct srv_wpool *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->timer_stop) {
		int64_t now = now_ms(), next = INT64_MAX;
		struct srv_req *due = NULL; /* chained through job.q_next */
		for (struct srv_req *r = p->flight, *nx; r; r = nx) {
			nx = r->job.f_next;
			if (r->job.deadline_ms > now) {
				if (r->job.deadline_ms < next)
					next = r->job.deadline_ms;
				continue;
			}
			if (r->job.state == W_QUEUED)
				queue_remove(p, r);
			/* a queued one never reaches a worker: the timer
			   drops the worker's reference after the resume */
			r->job.unstarted = r->job.state == W_QUEUED;
			time_out(p, r);
			r->job.q_next = due;
			due = r;
		}
		pthread_mutex_unlock(&p->mu);
		for (struct srv_req *r = due, *nx; r; r = nx) {
			nx = r->job.q_next;
			r->job.q_next = NULL;
			bool queued = r->job.unstarted;
			MHD_resume_connection(r->conn);
			if (queued)
				srv__req_unref(r);
		}
		pthread_mutex_lock(&p->mu);
		if (due)
			continue; /* look again before sleeping */
		if (p->timer_stop)
			break;
		p->timer_next = next;
		if (next == INT64_MAX) {
			pthread_cond_wait(&p->timer_cv, &p->mu);
		} else {
			struct timespec ts = {.tv_sec = next / 1000,
					      .tv_nsec =
						  (next % 1000) * 1000000L};
			pthread_cond_timedwait(&p->timer_cv, &p->mu, &ts);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ------------------------------------------------------------ start/stop */

lp_err srv__wpool_start(unsigned n, uint64_t timeout_ms, struct srv_wpool **out)
{
	struct srv_wpool *p = calloc(1, sizeof *p);
	if (!p)
		return LP_E_NOMEM;
	if (!n)
		n = DEFAULT_WORKERS;
	p->timeout_ms = timeout_ms;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->timer_cv, &ca);
	pthread_condattr_destroy(&ca);
	p->workers = calloc(n, sizeof *p->workers);
	if (!p->workers)
		goto fail;
	if (pthread_create(&p->timer, NULL, timer_main, p))
		goto fail;
	p->timer_started = true;
	for (; p->n_workers < n; p->n_workers++) {
		struct worker *w = &p->workers[p->n_workers];
		w->p = p;
		pthread_cond_init(&w->cv, NULL);
		if (pthread_create(&w->th, NULL, worker_main, w)) {
			pthread_cond_destroy(&w->cv);
			goto fail;
		}
	}
	*out = p;
	return LP_OK;
fail:
	lp_error("cannot start %u write workers: %s", n, strerror(errno));
	srv__wpool_close(p);
	srv__wpool_free(p);
	return LP_E_NOMEM;
}

void srv__wpool_close(struct srv_wpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->closed = true;
	struct worker *idle = p->idle;
	p->idle = NULL;
	for (struct worker *w = idle; w; w = w->next_idle)
		w->woken = true;
	for (struct worker *w = idle; w; w = w->next_idle)
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&p->mu);
	/* Workers drain the queue before they exit (invariant 3); the timer
	   keeps answering late ones meanwhile. */
	for (unsigned i = 0; i < p->n_workers; i++) {
		pthread_join(p->workers[i].th, NULL);
		pthread_cond_destroy(&p->workers[i].cv);
	}
	p->n_workers = 0;
	LP_ASSERT(!p->flight && !p->q_head);
	if (p->timer_started) {
		pthread_mutex_lock(&p->mu);
		p->timer_stop = true;
		pthread_cond_signal(&p->timer_cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->timer, NULL);
		p->timer_started = false;
	}
}

void srv__wpool_free(struct srv_wpool *p)
{
	if (!p)
		return;
	LP_ASSERT(!p->n_workers && !p->timer_started);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->timer_cv);
	free(p->workers);
	free(p);
}
