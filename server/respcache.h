/*
 * respcache.h -- whole answers to GETs of one object, kept until the next
 * commit (respcache.c).
 */
#ifndef LAPIS_SERVER_RESPCACHE_H
#define LAPIS_SERVER_RESPCACHE_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "lapis/engine.h"

struct srv_respcache;

/* A cache of at most budget bytes of responses (0: none; NULL is then
   a cache that keeps nothing). */
struct srv_respcache *srv_respcache_new(uint64_t budget);
void srv_respcache_free(struct srv_respcache *c);

/* Queue the response kept for path on conn with status 200, if one was
   made from reads at seq (eng_read_seq) under tag (what else the answer
   depends on: the serving map's generation for a custom resource, 0 for a
   built-in). true: queued. */
bool srv_respcache_queue(struct srv_respcache *c, uint64_t seq, uint64_t tag,
			 const char *path, struct MHD_Connection *conn);

/* Keep resp as path's answer, made under tag from reads that began at seq,
   unless a commit began since (e's eng_read_seq moved) or it does not fit.
   Takes the caller's reference to resp either way. */
void srv_respcache_put(struct srv_respcache *c, eng *e, uint64_t seq,
		       uint64_t tag, const char *path,
		       struct MHD_Response *resp, size_t body_len);

/* Responses queued from the cache since it was made. */
uint64_t srv_respcache_hits(struct srv_respcache *c);

#endif
