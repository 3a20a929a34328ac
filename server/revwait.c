/*
 * revwait.c -- a GET or list "not older than" a revision the store has not
 * reached waits for it here, its connection suspended, instead of in its
 * handler.
 *
 * Why: kube's watch cache waits up to 3 s for such a revision before its
 * 504. Waiting in the handler (eng_wait_rev) held the libmicrohttpd thread,
 * and with it every request of every connection on that thread, for as
 * long (watch.c invariant 9 did the same for watches).
 *
 * How: the handler parks the request (srv_revwait_park): it goes on a
 * list and its connection is suspended. One thread ("rev-wait") resumes
 * each parked connection once the store reaches its revision or its time
 * is up; the access handler then runs the request again from the start,
 * marked as having waited, and its read no longer waits: it answers at
 * the revision reached, or with kube's 504. While anything is parked, a
 * watcher of every key (engine) wakes the thread at each commit; with
 * nothing parked it is closed and the thread sleeps.
 *
 * Threads: libmicrohttpd's call park; the waiter's thread resumes; the
 * engine's writer runs on_commit; srv_stop's thread closes.
 *
 * Invariants:
 *  1. A request is on the list from its park (its connection suspended
 *     under w->mu, before the thread can see it) until the thread takes it
 *     off, which is followed by exactly one resume, made without w->mu
 *     (libmicrohttpd's lock comes after ours, as in writes.c). Once
 *     resumed, the request is libmicrohttpd's again and may be freed at
 *     any time: its link is read before the resume.
 *  2. Only the thread opens, drains and closes the watcher; on_commit only
 *     sets kicked under w->mu and signals, so no wake between the thread's
 *     look at the revision and its sleep is lost.
 *  3. After srv_revwait_close, nothing is parked and park says false, and
 *     every request parked has completed (its answer sent, or its
 *     connection gone) or CLOSE_DRAIN_MS passed: the daemon's stop
 *     closes every connection, and would drop answers not yet written.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <microhttpd.h>

#include "http.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "revwait.h"

/* How long srv_revwait_close waits for the answers of the requests it
   resumed to be written. */
#define CLOSE_DRAIN_MS 1000

struct srv_revwait {
	eng *e;
	unsigned live; /* parked, or resumed and not completed (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct srv_req *head; /* parked, under mu (r->rw_next) */
	bool kicked;	      /* a commit since the last drain */
	bool closing;
	bool started;
	eng_watch *ew; /* the thread's (invariant 2) */
	pthread_t th;
};

static void on_commit(void *ud)
{
	struct srv_revwait *w = ud;
	pthread_mutex_lock(&w->mu);
	w->kicked = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Take the events that woke the thread, arming on_commit again. Called
   with w->mu held, which it lets go meanwhile. */
static void drain(struct srv_revwait *w)
{
	w->kicked = false;
	eng_watch *ew = w->ew;
	if (!ew)
		return;
	pthread_mutex_unlock(&w->mu);
	eng_event *ev;
	lp_err rc;
	while (!(rc = eng_watch_next(ew, &ev)))
		eng_event_unref(ev);
	if (rc != LP_E_AGAIN) {
		/* fell behind, or the store closes: open another (or poll) */
		eng_watch_close(ew);
		ew = NULL;
	}
	pthread_mutex_lock(&w->mu);
	w->ew = ew;
}

static void *run(void *arg)
{
	struct srv_revwait *w = arg;
	pthread_setname_np(pthread_self(), "rev-wait");
	bool watch_failed = false;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		if (w->kicked)
			drain(w);
		/* the revision after the drain: a later commit kicks again */
		int64_t cur = eng_rev(w->e), now = lp_mono_ms();
		int64_t next = INT64_MAX;
		struct srv_req *due = NULL;
		for (struct srv_req **pp = &w->head; *pp;) {
			struct srv_req *r = *pp;
			if (w->closing || r->rw_rev <= cur ||
			    r->rw_until <= now) {
				*pp = r->rw_next;
				r->rw_next = due;
				due = r;
				continue;
			}
			if (r->rw_until < next)
				next = r->rw_until;
			pp = &r->rw_next;
		}
		if (due) {
			pthread_mutex_unlock(&w->mu);
			while (due) {
				struct srv_req *n =
				    due->rw_next; /* invariant 1 */
				MHD_resume_connection(due->conn);
				due = n;
			}
			pthread_mutex_lock(&w->mu);
			continue;
		}
		if (!w->head && w->ew) {
			eng_watch *ew = w->ew;
			w->ew = NULL;
			pthread_mutex_unlock(&w->mu);
			eng_watch_close(ew);
			pthread_mutex_lock(&w->mu);
			w->kicked = false;
			continue;
		}
		if (!w->head) {
			if (w->closing)
				break;
			watch_failed = false;
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		if (!w->ew && !watch_failed) {
			pthread_mutex_unlock(&w->mu);
			eng_watch *ew = NULL;
			lp_err rc = eng_watch_open(w->e, NULL, 0, eng_rev(w->e),
						   on_commit, w, &ew);
			pthread_mutex_lock(&w->mu);
			if (rc) {
				lp_warn("rev-wait: cannot watch the store: %s; "
					"polling",
					lp_strerror(rc));
				watch_failed = true;
			}
			w->ew = ew;
			/* a new watcher is armed by its first empty next (the
			   drain); look again: a commit may have come */
			w->kicked = true;
			continue;
		}
		if (w->kicked || w->closing)
			continue;
		if (!w->ew && now + 10 < next)
			next = now + 10; /* no watcher: poll */
		struct timespec dl = lp_mono_deadline(next - now);
		pthread_cond_timedwait(&w->cv, &w->mu, &dl);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

lp_err srv_revwait_start(eng *e, struct srv_revwait **out)
{
	struct srv_revwait *w = calloc(1, sizeof *w);
	if (!w)
		return LP_E_NOMEM;
	w->e = e;
	pthread_mutex_init(&w->mu, NULL);
	if (lp_cond_init_mono(&w->cv)) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return LP_E_NOMEM;
	}
	if (pthread_create(&w->th, NULL, run, w)) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return LP_E_NOMEM;
	}
	w->started = true;
	*out = w;
	return LP_OK;
}

bool srv_revwait_park(struct srv_revwait *w, struct srv_req *r, int64_t rev,
		      int64_t timeout_ms)
{
	if (!w || r->rev_waited || eng_rev(w->e) >= rev)
		return false;
	pthread_mutex_lock(&w->mu);
	if (w->closing) {
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	r->rw_rev = rev;
	r->rw_until = lp_mono_ms() + timeout_ms;
	r->rw_next = w->head;
	r->rev_parked = true;
	w->head = r;
	w->live++;
	MHD_suspend_connection(r->conn); /* before the thread sees it */
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return true;
}

void srv_revwait_close(struct srv_revwait *w)
{
	if (!w || !w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->closing = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	w->started = false;
	eng_watch_close(w->ew);
	w->ew = NULL;
	/* invariant 3: the resumed answers go out before the daemon stops */
	struct timespec dl = lp_mono_deadline(CLOSE_DRAIN_MS);
	pthread_mutex_lock(&w->mu);
	while (w->live &&
	       pthread_cond_timedwait(&w->cv, &w->mu, &dl) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&w->mu);
}

void srv_revwait_done(struct srv_revwait *w)
{
	pthread_mutex_lock(&w->mu);
	if (!--w->live && w->closing)
		pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void srv_revwait_free(struct srv_revwait *w)
{
	if (!w)
		return;
	srv_revwait_close(w);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
