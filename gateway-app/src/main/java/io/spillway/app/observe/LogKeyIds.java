package io.spillway.app.observe;

import io.spillway.quota.keys.ApiKeys;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key id the access log writes. An API key's id ({@code key_...}) is random and says nothing
 * about its secret, so it is written as it is. A config key's fingerprint is the start of its
 * secret's unsalted SHA-256, which would let whoever reads the log test guesses of a weak key
 * offline; the log writes {@code cfg_} and an HMAC-SHA256 of it under {@code logging.keyIdSalt}
 * instead (a secret; without one, a random salt per process, so ids then match only within one
 * run). {@code GET /admin/keys} shows each config key's {@code logId}. Each id is made once and
 * remembered (there are as many as config keys: a few hundred at most), so a request's log line
 * costs no HMAC. Thread-safe.
 */
public final class LogKeyIds {
  static final String CONFIG_PREFIX = "cfg_";
  /** Ids remembered at most: far more config keys than any config holds. */
  static final int REMEMBERED = 4_096;
  private final SecretKeySpec salt;
  private final Map<String, String> ids = new ConcurrentHashMap<>();

  public LogKeyIds(String configuredSalt) {
    byte[] bytes;
    if (configuredSalt != null && !configuredSalt.isEmpty()) {
      bytes = configuredSalt.getBytes(StandardCharsets.UTF_8);
    } else {
      bytes = new byte[32];
      new SecureRandom().nextBytes(bytes);
    }
    this.salt = new SecretKeySpec(bytes, "HmacSHA256");
  }

  /** The id to log for {@code keyId} (null stays null). */
  public String of(String keyId) {
    if (keyId == null || keyId.startsWith(ApiKeys.ID_PREFIX)) {
      return keyId;
    }
    String id = ids.get(keyId);
    if (id == null) {
      id = hmac(keyId);
      if (ids.size() >= REMEMBERED) {
        ids.clear(); // config keys removed over many reloads: start over rather than grow
      }
      ids.put(keyId, id);
    }
    return id;
  }

  private String hmac(String keyId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(salt);
      byte[] digest = mac.doFinal(keyId.getBytes(StandardCharsets.UTF_8));
      return CONFIG_PREFIX + HexFormat.of().formatHex(digest, 0, 8);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }
}
