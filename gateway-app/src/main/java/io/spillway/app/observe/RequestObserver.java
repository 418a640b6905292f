package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.time.Ticker;
import io.spillway.routing.cloud.CloudBackend;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.MDC;

/**
 * The first stage of the pipeline, before authentication: counts and times every request, and
 * writes its access-log line once the answer is complete — for a stream, when the stream ends,
 * fails or the client goes away. Puts the request id in the logging MDC ({@code requestId}) while
 * the request runs, so every log line of the request carries it.
 *
 * <p>Never changes the request or the answer; it only wraps a stream to see it pass.
 */
public final class RequestObserver implements Interceptor {
  /** The response header by which the cache stage says {@code hit}, {@code miss} or {@code joined}. */
  public static final String CACHE_HEADER = "x-spillway-cache";
  private static final int MAX_COMPLETION_CHARS = 64 * 1024;

  /** Whether the current request reached this stage; read by {@link #rejections}. */
  private static final ThreadLocal<Boolean> ENTERED = new ThreadLocal<>();

  private final GatewayMetrics metrics;
  private final AccessLog accessLog;
  private final Clock clock;
  private final Ticker ticker;

  public RequestObserver(GatewayMetrics metrics, AccessLog accessLog, Clock clock, Ticker ticker) {
    this.metrics = metrics;
    this.accessLog = accessLog;
    this.clock = clock;
    this.ticker = ticker;
  }

  @Override
  public GatewayResponse intercept(Chain chain) {
    GatewayRequest request = chain.request();
    ENTERED.set(Boolean.TRUE);
    long start = ticker.read();
    boolean payloads = accessLog.payloads();
    MDC.put("requestId", request.id());
    try {
      ClientDisconnect disconnect = ClientDisconnect.of(request);
      GatewayResponse response;
      try {
        response = chain.proceed(request);
      } catch (GatewayException e) {
        Observation o = new Observation(request, start, ticker.read(), payloads);
        o.finish(e.status(), clientGone(disconnect, null), clientGone(disconnect, errorName(e)), ticker.read());
        throw e;
      } catch (RuntimeException e) {
        Observation o = new Observation(request, start, ticker.read(), payloads);
        o.finish(500, clientGone(disconnect, null), clientGone(disconnect, "internal"), ticker.read());
        throw e;
      }
      Observation o = new Observation(request, start, ticker.read(), payloads);
      o.cache = response.headers().get(CACHE_HEADER);
      if (response.isStream()) {
        o.status = response.status();
        return response.withStream(new ObservedStream(response.stream(), o, disconnect));
      }
      o.readBufferedAnswer(response);
      if (disconnect.happened()) {
        // Answered after its client left: nobody receives it, whatever its status.
        o.finish(response.status(), "cancelled", "client_closed", ticker.read());
      } else {
        o.finish(response.status(), outcome(response.status()), o.errorCode, ticker.read());
      }
      return response;
    } finally {
      MDC.remove("requestId");
    }
  }

  /**
   * A stage to place inside any stage that may strip the usage chunk from a stream (quota's token
   * report does when the client did not ask for usage): it notes the stream's usage for this
   * observer's log line and metrics, and changes nothing.
   */
  public Interceptor usageTap() {
    return chain -> {
      GatewayRequest request = chain.request();
      GatewayResponse response = chain.proceed(request);
      if (!response.isStream()) {
        return response;
      }
      return response.withStream(new ForwardingEventStream(response.stream()) {
        @Override
        public SseEvent next() {
          SseEvent event = delegate.next();
          if (event != null) {
            long[] usage = Usage.ofEvent(event);
            if (usage != null) {
              request.setAttribute(ObserveAttributes.STREAM_USAGE, usage);
            }
          }
          return event;
        }
      });
    };
  }

  /**
   * Wraps an endpoint so that a request it refuses before the pipeline runs (unparseable JSON, wrong
   * content type, a missing field) is counted and logged like every other one.
   */
  public HttpService rejections(Route route, HttpService endpoint) {
    return request -> {
      ENTERED.remove();
      long start = ticker.read();
      try {
        return endpoint.serve(request);
      } catch (GatewayException e) {
        if (ENTERED.get() == null) {
          rejected(route, request, e, ticker.read() - start);
        }
        throw e;
      } finally {
        ENTERED.remove();
      }
    };
  }

  private void rejected(Route route, ServerRequest request, GatewayException e, long nanos) {
    String tag = route.tag();
    metrics.countRequest(tag, "none", "none", "none", outcome(e.status()), statusClass(e.status()));
    metrics.recordRequestDuration(tag, "none", "none", false, nanos);
    metrics.series().recordRequest();
    MDC.put("requestId", request.requestId());
    try {
      accessLog.write(new Exchange(clock.instant(), request.requestId(), tag, null, null, null, "none", null,
          e.status(), outcome(e.status()), false, nanos, nanos, 0, -1, -1, -1, List.of(), "none",
          errorName(e), null, null, null, null));
    } finally {
      MDC.remove("requestId");
    }
  }

