/*
 * http.h -- the HTTP side of `lapis serve`: a libmicrohttpd daemon with an
 * internal thread pool (epoll), TLS through GnuTLS, bearer-token
 * authentication, request bodies gathered up to the limit, and the helpers
 * handlers answer with.
 *
 * Threads: MHD's pool threads run the handlers. A handler answers exactly
 * once per request with one srv_reply_* call (or starts a stream).
 */
#ifndef LAPIS_HTTP_H
#define LAPIS_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lapis/engine.h"
#include "reqinfo.h"
#include "status.h"
#include "table.h"

/* kube's MaxRequestBodyBytes: 3 MiB. */
#define SRV_BODY_MAX (3u * 1024 * 1024)

struct srv_opts {
	eng *e;
	const char *listen;	 /* "ADDR:PORT", "[V6]:PORT"; port 0 picks one */
	bool insecure;		 /* plain HTTP, no authentication */
	const char *cert_pem;	 /* TLS serving certificate and key */
	const char *key_pem;
	const char *token;	 /* the admin bearer token */
	const char *sa_key_pem;	 /* signs service account tokens; NULL: a
				    key made for this run (satoken.h) */
	unsigned threads;	 /* 0: one per core */
	unsigned write_workers;	 /* threads that run writes; 0: 64 (writes.c) */
	unsigned request_timeout_s; /* non-watch requests; 0: 60 */
	unsigned idle_timeout_s;    /* idle or stalled connections; 0: 120 */
	uint64_t head_timeout_ms;   /* a request head's deadline; 0: 32000 */
	uint64_t watch_bookmark_ms; /* bookmark interval; 0: 60000 */
	const char *service_cidr;   /* --service-cluster-ip-range */
	/* bytes of GET answers kept (respcache.c); 0: 32 MiB, negative:
	   none */
	int64_t resp_cache;
};

struct srv;

/* Start serving. Errors: LP_E_IO (bind, TLS), LP_E_NOMEM, LP_E_INVAL. */
lp_err srv_start(const struct srv_opts *o, struct srv **out,
		 struct srv_error *err);
/* The port it listens on. */
int srv_port(struct srv *s);
/* The URL clients reach it at: scheme, the listen address (127.0.0.1 or
   [::1] for a wildcard one) and the port it listens on. */
void srv_url(struct srv *s, char *buf, size_t n);

/* --listen's ADDR:PORT (an IPv4 or IPv6 literal, [v6], localhost; port
   0-65535) into *ss and *sl; false with LP_E_INVAL and why in err. */
bool srv_listen_parse(const char *spec, struct sockaddr_storage *ss,
		      socklen_t *sl, struct srv_error *err);
/* Stop: no new connections, watches ended cleanly, in-flight requests
   finished; then the daemon stops. NULL ok. */
void srv_stop(struct srv *s);

/* ------------------------------------------------------------ requests */

/* A header or query argument copied off the connection. */
struct srv_val {
	int kind; /* MHD_HEADER_KIND or MHD_GET_ARGUMENT_KIND */
	const char *key;
	const char *value; /* may be NULL (an argument without '=') */
};

struct fiber; /* writes.c's */

/* A request's place in the write pool (writes.c), under its lock. */
struct srv_wjob {
	struct srv_req *q_next;		 /* the queue, oldest first */
	struct srv_req *f_prev, *f_next; /* in flight: queued or running */
	int state;			 /* enum wstate in writes.c */
	int64_t deadline_ms;		 /* answer 504 after this */
	struct MHD_Response *resp;	 /* the answer to queue once resumed */
	unsigned code;
	bool unstarted; /* timed out before a fiber took it */
	struct fiber *fiber; /* the fiber that runs it, while one does */
};

/* query arguments srv_query keeps at hand; a request with more asks
   libmicrohttpd each time */
#define SRV_QARGS 12

