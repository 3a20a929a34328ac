/*
 * watch.c -- watches over HTTP (reference §4): newline-delimited JSON events
 * in a chunked response, fed from the engine's watch hub. An idle watch is a
 * suspended connection and holds no thread (DESIGN.md "Server").
 *
 * Threads:
 *  - MHD pool threads run the stream reader (reader()) and completion;
 *  - the engine's writer runs ready() when a watcher may have events;
 *  - this file's ticker thread wakes watches for bookmarks, deadlines and
 *    shutdown.
 *
 * A stream's state machine (ws->mu guards it):
 *
 *   RUNNING --reader: nothing to send--> SUSPENDED  (srv_suspend)
 *   SUSPENDED --ready() or tick--> RUNNING          (srv_resume)
 *   RUNNING --ready() or tick--> RUNNING + wake_pending (reader loops again)
 *
 * Invariants:
 *  1. srv_resume is called only on a suspended connection, with ws->mu held;
 *     a suspended connection cannot complete, so completion never races a
 *     resume of the same stream.
 *  2. The ticker never holds tk_mu while it resumes: it collects due streams
 *     with a reference, drops tk_mu, then wakes them. It walks its list only
 *     when a stream may be due (next_due, never later than the earliest
 *     deadline or bookmark) or has ended (dead), not on every tick: with
 *     thousands of idle watches the walk was a cost paid four times a
 *     second.
 *  3. A stream is freed when its last reference goes: the request's (dropped
 *     at completion, after eng_watch_close) and the ticker's list entry.
 *  4. Each event is framed once for every unfiltered watcher (cached on the
 *     engine event); filtered watchers frame their own (the type may differ).
 *  6. A suspended connection is never polled by libmicrohttpd, so a client
 *     that hangs up on an idle watch would hold its socket and stream until
 *     an event, a bookmark or its deadline (kube's handler sees the
 *     request's context end at once). The ticker probes every stream's
 *     socket each PROBE_MS with one poll(2) for the peer's hang-up
 *     (POLLRDHUP, which a TLS close_notify's pending bytes do not hide);
 *     a stream whose client went is marked gone and woken, and its reader
 *     ends the response with an error, which closes the connection. Once
 *     the server stops, nothing is probed and every stream ends the
 *     ordinary way (srv_watch_shutdown), or is cut when its client has
 *     stopped reading (ws_cut).
 *  5. An unfiltered watcher copies a shared frame straight into MHD's
 *     buffer (ws->cur), never into its own: the reader takes the next event
 *     only when nothing is pending, so output stays in order. ws->buf holds
 *     what is framed per watcher (initial events, filtered events,
 *     bookmarks, errors) and is freed when the stream suspends: an idle
 *     watcher holds no output buffer.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "crd.h"
#include "fields.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "objects.h"
#include "qparse.h"
#include "registry/json.h"
#include "registry/object.h"
#include "registry/registry.h"

enum wstate { WS_RUNNING, WS_SUSPENDED };

/* The framing of an unfiltered event, shared through the event's cache. */
struct framed {
	size_t len;
	char bytes[];
};

struct wstream {
	struct srv *s;
	struct MHD_Connection *conn;
	const struct srv_resource *res;
	eng_watch *w;
	srv_lsel *lsel;
	srv_fsel *fsel;
	char *name;		/* single-object watch, or NULL */
	bool filtered;
	bool bookmarks;
	struct srv_neg neg;	/* Table / PartialObjectMetadata events */
	bool table_headers_sent;
	char kind[128], gv[300];
	_Atomic int64_t deadline_ms;	 /* read by the ticker */
	_Atomic int64_t next_bookmark_ms;
	uint64_t bookmark_ms;
	uint64_t teardowns; /* srv_crd_teardowns when last looked at */
	bool custom;	    /* res->custom, for the ticker (which may see
			       the stream after its request, and res, went) */
	/* its resource's storage went at this revision: the stream ends
	   once every change up to it is out (0: not so); the ticker wakes
	   it each tick meanwhile */
	_Atomic int64_t end_at;
	/* output not yet handed to MHD: buf's bytes first, then the shared
	   frame of cur (set only while buf is empty; invariant 5) */
	char *buf;
	size_t len, off, cap;
	eng_event *cur;		/* holds a reference */
	const struct framed *cur_f;
	size_t cur_off;
	bool ended;		/* after the buffer drains: end of stream */
	bool error_sent;
	pthread_mutex_t mu;
	enum wstate state;	/* under mu */
	bool wake_pending;	/* under mu */
	bool closed;		/* under mu: the request completed */
	_Atomic int refs;
	_Atomic int dead;	/* the ticker drops its entry */
	int fd;			/* its connection's socket (invariant 6) */
	_Atomic int gone;	/* its client hung up: end with an error */
	struct wstream *tk_next; /* ticker list, under tk_mu */
};

