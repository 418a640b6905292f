package io.spillway.config;

import java.time.Duration;

/**
 * The response store: what Spillway keeps of Responses API exchanges so that a conversation that
 * relies on stored state ({@code previous_response_id}, {@code item_reference}) continues on
 * whichever backend serves its next turn. It lives where the usage store lives ({@code store}: a
 * file beside the usage file, or Redis for a fleet).
 *
 * @param enabled whether exchanges are kept at all (default true); off, nothing is kept and the local
 *     backend refuses stored state as {@code unsupported_on_local}
 * @param maxBytesPerTeam the most a team's stored responses may take (default 64MiB); past it the
 *     oldest are forgotten first
 * @param ttl how long a stored response is kept (default 30d, as OpenAI keeps them)
 * @param maxChain the longest {@code previous_response_id} chain expanded (default 1000 turns)
 */
public record ResponsesConfig(Boolean enabled, DataSize maxBytesPerTeam, Duration ttl, Integer maxChain) {
  public static final ResponsesConfig DEFAULTS = new ResponsesConfig(null, null, null, null);

  public ResponsesConfig {
    enabled = enabled != null ? enabled : true;
    maxBytesPerTeam = maxBytesPerTeam != null ? maxBytesPerTeam : DataSize.ofMebibytes(64);
    ttl = ttl != null ? ttl : Duration.ofDays(30);
    maxChain = maxChain != null ? maxChain : 1000;
    ConfigProblems.Reporter at = ConfigProblems.at("responses");
    if (maxBytesPerTeam.bytes() < 1024) {
      at.problem("maxBytesPerTeam", "must be at least 1KiB");
    }
    at.positive("ttl", ttl, "must be positive");
    at.atLeast("maxChain", maxChain, 1);
  }
}
