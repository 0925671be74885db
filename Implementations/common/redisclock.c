/*
 * The wall clock of a redis-server under the conformance harness: loaded with LD_PRELOAD into
 * redis-server (and nothing else), it answers every CLOCK_REALTIME reading (clock_gettime,
 * gettimeofday, time) with the instant in the 8-byte file named by RATELIMIT_CLOCK_FILE:
 * microseconds since the Unix epoch, a signed 64-bit integer in the machine's byte order, which
 * the shim rewrites before each command it sends (redisclock.py). Redis reads its wall clock for
 * TIME, for the time a script runs at, and for every expiry (EXPIRE, PEXPIRE, SET ... PX, PTTL,
 * lazy deletion), so all of them run on the harness's instant, to Redis's own resolution.
 *
 * The monotonic clocks are left alone: Redis's event loop and timers keep running on real time,
 * and none of them decides an answer (the shim also turns active expiry off, so that a key is
 * deleted only when a command reads it, as it would be on any timeline).
 *
 * Without RATELIMIT_CLOCK_FILE, or when the file cannot be mapped, every call goes to the C
 * library unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const int64_t *simulated;
static int (*real_clock_gettime)(clockid_t, struct timespec *);

__attribute__((constructor)) static void redisclock_setup(void) {
    const char *path = getenv("RATELIMIT_CLOCK_FILE");
    if (path == NULL) return;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) simulated = (const int64_t *)mapped;
}

/* The instant as seconds and nanoseconds, rounded down (floor, also before the epoch). */
static void redisclock_now(time_t *seconds, long *nanoseconds) {
    int64_t us = __atomic_load_n(simulated, __ATOMIC_SEQ_CST);
    int64_t s = us / 1000000;
    int64_t rest = us % 1000000;
    if (rest < 0) {
        s -= 1;
        rest += 1000000;
    }
    *seconds = (time_t)s;
    *nanoseconds = (long)rest * 1000;
}

/* The C library's own clock_gettime; found on first use, since other libraries' constructors
 * (the allocator's) may read the clock before this library's constructor has run. */
static int real(clockid_t id, struct timespec *ts) {
    if (real_clock_gettime == NULL)
        real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    return real_clock_gettime(id, ts);
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (simulated != NULL && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) && ts != NULL) {
        redisclock_now(&ts->tv_sec, &ts->tv_nsec);
        return 0;
    }
    return real(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    if (simulated == NULL) {
        struct timespec ts;
        int status = real(CLOCK_REALTIME, &ts);
        if (status == 0 && tv != NULL) {
            tv->tv_sec = ts.tv_sec;
            tv->tv_usec = ts.tv_nsec / 1000;
        }
        return status;
    }
    if (tv != NULL) {
        long ns;
        redisclock_now(&tv->tv_sec, &ns);
        tv->tv_usec = ns / 1000;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
