/*
 * http.c -- the libmicrohttpd daemon, request bodies, authentication and the
 * reply helpers.
 *
 * Threads: MHD's pool threads (one per core, epoll) call access() and
 * completed().
 *
 * Request lifecycle:
 *   access(1st call, headers) -> allocate srv_req, authenticate
 *   access(body chunks)       -> gather up to SRV_BODY_MAX (the rest is read
 *                                and dropped: the answer is 413)
 *   access(last call)         -> a write to a synced store (or any
 *                                deletecollection): srv__wpool_submit
 *                                (writes.c), the connection suspended; else
 *                                srv_dispatch: exactly one srv_reply_*
 *   access(after a resume)    -> srv__wpool_answer queues the write's answer;
 *                                or a read parked for a revision not
 *                                reached (revwait.c) runs again: r->hold and
 *                                r->warnings are let go first, the rest of
 *                                the parse is kept
 *   completed()               -> drop the connection's reference: the last
 *                                one frees srv_req and any stream state
 *
 * Invariants:
 *  1. A suspended connection is resumed before the daemon stops (srv_stop
 *     ends every stream and finishes every write first).
 *  2. Watches (watch.c) keep their own state behind srv_watch_slot.
 *  3. A deferred request (r->deferred) never touches its connection off the
 *     MHD thread: srv_header/srv_query read the copy srv__req_detach made,
 *     and srv_reply_* store the response in r->wresp instead of queueing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"
#include "api.h"
#include "conns.h"
#include "gzip.h"
#include "http.h"
#include "http_daemon.h"
#include "lapis/assert.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "objects.h"
#include "pretty.h"
#include "qparse.h"
#include "registry/json.h"
#include "respcache.h"
#include "revwait.h"
#include "satoken.h"
#include "table.h"
#include "yamljson.h"

struct srv {
	struct srv_opts o;
	char *token;
	char *cert, *key;
	struct srv_sa *sa; /* read-only while serving */
	struct MHD_Daemon *d;
	int fd; /* the listener, until the acceptor takes it */
	struct srv_acceptor *acc; /* acceptor.c: hands connections to d */
	int port;
	_Atomic int stopping;
	struct srv_wpool *wp; /* writes.c's */
	void *watch_state; /* watch.c's, see srv_watch_slot */
	struct srv_conns *conns; /* conns.c's: the request-head deadline */
	struct srv_respcache *kept; /* GET answers (respcache.c); NULL: none */
	struct srv_revwait *rw;	    /* reads waiting for a revision */
};

eng *srv_engine(struct srv *s)
{
	return s->o.e;
}

const struct srv_opts *srv_options(struct srv *s)
{
	return &s->o;
}

const struct srv_sa *srv_sa(struct srv *s)
{
	return s->sa;
}

/* ------------------------------------------------------------ replies */

/* MHD_lookup_connection_value over the copy: the first match; header
   names compared without case, query keys exactly (Go's url.Values). */
static const char *val_lookup(struct srv_req *r, int kind, const char *key)
{
	for (size_t i = 0; i < r->n_vals; i++)
		if (r->vals[i].kind == kind && r->vals[i].key &&
		    !(kind == MHD_HEADER_KIND ? strcasecmp
					      : strcmp)(r->vals[i].key, key))
			return r->vals[i].value;
	return NULL;
}

const char *srv_header(struct srv_req *r, const char *name)
{
	if (r->deferred)
		return val_lookup(r, MHD_HEADER_KIND, name);
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *srv_accept(struct srv_req *r)
{
	/* not kept for a deferred request: its copies are looked up */
	if (r->deferred)
		return val_lookup(r, MHD_HEADER_KIND, "Accept");
	return r->hdr_got ? r->accept
			  : MHD_lookup_connection_value(
				r->conn, MHD_HEADER_KIND, "Accept");
}

/* The User-Agent, as srv_accept the Accept header. */
static const char *user_agent(struct srv_req *r)
{
	return r->hdr_got && !r->deferred ? r->user_agent
					  : srv_header(r, "User-Agent");
}

/* A query key or value that Go's url.ParseQuery refuses (a bad '%'
   escape, a ';'): unescape_cb leaves it as one NUL byte, which no escape
   gives, and the pair is dropped as Go drops it. */
static bool refused_arg(const char *s, size_t n)
{
	return s && n == 1 && !s[0];
}

static enum MHD_Result qarg_cb(void *cls, enum MHD_ValueKind kind,
			       const char *key, size_t key_len,
			       const char *value, size_t value_len)
{
	(void)kind;
	struct srv_req *r = cls;
	if (refused_arg(key, key_len) || refused_arg(value, value_len))
		return MHD_YES;
	if (r->n_qa == SRV_QARGS) {
		r->qa_over = true;
		return MHD_NO;
	}
	r->qa[r->n_qa++] =
	    (struct srv_qarg){.key = key, .value = value, .key_len = key_len};
	return MHD_YES;
}

/* Read r's query arguments into r->qa, once (not for a deferred r). */
static void qargs_read(struct srv_req *r)
{
	if (r->qa_got)
		return;
	MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, qarg_cb, r);
	r->qa_got = true;
}

const char *srv_query(struct srv_req *r, const char *key)
{
	if (r->deferred)
		return val_lookup(r, MHD_GET_ARGUMENT_KIND, key);
	qargs_read(r);
	size_t kl = strlen(key);
	/* "?watch" (no '=') is there with an empty value, as Go's url.Query
	   reads it: MHD reports it with a NULL value. The first match, keys
	   compared exactly as Go's (MHD's own lookup ignores case: ?DRYRUN=All
	   is no dryRun for kube). */
	if (!r->qa_over) {
		for (unsigned i = 0; i < r->n_qa; i++)
			if (r->qa[i].key_len == kl &&
			    !memcmp(r->qa[i].key, key, kl))
				return r->qa[i].value ? r->qa[i].value : "";
		return NULL;
	}
	const char *v = NULL;
	return srv_query_all(r, key, &v, 1) ? v : NULL;
}

struct query_all {
	const char *key;
	const char **out;
	size_t max, n;
};

static enum MHD_Result query_all_cb(void *cls, enum MHD_ValueKind kind,
				    const char *key, size_t key_len,
				    const char *value, size_t value_len)
{
	struct query_all *q = cls;
	(void)kind;
	if (refused_arg(key, key_len) || refused_arg(value, value_len))
		return MHD_YES;
	if (key && !strcmp(key, q->key)) {
		if (q->n < q->max)
			q->out[q->n] = value ? value : "";
		q->n++;
	}
	return MHD_YES;
}

size_t srv_query_all(struct srv_req *r, const char *key, const char **out,
		     size_t max)
{
	struct query_all q = {key, out, max, 0};
	if (r->deferred) {
		for (size_t i = 0; i < r->n_vals; i++)
			if (r->vals[i].kind == MHD_GET_ARGUMENT_KIND)
				query_all_cb(
				    &q, MHD_GET_ARGUMENT_KIND, r->vals[i].key,
				    strlen(r->vals[i].key), r->vals[i].value,
				    strlen(r->vals[i].value));
		return q.n;
	}
	MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND,
				    query_all_cb, &q);
	return q.n;
}

struct detach_ctx {
	struct srv_req *r;
	size_t n, cap, bytes;
	char *p; /* NULL: counting */
};

static char *put_str(struct detach_ctx *c, const char *v)
{
	if (!v)
		return NULL;
	size_t n = strlen(v) + 1;
	if (!c->p) {
		c->bytes += n;
		return NULL;
	}
	char *d = memcpy(c->p, v, n);
	c->p += n;
	return d;
}

