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
 *  7. Direct delivery. Over plain HTTP/1.1 a watch's events bypass
 *     libmicrohttpd once the stream sleeps: a pusher thread writes each
 *     as one chunk ("<hex size>\r\n<bytes>\r\n") to the socket itself,
 *     with sendmsg(MSG_DONTWAIT), and the connection stays suspended: no
 *     resume, epoll re-arm, reader call and suspend per event (about 4
 *     us of the 11 us an event cost each watcher, bench-http S3). This
 *     is sound because MHD (0.9.75, connection.c try_ready_chunked_body)
 *     calls a chunked response's reader only once everything it had is
 *     on the socket, and never touches a suspended connection's socket:
 *     when the reader suspends, the socket is ours until the resume.
 *     The pusher resumes the connection for whatever it does not do
 *     itself: the stream's end (MHD writes the last chunk), a client
 *     that went (MHD closes), a socket that takes none of a chunk (MHD
 *     writes it when it can). A socket that takes part of one keeps the
 *     rest as the stream's tail, which the pusher writes when epoll says
 *     the socket takes more; the stream goes back to MHD only once it is
 *     out, and a tail stalled for the idle timeout is cut, as MHD cuts a
 *     stalled connection. Only pushers resume a direct stream (ws_wake
 *     queues it), so a pusher's writes and MHD's never overlap. Over TLS
 *     every byte goes through MHD's GnuTLS session, and an HTTP/1.0
 *     client's stream is not chunked: both keep the plain path.
 *     LAPIS_DIRECT_WATCH=0 turns it off.
 *  8. The initial state (resourceVersion unset or 0, sendInitialEvents)
 *     goes out in chunks, as a list is read (registry/store.c): the first
 *     at the snapshot the watch starts from, the rest at that revision,
 *     pinned against compaction, each read only once the one before is
 *     out (invariant 5), so a stream holds one chunk of it, not the whole
 *     collection (30 such watches of a 184 MB store held 5.5 GB before).
 *  9. sendInitialEvents from a revision the store has not reached waits
 *     for it in the stream, not in the request's handler: a watcher of
 *     every key wakes the stream at each commit, the ticker at the 3 s
 *     limit. Waiting in the handler held its libmicrohttpd thread, and
 *     every request of the connections on that thread, for up to 3 s.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crd.h"
#include "fields.h"
#include "lapis/assert.h"
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
	size_t len;  /* of bytes */
	size_t hlen; /* of the chunk head before bytes in chunk */
	char *bytes; /* the event's line */
	/* the line as one HTTP chunk ("<hex len>\r\n<line>\r\n"), which
	   a pusher writes whole (invariant 7) */
	char chunk[];
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
	/* direct delivery (invariant 7): its pusher, or NULL when MHD alone
	   writes its socket */
	struct pusher *pu;
	struct wstream *push_next; /* pu's queue, under pu->mu */
	bool push_queued;	   /* under pu->mu */
	bool in_ep;		   /* its socket is in pu's epoll set, which
				      holds a reference; under mu */
	/* the unsent rest of a chunk written directly, under mu; the
	   stream goes back to MHD only once it is out */
	char *tail;
	size_t tail_len, tail_off;
	/* when the tail began or last went out in part (ms); 0: none */
	_Atomic int64_t tail_since;
	int64_t stall_ms; /* a tail that long without progress is cut */
	/* the initial state still to send (invariant 8): read in chunks at
	   init_rev, pinned, from init_from (NULL: the prefix's start) */
	bool init;
	bool init_bookmark; /* then the initial-events-end bookmark */
	int64_t init_rev;
	eng_pin *init_pin;
	char *init_from;
	size_t init_from_len, init_from_cap;
	char *prefix; /* the watch's key prefix */
	size_t prefix_len;
	/* sendInitialEvents from a revision not reached yet (invariant 9):
	   the revision, and a watcher of every key that wakes the stream at
	   each commit until the store reaches it or wait_until passes */
	int64_t wait_rev;
	uint64_t wait_asked; /* as asked (up to 2^64-1): its 504 names it */
	_Atomic int64_t wait_until; /* ms; 0: not waiting (the ticker reads
				       it) */
	eng_watch *waitw;
};