  /**
   * For a request whose client has gone: the {@code cancelled} outcome, or the {@code client_closed}
   * error; else {@code otherwise}.
   */
  private static String clientGone(ClientDisconnect disconnect, String otherwise) {
    if (!disconnect.happened()) {
      return otherwise;
    }
    return otherwise == null ? "cancelled" : "client_closed";
  }

  /** The OpenAI error code the client sees, else the kind of failure. */
  private static String errorName(GatewayException e) {
    return e.code() != null ? e.code() : e.kind().name().toLowerCase(Locale.ROOT);
  }

  static String statusClass(int status) {
    return status >= 100 && status < 600 ? (status / 100) + "xx" : "other";
  }

  static String outcome(int status) {
    if (status >= 200 && status < 300) {
      return "success";
    }
    if (status == 429) {
      return "rate_limited";
    }
    if (status >= 400 && status < 500) {
      return "client_error";
    }
    if (status == 503) {
      return "unavailable";
    }
    return status >= 500 ? "server_error" : "other";
  }

  /** What is known about one request while it is answered; finished exactly once. */
  private final class Observation {
    private final GatewayRequest request;
    private final long start;
    private final long answeredAt;
    private final boolean payloads;
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile long firstByteAt = -1;
    private volatile long promptTokens = -1;
    private volatile long completionTokens = -1;
    private volatile int status;
    private String errorCode;
    private String cache;
    private final StringBuilder completion;

    Observation(GatewayRequest request, long start, long answeredAt, boolean payloads) {
      this.request = request;
      this.start = start;
      this.answeredAt = answeredAt;
      this.payloads = payloads;
      this.completion = payloads ? new StringBuilder() : null;
    }

    /** Usage (and the completion, with payload logging) of a success; the error code of a failure. */
    void readBufferedAnswer(GatewayResponse response) {
      byte[] body = response.body();
      if (body == null || body.length == 0) {
        return;
      }
      String type = response.headers().get("content-type");
      if (type != null && !type.contains("json")) {
        return;
      }
      JsonNode answer = response.json();
      if (answer == null) {
        return; // not an OpenAI JSON answer (e.g. /v1/models from a non-OpenAI server): no usage to read
      }
      if (!response.isSuccessful()) {
        JsonNode error = answer.path("error");
        String code = Json.text(error, "code");
        errorCode = code != null ? code : Json.text(error, "type");
        return;
      }
      long[] usage = Usage.of(answer.get("usage"));
      promptTokens = usage[0];
      completionTokens = usage[1];
      if (payloads) {
        Completions.appendBuffered(answer, completion, MAX_COMPLETION_CHARS);
      }
    }

    void sawEvent(SseEvent event) {
      if (firstByteAt < 0) {
        firstByteAt = ticker.read();
      }
      long[] counts = Usage.ofEvent(event);
      if (counts != null) {
        promptTokens = counts[0];
        completionTokens = counts[1];
      }
      if (payloads && !event.isDone()) {
        Completions.appendStreamed(event, completion, MAX_COMPLETION_CHARS);
      }
    }

    void finish(int finalStatus, String outcome, String error, long end) {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      long[] tapped = request.attribute(ObserveAttributes.STREAM_USAGE);
      if (tapped != null && promptTokens < 0 && completionTokens < 0) {
        promptTokens = tapped[0];
        completionTokens = tapped[1];
      }
      Caller caller = request.attribute(RequestAttributes.CALLER);
      String tier = caller == null ? "none" : caller.tier().name().toLowerCase(Locale.ROOT);
      String cacheStatus = cache != null ? cache : "none";
      String backend = request.attribute(RequestAttributes.BACKEND);
      if (backend == null) {
        backend = "hit".equals(cacheStatus) ? "cache" : "none";
      }
      String backendTag = metrics.backendTag(backend);
      String model = request.model();
      String resolvedOutcome = outcome != null ? outcome : outcome(finalStatus);
      boolean answeredByTheCloud = "success".equals(resolvedOutcome) && CloudBackend.NAME.equals(backend);
      String modelTag = caller == null ? "none" : metrics.modelTag(model, answeredByTheCloud);
      String route = request.route().tag();
      Long upstream = request.attribute(ObserveAttributes.UPSTREAM_NANOS);
      long upstreamNanos = upstream == null ? 0 : upstream;
      long gatewayNanos = Math.max(0, (answeredAt - start) - upstreamNanos);
      long total = end - start;
      boolean stream = firstByteAt >= 0 || request.stream();
      List<String> degraded = request.attribute(RequestAttributes.DEGRADED, List.of());

      metrics.countRequest(route, backendTag, tier, modelTag, resolvedOutcome, statusClass(finalStatus));
      metrics.recordRequestDuration(route, backendTag, tier, stream, total);
      metrics.recordGatewayDuration(route, gatewayNanos);
      if (firstByteAt >= 0) {
        metrics.recordFirstByte(route, backendTag, firstByteAt - start);
      }
      metrics.countTokens(tier, backendTag, "prompt", promptTokens);
      metrics.countTokens(tier, backendTag, "completion", completionTokens);
      degraded.forEach(metrics::countDegraded);
      metrics.series().recordRequest();

      String outerId = MDC.get("requestId");
      MDC.put("requestId", request.id());
      try {
        accessLog.write(exchange(caller, tier, backend, model, finalStatus, resolvedOutcome, stream, total,
            gatewayNanos, upstreamNanos, degraded, cacheStatus, error));
      } finally {
        if (outerId == null) {
          MDC.remove("requestId");
        } else {
          MDC.put("requestId", outerId);
        }
      }
    }

