package com.google.common.util.concurrent;

import java.util.concurrent.TimeUnit;

/**
 * Every Guava finding cited by Spec/PayLater.md (PL-12) and Spec/WarmUp.md (WU-12), and every
 * finding group of the conformance matrix (README.md, "Findings": the run of 2026-12-03, seed 1,
 * and the groups of earlier runs and of 1000 traces), reproduced with the library alone: Guava's
 * own RateLimiter on a stopwatch moved by hand (its test hook, RateLimiter.SleepingStopwatch, which
 * is why this class lives in Guava's package). Nothing of the library is replaced and no shim code
 * is used: where a matrix case needs SmoothBursty's maxBurstSeconds, the value the shim passes is
 * written out and its maxPermits checked. Exits 1 naming each finding that no longer reproduces.
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

    // WU-12, matrix WU-5 (earlier runs; 6 cases in 1000 traces of seed 1): a warm-up period of 0 is accepted, and after the first idle stretch the
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
    // Both strategies (pay-later/zero-release-invalid, warm-up/reconfigure-refused: acquire(0) at
    // 0; random-seed-1-trace-8: acquire(-1); the negative group's smallest case,
    // random-seed-1-trace-16: acquire(-2147483647), the profile's edge).
    String zeroPermits = refusal(payLater, 0);
    String negativePermits = refusal(payLater, -1);
    String edgePermits = refusal(payLater, -2147483647);
    ManualStopwatch query = new ManualStopwatch();
    RateLimiter warmQuery = RateLimiter.create(1e5, 20, TimeUnit.MICROSECONDS, 3.0, query);
    String zeroWarmUp = refusal(warmQuery, 0);
    String negativeWarmUp = refusal(warmQuery, -1);
    expect("Requested permits (0) must be positive".equals(zeroPermits)
            && "Requested permits (-1) must be positive".equals(negativePermits)
            && "Requested permits (0) must be positive".equals(zeroWarmUp)
            && "Requested permits (-1) must be positive".equals(negativeWarmUp)
            && "Requested permits (-2147483647) must be positive".equals(edgePermits),
        "CORE-9 tryAcquire(0) and tryAcquire(-1) throw IllegalArgumentException \"must be positive\", SmoothBursty and SmoothWarmingUp (got "
            + zeroPermits + "; " + negativePermits + "; " + zeroWarmUp + "; " + negativeWarmUp + "; " + edgePermits
            + ")");

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

    // Matrix PL-6 (random-seed-1-trace-29, pay-later/random-2: 1 per 7 us): no double rate has an
    // interval of exactly 7 us. The nearest to 10^6 / 7, 142857.14285714287, gives
    // stableIntervalMicros 6.999999999999999, and (long) (fresh * stableIntervalMicros) charges 6 us
    // for a permit and 55 for 8 (the Spec: 7 and 56). The double just below, 142857.14285714284,
    // gives 7.000000000000001 and charges 7.
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
        "PL-6 create(1e6/7): interval 6.999999999999999 us, tryAcquire(1) charged " + afterOne + " us, tryAcquire(8) "
            + (afterEight - afterOne) + " us (the Spec: 7 and 56); the double below charges 7");

    // Matrix PL-6 (random-seed-1-trace-47: burst 1, 1 per 65535 us): the interval is
    // 65534.99999999999, a permit is charged 65534 us, and the next request waits 65534 us (the
    // Spec: 65535).
    ManualStopwatch sixtyFive = new ManualStopwatch();
    SmoothRateLimiter wide = new SmoothRateLimiter.SmoothBursty(sixtyFive, 0.0);
    wide.setRate(1e6 / 65535);
    boolean wideFirst = tryAcquire(wide, 1);
    boolean wideSecond = tryAcquire(wide, 1);
    long wideWait = wide.queryEarliestAvailable(0);
    expect(wide.maxPermits == 0.0 && wide.stableIntervalMicros == 65534.99999999999 && wideFirst && !wideSecond
            && wideWait == 65534,
        "PL-6 SmoothBursty(maxPermits 0) at 1e6/65535: interval " + wide.stableIntervalMicros
            + " us, the second tryAcquire(1) at 0 refused with a wait of " + wideWait + " us (the Spec: 65535)");

    // Matrix PL-4 (random-seed-1-trace-18, the new over-admission: burst 1, 1 per 15 us, I = 0,
    // which the shim makes with Guava's own tryAcquire(1) at the creation instant): the interval is
    // 1e6 / (1e6 / 15) = 14.999999999999998, so that first permit is charged (long)
    // 14.999999999999998 = 14 us and the next free ticket is 14 us: tryAcquire(1) at 14 us is
    // granted where the Spec refuses it for 1 us more (rejected(1000ns)). Two permits 14 us apart
    // at 1 per 15 us: the same with the public RateLimiter.create(1e6 / 15).
    ManualStopwatch fifteen = new ManualStopwatch();
    SmoothRateLimiter oneBurst = new SmoothRateLimiter.SmoothBursty(fifteen, 0.0);
    oneBurst.setRate(1e6 / 15);
    boolean atCreation = tryAcquire(oneBurst, 1);
    long freeAfterCreation = oneBurst.queryEarliestAvailable(0);
    fifteen.micros = 14;
    boolean earlyBy1 = tryAcquire(oneBurst, 1);
    ManualStopwatch publicFifteen = new ManualStopwatch();
    RateLimiter created = RateLimiter.create(1e6 / 15, publicFifteen);
    boolean publicFirst = tryAcquire(created, 1);
    publicFifteen.micros = 14;
    boolean publicEarly = tryAcquire(created, 1);
    expect(oneBurst.maxPermits == 0.0 && oneBurst.stableIntervalMicros == 14.999999999999998 && atCreation
            && freeAfterCreation == 14 && earlyBy1 && publicFirst && publicEarly,
        "PL-4 SmoothBursty(maxPermits 0) at 1e6/15: interval " + oneBurst.stableIntervalMicros + " us, tryAcquire(1) at 0 frees at "
            + freeAfterCreation + " us, tryAcquire(1) at 14 us granted (the Spec: 1 us later); create(1e6/15) too");

    // Matrix PL-6 (its smallest case, random-seed-1-trace-14: burst 2048, 1 per 127316547 us,
    // I = 1680, created at 51 us): the shim's SmoothBursty has maxBurstSeconds 260616.971709
    // (maxPermits exactly 2047) and a stopwatch 1679 intervals ahead (I - 1 permits stored by the
    // first resync). At 127316597 us (T - 1 us after the creation) resync stores (1680 T - 1) / T =
    // 1679.9999999921456 permits; tryAcquire(2049) spends them and pays the fresh 369.0000000078544
    // permits, (long) (fresh * T) = (long) 46979805843.99999 = 46979805843 us where the Spec's debt
    // is 369 T + 1 = 46979805844 us. tryAcquire(100) at 254633144 us then waits 46852489296 us (the
    // Spec: 46852489297).
    long t14 = 127_316_547L;
    ManualStopwatch longRest = new ManualStopwatch();
    SmoothRateLimiter burst2047 = new SmoothRateLimiter.SmoothBursty(longRest, 260616.971709);
    burst2047.setRate(1e6 / t14);
    long rest = 1679 * t14 - 51;
    longRest.micros = rest + 127_316_597L;
    boolean huge = tryAcquire(burst2047, 2049);
    long hugeCost = burst2047.queryEarliestAvailable(0) - longRest.micros;
    longRest.micros = rest + 254_633_144L;
    boolean hundred = tryAcquire(burst2047, 100);
    long hundredWait = burst2047.queryEarliestAvailable(0) - longRest.micros;
    expect(burst2047.maxPermits == 2047.0 && burst2047.stableIntervalMicros == 127316547.0 && huge && hugeCost == 46979805843L
            && !hundred && hundredWait == 46852489296L,
        "PL-6 SmoothBursty(maxPermits 2047) at 1e6/127316547, rested 1680 T - 1 us: tryAcquire(2049) charged " + hugeCost
            + " us (the Spec: 46979805844), tryAcquire(100) T later waits " + hundredWait + " us (the Spec: 46852489297)");

    // Matrix PL-6 (random-seed-1-trace-43: burst 3, 1 per 12 us, I = 0; the interval is exactly
    // 12): after three at 1393 us the next free ticket is 1405 us; at 1415 us resync stores 10 / 12
    // = 0.8333333333333334 of a permit, and tryAcquire(1) pays (long) (0.16666666666666663 * 12) =
    // (long) 1.9999999999999996 = 1 us: the next free ticket 1416 us, where the Spec's is 1417, so
    // the next request waits 1 us for 2.
    ManualStopwatch twelve = new ManualStopwatch();
    SmoothRateLimiter three = new SmoothRateLimiter.SmoothBursty(twelve, 2.4e-5);
    three.setRate(1e6 / 12);
    boolean startDebt = tryAcquire(three, 1);
    twelve.micros = 1393;
    boolean burstOf3 = tryAcquire(three, 1) && tryAcquire(three, 1) && tryAcquire(three, 1);
    long afterBurst = three.queryEarliestAvailable(0);
    twelve.micros = 1415;
    boolean fractional = tryAcquire(three, 1);
    long afterFraction = three.queryEarliestAvailable(0);
    boolean refusedThen = !tryAcquire(three, 1);
    expect(three.maxPermits == 2.0 && three.stableIntervalMicros == 12.0 && startDebt && burstOf3 && afterBurst == 1405
            && fractional && afterFraction == 1416 && refusedThen,
        "PL-6 SmoothBursty(maxPermits 2) at 1e6/12: granted 3 at 1393 us and 1 at 1415 us, next free ticket " + afterFraction
            + " us (the Spec: 1417): a wait of 1 us for 2");

    // The shim's burst mapping (README.md, "Mapping"; not a finding of Guava's): for burst 2048 at 1
    // per us no maxBurstSeconds gives maxPermits 2047 exactly. The nearest, 0.002047, gives
    // 2047.0000000000002, and a rested limiter then grants 2049 at one instant (its 2048th permit
    // costs (long) 0.9999999999997726 = 0); the double below gives 2046.9999999999998 and grants
    // 2048, as the Spec does. The shim passes the one below.
    double[] burstChoices = {0.002047, Math.nextDown(0.002047)};
    int[] grantedAtOnce = new int[2];
    double[] maxPermitsOf = new double[2];
    for (int choice = 0; choice < 2; choice++) {
      ManualStopwatch restedLong = new ManualStopwatch();
      SmoothRateLimiter burst2048 = new SmoothRateLimiter.SmoothBursty(restedLong, burstChoices[choice]);
      burst2048.setRate(1e6);
      restedLong.micros = 10_000;
      while (tryAcquire(burst2048, 1)) grantedAtOnce[choice] += 1;
      maxPermitsOf[choice] = burst2048.maxPermits;
    }
    expect(maxPermitsOf[0] == 2047.0000000000002 && grantedAtOnce[0] == 2049
            && maxPermitsOf[1] == 2046.9999999999998 && grantedAtOnce[1] == 2048,
        "mapping: SmoothBursty(0.002047 s) at 1e6/s has maxPermits " + maxPermitsOf[0] + " and grants " + grantedAtOnce[0]
            + " at once; the double below, maxPermits " + maxPermitsOf[1] + ", grants " + grantedAtOnce[1] + " (burst 2048)");

    // Matrix PL-5 (seeds 2 and 4; 19 cases in 1000 traces of seed 1): an idle stretch that is not
    // a whole interval stores a fraction of a permit
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

    // Matrix WU-4 (warm-up/ramp-rounded-up, the Spec's vector at 1 per us and a warm-up of 3 us):
    // maxPermits 3, threshold 1.5, cold. tryAcquire(1) at 0 spends a permit above the threshold,
    // (long) (1 * (3.0 + 1.6666666666666665) / 2.0) = (long) 2.333333333333333 = 2 us (the Spec:
    // 2.334 us, within the tolerance). At 2 us the next permit, half above the threshold and half
    // below, is charged (long) 0.6666666666666666 + (long) 0.5 = 0 (the Spec: 1.167 us): the next
    // free ticket stays at 2 us, so Guava would admit any request there (remaining 2147483647; the
    // Spec's is 0), and a third tryAcquire(1) at 2 us is granted where the Spec admits it at
    // 3.501 us.
    ManualStopwatch threeMicros = new ManualStopwatch();
    RateLimiter roundedUp = RateLimiter.create(1e6, 3, TimeUnit.MICROSECONDS, 3.0, threeMicros);
    boolean cold0 = tryAcquire(roundedUp, 1);
    long rampFree = roundedUp.queryEarliestAvailable(0);
    threeMicros.micros = 2;
    boolean cold1 = tryAcquire(roundedUp, 1);
    long rampFreeAfter = roundedUp.queryEarliestAvailable(2);
    boolean cold2 = tryAcquire(roundedUp, 1);
    long rampThird = roundedUp.queryEarliestAvailable(2);
    boolean cold3 = tryAcquire(roundedUp, 1);
    expect(((SmoothRateLimiter) roundedUp).maxPermits == 3.0 && cold0 && rampFree == 2 && cold1 && rampFreeAfter == 2
            && cold2 && rampThird == 3 && !cold3,
        "WU-4 create(1e6, 3 us): tryAcquire(1) at 0 frees at " + rampFree + " us, the one at 2 us costs "
            + (rampFreeAfter - 2) + " us (the Spec: 1.167), so a third at 2 us is granted (the Spec: 3.501 us)");

    // Matrix WU-6, WU-4 (earlier runs; 20 and 2 cases in 1000 traces of seed 1): storedPermitsToWaitTime
    // truncates each of its parts, (long) (take * length / 2.0) above the threshold and (long) (stableIntervalMicros * permitsToTake) below it, and
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
        "WU-6 create(1e6, 9 us): a cold tryAcquire(3) costs " + threeCost + " us (the Spec: 7); create(1e6/14, 1 us): a cold tryAcquire(7) costs "
            + sevenCost + " us (the Spec: 98.5)");

    // Matrix CORE-3 (pay-later/refuse-zero-burst, refuse-zero-interval, warm-up/refuse-zero-interval):
    // what the Spec refuses and Guava accepts. An interval of 0 is a rate of
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
