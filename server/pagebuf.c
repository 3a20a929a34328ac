/*
 * pagebuf.c -- see pagebuf.h.
 *
 * Invariants:
 *  1. A buffer is one allocation, a struct blk header then the bytes; the
 *     header keeps the capacity, so a buffer comes back to the pool from
 *     libmicrohttpd's free callback with nothing but its address.
 *  2. The pool holds at most SRV_PAGEBUF_POOL buffers, none larger than
 *     SRV_PAGEBUF_KEEP_MAX: what it keeps is bounded by a few pages.
 */
#include "pagebuf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Two per core on the 2-core machines we size for: enough that pages in
   flight on both MHD threads find a buffer, few enough that an idle server
   keeps at most a few megabytes. */
#define SRV_PAGEBUF_POOL 4
/* 2 MiB: a page of 500 objects of up to 4 KiB. Larger pages are rare and
   their buffers go back to malloc. */
#define SRV_PAGEBUF_KEEP_MAX (2u * 1024 * 1024)
/* A fresh buffer's first size: small lists (most are) stay small. */
#define SRV_PAGEBUF_FIRST (16u * 1024)

struct blk {
	size_t cap; /* bytes in data */
	char data[];
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct blk *pool[SRV_PAGEBUF_POOL]; /* guarded by pool_mu */
static int n_pool;			   /* guarded by pool_mu */

static struct blk *blk_of(char *p)
{
	return (struct blk *)(void *)(p - offsetof(struct blk, data));
}

void srv_pagebuf_init(struct srv_pagebuf *b)
{
	memset(b, 0, sizeof *b);
	struct blk *k = NULL;
	pthread_mutex_lock(&pool_mu);
	if (n_pool)
		k = pool[--n_pool];
	pthread_mutex_unlock(&pool_mu);
	if (k) {
		b->p = k->data;
		b->cap = k->cap;
		b->p[0] = 0;
	}
}

bool srv_pagebuf_reserve(struct srv_pagebuf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : SRV_PAGEBUF_FIRST;
	while (cap < b->len + n + 1)
		cap *= 2;
	struct blk *k =
	    realloc(b->p ? blk_of(b->p) : NULL, sizeof(struct blk) + cap);
	if (!k) {
		b->oom = true;
		return false;
	}
	k->cap = cap;
	b->p = k->data;
	b->cap = cap;
	return true;
}

void srv_pagebuf_put(struct srv_pagebuf *b, const void *s, size_t n)
{
	if (!srv_pagebuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void *srv_pagebuf_detach(struct srv_pagebuf *b)
{
	struct blk *k = b->p ? blk_of(b->p) : NULL;
	memset(b, 0, sizeof *b);
	return k;
}

void srv_pagebuf_release(void *handle)
{
	struct blk *k = handle;
	if (!k)
		return;
	if (k->cap <= SRV_PAGEBUF_KEEP_MAX) {
		pthread_mutex_lock(&pool_mu);
		if (n_pool < SRV_PAGEBUF_POOL) {
			pool[n_pool++] = k;
			k = NULL;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	free(k);
}

void srv_pagebuf_free(struct srv_pagebuf *b)
{
	srv_pagebuf_release(srv_pagebuf_detach(b));
}
