package io.spillway.app.observe;

import io.spillway.core.pipeline.Attribute;

/** Per-request state the metering stages hand to the request observer. */
final class ObserveAttributes {
  /** Nanoseconds spent in the terminal stage (the upstream part of the request). */
  static final Attribute<Long> UPSTREAM_NANOS = Attribute.of("observe.upstreamNanos");

  private ObserveAttributes() {}
}
