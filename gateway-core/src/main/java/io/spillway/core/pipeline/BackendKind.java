package io.spillway.core.pipeline;

import java.util.Locale;

/**
 * Which kind of backend served (or refused) a request: the cloud, the local GPU servers, or the
 * response cache. Code compares kinds, never names; the lower-case {@link #tag()} is what the wire
 * says ({@code x-spillway-backend}, the access log's {@code backend} field, metric tags).
 */
public enum BackendKind {
  /** A cloud route's OpenAI-compatible upstream. */
  CLOUD,
  /** The local GPU servers. */
  LOCAL,
  /** The response cache answered; no backend ran. */
  CACHE;

  /** The wire spelling: {@code cloud}, {@code local} or {@code cache}. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
