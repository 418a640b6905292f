package io.spillway.routing.breaker;

import io.spillway.core.fleet.FleetMode;
import io.spillway.config.Durations;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica's own capacity breaker: decides, per request, whether the cloud or the local backend
 * serves it. The default without Redis, and what a {@link FleetBreaker} falls back to while Redis
 * does not answer.
 *
 * <pre>
 *   CLOSED ──(capacityStreak capacity answers in a row)──▶ OPEN ──(localFor elapsed)──▶ HALF_OPEN
 *     ▲                                                      ▲                              │
 *     └────────────────(the one probe succeeds)──────────────┼──────────────────────────────┤
 *                                                            └──(the probe: capacity/transient)
 * </pre>
 *
 * <ul>
 *   <li>Closed: every request goes to the cloud. A capacity answer adds one to the streak, a success
 *       resets it; rate-limit, quota, final and transient answers leave it alone.
 *   <li>Open: every request goes local for {@code failover.localFor}, or longer when a capacity answer
 *       of the streak carried a longer {@code Retry-After} (capped at {@code failover.maxLocalFor}).
 *   <li>Half-open: exactly one request (the probe) goes to the cloud, everyone else stays local.
 *       Success closes; capacity or a transient failure opens again; any other answer hands the
 *       probe to the next request.
 *   <li>Manual override: forced open (everything local, no probes) and forced closed (everything to
 *       the cloud, answers not counted) hold until {@code auto}; leaving forced open goes through
 *       half-open (one probe decides), leaving forced closed starts closed with an empty streak.
 * </ul>
 *
 * <p>Why not Resilience4j's {@code CircuitBreaker}: its closed state trips on a failure <em>rate</em>
 * over a sliding window (with a minimum number of calls), not on N consecutive answers, and an
 * interleaved success must reset our count; its open state lasts a fixed (or a function of the attempt
 * number) wait and cannot be lengthened by the upstream's {@code Retry-After} of the answer that
 * tripped it; its half-open state admits {@code permittedNumberOfCallsInHalfOpenState} calls and
 * closes on a rate, where we need exactly one probe whose single answer decides, and a probe that
 * ends without a verdict must go back to the pool. Bending it to this would mean a window of size N
 * with a 100 % threshold, a custom wait function fed from outside, and still no "hand the probe
 * on". So this is a small state machine in its style: each state an immutable object behind one
 * {@link AtomicReference}, changed only by compare-and-set, transitions as named constants
 * ({@link Transition}). Time-driven transitions (open → half-open) happen on the next look at the
 * breaker, so there is no timer thread and a fake clock drives every test.
 *
 * <p>Thread-safe. Each transition is logged once at WARN, kept in a bounded history and told to the
 * {@link BreakerListener listeners} (the app's meters are bound that way, from outside).
 */
public final class ReplicaBreaker implements Breaker {
  private static final Logger log = LoggerFactory.getLogger(ReplicaBreaker.class);

  private final String route;
  private final BreakerSettings config;
  private final Clock clock;
  private final AtomicReference<Phase> phase;
  private final Deque<HistoryEntry> history = new ArrayDeque<>();
  private final List<BreakerListener> listeners = new CopyOnWriteArrayList<>();

  /** The breaker of the one-route shorthand's route ({@value Breaker#DEFAULT_ROUTE}). */
  public ReplicaBreaker(BreakerSettings config, Clock clock) {
    this(DEFAULT_ROUTE, config, clock);
  }

  /** The breaker of the cloud route named {@code route}. */
  public ReplicaBreaker(String route, BreakerSettings config, Clock clock) {
    this.route = route;
    this.config = config;
    this.clock = clock;
    this.phase = new AtomicReference<>(new Closed(clock.instant(), 0, null));
  }

  @Override
  public String route() {
    return route;
  }

  @Override
  public void addListener(BreakerListener listener) {
    listeners.add(listener);
  }

  /** Decides where the next request goes. The caller must {@link #record} or {@link #release} it. */
  public Ticket acquire() {
    while (true) {
      Phase current = current();
      switch (current) {
        case Closed c -> {
          return new Ticket(Target.CLOUD, false, c);
        }
        case ForcedClosed f -> {
          return new Ticket(Target.CLOUD, false, f);
        }
        case Open o -> {
          return new Ticket(Target.LOCAL, false, o);
        }
        case ForcedOpen f -> {
          return new Ticket(Target.LOCAL, true, f);
        }
        case HalfOpen h -> {
          if (h.probing()) {
            return new Ticket(Target.LOCAL, false, h);
          }
          HalfOpen probing = new HalfOpen(h.since(), true);
          if (phase.compareAndSet(h, probing)) {
            return new Ticket(Target.PROBE, false, probing);
          }
        }
      }
    }
  }

  /** Reports what the cloud answered to a request that went there with {@code ticket}. */
  public void record(Ticket ticket, Verdict verdict) {
    if (!ticket.cloud()) {
      return;
    }
    Outcome outcome = verdict.outcome();
    while (true) {
      Phase current = current();
      Phase next = current;
      String reason = null;
      if (ticket.target() == Target.PROBE) {
        if (current != ticket.issuedIn()) {
          return;
        }
        HalfOpen h = (HalfOpen) current;
        switch (outcome) {
          case SUCCESS -> {
            next = new Closed(now(), 0, null);
            reason = "the probe to the cloud succeeded";
          }
          case CAPACITY, TRANSIENT -> {
            Duration openFor = openFor(verdict.retryAfter());
            next = new Open(now(), now().plus(openFor));
            reason = "the probe got " + describe(verdict) + "; " + config.openWords() + Durations.format(openFor);
          }
          default -> next = new HalfOpen(h.since(), false);
        }
      } else if (current instanceof Closed c) {
        if (outcome == Outcome.SUCCESS) {
          next = c.streak() == 0 ? c : new Closed(c.since(), 0, null);
        } else if (outcome == Outcome.CAPACITY) {
          Duration retryAfter = longer(c.longestRetryAfter(), verdict.retryAfter());
          int streak = c.streak() + 1;
          if (streak >= config.capacityStreak()) {
            Duration openFor = openFor(retryAfter);
            next = new Open(now(), now().plus(openFor));
            reason = streak + " capacity answers in a row (last: " + verdict.rule()
                + (retryAfter != null ? ", Retry-After " + Durations.format(retryAfter) : "")
                + "); " + config.openWords() + Durations.format(openFor);
          } else {
            next = new Closed(c.since(), streak, retryAfter);
          }
        }
      }
      if (next == current) {
        return;
      }
      if (phase.compareAndSet(current, next)) {
        transitioned(current, next, reason);
        if (next instanceof Closed c && c.streak() == 1) {
          listeners.forEach(listener -> listener.onStreakStarted(route));
        }
        return;
      }
    }
  }

  /** Gives back a ticket whose request ended without a verdict (refused by admission, cancelled). */
  public void release(Ticket ticket) {
    if (ticket.target() == Target.PROBE && ticket.issuedIn() instanceof HalfOpen h) {
      phase.compareAndSet(h, new HalfOpen(h.since(), false));
    }
  }

  /** Sets the manual override; returns the state it left the breaker in. */
  public State override(OverrideMode override) {
    while (true) {
      Phase current = current();
      Phase next = switch (override) {
        case OPEN -> current instanceof ForcedOpen ? current : new ForcedOpen(now());
        case CLOSED -> current instanceof ForcedClosed ? current : new ForcedClosed(now());
        case AUTO -> switch (current) {
          case ForcedOpen f -> new HalfOpen(now(), false);
          case ForcedClosed f -> new Closed(now(), 0, null);
          default -> current;
        };
      };
      if (next == current) {
        return current.state();
      }
      if (phase.compareAndSet(current, next)) {
        transitioned(current, next, "manual override: " + override.tag());
        return next.state();
      }
    }
  }

  @Override
  public FleetMode mode() {
    return FleetMode.REPLICA;
  }

  /**
   * Puts this breaker where the fleet's breaker was last seen, without a transition: a replica that
   * loses Redis carries on from the shared state instead of starting closed.
   */
  void restore(State state, Instant since, Instant until, int streak) {
    Phase restored = switch (state) {
      case CLOSED -> new Closed(since, streak, null);
      case OPEN -> new Open(since, until);
      case HALF_OPEN -> new HalfOpen(since, false);
      case FORCED_OPEN -> new ForcedOpen(since);
      case FORCED_CLOSED -> new ForcedClosed(since);
    };
    phase.set(restored);
  }

  /** A ticket for a cloud request this breaker did not issue (the fleet's), so its answer counts here. */
  Ticket cloudTicket() {
    return new Ticket(Target.CLOUD, false, null);
  }

  /** The current state (advancing open → half-open when {@code localFor} has passed). */
  public State state() {
    return current().state();
  }

  /** The manual override in force. */
  public OverrideMode currentOverride() {
    return currentOverride(current());
  }

  /** Consecutive capacity answers counted while closed. */
  public int streak() {
    return current() instanceof Closed c ? c.streak() : 0;
  }

  /**
   * What {@code Retry-After} tells a client that neither backend could serve: the time to the next
   * probe (at least 1s), or the upstream's own wait when that is longer. While forced open there is
   * no probe; the hint is {@code failover.localFor}.
   */
  public Duration retryAfter(Duration upstream) {
    Duration wait = switch (current()) {
      case Open o -> Duration.between(now(), o.until());
      case ForcedOpen f -> config.localFor();
      default -> Duration.ZERO;
    };
    wait = longer(wait, upstream);
    return wait.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : wait;
  }

  /** The transitions so far, oldest first, at most {@code failover.historySize}. */
  public List<HistoryEntry> history() {
    synchronized (history) {
      return List.copyOf(history);
    }
  }

  @Override
  public BreakerStatus status() {
    Phase current = current();
    Instant nextProbeAt = switch (current) {
      case Open o -> o.until();
      case HalfOpen h -> h.probing() ? null : now();
      default -> null;
    };
    return new BreakerStatus(route, FleetMode.REPLICA, current.state(), currentOverride(current), current.since(),
        current instanceof Closed c ? c.streak() : 0, config.capacityStreak(), nextProbeAt,
        current instanceof HalfOpen h && h.probing(), config.localFor(), config.maxLocalFor(), history(), null);
  }

  private static OverrideMode currentOverride(Phase phase) {
    return switch (phase) {
      case ForcedOpen f -> OverrideMode.OPEN;
      case ForcedClosed f -> OverrideMode.CLOSED;
      default -> OverrideMode.AUTO;
    };
  }

  /** The phase now, after the time-driven open → half-open step if it is due. */
  private Phase current() {
    while (true) {
      Phase current = phase.get();
      if (!(current instanceof Open o) || now().isBefore(o.until())) {
        return current;
      }
      HalfOpen next = new HalfOpen(o.until(), false);
      if (phase.compareAndSet(o, next)) {
        transitioned(o, next, "localFor elapsed; the next request probes the cloud");
        return next;
      }
    }
  }

  private void transitioned(Phase from, Phase to, String reason) {
    if (from.state() == to.state()) {
      return;
    }
    Transition.between(from.state(), to.state()); // only named transitions happen here
    log.warn("{} {} -> {}: {}", Breaker.label(route), from.state().tag(), to.state().tag(), reason);
    synchronized (history) {
      history.addLast(new HistoryEntry(from.state(), to.state(), to.since(), reason));
      while (history.size() > config.historySize()) {
        history.removeFirst();
      }
    }
    for (BreakerListener listener : listeners) {
      listener.onTransition(route, from.state(), to.state(), reason);
    }
  }

  /** How long to stay local: localFor, or the upstream's longer wait, capped at maxLocalFor. */
  private Duration openFor(Duration retryAfter) {
    Duration openFor = config.localFor();
    if (retryAfter != null && retryAfter.compareTo(openFor) > 0) {
      openFor = retryAfter.compareTo(config.maxLocalFor()) > 0 ? config.maxLocalFor() : retryAfter;
    }
    return openFor;
  }

  private static Duration longer(Duration a, Duration b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static String describe(Verdict verdict) {
    return "a " + verdict.outcome().tag() + " answer (" + verdict.rule() + ")";
  }

  private Instant now() {
    return clock.instant();
  }

  /** One immutable state object; the breaker swaps them by compare-and-set. */
  private sealed interface Phase permits Closed, Open, HalfOpen, ForcedOpen, ForcedClosed {
    State state();

    Instant since();
  }

  /** @param longestRetryAfter the longest Retry-After among the streak's capacity answers, or null */
  private record Closed(Instant since, int streak, Duration longestRetryAfter) implements Phase {
    @Override
    public State state() {
      return State.CLOSED;
    }
  }

  private record Open(Instant since, Instant until) implements Phase {
    @Override
    public State state() {
      return State.OPEN;
    }
  }

  /** @param probing whether the single probe is out; {@code since} is when localFor ran out */
  private record HalfOpen(Instant since, boolean probing) implements Phase {
    @Override
    public State state() {
      return State.HALF_OPEN;
    }
  }

  private record ForcedOpen(Instant since) implements Phase {
    @Override
    public State state() {
      return State.FORCED_OPEN;
    }
  }

  private record ForcedClosed(Instant since) implements Phase {
    @Override
    public State state() {
      return State.FORCED_CLOSED;
    }
  }
}
