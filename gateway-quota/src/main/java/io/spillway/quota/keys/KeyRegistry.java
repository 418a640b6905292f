package io.spillway.quota.keys;

import io.spillway.config.KeyConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gateway key → caller. Holds only SHA-256 digests of keys, never the keys; a presented key is
 * hashed and confirmed with a constant-time comparison. Immutable and thread-safe; a config reload
 * builds a new registry.
 */
public final class KeyRegistry {
  private static final Logger log = LoggerFactory.getLogger(KeyRegistry.class);

  private record Entry(byte[] digest, Caller caller) {}

  private final Map<ByteBuffer, Entry> byDigest;
  private final List<Caller> callers;
  private final Map<String, List<String>> modelsByKeyId;

  private KeyRegistry(Map<ByteBuffer, Entry> byDigest, List<Caller> callers, Map<String, List<String>> modelsByKeyId) {
    this.byDigest = byDigest;
    this.callers = callers;
    this.modelsByKeyId = modelsByKeyId;
  }

  public static KeyRegistry from(List<KeyConfig> keys) {
    Map<ByteBuffer, Entry> byDigest = new HashMap<>();
    List<Caller> callers = new ArrayList<>();
    Map<String, List<String>> models = new HashMap<>();
    for (KeyConfig key : keys) {
      if (key.disabled()) {
        log.warn("a key of team '{}' is empty (its environment variable is unset?); it admits nobody", key.team());
        continue;
      }
      byte[] digest = key.key() != null && !key.key().isEmpty()
          ? KeyHashes.digest(key.key())
          : KeyHashes.parse(key.keyHash());
      Caller caller = new Caller(key.team(), Tier.parse(key.tier()), KeyHashes.fingerprint(digest));
      byDigest.put(ByteBuffer.wrap(digest), new Entry(digest, caller));
      callers.add(caller);
      if (!key.models().isEmpty()) {
        models.put(caller.keyId(), key.models());
      }
    }
    return new KeyRegistry(Map.copyOf(byDigest), List.copyOf(callers), Map.copyOf(models));
  }

  /** The caller a presented key belongs to, or null. */
  public Caller authenticate(String presentedKey) {
    byte[] digest = KeyHashes.digest(presentedKey);
    Entry entry = byDigest.get(ByteBuffer.wrap(digest));
    if (entry == null || !MessageDigest.isEqual(entry.digest(), digest)) {
      return null;
    }
    return entry.caller();
  }

  /** The models a configured key may use ({@code keys[].models}); empty for any. */
  public List<String> models(Caller caller) {
    return modelsByKeyId.getOrDefault(caller.keyId(), List.of());
  }

  /** Every configured caller (team, tier and fingerprint; never a key). */
  public List<Caller> callers() {
    return callers;
  }

  public int size() {
    return callers.size();
  }
}
