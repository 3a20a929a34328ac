/*
 * writes.c -- the write pool: writes (create, update, patch, delete,
 * deletecollection) run on fibers, user-space stacks that libmicrohttpd's
 * own threads switch to, so that a write waiting for its group commit
 * holds no thread; a timer answers 504 for a write that outlives
 * --request-timeout.
 *
 * Why: the engine's single writer commits every queued transaction with one
 * fsync (engine/writer.c), but a write waits in eng_txn_commit until that
 * fsync. Run on MHD's pool (one thread per core), a write blocked the
 * thread, so at most nproc writes ever met in one group and every other
 * connection on that thread waited too. Threads of a pool of our own
 * (before session 16) let the writes meet, at four thread switches per
 * write (MHD to the worker, the worker to sleep in the commit, the commit's
 * wake-up, the worker back to sleep), on a VM where a switch costs as much
 * as a fifth of a create's CPU. A fiber runs the handler unchanged
 * (srv_dispatch) on the MHD thread inside the access handler; when the
 * handler commits, the engine calls our parker (eng_set_parker): the fiber
 * switches back to the access handler, which suspends the connection and
 * returns. The thread that commits the group calls our wake: the
 * connection is resumed, and the access handler switches back into the
 * fiber, which returns from eng_txn_commit and answers. srv_reply_* store
 * the response in r->wresp (the request is deferred, http.c invariant 3),
 * and the access handler queues it.
 *
 * Threads: MHD pool threads call srv__wpool_submit, srv__wpool_resumed and
 * srv__wpool_completed and run fibers in them; the committing engine
 * thread calls fiber_wake; the timer thread answers late writes and runs
 * orphans (below); srv_stop's thread closes the pool.
 *
 * A request's state (p->mu guards it, every r->job field and every fiber
 * field but the fiber's own stack and context):
 *
 *   submit --> RUNNING <------ resumed (MHD) ----- WOKEN
 *     |         |  |  \                              ^
 *     |         |  |   +-- parks --> PARKED -- wake -+
 *     |         |  |                   |
 *     |         |  +-- handler returns: answered, SENT
 *     v         |                      |
 *   QUEUED --(a fiber frees)--> GRANTED --resumed: a fiber starts it-->
 *     |                                |
 *     +--deadline (timer)--+-----------+--deadline (timer)
 *                          v
 *                      TIMED_OUT (504 stored, resumed, answered: SENT)
 *
 * A write that times out while PARKED leaves its fiber an orphan: the
 * client has its 504 and the connection moves on, but the handler still
 * waits for its commit (kube, too, may still commit a write whose request
 * timed out). When it is woken, the timer thread runs it to its end and
 * drops its answer. Should libmicrohttpd end a connection after its resume
 * without calling the access handler (GRANTED or WOKEN; in practice it
 * calls it, even after a reset), srv__wpool_completed gives the slot on or
 * makes the fiber an orphan.
 *
 * Invariants:
 *  1. A fiber is switched to by one thread at a time: the access handler of
 *     its request's connection (that connection suspended in between), or
 *     for an orphan the timer thread. A fiber is "out" (parked and switched
 *     out, waiting for its wake) from when its runner, after the switch
 *     back, finds no wake came, until the wake: only the wake then decides
 *     who runs it next (resume the connection, or queue the orphan).
 *  2. The pool holds one reference on r from submit until it is done with
 *     it: the handler's end (on a fiber, or inline without memory for
 *     one), a timeout while QUEUED (after the resume), or a GRANTED
 *     request whose connection ended before it started.
 *     The connection's reference is dropped at completion; whoever is last
 *     frees r.
 *  3. Slots: n_busy counts fibers attached to a request plus GRANTED
 *     requests, at most max (--write-workers); beyond it writes wait in the
 *     queue, oldest first.
 *  4. A request is on the in-flight list from submit until it is answered
 *     or times out; only QUEUED and PARKED ones are the timer's to time out
 *     (the rest are running or about to, and check their deadline when
 *     they park).
 *  5. After srv__wpool_close returns, no request is queued, granted or
 *     attached to a fiber and every connection the pool suspended has been
 *     resumed: MHD may stop. A write submitted after close starts runs
 *     inline (submit says false).
 *  6. The timer's condition variable is signalled with p->mu held. The
 *     moment the lock is let go, the timer may finish the last write, close
 *     may return and the pool be freed: a signal after the unlock could
 *     touch a destroyed condition variable (TSan saw it: a commit's wake
 *     queued an orphan while the server stopped).
 *
 * Lock order: p->mu, then libmicrohttpd's own (MHD_suspend_connection runs
 * under p->mu); MHD_resume_connection is always called without p->mu. A
 * fiber never switches with a lock held (the engine parks with none).
 */
