package io.spillway.quota.keys;

import io.spillway.config.KeyConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The one way a gateway key is hashed: {@code sha256:<hex of SHA-256 over the UTF-8 key>}. */
public final class KeyHashes {
  public static final String PREFIX = "sha256:";
  /**
   * Cloned per use: looking SHA-256 up among the security providers on every request cost more than
   * hashing the key.
   */
  private static final MessageDigest SHA_256 = sha256();

  private KeyHashes() {}

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is always available", e);
    }
  }

  public static String hash(String key) {
    return PREFIX + HexFormat.of().formatHex(digest(key));
  }

  /** The same entry with a plain {@code key} replaced by its {@code keyHash}, so nothing keeps the key. */
  public static KeyConfig hashed(KeyConfig entry) {
    if (entry.key() == null || entry.key().isEmpty()) {
      return entry;
    }
    return new KeyConfig(null, hash(entry.key()), entry.team(), entry.tier(), entry.models());
  }

  static byte[] digest(String key) {
    MessageDigest digest;
    try {
      digest = (MessageDigest) SHA_256.clone();
    } catch (CloneNotSupportedException e) {
      digest = sha256(); // a provider whose digest cannot be cloned
    }
    return digest.digest(key.getBytes(StandardCharsets.UTF_8));
  }

  static byte[] parse(String keyHash) {
    return HexFormat.of().parseHex(keyHash.substring(PREFIX.length()));
  }

  /** A short, non-secret fingerprint of a key hash, safe for logs and admin views. */
  static String fingerprint(byte[] digest) {
    return HexFormat.of().formatHex(digest, 0, 4);
  }
}
