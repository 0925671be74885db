// What the lock registry's admissions in parallel need that Swift cannot express (Spec/Registry.md
// REG-13 item 5, Performance.md "Contention"): an index per live thread, for the line on which it
// says it is reading a shard, and a spin lock on one byte of a key's row, which is a Swift value.
#ifndef C_READER_SLOTS_H
#define C_READER_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

/// How many threads hold a reader slot at most; a thread beyond them has none (-1).
#define RATELIMIT_READER_SLOTS 64

/// This thread's cached slot: -2 until it first asks, -1 when every slot was taken then (it asks
/// again at each request: one load of a word that changes only as threads start and end).
extern _Thread_local int ratelimit_reader_slot_of_thread;

/// Claims a slot for this thread (given back when it exits), or -1 when all are taken.
int ratelimit_reader_slot_claim(void);

/// One more than the highest slot any thread has held: what a writer must look at. It never goes
/// down: a process that once had 64 threads has a shard's lock look at 64 slots.
int ratelimit_reader_slots_in_use(void);

/// This thread's reader slot, from 0 to `RATELIMIT_READER_SLOTS - 1`, or -1 when it has none.
static inline __attribute__((always_inline)) int ratelimit_reader_slot(void) {
    int slot = ratelimit_reader_slot_of_thread;
    return slot >= 0 ? slot : ratelimit_reader_slot_claim();
}

/// Takes the byte lock at `byte` (0 free, 1 held): an exchange, then spinning on loads. Held for
/// one admission's arithmetic, tens of nanoseconds, by a thread that waits for nobody.
void ratelimit_byte_lock_contended(uint8_t *byte);

static inline __attribute__((always_inline)) void ratelimit_byte_lock(uint8_t *byte) {
    if (__atomic_exchange_n(byte, 1, __ATOMIC_ACQUIRE) != 0) ratelimit_byte_lock_contended(byte);
}

static inline __attribute__((always_inline)) void ratelimit_byte_unlock(uint8_t *byte) {
    __atomic_store_n(byte, 0, __ATOMIC_RELEASE);
}

#endif
