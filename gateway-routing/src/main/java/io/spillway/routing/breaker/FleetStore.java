package io.spillway.routing.breaker;

import io.lettuce.core.ScriptOutputType;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisSession;
import io.spillway.redis.RedisUnavailableException;
import io.spillway.routing.breaker.Breaker.HistoryEntry;
import io.spillway.routing.breaker.Breaker.State;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * One cloud route's breaker as Redis keeps it: the state hash and history list, changed only by
 * {@link FleetScript}, over a session bounded by {@code failover.fleetTimeout}. Every call throws
 * what {@link RedisSession} throws; what a replica does when Redis is away is {@link FleetBreaker}'s.
 *
 * <p>Thread-safe.
 */
final class FleetStore implements AutoCloseable {
  /** A script's answer: whether the step was granted (a probe), and the shared state after it. */
  record Reply(boolean granted, FleetState state) {}

  private final RedisSession redis;
  private final String stateKey;
  private final String historyKey;
  private final String channel;
  private final BreakerSettings config;
  private final Clock clock;

  FleetStore(RedisLink link, String route, BreakerSettings config, Clock clock) {
    this.redis = link.session("fleet breaker " + route, config.fleetTimeout());
    this.stateKey = FleetBreaker.stateKey(route);
    this.historyKey = FleetBreaker.historyKey(route);
    this.channel = FleetBreaker.channelPrefix(route) + link.database();
    this.config = config;
    this.clock = clock;
  }

  /** The channel every change of this breaker is published on. */
  String channel() {
    return channel;
  }

  String location() {
    return redis.location();
  }

  /** Connects unless connected. @throws RedisUnavailableException when Redis does not answer in time */
  void connect() {
    redis.connect();
  }

  /** Runs one operation of the script (see {@link FleetScript}). */
  Reply run(String op, String... args) {
    String[] keys = {stateKey, historyKey};
    String[] argv = new String[5 + args.length];
    argv[0] = Long.toString(clock.millis());
    argv[1] = Integer.toString(config.historySize());
    argv[2] = channel;
    argv[3] = op;
    System.arraycopy(args, 0, argv, 4, args.length);
    argv[argv.length - 1] = UUID.randomUUID().toString();
    List<Object> result = redis.eval(FleetScript.SCRIPT, ScriptOutputType.MULTI, keys, argv);
    List<String> fields = new ArrayList<>(result.size());
    result.forEach(value -> fields.add(String.valueOf(value)));
    return new Reply("1".equals(fields.get(0)), FleetState.parse(fields.subList(1, fields.size())));
  }

  /** The shared history, oldest first. */
  List<HistoryEntry> history() {
    List<HistoryEntry> entries = new ArrayList<>();
    for (String line : redis.call(r -> r.lrange(historyKey, 0, -1))) {
      String[] parts = line.split("\\|", 4);
      entries.add(new HistoryEntry(State.valueOf(parts[0].toUpperCase(Locale.ROOT)),
          State.valueOf(parts[1].toUpperCase(Locale.ROOT)), Instant.ofEpochMilli(Long.parseLong(parts[2])), parts[3]));
    }
    return List.copyOf(entries);
  }

  @Override
  public void close() {
    redis.close();
  }
}
