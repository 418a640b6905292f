package io.spillway.quota.responses;

import io.lettuce.core.KeyValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import io.spillway.config.ResponsesConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.responses.StoredResponse;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisScript;
import io.spillway.redis.RedisSession;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The response store of a fleet, in Redis, so any replica continues a conversation another served.
 * Keys, per team ({@code <t>} is the team's name prefixed by its length, so no two teams share a key):
 * <ul>
 *   <li>{@code spillway:responses:<t>:r:<id>}: the stored JSON, expiring after {@code responses.ttl};</li>
 *   <li>{@code spillway:responses:<t>:i:<item id>}: the id of the first response that held the item
 *       (a later one that carried it, a reference resolved into its input, does not replace it);</li>
 *   <li>{@code spillway:responses:<t>:index} (sorted set by store time), {@code :sizes} (hash id →
 *       bytes) and {@code :bytes}: what bounds the team's share to {@code responses.maxBytesPerTeam};</li>
 *   <li>{@code spillway:responses:owner:<id>}: the team that holds a response or item id.</li>
 * </ul>
 * Over the process's one {@link RedisLink}. A put is one Lua script ({@code response-put.lua}): store, index, then forget the team's oldest (and expired) responses until
 * it is within its bound. Every call is bounded by {@code quota.storeTimeout}; one Redis does not
 * answer is a 503.
 */
public final class RedisResponseStore implements ResponseStore {
  static final String PREFIX = "spillway:responses:";
  static final String OWNER = PREFIX + "owner:";

  private static final RedisScript PUT = RedisScript.load(RedisResponseStore.class, "response-put.lua");

  private static final RedisScript DELETE = RedisScript.load(RedisResponseStore.class, "response-delete.lua");

  private final RedisSession redis;
  private final long maxBytes;
  private final long ttlMillis;
  private final Clock clock;

  /** @param timeout the longest one Redis call may take ({@code quota.storeTimeout}) */
  public RedisResponseStore(RedisLink link, Duration timeout, ResponsesConfig config, Clock clock) {
    this.redis = link.session("response store", timeout);
    this.maxBytes = config.maxBytesPerTeam().bytes();
    this.ttlMillis = config.ttl().toMillis();
    this.clock = clock;
  }

  private static String teamPrefix(String team) {
    return PREFIX + team.length() + ":" + team + ":";
  }

  @Override
  public void put(String team, StoredResponse response) {
    String json = response.toJson();
    List<String> args = new ArrayList<>(List.of(teamPrefix(team), response.id(), json,
        Long.toString(json.getBytes(StandardCharsets.UTF_8).length), Long.toString(ttlMillis),
        Long.toString(clock.millis()), Long.toString(maxBytes), OWNER, team));
    args.addAll(response.itemIds());
    script(PUT, args.toArray(String[]::new));
  }

  @Override
  public StoredResponse get(String team, String id) {
    String json = call(r -> r.get(teamPrefix(team) + "r:" + id));
    return json == null ? null : fresh(StoredResponse.fromJson(json));
  }

  /** {@code stored}, or null when it is older than the TTL by the gateway's clock (Redis expires it by its own). */
  private StoredResponse fresh(StoredResponse stored) {
    return stored.storedAtMillis() <= clock.millis() - ttlMillis ? null : stored;
  }

  @Override
  public List<StoredResponse> getAll(String team, List<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    String prefix = teamPrefix(team) + "r:";
    List<KeyValue<String, String>> values =
        call(r -> r.mget(ids.stream().map(id -> prefix + id).toArray(String[]::new)));
    List<StoredResponse> out = new ArrayList<>();
    for (KeyValue<String, String> value : values) {
      StoredResponse stored = value.hasValue() ? fresh(StoredResponse.fromJson(value.getValue())) : null;
      if (stored != null) {
        out.add(stored);
      }
    }
    return out;
  }

  @Override
  public Map<String, String> responsesOfItems(String team, Collection<String> itemIds) {
    Map<String, String> out = new HashMap<>();
    if (itemIds.isEmpty()) {
      return out;
    }
    String prefix = teamPrefix(team) + "i:";
    List<KeyValue<String, String>> values =
        call(r -> r.mget(itemIds.stream().map(id -> prefix + id).toArray(String[]::new)));
    for (KeyValue<String, String> value : values) {
      if (value.hasValue()) {
        out.put(value.getKey().substring(prefix.length()), value.getValue());
      }
    }
    return out;
  }

  @Override
  public boolean heldByAnotherTeam(String team, String id) {
    String owner = call(r -> r.get(OWNER + id));
    return owner != null && !owner.equals(team);
  }

  @Override
  public boolean delete(String team, String id) {
    Long deleted = script(DELETE, teamPrefix(team), id, OWNER, team);
    return deleted != null && deleted == 1;
  }

  @Override
  public boolean blocks() {
    return true;
  }

  @Override
  public String describe() {
    return "redis " + redis.location();
  }

  private Long script(RedisScript script, String... args) {
    try {
      if (!redis.connected()) {
        redis.connect();
      }
      return redis.eval(script, ScriptOutputType.INTEGER, new String[0], args);
    } catch (RuntimeException e) {
      throw unavailable(e);
    }
  }

  private <T> T call(Function<RedisCommands<String, String>, T> operation) {
    try {
      return redis.connectAndCall(operation);
    } catch (RuntimeException e) {
      throw unavailable(e);
    }
  }

  private static GatewayException unavailable(RuntimeException e) {
    return new GatewayException(ErrorKind.UNAVAILABLE,
        "The response store (Redis) did not answer; retry shortly.", null, "response_store_unavailable",
        Duration.ofSeconds(1), e);
  }

  @Override
  public void close() {
    redis.close();
  }
}
