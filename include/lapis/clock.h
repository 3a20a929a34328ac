/*
 * clock.h -- CLOCK_MONOTONIC in milliseconds, and deadlines on it for
 * condition variables set to that clock (pthread_condattr_setclock).
 * Any thread.
 */
#ifndef LAPIS_CLOCK_H
#define LAPIS_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Now, in ms of CLOCK_MONOTONIC. */
static inline int64_t lp_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The CLOCK_MONOTONIC time ms (>= 0) milliseconds from now, for
   pthread_cond_timedwait on a condition variable of that clock. */
static inline struct timespec lp_mono_deadline(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Initialise cv to measure CLOCK_MONOTONIC (the clock of the deadlines
   above). Returns 0 or an errno value, as pthread_cond_init. */
static inline int lp_cond_init_mono(pthread_cond_t *cv)
{
	pthread_condattr_t a;
	int rc = pthread_condattr_init(&a);
	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
	return rc;
}

/* The milliseconds the environment variable name holds (a positive
   decimal integer: tests shorten a controller's wait with one), else
   dflt. */
static inline int64_t lp_env_ms(const char *name, int64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	long long ms = v ? strtoll(v, &end, 10) : 0;
	return v && *v && !*end && ms > 0 ? (int64_t)ms : dflt;
}

#endif