static enum MHD_Result detach_val(void *cls, enum MHD_ValueKind kind,
				  const char *key, size_t key_len,
				  const char *value, size_t value_len)
{
	struct detach_ctx *c = cls;
	if (kind == MHD_GET_ARGUMENT_KIND &&
	    (refused_arg(key, key_len) || refused_arg(value, value_len)))
		return MHD_YES;
	if (c->p) {
		if (c->n == c->cap)
			return MHD_NO; /* cannot happen: the same values twice */
		struct srv_val *v = &c->r->vals[c->n];
		v->kind = (int)kind;
		v->key = put_str(c, key);
		v->value = put_str(c, value ? value : ""); /* see srv_query */
	} else {
		put_str(c, key);
		put_str(c, value ? value : "");
	}
	c->n++;
	return MHD_YES;
}

bool srv__req_detach(struct srv_req *r)
{
	const enum MHD_ValueKind kinds =
	    MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND;
	struct detach_ctx c = {.r = r};
	MHD_get_connection_values_n(r->conn, kinds, detach_val, &c);
	put_str(&c, r->url);
	put_str(&c, r->method);
	size_t n = c.n;
	r->vals = calloc(n ? n : 1, sizeof *r->vals);
	r->own = malloc(c.bytes ? c.bytes : 1);
	if (!r->vals || !r->own) {
		free(r->vals);
		free(r->own);
		r->vals = NULL;
		r->own = NULL;
		return false;
	}
	c.n = 0;
	c.cap = n;
	c.p = r->own;
	MHD_get_connection_values_n(r->conn, kinds, detach_val, &c);
	r->n_vals = c.n;
	r->url = put_str(&c, r->url);
	r->method = put_str(&c, r->method);
	r->deferred = true;
	return true;
}

/* Whether text may be a Warning's text: valid UTF-8 without control
   characters (C0, DEL, C1), as apimachinery's NewWarningHeader checks. */
static bool warning_text(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t left = strlen(text);
	while (left) {
		size_t len = p[0] < 0x80 ? 1 : reg_utf8_seq(p, left);
		if (!len || (len == 1 && (p[0] < 0x20 || p[0] == 0x7F)) ||
		    (len == 2 && p[0] == 0xC2 && p[1] <= 0x9F)) /* C1 */
			return false;
		p += len;
		left -= len;
	}
	return true;
}

void srv_warn(struct srv_req *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len <= 0)
		return; /* kube ignores an empty warning */
	char *text = malloc((size_t)len + 1);
	if (!text)
		return;
	va_start(ap, fmt);
	vsnprintf(text, (size_t)len + 1, fmt, ap);
	va_end(ap);
	/* kube sends each distinct warning once (a retried patch, a repeated
	   field, ... may add one again), and none whose text
	   NewWarningHeader refuses, so no line break splits a header here */
	bool ok = warning_text(text);
	for (const char *p = r->warnings; ok && p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n == (size_t)len && !memcmp(p, text, n))
			ok = false;
		p += n + (nl ? 1 : 0);
	}
	size_t old = r->warnings ? strlen(r->warnings) : 0;
	char *w = ok ? realloc(r->warnings, old + (size_t)len + 2) : NULL;
	if (w) {
		if (old)
			w[old++] = '\n';
		memcpy(w + old, text, (size_t)len + 1);
		r->warnings = w;
	}
	free(text);
}

/* kube's warning recorder: texts whole while they total at most
   WARN_TOTAL_RUNES runes; past that every text, those already sent too,
   is cut to WARN_ITEM_RUNES runes, and texts are added only while the
   total is under WARN_TOTAL_RUNES. */
enum { WARN_TOTAL_RUNES = 4096, WARN_ITEM_RUNES = 256 };

/* The first max runes of s (valid UTF-8), as a byte count. */
static size_t rune_prefix(const char *s, size_t max)
{
	size_t i = 0;
	for (size_t n = 0; s[i] && n < max; n++)
		do
			i++;
		while (((unsigned char)s[i] & 0xC0) == 0x80);
	return i;
}

static void add_warning(struct MHD_Response *resp, const char *s, size_t len)
{
	char small[600], *hv = small;
	size_t need = 9 + 2 * len;
	if (need > sizeof small && !(hv = malloc(need)))
		return;
	size_t o = (size_t)snprintf(hv, need, "299 - \"");
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			hv[o++] = '\\';
		hv[o++] = s[i];
	}
	hv[o++] = '"';
	hv[o] = 0;
	MHD_add_response_header(resp, "Warning", hv);
	if (hv != small)
		free(hv);
}

