/*
 * conns.c -- the request-head deadline, and plain HTTP on the TLS port: a
 * connection that has not sent a whole request head in time is closed, as
 * Go's server does for kube-apiserver with its ReadHeaderTimeout (32 s).
 * libmicrohttpd's own timeout counts only idle time, so a client that
 * sends a header byte now and then (slowloris) would hold its connection
 * and its 32 KiB pool for ever.
 *
 * libmicrohttpd does not say when a request's first byte comes, so the
 * deadline is kept from what it does say:
 *   connection accepted       now + head      (Go: the first request's
 *                                              handshake and head)
 *   request line read (the    now + head, unless the deadline is
 *   URI logger)                  earlier (a first request's))
 *   access handler called     none            (the request runs; its own
 *                                              timeouts apply)
 *   request completed         now + idle + head (the connection idles;
 *                                              libmicrohttpd closes it at
 *                                              idle, so past idle + head
 *                                              it has been sending a head
 *                                              too slowly)
 * A connection past its deadline is shut down (shutdown(2), no answer, as
 * Go's server closes it); libmicrohttpd then sees the end of its input and
 * closes it the usual way. So is one waiting for a head whose client has
 * shut down its own side with nothing left to read (close_hung_up).
 *
 * Over TLS the same record of a connection holds the first bytes it sent:
 * GnuTLS reads through tls_pull, which answers plain HTTP sent to the TLS
 * port as Go's server does.
 *
 * Threads: the callbacks run on the connection's libmicrohttpd thread;
 * the sweeper thread looks at every connection twice a second.
 *
 * Invariants:
 *  1. A connection is in the list from its STARTED notice to its CLOSED
 *     notice. libmicrohttpd sends CLOSED before it closes the socket, and
 *     the sweeper shuts a socket down only under mu with the connection in
 *     the list: so the descriptor it shuts down is always that connection's,
 *     never a reused one.
 *  2. deadline_ms is 0 (none) or a CLOCK_MONOTONIC time in ms; only the
 *     connection's thread sets it, but for the sweeper's 0 once it has shut
 *     the socket down.
 *  3. GnuTLS calls tls_pull only between the STARTED notice and the
 *     CLOSED one: libmicrohttpd 0.9.75 frees the session (gnutls_deinit)
 *     before it sends CLOSED, or reads no more before it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <gnutls/gnutls.h>

#include "conns.h"
#include "lapis/clock.h"
#include "lapis/log.h"

struct conn {
	int fd;
	_Atomic int64_t deadline_ms;
	/* the request line as srv_conns_uri saw it (MHD's thread of the
	   connection only): where the version would start after the URI's
	   first NUL, and whether the URI held another control byte */
	const char *uri_next;
	bool uri_ctl;
	/* TLS: the first bytes read, until there are five (tls_pull) */
	unsigned char head[5];
	unsigned char head_n;
	struct conn *prev, *next; /* under mu */
};

struct srv_conns {
	int64_t head_ms, idle_ms; /* immutable */
	pthread_mutex_t mu;	  /* guards list, stop */
	pthread_cond_t cv;
	struct conn *list;
	bool stop;
	pthread_t th;
	/* the sweeper's own: close_hung_up's poll set and its connections */
	struct pollfd *pf;
	struct conn **pc;
	size_t cap;
};

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/*
 * GnuTLS's read of a TLS connection (in place of its own recv): a client
 * whose first five bytes are a plain HTTP request's, where a TLS record
 * header belongs, gets Go's answer on the bare socket before the
 * handshake fails and libmicrohttpd closes the connection (Go's server:
 * tlsRecordHeaderLooksLikeHTTP), instead of a silent close: "curl
 * http://" to the TLS port says what is wrong. Only the first five bytes
 * are looked at; the rest pass through.
 */
