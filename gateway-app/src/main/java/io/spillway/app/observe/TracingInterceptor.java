package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Opens the request's server span, as the child of the client's W3C {@code traceparent} when it sent
 * one, and ends it once the answer is complete — for a stream, when the stream ends, fails or is
 * cut. The span's context travels to the backend attempts as a request attribute; its trace id goes
 * to the access log.
 */
final class TracingInterceptor implements Interceptor {
  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  private final Tracer tracer;
  private final Function<BackendKind, String> providers;
  private final LongSupplier maxReportedTokens;

  /**
   * @param providers the {@code gen_ai.provider.name} of a backend, by its kind
   * @param maxReportedTokens {@code quota.maxReportedTokens} as configured now: a usage report with a
   *     count past it (or negative, fractional, a string) is not recorded ({@link Usage})
   */
  TracingInterceptor(Tracer tracer, Function<BackendKind, String> providers, LongSupplier maxReportedTokens) {
    this.tracer = tracer;
    this.providers = providers;
    this.maxReportedTokens = maxReportedTokens;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Context parent = W3C.extract(Context.root(), request.headers(), HeaderGetter.INSTANCE);
    String model = request.model();
    String operation = GenAi.operation(request.route());
    Span span = tracer.spanBuilder(GenAi.spanName(request.route(), model))
        .setParent(parent)
        .setSpanKind(SpanKind.SERVER)
        .setAttribute(GenAi.HTTP_METHOD, request.route().method())
        .setAttribute(GenAi.HTTP_ROUTE, request.route().path())
        .setAttribute(GenAi.REQUEST_ID, request.id())
        .startSpan();
    if (operation != null) {
      span.setAttribute(GenAi.OPERATION, operation);
    }
    if (model != null) {
      span.setAttribute(GenAi.REQUEST_MODEL, model);
    }
    span.setAttribute(GenAi.STREAM, request.stream());
    request.setAttribute(ObserveAttributes.TRACE, Context.root().with(span));
    if (span.getSpanContext().isValid()) {
      request.setAttribute(ObserveAttributes.TRACE_ID, span.getSpanContext().getTraceId());
    }
    RequestSpan requestSpan = new RequestSpan(span, request, providers, maxReportedTokens.getAsLong());
    return chain.proceed(request).handle((response, failure) -> {
      if (failure != null) {
        Throwable cause = Blocking.cause(failure);
        if (cause instanceof GatewayException e) {
          requestSpan.failed(e.status(), e.code() != null ? e.code() : e.kind().name().toLowerCase(Locale.ROOT));
        } else {
          requestSpan.failed(500, cause.getClass().getName());
        }
        throw Blocking.rethrow(cause);
      }
      requestSpan.status = response.status();
      if (response.isStream()) {
        return response.withStream(new TracedStream(response.stream(), requestSpan));
      }
      requestSpan.readBufferedAnswer(response);
      requestSpan.end(null);
      return response;
    });
  }

  /** The request's span while it is answered; ended exactly once. */
  private static final class RequestSpan {
    private final Span span;
    private final GatewayRequest request;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile int status;
    private volatile String responseModel;
    /** The error code of a non-2xx buffered answer, for {@code error.type}. */
    private volatile String errorType;
    private volatile long inputTokens = -1;
    private volatile long outputTokens = -1;
    private final List<String> finishReasons = new ArrayList<>();
    private final Function<BackendKind, String> providers;
    private final long maxReportedTokens;

    RequestSpan(Span span, GatewayRequest request, Function<BackendKind, String> providers, long maxReportedTokens) {
      this.span = span;
      this.request = request;
      this.providers = providers;
      this.maxReportedTokens = maxReportedTokens;
    }

    void failed(int status, String errorType) {
      this.status = status;
      end(errorType);
    }

    void readBufferedAnswer(GatewayResponse response) {
      byte[] body = response.body();
      String type = response.headers().get("content-type");
      if (body == null || body.length == 0 || (type != null && !type.contains("json"))) {
        return;
      }
      JsonNode answer = response.json();
      if (answer == null) {
        return;
      }
      if (!response.isSuccessful()) {
        JsonNode error = answer.path("error");
        String code = Json.text(error, "code");
        errorType = code != null ? code : Json.text(error, "type");
        return;
      }
      responseModel = GenAi.text(answer, "model");
      long[] usage = Usage.of(answer.get("usage"), maxReportedTokens);
      inputTokens = usage[0];
      outputTokens = usage[1];
      synchronized (finishReasons) {
        finishReasons.addAll(GenAi.finishReasons(answer));
      }
    }