static size_t runes_of(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* r->warnings holds only texts srv_warn let in (valid UTF-8). */
static void add_warnings(struct srv_req *r, struct MHD_Response *resp)
{
	if (!r->warnings)
		return;
	/* the text with which cutting starts: all of them up to it are then
	   sent cut, whatever their total */
	const char *cut = NULL;
	size_t total = 0;
	for (const char *s = r->warnings; *s && !cut;) {
		size_t len = strcspn(s, "\n");
		total += runes_of(s, len);
		if (total > WARN_TOTAL_RUNES)
			cut = s;
		s += len + (s[len] == '\n');
	}
	total = 0;
	for (const char *s = r->warnings; *s;) {
		size_t len = strcspn(s, "\n");
		if (cut && s > cut && total >= WARN_TOTAL_RUNES)
			break;
		size_t keep = len, runes = runes_of(s, len);
		if (cut && runes > WARN_ITEM_RUNES) {
			keep = rune_prefix(s, WARN_ITEM_RUNES);
			runes = WARN_ITEM_RUNES;
		}
		total += runes;
		add_warning(resp, s, keep);
		s += len + (s[len] == '\n');
	}
}

/* Queue resp with Content-Type ctype and, unless cache is NULL, that
   Cache-Control. */
static void queue_cc(struct srv_req *r, int code, struct MHD_Response *resp,
		     const char *ctype, const char *cache)
{
	if (!resp) {
		lp_error("cannot create a response");
		r->answered = true;
		return;
	}
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	if (cache)
		MHD_add_response_header(resp, "Cache-Control", cache);
	if (r->gzipped && r->gzip == SRV_GZIP_API)
		/* after the handler's own Vary, as SerializeObject adds it */
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	add_warnings(r, resp);
	/* shutting down: the client is to open its next request on a new
	   connection, which the closed listener refuses, rather than
	   send it on one about to be closed under it */
	if (srv_stopping(r->s))
		MHD_add_response_header(resp, "Connection", "close");
	if (r->deferred) {
		/* a write worker: the access handler queues it after the
		   resume (invariant 3); a handler answers once */
		if (r->wresp)
			MHD_destroy_response(resp);
		else {
			r->wresp = resp;
			r->wcode = (unsigned)code;
			r->code = code; /* for the after_write hooks */
		}
		r->answered = true;
		return;
	}
	MHD_queue_response(r->conn, (unsigned)code, resp);
	MHD_destroy_response(resp);
	r->answered = true;
	r->code = code;
}

static void queue(struct srv_req *r, int code, struct MHD_Response *resp,
		  const char *ctype)
{
	queue_cc(r, code, resp, ctype, "no-cache, private");
}

static bool want_pretty(struct srv_req *r, const char *ctype);

/* Does r's answer of len bytes go out gzipped (gzip.h)? */
static bool gzip_wanted(struct srv_req *r, size_t len)
{
	switch (r->gzip) {
	case SRV_GZIP_API:
		return len > SRV_GZIP_API_OVER &&
		       srv_gzip_api_accepts(srv_header(r, "Accept-Encoding"));
	case SRV_GZIP_OPENAPI_V2:
		return len >= SRV_GZIP_V2_FROM &&
		       srv_gzip_v2_accepts(srv_header(r, "Accept-Encoding"));
	case SRV_GZIP_NEVER:
		return false;
	}
	return false;
}

/* The response whose body is data[0, len), which release(cls) frees
   when libmicrohttpd is done with it, or now if no response is made
   (release NULL: data is copied, or for no bytes left as it is);
   gzipped when r's client takes it (gzip_wanted). NULL when out of
   memory. */
static struct MHD_Response *body_response(struct srv_req *r, const char *data,
					  size_t len, void (*release)(void *),
					  void *cls)
{
	struct MHD_Response *resp = NULL;
	size_t zn;
	char *z = gzip_wanted(r, len) ? srv_gzip(data, len, &zn) : NULL;
	if (z) {
		if (release)
			release(cls);
		resp = MHD_create_response_from_buffer(zn, z,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(z);
			return NULL;
		}
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
		r->gzipped = true;
	} else if (!release) {
		resp = MHD_create_response_from_buffer(
		    len, (void *)data,
		    len ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_buffer_with_free_callback_cls(
		    len, (void *)data, release, cls);
		if (!resp)
			release(cls);
	}
	/* gziphandler's, on every answer it wraps, first */
	if (resp && r->gzip == SRV_GZIP_OPENAPI_V2)
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	return resp;
}

/* The headers of an answer in JSON that is no Status of a write's
   worker nor a stream: what queue() gives, added once. */
static void json_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
}

struct MHD_Response *srv__status_response(struct srv_req *r,
					  const struct srv_error *err,
					  unsigned *code)
{
	json_t *st = srv_status_failure(err, NULL, 0);
	size_t n = 0;
	char *s = st ? reg_json_dump(st, &n) : NULL;
	json_decref(st);
	if (!s)
		return NULL;
	size_t pn;
	char *p = r && want_pretty(r, "application/json")
		      ? srv_json_indent(s, n, &pn)
		      : NULL;
	if (p) {
		free(s);
		s = p;
		n = pn;
	}
	struct MHD_Response *resp =
	    r ? body_response(r, s, n, free, s)
	      : MHD_create_response_from_buffer(n, s, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		if (!r)
			free(s);
		return NULL;
	}
	json_headers(resp);
	if (r && r->gzipped)
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	*code = (unsigned)srv_status_code(err->code);
	return resp;
}

/* Does the client want this JSON body pretty-printed? kube's rule
   (negotiation.isPrettyPrint and the Accept clause's pretty=1): the
   chosen clause's pretty=1, else a non-empty ?pretty= read by
   strconv.ParseBool, else a User-Agent starting with curl, Wget or
   Mozilla/5.0. Only for negotiated JSON: never for YAML, a watch's
   stream, or the OpenAPI and OIDC documents, which kube serves as they
   are. */
static bool want_pretty(struct srv_req *r, const char *ctype)
{
	if (!ctype || strncmp(ctype, "application/json", 16) ||
	    (ctype[16] && ctype[16] != ';'))
		return false;
	if (r->always_pretty)
		return true;
	bool pretty = false;
	const char *accept = srv_accept(r);
	if (r->status_reply && accept && *accept) {
		/* kube's ErrorNegotiated: with no clause acceptable, it
		   writes the Status as indented JSON (WriteRawJSON) */
		struct srv_neg n;
		if (!srv_negotiate_status(accept, &n))
			return true;
		pretty = n.pretty;
	} else if (accept && strstr(accept, "pretty")) {
		struct srv_neg n;
		struct srv_error err;
		srv_error_clear(&err);
		pretty = srv_negotiate(accept, NULL, false, false, &n, &err) ==
			     LP_OK &&
			 n.pretty;
	}
	if (!pretty) {
		const char *q = srv_query(r, "pretty");
		if (q && *q) {
			bool ok;
			pretty = srv_go_parse_bool(q, &ok);
		} else {
			const char *ua = user_agent(r);
			pretty = ua && (!strncmp(ua, "curl", 4) ||
					!strncmp(ua, "Wget", 4) ||
					!strncmp(ua, "Mozilla/5.0", 11));
		}
	}
	/* the documents kube writes with its own encoders, never indented;
	   looked at last, as most answers are not indented anyway */
	const char *u = r->url ? r->url : "";
	return pretty && strncmp(u, "/openapi/", 9) &&
	       strncmp(u, "/.well-known/", 13) && strncmp(u, "/openid/", 8);
}

/* data[0, len) indented when the client wants it (want_pretty): a new
   buffer into *out, *out_len; false to send data as it is (also when out
   of memory: compact JSON is still the right answer). */
static bool prettify(struct srv_req *r, const char *ctype, const char *data,
		     size_t len, char **out, size_t *out_len)
{
	if (!want_pretty(r, ctype))
		return false;
	*out = srv_json_indent(data, len, out_len);
	return *out != NULL;
}

static void take_raw(struct srv_req *r, int code, const char *ctype, char *buf,
		     size_t len)
{
	queue(r, code, body_response(r, buf, len, free, buf), ctype);
}

void srv_reply_take(struct srv_req *r, int code, const char *ctype, char *buf,
		    size_t len)
{
	char *p;
	size_t pl;
	if (prettify(r, ctype, buf, len, &p, &pl)) {
		free(buf);
		buf = p;
		len = pl;
	}
	take_raw(r, code, ctype, buf, len);
}

void srv_reply_take_at(struct srv_req *r, int code, const char *ctype,
		       char *base, size_t off, size_t len)
{
	char *p;
	size_t pl;
	if (prettify(r, ctype, base + off, len, &p, &pl)) {
		free(base);
		take_raw(r, code, ctype, p, pl);
		return;
	}
	queue(r, code, body_response(r, base + off, len, free, base), ctype);
}

void srv_reply_take_cb(struct srv_req *r, int code, const char *ctype,
		       const char *data, size_t len, void (*release)(void *),
		       void *cls)
{
	char *p;
	size_t pl;
	if (prettify(r, ctype, data, len, &p, &pl)) {
		release(cls);
		take_raw(r, code, ctype, p, pl);
		return;
	}
	queue(r, code, body_response(r, data, len, release, cls), ctype);
}

void srv_reply_copy(struct srv_req *r, int code, const char *ctype,
		    const void *buf, size_t len)
{
	char *p;
	size_t pl;
	if (prettify(r, ctype, buf, len, &p, &pl)) {
		take_raw(r, code, ctype, p, pl);
		return;
	}
	queue(r, code, body_response(r, buf, len, NULL, NULL), ctype);
}

bool srv_get_keepable(struct srv_req *r)
{
	if (!r->s->kept || r->deferred || r->warnings ||
	    strcmp(r->method, "GET") || r->neg.out != SRV_OUT_PLAIN ||
	    srv_stopping(r->s))
		return false;
	qargs_read(r);
	return !r->qa_over && !r->n_qa && !srv_wants_yaml(r) &&
	       !want_pretty(r, "application/json");
}

bool srv_reply_kept(struct srv_req *r, uint64_t seq, uint64_t tag)
{
	if (!srv_respcache_queue(r->s->kept, seq, tag, r->url, r->conn))
		return false;
	r->answered = true;
	r->code = 200;
	return true;
}

void srv_reply_keep(struct srv_req *r, uint64_t seq, uint64_t tag, char *buf,
		    size_t len)
{
	if (gzip_wanted(r, len)) {
		/* never kept: the cache keeps smaller answers only */
		take_raw(r, 200, "application/json", buf, len);
		return;
	}
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		queue(r, 200, NULL, NULL);
		return;
	}
	/* queue()'s headers: no Warning, not stopping, as
	   srv_get_keepable found */
	json_headers(resp);
	MHD_queue_response(r->conn, 200, resp);
	r->answered = true;
	r->code = 200;
	/* the creator's reference goes to the cache (or is dropped) */
	srv_respcache_put(r->s->kept, r->s->o.e, seq, tag, r->url, resp, len);
}

