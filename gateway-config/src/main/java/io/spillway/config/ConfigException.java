package io.spillway.config;

/**
 * A config that cannot be used; the message names the file, the key and why. {@link #unreadable()}
 * tells a file that could not be read at all (missing, no permission) from one read and found wrong.
 */
public final class ConfigException extends RuntimeException {
  private final boolean unreadable;

  public ConfigException(String message) {
    this(message, null, false);
  }

  public ConfigException(String message, Throwable cause) {
    this(message, cause, false);
  }

  private ConfigException(String message, Throwable cause, boolean unreadable) {
    super(message, cause);
    this.unreadable = unreadable;
  }

  /** The file could not be read: {@code message} names it and why. */
  public static ConfigException unreadable(String message, Throwable cause) {
    return new ConfigException(message, cause, true);
  }

  /** Whether the file could not be read at all, rather than read and found wrong. */
  public boolean unreadable() {
    return unreadable;
  }
}
