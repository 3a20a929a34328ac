/*
 * compact.c -- pins that hold revisions back from compaction, and the
 * compactor thread that follows kube-apiserver's rule.
 *
 * Threads: pins from any thread (pin_mu); the compactor is its own thread,
 * which asks the writer to compact (eng_compact) and records the outcome.
 *
 * Invariants:
 *  1. Compaction never goes above the oldest live pin; a pin older than
 *     pin_seconds no longer holds anything back (a stuck reader cannot keep
 *     history forever).
 *  2. The compactor compacts, every interval, to the revision it recorded at
 *     its previous tick, so anything written within the last interval stays
 *     readable at its revision (as kube-apiserver does with etcd). A failure
 *     is logged, kept in the stats, and retried at the next tick.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "eng_int.h"
#include "lapis/clock.h"
#include "lapis/log.h"

lp_err eng_pin_rev(eng *e, int64_t rev, eng_pin **out)
{
	if (!e || !out || rev < 0)
		return LP_ERR(LP_E_INVAL);
	eng_pin *p = calloc(1, sizeof *p);
	if (!p)
		return LP_ERR(LP_E_NOMEM);
	p->e = e;
	p->node.rev = rev;
	p->node.expires_ms = eng__now_ms() + (int64_t)e->pin_seconds * 1000;
	pthread_mutex_lock(&e->pin_mu);
	/* Checked under pin_mu: the writer reads the floor under it too, after
	   which a new pin below the compacted revision is refused here. */
	if (rev < atomic_load(&e->compacted) ||
	    rev < atomic_load(&e->compacting)) {
		pthread_mutex_unlock(&e->pin_mu);
		free(p);
		return LP_E_COMPACTED;
	}
	p->node.next = e->pins.next;
	p->node.prev = &e->pins;
	e->pins.next->prev = &p->node;
	e->pins.next = &p->node;
	e->n_pins++;
	pthread_mutex_unlock(&e->pin_mu);
	*out = p;
	return LP_OK;
}

void eng_unpin(eng_pin *p)
{
	if (!p)
		return;
	eng *e = p->e;
	pthread_mutex_lock(&e->pin_mu);
	if (p->node.next != &p->node) {
		p->node.next->prev = p->node.prev;
		p->node.prev->next = p->node.next;
		e->n_pins--;
	}
	pthread_mutex_unlock(&e->pin_mu);
	free(p);
}

int64_t eng__pin_clamp(eng *e, int64_t target)
{
	int64_t now = eng__now_ms();
	pthread_mutex_lock(&e->pin_mu);
	for (struct pin_node *n = e->pins.next; n != &e->pins; n = n->next) {
		if (n->expires_ms >= now && n->rev < target)
			target = n->rev;
	}
	/* Announce the target under pin_mu: a pin taken from now on below it
	   is refused (eng_pin_rev), so none slips under a running compaction. */
	if (target > atomic_load(&e->compacting))
		atomic_store(&e->compacting, target);
	pthread_mutex_unlock(&e->pin_mu);
	return target;
}

static void *compactor_main(void *arg)
{
	eng *e = arg;
	pthread_setname_np(pthread_self(), "lapis-compactor");
	int64_t recorded = atomic_load(&e->rev);
	pthread_mutex_lock(&e->cmp_mu);
	for (;;) {
		uint64_t ms = e->cmp_interval_ms;
		if (atomic_load(&e->closing))
			break;
		if (ms == 0) {
			/* off: wait for a new interval or the close */
			pthread_cond_wait(&e->cmp_cv, &e->cmp_mu);
			recorded = atomic_load(&e->rev);
			continue;
		}
		struct timespec dl = lp_mono_deadline((int64_t)ms);
		int wrc = pthread_cond_timedwait(&e->cmp_cv, &e->cmp_mu, &dl);
		if (atomic_load(&e->closing))
			break;
		if (wrc != ETIMEDOUT || e->cmp_interval_ms != ms)
			continue; /* the interval changed: start over */
		pthread_mutex_unlock(&e->cmp_mu);
		int64_t target = recorded;
		recorded = atomic_load(&e->rev);
		int64_t done = 0;
		lp_err rc = LP_OK;
		bool ran = target > atomic_load(&e->compacted);
		int64_t t0 = eng__now_ms();
		uint64_t steps0 = atomic_load(&e->cmp_steps);
		uint64_t folded0 = atomic_load(&e->cmp_folded);
		if (ran)
			rc = eng_compact(e, target, &done);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (rc == LP_OK) {
			atomic_store(&e->cmp_last_ok, (int64_t)now.tv_sec);
			/* One line per compaction that had work, as etcd logs
			   its scheduled compactions: operators (and
			   bench-http's S5) see when it ran, how long it took
			   and in how many slices (writer.c, invariant 5). */
			if (ran && done) {
				uint64_t steps = atomic_load(&e->cmp_steps);
				uint64_t folded = atomic_load(&e->cmp_folded);
				lp_info("compacted to revision %lld in %lld ms "
					"(%llu slices, %llu in write groups)",
					(long long)done,
					(long long)(eng__now_ms() - t0),
					(unsigned long long)(steps - steps0),
					(unsigned long long)(folded - folded0));
			}
		} else if (rc != LP_E_CLOSED) {
			atomic_store(&e->cmp_last_fail, (int64_t)now.tv_sec);
			atomic_store(&e->cmp_last_err, (int)rc);
			lp_error("compaction to revision %lld failed: %s; "
				 "retrying next interval",
				 (long long)target, lp_strerror(rc));
		}
		pthread_mutex_lock(&e->cmp_mu);
	}
	pthread_mutex_unlock(&e->cmp_mu);
	return NULL;
}

lp_err eng_compactor_start(eng *e, uint64_t interval_ms)
{
	if (!e || e->readonly)
		return LP_ERR(LP_E_INVAL);
	pthread_mutex_lock(&e->cmp_mu);
	e->cmp_interval_ms = interval_ms;
	bool started = e->compactor_started;
	if (started) {
		/* a running compactor takes the new interval (0: off) */
		pthread_cond_broadcast(&e->cmp_cv);
		pthread_mutex_unlock(&e->cmp_mu);
		return LP_OK;
	}
	if (interval_ms == 0) {
		pthread_mutex_unlock(&e->cmp_mu);
		return LP_OK;
	}
	if (pthread_create(&e->compactor, NULL, compactor_main, e)) {
		pthread_mutex_unlock(&e->cmp_mu);
		return LP_ERR(LP_E_NOMEM);
	}
	e->compactor_started = true;
	pthread_mutex_unlock(&e->cmp_mu);
	return LP_OK;
}

void eng__compactor_stop(eng *e)
{
	pthread_mutex_lock(&e->cmp_mu);
	bool started = e->compactor_started;
	pthread_cond_broadcast(&e->cmp_cv);
	pthread_mutex_unlock(&e->cmp_mu);
	if (started)
		pthread_join(e->compactor, NULL);
}
