package io.spillway.app.observe;

import io.spillway.core.pipeline.Attribute;

/** Per-request state the metering stages hand to the request observer. */
final class ObserveAttributes {
  /** Nanoseconds spent in the terminal stage (the upstream part of the request). */
  static final Attribute<Long> UPSTREAM_NANOS = Attribute.of("observe.upstreamNanos");

  /** {prompt, completion} tokens a stream reported, seen before any stage strips the usage chunk. */
  static final Attribute<long[]> STREAM_USAGE = Attribute.of("observe.streamUsage");

  private ObserveAttributes() {}
}
