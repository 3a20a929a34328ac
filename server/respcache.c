/*
 * respcache.c -- whole answers to GETs of one object, kept and queued
 * again until the next commit.
 *
 * A GET of a ConfigMap whose record the engine's read cache holds still
 * spends about 2,000 instructions making its answer: a copy of the bytes,
 * a libmicrohttpd response and its two headers (each header a calloc and
 * two strdup), and tearing them down after. libmicrohttpd lets one response
 * be queued on any number of connections (it counts references under the
 * response's own mutex and only reads a buffer response while sending
 * it), so the answer is kept, keyed by the request's path, and queued
 * again for the next GET of that path.
 *
 * A path's hash names a pair of adjacent slots (one cache line) and its
 * answer may sit in either: with one slot per path, 10,000 objects in the
 * 16,384 slots of the default budget shared slots so often that a quarter
 * of random GETs missed (paths evicting each other); with pairs, and a
 * slot per 512 bytes of budget, about one in a hundred does.
 *
 * Invariants:
 *  1. Validity is the engine's read sequence (eng_read_seq), as for the
 *     engine's read cache (engine/rcache.c): even and unchanged while no
 *     commit has begun. An entry carries the even value read before the
 *     store read its answer came from, and answers only while the
 *     sequence still has it: a commit invalidates every entry before its
 *     effect is visible to any reader.
 *  2. An entry is kept only if the sequence was even before the read and
 *     is unchanged when the entry is put into its slot, under the slot's
 *     lock: no commit ran between the read and the publication.
 *  3. Only the answers of plain GETs are kept (http.c, srv_reply_keep):
 *     status 200, the stored bytes as they are, no Warning, no query
 *     argument, no indentation. The path then names the answer, given the
 *     store and, for a custom resource, its CRD's schemas: those live in
 *     the serving map (crd.c), immutable once published, so an entry also
 *     carries the generation of the map its request's descriptor came from
 *     (its tag; 0 for a built-in, whose descriptors never change) and
 *     answers only a request whose descriptor comes from the same map.
 *  4. The slot holds the creator's reference to the response. The lowest
 *     bit of a slot's pointer is a lock, held to queue the response (which
 *     takes libmicrohttpd's reference for the connection) or to swap the
 *     entry: an entry is never freed while a reader queues it.
 *  5. Memory: answers up to RESP_BODY_MAX bytes, at most the budget in
 *     all (bodies and paths); an entry leaves the budget when displaced.
 *
 * Threads: libmicrohttpd's threads.
 */
#include "respcache.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lapis/slotlock.h"

#define RESP_SLOT_BYTES 512u /* one slot per this much budget */
#define RESP_SLOTS_MIN 256u
#define RESP_SLOTS_MAX (1u << 20)
#define RESP_BODY_MAX (16u * 1024u)
#define RESP_ENTRY_OVERHEAD 512u /* libmicrohttpd's response and headers */
#define RESP_STRIPES 8u

struct resp_ent {
	struct lp_slot_ent k; /* first (lapis/slotlock.h) */
	uint64_t tag;
	struct MHD_Response *resp;
	size_t size; /* what it counts against the budget */
	size_t path_len;
	char path[];
};

/* hit counts, one cache line per stripe: a thread counts on its own */
struct resp_stripe {
	_Alignas(64) _Atomic uint64_t hits;
};

struct srv_respcache {
	uint64_t budget;
	_Atomic uint64_t bytes;
	struct resp_stripe stripe[RESP_STRIPES];
	size_t mask;		  /* slots - 1 */
	_Atomic uintptr_t slot[]; /* struct resp_ent *; lapis/slotlock.h */
};

struct srv_respcache *srv_respcache_new(uint64_t budget)
{
	if (!budget)
		return NULL;
	size_t n = RESP_SLOTS_MIN;
	while (n < RESP_SLOTS_MAX && n < budget / RESP_SLOT_BYTES)
		n *= 2;
	struct srv_respcache *c = calloc(1, sizeof *c + n * sizeof c->slot[0]);
	if (!c)
		return NULL;
	c->budget = budget;
	c->mask = n - 1;
	return c;
}

static void ent_free(struct resp_ent *x)
{
	if (!x)
		return;
	MHD_destroy_response(x->resp);
	free(x);
}

void srv_respcache_free(struct srv_respcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i <= c->mask; i++)
		ent_free((struct resp_ent *)atomic_load(&c->slot[i]));
	free(c);
}

