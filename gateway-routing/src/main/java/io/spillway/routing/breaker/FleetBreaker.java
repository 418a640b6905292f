package io.spillway.routing.breaker;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.spillway.config.Durations;
import io.spillway.core.fleet.FleetMode;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
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
 * {@link ReplicaBreaker} of its own ({@link FleetMode#LOCAL_FALLBACK}), and keeps trying Redis every
 * {@code failover.fleetRefresh}. Once Redis answers it logs one line and follows the shared state
 * again; what it decided alone meanwhile is dropped (an override set during the outage applied to
 * this replica only). No request waits on Redis longer than {@code failover.fleetTimeout}.
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

  private record Reply(boolean granted, FleetState state) {}

  private final String route;
  private final String label;
  private final String stateKey;
  private final String historyKey;
  private final BreakerSettings config;
  private final Clock clock;
  private final String location;
  private final RedisClient client;
  private final String channel;
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
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile StatefulRedisPubSubConnection<String, String> changes;

  private FleetBreaker(String route, String uri, BreakerSettings config, Clock clock) {
    this.route = route;
    this.label = Breaker.label(route);
    this.stateKey = stateKey(route);
    this.historyKey = historyKey(route);
    this.config = config;
    this.clock = clock;
    RedisURI redisUri = FleetRedis.uri(uri, config.fleetTimeout());
    this.location = redisUri.getHost() + ":" + redisUri.getPort();
    this.channel = channelPrefix(route) + redisUri.getDatabase();
    this.client = FleetRedis.client(redisUri, config.fleetTimeout());
    this.fallback = new ReplicaBreaker(route, config, clock);
    this.worker = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-fleet-breaker-" + route).daemon(true).factory());
  }

  /**
   * Connects to the Redis at {@code uri} and follows the fleet's breaker there; when Redis does not
   * answer, starts in {@link FleetMode#LOCAL_FALLBACK} and keeps trying every {@code failover.fleetRefresh}.
   */
  public static FleetBreaker connect(String uri, BreakerSettings config, Clock clock) {
    return connect(DEFAULT_ROUTE, uri, config, clock);
  }

  /**
   * The fleet's breaker of the cloud route {@code route}: its own Redis keys and channel (see
   * {@link #stateKey}), so each route opens and probes on its own across the fleet.
   */
  public static FleetBreaker connect(String route, String uri, BreakerSettings config, Clock clock) {
    FleetBreaker breaker = new FleetBreaker(route, uri, config, clock);
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
          "a " + outcome.tag() + " answer (" + verdict.rule() + ")") != null;
    } else if (shared.at(now()) == State.CLOSED) {
      // Only what moves the streak goes to Redis: a success while the streak is 0 changes nothing.
      if (outcome == Outcome.CAPACITY) {
        reached = run("capacity", Long.toString(retryAfter), Integer.toString(config.capacityStreak()),
            Long.toString(config.localFor().toMillis()), Long.toString(config.maxLocalFor().toMillis()),
            verdict.rule()) != null;
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
    StatefulRedisPubSubConnection<String, String> sub = changes;
    if (sub != null) {
      sub.closeAsync();
    }
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) {
      c.closeAsync();
    }
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }

  /** Runs one step of the script; on any failure (timeout included) falls back and answers null. */
  private Reply run(String op, String... args) {
    StatefulRedisConnection<String, String> c = connection;
    try {
      if (c == null || !c.isOpen()) {
        throw new IllegalStateException("the connection to Redis is closed");
      }
      Reply reply = eval(c, op, args);
      accept(reply.state());
      return reply;
    } catch (RuntimeException e) {
      leave(e);
      return null;
    }
  }

  private Reply eval(StatefulRedisConnection<String, String> c, String op, String... args) {
    String[] keys = {stateKey, historyKey};
    String[] argv = new String[5 + args.length];
    argv[0] = Long.toString(clock.millis());
    argv[1] = Integer.toString(config.historySize());
    argv[2] = channel;
    argv[3] = op;
    System.arraycopy(args, 0, argv, 4, args.length);
    argv[argv.length - 1] = UUID.randomUUID().toString();
    List<Object> result;
    try {
      result = c.sync().evalsha(FleetScript.SHA, ScriptOutputType.MULTI, keys, argv);
    } catch (RedisNoScriptException e) {
      // A Redis that restarted has an empty script cache: EVAL sends the text and caches it again.
      result = c.sync().eval(FleetScript.TEXT, ScriptOutputType.MULTI, keys, argv);
    }
    List<String> fields = new ArrayList<>(result.size());
    result.forEach(value -> fields.add(String.valueOf(value)));
    return new Reply("1".equals(fields.get(0)), FleetState.parse(fields.subList(1, fields.size())));
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
      StatefulRedisConnection<String, String> c = connection;
      if (c == null || !c.isOpen()) {
        if (c != null) {
          c.closeAsync();
        }
        c = client.connect();
        connection = c;
      }
      StatefulRedisPubSubConnection<String, String> sub = changes;
      if (sub == null || !sub.isOpen()) {
        if (sub != null) {
          sub.closeAsync();
        }
        sub = client.connectPubSub();
        sub.addListener(new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            if (closed) {
              return;
            }
            try {
              worker.execute(() -> onPublished(message));
            } catch (RejectedExecutionException e) {
              // Closing: nobody routes with this breaker any more.
            }
          }
        });
        sub.sync().subscribe(channel);
        changes = sub;
      }
      reply = eval(c, "read");
      loadHistory(c);
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
      log.warn("{}: ignoring a malformed change on {}: {}", label, channel, e.toString());
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
      if (run("read") != null) {
        StatefulRedisPubSubConnection<String, String> sub = changes;
        if (sub == null || !sub.isOpen()) {
          leave(new IllegalStateException("the subscription to breaker changes was lost"));
        }
      }
    } catch (RuntimeException e) {
      log.error("{}: fleet maintenance failed", label, e);
    }
  }

  private void refreshHistory() {
    StatefulRedisConnection<String, String> c = connection;
    if (away || c == null || !c.isOpen()) {
      return;
    }
    try {
      loadHistory(c);
    } catch (RuntimeException e) {
      leave(e);
    }
  }

  private void loadHistory(StatefulRedisConnection<String, String> c) {
    List<HistoryEntry> entries = new ArrayList<>();
    for (String line : c.sync().lrange(historyKey, 0, -1)) {
      String[] parts = line.split("\\|", 4);
      entries.add(new HistoryEntry(State.valueOf(parts[0].toUpperCase(Locale.ROOT)),
          State.valueOf(parts[1].toUpperCase(Locale.ROOT)), Instant.ofEpochMilli(Long.parseLong(parts[2])), parts[3]));
    }
    history = List.copyOf(entries);
  }

  private Instant now() {
    return clock.instant();
  }
}
