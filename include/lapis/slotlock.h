/*
 * slotlock.h -- a pointer slot whose lowest bit is its lock: the cache
 * tables' slots (engine/rcache.c, server/respcache.c), held only to take a
 * reference to what the slot points at or to swap the pointer; and the
 * pairs of slots both tables put their entries in. Any thread.
 */
#ifndef LAPIS_SLOTLOCK_H
#define LAPIS_SLOTLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LP_SLOT_LOCK ((uintptr_t)1)

/* Lock slot s; returns the pointer it holds (0: none). The holder's work
   is short, so the wait is too unless the holder's thread was preempted:
   then give the core away rather than spin. */
static inline uintptr_t lp_slot_lock(_Atomic uintptr_t *s)
{
	uintptr_t v = atomic_load_explicit(s, memory_order_relaxed);
	for (unsigned spins = 0;; spins++) {
		if (v & LP_SLOT_LOCK) {
			if (spins % 64 == 63)
				sched_yield();
			v = atomic_load_explicit(s, memory_order_relaxed);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(
			s, &v, v | LP_SLOT_LOCK, memory_order_acquire,
			memory_order_relaxed))
			return v;
	}
}

/* Unlock slot s, leaving pointer v in it. */
static inline void lp_slot_unlock(_Atomic uintptr_t *s, uintptr_t v)
{
	atomic_store_explicit(s, v, memory_order_release);
}

/* Pairs: a table whose key's hash h names the pair of adjacent slots at
   lp_slot_pair(h, mask) (one cache line), an entry in either. */
static inline size_t lp_slot_pair(uint64_t h, size_t mask)
{
	return (size_t)h & mask & ~(size_t)1;
}

/* The first member of every entry a pair holds: its key's hash and the
   read sequence it answers for (the tables' validity counter). */
struct lp_slot_ent {
	uint64_t hash, seq;
};

/* Which slot of the pair at b a new entry like want goes to: the one
   holding an entry of the same hash (it replaces it), else an empty one,
   else one whose entry no longer answers (another seq), else the one the
   hash's top bit names. Each slot is looked at under its lock, one at a
   time, and may change before the caller puts its entry there: a wrong
   pick costs a later miss, never a wrong answer. */
static inline size_t lp_slot_pair_pick(_Atomic uintptr_t *slot, size_t b,
				       const struct lp_slot_ent *want)
{
	enum { LIVE, STALE, FREE, SAME };
	int best = -1;
	size_t pick = b;
	for (size_t j = b; j < b + 2 && best != SAME; j++) {
		uintptr_t v = lp_slot_lock(&slot[j]);
		const struct lp_slot_ent *x = (const struct lp_slot_ent *)v;
		int k = !x			? FREE
			: x->hash == want->hash ? SAME
			: x->seq != want->seq	? STALE
						: LIVE;
		lp_slot_unlock(&slot[j], v);
		if (k > best) {
			best = k;
			pick = j;
		}
	}
	return best == LIVE ? b + (size_t)(want->hash >> 63) : pick;
}

#endif
