// mallinfo2 is not imported into Swift by the Glibc module, hence this one-function shim.
#include "CHeapStatistics.h"

#if defined(__linux__)
#include <malloc.h>
#endif

#if defined(__linux__) && defined(__GLIBC__)
size_t ratelimit_heap_bytes_in_use(void) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
    // Chunks above the mmap threshold (a registry's arrays) are counted apart, in hblkhd.
    return info.uordblks + info.hblkhd;
#else
    struct mallinfo info = mallinfo();
    return (size_t)(unsigned int)info.uordblks + (size_t)(unsigned int)info.hblkhd;
#endif
}
#elif defined(__APPLE__)
#include <malloc/malloc.h>
size_t ratelimit_heap_bytes_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}
#else
size_t ratelimit_heap_bytes_in_use(void) { return 0; }
#endif
