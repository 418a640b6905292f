package io.spillway.quota.keys;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisScript;
import io.spillway.redis.RedisSession;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Keys shared by every replica through Redis:
 * <ul>
 *   <li>{@code spillway:keys}: hash id → the key's stored JSON (hash of the secret, team, tier, limits)</li>
 *   <li>{@code spillway:keys:version}: a counter every change increments; replicas poll it every
 *       {@code admin.keySyncInterval} and read the hash again when it moved</li>
 *   <li>{@code spillway:keys:usage:<month>}: hash id → tokens settled that month, kept
 *       {@value #USAGE_KEPT_DAYS} days</li>
 *   <li>{@code spillway:keys:counted:<call id>}: a marker that makes a per-key usage write count
 *       once however often it is sent, kept {@value #MARKER_HOURS} hours</li>
 * </ul>
 * Create, rotate (compare-and-set) and revoke are each one Lua script with the version bump.
 * Every call is bounded by {@code quota.storeTimeout}; a call Redis does not answer throws
 * {@link KeyStoreUnavailableException}.
 */
public final class RedisKeyStore implements KeyStore {
  static final String KEYS = "spillway:keys";
  static final String VERSION = "spillway:keys:version";
  static final String USAGE = "spillway:keys:usage:";
  static final String COUNTED = "spillway:keys:counted:";
  static final int USAGE_KEPT_DAYS = 93;
  static final int MARKER_HOURS = 24;
  private static final RedisScript CREATE = RedisScript.load(RedisKeyStore.class, "key-create.lua");
  private static final RedisScript REPLACE = RedisScript.load(RedisKeyStore.class, "key-replace.lua");
  private static final RedisScript REMOVE = RedisScript.load(RedisKeyStore.class, "key-remove.lua");
  private static final RedisScript USAGE_ADD = RedisScript.load(RedisKeyStore.class, "key-usage.lua");
  private static final String[] KEY_KEYS = {KEYS, VERSION};

  private final RedisSession redis;

  public RedisKeyStore(RedisLink link, Duration timeout) {
    this.redis = link.session("key store", timeout);
  }

  @Override
  public List<ApiKey> all() {
    List<ApiKey> out = new ArrayList<>();
    call(r -> r.hvals(KEYS)).forEach(stored -> out.add(ApiKey.fromStored(stored)));
    return out;
  }

  @Override
  public ApiKey get(String id) {
    String stored = call(r -> r.hget(KEYS, id));
    return stored == null ? null : ApiKey.fromStored(stored);
  }

  @Override
  public boolean create(ApiKey key) {
    return script(CREATE, KEY_KEYS, key.id(), key.toStored());
  }

  @Override
  public boolean replace(ApiKey expected, ApiKey next) {
    return script(REPLACE, KEY_KEYS, expected.id(), expected.toStored(), next.toStored());
  }

  @Override
  public boolean remove(String id) {
    return script(REMOVE, KEY_KEYS, id);
  }

  @Override
  public long version() {
    String value = call(r -> r.get(VERSION));
    return value == null ? 0 : Long.parseLong(value);
  }

  @Override
  public long usage(String month, String id) {
    String value = call(r -> r.hget(USAGE + month, id));
    return value == null ? 0 : Long.parseLong(value);
  }

  @Override
  public void addUsage(String month, String id, long tokens, String once) {
    script(USAGE_ADD, new String[] {USAGE + month, COUNTED + once}, id, Long.toString(tokens),
        Long.toString(Duration.ofHours(MARKER_HOURS).toMillis()), Long.toString(Duration.ofDays(USAGE_KEPT_DAYS).toSeconds()));
  }

  /** Runs a script that answers 1 (done) or 0 (refused). */
  private boolean script(RedisScript script, String[] keys, String... args) {
    try {
      if (!redis.connected()) {
        redis.connect();
      }
      Long done = redis.eval(script, ScriptOutputType.INTEGER, keys, args);
      return done != null && done == 1;
    } catch (RuntimeException e) {
      throw unavailable(e);
    }
  }

  @Override
  public String describe() {
    return "redis " + redis.location();
  }

  private <T> T call(Function<RedisCommands<String, String>, T> operation) {
    try {
      return redis.connectAndCall(operation);
    } catch (RuntimeException e) {
      throw unavailable(e);
    }
  }

  private KeyStoreUnavailableException unavailable(RuntimeException e) {
    return new KeyStoreUnavailableException("the key store (Redis at " + redis.location() + ") did not answer: "
        + e.getMessage(), e);
  }

  @Override
  public void close() {
    redis.close();
  }
}
