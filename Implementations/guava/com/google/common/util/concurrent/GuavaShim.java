package com.google.common.util.concurrent;

import static com.google.common.util.concurrent.JsonLine.object;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.MICROSECONDS;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Guava's RateLimiter (the unmodified jar of Debian's libguava-java 31.1) over the conformance
 * protocol (Spec/protocol.md, version 2) on standard input and output: {@code pay-later} is
 * {@code SmoothBursty}, {@code warm-up} is {@code SmoothWarmingUp}. See README.md for the mapping,
 * the profile and the findings.
 *
 * <p>Only the clock is controlled: Guava reads time through its {@code SleepingStopwatch} alone,
 * which the package-private factories take (the library's test hook; that is why this class is
 * declared in Guava's package, on the classpath beside the jar). The stopwatch here reads the
 * protocol's instant, in whole microseconds since it was started, as Guava's own reads {@code
 * Stopwatch.elapsed(MICROSECONDS)}. The decision is {@code tryAcquire(n, 0, MICROSECONDS)}; a
 * refusal's wait is {@code queryEarliestAvailable(now) - now}, the instant Guava's {@code
 * canAcquire} waits for, read without changing anything.
 *
 * <pre>
 *   java -cp /usr/share/java/guava-31.1-jre.jar:Implementations/guava/.build-java \
 *       com.google.common.util.concurrent.GuavaShim
 * </pre>
 */
public final class GuavaShim {
  static final String IMPLEMENTATION = "Guava RateLimiter 31.1-jre (Debian libguava-java 31.1-1)";
  static final String PAY_LATER = "pay-later";
  static final String WARM_UP = "warm-up";
  /** Nanoseconds per microsecond: Guava's clock and the profile's time unit. */
  static final long MICRO = 1_000L;
  /** The last whole microsecond of the protocol's timeline. */
  static final long LARGEST_INSTANT = Long.MAX_VALUE / MICRO * MICRO;

  /** The profile of both strategies (Spec/protocol.md, "Profiles"; README.md says why). */
  static Map<String, Object> profile() {
    return object(
        "timeUnitNanoseconds", MICRO,
        "largestInstantNanoseconds", LARGEST_INSTANT,
        "largestPermits", (long) Integer.MAX_VALUE,
        "monotonic", true,
        "events", List.of("weighted", "query", "invalid"),
        "toleranceNanoseconds", MICRO - 1,
        "validation", true,
        "createdAtFirstEvent", false);
  }

  /**
   * The clock Guava reads: the protocol's instant as whole microseconds since the limiter's
   * creation ({@code Stopwatch.elapsed(MICROSECONDS)} truncates the same way), plus {@code
   * restMicros} when the limiter is to have been created that much earlier and left unused. Guava
   * only sleeps from {@code acquire} and from a {@code tryAcquire} whose timeout covers a wait;
   * with a timeout of 0 it never does, so a sleep is reported as an error rather than absorbed.
   */
  static final class ProtocolStopwatch extends RateLimiter.SleepingStopwatch {
    private final long createdAt;
    private long restMicros;
    long now;

    ProtocolStopwatch(long createdAt) {
      this.createdAt = createdAt;
      this.now = createdAt;
    }

    /** From now on the stopwatch reads as if started {@code micros} before the creation instant. */
    void restedBeforeCreation(long micros) {
      restMicros = micros;
    }

    @Override
    protected long readMicros() {
      return (now - createdAt) / MICRO + restMicros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      if (micros > 0) throw new IllegalStateException("Guava asked to sleep " + micros + " us");
    }
  }

  /** One limiter of the session: Guava's, and the stopwatch it reads. */
  static final class Limiter {
    final RateLimiter guava;
    final ProtocolStopwatch clock;

    Limiter(RateLimiter guava, ProtocolStopwatch clock) {
      this.guava = guava;
      this.clock = clock;
    }
  }

  /** A configuration Guava cannot represent: answered {@code unsupported} with the reason. */
  static final class Unsupported extends Exception {
    private static final long serialVersionUID = 1L;

    Unsupported(String reason) {
      super(reason);
    }
  }

  /** A configuration Guava itself refuses: answered {@code refused} naming the field. */
  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    final String field;
    final String problem;

    Refused(String field, String problem, IllegalArgumentException guava) {
      super(guava.getMessage(), guava);
      this.field = field;
      this.problem = problem;
    }
  }

  static long integer(Map<?, ?> object, String name) {
    Object value = object.get(name);
    if (!(value instanceof Long)) throw new IllegalArgumentException(name + " is not a 64-bit integer");
    return (Long) value;
  }

  /** A span of the configuration in Guava's unit. */
  static long micros(long nanoseconds, String field) throws Unsupported {
    if (nanoseconds % MICRO != 0) {
      throw new Unsupported(field + " is not a whole number of microseconds (Guava's clock)");
    }
    return nanoseconds / MICRO;
  }

  /**
   * The rate (permits per second, a double) for an interval of {@code intervalMicros}: the double
   * nearest to 10^6 / T, what a caller writes ({@code RateLimiter.create(1e6 / T)}). Guava
   * computes {@code stableIntervalMicros = 1e6 / rate}, which is T again for 85% of the T up to
   * 10^6 us; for the others (T = 7, 14, 15, 28, ...) no double rate gives exactly T (none of the
   * 64 nearest), and the interval a hair off T is Guava's, its consequences findings (README.md).
   * A T of 0 or less is passed on for Guava to judge ({@code setRate} refuses a negative rate and
   * accepts an infinite one).
   */
  static double rateFor(long intervalMicros) {
    return 1e6 / intervalMicros;
  }

  /**
   * {@code SmoothBursty}'s {@code maxBurstSeconds} for {@code maxPermits = B - 1} (Guava computes
   * {@code maxPermits = maxBurstSeconds * rate}): the double nearest to (B - 1)*T / 10^6, or,
   * when that misses, a neighbour within 8 ulps whose product with the rate is exactly B - 1 (half
   * of the misses have one). When no double gives exactly B - 1 (B = 2048 at 1 per us: 0.002047
   * gives 2047.0000000000002, the double below it 2046.9999999999998), the largest whose product is
   * below B - 1: Guava is never configured with more stored permits than the configuration's. The
   * nearest above would be a burst the configuration does not have, and Guava's truncations turn
   * its excess of 2^-42 permits into a whole one (2049 admitted at one instant for B = 2048): an
   * over-admission made by this mapping, not by Guava. The public {@code create(rate)} fixes
   * maxBurstSeconds at 1 s ({@code B = rate + 1}): the package-private constructor takes any value.
   */
  static double maxBurstSecondsFor(long storedPermits, long intervalMicros, double rate) {
    double nearest =
        new BigDecimal(storedPermits).multiply(new BigDecimal(intervalMicros)).movePointLeft(6).doubleValue();
    double target = storedPermits;
    double up = nearest;
    double down = nearest;
    for (int step = 0; step <= 8; step++) {
      if (up * rate == target) return up;
      if (down * rate == target) return down;
      up = Math.nextUp(up);
      down = Math.nextDown(down);
    }
    double below = nearest;
    while (below * rate > target) below = Math.nextDown(below);
    while (Math.nextUp(below) * rate < target) below = Math.nextUp(below);
    return below;
  }

  /**
   * Guava's own validation of what it is given: its public factories ({@code create(rate)}, {@code
   * create(rate, warmupPeriod, unit)}), which check what the package-private ones used below do
   * not ({@code warmupPeriod >= 0}), run on a limiter that is then dropped. Their {@code
   * IllegalArgumentException} names the field.
   */
  static void validate(double rate, Long warmUpMicros) throws Refused {
    try {
      if (warmUpMicros == null) {
        RateLimiter.create(rate);
      } else {
        RateLimiter.create(rate, warmUpMicros, MICROSECONDS);
      }
    } catch (IllegalArgumentException guava) {
      String message = String.valueOf(guava.getMessage());
      if (message.startsWith("rate must be positive")) {
        throw new Refused("emissionIntervalNanoseconds", "mustBePositive", guava);
      }
      if (message.startsWith("warmupPeriod must not be negative")) {
        throw new Refused("warmUpPeriodNanoseconds", "mustNotBeNegative", guava);
      }
      throw guava;
    }
  }

  /**
   * {@code pay-later (B, T, I)}: {@code SmoothBursty} with {@code maxBurstSeconds} for {@code
   * maxPermits = B - 1} (the stored permits; the request paid later is the B-th) at {@code rate =
   * 10^6 / T} per second. A new SmoothBursty stores nothing ({@code I = 1}); {@code I >= 2} is
   * reached by creating it {@code (I - 1)*T} before the creation instant and leaving it unused
   * (Guava's {@code resync} then stores {@code I - 1} permits at its first event), {@code I = 0} by
   * Guava's own {@code tryAcquire(1)} at the creation instant.
   */
  static Limiter payLater(Map<?, ?> configuration, long now) throws Unsupported, Refused {
    long burst = integer(configuration, "burst");
    long interval = micros(integer(configuration, "emissionIntervalNanoseconds"), "emissionIntervalNanoseconds");
    long initial = configuration.containsKey("initialTokens") ? integer(configuration, "initialTokens") : burst;
    double rate = rateFor(interval);
    validate(rate, null);
    if (initial < 0 || initial > burst) {
      throw new Unsupported("Guava has no initial tokens: a new SmoothBursty holds 1, rests to at most B, "
          + "and tryAcquire(1) at creation leaves 0; " + initial + " is outside 0..B");
    }
    long rest;
    try {
      rest = initial >= 2 ? Math.multiplyExact(initial - 1, interval) : 0;
    } catch (ArithmeticException overflow) {
      throw new Unsupported("a rest of (I - 1)*T microseconds does not fit Guava's long clock");
    }
    ProtocolStopwatch clock = new ProtocolStopwatch(now);
    RateLimiter guava = new SmoothRateLimiter.SmoothBursty(clock, maxBurstSecondsFor(burst - 1, interval, rate));
    guava.setRate(rate); // at the stopwatch's 0: what create(rate) does with maxBurstSeconds 1
    clock.restedBeforeCreation(rest);
    if (initial == 0 && !guava.tryAcquire(1, 0, MICROSECONDS)) {
      throw new IllegalStateException("a new SmoothBursty refused tryAcquire(1)");
    }
    return new Limiter(guava, clock);
  }

  /**
   * {@code warm-up (B, T, P)}: {@code SmoothWarmingUp} at {@code rate = 10^6 / T} per second with a
   * warm-up period of P microseconds and the public factories' cold factor 3. It admits one
   * request when warm: only B = 1.
   */
  static Limiter warmUp(Map<?, ?> configuration, long now) throws Unsupported, Refused {
    long burst = integer(configuration, "burst");
    long interval = micros(integer(configuration, "emissionIntervalNanoseconds"), "emissionIntervalNanoseconds");
    long period = micros(integer(configuration, "warmUpPeriodNanoseconds"), "warmUpPeriodNanoseconds");
    double rate = rateFor(interval);
    validate(rate, period);
    if (burst != 1) {
      throw new Unsupported("SmoothWarmingUp has no burst: warm, it admits one request (B = 1), not " + burst);
    }
    ProtocolStopwatch clock = new ProtocolStopwatch(now);
    return new Limiter(RateLimiter.create(rate, period, MICROSECONDS, 3.0, clock), clock);
  }

  static Map<String, Object> invalid(String field, String problem) {
    return object("kind", "invalid", "field", field, "problem", problem);
  }

  /**
   * One event. acquire(n): {@code tryAcquire(n, 0, MICROSECONDS)}, for every n Java's {@code int}
   * holds (zero and negative included: Guava throws on them). {@code remaining} is the largest
   * request Guava would admit right after, at the same instant: any {@code int} when its next free
   * ticket is not later than now ({@code canAcquire} with a timeout of 0), none when it is.
   */
  static Map<String, Object> apply(Limiter limiter, Map<?, ?> event, long now) {
    Object kind = event.get("kind");
    if ("release".equals(kind)) return invalid("release", "notSupported");
    if (!"acquire".equals(kind)) throw new IllegalArgumentException("event " + kind + " is not in the profile");
    Object permits = event.get("permits");
    if (!(permits instanceof Long) || (Long) permits != ((Long) permits).intValue()) {
      // Guava's permits are an int: a request outside it cannot be made.
      return invalid("permits", "notSupported");
    }
    limiter.clock.now = now;
    boolean granted;
    try {
      granted = limiter.guava.tryAcquire(((Long) permits).intValue(), 0, MICROSECONDS);
    } catch (IllegalArgumentException guava) {
      // checkPermits: "Requested permits (n) must be positive", for n = 0 too.
      if (!String.valueOf(guava.getMessage()).endsWith("must be positive")) throw guava;
      return invalid("permits", "mustBePositive");
    }
    long nowMicros = limiter.clock.readMicros();
    long nextFree = limiter.guava.queryEarliestAvailable(nowMicros);
    if (granted) {
      return object("kind", "allowed", "remaining", nextFree <= nowMicros ? (long) Integer.MAX_VALUE : 0L);
    }
    long waitMicros = nextFree - nowMicros;
    // A wait past the end of the protocol's timeline is sent as it is (CONF-1), capped at
    // Long.MAX_VALUE ns, the most the protocol carries.
    long wait = waitMicros > Long.MAX_VALUE / MICRO ? Long.MAX_VALUE : waitMicros * MICRO;
    return object("kind", "rejected", "retryAfterNanoseconds", wait);
  }

  static Map<String, Object> handle(Map<?, ?> message, Map<String, Limiter> limiters) {
    Object type = message.get("type");
    Object id = message.get("id");
    if ("hello".equals(type)) {
      Object offered = message.get("protocol");
      long version = offered instanceof Long && (Long) offered >= 2 ? 2 : 1;
      Map<String, Object> answer = object(
          "type", "hello",
          "protocol", version,
          "implementation", IMPLEMENTATION,
          "strategies", List.of(PAY_LATER, WARM_UP));
      if (version == 2) {
        answer.put("profiles", object(PAY_LATER, profile(), WARM_UP, profile()));
        // One line is read and answered at a time, in order: any window offered is fine.
        Object window = message.get("window");
        if (window instanceof Long && (Long) window > 1) answer.put("window", window);
      }
      return answer;
    }
    if ("create".equals(type)) {
      Object strategy = message.get("strategy");
      Map<?, ?> configuration = (Map<?, ?>) message.get("configuration");
      long now = integer(message, "now");
      try {
        Limiter limiter;
        if (PAY_LATER.equals(strategy)) {
          limiter = payLater(configuration, now);
        } else if (WARM_UP.equals(strategy)) {
          limiter = warmUp(configuration, now);
        } else {
          throw new Unsupported("Guava's RateLimiter is pay later (SmoothBursty) or warm-up (SmoothWarmingUp)");
        }
        limiters.put((String) id, limiter);
        return object("type", "created", "id", id);
      } catch (Unsupported unsupported) {
        return object("type", "unsupported", "id", id, "reason", unsupported.getMessage());
      } catch (Refused refused) {
        return object("type", "refused", "id", id, "field", refused.field, "problem", refused.problem);
      }
    }
    if ("event".equals(type)) {
      Limiter limiter = limiters.get(id);
      if (limiter == null) return object("type", "error", "message", "unknown limiter " + id);
      Map<?, ?> event = (Map<?, ?>) message.get("event");
      return object("type", "result", "id", id, "result", apply(limiter, event, integer(message, "now")));
    }
    if ("drop".equals(type)) {
      limiters.remove(id);
      return object("type", "dropped", "id", id);
    }
    return object("type", "error", "message", "unknown message type " + type);
  }

  /** Standard error goes to the file named by SHIM_STDERR (appended), or nowhere. */
  static void quietStandardError() {
    String target = System.getenv("SHIM_STDERR");
    OutputStream sink = OutputStream.nullOutputStream();
    if (target != null && !target.isEmpty()) {
      try {
        sink = new FileOutputStream(target, true);
      } catch (FileNotFoundException unwritable) {
        // nowhere, then
      }
    }
    System.setErr(new PrintStream(sink, true, UTF_8));
  }

  /**
   * Reads one request a line and answers it before reading the next; answers are flushed whenever
   * no further request is waiting, so a pipelining harness gets them in batches and one that sends
   * a request at a time gets each at once. A throwable the mapping does not expect is answered
   * {@code {"type": "error"}} (the harness fails the case): a crash is never hidden.
   */
  public static void main(String[] args) throws IOException {
    quietStandardError();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8), 1 << 16);
    Writer out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), UTF_8), 1 << 16);
    Map<String, Limiter> limiters = new HashMap<>();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) continue;
      Map<String, Object> answer;
      try {
        Object message = JsonLine.parse(line);
        if (!(message instanceof Map)) throw new IllegalArgumentException("a request is a JSON object");
        if ("bye".equals(((Map<?, ?>) message).get("type"))) break;
        answer = handle((Map<?, ?>) message, limiters);
      } catch (RuntimeException unexpected) {
        unexpected.printStackTrace();
        answer = object("type", "error", "message", "the shim or Guava threw " + unexpected);
      }
      out.write(JsonLine.write(answer));
      out.write('\n');
      if (!in.ready()) out.flush();
    }
    out.flush();
  }
}