/* _setjmp/_longjmp switch between stacks here, which glibc's fortified
   longjmp (__longjmp_chk) takes for a jump into a dead frame */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "api.h"
#include "http.h"
#include "lapis/assert.h"
#include "lapis/clock.h"
#include "lapis/engine.h"
#include "lapis/log.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FIBER_TSAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Writes in flight at once (fibers): up to this many share one group
   commit. 64 covers the concurrent writers of a busy control plane
   (kube's default max-mutating-requests-inflight is 200). */
#define DEFAULT_WORKERS 64u

/* A fiber's stack: as a thread's default, reserved, not committed (pages
   are touched as the handler goes deep: a deeply nested body). */
#define FIBER_STACK (8u << 20)

enum wstate {
	W_NONE,
	W_QUEUED,
	W_GRANTED,
	W_RUNNING,
	W_PARKED,
	W_WOKEN,
	W_TIMED_OUT,
	W_SENT
};

struct fiber {
	ucontext_t start; /* its first entry, into fiber_main */
	bool started;	  /* entered once: switches are jumps (runner) */
	jmp_buf ctx;	  /* its own, while switched out */
	jmp_buf *home;	  /* its runner's, while it runs */
	struct srv_wpool *p;
	struct eng_parker parker; /* ud: this fiber */
	struct srv_req *r;	  /* its request; NULL when free (mu) */
	bool done;   /* the handler returned; the runner finishes it (mu) */
	bool woken;  /* a wake came since it last parked (mu) */
	bool out;    /* parked and switched out (invariant 1; mu) */
	bool orphan; /* its request timed out while it waited (mu) */
	struct fiber *next; /* the free list, or the orphans to run (mu) */
	char *map;	    /* the stack's mapping, guard page first */
	size_t map_len;
#ifdef FIBER_ASAN
	void *asan_fake;	 /* its fake stack while switched out */
	const void *home_bottom; /* the runner's stack */
	size_t home_size;
#endif
#ifdef FIBER_TSAN
	void *tsan_self, *tsan_home;
#endif
};

struct srv_wpool {
	pthread_mutex_t mu;
	pthread_cond_t timer_cv; /* the timer: deadlines and orphans */
	pthread_cond_t idle_cv;	 /* close waits for the last fiber */
	struct fiber *free_fibers;
	struct fiber *orphans; /* woken orphans, for the timer to run */
	struct fiber **all;    /* every fiber made, for free */
	unsigned n_fibers;     /* made */
	unsigned n_busy;       /* invariant 3 */
	unsigned max;	       /* --write-workers */
	struct srv_req *q_head, *q_tail; /* QUEUED, oldest first */
	struct srv_req *flight;		 /* invariant 4 */
	bool closed;
	bool timer_stop;
	int64_t timer_next;  /* the timer's next wake-up */
	uint64_t timeout_ms; /* 0: none; read-only */
	pthread_t timer;
	bool timer_started;
};

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

/* Answer r with kube's timeout Status (finisher.go: a request whose
   context ends first). Call with p->mu held; the caller resumes or
   answers. */
static void timeout_error(struct srv_error *err)
{
	*err = (struct srv_error){.code = LP_E_TIMEOUT};
	snprintf(err->message, sizeof err->message,
		 "Timeout: request did not complete within requested timeout - "
		 "context deadline exceeded");
}

static void time_out(struct srv_wpool *p, struct srv_req *r)
{
	struct srv_error err;
	timeout_error(&err);
	unsigned code = 0;
	r->job.resp = srv__status_response(r, &err, &code);
	r->job.code = code; /* 0 (OOM): the connection is closed */
	r->job.state = W_TIMED_OUT;
	flight_remove(p, r);
}

/* Queue r's stored answer (its 504), in r's access handler. Call with p->mu
   held; unlocks. false: close the connection (none could be queued). */
static bool answer_stored(struct srv_wpool *p, struct srv_req *r)
{
	struct MHD_Response *resp = r->job.resp;
	unsigned code = r->job.code;
	r->job.resp = NULL;
	r->job.state = W_SENT;
	pthread_mutex_unlock(&p->mu);
	if (!resp)
		return code != 0; /* queued already; or none: close */
	enum MHD_Result ok = MHD_queue_response(r->conn, code, resp);
	MHD_destroy_response(resp);
	return ok == MHD_YES;
}

/* ------------------------------------------------------------ switching */

/*
 * A switch is a _setjmp where it leaves and a _longjmp where it goes: no
 * system call (swapcontext saves and sets the signal mask, two calls of
 * rt_sigprocmask per switch, four per write, about a microsecond each on
 * a VM). A fiber's first entry alone goes through its ucontext, into
 * fiber_main; it then only ever leaves and comes back by jumps. The mask
 * is the runner thread's throughout (no handler changes it). ThreadSanitizer
 * keeps a jmp_buf per fiber of its own: each _setjmp is made before the
 * switch of fiber annotation, each _longjmp after it, so both sides of a
 * jump meet in the same TSan fiber.
 */

/* Switch from the runner into f until it parks or its handler returns. */
static void fiber_run(struct fiber *f)
{
	jmp_buf home;
	f->home = &home;
	const struct eng_parker *old = eng_set_parker(&f->parker);
#ifdef FIBER_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, f->map + getpagesize(),
				       f->map_len - (size_t)getpagesize());
#endif
	if (!_setjmp(home)) {
#ifdef FIBER_TSAN
		f->tsan_home = __tsan_get_current_fiber();
		__tsan_switch_to_fiber(f->tsan_self, 0);
#endif
		if (f->started)
			_longjmp(f->ctx, 1);
		f->started = true;
		setcontext(&f->start);
		LP_UNREACHABLE();
	}
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	eng_set_parker(old);
}