bool srv_wants_yaml(struct srv_req *r)
{
	const char *a = srv_accept(r);
	if (!a)
		return false;
	if (!strstr(a, "application/yaml"))
		return false; /* the common case, without parsing */
	/* the clause kube's negotiation takes (q, then wildcards last); for
	   an error's Status, none that asks for a conversion */
	struct srv_neg n;
	if (r->status_reply)
		return srv_negotiate_status(a, &n) && n.yaml;
	struct srv_error err;
	srv_error_clear(&err);
	return srv_negotiate(a, NULL, false, false, &n, &err) == LP_OK &&
	       n.yaml;
}

void srv_reply_json(struct srv_req *r, int code, json_t *v)
{
	if (!v) {
		srv_reply_copy(r, 500, "application/json", "{}", 2);
		return;
	}
	if (srv_wants_yaml(r)) {
		size_t n;
		char *y = srv_json_to_yaml(v, &n);
		json_decref(v);
		if (y) {
			srv_reply_take(r, code, "application/yaml", y, n);
			return;
		}
		srv_reply_copy(r, 500, "application/json", "{}", 2);
		return;
	}
	size_t n;
	char *s = reg_json_dump(v, &n);
	json_decref(v);
	if (!s) {
		srv_reply_copy(r, 500, "application/json", "{}", 2);
		return;
	}
	srv_reply_take(r, code, "application/json", s, n);
}

/* Is message the Invalid of a request's options, "<Kind>Options.meta.k8s.io
   \"\" is invalid: ..."? Then *w is its group and kind (kube's NewInvalid on
   the options' GroupKind), with kind in buf. */
static bool options_invalid(const char *message, struct srv_status_what *w,
			    char *buf, size_t n)
{
	static const char tail[] = "Options.meta.k8s.io \"\" is invalid: ";
	size_t k = 0;
	while ((message[k] >= 'A' && message[k] <= 'Z') ||
	       (message[k] >= 'a' && message[k] <= 'z'))
		k++;
	if (k < sizeof "Options" - 1 ||
	    strncmp(message + k - (sizeof "Options" - 1), tail,
		    sizeof tail - 1) ||
	    k + 1 > n)
		return false;
	memcpy(buf, message, k);
	buf[k] = '\0';
	*w = (struct srv_status_what){.group = "meta.k8s.io", .kind = buf};
	return true;
}

void srv_reply_error(struct srv_req *r, const struct srv_error *err,
		     const struct srv_status_what *what)
{
	struct srv_status_what ow;
	char okind[32];
	if (err && err->code == LP_E_INVALID &&
	    options_invalid(err->message, &ow, okind, sizeof okind))
		what = &ow;
	int retry = 0;
	if (err && !err->no_retry &&
	    (err->code == LP_E_FUTURE || err->code == LP_E_TOOMANY ||
	     err->code == LP_E_READERSFULL || err->retry_soon))
		retry = 1;
	json_t *st = srv_status_failure(err, what, retry);
	int code = srv_status_code(err ? err->code : LP_E_IO);
	if (retry && st) {
		/* Retry-After goes with retryAfterSeconds. */
		size_t n;
		char *s = reg_json_dump(st, &n);
		json_decref(st);
		if (!s)
			return;
		static const char *const h[] = {"Retry-After", "1", NULL};
		srv_reply_headers(r, code, "application/json", s, n, h);
		return;
	}
	r->status_reply = true;
	srv_reply_json(r, code, st);
}

void srv_reply_fail(struct srv_req *r, lp_err code, const char *fmt, ...)
{
	struct srv_error err = {.code = code};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err.message, sizeof err.message, fmt, ap);
	va_end(ap);
	srv_reply_error(r, &err, NULL);
}

void srv_url(struct srv *s, char *buf, size_t n)
{
	const char *listen = s->o.listen ? s->o.listen : "127.0.0.1:0";
	const char *scheme = s->o.insecure ? "http" : "https";
	int port = srv_port(s);
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!strncmp(listen, "[::]", 4) || !close)
			snprintf(buf, n, "%s://[::1]:%d", scheme, port);
		else
			snprintf(buf, n, "%s://%.*s:%d", scheme,
				 (int)(close - listen + 1), listen, port);
		return;
	}
	const char *colon = strrchr(listen, ':');
	int hl = colon ? (int)(colon - listen) : 0;
	if (!strncmp(listen, "0.0.0.0:", 8) || hl == 0)
		snprintf(buf, n, "%s://127.0.0.1:%d", scheme, port);
	else
		snprintf(buf, n, "%s://%.*s:%d", scheme, hl, listen, port);
}

void srv_reply_no_route(struct srv_req *r, lp_err code)
{
	struct srv_error err;
	srv_error_clear(&err);
	srv_error_set(&err, code, "%s",
		      code == LP_E_NOTFOUND
			  ? "the server could not find the requested resource"
			  : "the server does not allow this method on the requested resource");
	err.generic = true;
	srv_reply_error(r, &err, NULL);
}

/* See srv_reply_stream. */
#define STREAM_BLOCK 1024

struct stream_ctx {
	srv_stream_fn fn;
	void *state;
};

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream_ctx *c = cls;
	long n = c->fn(c->state, pos, buf, max);
	if (n == -1)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return (ssize_t)n;
}

void srv_reply_stream(struct srv_req *r, const char *ctype, srv_stream_fn fn,
		      void *state, void (*free_fn)(void *))
{
	LP_ASSERT(!r->deferred); /* only writes are deferred */
	struct stream_ctx *c = malloc(sizeof *c);
	if (!c) {
		free_fn(state);
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	c->fn = fn;
	c->state = state;
	r->stream = state;
	r->stream_free = free_fn;
	/* The block size is a buffer MHD callocs inside the response, per
	   stream. A chunked (HTTP/1.1) response never uses it: MHD frames
	   the chunks in the connection's pool. Only an HTTP/1.0 stream reads
	   through it, in blocks of this size. A large one cost every idle
	   watch a calloc whose memset made it resident whenever the memory
	   was reused (64 KiB: up to 64 KB per watcher, bench-http S3). */
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader, c, free);
	queue(r, 200, resp, ctype);
}

void srv_suspend(struct MHD_Connection *c)
{
	MHD_suspend_connection(c);
}

void srv_resume(struct MHD_Connection *c)
{
	MHD_resume_connection(c);
}

int srv_conn_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

int srv_stopping(struct srv *s)
{
	return atomic_load(&s->stopping);
}

void **srv_watch_slot(struct srv *s)
{
	return &s->watch_state;
}

/* ------------------------------------------------------------ requests */