    /** Reads what a stream event says about the answer: its model, usage and finish reasons. */
    void sawEvent(SseEvent event) {
      if (event.isDone()) {
        return;
      }
      long[] usage = Usage.ofEvent(event, maxReportedTokens);
      if (usage != null) {
        inputTokens = usage[0];
        outputTokens = usage[1];
      }
      String data = event.data();
      boolean terminal = event.event() != null && event.event().startsWith("response.")
          && (event.event().endsWith(".completed") || event.event().endsWith(".incomplete")
              || event.event().endsWith(".failed"));
      boolean mayFinish = namesAFinishReason(data);
      if (responseModel == null || terminal || mayFinish) {
        JsonNode chunk;
        try {
          chunk = Json.parse(data);
        } catch (IOException | RuntimeException e) {
          return;
        }
        JsonNode answer = chunk.has("response") ? chunk.get("response") : chunk;
        if (responseModel == null) {
          responseModel = GenAi.text(answer, "model");
        }
        if (terminal || mayFinish) {
          synchronized (finishReasons) {
            finishReasons.addAll(GenAi.finishReasons(answer));
          }
        }
      }
    }

    /** Whether the chunk names a finish reason ({@code "finish_reason": "<text>"}): most carry it as null. */
    private static boolean namesAFinishReason(String data) {
      return SseEvent.hasValueStartingWith(data, "\"finish_reason\"", '"');
    }

    void end(String error) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      RequestOutcome outcome = RequestOutcome.of(request);
      RequestOutcome.Usage reported = outcome.usage();
      if (reported != null && inputTokens < 0 && outputTokens < 0) {
        inputTokens = reported.promptTokens();
        outputTokens = reported.completionTokens();
      }
      Caller caller = request.attribute(RequestAttributes.CALLER);
      if (caller != null) {
        span.setAttribute(GenAi.TIER, caller.tier().name().toLowerCase(Locale.ROOT));
        span.setAttribute(GenAi.TEAM, caller.team());
      }
      BackendKind backend = outcome.answeredBy();
      String cacheStatus = outcome.cache() != null ? outcome.cache().tag() : "none";
      if (backend != null) {
        span.setAttribute(GenAi.BACKEND, backend.tag());
      }
      String provider = backend == null ? null : providers.apply(backend);
      if (provider != null) {
        span.setAttribute(GenAi.PROVIDER, provider);
      }
      span.setAttribute(GenAi.CACHE, cacheStatus);
      span.setAttribute(GenAi.DEGRADED, outcome.degraded());
      if (responseModel != null) {
        span.setAttribute(GenAi.RESPONSE_MODEL, responseModel);
      }
      if (inputTokens >= 0) {
        span.setAttribute(GenAi.INPUT_TOKENS, inputTokens);
      }
      if (outputTokens >= 0) {
        span.setAttribute(GenAi.OUTPUT_TOKENS, outputTokens);
      }
      synchronized (finishReasons) {
        if (!finishReasons.isEmpty()) {
          span.setAttribute(GenAi.FINISH_REASONS, List.copyOf(finishReasons));
        }
      }
      if (status > 0) {
        span.setAttribute(GenAi.HTTP_STATUS, (long) status);
      }
      String failure = error != null ? error : errorType;
      if (status >= 500 || error != null) {
        span.setStatus(StatusCode.ERROR);
      }
      if (failure != null && (status >= 400 || error != null)) {
        span.setAttribute(GenAi.ERROR_TYPE, failure);
      }
      span.end();
    }
  }

  /** Watches the answer's events pass and ends the span when the stream is over. */
  private static final class TracedStream extends ForwardingEventStream {
    private final RequestSpan span;
    private final Thread owner = Thread.currentThread();

    TracedStream(EventStream delegate, RequestSpan span) {
      super(delegate);
      this.span = span;
    }

    @Override
    public SseEvent poll() {
      SseEvent event;
      try {
        event = delegate.poll();
      } catch (GatewayException e) {
        span.end(e.code() != null ? e.code() : "stream_error");
        throw e;
      } catch (RuntimeException e) {
        span.end("stream_error");
        throw e;
      }
      if (event == null) {
        span.end(null);
      } else if (event != SseEvent.PENDING) {
        span.sawEvent(event);
      }
      return event;
    }

    /**
     * A close from another thread (the client went away) of a stream read on the request's thread
     * only closes it: that thread's read then fails or ends, and ends the span there. A non-blocking
     * stream is closed once polling has stopped, so its close ends the span unless its end did.
     */
    @Override
    public void close() {
      try {
        delegate.close();
      } finally {
        if (delegate.nonBlocking() || Thread.currentThread() == owner) {
          span.end(null);
        }
      }
    }
  }

  /** Reads W3C trace context from the client's headers. */
  private enum HeaderGetter implements TextMapGetter<Headers> {
    INSTANCE;

    @Override
    public Iterable<String> keys(Headers headers) {
      List<String> names = new ArrayList<>(headers.size());
      for (int i = 0; i < headers.size(); i++) {
        names.add(headers.name(i));
      }
      return names;
    }

    @Override
    public String get(Headers headers, String key) {
      return headers == null ? null : headers.get(key);
    }
  }

  @Override
  public boolean mayBlock() {
    return false;
  }
}