/* A thread that writes the events of direct streams (invariant 7). */
struct pusher {
	pthread_mutex_t mu;
	struct wstream *qhead, *qtail; /* streams to look at, each once */
	bool sleeping, signaled, stop;
	int efd;  /* eventfd: wakes the thread's epoll_wait */
	int epfd; /* efd, and the sockets of streams with a tail */
	pthread_t th;
	bool started;
};

/* At most this many pushers, one per core below that. */
#define MAX_PUSHERS 4

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
	struct pusher pu[MAX_PUSHERS]; /* plain HTTP only (invariant 7) */
	unsigned npu;
	_Atomic unsigned next_pu;
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
	free(ws->tail);
	free(ws->init_from);
	free(ws->prefix);
	eng_unpin(ws->init_pin);
	eng_event_unref(ws->cur);
	pthread_mutex_destroy(&ws->mu);
	free(ws);
}

static bool push_enqueue(struct wstream *ws);

/* Wake the stream's connection if it sleeps (any thread but the reader);
   a direct stream's pusher looks at it instead (invariant 7). */
static void ws_wake(struct wstream *ws)
{
	pthread_mutex_lock(&ws->mu);
	if (!ws->closed) {
		if (ws->state == WS_SUSPENDED) {
			if (!ws->pu || !push_enqueue(ws)) {
				if (ws->tail) /* stopping: its pusher went */
					shutdown(ws->fd, SHUT_RDWR);
				ws->state = WS_RUNNING;
				srv_resume(ws->conn);
			}
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
	   in base64 under kubernetes.io/initial-events-list-blueprint (kube's
	   watchListTransformer,
	   metav1.InitialEventsListBlueprintAnnotationKey): client-go's
	   watch-list List() builds its answer on it, and without it falls back
	   to a list. Encoded as kube's JSON encoder writes the resource's empty
	   list: a typed one with its fields in order, a custom resource's
	   UnstructuredList as a Go map (keys sorted, no metadata), with a
	   newline at the end (Go's json.Encoder). */
	char ann[1024] = ""; /* the base64 of list[] and the keys */
	if (initial_end) {
		char list[512]; /* kind <= 100, gv < 300: it fits */
		int ln =
		    ws->custom && !partial
			? snprintf(list, sizeof list,
				   "{\"apiVersion\":\"%s\",\"items\":[],"
				   "\"kind\":\"%.100s\"}\n",
				   ws->gv, ws->res->list_kind)
			: snprintf(list, sizeof list,
				   "{\"kind\":\"%.100s\",\"apiVersion\":\"%s\","
				   "\"metadata\":{},\"items\":null}\n",
				   partial ? "PartialObjectMetadataList"
					   : ws->res->list_kind,
				   partial ? pgv : ws->gv);
		if (ln < 0 || (size_t)ln >= sizeof list)
			ln = 0; /* cannot happen (above); no annotation then */
		char *b64 =
		    ln ? reg_b64((const unsigned char *)list, (size_t)ln)
		       : NULL;
		snprintf(ann, sizeof ann,
			 ",\"annotations\":{\"k8s.io/"
			 "initial-events-end\":\"true\"%s%s%s}",
			 b64 ? ",\"kubernetes.io/"
			       "initial-events-list-blueprint\":\""
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
	char ch[24];
	int cl = snprintf(ch, sizeof ch, "%zx\r\n", n);
	f = malloc(sizeof *f + (size_t)cl + n + 2);
	if (!f)
		return NULL;
	memcpy(f->chunk, ch, (size_t)cl);
	f->bytes = f->chunk + cl;
	memcpy(f->bytes, head, (size_t)hl);
	memcpy(f->bytes + hl, ev->rec.value, ev->rec.value_len);
	memcpy(f->bytes + hl + ev->rec.value_len, "}\n\r\n", 4);
	f->len = n;
	f->hlen = (size_t)cl;
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

/* ------------------------------------------------------------ initial */

/* A chunk of the initial state ends once this much output is framed, or
   this many records were looked at (a selector may skip most of them). */
#define INIT_CHUNK_BYTES (256u * 1024)
#define INIT_CHUNK_RECORDS 500u

struct initial {
	struct wstream *ws;
	bool ok;
	bool stopped; /* records remain: the next chunk starts at init_from */
	size_t seen;
};

/* init_from = key, plus a NUL when the next chunk starts after it. */
static bool init_from_set(struct wstream *ws, const void *key, size_t n,
			  bool after)
{
	size_t need = n + 1;
	if (need > ws->init_from_cap) {
		char *p = realloc(ws->init_from, need);
		if (!p)
			return false;
		ws->init_from = p;
		ws->init_from_cap = need;
	}
	memcpy(ws->init_from, key, n);
	ws->init_from[n] = 0;
	ws->init_from_len = n + (after ? 1 : 0);
	return true;
}

static enum eng_take initial_cb(void *ud, const struct eng_record *rec)
{
	struct initial *in = ud;
	struct wstream *ws = in->ws;
	if (ws->len - ws->off >= INIT_CHUNK_BYTES ||
	    in->seen >= INIT_CHUNK_RECORDS) {
		in->stopped = true; /* this record starts the next chunk */
		if (!init_from_set(ws, rec->key, rec->key_len, false))
			in->ok = false;
		return ENG_STOP;
	}
	in->seen++;
	if (!init_from_set(ws, rec->key, rec->key_len, true)) {
		in->ok = false;
		return ENG_STOP;
	}
	if (ws->filtered && !matches(ws, rec->value, rec->value_len))
		return ENG_SKIP;
	if (!frame(ws, "ADDED", rec->value, rec->value_len))
		in->ok = false;
	return ENG_TAKE;
}

/* The next chunk of the initial state into ws's output (invariant 8): at
   init_rev, or for the first at the latest revision, which becomes
   init_rev. Once it is all out: the pin goes and, when asked for, the
   initial-events-end bookmark follows. */
static lp_err initial_chunk(struct wstream *ws)
{
	eng *e = srv_engine(ws->s);
	eng_rd *rd;
	lp_err rc = eng_rd_begin(e, &rd);
	if (rc)
		return rc;
	struct initial in = {.ws = ws, .ok = true};
	struct eng_range_req q = {.prefix = ws->prefix,
				  .prefix_len = ws->prefix_len,
				  .from = ws->init_from,
				  .from_len = ws->init_from_len,
				  .at_rev = ws->init_rev};
	struct eng_range_res rr;
	rc = eng_range(rd, &q, initial_cb, &in, &rr);
	eng_rd_end(rd);
	if (!rc && !in.ok)
		rc = LP_E_NOMEM;
	if (!rc && !ws->init_rev) {
		ws->init_rev = rr.rev;
		if (in.stopped && eng_pin_rev(e, rr.rev, &ws->init_pin))
			ws->init_pin =
			    NULL; /* a later chunk may find it gone */
	}
	ws->init = !rc && in.stopped;
	if (!ws->init) {
		eng_unpin(ws->init_pin);
		ws->init_pin = NULL;
		free(ws->init_from);
		ws->init_from = NULL;
		ws->init_from_len = ws->init_from_cap = 0;
		if (!rc && ws->init_bookmark)
			emit_bookmark(ws, ws->init_rev, true);
	}
	return rc;
}

/* ------------------------------------------------------------ waiting */

/* kube's cacher for a watch-list from a revision it did not reach in
   time: 200 and one ERROR event, TooLargeResourceVersionError (its cause
   and a retry after 1 s). Ends the stream. */
static void emit_too_large(struct wstream *ws, uint64_t rev, int64_t cur)
{
	struct srv_error err;
	srv_error_clear(&err);
	srv_error_cause(&err, "ResourceVersionTooLarge", "",
			"Too large resource version");
	srv_error_set(
	    &err, LP_E_FUTURE,
	    "Timeout: Too large resource version: %llu, current: %lld",
	    (unsigned long long)rev, (long long)cur);
	emit_status(ws, srv_status_failure(&err, NULL, 1));
}

/* Open the stream's watcher from rev. LP_E_COMPACTED: a 410 is framed
   and the stream ends. */
static lp_err open_changes(struct wstream *ws, int64_t rev)
{
	eng *e = srv_engine(ws->s);
	lp_err rc = eng_watch_open(e, ws->prefix, ws->prefix_len, rev, on_ready,
				   ws, &ws->w);
	if (rc == LP_E_COMPACTED) {
		char msg[128];
		snprintf(msg, sizeof msg,
			 "too old resource version: %lld (%lld)",
			 (long long)rev, (long long)eng_compacted(e));
		emit_error(ws, 410, "Expired", msg);
	}
	return rc;
}

/* Invariant 9: one look at a stream that waits for wait_rev. */
static bool wait_step(struct wstream *ws)
{
	eng *e = srv_engine(ws->s);
	int64_t cur = eng_rev(e);
	if (cur < ws->wait_rev && lp_mono_ms() < atomic_load(&ws->wait_until)) {
		/* take what woke it, so its ready callback is armed again */
		eng_event *ev;
		while (!eng_watch_next(ws->waitw, &ev))
			eng_event_unref(ev);
		if (eng_rev(e) < ws->wait_rev)
			return false;
		cur = eng_rev(e);
	}
	eng_watch_close(ws->waitw);
	ws->waitw = NULL;
	atomic_store(&ws->wait_until, 0);
	int64_t want = ws->wait_rev;
	ws->wait_rev = 0;
	if (cur < want) {
		emit_too_large(ws, ws->wait_asked, cur);
		return true;
	}
	/* reached: the state at the latest snapshot, then the changes */
	lp_err rc = initial_chunk(ws);
	if (rc) {
		ws->ended = true;
		return true;
	}
	rc = open_changes(ws, ws->init_rev);
	if (rc && rc != LP_E_COMPACTED)
		ws->ended = true;
	return true;
}

/* One step of a stream's output: end it, or take its next event or
   bookmark into its pending output. false: nothing is ready (the engine's
   ready callback is armed). Only while nothing is pending (invariant 5);
   run by the reader, or by a pusher for a direct stream that sleeps
   (invariant 7), never by both at once. */
static bool step(struct wstream *ws)
{
	if (srv_stopping(ws->s) ||
	    lp_mono_ms() >= atomic_load(&ws->deadline_ms)) {
		ws->ended = true;
		return true;
	}
	/* the CRD went, or its spec or names changed: kube tears its
	   storage down, which ends the watch; the client re-watches (and
	   sees the 404 or the new schema) */
	if (ws->res->custom &&
	    atomic_load(&srv_crd_teardowns) != ws->teardowns) {
		ws->teardowns = atomic_load(&srv_crd_teardowns);
		if (!atomic_load(&ws->end_at) && !srv_cr_current(ws->res))
			atomic_store(&ws->end_at, eng_rev(srv_engine(ws->s)));
	}
	if (ws->wait_rev) /* invariant 9 */
		return wait_step(ws);
	if (ws->init) { /* invariant 8 */
		lp_err irc = initial_chunk(ws);
		if (irc == LP_E_COMPACTED)
			emit_error(ws, 410, "Expired",
				   "The resourceVersion for the provided watch "
				   "is too old.");
		else if (irc)
			ws->ended = true;
		return true;
	}
	eng_event *ev;
	lp_err rc = eng_watch_next(ws->w, &ev);
	if (!rc) {
		if (!add_event(ws, ev))
			ws->ended = true;
		return true;
	}
	if (rc == LP_E_COMPACTED) {
		emit_error(
		    ws, 410, "Expired",
		    "The resourceVersion for the provided watch is too old.");
		return true;
	}
	if (rc != LP_E_AGAIN) {
		/* overflow, closing or failure: end cleanly; the client
		   re-watches from its last revision */
		ws->ended = true;
		return true;
	}
	/* caught up with the changes before the storage went (the objects
	   a CRD's deletion removed first): end */
	int64_t end_at = atomic_load(&ws->end_at);
	if (end_at && eng_watch_progress(ws->w) >= end_at) {
		ws->ended = true;
		return true;
	}
	if (ws->bookmarks &&
	    lp_mono_ms() >= atomic_load(&ws->next_bookmark_ms)) {
		atomic_store(&ws->next_bookmark_ms,
			     next_bookmark(ws, lp_mono_ms()));
		/* kube's bookmark carries its cache's revision, and a watcher
		   takes none older than where it started: a watch from a
		   revision not yet reached gets none */
		int64_t at = eng_watch_progress(ws->w);
		if (at <= eng_rev(srv_engine(ws->s))) {
			emit_bookmark(ws, at, false);
			return true;
		}
	}
	return false;
}

/* Invariant 5: an idle watcher holds no output buffer. */
static void drop_buf(struct wstream *ws)
{
	free(ws->buf);
	ws->buf = NULL;
	ws->cap = 0;
}

/* MHD's content reader: fills buf with what is ready, one event at a time,
   and suspends the connection when nothing is. */
static long reader(void *state, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct wstream *ws = state;
	size_t got = 0;
	/* its client went: end the stream, as kube's handler returns when
	   the request's context ends. Not MHD_CONTENT_READER_END_WITH_ERROR:
	   libmicrohttpd 0.9.75 then marks the connection closed without
	   cleaning it up (connection.c, CHUNKED_BODY_UNREADY), and its socket
	   stays open until its timeout-list walk reaches it, which an older
	   keep-alive connection on the same thread stops (120 s). Ending it,
	   the last chunk's send fails on a socket the client reset, or goes
	   out to one that only shut its side, and libmicrohttpd closes the
	   connection the usual way. */
	if (atomic_load(&ws->gone) && !srv_stopping(ws->s))
		return -1;
	for (;;) {
		got += drain(ws, buf + got, max - got);
		if (got == max || ws->off < ws->len || ws->cur)
			return (long)got; /* MHD's buffer is full */
		if (ws->ended)
			return got ? (long)got : -1;
		if (step(ws))
			continue;
		if (got)
			return (long)got; /* the next call suspends */
		drop_buf(ws);
		pthread_mutex_lock(&ws->mu);
		if (ws->wake_pending) {
			ws->wake_pending = false;
			pthread_mutex_unlock(&ws->mu);
			continue;
		}
		/* invariant 7: MHD calls a chunked stream's reader only once
		   all it had is on the socket, and it returns 0 here: from
		   now on a pusher may write to the socket */
		ws->state = WS_SUSPENDED;
		srv_suspend(ws->conn);
		pthread_mutex_unlock(&ws->mu);
		return 0;
	}
}

/* ------------------------------------------------------------ pushers */

/* Queue ws for its pusher (once: a queued stream is looked at whole).
   false: the pushers have stopped. */
static bool push_enqueue(struct wstream *ws)
{
	struct pusher *pu = ws->pu;
	bool signal = false;
	pthread_mutex_lock(&pu->mu);
	if (pu->stop) {
		pthread_mutex_unlock(&pu->mu);
		return false;
	}
	if (!ws->push_queued) {
		ws->push_queued = true;
		atomic_fetch_add(&ws->refs, 1);
		ws->push_next = NULL;
		if (pu->qtail)
			pu->qtail->push_next = ws;
		else
			pu->qhead = ws;
		pu->qtail = ws;
		if (pu->sleeping && !pu->signaled)
			signal = pu->signaled = true;
	}
	pthread_mutex_unlock(&pu->mu);
	if (signal) {
		uint64_t one = 1;
		ssize_t n = write(pu->efd, &one, sizeof one);
		(void)n; /* a full counter wakes it as well */
	}
	return true;
}

enum sent { SENT_ALL, SENT_NONE, SENT_PART, SENT_ERR };

static bool send_again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Write the stream's pending output as one chunk; what the socket does
   not take becomes its tail. SENT_NONE: nothing went, the output is
   still pending. */
static enum sent send_pending(struct wstream *ws)
{
	size_t b = ws->len - ws->off;
	size_t c = ws->cur ? ws->cur_f->len - ws->cur_off : 0;
	char head[24];
	struct iovec iov[4];
	size_t total;
	ssize_t n;
	if (!b && ws->cur && !ws->cur_off) {
		/* a shared frame whole: its chunk is ready (the head is not
		   formatted: a snprintf was half of a delivery's
		   instructions, callgrind) */
		const struct framed *f = ws->cur_f;
		total = f->hlen + f->len + 2;
		iov[0] = (struct iovec){(char *)f->chunk, total};
		iov[1] = iov[2] = iov[3] = (struct iovec){NULL, 0};
		n = send(ws->fd, f->chunk, total, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		int hl = snprintf(head, sizeof head, "%zx\r\n", b + c);
		iov[0] = (struct iovec){head, (size_t)hl};
		iov[1] = (struct iovec){ws->buf ? ws->buf + ws->off : NULL, b};
		iov[2] = (struct iovec){
		    ws->cur ? (char *)ws->cur_f->bytes + ws->cur_off : NULL, c};
		iov[3] = (struct iovec){(char *)"\r\n", 2};
		total = (size_t)hl + b + c + 2;
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 4};
		n = sendmsg(ws->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	if (n < 0)
		return send_again() ? SENT_NONE : SENT_ERR;
	enum sent r = SENT_ALL;
	if ((size_t)n < total) {
		size_t rest = total - (size_t)n, skip = (size_t)n, o = 0;
		char *t = malloc(rest);
		if (!t) {
			/* half a chunk is out: nothing else may follow */
			shutdown(ws->fd, SHUT_RDWR);
			return SENT_ERR;
		}
		for (int i = 0; i < 4; i++) {
			size_t l = iov[i].iov_len;
			if (skip >= l) {
				skip -= l;
				continue;
			}
			memcpy(t + o, (char *)iov[i].iov_base + skip, l - skip);
			o += l - skip;
			skip = 0;
		}
		ws->tail = t;
		ws->tail_len = rest;
		ws->tail_off = 0;
		r = SENT_PART;
	}
	ws->off = ws->len = 0;
	if (ws->cur) {
		eng_event_unref(ws->cur);
		ws->cur = NULL;
		ws->cur_f = NULL;
	}
	return r;
}

static enum sent flush_tail(struct wstream *ws)
{
	ssize_t n =
	    send(ws->fd, ws->tail + ws->tail_off, ws->tail_len - ws->tail_off,
		 MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return send_again() ? SENT_NONE : SENT_ERR;
	ws->tail_off += (size_t)n;
	if (ws->tail_off < ws->tail_len) {
		/* a client that reads, however slowly, is not stalled */
		if (n > 0)
			atomic_store(&ws->tail_since, lp_mono_ms());
		return SENT_PART;
	}
	free(ws->tail);
	ws->tail = NULL;
	ws->tail_len = ws->tail_off = 0;
	atomic_store(&ws->tail_since, 0);
	return SENT_ALL;
}

/* Have the pusher look at ws again once its socket takes more. */
static bool arm(struct wstream *ws)
{
	struct epoll_event ev = {.events = EPOLLOUT | EPOLLONESHOT,
				 .data.ptr = ws};
	if (ws->in_ep)
		return epoll_ctl(ws->pu->epfd, EPOLL_CTL_MOD, ws->fd, &ev) == 0;
	if (epoll_ctl(ws->pu->epfd, EPOLL_CTL_ADD, ws->fd, &ev))
		return false;
	ws->in_ep = true;
	atomic_fetch_add(&ws->refs, 1);
	return true;
}

/* The ticker looks at ws by then (its stalled tail: ws_due). */
static void ticker_due_by(struct wstream *ws, int64_t at)
{
	struct wticker *t = *srv_watch_slot(ws->s);
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	if (at < t->next_due)
		t->next_due = at;
	pthread_mutex_unlock(&t->mu);
}

/* A pusher's turn at a direct stream that sleeps: write what is ready to
   its socket as MHD would, or hand it back to MHD (resume) for anything
   else: its end, a client that went, a socket that takes nothing. */
static void deliver(struct wstream *ws)
{
	bool unref = false;
	pthread_mutex_lock(&ws->mu);
	if (ws->closed || ws->state != WS_SUSPENDED)
		goto out;
	if (ws->tail) {
		enum sent r = flush_tail(ws);
		if (r == SENT_ERR)
			goto lost;
		if (r != SENT_ALL) {
			/* a client that has read nothing of the tail for
			   this long is cut, as MHD times out a stalled
			   connection */
			if (lp_mono_ms() - atomic_load(&ws->tail_since) >=
				ws->stall_ms ||
			    !arm(ws))
				goto cut;
			goto out;
		}
	}
	for (;;) {
		if (atomic_load(&ws->gone) || ws->ended)
			goto resume;
		if (ws->off < ws->len || ws->cur) {
			enum sent r = send_pending(ws);
			if (r == SENT_NONE)
				goto resume; /* MHD writes it when it can */
			if (r == SENT_ERR)
				goto lost;
			if (r == SENT_PART) {
				int64_t now = lp_mono_ms();
				atomic_store(&ws->tail_since, now);
				if (!arm(ws))
					goto cut;
				ticker_due_by(ws, now + ws->stall_ms);
				goto out;
			}
			continue;
		}
		if (!step(ws)) {
			drop_buf(ws);
			goto out;
		}
	}
cut:
	shutdown(ws->fd, SHUT_RDWR);
lost:
	atomic_store(&ws->gone, 1);
resume:
	if (ws->in_ep) {
		epoll_ctl(ws->pu->epfd, EPOLL_CTL_DEL, ws->fd, NULL);
		ws->in_ep = false;
		unref = true;
	}
	ws->state = WS_RUNNING;
	srv_resume(ws->conn);
out:
	pthread_mutex_unlock(&ws->mu);
	if (unref)
		ws_unref(ws);
}

static void *pusher_main(void *arg)
{
	struct pusher *pu = arg;
	pthread_setname_np(pthread_self(), "watch-push");
	struct epoll_event evs[64];
	pthread_mutex_lock(&pu->mu);
	for (;;) {
		struct wstream *ws = pu->qhead;
		if (ws) {
			pu->qhead = ws->push_next;
			if (!pu->qhead)
				pu->qtail = NULL;
			ws->push_queued = false; /* a wake from now queues it */
			pthread_mutex_unlock(&pu->mu);
			deliver(ws);
			ws_unref(ws);
			pthread_mutex_lock(&pu->mu);
			continue;
		}
		if (pu->stop)
			break;
		pu->sleeping = true;
		pthread_mutex_unlock(&pu->mu);
		int n = epoll_wait(pu->epfd, evs, 64, -1);
		pthread_mutex_lock(&pu->mu);
		pu->sleeping = pu->signaled = false;
		pthread_mutex_unlock(&pu->mu);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr) { /* a tail's socket takes more */
				push_enqueue(evs[i].data.ptr);
				continue;
			}
			uint64_t v;
			ssize_t r = read(pu->efd, &v, sizeof v);
			(void)r;
		}
		pthread_mutex_lock(&pu->mu);
	}
	/* stopped: what is queued goes back to its reference holders */
	while (pu->qhead) {
		struct wstream *ws = pu->qhead;
		pu->qhead = ws->push_next;
		ws->push_queued = false;
		pthread_mutex_unlock(&pu->mu);
		ws_unref(ws);
		pthread_mutex_lock(&pu->mu);
	}
	pu->qtail = NULL;
	pthread_mutex_unlock(&pu->mu);
	return NULL;
}

/* Start the pushers when the server speaks plain HTTP (invariant 7). */
static void pushers_start(struct wticker *t)
{
	const char *env = getenv("LAPIS_DIRECT_WATCH");
	if (!srv_options(t->s)->insecure || (env && !strcmp(env, "0")))
		return;
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	/* half the cores: the kernel's loopback send also runs the
	   receiver's side on the sending core, and a pusher per core
	   contended with the clients (bench-http S3 on 2 cores: 8.0 us
	   per event with one, 9.1 with two) */
	unsigned want = nc < 4		       ? 1
			: nc / 2 > MAX_PUSHERS ? MAX_PUSHERS
					       : (unsigned)(nc / 2);
	for (unsigned i = 0; i < want; i++) {
		struct pusher *pu = &t->pu[i];
		pu->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		pu->epfd = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
		pthread_mutex_init(&pu->mu, NULL);
		if (pu->efd < 0 || pu->epfd < 0 ||
		    epoll_ctl(pu->epfd, EPOLL_CTL_ADD, pu->efd, &ev) ||
		    pthread_create(&pu->th, NULL, pusher_main, pu)) {
			if (pu->efd >= 0)
				close(pu->efd);
			if (pu->epfd >= 0)
				close(pu->epfd);
			pthread_mutex_destroy(&pu->mu);
			break; /* fewer pushers; none: MHD alone */
		}
		pu->started = true;
		t->npu = i + 1;
	}
}

/* Stop the pushers: a direct stream woken from now is resumed. */
static void pushers_stop(struct wticker *t)
{
	for (unsigned i = 0; i < t->npu; i++) {
		struct pusher *pu = &t->pu[i];
		if (!pu->started)
			continue;
		pthread_mutex_lock(&pu->mu);
		pu->stop = true;
		pthread_mutex_unlock(&pu->mu);
		uint64_t one = 1;
		ssize_t n = write(pu->efd, &one, sizeof one);
		(void)n;
		pthread_join(pu->th, NULL);
		pu->started = false;
	}
}

static void pushers_free(struct wticker *t)
{
	pushers_stop(t);
	for (unsigned i = 0; i < t->npu; i++) {
		close(t->pu[i].efd);
		close(t->pu[i].epfd);
		pthread_mutex_destroy(&t->pu[i].mu);
	}
	t->npu = 0;
}

static void stream_free(void *state)
{
	struct wstream *ws = state;
	pthread_mutex_lock(&ws->mu);
	ws->closed = true;
	pthread_mutex_unlock(&ws->mu);
	eng_watch_close(ws->w); /* no ready() after this */
	ws->w = NULL;
	eng_watch_close(ws->waitw);
	ws->waitw = NULL;
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
	int64_t ts = atomic_load(&ws->tail_since); /* a stalled tail */
	if (ts && ts + ws->stall_ms < at)
		at = ts + ws->stall_ms;
	int64_t wu = atomic_load(&ws->wait_until); /* invariant 9 */
	if (wu && wu < at)
		at = wu;
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
	pushers_start(t);
	if (pthread_create(&t->th, NULL, ticker_main, t)) {
		pushers_free(t);
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
	/* what is left is MHD's to close; a wake from now resumes */
	pushers_stop(t);
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
	pushers_free(t);
	while (t->list) {
		struct wstream *ws = t->list;
		t->list = ws->tk_next;
		/* a socket left in a pusher's epoll set (MHD closed a stream
		   that slept with a tail): its reference */
		pthread_mutex_lock(&ws->mu);
		bool in_ep = ws->in_ep;
		ws->in_ep = false;
		pthread_mutex_unlock(&ws->mu);
		if (in_ep)
			ws_unref(ws);
		ws_unref(ws);
	}
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t);
	*srv_watch_slot(s) = NULL;
}

/* ------------------------------------------------------------ start */

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
	/* invariant 7: a chunked response over plain HTTP (MHD chunks a
	   stream for HTTP/1.1 only; TLS writes through MHD's session) */
	struct wticker *tk = *srv_watch_slot(r->s);
	if (tk && tk->npu && r->http11 && !strcmp(r->method, "GET") &&
	    ws->fd >= 0)
		ws->pu = &tk->pu[atomic_fetch_add(&tk->next_pu, 1) % tk->npu];
	unsigned idle_s = srv_options(r->s)->idle_timeout_s;
	ws->stall_ms = (int64_t)(idle_s ? idle_s : 120) * 1000;
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
	bool initial = false;
	/* any zero ("00" too) is kube's ParseResourceVersion's 0: the
	   current state first */
	bool zero = !o.rv || o.rvn == 0;
	if (zero) {
		initial = true; /* state first, then changes */
	} else {
		from = o.rvn > INT64_MAX ? INT64_MAX : (int64_t)o.rvn;
		if (send_initial) {
			/* invariant 9: not reached yet, the stream waits */
			if (from > eng_rev(e)) {
				ws->wait_rev = from;
				ws->wait_asked = o.rvn;
				atomic_store(&ws->wait_until,
					     lp_mono_ms() + 3000);
			}
			initial = !ws->wait_rev;
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
	ws->prefix = malloc(prefix.len ? prefix.len : 1);
	if (!ws->prefix) {
		ws_unref(ws);
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	memcpy(ws->prefix, prefix.bytes, prefix.len);
	ws->prefix_len = prefix.len;
	/* after the initial state, now or once the wait is over */
	ws->init_bookmark = send_initial && ws->bookmarks;
	if (initial) {
		/* the first chunk now: its snapshot is where the watch starts
		   (invariant 8) */
		lp_err rc = initial_chunk(ws);
		if (rc) {
			ws_unref(ws);
			srv_reply_fail(r, rc, "Internal error occurred: %s", lp_strerror(rc));
			return;
		}
		from = ws->init_rev;
	}
	if (ws->wait_rev) {
		/* woken at each commit (invariant 9) */
		lp_err rc = eng_watch_open(e, NULL, 0, eng_rev(e), on_ready, ws,
					   &ws->waitw);
		if (rc) {
			ws_unref(ws);
			srv_reply_fail(r, rc, "Internal error occurred: %s",
				       lp_strerror(rc));
			return;
		}
	} else {
		lp_err rc = open_changes(ws, from);
		if (rc && rc != LP_E_COMPACTED) {
			ws_unref(ws);
			srv_reply_fail(r, rc, "Internal error occurred: %s",
				       lp_strerror(rc));
			return;
		}
	}
	/* register with the ticker (its own reference) */
	struct wticker *t = *srv_watch_slot(r->s);
	if (t && (ws->w || ws->waitw)) {
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
