// Reader slots: a bit per slot in one word, claimed with a compare-and-swap at a thread's first
// request and given back by a thread-specific key's destructor when the thread exits.
#include "CReaderSlots.h"
#include "CPrefetch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

_Thread_local int ratelimit_reader_slot_of_thread = -2;

static _Atomic uint64_t claimed;
static _Atomic int in_use;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void give_back(void *value) {
    int slot = (int)(intptr_t)value - 1;
    ratelimit_reader_slot_of_thread = -2;
    atomic_fetch_and(&claimed, ~((uint64_t)1 << slot));
}

static int exit_key_made;

static void make_exit_key(void) { exit_key_made = pthread_key_create(&exit_key, give_back) == 0; }

int ratelimit_reader_slot_claim(void) {
    // A thread that found every slot taken tries again only when one is free: a load of a line
    // that changes when threads start and end.
    uint64_t bits = atomic_load_explicit(&claimed, memory_order_relaxed);
    if (bits == UINT64_MAX) {
        ratelimit_reader_slot_of_thread = -1;
        return -1;
    }
    pthread_once(&exit_key_once, make_exit_key);
    // Without the key a slot could not be given back: no slots then, every request takes the lock.
    if (!exit_key_made) {
        ratelimit_reader_slot_of_thread = -1;
        return -1;
    }
    for (;;) {
        if (bits == UINT64_MAX) {
            ratelimit_reader_slot_of_thread = -1;
            return -1;
        }
        int slot = __builtin_ctzll(~bits);
        if (atomic_compare_exchange_weak(&claimed, &bits, bits | ((uint64_t)1 << slot))) {
            int seen = atomic_load(&in_use);
            while (seen < slot + 1 && !atomic_compare_exchange_weak(&in_use, &seen, slot + 1)) {}
            pthread_setspecific(exit_key, (void *)(intptr_t)(slot + 1));
            ratelimit_reader_slot_of_thread = slot;
            return slot;
        }
    }
}

int ratelimit_reader_slots_in_use(void) { return atomic_load(&in_use); }

void ratelimit_byte_lock_contended(uint8_t *byte) {
    for (int spins = 0;; spins++) {
        if (__atomic_load_n(byte, __ATOMIC_RELAXED) == 0 && __atomic_exchange_n(byte, 1, __ATOMIC_ACQUIRE) == 0) {
            return;
        }
        // The holder may have been preempted inside its admission: let it run.
        if (spins >= 100) {
            sched_yield();
        } else {
            ratelimit_spin_pause();
        }
    }
}