bool srv_token_is_admin(struct srv *s, const char *t)
{
	size_t n = strlen(s->token);
	if (!t || n == 0 || strlen(t) != n)
		return false;
	unsigned char diff = 0; /* constant time: no early exit */
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(t[i] ^ s->token[i]);
	return diff == 0;
}

/* kube's bearertoken authenticator: the header trimmed of white space,
   split on single spaces, "bearer" in any case and the token the second
   word (a third and on ignored; two spaces make it empty: none). */
static bool token_ok(struct srv *s, const char *auth)
{
	if (!auth)
		return false;
	while (*auth == ' ' || *auth == '\t')
		auth++;
	const char *end = auth + strlen(auth);
	while (end > auth && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end - auth < 7 || strncasecmp(auth, "bearer ", 7) != 0)
		return false;
	const char *t = auth + 7;
	const char *sp = memchr(t, ' ', (size_t)(end - t));
	size_t n = (size_t)((sp ? sp : end) - t);
	char tok[1024];
	if (n == 0 || n >= sizeof tok)
		return false;
	memcpy(tok, t, n);
	tok[n] = 0;
	return srv_token_is_admin(s, tok);
}

static const char *query_cb(void *ud, const char *key)
{
	return srv_query(ud, key);
}

/* --request-timeout in seconds (its default when unset). */
static unsigned request_timeout_s(const struct srv_opts *o)
{
	return o->request_timeout_s ? o->request_timeout_s : 60;
}

/* kube's `timeout` query parameter (WithRequestDeadline): a Go duration
   that shortens --request-timeout for a request that is not a watch; 0,
   a negative one or one beyond --request-timeout leaves that. A malformed
   one is 400. It is enforced where --request-timeout is: on writes. false:
   answered. */
static bool timeout_param(struct srv_req *r)
{
	const char *t = srv_query(r, "timeout");
	if (!t || !*t || (r->ri.verb && !strcmp(r->ri.verb, "watch")))
		return true;
	char msg[256];
	int64_t ns;
	if (srv_parse_duration(t, &ns, msg, sizeof msg)) {
		srv_reply_fail(
		    r, LP_E_BADREQUEST,
		    "invalid timeout specified in the request URL - %s", msg);
		return false;
	}
	unsigned max_s = request_timeout_s(&r->s->o);
	if (ns > 0 && ns < (int64_t)max_s * 1000000000LL)
		r->timeout_ms = (ns + 999999) / 1000000;
	return true;
}

/* The verbs that commit (or would, with dryRun): they wait for the
   writer's group commit, so they run on the write pool. */
static bool is_write(const struct srv_reqinfo *ri)
{
	static const char *const verbs[] = {"create", "update", "patch",
					    "delete", "deletecollection"};
	if (!ri->is_resource || !ri->resource[0])
		return false;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(ri->verb, verbs[i]))
			return true;
	return false;
}

struct framing {
	struct srv_req *r;    /* its user_agent, authorization and accept */
	unsigned n_len;	      /* Content-Length headers */
	const char *len;      /* the first */
	bool len_differs;     /* another says something else */
	const char *encoding; /* Transfer-Encoding */
	unsigned n_host;      /* Host headers */
	bool bad_host;	      /* the first has a byte no host has */
	const char *expect;   /* the first Expect */
	const char *bad_hdr;  /* why a header is refused, Go's words */
	const char *prev_end; /* where the last value's string ends */
};

/* Byte classes of a request head, filled by classes_init before the
   daemon starts: CC_TCHAR, RFC 9110's tchar (a method's and a header
   name's bytes: digits, letters and !#$%&'*+-.^_`|~); CC_HOST, what Go's
   httpguts.ValidHostHeader lets through (a host's, a port's, an IPv6
   literal's and a zone's: digits, letters and !$%&'()*+,-.:;=[]_~). */
enum { CC_TCHAR = 1, CC_HOST = 2 };
static unsigned char char_class[256];
static pthread_once_t classes_once = PTHREAD_ONCE_INIT;

static void classes_init(void)
{
	for (int c = '0'; c <= '9'; c++)
		char_class[c] = CC_TCHAR | CC_HOST;
	for (int c = 'a'; c <= 'z'; c++)
		char_class[c] = char_class[c - 'a' + 'A'] = CC_TCHAR | CC_HOST;
	for (const char *p = "!#$%&'*+-.^_`|~"; *p; p++)
		char_class[(unsigned char)*p] |= CC_TCHAR;
	for (const char *p = "!$%&'()*+,-.:;=[]_~"; *p; p++)
		char_class[(unsigned char)*p] |= CC_HOST;
}

/* Whether all n bytes of s are of class cc. */
static bool all_of(const char *s, size_t n, unsigned char cc)
{
	for (size_t i = 0; i < n; i++)
		if (!(char_class[(unsigned char)s[i]] & cc))
			return false;
	return true;
}

/* Whether the 8 bytes of x hold one below 0x20 or 0x7f (exact per word:
   a borrow starts only at such a byte). */
static bool word_has_ctl(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101u;
	const uint64_t highs = 0x8080808080808080u;
	uint64_t y = x ^ (0x7f * ones); /* 0x7f bytes become 0 */
	return ((x - 0x20 * ones) & ~x & highs) || ((y - ones) & ~y & highs);
}

/* Whether v (n bytes) holds a control byte other than tab, which Go's
   httpguts.ValidHeaderFieldValue refuses (a NUL ends the C string that
   libmicrohttpd keeps, so the value is read up to it). Eight bytes at a
   time, the last few padded with spaces; only a word with such a byte is
   looked at byte by byte, for tabs. */
static bool has_ctl(const char *v, size_t n)
{
	size_t i = 0;
	for (; i < n; i += 8) {
		uint64_t x = 0x2020202020202020u;
		memcpy(&x, v + i, n - i < 8 ? n - i : 8);
		if (word_has_ctl(x))
			break;
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return true;
	}
	return false;
}

/* Whether a header's name and value sit where libmicrohttpd 0.9.75 parses
   them, in place: the name, its colon made a NUL, blanks, the value. A
   folded line (obs-fold) moved the name, with the continuation glued on
   ("X-A: 1\r\n 2" became "X-A2: 1"): RFC 9112 lets a server refuse it
   with a 400. Only blanks are read between the two, from the name's end;
   a moved name's end is followed by no blank. */
static bool in_place(const char *key, size_t klen, const char *value)
{
#if MHD_VERSION < 0x00097600
	const char *p = key + klen + 1;
	if ((uintptr_t)value < (uintptr_t)p)
		return false;
	while (p != value && (*p == ' ' || *p == '\t'))
		p++;
	return p == value;
#else /* later versions join folded lines themselves */
	(void)key;
	(void)klen;
	(void)value;
	return true;
#endif
}

/* Whether a value's string ended where its line did, given where it
   ended (end: its terminating NUL) and where the next header's name
   starts (next; NULL after the last one). libmicrohttpd 0.9.75 parses in
   place, making a line's CR LF (or LF) NULs, and keeps each value as a C
   string: a NUL byte inside a value ended it early, and more than a line
   end then lies before the next name (or, after the last header, before
   the blank line's NUL). A NUL right before the line's end goes unseen,
   and changes nothing. */
static bool value_whole(const char *end, const char *next)
{
#if MHD_VERSION < 0x00097600
	if (!next)
		return end[1] == '\0';
	uintptr_t gap = (uintptr_t)next - (uintptr_t)end;
	return gap == 1 || gap == 2;
#else /* later versions refuse a NUL in the head themselves */
	(void)end;
	(void)next;
	return true;
#endif
}

