package com.google.common.util.concurrent;

import java.util.concurrent.TimeUnit;

/**
 * Every Guava finding cited by Spec/PayLater.md (PL-12) and Spec/WarmUp.md (WU-12), and every
 * finding group of the conformance matrix (README.md, "Findings"), reproduced with the library
 * alone: Guava's own RateLimiter on a stopwatch moved by hand (its test hook,
 * RateLimiter.SleepingStopwatch, which is why this class lives in Guava's package). Nothing of the
 * library is replaced and no shim code is used. Exits 1 naming each finding that no longer
 * reproduces.
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

  static boolean tryAcquire(RateLimiter limiter, int permits) {
    return limiter.tryAcquire(permits, 0, TimeUnit.MICROSECONDS);
  }

  /** The message of the IllegalArgumentException tryAcquire(permits) throws, or null. */
  static String refusal(RateLimiter limiter, int permits) {
    try {
      tryAcquire(limiter, permits);
      return null;
    } catch (IllegalArgumentException refused) {
      return refused.getMessage();
    }
  }

  public static void main(String[] args) throws ReflectiveOperationException {
    // PL-12: SmoothBursty(maxBurstSeconds 1) at rate 1 after a rest of 10 s admits 2 at once
    // (maxPermits + 1: its stored permit and the one paid for later), then refuses.
    ManualStopwatch bursty = new ManualStopwatch();
    RateLimiter one = RateLimiter.create(1.0, bursty);
    bursty.micros = 10_000_000;
    boolean first = tryAcquire(one, 1);
    boolean second = tryAcquire(one, 1);
    boolean third = tryAcquire(one, 1);
    expect(first && second && !third, "PL-12 create(1.0), rested 10 s: tryAcquire admits 2 at one instant, the third waits");

    // PL-4: a request larger than the burst is granted at once; the next one pays for it.
    ManualStopwatch large = new ManualStopwatch();
    RateLimiter payLater = RateLimiter.create(1.0, large);
    boolean big = tryAcquire(payLater, 5);
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

    // WU-12, matrix WU-5: a warm-up period of 0 is accepted, and after the first idle stretch the
    // limiter stops limiting: coolDownIntervalMicros() is 0 / 0.0 = NaN, and so is every later cost.
    ManualStopwatch zero = new ManualStopwatch();
    RateLimiter none = RateLimiter.create(1.0, 0, TimeUnit.SECONDS, 3.0, zero);
    boolean atZero = tryAcquire(none, 1);
    boolean justAfter = tryAcquire(none, 1);
    zero.micros = 5_000_000;
    int granted = 0;
    for (int i = 0; i < 100; i++) if (tryAcquire(none, 1)) granted += 1;
    expect(atZero && !justAfter && granted == 100,
        "WU-12 create(1.0, 0 s): limits at first, then, after an idle stretch, grants 100 of 100 at one instant (got " + granted + ")");
    // The matrix's smallest case: 1 per us, warm-up 0, created at 0: tryAcquire(1) at 1 us is
    // granted and leaves the next free ticket at 1 us (the Spec: 2 us, so nothing more at 1 us).
    ManualStopwatch nan = new ManualStopwatch();
    RateLimiter noWarmUp = RateLimiter.create(1e6, 0, TimeUnit.MICROSECONDS, 3.0, nan);
    nan.micros = 1;
    boolean once = tryAcquire(noWarmUp, 1);
    long afterOnce = noWarmUp.queryEarliestAvailable(1);
    expect(once && afterOnce == 1 && Double.isNaN(((SmoothRateLimiter) noWarmUp).storedPermits),
        "WU-5 create(1e6, 0 us): tryAcquire(1) at 1 us charges nothing, storedPermits NaN (next free ticket " + afterOnce + " us)");

    // Matrix CORE-9: tryAcquire(0) and tryAcquire(-1) throw the same IllegalArgumentException
    // (checkPermits: "Requested permits (n) must be positive"): no query, and a negative request
    // is refused as not positive.
    String zeroPermits = refusal(payLater, 0);
    String negativePermits = refusal(payLater, -1);
    expect("Requested permits (0) must be positive".equals(zeroPermits)
            && "Requested permits (-1) must be positive".equals(negativePermits),
        "CORE-9 tryAcquire(0) and tryAcquire(-1) throw IllegalArgumentException \"must be positive\" (got " + zeroPermits + "; " + negativePermits + ")");

    // Matrix PL-4/WU-4 liveness, CORE-7, PL-5/WU-5 remaining: permits are a Java int. Every
    // acquire takes int permits (no overload takes a long), and the largest request, 2^31 - 1, is
    // granted like any other.
    boolean intOnly = true;
    for (java.lang.reflect.Method method : RateLimiter.class.getDeclaredMethods()) {
      boolean acquires = method.getName().equals("acquire") || method.getName().equals("tryAcquire")
          || method.getName().equals("reserve");
      Class<?>[] parameters = method.getParameterTypes();
      // tryAcquire(Duration) and tryAcquire(long, TimeUnit) take a timeout, not permits.
      boolean timeoutOnly = (parameters.length == 1 && parameters[0] == java.time.Duration.class)
          || (parameters.length == 2 && parameters[0] == long.class && parameters[1] == TimeUnit.class);
      if (acquires && parameters.length > 0 && !timeoutOnly && parameters[0] != int.class) intOnly = false;
    }
    RateLimiter.class.getMethod("tryAcquire", int.class, long.class, TimeUnit.class);
    ManualStopwatch widest = new ManualStopwatch();
    RateLimiter intLimiter = RateLimiter.create(1.0, widest);
    expect(intOnly && tryAcquire(intLimiter, Integer.MAX_VALUE),
        "PL-7 every acquire, tryAcquire and reserve takes int permits; tryAcquire(2147483647) is granted");

    // Matrix PL-4/PL-6: no double rate has an interval of exactly 7 us. The nearest to 10^6 / 7,
    // 142857.14285714287, gives stableIntervalMicros 6.999999999999999, and (long) (fresh *
    // stableIntervalMicros) charges 6 us for a permit and 55 for 8 (the Spec: 7 and 56). The double
    // just below, 142857.14285714284, gives 7.000000000000001 and charges 7.
    ManualStopwatch seven = new ManualStopwatch();
    RateLimiter nearest = RateLimiter.create(1e6 / 7, seven);
    tryAcquire(nearest, 1);
    long afterOne = nearest.queryEarliestAvailable(0);
    seven.micros = afterOne;
    boolean eight = tryAcquire(nearest, 8);
    long afterEight = nearest.queryEarliestAvailable(seven.micros);
    ManualStopwatch below = new ManualStopwatch();
    RateLimiter nextDown = RateLimiter.create(Math.nextDown(1e6 / 7), below);
    tryAcquire(nextDown, 1);
    expect(((SmoothRateLimiter) nearest).stableIntervalMicros == 6.999999999999999 && afterOne == 6 && eight
            && afterEight == 61 && nextDown.queryEarliestAvailable(0) == 7,
        "PL-4 create(1e6/7): interval 6.999999999999999 us, tryAcquire(1) charged " + afterOne + " us, tryAcquire(8) "
            + (afterEight - afterOne) + " us (the Spec: 7 and 56); the double below charges 7");

    // Matrix PL-5/PL-4: an idle stretch that is not a whole interval stores a fraction of a permit
    // (resync: (now - nextFree) / stableIntervalMicros); the request that spends it pays the rest
    // as (long) (fresh * stableIntervalMicros), and 12/13 of a permit stored leaves fresh * 13 =
    // 0.9999999999999993 us, truncated to 0. The matrix case: burst 2 (maxBurstSeconds 1 / rate:
    // maxPermits 1), 1 per 13 us: tryAcquire(1) at 0 frees at 13 us, tryAcquire(1) at 25 us leaves
    // the next free ticket at 25 us where the Spec pays until 26 us, so tryAcquire(1) at 25 us is
    // granted 1 us early.
    ManualStopwatch thirteen = new ManualStopwatch();
    SmoothRateLimiter fraction = new SmoothRateLimiter.SmoothBursty(thirteen, 1 / (1e6 / 13));
    fraction.setRate(1e6 / 13);
    boolean atStart = tryAcquire(fraction, 1);
    long firstFree = fraction.queryEarliestAvailable(0);
    thirteen.micros = 25;
    boolean rested = tryAcquire(fraction, 1);
    long secondFree = fraction.queryEarliestAvailable(25);
    boolean early = tryAcquire(fraction, 1);
    expect(fraction.maxPermits == 1.0 && fraction.stableIntervalMicros == 13.0 && atStart && firstFree == 13 && rested
            && secondFree == 25 && early,
        "PL-5 SmoothBursty(maxPermits 1) at 1e6/13: granted at 0 and 25 us, next free ticket " + secondFree
            + " us (the Spec: 26), so a third tryAcquire(1) at 25 us is granted");

    // Matrix WU-4/WU-6: storedPermitsToWaitTime truncates each of its parts, (long) (take * length
    // / 2.0) above the threshold and (long) (stableIntervalMicros * permitsToTake) below it, and
    // reserveEarliestAvailable the fresh part. With 1 per 1 us and a warm-up of 9 us, a cold
    // tryAcquire(3) costs exactly 3 + 4 = 7 us (WU-4); Guava's double trapezoid is
    // 6.999999999999999, charged 6. The matrix's smallest case: 1 per 14 us (interval
    // 13.999999999999998), warm-up 1 us, cold tryAcquire(7): 97 us where WU-4 gives 98.5.
    ManualStopwatch trapezoid = new ManualStopwatch();
    RateLimiter oneMicro = RateLimiter.create(1e6, 9, TimeUnit.MICROSECONDS, 3.0, trapezoid);
    tryAcquire(oneMicro, 3);
    long threeCost = oneMicro.queryEarliestAvailable(0);
    ManualStopwatch fourteen = new ManualStopwatch();
    RateLimiter coldFourteen = RateLimiter.create(1e6 / 14, 1, TimeUnit.MICROSECONDS, 3.0, fourteen);
    tryAcquire(coldFourteen, 7);
    long sevenCost = coldFourteen.queryEarliestAvailable(0);
    expect(threeCost == 6 && sevenCost == 97,
        "WU-4 create(1e6, 9 us): a cold tryAcquire(3) costs " + threeCost + " us (the Spec: 7); create(1e6/14, 1 us): a cold tryAcquire(7) costs "
            + sevenCost + " us (the Spec: 98.5)");

    // Matrix CORE-3: what the Spec refuses and Guava accepts. An interval of 0 is a rate of
    // 1e6 / 0 = Infinity, which setRate accepts (permitsPerSecond > 0.0): every request is then
    // granted at once, in both classes. SmoothBursty's constructor checks nothing: a burst of 0
    // (maxBurstSeconds -1 us, maxPermits -1) is accepted too.
    ManualStopwatch infinite = new ManualStopwatch();
    RateLimiter unlimited = RateLimiter.create(1e6 / 0L, infinite);
    RateLimiter unlimitedWarmUp = RateLimiter.create(1e6 / 0L, 0, TimeUnit.MICROSECONDS, 3.0, infinite);
    boolean floods = tryAcquire(unlimited, Integer.MAX_VALUE) && tryAcquire(unlimited, Integer.MAX_VALUE)
        && tryAcquire(unlimitedWarmUp, Integer.MAX_VALUE) && tryAcquire(unlimitedWarmUp, Integer.MAX_VALUE);
    SmoothRateLimiter noBurst = new SmoothRateLimiter.SmoothBursty(new ManualStopwatch(), -1e-6);
    noBurst.setRate(1e6);
    expect(floods && noBurst.maxPermits == -1.0,
        "CORE-3 create(Infinity) and create(Infinity, 0 us) accepted, granting 2^31 - 1 twice at one instant; SmoothBursty(-1 us) accepted (maxPermits "
            + noBurst.maxPermits + ")");

    System.exit(failures == 0 ? 0 : 1);
  }
}