/* On f: back to its runner's fiber_run; returns when run again. */
static void fiber_yield(struct fiber *f)
{
#ifdef FIBER_ASAN
	__sanitizer_start_switch_fiber(&f->asan_fake, f->home_bottom,
				       f->home_size);
#endif
	if (!_setjmp(f->ctx)) {
#ifdef FIBER_TSAN
		__tsan_switch_to_fiber(f->tsan_home, 0);
#endif
		_longjmp(*f->home, 1);
	}
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(f->asan_fake, &f->home_bottom,
					&f->home_size);
#endif
}

/* A fiber's life: run the request it was given, return to the runner,
   and again; it never ends (the pool unmaps it). */
static void fiber_main(unsigned hi, unsigned lo)
{
	struct fiber *f =
	    (struct fiber *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(NULL, &f->home_bottom, &f->home_size);
#endif
	for (;;) {
		struct srv_req *r = f->r;
		srv_dispatch(r);
		if (!r->answered)
			srv_reply_fail(r, LP_E_IO, "no response");
		pthread_mutex_lock(&f->p->mu);
		f->done = true;
		pthread_mutex_unlock(&f->p->mu);
		fiber_yield(f);
	}
}

/* The engine's park (on f, from eng_txn_commit with no lock held): back to
   the runner, unless the wake came already. */
static void fiber_park(void *ud)
{
	struct fiber *f = ud;
	pthread_mutex_lock(&f->p->mu);
	bool woken = f->woken;
	f->woken = false;
	pthread_mutex_unlock(&f->p->mu);
	if (woken)
		return;
	fiber_yield(f);
	pthread_mutex_lock(&f->p->mu);
	f->woken = false;
	pthread_mutex_unlock(&f->p->mu);
}

/* The engine's wake (the committing thread, no engine lock held). */
static void fiber_wake(void *ud)
{
	struct fiber *f = ud;
	struct srv_wpool *p = f->p;
	struct srv_req *resume = NULL;
	bool orphan = false;
	pthread_mutex_lock(&p->mu);
	f->woken = true;
	if (f->out) {
		f->out = false;
		if (f->orphan) {
			f->next = p->orphans;
			p->orphans = f;
			orphan = true;
		} else {
			LP_ASSERT(f->r->job.state == W_PARKED);
			f->r->job.state = W_WOKEN;
			resume = f->r;
		}
	}
	/* signalled under the lock: once it is let go, the timer may run
	   the orphan to its end and the pool be freed (invariant 6) */
	if (orphan)
		pthread_cond_signal(&p->timer_cv);
	pthread_mutex_unlock(&p->mu);
	if (resume)
		MHD_resume_connection(resume->conn);
}

/* getcontext returns twice (to gcc): kept out of fiber_new, whose locals
   would otherwise be ones longjmp might clobber. It never does here: the
   context is only made into a fiber's start. */
static __attribute__((noinline)) int context_init(ucontext_t *c)
{
	return getcontext(c);
}

/* A new fiber (no lock held); NULL when out of memory. Made by the runner
   that enters it first: the signal mask getcontext saves is that thread's
   own, which setcontext sets again on the way in. */
static struct fiber *fiber_new(struct srv_wpool *p)
{
	struct fiber *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	size_t page = (size_t)getpagesize();
	f->map_len = FIBER_STACK + page;
	void *m = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		       -1, 0);
	if (m == MAP_FAILED) {
		free(f);
		return NULL;
	}
	f->map = m;
	mprotect(f->map, page, PROT_NONE); /* the guard page */
	f->p = p;
	f->parker = (struct eng_parker){fiber_park, fiber_wake, f};
	if (context_init(&f->start)) {
		munmap(f->map, f->map_len);
		free(f);
		return NULL;
	}
	f->start.uc_stack.ss_sp = f->map + page;
	f->start.uc_stack.ss_size = FIBER_STACK;
	f->start.uc_link = NULL;
	uintptr_t a = (uintptr_t)f;
	makecontext(&f->start, (void (*)(void))fiber_main, 2,
		    (unsigned)(a >> 16 >> 16), (unsigned)(a & 0xffffffffu));
#ifdef FIBER_TSAN
	f->tsan_self = __tsan_create_fiber(0);
#endif
	return f;
}

