/*
 * conns.h -- the request-head deadline (conns.c): libmicrohttpd callbacks
 * that close a connection whose request head does not arrive in time, as
 * kube-apiserver's ReadHeaderTimeout does, and answer plain HTTP sent to
 * the TLS port as Go's server does.
 */
#ifndef LAPIS_CONNS_H
#define LAPIS_CONNS_H

#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "lapis/err.h"

struct srv_conns;

/* Start the sweeper: heads get head_ms, after a request idle_ms (the
   daemon's idle timeout) more. Errors: LP_E_NOMEM. */
lp_err srv_conns_start(uint64_t head_ms, uint64_t idle_ms,
		       struct srv_conns **out);
/* After MHD_stop_daemon: stop the sweeper and free everything. NULL: no-op. */
void srv_conns_stop(struct srv_conns *cs);

/* MHD_OPTION_NOTIFY_CONNECTION, with cls the srv_conns. A TLS connection's
   reads go through conns.c's GnuTLS pull function from its STARTED notice
   on: plain HTTP sent to the TLS port gets Go's 400 "Client sent an HTTP
   request to an HTTPS server." */
void srv_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_URI_LOG_CALLBACK, with cls the srv_conns; returns NULL (the
   access handler's first context). */
void *srv_conns_uri(void *cls, const char *uri, struct MHD_Connection *mc);
/* The access handler's first call for a request: its head is complete.
   false: the request line's URI held a control byte (a NUL cut it short
   in MHD's string), which is answered 400 as Go's net/http does. */
bool srv_conns_handling(struct MHD_Connection *mc, const char *version);
/* A request completed: the connection idles until the next head. */
void srv_conns_idle(struct srv_conns *cs, struct MHD_Connection *mc);

#endif