struct wticker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wstream *list;
	size_t n;
	int64_t next_due;	/* no stream is due before this; under mu */
	_Atomic long dead;	/* streams ended since the last walk */
	bool stop;
	struct srv *s; /* the server: no probing once it stops */
	pthread_t th;
	uint64_t teardowns; /* srv_crd_teardowns at the last walk */
};

/* now + secs seconds in milliseconds, saturating: a client's timeoutSeconds
   may be any int64, and a deadline that far away means never. */
static int64_t deadline_after(int64_t now, int64_t secs)
{
	if (secs > (INT64_MAX - now) / 1000)
		return INT64_MAX;
	return now + secs * 1000;
}

static void ws_unref(struct wstream *ws)
{
	if (atomic_fetch_sub(&ws->refs, 1) != 1)
		return;
	srv_lsel_free(ws->lsel);
	srv_fsel_free(ws->fsel);
	free(ws->name);
	free(ws->buf);
	eng_event_unref(ws->cur);
	pthread_mutex_destroy(&ws->mu);
	free(ws);
}

/* Wake the stream's connection if it sleeps (any thread but the reader). */
static void ws_wake(struct wstream *ws)
{
	pthread_mutex_lock(&ws->mu);
	if (!ws->closed) {
		if (ws->state == WS_SUSPENDED) {
			ws->state = WS_RUNNING;
			srv_resume(ws->conn);
		} else {
			ws->wake_pending = true;
		}
	}
	pthread_mutex_unlock(&ws->mu);
}

static void on_ready(void *ud)
{
	ws_wake(ud);
}

/* ------------------------------------------------------------ output */

static bool out_put(struct wstream *ws, const void *p, size_t n)
{
	if (ws->len + n > ws->cap) {
		size_t cap = ws->cap ? ws->cap : 8192;
		while (cap < ws->len + n)
			cap *= 2;
		char *b = realloc(ws->buf, cap);
		if (!b)
			return false;
		ws->buf = b;
		ws->cap = cap;
	}
	memcpy(ws->buf + ws->len, p, n);
	ws->len += n;
	return true;
}

static bool frame_raw(struct wstream *ws, const char *type, const void *obj,
		      size_t n)
{
	char head[64];
	int hl = snprintf(head, sizeof head, "{\"type\":\"%s\",\"object\":", type);
	return out_put(ws, head, (size_t)hl) && out_put(ws, obj, n) &&
	       out_put(ws, "}\n", 2);
}

static bool frame_conv(struct wstream *ws, const char *type, const void *obj,
		       size_t n);
static void emit_error(struct wstream *ws, int code, const char *reason,
		       const char *msg);

/* Frame an object, converted to the negotiated form and version; written:
   the revision its content was written at when the resourceVersion it
   carries is another (a delete's), else 0. */
static bool frame_at(struct wstream *ws, const char *type, const void *obj,
		     size_t n, int64_t written)
{
	size_t cl;
	char *conv = NULL;
	struct srv_error err;
	srv_error_clear(&err);
	if (srv_resource_convert_at(ws->res, obj, n, written, &conv, &cl,
				    &err)) {
		emit_error(ws, srv_status_code(err.code),
			   srv_status_reason(err.code), err.message);
		return true;
	}
	if (conv) {
		bool ok;
		if (ws->neg.out == SRV_OUT_PLAIN)
			ok = frame_raw(ws, type, conv, cl);
		else
			ok = frame_conv(ws, type, conv, cl);
		free(conv);
		return ok;
	}
	if (ws->neg.out == SRV_OUT_PLAIN)
		return frame_raw(ws, type, obj, n);
	return frame_conv(ws, type, obj, n);
}

static bool frame(struct wstream *ws, const char *type, const void *obj,
		  size_t n)
{
	return frame_at(ws, type, obj, n, 0);
}

static bool frame_conv(struct wstream *ws, const char *type, const void *obj,
		       size_t n)
{
	json_t *o = reg_json_load(obj, n, JSON_ALLOW_NUL, NULL);
	if (!o)
		return false;
	json_t *conv;
	if (ws->neg.out == SRV_OUT_PARTIAL) {
		conv = srv_partial(&ws->neg, o);
	} else {
		json_t *items = json_array();
		json_array_append(items, o);
		json_t *lm = json_object();
		json_object_set(lm, "resourceVersion",
				json_object_get(json_object_get(o, "metadata"),
						"resourceVersion"));
		conv = srv_table(ws->res, &ws->neg, items, lm,
				 !ws->table_headers_sent);
		ws->table_headers_sent = true;
		json_decref(items);
		json_decref(lm);
	}
	json_decref(o);
	size_t len = 0;
	char *s = conv ? reg_json_dump(conv, &len) : NULL;
	json_decref(conv);
	bool ok = s && frame_raw(ws, type, s, len);
	free(s);
	return ok;
}

