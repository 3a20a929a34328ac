/*
 * acceptor.c -- one thread accepts the listener's connections and hands
 * each to libmicrohttpd's pool with MHD_add_connection, which gives it to
 * the pool thread whose number is the socket's descriptor modulo the pool
 * size: connections opened together spread evenly over the threads.
 *
 * Why: with the listener in every pool thread's epoll set (libmicrohttpd's
 * own way), a new connection goes to whichever thread calls accept first,
 * most often the one already awake. Under bench-http's S4 (16 connections
 * of synced creates) one of the two pool threads ran 85% of the pool's CPU:
 * the creates queued behind each other there while the other thread idled,
 * and the machine was 28% idle. Spread by this thread (64/36), sync@16 went
 * from a median of 16,165 to 17,914 creates/s in five alternating pairs;
 * GETs at 16 connections lost as much (one busy thread batches its ready
 * connections per epoll_wait on two vCPUs shared with the load generator),
 * docs/bench-http.md, "Session 48".
 *
 * Threads: srv_acceptor_start's caller, the acceptor's own thread, and
 * srv_acceptor_stop's caller (once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"

struct srv_acceptor {
	struct MHD_Daemon *d;
	int fd;
	_Atomic bool stop;
	pthread_t th;
};

/* Out of descriptors or memory: libmicrohttpd's own accept, too, leaves
   the connection waiting while some are freed. */
static void pause_briefly(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

static void *acceptor_main(void *arg)
{
	struct srv_acceptor *a = arg;
	pthread_setname_np(pthread_self(), "lapis-accept");
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int fd = accept4(a->fd, (struct sockaddr *)&ss, &sl,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			/* on failure (every pool thread at its connection
			   limit, no memory) it closes fd: the client sees
			   the connection closed */
			(void)MHD_add_connection(a->d, fd,
						 (struct sockaddr *)&ss, sl);
			continue;
		}
		if (atomic_load(&a->stop))
			break;
		switch (errno) {
		case EINTR:
		case ECONNABORTED:
		case EAGAIN:
		case EPROTO:
			continue; /* that connection is gone; the next */
		case EBADF:
		case EINVAL:
		case ENOTSOCK:
			return NULL; /* no listener: nothing more to take */
		default:
			pause_briefly(); /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
		}
	}
	return NULL;
}

struct srv_acceptor *srv_acceptor_start(struct MHD_Daemon *d, int fd)
{
	struct srv_acceptor *a = calloc(1, sizeof *a);
	if (!a) {
		close(fd);
		return NULL;
	}
	a->d = d;
	a->fd = fd;
	int rc = pthread_create(&a->th, NULL, acceptor_main, a);
	if (rc) {
		close(fd);
		free(a);
		errno = rc;
		return NULL;
	}
	return a;
}

void srv_acceptor_stop(struct srv_acceptor *a)
{
	if (!a)
		return;
	atomic_store(&a->stop, true);
	/* Wakes the accept (EINVAL) and refuses new connections at once;
	   those still in the backlog are reset. */
	shutdown(a->fd, SHUT_RDWR);
	pthread_join(a->th, NULL);
	close(a->fd);
	free(a);
}
