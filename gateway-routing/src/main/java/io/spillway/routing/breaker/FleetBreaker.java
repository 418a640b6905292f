package io.spillway.routing.breaker;

import io.spillway.config.Durations;
import io.spillway.core.fleet.FleetMode;
import io.spillway.redis.RedisCommandException;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisUnavailableException;
import io.spillway.routing.breaker.FleetStore.Reply;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One breaker for every replica that shares a Redis ({@code store: redis://...}): the same states and
 * rules as {@link ReplicaBreaker}, with Redis holding the truth.
 *
 * <ul>
 *   <li>Capacity answers seen by any replica count toward one streak; the step that opens the breaker
 *       is one Lua script ({@link FleetScript}), so no two replicas can both count "the third".
 *   <li>Every change is published on a Redis channel with the new state; each replica keeps the last
 *       state it saw and routes from it, so an ordinary request in a closed or open breaker asks
 *       Redis nothing. A replica also re-reads the state every {@code failover.fleetRefresh}, in case
 *       a publication was missed.
 *   <li>In half-open, exactly one replica holds the probe: a lease in Redis that runs out after
 *       {@code failover.probeLease}, so a probe whose replica died is handed to the next request on
 *       any replica.
 *   <li>The operator's override is part of the shared state: set on one replica, it holds on all.
 *   <li>Time is the calling replica's injected clock, passed to the script.
 * </ul>
 *
 * <p>When Redis does not answer within {@code failover.fleetTimeout} (down, slow, unreachable at
 * start), the replica logs one line, carries on from the last shared state it saw with a
 * {@link ReplicaBreaker} of its own ({@link FleetMode#REPLICA_FALLBACK}), and keeps trying Redis every
 * {@code failover.fleetRefresh}. Once Redis answers it logs one line and follows the shared state
 * again; what it decided alone meanwhile is dropped (an override set during the outage applied to
 * this replica only). No request waits on Redis longer than {@code failover.fleetTimeout}.
 *
 * <p>This class is the protocol; the shared state in Redis is {@link FleetStore}'s and the change
 * channel {@link FleetChanges}', both over the process's one {@link RedisLink}.
 *
 * <p>Thread-safe. Pub/sub messages arrive on Lettuce's event loop and are handed to this breaker's
 * own thread at once; Redis is called on the requests' (virtual) threads and on that thread.
 */
public final class FleetBreaker implements Breaker {
  private static final Logger log = LoggerFactory.getLogger(FleetBreaker.class);
  static final String STATE_KEY = "{spillway:breaker}:state";
  static final String HISTORY_KEY = "{spillway:breaker}:history";
  /** Pub/sub channels are not per database: the database index is part of the name. */
  static final String CHANNEL_PREFIX = "spillway:breaker:changes:";

  /**
   * The Redis state key of {@code route}'s breaker: the original {@value #STATE_KEY} for the default
   * route, {@code {spillway:breaker:<route>}:state} for any other.
   */
  static String stateKey(String route) {
    return DEFAULT_ROUTE.equals(route) ? STATE_KEY : "{spillway:breaker:" + route + "}:state";
  }

  static String historyKey(String route) {
    return DEFAULT_ROUTE.equals(route) ? HISTORY_KEY : "{spillway:breaker:" + route + "}:history";
  }

  static String channelPrefix(String route) {
    return DEFAULT_ROUTE.equals(route) ? CHANNEL_PREFIX : "spillway:breaker:" + route + ":changes:";
  }

  /** What a ticket issued by the fleet breaker carries: the probe's id, or null. */
  private record FleetToken(String probeId) {}

  private final String route;
  private final String label;
  private final BreakerSettings config;
  private final Clock clock;
  private final String location;
  private final FleetStore store;
  private final FleetChanges changes;
  private final ReplicaBreaker fallback;
  private final String replicaId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong probes = new AtomicLong();
  private final List<BreakerListener> listeners = new CopyOnWriteArrayList<>();
  private final AtomicReference<State> seen = new AtomicReference<>(State.CLOSED);
  private final ScheduledExecutorService worker;
  private volatile FleetState shared = FleetState.INITIAL;
  private volatile List<HistoryEntry> history = List.of();
  private volatile boolean away;
  private volatile Instant awaySince;
  private volatile String awayCause;
  private volatile boolean closed;
  private final AtomicBoolean closing = new AtomicBoolean();

  private FleetBreaker(String route, RedisLink link, BreakerSettings config, Clock clock) {
    this.route = route;
    this.label = Breaker.label(route);
    this.config = config;
    this.clock = clock;
    this.location = link.location();
    this.store = new FleetStore(link, route, config, clock);
    this.fallback = new ReplicaBreaker(route, config, clock);
    this.worker = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-fleet-breaker-" + route).daemon(true).factory());
    this.changes = new FleetChanges(link, store.channel(), config.fleetTimeout(), worker, this::onPublished);
  }

  /**
   * Follows the fleet's breaker in the Redis of {@code link}; when Redis does not answer, starts in
   * {@link FleetMode#REPLICA_FALLBACK} and keeps trying every {@code failover.fleetRefresh}.
   */
  public static FleetBreaker connect(RedisLink link, BreakerSettings config, Clock clock) {
    return connect(DEFAULT_ROUTE, link, config, clock);
  }

  /**
   * The fleet's breaker of the cloud route {@code route}: its own Redis keys and channel (see
   * {@link #stateKey}), so each route opens and probes on its own across the fleet; every route's
   * breaker shares the process's one link.
   */
  public static FleetBreaker connect(String route, RedisLink link, BreakerSettings config, Clock clock) {
    FleetBreaker breaker = new FleetBreaker(route, link, config, clock);
    breaker.awaySince = clock.instant();
    breaker.away = true;
    if (!breaker.rejoin()) {
      log.warn("{}: the fleet's breaker in Redis at {} is unreachable at start ({}); this replica decides "
          + "on its own (local-fallback) until Redis answers", breaker.label, breaker.location, breaker.awayCause);
    }
    long every = Math.max(1, config.fleetRefresh().toMillis());
    breaker.worker.scheduleWithFixedDelay(breaker::maintain, every, every, TimeUnit.MILLISECONDS);
    return breaker;
  }

  @Override
  public String route() {
    return route;
  }

  @Override
  public void addListener(BreakerListener listener) {
    listeners.add(listener);
    fallback.addListener(listener);
  }

  @Override
  public boolean mayBlock() {
    return true;
  }

  @Override
  public Ticket acquire() {
    if (away) {
      return fallback.acquire();
    }
    Instant now = now();
    FleetState s = shared;
    State state = observe(s, now);
    if (state == State.HALF_OPEN && !s.probeOut(now)) {
      String probeId = replicaId + "-" + probes.incrementAndGet();
      Reply reply = run("probe", probeId, Long.toString(config.probeLease().toMillis()));
      if (reply == null) {
        return fallback.acquire();
      }
      if (reply.granted()) {
        return new Ticket(Target.PROBE, false, new FleetToken(probeId));
      }
      s = reply.state();
      state = s.at(now);
    }
    return switch (state) {
      case CLOSED, FORCED_CLOSED -> new Ticket(Target.CLOUD, false, new FleetToken(null));
      case FORCED_OPEN -> new Ticket(Target.LOCAL, true, new FleetToken(null));
      case OPEN, HALF_OPEN -> new Ticket(Target.LOCAL, false, new FleetToken(null));
    };
  }

  @Override
  public void record(Ticket ticket, Verdict verdict) {
    if (!ticket.cloud()) {
      return;
    }
    if (!(ticket.issuedIn() instanceof FleetToken token)) {
      fallback.record(ticket, verdict);
      return;
    }
    Outcome outcome = verdict.outcome();
    if (away) {
      // A probe held in Redis runs out by its lease; a cloud answer still counts here.
      if (token.probeId() == null) {
        fallback.record(fallback.cloudTicket(), verdict);
      }
      return;
    }
    long retryAfter = verdict.retryAfter() != null ? verdict.retryAfter().toMillis() : -1;
    boolean reached = true;
    if (token.probeId() != null) {
      String result = switch (outcome) {
        case SUCCESS -> "success";
        case CAPACITY, TRANSIENT -> "reopen";
        default -> "other";
      };
      reached = run("verdict", token.probeId(), result, Long.toString(retryAfter),
          Long.toString(config.localFor().toMillis()), Long.toString(config.maxLocalFor().toMillis()),
          "a " + outcome.tag() + " answer (" + verdict.rule() + ")", config.openWords()) != null;
    } else if (shared.at(now()) == State.CLOSED) {
      // Only what moves the streak goes to Redis: a success while the streak is 0 changes nothing.
      if (outcome == Outcome.CAPACITY) {
        reached = run("capacity", Long.toString(retryAfter), Integer.toString(config.capacityStreak()),
            Long.toString(config.localFor().toMillis()), Long.toString(config.maxLocalFor().toMillis()),
            verdict.rule(), config.openWords()) != null;
      } else if (outcome == Outcome.SUCCESS && shared.streak() > 0) {
        reached = run("success") != null;
      }
    }
    if (!reached && token.probeId() == null) {
      // Redis just went away: this answer counts on the replica's own breaker instead.
      fallback.record(fallback.cloudTicket(), verdict);
    }
  }

  @Override
  public void release(Ticket ticket) {
    if (!(ticket.issuedIn() instanceof FleetToken token)) {
      fallback.release(ticket);
      return;
    }
    if (token.probeId() != null && !away) {
      run("release", token.probeId());
    }
  }

  @Override
  public State override(OverrideMode override) {
    if (!away) {
      Reply reply = run("override", override.tag());
      if (reply != null) {
        refreshHistory();
        return reply.state().at(now());
      }
    }
    log.warn("{}: the override '{}' applies to this replica only: Redis at {} is unreachable",
        label, override.tag(), location);
    return fallback.override(override);
  }

  @Override
  public State state() {
    return away ? fallback.state() : observe(shared, now());
  }

  @Override
  public OverrideMode currentOverride() {
    if (away) {
      return fallback.currentOverride();
    }
    return switch (shared.state()) {
      case FORCED_OPEN -> OverrideMode.OPEN;
      case FORCED_CLOSED -> OverrideMode.CLOSED;
      default -> OverrideMode.AUTO;
    };
  }

  @Override
  public int streak() {
    if (away) {
      return fallback.streak();
    }
    FleetState s = shared;
    return s.at(now()) == State.CLOSED ? s.streak() : 0;
  }

  @Override
  public FleetMode mode() {
    return away ? FleetMode.REPLICA_FALLBACK : FleetMode.FLEET;
  }

  @Override
  public Duration retryAfter(Duration upstream) {
    if (away) {
      return fallback.retryAfter(upstream);
    }
    FleetState s = shared;
    Instant now = now();
    Duration wait = switch (s.at(now)) {
      case OPEN -> Duration.between(now, s.until());
      case FORCED_OPEN -> config.localFor();
      default -> Duration.ZERO;
    };
    if (upstream != null && upstream.compareTo(wait) > 0) {
      wait = upstream;
    }
    return wait.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : wait;
  }

  @Override
  public List<HistoryEntry> history() {
    return away ? fallback.history() : history;
  }

  @Override
  public BreakerStatus status() {
    if (away) {
      return fallback.status().as(FleetMode.REPLICA_FALLBACK, fleetStatus());
    }
    refreshHistory();
    FleetState s = shared;
    Instant now = now();
    State state = observe(s, now);
    Instant nextProbeAt = switch (state) {
      case OPEN -> s.until();
      case HALF_OPEN -> s.probeOut(now) ? null : now;
      default -> null;
    };
    return new BreakerStatus(route, FleetMode.FLEET, state, currentOverride(),
        state == s.state() ? s.since() : s.until(), state == State.CLOSED ? s.streak() : 0,
        config.capacityStreak(), nextProbeAt, s.probeOut(now), config.localFor(), config.maxLocalFor(), history,
        fleetStatus());
  }

  private BreakerStatus.Fleet fleetStatus() {
    return new BreakerStatus.Fleet(location, !away, away ? awaySince : null, config.fleetTimeout(),
        config.probeLease());
  }

  @Override
  public void close() {
    if (closing.getAndSet(true)) {
      return;
    }
    closed = true;
    worker.shutdownNow();
    changes.close();
    store.close();
  }

  /**
   * Runs one step of the script; when Redis does not answer in time this replica falls back, and a
   * refusal by Redis (a defect, not an outage) is logged; either way the answer is null.
   */
  private Reply run(String op, String... args) {
    try {
      Reply reply = store.run(op, args);
      accept(reply.state());
      return reply;
    } catch (RedisUnavailableException e) {
      leave(e);
      return null;
    } catch (RedisCommandException e) {
      log.error("{}: Redis at {} refused the breaker step '{}': {}", label, location, op, e.getMessage());
      return null;
    }
  }

  /** Takes a newer shared state (by version) as this replica's view. */
  private synchronized void accept(FleetState next) {
    if (away || !next.replaces(shared)) {
      return;
    }
    FleetState previous = shared;
    shared = next;
    if (next.state() == State.CLOSED && next.streak() == 1
        && (previous.state() != State.CLOSED || previous.streak() != 1)) {
      listeners.forEach(listener -> listener.onStreakStarted(route));
    }
    observe(next, now());
  }

  /**
   * The state routing acts on now; the first time this replica sees a new one, it logs it and tells
   * the listeners (every replica does, for every change of the fleet's breaker it sees).
   */
  private State observe(FleetState s, Instant now) {
    return observe(s, now, null);
  }

  /** As {@link #observe(FleetState, Instant)}, with {@code why} (when not null) as the reason logged. */
  private State observe(FleetState s, Instant now, String why) {
    State state = s.at(now);
    State before = seen.getAndSet(state);
    if (before != state && !away) {
      String reason = why != null ? why
          : state != s.state() ? "localFor elapsed; the next request probes the cloud"
          : !s.reason().isEmpty() ? s.reason()
          : "the fleet's breaker in Redis started afresh (closed)";
      log.warn("{} {} -> {} (fleet): {}", label, before.tag(), state.tag(), reason);
      listeners.forEach(listener -> listener.onTransition(route, before, state, reason));
    }
    return state;
  }

  /** Redis did not answer in time: this replica decides alone from the last state it saw. */
  private synchronized void leave(RuntimeException cause) {
    if (away || closed) {
      return;
    }
    FleetState s = shared;
    Instant now = now();
    fallback.restore(s.at(now), s.at(now) == s.state() ? s.since() : s.until(), s.until(),
        s.at(now) == State.CLOSED ? s.streak() : 0);
    awaySince = now;
    awayCause = cause.toString();
    away = true;
    log.warn("{}: Redis at {} did not answer (timeout {}; {}); this replica decides on its own "
        + "(local-fallback) from the last shared state ({}) until Redis answers again",
        label, location, Durations.format(config.fleetTimeout()), cause.toString(), s.at(now).tag());
  }

  /**
   * Reconnects and reads the shared state; on success this replica follows the fleet again. Called
   * only from this breaker's own thread (and once from {@link #connect} before that starts).
   */
  private boolean rejoin() {
    Reply reply;
    try {
      store.connect();
      changes.subscribe();
      reply = store.run("read");
      history = store.history();
    } catch (RuntimeException e) {
      awayCause = e.toString();
      log.debug("{}: Redis at {} still unreachable: {}", label, location, e.toString());
      return false;
    }
    synchronized (this) {
      boolean outage = awayCause != null;
      shared = reply.state();
      Instant now = now();
      // A replica that was deciding alone compares the fleet's state with its own; one that just
      // started takes the fleet's state as its first.
      seen.set(outage ? fallback.state() : shared.at(now));
      away = false;
      if (outage) {
        Duration gone = Duration.between(awaySince, now).truncatedTo(ChronoUnit.SECONDS);
        log.warn("{}: Redis at {} answers again (away {}); this replica follows the fleet's breaker "
            + "again, now {}", label, location, Durations.format(gone), shared.at(now).tag());
        awayCause = null;
      }
      observe(shared, now, outage ? "Redis answers again; the fleet's breaker decides" : null);
    }
    return true;
  }

  private void onPublished(String message) {
    try {
      List<String> fields = List.of(message.split("\\|", 9));
      accept(FleetState.parse(fields));
    } catch (RuntimeException e) {
      log.warn("{}: ignoring a malformed change on {}: {}", label, changes.channel(), e.toString());
    }
  }

  /** Every {@code failover.fleetRefresh}: re-read the shared state, or try to reach Redis again. */
  private void maintain() {
    if (closed) {
      return;
    }
    try {
      if (away) {
        rejoin();
        return;
      }
      if (run("read") != null && !changes.open()) {
        leave(new IllegalStateException("the subscription to breaker changes was lost"));
      }
    } catch (RuntimeException e) {
      log.error("{}: fleet maintenance failed", label, e);
    }
  }

  private void refreshHistory() {
    if (away) {
      return;
    }
    try {
      history = store.history();
    } catch (RedisUnavailableException e) {
      leave(e);
    } catch (RedisCommandException e) {
      log.error("{}: Redis at {} refused the history read: {}", label, location, e.getMessage());
    }
  }

  private Instant now() {
    return clock.instant();
  }
}