/* When ws's next bookmark is due after now: kube's cacheWatcher sends one
   every bookmark interval and one 2 s before the watch's deadline, so
   that the client re-watches from a fresh revision; none once that is
   past (INT64_MAX). */
static int64_t next_bookmark(const struct wstream *ws, int64_t now)
{
	int64_t at = now + (int64_t)ws->bookmark_ms;
	int64_t pre = atomic_load(&ws->deadline_ms) - 2000;
	if (pre < at)
		at = pre;
	return at <= now ? INT64_MAX : at;
}

static void emit_bookmark(struct wstream *ws, int64_t rev, bool initial_end)
{
	char b[1536]; /* kind, gv, revision and ann below */
	/* a metadata watch gets its bookmarks as PartialObjectMetadata too
	   (kube transforms every event's object): client-go's metadata
	   client decodes nothing else */
	char pgv[32];
	bool partial = ws->neg.out == SRV_OUT_PARTIAL;
	if (partial)
		snprintf(pgv, sizeof pgv, "meta.k8s.io/%s", ws->neg.version);
	/* the initial events' end also carries the list they make, empty,
	   in base64 (kube's watchListTransformer): client-go's watch-list
	   List() builds its answer on it. Encoded as kube's JSON encoder
	   writes it: with a newline at the end (Go's json.Encoder). */
	char ann[1024] = ""; /* the base64 of list[] and the keys */
	if (initial_end) {
		char list[512]; /* kind <= 100, gv < 300: it fits */
		int ln = snprintf(list, sizeof list,
				  "{\"kind\":\"%.100s\",\"apiVersion\":\"%s\","
				  "\"metadata\":{},\"items\":%s}\n",
				  partial ? "PartialObjectMetadataList"
					  : ws->res->list_kind,
				  partial ? pgv : ws->gv,
				  ws->custom && !partial ? "[]" : "null");
		if (ln < 0 || (size_t)ln >= sizeof list)
			ln = 0; /* cannot happen (above); no annotation then */
		char *b64 =
		    ln ? reg_b64((const unsigned char *)list, (size_t)ln)
		       : NULL;
		snprintf(ann, sizeof ann,
			 ",\"annotations\":{\"k8s.io/"
			 "initial-events-end\":\"true\"%s%s%s}",
			 b64 ? ",\"k8s.io/initial-events-list-blueprint\":\""
			     : "",
			 b64 ? b64 : "", b64 ? "\"" : "");
		free(b64);
	}
	/* a typed object (a built-in, PartialObjectMetadata) encodes its
	   zero creationTimestamp as null, after resourceVersion; an
	   unstructured one has none */
	int n = snprintf(
	    b, sizeof b,
	    "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{"
	    "\"resourceVersion\":\"%lld\"%s%s}}",
	    partial ? "PartialObjectMetadata" : ws->kind,
	    partial ? pgv : ws->gv, (long long)rev,
	    partial || !ws->custom ? ",\"creationTimestamp\":null" : "", ann);
	/* a Table watch's bookmark is a Table too (kube's watch encoder
	   transforms it as any event's object), and may take the headers */
	if (ws->neg.out == SRV_OUT_TABLE)
		frame_conv(ws, "BOOKMARK", b, (size_t)n);
	else
		frame_raw(ws, "BOOKMARK", b, (size_t)n);
}

static void emit_status(struct wstream *ws, json_t *st);

static void emit_error(struct wstream *ws, int code, const char *reason,
		       const char *msg)
{
	emit_status(ws, json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind",
				  "Status", "apiVersion", "v1", "metadata",
				  "status", "Failure", "message", msg, "reason",
				  reason, "code", code));
}

/* One ERROR event holding st (taken), and the stream ends. */
static void emit_status(struct wstream *ws, json_t *st)
{
	size_t n = 0;
	char *s = st ? reg_json_dump(st, &n) : NULL;
	json_decref(st);
	if (s)
		frame_raw(ws, "ERROR", s, n);
	free(s);
	ws->ended = true;
	ws->error_sent = true;
}

