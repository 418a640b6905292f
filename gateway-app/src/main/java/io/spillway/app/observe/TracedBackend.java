package io.spillway.app.observe;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ForwardingBackend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.sse.EndingEventStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A backend whose every call is a client span, the child of the request's span, and whose upstream
 * request carries that span as its W3C {@code traceparent} (through
 * {@link RequestAttributes#TRACE_CONTEXT}). So a capacity answer from the cloud followed by a local
 * retry shows as two attempts under one request. A call outside a traced request (a warm-up, a
 * readiness check) is not traced.
 */
final class TracedBackend extends ForwardingBackend {
  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  private final Tracer tracer;
  private final String provider;
  private final CapacitySignal capacity;

  TracedBackend(Backend delegate, Tracer tracer, String provider, CapacitySignal capacity) {
    super(delegate);
    this.tracer = tracer;
    this.provider = provider;
    this.capacity = capacity;
  }

  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    Context parent = request.attribute(ObserveAttributes.TRACE);
    if (parent == null) {
      return delegateCall(request);
    }
    String model = request.model();
    Span span = tracer.spanBuilder(GenAi.spanName(request.route(), model))
        .setParent(parent)
        .setSpanKind(SpanKind.CLIENT)
        .setAttribute(GenAi.BACKEND, delegate.kind().tag())
        .setAttribute(GenAi.PROVIDER, provider)
        .startSpan();
    String operation = GenAi.operation(request.route());
    if (operation != null) {
      span.setAttribute(GenAi.OPERATION, operation);
    }
    if (model != null) {
      span.setAttribute(GenAi.REQUEST_MODEL, model);
    }
    Map<String, String> traceContext = new LinkedHashMap<>();
    W3C.inject(parent.with(span), traceContext, Map::put);
    request.setAttribute(RequestAttributes.TRACE_CONTEXT, traceContext);
    // The context is cleared once the call is over (a backend that runs on another thread reads it
    // there), so a later attempt of the same request never sends this span as its parent.
    return delegateCall(request)
        .whenComplete((response, failure) -> {
          request.setAttribute(RequestAttributes.TRACE_CONTEXT, null);
          if (failure != null) {
            failed(span, Blocking.cause(failure));
          }
        })
        .thenApply(response -> answered(request, response, span));
  }

  private static void failed(Span span, Throwable failure) {
    if (failure instanceof UpstreamException e) {
      fail(span, e.failure().name().toLowerCase(Locale.ROOT));
    } else if (failure instanceof GatewayException e) {
      fail(span, e.code() != null ? e.code() : e.kind().name().toLowerCase(Locale.ROOT));
    } else {
      fail(span, failure.getClass().getName());
    }
  }

  private GatewayResponse answered(GatewayRequest request, GatewayResponse response, Span span) {
    int status = response.status();
    span.setAttribute(GenAi.HTTP_STATUS, (long) status);
    if (!response.isStream() && capacity.isCapacity(request, response)) {
      span.setAttribute(GenAi.CAPACITY, true);
      span.setAttribute(GenAi.ERROR_TYPE, "capacity");
    } else if (status >= 400) {
      span.setAttribute(GenAi.ERROR_TYPE, Integer.toString(status));
    }
    if (status >= 500) {
      span.setStatus(StatusCode.ERROR);
    }
    if (!response.isStream()) {
      span.end();
      return response;
    }
    return response.withStream(new AttemptStream(response, span));
  }

  private static void fail(Span span, String errorType) {
    span.setAttribute(GenAi.ERROR_TYPE, errorType);
    span.setStatus(StatusCode.ERROR);
    span.end();
  }

  /** Ends the attempt's span when its stream ends, fails or is closed. */
  private static final class AttemptStream extends EndingEventStream {
    private final Span span;

    AttemptStream(GatewayResponse response, Span span) {
      super(response.stream());
      this.span = span;
    }

    @Override
    protected void ended(RuntimeException failure) {
      if (failure != null) {
        span.setAttribute(GenAi.ERROR_TYPE, "stream_error");
        span.setStatus(StatusCode.ERROR);
      }
      span.end();
    }
  }
}