static void fiber_free(struct fiber *f)
{
#ifdef FIBER_TSAN
	__tsan_destroy_fiber(f->tsan_self);
#endif
	munmap(f->map, f->map_len);
	free(f);
}

/* f runs r from now on. Call with p->mu held. */
static void attach(struct fiber *f, struct srv_req *r)
{
	f->r = r;
	r->job.fiber = f;
	r->job.state = W_RUNNING;
}

/* A free fiber for r, made if need be; NULL (out of memory): the caller
   gives the slot back. No lock held. */
static struct fiber *fiber_take(struct srv_wpool *p, struct srv_req *r)
{
	pthread_mutex_lock(&p->mu);
	struct fiber *f = p->free_fibers;
	if (f) {
		p->free_fibers = f->next;
		f->next = NULL;
		attach(f, r);
	}
	pthread_mutex_unlock(&p->mu);
	if (f)
		return f;
	f = fiber_new(p);
	if (!f)
		return NULL;
	pthread_mutex_lock(&p->mu);
	struct fiber **all = realloc(p->all, (p->n_fibers + 1) * sizeof *all);
	if (!all) {
		pthread_mutex_unlock(&p->mu);
		fiber_free(f);
		return NULL;
	}
	p->all = all;
	p->all[p->n_fibers++] = f;
	attach(f, r);
	pthread_mutex_unlock(&p->mu);
	return f;
}

/* Give back r's slot (and its fiber f, unless NULL): the oldest queued
   write is granted it, returned for the caller to resume after the unlock.
   Call with p->mu held. */
static struct srv_req *slot_release(struct srv_wpool *p, struct fiber *f)
{
	if (f) {
		f->r->job.fiber = NULL;
		f->r = NULL;
		f->done = f->woken = f->out = f->orphan = false;
		f->next = p->free_fibers;
		p->free_fibers = f;
	}
	struct srv_req *next = queue_pop(p);
	if (next) {
		next->job.state = W_GRANTED;
		return next;
	}
	p->n_busy--;
	if (!p->n_busy && p->closed)
		pthread_cond_broadcast(&p->idle_cv);
	return NULL;
}

/* ------------------------------------------------------------ runners */

/*
 * Run r's fiber f in r's access handler (MHD thread) until it parks or ends.
 * true: the connection is suspended, or r's answer (or, for a fiber that
 * went orphan, its 504) is queued; false: none could be (close).
 * With f NULL (no memory for one), r runs here, waiting for its commits.
 */
