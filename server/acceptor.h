/*
 * acceptor.h -- the listener's own thread, which hands each connection to
 * one of libmicrohttpd's pool threads (acceptor.c). lapis's server and
 * bench-http's bare responder both use it, so that the bare one stays the
 * ceiling of the same setup.
 */
#ifndef LAPIS_ACCEPTOR_H
#define LAPIS_ACCEPTOR_H

#include <microhttpd.h>

struct srv_acceptor;

/* Accept the connections of the listening socket fd into d, a daemon
   started with MHD_USE_NO_LISTEN_SOCKET. Takes fd (closed by
   srv_acceptor_stop, or here on failure). NULL: no thread (errno). */
struct srv_acceptor *srv_acceptor_start(struct MHD_Daemon *d, int fd);

/* Stop accepting and close the listener: a client that connects from now
   on is refused (ECONNREFUSED). NULL: nothing. */
void srv_acceptor_stop(struct srv_acceptor *a);

#endif
