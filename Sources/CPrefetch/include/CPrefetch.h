// A software prefetch, which Swift cannot express: the registry adapters start fetching a key's row
// before they read the clock (Performance.md, "Prefetch").
#ifndef C_PREFETCH_H
#define C_PREFETCH_H

/// Starts loading the cache line at `address` for writing, keeping it in every cache level. A hint:
/// it never faults and returns at once, and the clock read that follows it does not wait for it
/// (an ordinary load it would: the time-stamp counter read is ordered after earlier loads).
static inline __attribute__((always_inline)) void ratelimit_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
