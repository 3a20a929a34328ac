/*
 * pagebuf.h -- the buffer a LIST page is built in, recycled between pages.
 *
 * A page of 500 objects of about 1 KiB is half a megabyte. Built in a fresh
 * buffer that grows by doubling, it costs a realloc copy of most of itself
 * and, whenever glibc hands back fresh pages, a page fault per 4 KiB. A
 * small pool of buffers that already hold the last page's size removes
 * both: the page is copied once, from the store into the buffer, and the
 * buffer goes back to the pool when libmicrohttpd has sent it.
 *
 * Threads: any. The pool is guarded by one mutex, held only to push or pop.
 * Memory: the pool keeps at most SRV_PAGEBUF_POOL buffers of at most
 * SRV_PAGEBUF_KEEP_MAX bytes each (pagebuf.c); larger ones are freed.
 */
#ifndef LAPIS_PAGEBUF_H
#define LAPIS_PAGEBUF_H

#include <stdbool.h>
#include <stddef.h>

/* A growing byte buffer; p[len] is always 0 once anything was put. */
struct srv_pagebuf {
	char *p;    /* the bytes; owned (from the pool or malloc) */
	size_t len; /* bytes written */
	size_t cap; /* bytes p can hold, the final 0 included */
	bool oom;   /* sticky: a put failed, the bytes are incomplete */
};

/* Start b empty, with a recycled buffer when the pool has one. */
void srv_pagebuf_init(struct srv_pagebuf *b);
/* Make room for n more bytes (and the final 0); false (b->oom) if out of
   memory. */
bool srv_pagebuf_reserve(struct srv_pagebuf *b, size_t n);
/* Append n bytes. On out of memory sets b->oom and appends nothing, now and
   on every later put. */
void srv_pagebuf_put(struct srv_pagebuf *b, const void *s, size_t n);
/* Give b's buffer back to the pool (or free it) and leave b empty. */
void srv_pagebuf_free(struct srv_pagebuf *b);
/* Take b's buffer out of b for srv_pagebuf_release: returns the handle to
   pass it (NULL if b holds nothing) and leaves b empty. b->p stays valid
   until the release. */
void *srv_pagebuf_detach(struct srv_pagebuf *b);
/* Back to the pool, from a handle of srv_pagebuf_detach (NULL ok). The
   signature of libmicrohttpd's free callbacks. */
void srv_pagebuf_release(void *handle);

#endif