static const struct framed *shared_frame(eng_event *ev)
{
	struct framed *f = eng_event_cache_get(ev);
	if (f)
		return f;
	const char *type = ev->type == ENG_EV_DEL ? "DELETED"
			   : ev->prev.value  ? "MODIFIED"
					     : "ADDED";
	char head[64];
	int hl = snprintf(head, sizeof head, "{\"type\":\"%s\",\"object\":", type);
	size_t n = (size_t)hl + ev->rec.value_len + 2;
	f = malloc(sizeof *f + n);
	if (!f)
		return NULL;
	memcpy(f->bytes, head, (size_t)hl);
	memcpy(f->bytes + hl, ev->rec.value, ev->rec.value_len);
	memcpy(f->bytes + hl + ev->rec.value_len, "}\n", 2);
	f->len = n;
	if (!eng_event_cache_set(ev, f, free)) {
		free(f);
		f = eng_event_cache_get(ev);
	}
	return f;
}

static bool matches(struct wstream *ws, const void *bytes, size_t n)
{
	if (!bytes)
		return false;
	/* a custom resource's selectable fields are read off the object as
	   served (pruned and defaulted by its current schema), as kube's
	   cacher filters decoded objects */
	char *conv = NULL;
	size_t cl;
	struct srv_error err;
	srv_error_clear(&err);
	if (ws->custom && srv_resource_needs_convert(ws->res) &&
	    srv_resource_convert(ws->res, bytes, n, &conv, &cl, &err) ==
		LP_OK &&
	    conv) {
		bytes = conv;
		n = cl;
	}
	json_t *o = reg_json_load(bytes, n, JSON_ALLOW_NUL, NULL);
	free(conv);
	if (!o)
		return false;
	bool m = srv_object_matches(ws->res, ws->lsel, ws->fsel, o);
	if (m && ws->name) {
		const char *nm = json_string_value(
			json_object_get(json_object_get(o, "metadata"), "name"));
		m = nm && !strcmp(nm, ws->name);
	}
	json_decref(o);
	return m;
}

/* A filtered watcher's event (reference §4.5): the type may differ. */
static bool add_filtered(struct wstream *ws, const eng_event *ev)
{
	bool now = ev->type == ENG_EV_PUT &&
		   matches(ws, ev->rec.value, ev->rec.value_len);
	bool before = ev->prev.value &&
		      matches(ws, ev->prev.value, ev->prev.value_len);
	if (ev->type == ENG_EV_DEL) {
		if (!before)
			return true;
		return frame_at(ws, "DELETED", ev->rec.value, ev->rec.value_len,
				ev->prev.mod_rev);
	}
	if (now && before)
		return frame(ws, "MODIFIED", ev->rec.value, ev->rec.value_len);
	if (now)
		return frame(ws, "ADDED", ev->rec.value, ev->rec.value_len);
	if (before) {
		/* stopped matching: DELETED with the old state at the new
		   revision, spliced like the engine does for deletes */
		json_t *o =
		    reg_json_load((const char *)ev->prev.value,
				  ev->prev.value_len, JSON_ALLOW_NUL, NULL);
		if (!o)
			return false;
		char rv[24];
		snprintf(rv, sizeof rv, "%lld", (long long)ev->rev);
		json_object_set_new(json_object_get(o, "metadata"),
				    "resourceVersion", json_string(rv));
		size_t n;
		char *s = reg_json_dump(o, &n);
		json_decref(o);
		bool ok = s && frame_at(ws, "DELETED", s, n, ev->prev.mod_rev);
		free(s);
		return ok;
	}
	return true;
}

/* Frame one engine event for this watcher; takes the caller's reference. */
static bool add_event(struct wstream *ws, eng_event *ev)
{
	if (!ws->filtered) {
		const struct framed *f = shared_frame(ev);
		if (!f) {
			eng_event_unref(ev);
			return false;
		}
		if (ws->len == 0) { /* invariant 5: no copy of our own */
			ws->cur = ev;
			ws->cur_f = f;
			ws->cur_off = 0;
			return true;
		}
		bool ok = out_put(ws, f->bytes, f->len);
		eng_event_unref(ev);
		return ok;
	}
	bool ok = add_filtered(ws, ev);
	eng_event_unref(ev);
	return ok;
}

/* ------------------------------------------------------------ reader */

/* Copy pending output into dst (invariant 5: buf's bytes, then the
   current shared frame); returns the bytes copied. */
static size_t drain(struct wstream *ws, char *dst, size_t max)
{
	size_t got = 0;
	if (ws->off < ws->len) {
		got = ws->len - ws->off;
		if (got > max)
			got = max;
		memcpy(dst, ws->buf + ws->off, got);
		ws->off += got;
		if (ws->off == ws->len)
			ws->off = ws->len = 0;
	}
	if (ws->cur && got < max) {
		size_t n = ws->cur_f->len - ws->cur_off;
		if (n > max - got)
			n = max - got;
		memcpy(dst + got, ws->cur_f->bytes + ws->cur_off, n);
		ws->cur_off += n;
		got += n;
		if (ws->cur_off == ws->cur_f->len) {
			eng_event_unref(ws->cur);
			ws->cur = NULL;
			ws->cur_f = NULL;
		}
	}
	return got;
}

