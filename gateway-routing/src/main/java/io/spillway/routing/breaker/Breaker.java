package io.spillway.routing.breaker;

import io.spillway.core.fleet.FleetMode;
import io.spillway.routing.capacity.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The capacity breaker of one cloud route, which the router asks, per request, whether that route
 * or what comes after it (the next route, then the local backend) serves it: closed (cloud), open for a while after {@code failover.capacityStreak} capacity answers in a
 * row (local), half-open (exactly one probe to the cloud decides), and an operator's override.
 *
 * <p>Two implementations: {@link ReplicaBreaker}, this replica's own state machine (the default), and
 * {@link FleetBreaker}, one breaker for every replica sharing a Redis ({@code store: redis://...}),
 * which falls back to a {@link ReplicaBreaker} of its own while Redis does not answer in time.
 * {@link Breakers#create} picks one from the config. Implementations are thread-safe and never make
 * a caller wait longer than {@code failover.fleetTimeout} on a shared store.
 */
public interface Breaker extends AutoCloseable {
  /** The route name of the one-route shorthand ({@code cloud.baseUrl}); its fleet keys are the original ones. */
  String DEFAULT_ROUTE = "cloud";

  /** What a log line calls this breaker: {@code breaker} for the default route, else {@code breaker of route <name>}. */
  static String label(String route) {
    return DEFAULT_ROUTE.equals(route) ? "breaker" : "breaker of route " + route;
  }

  /** The breaker's state, as shown in the admin API, history and metric tags. */
  enum State {
    CLOSED,
    OPEN,
    HALF_OPEN,
    FORCED_OPEN,
    FORCED_CLOSED;

    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** What routing does in this state, ignoring who decided it. */
    public State effective() {
      return switch (this) {
        case FORCED_OPEN -> OPEN;
        case FORCED_CLOSED -> CLOSED;
        default -> this;
      };
    }

    /** Whether this state keeps traffic off the route: open (forced or not) or half-open. */
    public boolean degraded() {
      return effective() != CLOSED;
    }
  }

  /** The manual override set through {@code POST /admin/breaker}. */
  enum OverrideMode {
    AUTO,
    OPEN,
    CLOSED;

    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code auto}, {@code open} or {@code closed}; null for anything else. */
    public static OverrideMode parse(String value) {
      for (OverrideMode o : values()) {
        if (o.tag().equals(value)) {
          return o;
        }
      }
      return null;
    }
  }

  /** Where one request goes. */
  enum Target {
    /** The cloud, as usual. */
    CLOUD,
    /** The cloud, as the half-open state's single probe: its verdict closes or reopens the breaker. */
    PROBE,
    /** The local backend. */
    LOCAL
  }

  /** The legal transitions, named. */
  enum Transition {
    CLOSED_TO_OPEN(State.CLOSED, State.OPEN),
    OPEN_TO_HALF_OPEN(State.OPEN, State.HALF_OPEN),
    HALF_OPEN_TO_CLOSED(State.HALF_OPEN, State.CLOSED),
    HALF_OPEN_TO_OPEN(State.HALF_OPEN, State.OPEN),
    CLOSED_TO_FORCED_OPEN(State.CLOSED, State.FORCED_OPEN),
    OPEN_TO_FORCED_OPEN(State.OPEN, State.FORCED_OPEN),
    HALF_OPEN_TO_FORCED_OPEN(State.HALF_OPEN, State.FORCED_OPEN),
    FORCED_CLOSED_TO_FORCED_OPEN(State.FORCED_CLOSED, State.FORCED_OPEN),
    CLOSED_TO_FORCED_CLOSED(State.CLOSED, State.FORCED_CLOSED),
    OPEN_TO_FORCED_CLOSED(State.OPEN, State.FORCED_CLOSED),
    HALF_OPEN_TO_FORCED_CLOSED(State.HALF_OPEN, State.FORCED_CLOSED),
    FORCED_OPEN_TO_FORCED_CLOSED(State.FORCED_OPEN, State.FORCED_CLOSED),
    FORCED_OPEN_TO_HALF_OPEN(State.FORCED_OPEN, State.HALF_OPEN),
    FORCED_CLOSED_TO_CLOSED(State.FORCED_CLOSED, State.CLOSED);

    private final State from;
    private final State to;

    Transition(State from, State to) {
      this.from = from;
      this.to = to;
    }

    public State from() {
      return from;
    }

    public State to() {
      return to;
    }

    static Transition between(State from, State to) {
      Transition t = find(from, to);
      if (t == null) {
        throw new IllegalStateException("illegal breaker transition " + from + " -> " + to);
      }
      return t;
    }

    /** The named transition from {@code from} to {@code to}, or null when there is none. */
    public static Transition find(State from, State to) {
      for (Transition t : values()) {
        if (t.from == from && t.to == to) {
          return t;
        }
      }
      return null;
    }
  }

  /** One entry of {@link #history()}. */
  record HistoryEntry(State from, State to, Instant at, String reason) {}

  /**
   * A routing decision handed to one request; report its result with {@link #record} or give it
   * back with {@link #release}, exactly once, to the breaker that issued it.
   */
  final class Ticket {
    private final Target target;
    private final boolean forcedLocal;
    private final Object issuedIn;

    /** {@code issuedIn}: what the issuing breaker needs to recognise its own ticket later. */
    Ticket(Target target, boolean forcedLocal, Object issuedIn) {
      this.target = target;
      this.forcedLocal = forcedLocal;
      this.issuedIn = issuedIn;
    }

    public Target target() {
      return target;
    }

    /** Whether this request goes to the cloud (as a normal request or as the probe). */
    public boolean cloud() {
      return target != Target.LOCAL;
    }

    /**
     * Whether this request goes local because an operator forced the breaker open. Such a request
     * stays local even when the local backend cannot serve it; a request sent local by a breaker
     * that opened on its own may try the cloud then (the router's fallback).
     */
    public boolean forcedLocal() {
      return forcedLocal;
    }

    Object issuedIn() {
      return issuedIn;
    }

    @Override
    public String toString() {
      return "Ticket{" + target + "}";
    }
  }


  /** The name of the cloud route this breaker guards ({@value #DEFAULT_ROUTE} for the shorthand). */
  String route();

  /** Adds a listener told of this breaker's events from now on (see {@link BreakerListener}). */
  void addListener(BreakerListener listener);

  /** Decides where the next request goes. The caller must {@link #record} or {@link #release} it. */
  Ticket acquire();

  /**
   * Whether {@link #acquire}, {@link #record} or {@link #release} may wait on the network (a fleet
   * breaker in Redis): the router then decides on a virtual thread. A breaker in memory says false.
   */
  default boolean mayBlock() {
    return false;
  }

  /** Reports what the cloud answered to a request that went there with {@code ticket}. */
  void record(Ticket ticket, Verdict verdict);

  /** Gives back a ticket whose request ended without a verdict (refused by admission, cancelled). */
  void release(Ticket ticket);

  /** Sets the manual override; returns the state it left the breaker in. */
  State override(OverrideMode override);

  /** The current state (advancing open → half-open when {@code localFor} has passed). */
  State state();

  /** The manual override in force. */
  OverrideMode currentOverride();

  /** Consecutive capacity answers counted while closed. */
  int streak();

  /** Who decides right now. */
  FleetMode mode();

  /**
   * What {@code Retry-After} tells a client that neither backend could serve: the time to the next
   * probe (at least 1s), or the upstream's own wait when that is longer. While forced open there is
   * no probe; the hint is {@code failover.localFor}.
   */
  Duration retryAfter(Duration upstream);

  /** The transitions so far, oldest first, at most {@code failover.historySize}. */
  List<HistoryEntry> history();

  /** The breaker as read now, for the admin API and the dashboard ({@link BreakerStatus#toJson}). */
  BreakerStatus status();

  /** Stops background work and closes connections; a no-op for a replica's own breaker. */
  @Override
  default void close() {}
}