static bool run_in_handler(struct srv_wpool *p, struct fiber *f,
			   struct srv_req *r)
{
	if (!f) {
		srv_dispatch(r);
		if (!r->answered)
			srv_reply_fail(r, LP_E_IO, "no response");
		pthread_mutex_lock(&p->mu);
	}
	while (f) {
		fiber_run(f);
		pthread_mutex_lock(&p->mu);
		if (f->done)
			break;
		if (f->woken) { /* the commit was quick: go on at once */
			pthread_mutex_unlock(&p->mu);
			continue;
		}
		f->out = true;
		if (lp_mono_ms() < r->job.deadline_ms) {
			r->job.state = W_PARKED;
			bool sooner = r->job.deadline_ms < p->timer_next;
			/* suspended before the unlock: the wake's resume
			   always follows it */
			MHD_suspend_connection(r->conn);
			if (sooner) /* under the lock: invariant 6 */
				pthread_cond_signal(&p->timer_cv);
			pthread_mutex_unlock(&p->mu);
			return true;
		}
		/* past its deadline already: answer 504, the fiber goes on
		   waiting as an orphan */
		f->orphan = true;
		time_out(p, r);
		return answer_stored(p, r);
	}
	/* the handler returned: its answer is r->wresp */
	flight_remove(p, r);
	r->job.state = W_SENT;
	struct MHD_Response *resp = r->wresp;
	unsigned code = r->wcode;
	r->wresp = NULL;
	struct srv_req *granted = slot_release(p, f);
	pthread_mutex_unlock(&p->mu);
	if (granted)
		MHD_resume_connection(granted->conn);
	bool queued = false;
	if (resp) {
		queued = MHD_queue_response(r->conn, code, resp) == MHD_YES;
		MHD_destroy_response(resp);
	}
	srv__req_unref(r); /* the pool's (invariant 2) */
	return queued;
}

/* Run the woken orphans (timer thread, p->mu held; returns with it). */
static void run_orphans(struct srv_wpool *p)
{
	while (p->orphans) {
		struct fiber *f = p->orphans;
		p->orphans = f->next;
		f->next = NULL;
		pthread_mutex_unlock(&p->mu);
		struct srv_req *r = f->r, *granted = NULL;
		bool ended = false;
		for (;;) {
			fiber_run(f);
			pthread_mutex_lock(&p->mu);
			if (f->done) {
				granted = slot_release(p, f);
				ended = true;
				break;
			}
			if (!f->woken) {
				f->out = true;
				break;
			}
			pthread_mutex_unlock(&p->mu);
		}
		pthread_mutex_unlock(&p->mu);
		if (granted)
			MHD_resume_connection(granted->conn);
		if (ended) {
			/* the client has its 504: the answer goes nowhere */
			if (r->wresp)
				MHD_destroy_response(r->wresp);
			r->wresp = NULL;
			srv__req_unref(r); /* the pool's (invariant 2) */
		}
		pthread_mutex_lock(&p->mu);
	}
}

/* ------------------------------------------------------------ submit */

bool srv__wpool_submit(struct srv_wpool *p, struct srv_req *r, bool *ok)
{
	*ok = true;
	if (!p)
		return false;
	int64_t deadline = INT64_MAX;
	if (r->timeout_ms)
		deadline = r->start_ms + r->timeout_ms;
	else if (p->timeout_ms)
		deadline = r->start_ms + (int64_t)p->timeout_ms;
	if (lp_mono_ms() >= deadline) {
		/* past its deadline before it ran (its body came late): kube's
		   timeout filter has answered, and its handler's storage
		   call finds the context done, so nothing is written */
		struct srv_error err;
		timeout_error(&err);
		srv_reply_error(r, &err, NULL);
		return true;
	}
	if (!srv__req_detach(r))
		return false; /* out of memory: inline is still correct */
	pthread_mutex_lock(&p->mu);
	if (p->closed) {
		pthread_mutex_unlock(&p->mu);
		r->deferred = false; /* the copies stay valid; unused */
		return false;
	}
	atomic_fetch_add(&r->refs, 1); /* the pool's (invariant 2) */
	r->job.deadline_ms = deadline;
	flight_add(p, r);
	if (p->n_busy >= p->max) {
		/* no slot: wait for one, suspended */
		MHD_suspend_connection(r->conn);
		r->job.state = W_QUEUED;
		if (p->q_tail)
			p->q_tail->job.q_next = r;
		else
			p->q_head = r;
		p->q_tail = r;
		if (r->job.deadline_ms < p->timer_next) /* invariant 6 */
			pthread_cond_signal(&p->timer_cv);
		pthread_mutex_unlock(&p->mu);
		return true;
	}
	p->n_busy++;
	r->job.state = W_GRANTED;
	pthread_mutex_unlock(&p->mu);
	*ok = srv__wpool_resumed(p, r);
	return true;
}

