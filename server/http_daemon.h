/*
 * http_daemon.h -- the libmicrohttpd daemon's flags and limits, in one place
 * so that bench-http's bare responder runs with exactly lapis's (its ceiling
 * is only fair under the same ones: libmicrohttpd zeroes a connection's
 * memory pool between keep-alive requests, so the pool size alone moves the
 * cost of a small GET by a microsecond).
 */
#ifndef LAPIS_HTTP_DAEMON_H
#define LAPIS_HTTP_DAEMON_H

#include <microhttpd.h>

/* Plain HTTP; lapis adds MHD_USE_TLS when serving TLS. The listener is
   acceptor.c's, which hands each connection to a pool thread. */
#define SRV_MHD_FLAGS                                                          \
	(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |                     \
	 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG |          \
	 MHD_USE_NO_LISTEN_SOCKET)

/* Watches hold connections: limits sized for thousands. */
#define SRV_MHD_CONNECTION_LIMIT 16384u

/* The per-connection pool holds the request head and MHD's write buffer:
   32 KiB keeps an idle watch under 40 KB (bench-http S3) and still fits any
   request head kubectl and client-go send. */
#define SRV_MHD_MEMORY_LIMIT ((size_t)32 * 1024)

#endif
