package io.spillway.quota.responses;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.spillway.config.ResponsesConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.responses.StoredResponse;
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
 * A put is one Lua script: store, index, then forget the team's oldest (and expired) responses until
 * it is within its bound. Every call is bounded by {@code quota.storeTimeout}; one Redis does not
 * answer is a 503.
 */
public final class RedisResponseStore implements ResponseStore {
  static final String PREFIX = "spillway:responses:";
  static final String OWNER = PREFIX + "owner:";

  private static final String PUT = """
      local p = ARGV[1]
      local id = ARGV[2]
      local ttl = tonumber(ARGV[5])
      local now = tonumber(ARGV[6])
      local max = tonumber(ARGV[7])
      local owner = ARGV[8]
      local team = ARGV[9]
      local function forget(old)
        local s = redis.call('HGET', p .. 'sizes', old)
        if s then redis.call('DECRBY', p .. 'bytes', s) end
        redis.call('HDEL', p .. 'sizes', old)
        redis.call('ZREM', p .. 'index', old)
        redis.call('DEL', p .. 'r:' .. old)
        if redis.call('GET', owner .. old) == team then redis.call('DEL', owner .. old) end
      end
      for _, old in ipairs(redis.call('ZRANGEBYSCORE', p .. 'index', '-inf', now - ttl)) do forget(old) end
      if redis.call('HEXISTS', p .. 'sizes', id) == 1 then forget(id) end
      redis.call('SET', p .. 'r:' .. id, ARGV[3], 'PX', ttl)
      redis.call('SET', owner .. id, team, 'PX', ttl)
      for i = 10, #ARGV do
        redis.call('SET', p .. 'i:' .. ARGV[i], id, 'PX', ttl, 'NX')
        redis.call('SET', owner .. ARGV[i], team, 'PX', ttl)
      end
      redis.call('ZADD', p .. 'index', now, id)
      redis.call('HSET', p .. 'sizes', id, ARGV[4])
      local total = redis.call('INCRBY', p .. 'bytes', ARGV[4])
      while total > max do
        local oldest = redis.call('ZRANGE', p .. 'index', 0, 0)[1]
        if not oldest or oldest == id then break end
        forget(oldest)
        total = tonumber(redis.call('GET', p .. 'bytes') or '0')
      end
      for _, k in ipairs({'index', 'sizes', 'bytes'}) do redis.call('PEXPIRE', p .. k, ttl) end
      return total
      """;

  private static final String DELETE = """
      local p = ARGV[1]
      local id = ARGV[2]
      if redis.call('DEL', p .. 'r:' .. id) == 0 then return 0 end
      local s = redis.call('HGET', p .. 'sizes', id)
      if s then redis.call('DECRBY', p .. 'bytes', s) end
      redis.call('HDEL', p .. 'sizes', id)
      redis.call('ZREM', p .. 'index', id)
      if redis.call('GET', ARGV[3] .. id) == ARGV[4] then redis.call('DEL', ARGV[3] .. id) end
      return 1
      """;

  private final RedisClient client;
  private final String location;
  private final long maxBytes;
  private final long ttlMillis;
  private final Clock clock;
  private volatile StatefulRedisConnection<String, String> connection;

  public RedisResponseStore(String uri, Duration timeout, ResponsesConfig config, Clock clock) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(timeout);
    this.location = redisUri.getHost() + ":" + redisUri.getPort();
    this.client = RedisClient.create(redisUri);
    client.setOptions(ClientOptions.builder()
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .build());
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
    call(redis -> redis.eval(PUT, ScriptOutputType.INTEGER, new String[0], args.toArray(String[]::new)));
  }

  @Override
  public StoredResponse get(String team, String id) {
    String json = call(redis -> redis.get(teamPrefix(team) + "r:" + id));
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
        call(redis -> redis.mget(ids.stream().map(id -> prefix + id).toArray(String[]::new)));
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
        call(redis -> redis.mget(itemIds.stream().map(id -> prefix + id).toArray(String[]::new)));
    for (KeyValue<String, String> value : values) {
      if (value.hasValue()) {
        out.put(value.getKey().substring(prefix.length()), value.getValue());
      }
    }
    return out;
  }

  @Override
  public boolean heldByAnotherTeam(String team, String id) {
    String owner = call(redis -> redis.get(OWNER + id));
    return owner != null && !owner.equals(team);
  }

  @Override
  public boolean delete(String team, String id) {
    Long deleted = call(redis -> redis.eval(DELETE, ScriptOutputType.INTEGER, new String[0],
        teamPrefix(team), id, OWNER, team));
    return deleted != null && deleted == 1;
  }

  @Override
  public boolean blocks() {
    return true;
  }

  @Override
  public String describe() {
    return "redis " + location;
  }

  private <T> T call(Function<RedisCommands<String, String>, T> operation) {
    try {
      return operation.apply(connection().sync());
    } catch (RuntimeException e) {
      throw new GatewayException(ErrorKind.UNAVAILABLE,
          "The response store (Redis) did not answer; retry shortly.", null, "response_store_unavailable",
          Duration.ofSeconds(1), e);
    }
  }

  private synchronized StatefulRedisConnection<String, String> connection() {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null || !c.isOpen()) {
      c = client.connect();
      connection = c;
    }
    return c;
  }

  @Override
  public synchronized void close() {
    if (connection != null) {
      connection.close();
    }
    client.shutdown();
  }
}
