package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.AnswerSummary;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.time.Ticker;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.MDC;

/**
 * The first stage of the pipeline, before parsing and authentication: counts and times every
 * request (a malformed one the parse stage refuses too), and writes its access-log line once the
 * answer is complete — for a stream, when the stream ends,
 * fails or the client goes away. Puts the request id in the logging MDC ({@code requestId}) while
 * the request runs, so every log line of the request carries it.
 *
 * <p>Never changes the request or the answer; it only wraps a stream to see it pass.
 */
public final class RequestObserverInterceptor implements Interceptor {
  private static final int MAX_COMPLETION_CHARS = 64 * 1024;

  private final GatewayMetrics metrics;
  private final AccessLog accessLog;
  private final Clock clock;
  private final Ticker ticker;
  private final LongSupplier maxReportedTokens;

  /**
   * @param maxReportedTokens {@code quota.maxReportedTokens} as configured now: a usage report with a
   *     count past it (or negative, fractional, a string) is not shown ({@link Usage})
   */
  public RequestObserverInterceptor(GatewayMetrics metrics, AccessLog accessLog, Clock clock, Ticker ticker,
      LongSupplier maxReportedTokens) {
    this.metrics = metrics;
    this.accessLog = accessLog;
    this.clock = clock;
    this.ticker = ticker;
    this.maxReportedTokens = maxReportedTokens;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    long start = ticker.read();
    boolean payloads = accessLog.payloads();
    ClientDisconnect disconnect = ClientDisconnect.of(request);
    // The request id is in the logs of the stages that run on this thread now; later ones log it themselves.
    MDC.put("requestId", request.id());
    try {
      return chain.proceed(request).handle((response, failure) -> {
        Observation o = new Observation(request, start, ticker.read(), payloads);
        if (failure != null) {
          Throwable cause = Blocking.cause(failure);
          if (cause instanceof GatewayException e) {
            o.finish(e.status(), clientGone(disconnect, null), clientGone(disconnect, errorName(e)), ticker.read());
          } else {
            o.finish(500, clientGone(disconnect, null), clientGone(disconnect, "internal"), ticker.read());
          }
          throw Blocking.rethrow(cause);
        }
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
      });
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
    /** The request as parsed (the client's model and body), or null when it was refused as malformed. */
    private GatewayRequest parsed;
    private final long start;
    private final long answeredAt;
    private final boolean payloads;
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile long firstByteAt = -1;
    private volatile long promptTokens = -1;
    private volatile long completionTokens = -1;
    private volatile int status;
    private String errorCode;
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
      // Usage and the error are read without a tree of the whole answer; only payload logging needs one.
      AnswerSummary answer = response.summary();
      if (!answer.json()) {
        return; // not an OpenAI JSON answer (e.g. /v1/models from a non-OpenAI server): no usage to read
      }
      if (!response.isSuccessful()) {
        JsonNode error = answer.error();
        String code = Json.text(error, "code");
        errorCode = code != null ? code : Json.text(error, "type");
        return;
      }
      long[] usage = Usage.of(answer.usage(), maxReportedTokens.getAsLong());
      promptTokens = usage[0];
      completionTokens = usage[1];
      if (payloads) {
        Completions.appendBuffered(response.json(), completion, MAX_COMPLETION_CHARS);
      }
    }

    void sawEvent(SseEvent event) {
      if (firstByteAt < 0) {
        firstByteAt = ticker.read();
      }
      long[] counts = Usage.ofEvent(event, maxReportedTokens.getAsLong());
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
      RequestOutcome what = RequestOutcome.of(request);
      RequestOutcome.Usage reported = what.usage(); // seen before token reporting took any usage chunk out
      if (reported != null && promptTokens < 0 && completionTokens < 0) {
        promptTokens = reported.promptTokens();
        completionTokens = reported.completionTokens();
      }
      parsed = request.attribute(RequestAttributes.PARSED);
      Caller caller = request.attribute(RequestAttributes.CALLER);
      String tier = caller == null ? "none" : caller.tier().name().toLowerCase(Locale.ROOT);
      String cacheStatus = what.cache() != null ? what.cache().tag() : "none";
      BackendKind answeredBy = what.answeredBy();
      String backendTag = metrics.backendTag(answeredBy);
      String model = parsed == null ? null : parsed.model();
      String resolvedOutcome = outcome != null ? outcome : outcome(finalStatus);
      boolean answeredByTheCloud = "success".equals(resolvedOutcome) && answeredBy == BackendKind.CLOUD;
      String modelTag = caller == null ? "none" : metrics.modelTag(model, answeredByTheCloud);
      String route = request.route().tag();
      Long upstream = request.attribute(ObserveAttributes.UPSTREAM_NANOS);
      long upstreamNanos = upstream == null ? 0 : upstream;
      long gatewayNanos = Math.max(0, (answeredAt - start) - upstreamNanos);
      long total = end - start;
      boolean stream = firstByteAt >= 0 || (parsed != null && parsed.stream());
      List<String> degraded = what.degraded();

      metrics.countRequest(route, backendTag, tier, modelTag, resolvedOutcome, statusClass(finalStatus));
      metrics.recordRequestDuration(route, backendTag, tier, stream, total);
      if (parsed != null) {
        metrics.recordGatewayDuration(route, gatewayNanos); // a refused malformed request has no gateway part
      }
      if (firstByteAt >= 0) {
        metrics.recordFirstByte(route, backendTag, firstByteAt - start);
      }
      metrics.countTokens(tier, backendTag, "prompt", promptTokens);
      metrics.countTokens(tier, backendTag, "completion", completionTokens);
      degraded.forEach(metrics::countDegraded);
      boolean timed = finalStatus >= 200 && finalStatus < 300
          && (answeredBy == BackendKind.CLOUD || answeredBy == BackendKind.LOCAL);
      metrics.series().recordRequest(answeredBy, timed ? (firstByteAt >= 0 ? firstByteAt - start : total) : -1);

      String outerId = MDC.get("requestId");
      MDC.put("requestId", request.id());
      try {
        accessLog.write(exchange(caller, tier, backendTag, model, finalStatus, resolvedOutcome, stream, total,
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
          payloads && parsed != null ? promptOf(parsed) : null,
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
   * Watches a stream pass: first byte, usage, and the end — normal, failed or cancelled. A stream
   * read on the request's own thread is finished there: a {@link #close} from another thread (client
   * gone) only marks it cancelled, and the request thread finishes it when its read returns, so
   * nothing reads the observation while that thread still adds to it. A non-blocking stream is
   * polled on an event loop and closed only once polling has stopped, so whichever sees the end
   * first finishes it (on the loop that costs the in-memory meters and one access log line).
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
    public SseEvent poll() {
      SseEvent event;
      try {
        event = delegate.poll();
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
      } else if (event != SseEvent.PENDING) {
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
        if (delegate.nonBlocking() || Thread.currentThread() == owner) {
          finish(cutOutcome(), cause.code());
        }
      }
    }

    private static boolean isLast(SseEvent event) {
      return event.isDone() || event.nameIs("response.completed") || event.nameIs("response.incomplete")
          || event.nameIs("response.failed");
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

  @Override
  public boolean mayBlock() {
    return false;
  }
}