    private Exchange exchange(Caller caller, String tier, String backend, String model, int finalStatus,
        String resolvedOutcome, boolean stream, long total, long gatewayNanos, long upstreamNanos,
        List<String> degraded, String cacheStatus, String error) {
      return new Exchange(
          clock.instant(),
          request.id(),
          request.route().tag(),
          caller == null ? null : caller.team(),
          caller == null ? null : tier,
          caller == null ? null : caller.keyId(),
          backend,
          model == null ? null : (model.length() > 100 ? model.substring(0, 100) : model),
          finalStatus,
          resolvedOutcome,
          stream,
          total,
          gatewayNanos,
          upstreamNanos,
          firstByteAt >= 0 ? firstByteAt - start : -1,
          promptTokens,
          completionTokens,
          degraded,
          cacheStatus,
          error,
          payloads ? promptOf(request) : null,
          payloads ? completion.toString() : null,
          costOf(request),
          request.attribute(ObserveAttributes.TRACE_ID));
    }
  }

  private static Double costOf(GatewayRequest request) {
    AtomicReference<Double> cost = request.attribute(RequestAttributes.COST_USD);
    return cost == null ? null : cost.get();
  }

  private static JsonNode promptOf(GatewayRequest request) {
    ObjectNode prompt = Json.object();
    for (String field : new String[] {"instructions", "messages", "prompt", "input"}) {
      JsonNode value = request.body().get(field);
      if (value != null) {
        prompt.set(field, value.deepCopy());
      }
    }
    return prompt;
  }

  /**
   * Watches a stream pass: first byte, usage, and the end — normal, failed or cancelled. The line is
   * written on the request's own thread: a {@link #close} from the event loop (client gone) only
   * marks the stream cancelled, and the request thread finishes it when its read returns.
   */
  private final class ObservedStream extends ForwardingEventStream {
    private final Observation observation;
    private final ClientDisconnect disconnect;
    private final Thread owner = Thread.currentThread();
    private volatile boolean cancelled;
    private volatile CloseCause cause = CloseCause.CLIENT_CLOSED;
    /** The stream's last event ({@code [DONE]}, or a Responses API terminal event) was relayed. */
    private volatile boolean complete;

    ObservedStream(EventStream delegate, Observation observation, ClientDisconnect disconnect) {
      super(delegate);
      this.observation = observation;
      this.disconnect = disconnect;
    }

    @Override
    public SseEvent next() {
      SseEvent event;
      try {
        event = delegate.next();
      } catch (GatewayException e) {
        // A stream the gateway cut, or a read that fails because the client left (its upstream call was
        // cancelled), is not the upstream's failure.
        finish(cancelled ? cutOutcome() : disconnect.happened() ? "cancelled" : "stream_error",
            cancelled ? cause.code() : clientGone(disconnect, errorName(e)));
        throw e;
      } catch (RuntimeException e) {
        finish(cancelled || disconnect.happened() ? "cancelled" : "stream_error", clientGone(disconnect, "internal"));
        throw e;
      }
      if (event == null) {
        finish(cancelled ? cutOutcome() : null, cancelled ? cause.code() : null);
      } else {
        observation.sawEvent(event);
        if (isLast(event)) {
          complete = true;
        }
      }
      return event;
    }

    @Override
    public void close() {
      if (!cancelled) {
        cause = CloseCause.current();
      }
      cancelled = true;
      try {
        delegate.close();
      } finally {
        if (Thread.currentThread() == owner) {
          finish(cutOutcome(), cause.code());
        }
      }
    }

    private static boolean isLast(SseEvent event) {
      return event.isDone() || "response.completed".equals(event.event())
          || "response.incomplete".equals(event.event()) || "response.failed".equals(event.event());
    }

    /** A stream the gateway cut at its time limit failed; one the client left was cancelled. */
    private String cutOutcome() {
      return cause == CloseCause.STREAM_TIME_LIMIT ? "stream_error" : "cancelled";
    }

    /**
     * Once the last event was relayed the client has its whole answer: a client that hangs up right
     * after it (as the Codex CLI does after {@code response.completed}), or a read failing after it,
     * does not make that answer a cancellation or a failure.
     */
    private void finish(String outcome, String error) {
      boolean whole = complete && cause != CloseCause.STREAM_TIME_LIMIT;
      observation.finish(observation.status, whole ? null : outcome, whole ? null : error, ticker.read());
    }
  }
}