struct srv_req {
	struct srv *s;
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	char *body;		/* NUL-terminated; body_len bytes */
	size_t body_len, body_cap;
	bool body_too_large;
	struct srv_reqinfo ri;
	char *warnings;		/* "\n"-separated texts for Warning headers */
	bool answered;
	struct srv_neg neg; /* the response form (table.h) */
	/* read in early_answer's one pass over the headers (hdr_got): the
	   first of each, NULL when absent */
	const char *accept, *user_agent, *authorization;
	bool hdr_got;
	/* the query arguments, read in one pass at the first srv_query
	   (qa_got), borrowed from libmicrohttpd's pool; qa_over: more than
	   fit, srv_query asks libmicrohttpd */
	struct srv_qarg {
		const char *key, *value;
		size_t key_len;
	} qa[SRV_QARGS];
	unsigned char n_qa;
	bool qa_got, qa_over;
	bool status_reply;	/* the answer is an error's Status */
	bool always_pretty;	/* a JSON answer is indented for every client */
	void *hold;		/* keeps a custom resource's descriptor alive */
	int code;		/* the HTTP status answered, 0 until then */
	bool dry_run;		/* the request asked for dryRun=All */
	char created[256];	/* the name a create wrote (after_write hooks) */
	/* a patch with fieldValidation=Strict: the value its 422 shows for a
	   custom resource's unknown fields (objects.c; new, freed with r) */
	char *strict_shown;
	bool body_pruned;	/* body_fields pruned the custom resource by
				   its schema: the strategy need not again */
	bool applied;		/* a server-side apply: its result is pruned
				   silently, as kube's applyPatcher decodes
				   nothing (no strict unknown-field errors) */
	bool cr_defaulted;	/* a /status write defaulted its body alone:
				   the object it goes into is not defaulted
				   again in the request's version */
	/* how the answer may be gzipped (gzip.h): kube's rule for API
	   answers unless a handler names another; gzipped: it was */
	enum {
		SRV_GZIP_API = 0,
		SRV_GZIP_NEVER,
		SRV_GZIP_OPENAPI_V2,
	} gzip;
	bool gzipped;
	bool http11;		/* HTTP/1.1: a stream of unknown length goes
				   chunked (watch.c's direct delivery) */
	bool bad_uri;		/* a control byte in the request line's URI
				   (srv_conns_handling): 400 */
	bool write_hooked;	/* the handler did the after_write work itself
				   (a CRD create or update: srv_crd_create,
				   srv_crd_update) */
	/* a read from a revision not reached, parked in revwait.c: the
	   revision, until when (CLOCK_MONOTONIC ms) and the list's link,
	   under its lock; rev_parked until the access handler runs it
	   again, rev_waited from then on (it waits no more) */
	int64_t rw_rev, rw_until;
	struct srv_req *rw_next;
	bool rev_parked, rev_waited;
	bool rw_by_timeout; /* the request's deadline, not the 3 s, ends it */
	/* a streaming response's state and its release (watches) */
	void *stream;
	void (*stream_free)(void *);
	int64_t start_ms; /* CLOCK_MONOTONIC when the headers arrived */
	int64_t timeout_ms; /* ?timeout= below --request-timeout; 0: none */
	/* A write runs on a write worker (writes.c) while its connection is
	   suspended. The MHD thread sets these before the hand-over; the
	   worker only reads them. */
	_Atomic int refs;     /* the connection's, and the worker's */
	bool deferred;	      /* handed to the write pool */
	struct srv_val *vals; /* deferred: headers and query arguments,
				 copied (the connection may be gone) */
	size_t n_vals;
	char *own; /* deferred: owns vals' strings, url, method */
	/* the worker's answer, built by srv_reply_* (worker only) */
	struct MHD_Response *wresp;
	unsigned wcode;
	struct srv_wjob job; /* writes.c's; under the pool's lock */
};

/* How long a read "not older than" a revision the store has not reached
   waits for it before kube's 504 (its watch cache's 3 s). */
#define SRV_REV_WAIT_MS 3000

/* Park r, a GET or list from revision rev, until the store reaches it or
   SRV_REV_WAIT_MS pass, its connection suspended (revwait.c); the access
   handler then runs r again with r->rev_waited set. false: not parked
   (reached, waited already, a write's read, or stopping): read now. */
bool srv_park_for_rev(struct srv_req *r, int64_t rev);

/* The service account token signer (satoken.h). */
const struct srv_sa *srv_sa(struct srv *s);

/* Whether t is the admin bearer token (constant time; none when there
   is no token, as with --insecure-http). */
bool srv_token_is_admin(struct srv *s, const char *t);

eng *srv_engine(struct srv *s);
const struct srv_opts *srv_options(struct srv *s);

/*
 * Answers kept for plain GETs of one object (respcache.h): a GET with no
 * query argument, answered in compact JSON without a Warning, by a server
 * that keeps them. srv_get_keepable says whether r is one; then
 * srv_reply_kept queues the answer kept for its path if it was made at seq
 * (eng_read_seq, read before anything of the store) under tag (the serving
 * map's generation for a custom resource, 0 for a built-in) and says
 * whether it did, and srv_reply_keep answers with buf (len bytes of JSON,
 * taken) and keeps the answer when no commit began since seq.
 */
bool srv_get_keepable(struct srv_req *r);
bool srv_reply_kept(struct srv_req *r, uint64_t seq, uint64_t tag);
void srv_reply_keep(struct srv_req *r, uint64_t seq, uint64_t tag, char *buf,
		    size_t len);

/* A request header or query argument (borrowed, NULL when absent). */
const char *srv_header(struct srv_req *r, const char *name);
/* srv_header(r, "Accept"), read in the request's one pass over its headers (a
   GET reads it to negotiate, for YAML and for pretty printing). */
const char *srv_accept(struct srv_req *r);
const char *srv_query(struct srv_req *r, const char *key);
/* Every value of query parameter key, in order, into out[0, max); returns
   how many there are (possibly more than max). */
size_t srv_query_all(struct srv_req *r, const char *key, const char **out,
		     size_t max);

