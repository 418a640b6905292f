package io.spillway.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script read once from a classpath resource beside the class that runs it, with its SHA-1:
 * {@link RedisSession#eval} sends {@code EVALSHA} and only on {@code NOSCRIPT} (a Redis that
 * restarted, or was told {@code SCRIPT FLUSH}) the text, which Redis then caches again.
 *
 * <p>Immutable.
 */
public final class RedisScript {
  private final String name;
  private final String text;
  private final String sha;

  private RedisScript(String name, String text) {
    this.name = name;
    this.text = text;
    this.sha = sha1(text);
  }

  /**
   * The script in the resource {@code resource}, relative to {@code owner}'s package (as
   * {@link Class#getResourceAsStream} reads it).
   *
   * @throws IllegalStateException when the resource is missing: a packaging error, found at start
   */
  public static RedisScript load(Class<?> owner, String resource) {
    try (InputStream in = owner.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the Lua script " + resource + " is not on the classpath beside "
            + owner.getName());
      }
      return new RedisScript(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the Lua script " + resource, e);
    }
  }

  /** The resource's name, for messages. */
  public String name() {
    return name;
  }

  public String text() {
    return text;
  }

  /** The SHA-1 Redis knows the script by once it ran. */
  public String sha() {
    return sha;
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-1 is always available", e);
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
