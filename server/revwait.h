/*
 * revwait.h -- reads from a revision the store has not reached yet wait for
 * it with their connection suspended (revwait.c), not in their handler.
 */
#ifndef LAPIS_REVWAIT_H
#define LAPIS_REVWAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "lapis/engine.h"
#include "lapis/err.h"

struct srv_req;
struct srv_revwait;

/* Start the waiter's thread. Errors: LP_E_NOMEM. */
lp_err srv_revwait_start(eng *e, struct srv_revwait **out);

/*
 * From the access handler (libmicrohttpd's thread of r's connection):
 * suspend r's connection until the store reaches rev or timeout_ms pass,
 * then resume it; the access handler then runs r again with r->rev_waited
 * set (a read that waited does not wait again). false, and nothing done:
 * rev is reached, r waited once already, or the waiter is closing.
 */
bool srv_revwait_park(struct srv_revwait *w, struct srv_req *r, int64_t rev,
		      int64_t timeout_ms);

/* A request that was parked completed (libmicrohttpd's completion
   callback, for a request with rev_parked or rev_waited set). */
void srv_revwait_done(struct srv_revwait *w);

/* Resume every parked request and stop the thread, then wait (up to a
   second) for their answers to be written: before the daemon stops, which
   closes every connection. Later parks say false. NULL: no-op. */
void srv_revwait_close(struct srv_revwait *w);

/* After the daemon stopped: free w. NULL: no-op. */
void srv_revwait_free(struct srv_revwait *w);

#endif