/* Go's validMethod: one or more tchar. */
static bool method_ok(const char *m)
{
	return *m && all_of(m, strlen(m), CC_TCHAR);
}

/* Whether header key (klen bytes) is name, without case. */
static bool hdr_is(const char *key, size_t klen, const char *name, size_t nlen)
{
	return klen == nlen && !strncasecmp(key, name, nlen);
}

/* One pass over the headers: the framing, and the first of each header
   every request reads (as MHD_lookup_connection_value finds it). */
static enum MHD_Result framing_cb(void *cls, enum MHD_ValueKind kind,
				  const char *key, size_t klen,
				  const char *value, size_t vlen)
{
	(void)kind;
	struct framing *f = cls;
	struct srv_req *r = f->r;
	if (!f->bad_hdr) {
		if (value && !in_place(key, klen, value))
			f->bad_hdr = "obsolete line folding is not supported";
		else if (!klen || !all_of(key, klen, CC_TCHAR))
			f->bad_hdr = "invalid header name";
		else if ((value && has_ctl(value, vlen)) ||
			 (f->prev_end && !value_whole(f->prev_end, key)))
			f->bad_hdr = "invalid header value";
	}
	f->prev_end = value ? value + vlen : NULL;
#define HDR_IS(name) hdr_is(key, klen, name, sizeof name - 1)
	if (HDR_IS("Host")) {
		/* Go trims a value's blanks; libmicrohttpd the leading ones */
		while (value && vlen &&
		       (value[vlen - 1] == ' ' || value[vlen - 1] == '\t'))
			vlen--;
		if (!f->n_host++ && value && !all_of(value, vlen, CC_HOST))
			f->bad_host = true;
	} else if (HDR_IS("Expect")) {
		if (!f->expect)
			f->expect = value ? value : "";
	} else if (HDR_IS("Content-Length")) {
		if (f->n_len++ && strcmp(f->len, value ? value : ""))
			f->len_differs = true;
		else if (!f->len)
			f->len = value ? value : "";
	} else if (HDR_IS("Transfer-Encoding")) {
		f->encoding = value ? value : "";
	} else if (HDR_IS("Accept")) {
		if (!r->accept)
			r->accept = value;
	} else if (HDR_IS("User-Agent")) {
		if (!r->user_agent)
			r->user_agent = value;
	} else if (HDR_IS("Authorization")) {
		if (!r->authorization)
			r->authorization = value;
	}
#undef HDR_IS
	return MHD_YES;
}

/* A Status of code with message alone (no reason: Go's server answers
   these before kube, which has none for them); message is JSON-safe. */
static void reply_bare_status(struct srv_req *r, int code, const char *message)
{
	char st[256];
	int n = snprintf(st, sizeof st,
			 "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			 "\"metadata\":{},\"status\":\"Failure\","
			 "\"message\":\"%s\",\"code\":%d}",
			 message, code);
	srv_reply_copy(r, code, "application/json", st, (size_t)n);
}

/*
 * What Go's server and kube's filters refuse before a handler reads the
 * body, answered from the headers (libmicrohttpd then reads no body and
 * closes the connection after the answer): a method that is not a token,
 * a control byte in the URL, Host headers missing (HTTP/1.1), doubled or
 * malformed, a header name that is not a token, a value with a control
 * byte, a folded header line, an Expect other than 100-continue (417),
 * Content-Length headers that
 * disagree (a request smuggled in the body of another, as
 * libmicrohttpd takes the first), a transfer coding other than chunked
 * (which libmicrohttpd waited on until the idle timeout), and a missing or
 * bad token on TLS (kube authenticates first: no unauthenticated upload is
 * read). true when it answered.
 */
static bool early_answer(struct srv *s, struct srv_req *r)
{
	struct framing f = {.r = r};
	MHD_get_connection_values_n(r->conn, MHD_HEADER_KIND, framing_cb, &f);
	if (!f.bad_hdr && f.prev_end && !value_whole(f.prev_end, NULL))
		f.bad_hdr = "invalid header value";
	r->hdr_got = true;
	/* in the order Go's readRequest finds them */
	const char *bad = !method_ok(r->method) ? "invalid method"
			  : r->bad_uri ? "invalid control character in URL"
			  : f.len_differs
			      ? "http: message cannot contain multiple "
				"Content-Length headers"
			      : NULL;
	if (bad) {
		srv_reply_fail(r, LP_E_BADREQUEST, "%s", bad);
		return true;
	}
	if (f.encoding && strcasecmp(f.encoding, "chunked")) {
		reply_bare_status(r, 501, "Unsupported transfer encoding");
		return true;
	}
	bad = r->http11 && !f.n_host ? "missing required Host header"
	      : f.n_host > 1	     ? "too many Host headers"
	      : f.bad_host	     ? "malformed Host header"
				     : f.bad_hdr;
	if (bad) {
		srv_reply_fail(r, LP_E_BADREQUEST, "%s", bad);
		return true;
	}
	/* Go's sendExpectationFailed answers an Expect without the token
	   100-continue. libmicrohttpd sends its 100 Continue only for the
	   value "100-continue" whole (in any case), so any other, even a
	   list holding the token, is 417 rather than a client left waiting
	   for a 100 that never comes */
	if (f.expect && *f.expect && strcasecmp(f.expect, "100-continue")) {
		reply_bare_status(r, 417, "Expectation Failed");
		return true;
	}
	if (!s->o.insecure && !token_ok(s, r->authorization)) {
		srv_reply_fail(r, LP_E_UNAUTHORIZED, "Unauthorized");
		return true;
	}
	/* a body over the limit is still read (and dropped) before its
	   413: closing with it unread would reset the connection, and the
	   client could lose the answer */
	return false;
}

bool srv_park_for_rev(struct srv_req *r, int64_t rev)
{
	if (!r->conn || r->deferred)
		return false;
	/* the request's own deadline (?timeout=, --request-timeout) may come
	   first: kube's timeout filter then answers */
	int64_t limit = r->timeout_ms
			    ? r->timeout_ms
			    : (int64_t)request_timeout_s(&r->s->o) * 1000;
	r->rw_by_timeout = limit < SRV_REV_WAIT_MS;
	if (srv_revwait_park(r->s->rw, r, rev,
			     r->rw_by_timeout ? limit : SRV_REV_WAIT_MS))
		return true;
	r->rw_by_timeout = false;
	return false;
}

/* Run r, parsed: a write on the write pool (a deletecollection from a
   revision not reached parked first: its fiber would wait on this
   thread), else its handler, which answers or parks r (revwait.c). */