bool srv__wpool_resumed(struct srv_wpool *p, struct srv_req *r)
{
	pthread_mutex_lock(&p->mu);
	int state = r->job.state;
	struct fiber *f = NULL;
	if (state == W_WOKEN) {
		f = r->job.fiber;
		LP_ASSERT(f && f->r == r);
		r->job.state = W_RUNNING;
	}
	if (state == W_TIMED_OUT || state == W_SENT)
		return answer_stored(p, r);
	pthread_mutex_unlock(&p->mu);
	if (state == W_GRANTED)
		f = fiber_take(p, r); /* NULL (no memory): here, blocking */
	else
		LP_ASSERT(f);
	return run_in_handler(p, f, r);
}

void srv__wpool_completed(struct srv_wpool *p, struct srv_req *r)
{
	if (!p || !r->deferred)
		return;
	struct srv_req *granted = NULL;
	bool unref = false, orphan = false;
	pthread_mutex_lock(&p->mu);
	if (r->job.state == W_GRANTED) {
		/* never started: its slot goes on */
		flight_remove(p, r);
		r->job.state = W_SENT;
		granted = slot_release(p, NULL);
		unref = true;
	} else if (r->job.state == W_WOKEN) {
		/* its fiber waits to go on: the timer runs it to its end */
		struct fiber *f = r->job.fiber;
		flight_remove(p, r);
		r->job.state = W_SENT;
		f->orphan = true;
		f->next = p->orphans;
		p->orphans = f;
		orphan = true;
	}
	if (orphan) /* under the lock: invariant 6 */
		pthread_cond_signal(&p->timer_cv);
	pthread_mutex_unlock(&p->mu);
	if (granted)
		MHD_resume_connection(granted->conn);
	if (unref)
		srv__req_unref(r); /* the pool's (invariant 2) */
}

/* ------------------------------------------------------------ timer */

static void *timer_main(void *arg)
{
	struct srv_wpool *p = arg;
	pthread_setname_np(pthread_self(), "write-timer");
	pthread_mutex_lock(&p->mu);
	while (!p->timer_stop || p->orphans) {
		run_orphans(p);
		int64_t now = lp_mono_ms(), next = INT64_MAX;
		struct srv_req *due = NULL; /* chained through job.q_next */
		for (struct srv_req *r = p->flight, *nx; r; r = nx) {
			nx = r->job.f_next;
			if (r->job.state != W_QUEUED &&
			    r->job.state != W_PARKED)
				continue; /* invariant 4 */
			if (r->job.deadline_ms > now) {
				if (r->job.deadline_ms < next)
					next = r->job.deadline_ms;
				continue;
			}
			r->job.unstarted = r->job.state == W_QUEUED;
			if (r->job.unstarted) {
				queue_remove(p, r);
			} else {
				LP_ASSERT(r->job.fiber && r->job.fiber->out);
				r->job.fiber->orphan = true;
			}
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
				srv__req_unref(r); /* the pool's */
		}
		pthread_mutex_lock(&p->mu);
		if (due || p->orphans)
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
	p->max = n ? n : DEFAULT_WORKERS;
	p->timeout_ms = timeout_ms;
	p->timer_next = INT64_MAX;
	pthread_mutex_init(&p->mu, NULL);
	lp_cond_init_mono(&p->timer_cv);
	pthread_cond_init(&p->idle_cv, NULL);
	if (pthread_create(&p->timer, NULL, timer_main, p)) {
		lp_error("cannot start the write timer: %s", strerror(errno));
		srv__wpool_free(p);
		return LP_E_NOMEM;
	}
	p->timer_started = true;
	*out = p;
	return LP_OK;
}

void srv__wpool_close(struct srv_wpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->closed = true;
	/* Queued writes are granted slots as fibers end, and run; the timer
	   answers late ones and runs orphans meanwhile (invariant 5). */
	while (p->n_busy || p->q_head)
		pthread_cond_wait(&p->idle_cv, &p->mu);
	LP_ASSERT(!p->flight);
	if (p->timer_started) {
		p->timer_stop = true;
		pthread_cond_signal(&p->timer_cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->timer, NULL);
		p->timer_started = false;
		return;
	}
	pthread_mutex_unlock(&p->mu);
}

void srv__wpool_free(struct srv_wpool *p)
{
	if (!p)
		return;
	LP_ASSERT(!p->timer_started && !p->n_busy);
	for (unsigned i = 0; i < p->n_fibers; i++)
		fiber_free(p->all[i]);
	free(p->all);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->timer_cv);
	pthread_cond_destroy(&p->idle_cv);
	free(p);
}