/* MHD's content reader: fills buf with what is ready, one event at a time,
   and suspends the connection when nothing is. */
static long reader(void *state, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct wstream *ws = state;
	size_t got = 0;
	/* its client went: close (MHD_CONTENT_READER_END_WITH_ERROR); a
	   stopping server ends every stream the one way, below */
	if (atomic_load(&ws->gone) && !srv_stopping(ws->s))
		return -2;
	for (;;) {
		got += drain(ws, buf + got, max - got);
		if (got == max || ws->off < ws->len || ws->cur)
			return (long)got; /* MHD's buffer is full */
		if (ws->ended)
			return got ? (long)got : -1;
		if (srv_stopping(ws->s) ||
		    lp_mono_ms() >= atomic_load(&ws->deadline_ms)) {
			ws->ended = true;
			continue;
		}
		/* the CRD went, or its spec or names changed: kube tears its
		   storage down, which ends the watch; the client re-watches
		   (and sees the 404 or the new schema) */
		if (ws->res->custom &&
		    atomic_load(&srv_crd_teardowns) != ws->teardowns) {
			ws->teardowns = atomic_load(&srv_crd_teardowns);
			if (!atomic_load(&ws->end_at) && !srv_cr_current(ws->res))
				atomic_store(&ws->end_at, eng_rev(srv_engine(ws->s)));
		}
		eng_event *ev;
		lp_err rc = eng_watch_next(ws->w, &ev);
		if (!rc) {
			if (!add_event(ws, ev))
				ws->ended = true;
			continue;
		}
		if (rc == LP_E_COMPACTED) {
			emit_error(ws, 410, "Expired",
				   "The resourceVersion for the provided watch is too old.");
			continue;
		}
		if (rc != LP_E_AGAIN) {
			/* overflow, closing or failure: end cleanly; the
			   client re-watches from its last revision */
			ws->ended = true;
			continue;
		}
		/* caught up with the changes before the storage went (the
		   objects a CRD's deletion removed first): end */
		int64_t end_at = atomic_load(&ws->end_at);
		if (end_at && eng_watch_progress(ws->w) >= end_at) {
			ws->ended = true;
			continue;
		}
		if (ws->bookmarks &&
		    lp_mono_ms() >= atomic_load(&ws->next_bookmark_ms)) {
			atomic_store(&ws->next_bookmark_ms,
				     next_bookmark(ws, lp_mono_ms()));
			/* kube's bookmark carries its cache's revision, and a
			   watcher takes none older than where it started: a
			   watch from a revision not yet reached gets none */
			int64_t at = eng_watch_progress(ws->w);
			if (at <= eng_rev(srv_engine(ws->s))) {
				emit_bookmark(ws, at, false);
				continue;
			}
		}
		if (got)
			return (long)got; /* the next call suspends */
		/* invariant 5: an idle watcher holds no output buffer */
		free(ws->buf);
		ws->buf = NULL;
		ws->cap = 0;
		pthread_mutex_lock(&ws->mu);
		if (ws->wake_pending) {
			ws->wake_pending = false;
			pthread_mutex_unlock(&ws->mu);
			continue;
		}
		ws->state = WS_SUSPENDED;
		srv_suspend(ws->conn);
		pthread_mutex_unlock(&ws->mu);
		return 0;
	}
}

static void stream_free(void *state)
{
	struct wstream *ws = state;
	pthread_mutex_lock(&ws->mu);
	ws->closed = true;
	pthread_mutex_unlock(&ws->mu);
	eng_watch_close(ws->w); /* no ready() after this */
	ws->w = NULL;
	atomic_store(&ws->dead, 1);
	struct wticker *t = *srv_watch_slot(ws->s);
	if (t)
		atomic_fetch_add(&t->dead, 1); /* the ticker reaps it */
	ws_unref(ws);
}

/* ------------------------------------------------------------ ticker */

/* When the ticker must wake ws: its deadline or its next bookmark. */
static int64_t ws_due(struct wstream *ws)
{
	if (atomic_load(&ws->end_at))
		return 0; /* ending: looked at every tick */
	int64_t at = atomic_load(&ws->deadline_ms);
	if (ws->bookmarks) {
		int64_t bm = atomic_load(&ws->next_bookmark_ms);
		if (bm < at)
			at = bm;
	}
	return at;
}

/* How often the ticker looks for clients that hung up (invariant 6). */
#define PROBE_MS 1000

/* Invariant 6: one poll(2) over the sockets of every stream; those whose
   client hung up are marked gone and woken. Call with t->mu held; drops
   it while it polls and wakes. */