/* FNV-1a, 64 bits: paths are short. */
static uint64_t path_hash(const char *p, size_t *len)
{
	uint64_t h = 0xcbf29ce484222325u;
	const char *s = p;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	*len = (size_t)(s - p);
	return h;
}

/* The slot locks of lapis/slotlock.h, typed. */
static struct resp_ent *slot_lock(_Atomic uintptr_t *s)
{
	return (struct resp_ent *)lp_slot_lock(s);
}

static void slot_unlock(_Atomic uintptr_t *s, struct resp_ent *x)
{
	lp_slot_unlock(s, (uintptr_t)x);
}

static _Thread_local unsigned my_stripe = ~0u;

static void count_hit(struct srv_respcache *c)
{
	static _Atomic unsigned next_stripe;
	if (my_stripe == ~0u)
		my_stripe = atomic_fetch_add_explicit(&next_stripe, 1,
						      memory_order_relaxed) %
			    RESP_STRIPES;
	atomic_fetch_add_explicit(&c->stripe[my_stripe].hits, 1,
				  memory_order_relaxed);
}

bool srv_respcache_queue(struct srv_respcache *c, uint64_t seq, uint64_t tag,
			 const char *path, struct MHD_Connection *conn)
{
	if (!c || (seq & 1))
		return false;
	size_t len;
	uint64_t h = path_hash(path, &len);
	size_t b = lp_slot_pair(h, c->mask);
	for (size_t j = b; j < b + 2; j++) {
		_Atomic uintptr_t *s = &c->slot[j];
		/* an empty slot is seen without its lock */
		if (!atomic_load_explicit(s, memory_order_relaxed))
			continue;
		struct resp_ent *x = slot_lock(s);
		bool hit = x && x->k.seq == seq && x->tag == tag &&
			   x->k.hash == h && x->path_len == len &&
			   !memcmp(x->path, path, len);
		if (hit)
			hit = MHD_queue_response(conn, 200, x->resp) == MHD_YES;
		slot_unlock(s, x);
		if (hit) {
			count_hit(c);
			return true;
		}
	}
	return false;
}

void srv_respcache_put(struct srv_respcache *c, eng *e, uint64_t seq,
		       uint64_t tag, const char *path,
		       struct MHD_Response *resp, size_t body_len)
{
	size_t len;
	uint64_t h = path_hash(path, &len);
	size_t size =
	    sizeof(struct resp_ent) + len + 1 + body_len + RESP_ENTRY_OVERHEAD;
	struct resp_ent *x = NULL;
	if (c && !(seq & 1) && body_len <= RESP_BODY_MAX)
		x = malloc(sizeof *x + len + 1);
	if (!x) {
		MHD_destroy_response(resp);
		return;
	}
	x->k.seq = seq;
	x->tag = tag;
	x->k.hash = h;
	x->resp = resp;
	x->size = size;
	x->path_len = len;
	memcpy(x->path, path, len + 1);
	_Atomic uintptr_t *s = &c->slot[lp_slot_pair_pick(
	    c->slot, lp_slot_pair(h, c->mask), &x->k)];
	struct resp_ent *old = slot_lock(s);
	uint64_t now = eng_read_seq(e);
	size_t freed = old ? old->size : 0;
	bool fits =
	    now == seq && /* no commit began meanwhile */
	    atomic_load_explicit(&c->bytes, memory_order_relaxed) + size <=
		c->budget + freed;
	/* what the slot keeps: x; else the old entry, unless it is stale
	   (a stale entry frees its room whoever's it is) */
	struct resp_ent *keep = fits			   ? x
				: old && old->k.seq == now ? old
							   : NULL;
	slot_unlock(s, keep);
	if (keep == x)
		atomic_fetch_add_explicit(&c->bytes, size,
					  memory_order_relaxed);
	else
		ent_free(x);
	if (old && keep != old) {
		atomic_fetch_sub_explicit(&c->bytes, freed,
					  memory_order_relaxed);
		ent_free(old);
	}
}

uint64_t srv_respcache_hits(struct srv_respcache *c)
{
	uint64_t n = 0;
	if (c)
		for (unsigned i = 0; i < RESP_STRIPES; i++)
			n += atomic_load_explicit(&c->stripe[i].hits,
						  memory_order_relaxed);
	return n;
}