static ssize_t tls_pull(gnutls_transport_ptr_t ptr, void *buf, size_t size)
{
	struct conn *c = ptr;
	ssize_t n = recv(c->fd, buf, size, 0);
	if (n <= 0 || c->head_n == sizeof c->head)
		return n;
	size_t take = sizeof c->head - c->head_n;
	if ((size_t)n < take)
		take = (size_t)n;
	memcpy(c->head + c->head_n, buf, take);
	c->head_n += (unsigned char)take;
	if (c->head_n < sizeof c->head)
		return n;
	static const char *const http[] = {"GET /", "HEAD ", "POST ", "PUT /",
					   "OPTIO"};
	for (size_t i = 0; i < sizeof http / sizeof http[0]; i++) {
		if (memcmp(c->head, http[i], sizeof c->head))
			continue;
		static const char ans[] =
		    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP "
		    "request to an HTTPS server.\n";
		/* best effort: a full socket buffer drops it */
		(void)!send(c->fd, ans, sizeof ans - 1,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		errno = ECONNRESET;
		return -1;
	}
	return n;
}

/* GnuTLS's timed wait for input, on the descriptor behind tls_pull. */
static int tls_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
	struct conn *c = ptr;
	struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
	return poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

void srv_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code)
{
	struct srv_conns *cs = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		    mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct conn *c = ci ? malloc(sizeof *c) : NULL;
		*socket_ctx = c;
		if (!c)
			return; /* not watched: it still has the idle timeout */
		c->fd = ci->connect_fd;
		c->head_n = 0;
		/* reads go through tls_pull; writes keep GnuTLS's own send
		   on the descriptor (set_ptr2's second pointer) */
		const union MHD_ConnectionInfo *ti = MHD_get_connection_info(
		    mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		if (ti && ti->tls_session) {
			gnutls_session_t ts = ti->tls_session;
			gnutls_transport_set_ptr2(
			    ts, c, (gnutls_transport_ptr_t)(intptr_t)c->fd);
			gnutls_transport_set_pull_function(ts, tls_pull);
			gnutls_transport_set_pull_timeout_function(
			    ts, tls_pull_timeout);
		}
		atomic_init(&c->deadline_ms, lp_mono_ms() + cs->head_ms);
		pthread_mutex_lock(&cs->mu);
		c->prev = NULL;
		c->next = cs->list;
		if (cs->list)
			cs->list->prev = c;
		cs->list = c;
		pthread_mutex_unlock(&cs->mu);
		return;
	}
	struct conn *c = *socket_ctx;
	if (code != MHD_CONNECTION_NOTIFY_CLOSED || !c)
		return;
	pthread_mutex_lock(&cs->mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		cs->list = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&cs->mu);
	free(c);
	*socket_ctx = NULL;
}

void *srv_conns_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
	struct srv_conns *cs = cls;
	struct conn *c = conn_of(mc);
	if (!c)
		return NULL;
	/* MHD has the URI as a C string: a NUL byte in it (or in the query)
	   cut it short there, and a DELETE of "foo\0bar" deleted foo. Go's
	   url.ParseRequestURI refuses every control byte with a 400. One
	   pass finds the end and any control byte (a strlen and a second
	   loop were 466 instructions of a GET's ~3,300 in lapis's own
	   code, callgrind) */
	const unsigned char *p = (const unsigned char *)uri;
	while (*p >= 0x20 && *p != 0x7f)
		p++;
	c->uri_ctl = *p != 0;
	if (c->uri_ctl)
		p += strlen((const char *)p);
	c->uri_next = (const char *)p + 1;
	/* the head must end within head_ms of its first line: an earlier
	   deadline (a first request's, from the accept) stays */
	int64_t d = atomic_load_explicit(&c->deadline_ms, memory_order_relaxed);
	int64_t mine = lp_mono_ms() + cs->head_ms;
	if (d && mine < d)
		atomic_store_explicit(&c->deadline_ms, mine,
				      memory_order_relaxed);
	return NULL; /* the access handler's context starts empty */
}

bool srv_conns_handling(struct MHD_Connection *mc, const char *version)
{
	struct conn *c = conn_of(mc);
	if (!c)
		return true;
	atomic_store_explicit(&c->deadline_ms, 0, memory_order_relaxed);
	/* MHD ends the URI with a NUL where the version starts: one
	   earlier was in the URI */
	return !c->uri_ctl && (!version[0] || c->uri_next == version);
}

void srv_conns_idle(struct srv_conns *cs, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);
	if (c)
		atomic_store_explicit(&c->deadline_ms,
				      lp_mono_ms() + cs->idle_ms + cs->head_ms,
				      memory_order_relaxed);
}

/*
 * The connections waiting for a head whose client has shut down its side
 * with nothing left to read are shut down, so that libmicrohttpd sees the
 * end and closes them: Go's server reads the EOF and closes, while
 * libmicrohttpd, told of the hang-up once, with the request's own bytes
 * (edge-triggered epoll), kept them until the idle timeout. One poll(2)
 * over them. Called with cs->mu held (invariant 1).
 */
