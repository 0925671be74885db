// Processor hints Swift cannot express: a software prefetch (the registry adapters start fetching a
// key's row before they read the clock: Performance.md, "Prefetch") and the spin-wait pause of the
// lock adapter's lock (Performance.md, "Contention").
#ifndef C_PREFETCH_H
#define C_PREFETCH_H

/// Starts loading the cache line at `address` for writing, keeping it in every cache level. A hint:
/// it never faults and returns at once, and the clock read that follows it does not wait for it
/// (an ordinary load it would: the time-stamp counter read is ordered after earlier loads).
static inline __attribute__((always_inline)) void ratelimit_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/// Tells the processor that the caller spins waiting for another core (x86 `pause`, ARM `yield`):
/// the spinning core slows its loads and leaves the line to the core that holds the lock.
static inline __attribute__((always_inline)) void ratelimit_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#endif
