/*
 * count.c -- how many keys a prefix holds, remembered per revision, so that
 * a counted range (ENG_RANGE_COUNT: a list's first page and its
 * remainingItemCount) need not walk the rest of the collection every time.
 *
 * Threads: readers look counts up and record them from their range walks
 * (read.c); the writer thread brings them forward at each commit
 * (writer.c). Everything here is under counts.mu, a leaf lock: nothing else
 * is taken while it is held.
 *
 * Invariants:
 *  1. A used slot says: at revision rev, exactly n live keys start with
 *     prefix. Nothing else is ever recorded, so a reader may use a slot
 *     whose rev equals its snapshot's revision and only such a slot.
 *  2. The writer moves a slot from the revision before a group to the
 *     revision after it only by adding every create and subtracting every
 *     delete the group made under the prefix; a slot at any other revision
 *     is dropped (it can no longer match a new snapshot). So a slot stays
 *     exact however writes and reads interleave: a reader that records a
 *     count at the group's new revision before the writer's update has the
 *     same number the update would give, and the update leaves it alone.
 *  3. Revisions only grow and every change of the live keys takes one, so a
 *     count at revision R is never wrong for a snapshot at R (a bump or a
 *     restore moves the revision without the writer's update: slots go
 *     stale, not wrong).
 */
#include <stdlib.h>
#include <string.h>

#include "eng_int.h"

void eng__counts_init(eng *e)
{
	pthread_mutex_init(&e->counts.mu, NULL);
}

void eng__counts_free(eng *e)
{
	for (int i = 0; i < ENG_COUNT_SLOTS; i++)
		free(e->counts.slot[i].prefix);
	pthread_mutex_destroy(&e->counts.mu);
}

static struct count_slot *find(struct counts *c, const uint8_t *prefix,
			       size_t len)
{
	for (int i = 0; i < ENG_COUNT_SLOTS; i++) {
		struct count_slot *s = &c->slot[i];
		if (s->prefix && s->len == len &&
		    memcmp(s->prefix, prefix, len) == 0)
			return s;
	}
	return NULL;
}

bool eng__count_get(eng *e, const uint8_t *prefix, size_t len, int64_t rev,
		    uint64_t *n)
{
	struct counts *c = &e->counts;
	bool hit = false;
	pthread_mutex_lock(&c->mu);
	struct count_slot *s = find(c, prefix, len);
	if (s && s->rev == rev) {
		*n = s->n;
		s->used = ++c->tick;
		hit = true;
	}
	pthread_mutex_unlock(&c->mu);
	return hit;
}

void eng__count_put(eng *e, const uint8_t *prefix, size_t len, int64_t rev,
		    uint64_t n)
{
	struct counts *c = &e->counts;
	pthread_mutex_lock(&c->mu);
	struct count_slot *s = find(c, prefix, len);
	if (s) {
		if (s->rev > rev) /* already newer: keep it */
			goto out;
	} else {
		/* a free slot, else the least recently used one */
		s = &c->slot[0];
		for (int i = 0; i < ENG_COUNT_SLOTS; i++) {
			if (!c->slot[i].prefix) {
				s = &c->slot[i];
				break;
			}
			if (c->slot[i].used < s->used)
				s = &c->slot[i];
		}
		uint8_t *p = malloc(len ? len : 1);
		if (!p)
			goto out; /* a count not kept costs a walk, no more */
		memcpy(p, prefix, len);
		free(s->prefix);
		s->prefix = p;
		s->len = len;
	}
	s->rev = rev;
	s->n = n;
	s->used = ++c->tick;
out:
	pthread_mutex_unlock(&c->mu);
}

bool eng__counts_begin(eng *e, int64_t from)
{
	struct counts *c = &e->counts;
	pthread_mutex_lock(&c->mu);
	bool any = false;
	for (int i = 0; i < ENG_COUNT_SLOTS; i++) {
		struct count_slot *s = &c->slot[i];
		s->moving = s->prefix && s->rev == from;
		s->delta = 0;
		any |= s->moving;
	}
	return any;
}

void eng__counts_key(eng *e, const uint8_t *key, size_t len, int delta)
{
	struct counts *c = &e->counts;
	for (int i = 0; i < ENG_COUNT_SLOTS; i++) {
		struct count_slot *s = &c->slot[i];
		if (s->moving && len >= s->len &&
		    memcmp(key, s->prefix, s->len) == 0)
			s->delta += delta;
	}
}

void eng__counts_end(eng *e, int64_t to)
{
	struct counts *c = &e->counts;
	for (int i = 0; i < ENG_COUNT_SLOTS; i++) {
		struct count_slot *s = &c->slot[i];
		if (!s->prefix || s->rev == to)
			continue; /* free, or already counted at `to` */
		if (s->moving && (int64_t)s->n + s->delta >= 0) {
			s->n = (uint64_t)((int64_t)s->n + s->delta);
			s->rev = to;
		} else {
			free(s->prefix);
			s->prefix = NULL;
		}
		s->moving = false;
	}
	pthread_mutex_unlock(&c->mu);
}