static void close_hung_up(struct srv_conns *cs, int64_t now)
{
	size_t n = 0;
	for (struct conn *c = cs->list; c; c = c->next) {
		int64_t d =
		    atomic_load_explicit(&c->deadline_ms, memory_order_relaxed);
		if (!d || now >= d)
			continue;
		if (n == cs->cap) {
			size_t cap = cs->cap ? 2 * cs->cap : 64;
			struct pollfd *pf = realloc(cs->pf, cap * sizeof *pf);
			if (pf)
				cs->pf = pf;
			struct conn **pc =
			    pf ? realloc(cs->pc, cap * sizeof *pc) : NULL;
			if (!pc)
				break; /* the rest wait for their timeout */
			cs->pc = pc;
			cs->cap = cap;
		}
		cs->pf[n] = (struct pollfd){.fd = c->fd, .events = POLLRDHUP};
		cs->pc[n++] = c;
	}
	if (!n || poll(cs->pf, n, 0) <= 0)
		return;
	for (size_t i = 0; i < n; i++) {
		short ev = cs->pf[i].revents;
		char b;
		/* a request sent before the hang-up is still to be read */
		if (!(ev & (POLLRDHUP | POLLHUP | POLLERR)) ||
		    (!(ev & (POLLHUP | POLLERR)) &&
		     recv(cs->pf[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) != 0))
			continue;
		shutdown(cs->pf[i].fd, SHUT_RDWR);
		atomic_store_explicit(&cs->pc[i]->deadline_ms, 0,
				      memory_order_relaxed);
	}
}

static void *sweeper(void *arg)
{
	struct srv_conns *cs = arg;
	pthread_setname_np(pthread_self(), "head-deadline");
	pthread_mutex_lock(&cs->mu);
	while (!cs->stop) {
		struct timespec dl = lp_mono_deadline(500);
		pthread_cond_timedwait(&cs->cv, &cs->mu, &dl);
		int64_t now = lp_mono_ms();
		if (!cs->stop)
			close_hung_up(cs, now);
		unsigned n = 0;
		for (struct conn *c = cs->list; c && !cs->stop; c = c->next) {
			int64_t d = atomic_load_explicit(&c->deadline_ms,
							 memory_order_relaxed);
			if (!d || now < d)
				continue;
			/* invariant 1: c->fd is still c's socket */
			shutdown(c->fd, SHUT_RDWR);
			atomic_store_explicit(&c->deadline_ms, 0,
					      memory_order_relaxed);
			n++;
		}
		if (n) {
			/* the log's write without the lock every accept and
			   close takes */
			pthread_mutex_unlock(&cs->mu);
			lp_info(
			    "closed %u connection(s) whose request head was "
			    "not complete in time",
			    n);
			pthread_mutex_lock(&cs->mu);
		}
	}
	pthread_mutex_unlock(&cs->mu);
	return NULL;
}

lp_err srv_conns_start(uint64_t head_ms, uint64_t idle_ms,
		       struct srv_conns **out)
{
	struct srv_conns *cs = calloc(1, sizeof *cs);
	if (!cs)
		return LP_E_NOMEM;
	cs->head_ms = (int64_t)head_ms;
	cs->idle_ms = (int64_t)idle_ms;
	pthread_mutex_init(&cs->mu, NULL);
	lp_cond_init_mono(&cs->cv);
	if (pthread_create(&cs->th, NULL, sweeper, cs)) {
		pthread_cond_destroy(&cs->cv);
		pthread_mutex_destroy(&cs->mu);
		free(cs);
		return LP_E_NOMEM;
	}
	*out = cs;
	return LP_OK;
}

void srv_conns_stop(struct srv_conns *cs)
{
	if (!cs)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = true;
	pthread_cond_signal(&cs->cv);
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->th, NULL);
	/* the daemon has stopped: every connection has had its CLOSED */
	while (cs->list) {
		struct conn *c = cs->list;
		cs->list = c->next;
		free(c);
	}
	pthread_cond_destroy(&cs->cv);
	pthread_mutex_destroy(&cs->mu);
	free(cs->pf);
	free(cs->pc);
	free(cs);
}
