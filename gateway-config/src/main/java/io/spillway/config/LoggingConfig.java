package io.spillway.config;

/**
 * Request logs.
 *
 * @param json one JSON line per request (else a plain text line)
 * @param payloads also log prompts and completions; off by default, and never keys
 * @param keyIdSalt a secret under which a config key's id in the access log is keyed (HMAC), so
 *     the log gives no help guessing a weak key; none (the default): a random one per process
 */
public record LoggingConfig(Boolean json, Boolean payloads, String keyIdSalt) {
  public static final LoggingConfig DEFAULTS = new LoggingConfig(null, null, null);

  public LoggingConfig {
    keyIdSalt = keyIdSalt == null || keyIdSalt.isEmpty() ? null : keyIdSalt;
    json = json != null ? json : true;
    payloads = payloads != null ? payloads : false;
  }
}