static void probe_clients(struct wticker *t)
{
	size_t n = t->n;
	struct wstream **ws = n ? malloc(n * sizeof *ws) : NULL;
	struct pollfd *pf = n ? malloc(n * sizeof *pf) : NULL;
	size_t k = 0;
	for (struct wstream *w = t->list; w && ws && pf; w = w->tk_next) {
		if (atomic_load(&w->dead) || w->fd < 0 || atomic_load(&w->gone))
			continue;
		atomic_fetch_add(&w->refs, 1);
		ws[k] = w;
		pf[k] = (struct pollfd){.fd = w->fd, .events = POLLRDHUP};
		k++;
	}
	pthread_mutex_unlock(&t->mu);
	/* a socket closed and reused meanwhile belongs to a stream that is
	   dead by then: ws_wake looks at closed under the stream's lock */
	if (k && poll(pf, k, 0) > 0) {
		for (size_t i = 0; i < k; i++) {
			if (!(pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
				continue;
			atomic_store(&ws[i]->gone, 1);
			ws_wake(ws[i]);
		}
	}
	for (size_t i = 0; i < k; i++)
		ws_unref(ws[i]);
	free(ws);
	free(pf);
	pthread_mutex_lock(&t->mu);
}

static void *ticker_main(void *arg)
{
	struct wticker *t = arg;
	int64_t next_probe = lp_mono_ms() + PROBE_MS;
	pthread_setname_np(pthread_self(), "watch-ticker");
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		/* deadlines are coarse */
		struct timespec dl = lp_mono_deadline(250);
		pthread_cond_timedwait(&t->cv, &t->mu, &dl);
		int64_t now = lp_mono_ms();
		bool reap = atomic_exchange(&t->dead, 0) != 0;
		/* a CRD's storage torn down: wake every custom resource
		   watch, which ends if its resource is not served the same */
		uint64_t td = atomic_load(&srv_crd_teardowns);
		bool torn = td != t->teardowns;
		t->teardowns = td;
		if (now >= next_probe && !srv_stopping(t->s)) {
			next_probe = now + PROBE_MS;
			probe_clients(t);
			if (t->stop)
				break;
		}
		if (now < t->next_due && !reap && !torn)
			continue;
		struct wstream **due = t->n ? malloc(t->n * sizeof *due) : NULL;
		size_t nd = 0;
		int64_t next = INT64_MAX;
		for (struct wstream **pp = &t->list; *pp;) {
			struct wstream *ws = *pp;
			if (atomic_load(&ws->dead)) {
				*pp = ws->tk_next;
				t->n--;
				ws_unref(ws);
				continue;
			}
			int64_t at = ws_due(ws);
			if (due && (now >= at || (torn && ws->custom))) {
				atomic_fetch_add(&ws->refs, 1);
				due[nd++] = ws;
			} else if (at < next) {
				next = at;
			}
			pp = &ws->tk_next;
		}
		/* a woken stream is looked at again on the next tick */
		t->next_due = nd || !due ? now : next;
		/* Invariant 2: wake without tk_mu. */
		pthread_mutex_unlock(&t->mu);
		for (size_t i = 0; i < nd; i++) {
			ws_wake(due[i]);
			ws_unref(due[i]);
		}
		free(due);
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

void srv_watch_track(eng *e, const struct srv_resource *res)
{
	struct reg_key prefix;
	if (!reg_list_prefix(srv_resource_store_group(res), res->resource, NULL,
			     &prefix))
		eng_watch_track(e, prefix.bytes, prefix.len);
}

lp_err srv_watch_init(struct srv *s)
{
	/* every built-in from the start, as kube's watch caches */
	for (size_t i = 0; i < srv_n_builtin; i++)
		if (!srv_builtin[i].review)
			srv_watch_track(srv_engine(s), &srv_builtin[i]);
	struct wticker *t = calloc(1, sizeof *t);
	if (!t)
		return LP_E_NOMEM;
	t->s = s;
	pthread_mutex_init(&t->mu, NULL);
	lp_cond_init_mono(&t->cv);
	if (pthread_create(&t->th, NULL, ticker_main, t)) {
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv);
		free(t);
		return LP_E_NOMEM;
	}
	*srv_watch_slot(s) = t;
	return LP_OK;
}

/* How long a stopping server lets streams end the ordinary way before it
   cuts the ones whose clients do not read (ws_cut). Each wake ends a
   stream within one event's write to a reading client. */
#define SHUTDOWN_CUT_MS 200

/* A stream whose client stopped reading: MHD waits for its socket to take
   more and never calls its reader again, so it cannot end the ordinary
   way. Shut its socket down (under ws->mu, before stream_free: the socket
   is still open; MHD closes it after the response goes): MHD's next read
   or write fails and it closes the connection. True if it did. */
static bool ws_cut(struct wstream *ws)
{
	bool cut = false;
	pthread_mutex_lock(&ws->mu);
	if (!ws->closed && ws->fd >= 0)
		cut = shutdown(ws->fd, SHUT_RDWR) == 0;
	pthread_mutex_unlock(&ws->mu);
	return cut;
}

void srv_watch_shutdown(struct srv *s)
{
	struct wticker *t = *srv_watch_slot(s);
	if (!t)
		return;
	/* Wake every stream until all have ended (readers see stopping);
	   after SHUTDOWN_CUT_MS, cut the ones still there. */
	size_t n_cut = 0;
	for (int i = 0; i < 500; i++) {
		bool cut = i == SHUTDOWN_CUT_MS / 10;
		pthread_mutex_lock(&t->mu);
		size_t live = 0;
		struct wstream **arr = NULL;
		for (struct wstream *ws = t->list; ws; ws = ws->tk_next)
			live += !atomic_load(&ws->dead);
		if (live)
			arr = malloc(live * sizeof *arr);
		size_t k = 0;
		for (struct wstream *ws = t->list; arr && ws; ws = ws->tk_next) {
			if (!atomic_load(&ws->dead)) {
				atomic_fetch_add(&ws->refs, 1);
				arr[k++] = ws;
			}
		}
		pthread_mutex_unlock(&t->mu);
		for (size_t j = 0; j < k; j++) {
			if (cut)
				n_cut += ws_cut(arr[j]);
			ws_wake(arr[j]);
			ws_unref(arr[j]);
		}
		free(arr);
		if (!live)
			break;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (n_cut)
		lp_info("stopping: closed %zu watch connection%s whose client "
			"did not read",
			n_cut, n_cut == 1 ? "" : "s");
}

void srv_watch_free(struct srv *s)
{
	struct wticker *t = *srv_watch_slot(s);
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	while (t->list) {
		struct wstream *ws = t->list;
		t->list = ws->tk_next;
		ws_unref(ws);
	}
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t);
	*srv_watch_slot(s) = NULL;
}

/* ------------------------------------------------------------ start */

/* Initial ADDED events: the current state at one snapshot. */
struct initial {
	struct wstream *ws;
	bool ok;
};

static enum eng_take initial_cb(void *ud, const struct eng_record *rec)
{
	struct initial *in = ud;
	struct wstream *ws = in->ws;
	if (ws->filtered && !matches(ws, rec->value, rec->value_len))
		return ENG_SKIP;
	if (!frame(ws, "ADDED", rec->value, rec->value_len))
		in->ok = false;
	return ENG_TAKE;
}

void srv_watch(struct srv_req *r, const struct srv_resource *res,
	       const char *ns, const char *name)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct list_opts o;
	if (srv_list_opts(r, res, true, &o, &err)) {
		srv_lsel_free(o.lsel);
		srv_fsel_free(o.fsel);
		srv_reply_error(r, &err,
				err.code == LP_E_INVALID ? &srv_listopts_what : NULL);
		return;
	}
	/* a name from the path and a field selector: kube's handler wants
	   the selector to ask for that very name */
	if (name && *name && !srv_fsel_empty(o.fsel)) {
		const char *sel = srv_fsel_exact(o.fsel, "metadata.name");
		if (!sel || strcmp(sel, name)) {
			srv_lsel_free(o.lsel);
			srv_fsel_free(o.fsel);
			srv_reply_fail(r, LP_E_BADREQUEST,
				       "fieldSelector metadata.name doesn't match requested name");
			return;
		}
	}
	const char *sie = srv_query(r, "sendInitialEvents");
	bool send_initial = sie && srv_query_bool(sie);
	struct wstream *ws = calloc(1, sizeof *ws);
	if (!ws) {
		srv_lsel_free(o.lsel);
		srv_fsel_free(o.fsel);
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	pthread_mutex_init(&ws->mu, NULL);
	atomic_store(&ws->refs, 1);
	ws->s = r->s;
	ws->conn = r->conn;
	ws->fd = srv_conn_fd(r->conn);
	ws->res = res;
	ws->teardowns = atomic_load(&srv_crd_teardowns);
	ws->custom = res->custom;
	ws->lsel = o.lsel;
	ws->fsel = o.fsel;
	if (name && *name)
		ws->name = strdup(name);
	ws->neg = r->neg;
	ws->filtered = !srv_lsel_empty(ws->lsel) || !srv_fsel_empty(ws->fsel) ||
		       ws->name || ws->neg.out != SRV_OUT_PLAIN ||
		       srv_resource_needs_convert(res);
	snprintf(ws->kind, sizeof ws->kind, "%s", res->kind);
	srv_resource_gv(res, ws->gv, sizeof ws->gv);
	ws->bookmarks = srv_query_bool(srv_query(r, "allowWatchBookmarks"));
	ws->bookmark_ms = srv_options(r->s)->watch_bookmark_ms;
	int64_t timeout_s = 0;
	const char *ts = srv_query(r, "timeoutSeconds");
	if (ts) {
		const char *why = srv_go_parse_int(ts, &timeout_s);
		if (why) {
			char q[80];
			srv_go_quote(ts, q, sizeof q);
			ws_unref(ws);
			srv_reply_fail(r, LP_E_BADREQUEST,
				       "strconv.ParseInt: parsing %s: %s", q, why);
			return;
		}
	}
	if (timeout_s == 0) /* kube: random in [30, 60) minutes */
		timeout_s = 1800 + rand() % 1800;
	/* a negative one: kube's timer fires at once, the watch ends */
	atomic_store(&ws->deadline_ms,
		     timeout_s < 0 ? lp_mono_ms()
				   : deadline_after(lp_mono_ms(), timeout_s));
	atomic_store(&ws->next_bookmark_ms, next_bookmark(ws, lp_mono_ms()));

	eng *e = srv_engine(r->s);
	struct reg_key prefix;
	if (reg_list_prefix(srv_resource_store_group(res), res->resource,
			    res->namespaced && ns && *ns ? ns : NULL, &prefix)) {
		ws_unref(ws);
		srv_reply_fail(r, LP_E_NOTFOUND, "not found");
		return;
	}
	int64_t from = 0;
	bool initial = false, failed = false;
	/* any zero ("00" too) is kube's ParseResourceVersion's 0: the
	   current state first */
	bool zero = !o.rv || o.rvn == 0;
	if (zero) {
		initial = true; /* state first, then changes */
	} else {
		from = o.rvn > INT64_MAX ? INT64_MAX : (int64_t)o.rvn;
		if (send_initial) {
			if (eng_wait_rev(e, from, 3000)) {
				/* kube's cacher answers with an error watcher:
				   200 and one ERROR event */
				srv_error_clear(&err);
				srv_error_cause(&err, "ResourceVersionTooLarge",
						"", "Too large resource version");
				srv_error_set(&err, LP_E_FUTURE,
					      "Timeout: Too large resource version: %lld, current: %lld",
					      (long long)from, (long long)eng_rev(e));
				/* kube's TooLargeResourceVersionError: the
				   cause and a retry after 1 s */
				emit_status(ws, srv_status_failure(&err, NULL, 1));
				failed = true;
			}
			initial = !failed;
		}
	}
	if (send_initial && !o.rv)
		initial = true;
	/* sendInitialEvents=false: no initial events, from now on (without a
	   resourceVersion, kube's cacher starts at the current revision) */
	if (sie && !send_initial && zero) {
		initial = false;
		from = eng_rev(e);
	}
	if (initial) {
		eng_rd *rd;
		lp_err rc = eng_rd_begin(e, &rd);
		if (!rc) {
			struct initial in = {.ws = ws, .ok = true};
			struct eng_range_req q = {.prefix = prefix.bytes,
						  .prefix_len = prefix.len};
			struct eng_range_res rr;
			rc = eng_range(rd, &q, initial_cb, &in, &rr);
			from = rr.rev;
			eng_rd_end(rd);
			if (!rc && !in.ok)
				rc = LP_E_NOMEM;
		}
		if (rc) {
			ws_unref(ws);
			srv_reply_fail(r, rc, "Internal error occurred: %s", lp_strerror(rc));
			return;
		}
		if (send_initial && ws->bookmarks)
			emit_bookmark(ws, from, true);
	}
	lp_err rc = failed ? LP_OK
			   : eng_watch_open(e, prefix.bytes, prefix.len, from,
					    on_ready, ws, &ws->w);
	if (rc == LP_E_COMPACTED) {
		char msg[128];
		snprintf(msg, sizeof msg, "too old resource version: %lld (%lld)",
			 (long long)from, (long long)eng_compacted(e));
		emit_error(ws, 410, "Expired", msg);
	} else if (rc) {
		ws_unref(ws);
		srv_reply_fail(r, rc, "Internal error occurred: %s", lp_strerror(rc));
		return;
	}
	/* register with the ticker (its own reference) */
	struct wticker *t = *srv_watch_slot(r->s);
	if (t && ws->w) {
		atomic_fetch_add(&ws->refs, 1);
		pthread_mutex_lock(&t->mu);
		ws->tk_next = t->list;
		t->list = ws;
		t->n++;
		int64_t at = ws_due(ws);
		if (at < t->next_due)
			t->next_due = at;
		pthread_mutex_unlock(&t->mu);
	}
	srv_reply_stream(r, "application/json", reader, ws, stream_free);
}
