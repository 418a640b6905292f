package io.spillway.app.observe;

import io.opentelemetry.context.Context;
import io.spillway.core.pipeline.Attribute;

/** Per-request state the metering stages hand to the request observer. */
final class ObserveAttributes {
  /** Nanoseconds spent in the terminal stage (the upstream part of the request). */
  static final Attribute<Long> UPSTREAM_NANOS = Attribute.of("observe.upstreamNanos");

  /** The request span's context, set by the tracing stage: each backend attempt's span is its child. */
  static final Attribute<Context> TRACE = Attribute.of("observe.trace");

  /** The request's trace id (32 hex digits), for the access log; absent when tracing is off. */
  static final Attribute<String> TRACE_ID = Attribute.of("observe.traceId");

  private ObserveAttributes() {}
}
