package io.spillway.quota.admission;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.spillway.config.QuotaConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.time.Ticker;
import io.spillway.quota.ratelimit.ResetFormat;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The priority waiting area in front of each backend's concurrency limit.
 *
 * <p>Each backend admits up to its limit of requests at once ({@code quota.admission.cloudConcurrency},
 * {@code localConcurrency}). A request beyond it waits, blocking a virtual thread (never an event
 * loop: there the router only tries to enter, and moves the wait off the loop), in a waiting
 * area of at most {@code quota.admission.queueSize} requests per backend. A freed place goes to the
 * first waiter of the best class: gold, then silver, then bronze, then low-signal requests
 * ({@code RequestAttributes.LOW_SIGNAL}, whatever their tier); first come, first served within a
 * class. When the waiting area is full, a newcomer takes the place of the latest waiter of the
 * lowest class below its own, who is refused; if there is none, the newcomer is refused at once.
 *
 * <p>What clients see: a request that waited longer than its tier's {@code quota.tiers.<tier>.maxWait}
 * gets 429 {@code queue_timeout}; one refused by a full waiting area gets 503
 * {@code queue_full}. Both carry {@code Retry-After}: the time the waiters ahead are
 * expected to take (recent permit hold times × requests ahead ÷ limit), at least 1 s and at most the
 * tier's {@code maxWait}.
 *
 * <p>Time: deadlines are read from the injected {@link Clock}, wait times and hold times (durations)
 * from the injected {@link Ticker}; a waiting thread sleeps (real time) until its deadline or until
 * it is handed a place. A clock that jumps without real time passing (a fake clock in tests) is
 * noticed by {@link #wakeOverdue()}.
 *
 * <p>Metrics: gauges {@code spillway.admission.waiting} (tags backend, tier — {@code low_signal} is a
 * tier value here) and {@code spillway.admission.in_flight} (backend), timer
 * {@code spillway.admission.wait} (backend, tier), counter {@code spillway.admission.rejected}
 * (backend, tier, reason {@code queue_full}/{@code queue_timeout}).
 *
 * <p>Thread-safe. Permits may be closed from any thread, more than once.
 */
public final class PriorityAdmissionGate implements AdmissionGate {
  /** Weight of the newest permit hold time in the running average used for Retry-After. */
  private static final double HOLD_TIME_WEIGHT = 0.2;

  private final Map<BackendKind, Lane> lanes;
  private final int queueSize;
  private volatile Map<Tier, Duration> maxWait;
  private final Clock clock;
  private final Ticker ticker;

  /**
   * @param concurrency each backend kind and its limit of requests in flight
   * @param queueSize requests that may wait per backend
   * @param maxWait each tier's longest wait
   * @param clock what deadlines are read from
   * @param ticker what wait and hold times are measured with
   */
  public PriorityAdmissionGate(
      Map<BackendKind, Integer> concurrency, int queueSize, Map<Tier, Duration> maxWait, Clock clock, Ticker ticker,
      MeterRegistry meters) {
    if (queueSize < 0) {
      throw new IllegalArgumentException("queueSize must not be negative");
    }
    for (Tier tier : Tier.values()) {
      if (!maxWait.containsKey(tier)) {
        throw new IllegalArgumentException("no maxWait for " + tier.tag());
      }
    }
    this.queueSize = queueSize;
    this.maxWait = Map.copyOf(maxWait);
    this.clock = clock;
    this.ticker = ticker;
    Map<BackendKind, Lane> byKind = new EnumMap<>(BackendKind.class);
    concurrency.forEach((backend, limit) -> byKind.put(backend, new Lane(backend.tag(), limit, meters)));
    this.lanes = byKind;
  }

  /** The gate for the {@code cloud} and {@code local} backends, as configured in {@code quota}. */
  public static PriorityAdmissionGate from(QuotaConfig config, Clock clock, Ticker ticker, MeterRegistry meters) {
    Map<BackendKind, Integer> concurrency = new EnumMap<>(BackendKind.class);
    concurrency.put(BackendKind.CLOUD, config.admission().cloudConcurrency());
    concurrency.put(BackendKind.LOCAL, config.admission().localConcurrency());
    return new PriorityAdmissionGate(concurrency, config.admission().queueSize(), maxWaits(config), clock, ticker, meters);
  }

  /**
   * Applies reloaded {@code quota.tiers.*.maxWait} to requests that start waiting from now on.
   * Concurrency limits and the queue size ({@code quota.admission}) keep their start-up values.
   */
  public void reload(QuotaConfig config) {
    maxWait = Map.copyOf(maxWaits(config));
  }

  private static Map<Tier, Duration> maxWaits(QuotaConfig config) {
    Map<Tier, Duration> maxWait = new EnumMap<>(Tier.class);
    config.tiers().forEach((tier, limits) -> maxWait.put(tier, limits.maxWait()));
    return maxWait;
  }

  /**
   * Blocks until {@code request} may call {@code backend}.
   *
   * @throws GatewayException 429 {@code queue_timeout} after the tier's maxWait, 503 when the waiting
   *     area is full, 503 when the waiting thread is interrupted (its interrupt flag is kept)
   * @throws IllegalArgumentException for a backend this gate was not built with
   */
  @Override
  public Permit enter(BackendKind backend, GatewayRequest request) {
    Lane lane = lanes.get(backend);
    if (lane == null) {
      throw new IllegalArgumentException("no admission limit for backend '" + backend.tag() + "'");
    }
    WaitClass waitClass = WaitClass.of(request);
    Tier tier = WaitClass.tier(request);
    return lane.enter(waitClass, tier);
  }

  /**
   * A place for {@code request} when {@code backend} has one free and nobody is waiting for it (so
   * no better-placed request is passed over); null otherwise, and when the lane's lock is busy at
   * this instant: never blocks, so the router may ask from an event loop before it moves to a
   * thread that may wait in {@link #enter}.
   *
   * @throws IllegalArgumentException for a backend this gate was not built with
   */
  @Override
  public Permit tryEnter(BackendKind backend, GatewayRequest request) {
    Lane lane = lanes.get(backend);
    if (lane == null) {
      throw new IllegalArgumentException("no admission limit for backend '" + backend.tag() + "'");
    }
    return lane.tryEnter(WaitClass.of(request));
  }

  /**
   * Wakes every waiter whose deadline has passed by the clock, so it gives up now rather than when
   * its real-time sleep ends. Only needed when the clock can jump (tests with a fake clock).
   *
   * @return how many waiters were woken
   */
  public int wakeOverdue() {
    int woken = 0;
    for (Lane lane : lanes.values()) {
      woken += lane.wakeOverdue();
    }
    return woken;
  }

  /** Requests waiting for {@code backend}, all classes together. */
  public int waiting(BackendKind backend) {
    return lanes.get(backend).waitingTotal();
  }

  /**
   * Per backend: {@code limit}, {@code inFlight}, {@code queueSize} and {@code waiting} by class
   * ({@code gold}, {@code silver}, {@code bronze}, {@code low_signal}). For {@code /admin/status}.
   */
  public ObjectNode snapshot() {
    ObjectNode out = Json.object();
    lanes.values().stream().sorted(java.util.Comparator.comparing(lane -> lane.backend))
        .forEach(lane -> out.set(lane.backend, lane.snapshot()));
    return out;
  }

  /** 503 with the code {@code queue_full}, so clients and logs can tell it from an upstream outage. */
  private static GatewayException queueFull(String message, Duration retryAfter) {
    return ErrorKind.UNAVAILABLE.exception(message).withCode("queue_full").withRetryAfter(retryAfter);
  }

  private enum Outcome { WAITING, ADMITTED, TIMED_OUT, DISPLACED }

  private static final class Waiter {
    final WaitClass waitClass;
    final Condition wakeUp;
    final Instant deadline;
    Outcome outcome = Outcome.WAITING;

    Waiter(WaitClass waitClass, Condition wakeUp, Instant deadline) {
      this.waitClass = waitClass;
      this.wakeUp = wakeUp;
      this.deadline = deadline;
    }
  }

  private final class Lane {
    final String backend;
    final int limit;
    final ReentrantLock lock = new ReentrantLock();
    final EnumMap<WaitClass, ArrayDeque<Waiter>> waiting = new EnumMap<>(WaitClass.class);
    final AtomicIntegerArray waitingByClass = new AtomicIntegerArray(WaitClass.values().length);
    final EnumMap<WaitClass, Timer> waitTimers = new EnumMap<>(WaitClass.class);
    final EnumMap<WaitClass, Counter> timeouts = new EnumMap<>(WaitClass.class);
    final EnumMap<WaitClass, Counter> refusals = new EnumMap<>(WaitClass.class);
    volatile int inFlight;
    int waitingTotal;
    long averageHoldNanos = -1;

    Lane(String backend, int limit, MeterRegistry meters) {
      if (limit < 1) {
        throw new IllegalArgumentException("concurrency of " + backend + " must be at least 1");
      }
      this.backend = backend;
      this.limit = limit;
      Gauge.builder("spillway.admission.in_flight", this, lane -> lane.inFlight)
          .description("requests holding a place in the backend's concurrency limit")
          .tag("backend", backend)
          .register(meters);
      for (WaitClass waitClass : WaitClass.values()) {
        waiting.put(waitClass, new ArrayDeque<>());
        int index = waitClass.ordinal();
        Gauge.builder("spillway.admission.waiting", waitingByClass, counts -> counts.get(index))
            .description("requests in the waiting area")
            .tags("backend", backend, "tier", waitClass.tag())
            .register(meters);
        waitTimers.put(waitClass, Timer.builder("spillway.admission.wait")
            .description("time from arrival to a place in the concurrency limit")
            .tags("backend", backend, "tier", waitClass.tag())
            .register(meters));
        timeouts.put(waitClass, rejections(meters, waitClass, "queue_timeout"));
        refusals.put(waitClass, rejections(meters, waitClass, "queue_full"));
      }
    }

    private Counter rejections(MeterRegistry meters, WaitClass waitClass, String reason) {
      return Counter.builder("spillway.admission.rejected")
          .description("requests refused by the waiting area")
          .tags("backend", backend, "tier", waitClass.tag(), "reason", reason)
          .register(meters);
    }

    Permit enter(WaitClass waitClass, Tier tier) {
      Instant arrived = clock.instant();
      long arrivedAt = ticker.read();
      lock.lock();
      try {
        if (inFlight < limit && waitingTotal == 0) {
          inFlight++;
          return admitted(waitClass, arrivedAt);
        }
        if (waitingTotal >= queueSize && !displaceBelow(waitClass)) {
          refusals.get(waitClass).increment();
          throw queueFull("Spillway's waiting area for the " + backend + " backend is full; please retry shortly",
              retryAfter(tier));
        }
        Waiter waiter = new Waiter(waitClass, lock.newCondition(), arrived.plus(maxWait.get(tier)));
        add(waiter);
        awaitTurn(waiter);
        return switch (waiter.outcome) {
          case ADMITTED -> admitted(waitClass, arrivedAt);
          case TIMED_OUT -> {
            timeouts.get(waitClass).increment();
            waitTimers.get(waitClass).record(ticker.read() - arrivedAt, TimeUnit.NANOSECONDS);
            throw ErrorKind.QUEUE_TIMEOUT.exception(
                "Request waited " + ResetFormat.format(maxWait.get(tier)) + " (the " + tier.tag() + " tier's maxWait) for the "
                    + backend + " backend without getting a turn; please retry later").withRetryAfter(retryAfter(tier));
          }
          case DISPLACED -> {
            refusals.get(waitClass).increment();
            throw queueFull("Spillway's waiting area for the " + backend + " backend is full of requests with a "
                + "higher priority; please retry shortly", retryAfter(tier));
          }
          case WAITING -> throw new IllegalStateException("left the waiting area without an outcome");
        };
      } finally {
        lock.unlock();
      }
    }

    /** A free place with nobody waiting, or null; never waits for the lock. */
    Permit tryEnter(WaitClass waitClass) {
      long arrivedAt = ticker.read();
      if (!lock.tryLock()) {
        return null;
      }
      try {
        if (inFlight < limit && waitingTotal == 0) {
          inFlight++;
          return admitted(waitClass, arrivedAt);
        }
        return null;
      } finally {
        lock.unlock();
      }
    }

    /** Waits, holding the lock between wake-ups, until the waiter is admitted, displaced or late. */
    private void awaitTurn(Waiter waiter) {
      try {
        while (waiter.outcome == Outcome.WAITING) {
          long left = Duration.between(clock.instant(), waiter.deadline).toNanos();
          if (left <= 0) {
            remove(waiter);
            waiter.outcome = Outcome.TIMED_OUT;
            return;
          }
          waiter.wakeUp.awaitNanos(left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        if (waiter.outcome == Outcome.ADMITTED) {
          inFlight--;
          admitWaiters();
        } else if (waiter.outcome == Outcome.WAITING) {
          remove(waiter);
        }
        throw ErrorKind.UNAVAILABLE.exception("Request was cancelled while waiting for a turn");
      }
    }

    private Permit admitted(WaitClass waitClass, long arrivedAt) {
      long now = ticker.read();
      waitTimers.get(waitClass).record(now - arrivedAt, TimeUnit.NANOSECONDS);
      return new LanePermit(this, now);
    }

    /** @param grantedAt the ticker's reading when the permit was granted */
    void release(long grantedAt) {
      long held = Math.max(0, ticker.read() - grantedAt);
      lock.lock();
      try {
        averageHoldNanos = averageHoldNanos < 0 ? held
            : (long) (HOLD_TIME_WEIGHT * held + (1 - HOLD_TIME_WEIGHT) * averageHoldNanos);
        inFlight--;
        admitWaiters();
      } finally {
        lock.unlock();
      }
    }

    /** Hands free places to the best waiters; called with the lock held. */
    private void admitWaiters() {
      while (inFlight < limit) {
        Waiter next = first();
        if (next == null) {
          return;
        }
        remove(next);
        next.outcome = Outcome.ADMITTED;
        inFlight++;
        next.wakeUp.signal();
      }
    }

    /** Refuses the latest waiter of the lowest class below {@code waitClass}, if any; lock held. */
    private boolean displaceBelow(WaitClass waitClass) {
      WaitClass[] classes = WaitClass.values();
      for (int i = classes.length - 1; i > waitClass.ordinal(); i--) {
        Waiter last = waiting.get(classes[i]).peekLast();
        if (last != null) {
          remove(last);
          last.outcome = Outcome.DISPLACED;
          last.wakeUp.signal();
          return true;
        }
      }
      return false;
    }

    private Waiter first() {
      for (ArrayDeque<Waiter> queue : waiting.values()) {
        Waiter head = queue.peekFirst();
        if (head != null) {
          return head;
        }
      }
      return null;
    }

    private void add(Waiter waiter) {
      waiting.get(waiter.waitClass).addLast(waiter);
      waitingByClass.incrementAndGet(waiter.waitClass.ordinal());
      waitingTotal++;
    }

    private void remove(Waiter waiter) {
      if (waiting.get(waiter.waitClass).remove(waiter)) {
        waitingByClass.decrementAndGet(waiter.waitClass.ordinal());
        waitingTotal--;
      }
    }

    /** Expected wait for a newcomer, between 1 s and the tier's maxWait; lock held. */
    private Duration retryAfter(Tier tier) {
      long rounds = (waitingTotal + limit) / limit;
      Duration expected = Duration.ofNanos(Math.max(0, averageHoldNanos) * rounds);
      Duration floor = Duration.ofSeconds(1);
      Duration ceiling = maxWait.get(tier).compareTo(floor) > 0 ? maxWait.get(tier) : floor;
      return expected.compareTo(floor) < 0 ? floor : expected.compareTo(ceiling) > 0 ? ceiling : expected;
    }

    int wakeOverdue() {
      Instant now = clock.instant();
      int woken = 0;
      lock.lock();
      try {
        for (ArrayDeque<Waiter> queue : waiting.values()) {
          for (Iterator<Waiter> it = queue.iterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (!now.isBefore(waiter.deadline)) {
              waiter.wakeUp.signal();
              woken++;
            }
          }
        }
      } finally {
        lock.unlock();
      }
      return woken;
    }

    int waitingTotal() {
      lock.lock();
      try {
        return waitingTotal;
      } finally {
        lock.unlock();
      }
    }

    ObjectNode snapshot() {
      ObjectNode out = Json.object();
      lock.lock();
      try {
        out.put("limit", limit);
        out.put("inFlight", inFlight);
        out.put("queueSize", queueSize);
        ObjectNode byClass = out.putObject("waiting");
        for (WaitClass waitClass : WaitClass.values()) {
          byClass.put(waitClass.tag(), waiting.get(waitClass).size());
        }
      } finally {
        lock.unlock();
      }
      return out;
    }
  }

  private static final class LanePermit implements Permit {
    private final Lane lane;
    private final long grantedAt;
    private final AtomicBoolean closed = new AtomicBoolean();

    LanePermit(Lane lane, long grantedAt) {
      this.lane = lane;
      this.grantedAt = grantedAt;
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        lane.release(grantedAt);
      }
    }
  }
}