static enum MHD_Result run_request(struct srv *s, struct srv_req *r)
{
	if (r->ri.is_resource && !strcmp(r->ri.verb, "deletecollection") &&
	    srv_park_for_rev(r, srv_collection_wait_rev(r)))
		return MHD_YES;
	bool ok = true;
	if (is_write(&r->ri) && srv__wpool_submit(s->wp, r, &ok))
		return ok ? MHD_YES : MHD_NO;
	srv_dispatch(r);
	if (!r->answered && !r->rev_parked)
		srv_reply_fail(r, LP_E_IO, "no response");
	return MHD_YES;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
				 const char *url, const char *method,
				 const char *version, const char *upload_data,
				 size_t *upload_size, void **con_cls)
{
	struct srv *s = cls;
	struct srv_req *r = *con_cls;
	if (!r) {
		/* malloc and an assignment, not calloc (nor malloc and memset,
		   which the compiler turns into calloc): glibc's calloc skips
		   the thread cache and takes the arena lock */
		r = malloc(sizeof *r);
		if (!r)
			return MHD_NO;
		bool uri_ok = srv_conns_handling(conn, version);
		*r = (struct srv_req){
		    .s = s,
		    .conn = conn,
		    .url = url,
		    .method = method,
		    .http11 = !strcmp(version, MHD_HTTP_VERSION_1_1),
		    .bad_uri = !uri_ok};
		/* only writes read it (their deadline); GET and HEAD never
		   write */
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			r->start_ms = lp_mono_ms();
		atomic_store(&r->refs, 1);
		*con_cls = r;
		early_answer(s, r);
		return MHD_YES;
	}
	if (r->deferred) /* resumed: the write goes on, or is answered */
		return srv__wpool_resumed(s->wp, r) ? MHD_YES : MHD_NO;
	if (r->rev_parked) {
		/* resumed by revwait.c: run the read again, which now answers
		   at the revision reached or with kube's 504 */
		r->rev_parked = false;
		r->rev_waited = true;
		if (r->rw_by_timeout && eng_rev(s->o.e) < r->rw_rev) {
			/* WithTimeoutForNonLongRunningRequests' answer */
			srv_reply_fail(r, LP_E_TIMEOUT,
				       "Timeout: request did not complete "
				       "within the allotted timeout");
			return MHD_YES;
		}
		srv_resources_release(r->hold);
		r->hold = NULL;
		free(r->warnings);
		r->warnings = NULL;
		return run_request(s, r);
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->body_too_large || r->body_len + n > SRV_BODY_MAX) {
			r->body_too_large = true;
			return MHD_YES;
		}
		if (r->body_len + n + 1 > r->body_cap) {
			size_t cap = r->body_cap ? r->body_cap : 4096;
			while (cap < r->body_len + n + 1)
				cap *= 2;
			char *b = realloc(r->body, cap);
			if (!b)
				return MHD_NO;
			r->body = b;
			r->body_cap = cap;
		}
		memcpy(r->body + r->body_len, upload_data, n);
		r->body_len += n;
		r->body[r->body_len] = 0;
		return MHD_YES;
	}
	if (r->answered)
		return MHD_YES;
	if (!s->o.insecure && !token_ok(s, r->authorization)) {
		srv_reply_fail(r, LP_E_UNAUTHORIZED, "Unauthorized");
		return MHD_YES;
	}
	if (r->body_too_large) {
		srv_reply_fail(r, LP_E_ENTITYTOOLARGE,
			       "Request entity too large: limit is %u",
			       SRV_BODY_MAX);
		return MHD_YES;
	}
	struct srv_error err;
	srv_error_clear(&err);
	lp_err rc = srv_reqinfo_parse(method, url, query_cb, r, &r->ri, &err);
	if (rc) {
		srv_reply_error(r, &err, NULL);
		return MHD_YES;
	}
	if (!timeout_param(r))
		return MHD_YES;
	return run_request(s, r);
}

void srv__req_unref(struct srv_req *r)
{
	int old = atomic_fetch_sub(&r->refs, 1);
	LP_ASSERT(old > 0);
	if (old != 1)
		return;
	if (r->stream && r->stream_free)
		r->stream_free(r->stream);
	if (r->wresp)
		MHD_destroy_response(r->wresp);
	if (r->job.resp)
		MHD_destroy_response(r->job.resp);
	srv_reqinfo_free(&r->ri);
	srv_resources_release(r->hold);
	free(r->body);
	free(r->warnings);
	free(r->strict_shown);
	free(r->vals);
	free(r->own);
	free(r);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct srv *s = cls;
	srv_conns_idle(s->conns, conn);
	struct srv_req *r = *con_cls;
	if (!r)
		return;
	srv__wpool_completed(s->wp, r);
	if (r->rev_parked || r->rev_waited)
		srv_revwait_done(s->rw);
	/* a write that timed out may still run on its fiber, for which the
	   pool holds the other reference */
	srv__req_unref(r);
	*con_cls = NULL;
}

/* ------------------------------------------------------------ start/stop */

bool srv_listen_parse(const char *spec, struct sockaddr_storage *ss,
		      socklen_t *sl, struct srv_error *err)
{
	char host[128];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec) {
		srv_error_set(err, LP_E_INVAL, "--listen %s: want ADDR:PORT", spec);
		return false;
	}
	size_t hl = (size_t)(colon - spec);
	if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	if (hl >= sizeof host) {
		srv_error_set(err, LP_E_INVAL, "--listen: address too long");
		return false;
	}
	memcpy(host, spec, hl);
	host[hl] = 0;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 0 || p > 65535 || colon[1] == 0) {
		srv_error_set(err, LP_E_INVAL, "--listen: bad port '%s'",
			      colon + 1);
		return false;
	}
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*sl = sizeof *a4;
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*sl = sizeof *a6;
	} else {
		srv_error_set(err, LP_E_INVAL, "--listen: bad address '%s'", host);
		return false;
	}
	return true;
}

static int listen_on(const char *spec, int *port, struct srv_error *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (!srv_listen_parse(spec, &ss, &sl, err))
		return -1;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		srv_error_set(err, LP_E_IO, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 1024)) {
		srv_error_set(err, LP_E_IO, "listen on %s: %s", spec,
			      strerror(errno));
		close(fd);
		return -1;
	}
	struct sockaddr_storage got;
	socklen_t gl = sizeof got;
	getsockname(fd, (struct sockaddr *)&got, &gl);
	*port = ntohs(got.ss_family == AF_INET6
			      ? ((struct sockaddr_in6 *)&got)->sin6_port
			      : ((struct sockaddr_in *)&got)->sin_port);
	return fd;
}

/* Thousands of watchers need thousands of descriptors: raise the soft
   limit to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* libmicrohttpd's unescape of the path and of each query key and value, in
   place, but for %00: decoded, the NUL would end the C string the handlers
   read, and the request act on a shorter path or value than it named
   (namespaces/victim%00/configmaps/x, a DELETE of the namespace). It stays
   as the three characters, which no name, selector or token takes: the
   request fails on them instead (a '%' in a name is kube's 400). */
