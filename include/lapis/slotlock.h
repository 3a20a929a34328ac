/*
 * slotlock.h -- a pointer slot whose lowest bit is its lock: the cache
 * tables' slots (engine/rcache.c, server/respcache.c), held only to take a
 * reference to what the slot points at or to swap the pointer. Any thread.
 */
#ifndef LAPIS_SLOTLOCK_H
#define LAPIS_SLOTLOCK_H

#include <sched.h>
#include <stdatomic.h>
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

#endif
