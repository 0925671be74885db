// Bytes of heap in use, for the benchmark's memory measurements (ratelimit-bench only).
#ifndef C_HEAP_STATISTICS_H
#define C_HEAP_STATISTICS_H

#include <stddef.h>

/// Bytes currently allocated by malloc in this process (glibc: mallinfo2's uordblks plus hblkhd, the mmapped chunks; Darwin:
/// the default zone's size in use); 0 where the platform offers neither.
size_t ratelimit_heap_bytes_in_use(void);

#endif
