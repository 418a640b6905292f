package io.spillway.config;

/**
 * Request logs.
 *
 * @param json one JSON line per request (else a plain text line)
 * @param payloads also log prompts and completions; off by default, and never keys
 */
public record LoggingConfig(Boolean json, Boolean payloads) {
  public static final LoggingConfig DEFAULTS = new LoggingConfig(null, null);

  public LoggingConfig {
    json = json != null ? json : true;
    payloads = payloads != null ? payloads : false;
  }
}