/* Add a Warning header text (kube's `299 - "<text>"`). */
void srv_warn(struct srv_req *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Answer with bytes; takes ownership of buf (malloc'd). */
void srv_reply_take(struct srv_req *r, int code, const char *ctype, char *buf,
		    size_t len);
/* Answer with base[off, off + len); takes ownership of base (malloc'd). */
void srv_reply_take_at(struct srv_req *r, int code, const char *ctype,
		       char *base, size_t off, size_t len);
/* Answer with data[0, len), which stays valid until release(cls) is called
   (once, when the response is done or could not be made). */
void srv_reply_take_cb(struct srv_req *r, int code, const char *ctype,
		       const char *data, size_t len, void (*release)(void *),
		       void *cls);
/* Answer with a copy of bytes. */
void srv_reply_copy(struct srv_req *r, int code, const char *ctype,
		    const void *buf, size_t len);
/* Answer with a JSON value (encoded compactly; YAML if the client asked
   for it); takes the reference. */
void srv_reply_json(struct srv_req *r, int code, json_t *v);
/* Answer with a Failure Status built from err. */
void srv_reply_error(struct srv_req *r, const struct srv_error *err,
		     const struct srv_status_what *what);
/* Shorthand: code and message. */
void srv_reply_fail(struct srv_req *r, lp_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* kube's answer where go-restful has no route (its serviceErrorHandler's
   NewGenericServerResponse): LP_E_NOTFOUND or LP_E_METHODNOTALLOWED with
   the generic message and empty details. */
void srv_reply_no_route(struct srv_req *r, lp_err code);

/* Does the client want YAML (Accept)? */
bool srv_wants_yaml(struct srv_req *r);

/* Start a chunked streaming response (watch). reader is MHD's content
   reader (-1 ends the stream; below -1 is libmicrohttpd's error end, which
   0.9.75 leaves a connection half closed with: watch.c's reader never
   uses it); state is freed with free_fn when the request completes. */
typedef long (*srv_stream_fn)(void *state, uint64_t pos, char *buf,
			      size_t max);
void srv_reply_stream(struct srv_req *r, const char *ctype, srv_stream_fn fn,
		      void *state, void (*free_fn)(void *));

/* Suspend / resume a connection from a stream reader (see watch.c). */
void srv_suspend(struct MHD_Connection *c);
void srv_resume(struct MHD_Connection *c);

/* The socket of c (-1 if libmicrohttpd does not say), to probe whether its
   client went while the connection is suspended. */
int srv_conn_fd(struct MHD_Connection *c);

/* The dispatcher (api.c), run once per request when its body is complete. */
void srv_dispatch(struct srv_req *r);

/* Is the server stopping? */
int srv_stopping(struct srv *s);
/* Where watch.c keeps its per-server state. */
void **srv_watch_slot(struct srv *s);
/* watch.c: start the watch ticker (before the daemon starts); end every
   watch and wait (srv_stop, before the daemon stops); free the ticker (after
   the daemon stopped). */
lp_err srv_watch_init(struct srv *s);
void srv_watch_shutdown(struct srv *s);
void srv_watch_free(struct srv *s);

/* ------------------------------------------------------------ writes.c */

/* The write pool: writes run on fibers, their connection suspended while
   they wait for a commit, so MHD's threads never do (writes.c). */
struct srv_wpool;

/* Start the pool, at most n writes in flight (0: 64), and the deadline
   timer; timeout_ms 0: none. Before the daemon starts. Errors:
   LP_E_NOMEM. */
lp_err srv__wpool_start(unsigned n, uint64_t timeout_ms,
			struct srv_wpool **out);
/* Run r (body complete, request info parsed) on a fiber, or queue it for
   one, its connection suspended: *ok false if the connection is to be
   closed. false: the pool is closing (or out of memory), r is untouched;
   run it inline. MHD thread, in the access handler. */
bool srv__wpool_submit(struct srv_wpool *p, struct srv_req *r, bool *ok);
/* The access handler's call after a resume: go on with the write, or
   queue its answer. false: close the connection. MHD thread. */
bool srv__wpool_resumed(struct srv_wpool *p, struct srv_req *r);
/* completed()'s call, before it drops the connection's reference: a write
   that libmicrohttpd ended without calling the access handler after its
   resume (granted a slot, or woken) is finished without it. MHD thread. */
void srv__wpool_completed(struct srv_wpool *p, struct srv_req *r);
/* Refuse new writes, finish every queued and running one (each connection
   resumed), stop the timer. Before the daemon stops. NULL ok. */
void srv__wpool_close(struct srv_wpool *p);
/* Free (after the daemon stopped). NULL ok. */
void srv__wpool_free(struct srv_wpool *p);

/* http.c, for writes.c: copy r's headers, query, URL and method off the
   connection (MHD thread; false: out of memory); drop a reference (the
   last frees r; any thread); a Failure Status response (JSON) for err,
   its HTTP code in *code (NULL on OOM), indented when detached request r
   asks for it (NULL: compact; it only reads r's copies, so any thread). */
bool srv__req_detach(struct srv_req *r);
void srv__req_unref(struct srv_req *r);
struct MHD_Response *srv__status_response(struct srv_req *r,
					  const struct srv_error *err,
					  unsigned *code);

#endif
