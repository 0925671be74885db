package com.google.common.util.concurrent;

import java.util.concurrent.TimeUnit;

/**
 * Every Guava finding cited by Spec/PayLater.md (PL-12) and Spec/WarmUp.md (WU-12), reproduced
 * with the library alone: Guava's own RateLimiter on a stopwatch moved by hand (its test hook,
 * RateLimiter.SleepingStopwatch, which is why this class lives in Guava's package). Nothing of the
 * library is replaced. Exits 1 naming the first finding that no longer reproduces.
 *
 *   sh Implementations/guava/findings.sh
 */
public final class GuavaFindings {
  /** The clock Guava reads, in microseconds; sleeping only moves it. */
  static final class ManualStopwatch extends RateLimiter.SleepingStopwatch {
    long micros;

    @Override
    protected long readMicros() {
      return micros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long sleep) {
      if (sleep > 0) micros += sleep;
    }
  }

  static int failures = 0;

  static void expect(boolean holds, String finding) {
    System.out.println((holds ? "reproduces: " : "NO LONGER REPRODUCES: ") + finding);
    if (!holds) failures += 1;
  }

  public static void main(String[] args) {
    // PL-12: SmoothBursty(maxBurstSeconds 1) at rate 1 after a rest of 10 s admits 2 at once
    // (maxPermits + 1: its stored permit and the one paid for later), then refuses.
    ManualStopwatch bursty = new ManualStopwatch();
    RateLimiter one = RateLimiter.create(1.0, bursty);
    bursty.micros = 10_000_000;
    boolean first = one.tryAcquire(1, 0, TimeUnit.MICROSECONDS);
    boolean second = one.tryAcquire(1, 0, TimeUnit.MICROSECONDS);
    boolean third = one.tryAcquire(1, 0, TimeUnit.MICROSECONDS);
    expect(first && second && !third, "PL-12 create(1.0), rested 10 s: tryAcquire admits 2 at one instant, the third waits");

    // PL-4: a request larger than the burst is granted at once; the next one pays for it.
    ManualStopwatch large = new ManualStopwatch();
    RateLimiter payLater = RateLimiter.create(1.0, large);
    boolean big = payLater.tryAcquire(5, 0, TimeUnit.MICROSECONDS);
    long next = payLater.queryEarliestAvailable(large.micros);
    expect(big && next == 5_000_000, "PL-4 create(1.0): tryAcquire(5) at 0 granted, the next free ticket at 5 s (got " + next + ")");

    // WU-12: SmoothWarmingUp at rate 10 with a warm-up of 1 s charges 280, 240, 200, 160, 120 ms,
    // then the stable 100 ms: the exact integer ramp of WU-4.
    ManualStopwatch cold = new ManualStopwatch();
    RateLimiter warming = RateLimiter.create(10.0, 1000, TimeUnit.MILLISECONDS, 3.0, cold);
    long[] expected = {280_000, 240_000, 200_000, 160_000, 120_000, 100_000, 100_000};
    long at = 0;
    StringBuilder costs = new StringBuilder();
    boolean ramp = true;
    for (long cost : expected) {
      cold.micros = at;
      warming.reserve(1);
      long free = warming.queryEarliestAvailable(at);
      costs.append(free - at).append(' ');
      ramp &= free - at == cost;
      at = free;
    }
    expect(ramp, "WU-12 create(10.0, 1 s): the costs from cold are 280 240 200 160 120 100 100 ms (got " + costs.toString().trim() + " us)");

    // WU-12: a warm-up period of 0 is accepted, and after the first idle stretch the limiter stops
    // limiting: coolDownIntervalMicros() is 0 / 0.0 = NaN, and so is every later cost.
    ManualStopwatch zero = new ManualStopwatch();
    RateLimiter none = RateLimiter.create(1.0, 0, TimeUnit.SECONDS, 3.0, zero);
    boolean atZero = none.tryAcquire(1, 0, TimeUnit.MICROSECONDS);
    boolean justAfter = none.tryAcquire(1, 0, TimeUnit.MICROSECONDS);
    zero.micros = 5_000_000;
    int granted = 0;
    for (int i = 0; i < 100; i++) if (none.tryAcquire(1, 0, TimeUnit.MICROSECONDS)) granted += 1;
    expect(atZero && !justAfter && granted == 100,
        "WU-12 create(1.0, 0 s): limits at first, then, after an idle stretch, grants 100 of 100 at one instant (got " + granted + ")");

    // Decision 7: acquire(0) is refused as bad input.
    boolean threw = false;
    try {
      payLater.tryAcquire(0, 0, TimeUnit.MICROSECONDS);
    } catch (IllegalArgumentException expectedException) {
      threw = true;
    }
    expect(threw, "PL-12 tryAcquire(0) throws IllegalArgumentException");

    System.exit(failures == 0 ? 0 : 1);
  }
}