static size_t unescape_cb(void *cls, struct MHD_Connection *conn, char *val)
{
	(void)cls;
	(void)conn;
	/* the path starts with '/'; a query key or value Go's ParseQuery
	   refuses (a ';', a '%' without two hex digits) becomes one NUL
	   byte (refused_arg): its pair is dropped, as Go drops it */
	if (val[0] != '/' && strchr(val, ';')) {
		val[0] = '\0';
		return 1;
	}
	char *w = strchr(val, '%');
	if (!w) /* nothing escaped, most often */
		return strlen(val);
	if (val[0] != '/')
		for (const char *p = w; (p = strchr(p, '%')); p++)
			if (reg_hex_digit(p[1]) < 0 ||
			    reg_hex_digit(p[2]) < 0) {
				val[0] = '\0';
				return 1;
			}
	for (const char *p = w; *p;) {
		int hi, lo;
		if (p[0] == '%' && (hi = reg_hex_digit(p[1])) >= 0 &&
		    (lo = reg_hex_digit(p[2])) >= 0 && (hi | lo)) {
			*w++ = (char)(hi << 4 | lo);
			p += 3;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return (size_t)(w - val);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	size_t n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	lp_debug("http: %s", buf);
}

lp_err srv_start(const struct srv_opts *o, struct srv **out,
		 struct srv_error *err)
{
	struct srv *s = calloc(1, sizeof *s);
	if (!s)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	pthread_once(&classes_once, classes_init);
	s->o = *o;
	s->fd = -1;
	s->token = strdup(o->token ? o->token : "");
	s->cert = o->cert_pem ? strdup(o->cert_pem) : NULL;
	s->key = o->key_pem ? strdup(o->key_pem) : NULL;
	s->o.token = s->token;
	s->o.cert_pem = s->cert;
	s->o.key_pem = s->key;
	s->o.sa_key_pem = NULL; /* the signer holds the key */
	if (srv_sa_new(o->sa_key_pem, &s->sa, err))
		goto fail;
	if (!s->o.listen)
		s->o.listen = "127.0.0.1:6443";
	if (!s->o.watch_bookmark_ms)
		s->o.watch_bookmark_ms = 60000;
	raise_nofile();
	s->fd = listen_on(s->o.listen, &s->port, err);
	if (s->fd < 0)
		goto fail;
	unsigned threads = o->threads;
	if (!threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (unsigned)n : 1;
	}
	/* before the daemon: its threads read the watch state */
	if (srv_watch_init(s)) {
		srv_error_set(err, LP_E_NOMEM, "cannot start the watch ticker");
		goto fail;
	}
	unsigned req_timeout = request_timeout_s(o);
	if (srv__wpool_start(o->write_workers, (uint64_t)req_timeout * 1000,
			     &s->wp)) {
		srv_error_set(err, LP_E_NOMEM,
			      "cannot start the write workers");
		goto fail;
	}
	if (srv_revwait_start(o->e, &s->rw)) {
		srv_error_set(err, LP_E_NOMEM,
			      "cannot start the revision waiter");
		goto fail;
	}
	unsigned flags = SRV_MHD_FLAGS;
	if (!o->insecure)
		flags |= MHD_USE_TLS;
	unsigned idle = o->idle_timeout_s ? o->idle_timeout_s : 120;
	uint64_t head_ms = o->head_timeout_ms ? o->head_timeout_ms : 32000;
	if (srv_conns_start(head_ms, (uint64_t)idle * 1000, &s->conns)) {
		srv_error_set(err, LP_E_NOMEM,
			      "cannot start the request-head deadline");
		goto fail;
	}
	/* GET answers kept (respcache.c); none when asked for none, or
	   without memory for the table */
	if (o->resp_cache >= 0)
		s->kept =
		    srv_respcache_new(o->resp_cache ? (uint64_t)o->resp_cache
						    : ENG_READ_CACHE_DEFAULT);
	if (!o->insecure && (!s->cert || !s->key)) {
		srv_error_set(err, LP_E_INVAL, "TLS needs a certificate and key");
		goto fail;
	}
	/* the limits: http_daemon.h */
	if (o->insecure)
		s->d = MHD_start_daemon(
			flags, 0, NULL, NULL, access_cb, s,
			MHD_OPTION_THREAD_POOL_SIZE, threads,
			MHD_OPTION_CONNECTION_LIMIT, SRV_MHD_CONNECTION_LIMIT,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_MHD_MEMORY_LIMIT,
			MHD_OPTION_CONNECTION_TIMEOUT, idle,
			MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s,
			MHD_OPTION_NOTIFY_CONNECTION, srv_conns_notify, s->conns,
			MHD_OPTION_URI_LOG_CALLBACK, srv_conns_uri, s->conns,
			MHD_OPTION_UNESCAPE_CALLBACK, unescape_cb, NULL,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_END);
	else
		s->d = MHD_start_daemon(
			flags, 0, NULL, NULL, access_cb, s,
			MHD_OPTION_THREAD_POOL_SIZE, threads,
			MHD_OPTION_CONNECTION_LIMIT, SRV_MHD_CONNECTION_LIMIT,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_MHD_MEMORY_LIMIT,
			MHD_OPTION_CONNECTION_TIMEOUT, idle,
			MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s,
			MHD_OPTION_NOTIFY_CONNECTION, srv_conns_notify, s->conns,
			MHD_OPTION_URI_LOG_CALLBACK, srv_conns_uri, s->conns,
			MHD_OPTION_UNESCAPE_CALLBACK, unescape_cb, NULL,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
			MHD_OPTION_HTTPS_MEM_KEY, s->key,
			MHD_OPTION_HTTPS_MEM_CERT, s->cert, MHD_OPTION_END);
	if (!s->d) {
		srv_error_set(err, LP_E_IO, "cannot start the HTTP daemon");
		goto fail;
	}
	s->acc = srv_acceptor_start(s->d, s->fd);
	s->fd = -1; /* the acceptor's, or closed */
	if (!s->acc) {
		srv_error_set(err, LP_E_IO, "cannot start the accept thread: %s",
			      strerror(errno));
		goto fail;
	}
	*out = s;
	return LP_OK;
fail:
	srv_stop(s);
	return err ? err->code : LP_E_IO;
}

int srv_port(struct srv *s)
{
	return s->port;
}

void srv_stop(struct srv *s)
{
	if (!s)
		return;
	/* Stop accepting, and close the listener at once: a client that
	   connects now is refused (ECONNREFUSED), where a connection left
	   in the backlog would be reset when the daemon stops. */
	srv_acceptor_stop(s->acc);
	s->acc = NULL;
	atomic_store(&s->stopping, 1);
	/* End every watch first: a suspended connection must be resumed
	   before the daemon stops (invariant 1). */
	srv_watch_shutdown(s);
	/* Finish every write: each resumes its connection (invariant 1). */
	srv__wpool_close(s->wp);
	srv_revwait_close(s->rw); /* and every parked read */
	if (s->d)
		MHD_stop_daemon(s->d);
	srv_watch_free(s); /* after the daemon: no request reads it now */
	srv_conns_stop(s->conns); /* after the daemon: every CLOSED is in */
	if (s->kept && srv_respcache_hits(s->kept))
		lp_info("response cache: %llu GETs answered with a kept "
			"response",
			(unsigned long long)srv_respcache_hits(s->kept));
	srv_respcache_free(s->kept);
	srv__wpool_free(s->wp); /* the access handler reads it until here */
	srv_revwait_free(s->rw);
	if (s->fd >= 0)
		close(s->fd);
	free(s->token);
	free(s->cert);
	free(s->key);
	srv_sa_free(s->sa);
	free(s);
}

void srv_reply_headers(struct srv_req *r, int code, const char *ctype,
		       char *buf, size_t len, const char *const *hdrs)
{
	char *p;
	size_t pl;
	if (buf && prettify(r, ctype, buf, len, &p, &pl)) {
		free(buf);
		buf = p;
		len = pl;
	}
	struct MHD_Response *resp = buf ? body_response(r, buf, len, free, buf)
					: body_response(r, "", 0, NULL, NULL);
	const char *cache = "no-cache, private";
	for (size_t i = 0; resp && hdrs && hdrs[i]; i += 2) {
		if (!strcasecmp(hdrs[i], "Cache-Control"))
			cache = NULL;
		MHD_add_response_header(resp, hdrs[i], hdrs[i + 1]);
	}
	queue_cc(r, code, resp, ctype, cache);
}

void srv_reply_extra(struct srv_req *r, int code, const char *ctype, char *buf,
		     size_t len, const char *hname, const char *hvalue)
{
	const char *h[] = {hname, hvalue, "Vary", "Accept", NULL};
	srv_reply_headers(r, code, ctype, buf, len, hname ? h : NULL);
}
