package io.spillway.upstream;

import io.spillway.core.Version;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.ForwardedHeaders;
import io.spillway.core.http.Headers;
import io.spillway.core.http.Via;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.UpstreamTarget;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.RequestIds;
import io.spillway.core.sse.EventStream;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamEventStream;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import java.net.URI;
import java.util.function.BiConsumer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import okhttp3.HttpUrl;

/**
 * An OpenAI-compatible endpoint (the cloud, or a local vLLM / llama.cpp / Ollama {@code /v1}),
 * called over the data path's client ({@link UpstreamHttp}, Netty on the front end's event loops):
 * forwards the request as the client sent it, with the configured key instead of the
 * client's, a fresh {@code X-Request-ID} per attempt, Spillway's User-Agent, and {@code Via} with
 * Spillway's entry appended (see {@link Via}).
 *
 * <p>Upstream HTTP errors come back as responses with the upstream's status and an OpenAI error
 * body (the upstream's own when it sent one); transport failures, a 2xx answer that is not a JSON
 * object, an answer over {@code maxResponseSize} and a 401 for the gateway's own key are thrown as
 * {@link UpstreamException}. Client header values that are not visible ASCII are not forwarded. One instance serves all requests; it shares
 * nothing with other instances.
 */
public final class OpenAiHttpBackend implements Backend {
  private final BackendKind kind;
  private final String name;
  private final UpstreamSettings config;
  private final UpstreamDialect dialect;
  /** Each route's upstream URL, parsed once (parsing and IDN-checking it per call was ~3% of CPU). */
  private final Map<Route, URI> uris = new EnumMap<>(Route.class);
  /** The data path's client (the front end's event loops). */
  private final UpstreamHttp http;

  /** A backend addressed as OpenAI does, making its calls over {@code http}. */
  public OpenAiHttpBackend(BackendKind kind, UpstreamSettings config, UpstreamHttp http) {
    this(kind, config, UpstreamDialect.OPENAI, http);
  }

  /**
   * A backend addressed in {@code dialect} (OpenAI's own, or Azure OpenAI's deployment URLs) that
   * makes its calls over {@code http}, the data path's client on the front end's event loops.
   */
  public OpenAiHttpBackend(BackendKind kind, UpstreamSettings config, UpstreamDialect dialect, UpstreamHttp http) {
    this.kind = kind;
    this.name = kind.tag();
    this.config = config;
    this.dialect = dialect;
    this.http = Objects.requireNonNull(http, "http");
    if (!dialect.urlPerModel()) {
      for (Route route : Route.values()) {
        HttpUrl url = dialect.url(config.baseUrl(), route, null);
        if (url != null) {
          uris.put(route, url.uri());
        }
      }
    }
  }

  @Override
  public BackendKind kind() {
    return kind;
  }

  /**
   * The answer, without blocking: the stage completes on the event loop that received the head
   * (for a buffered answer: its whole body), and no thread waits meanwhile.
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    try {
      return exchange(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Makes the call over the data path's client. The exchange runs on the client connection's event
   * loop, and so does everything after its head: the stage completes there, with a stream that is
   * then read from that loop.
   */
  private CompletableFuture<GatewayResponse> exchange(GatewayRequest request) {
    boolean stream = request.stream();
    UpstreamTarget target = request.attribute(UpstreamTarget.KEY);
    URI uri = target != null ? URI.create(config.baseUrl() + target.path()) : uri(request);
    Headers.Builder headers = Headers.builder();
    upstreamHeaders(request, headers::add);
    boolean post = target == null && request.route().hasBody();
    byte[] body = target != null ? target.body() : post ? request.bodyBytes() : null;
    if (body != null) {
      headers.set("Content-Type", "application/json");
      if (stream) {
        headers.set("Accept", "text/event-stream");
      }
    }
    String method = target != null ? target.method() : post ? "POST" : "GET";
    UpstreamExchange exchange = http.send(new OutboundRequest(name, method, uri,
        headers.build(), body, config.connectTimeout(),
        config.timeout(), stream ? null : config.timeout(), request.attribute(RequestAttributes.CONNECTION_LOOP),
        config.h2c()));
    ClientDisconnect.of(request).onDisconnect(exchange::cancel);
    return exchange.head().thenCompose(head -> answer(request, exchange, head));
  }

  /** What the head (and, unless it opens a stream, the whole body) of an exchange answers. */
  private CompletableFuture<GatewayResponse> answer(GatewayRequest request, UpstreamExchange exchange, UpstreamHead head) {
    if (head.status() == 401) {
      exchange.cancel();
      throw credentialsRejected();
    }
    boolean stream = request.stream();
    Headers answerHeaders = responseHeaders(head.headers());
    String contentType = head.header("content-type");
    boolean success = head.status() >= 200 && head.status() < 300;
    if (stream && success && contentType != null && contentType.startsWith("text/event-stream")) {
      return CompletableFuture.completedFuture(GatewayResponse.streamed(head.status(), answerHeaders,
          new UpstreamEventStream(name, exchange, config.timeout(), () -> {})));
    }
    // A stream call has no whole-call limit of its own: its one JSON body is bounded here.
    Runnable whole = stream ? exchange.schedule(config.timeout(), exchange::cancel) : () -> {};
    return UpstreamCalls.readAllAsync(exchange.body(), config.maxResponseSize().bytes())
        .whenComplete((bytes, failure) -> whole.run())
        .thenApply(bytes -> {
          if (bytes == null) {
            throw tooLarge();
          }
          GatewayResponse answer = UpstreamAnswers.checked(name, head.status(), answerHeaders, bytes);
          if (!stream) {
            return answer;
          }
          return asStream(request, answer); // the exchange is over: the stream holds no upstream resource
        });
  }

  private URI uri(GatewayRequest request) {
    URI known = dialect.urlPerModel() ? null : uris.get(request.route());
    if (known != null) {
      return known;
    }
    HttpUrl url = dialect.urlPerModel() ? dialect.url(config.baseUrl(), request.route(), request.model()) : null;
    return url != null ? url.uri() : URI.create(config.baseUrl() + request.route().upstreamPath());
  }

  private UpstreamException credentialsRejected() {
    // The upstream refused the gateway's own key (or wants one): never the client's fault, and
    // its body may quote part of that key.
    return new UpstreamException(name, UpstreamException.Failure.CREDENTIALS_REJECTED,
        "The " + name + " backend refused the gateway's own credentials (HTTP 401). This is not a"
            + " problem with your key; the gateway's operator must fix its configuration.", null);
  }

  /** A successful buffered answer to a stream request, as that stream ({@link AnswerAsStream}); errors stay as they are. */
  private static GatewayResponse asStream(GatewayRequest request, GatewayResponse answer) {
    if (!answer.isSuccessful() || answer.json() == null) {
      return answer;
    }
    EventStream events = AnswerAsStream.of(request.route(), answer.json());
    if (events == null) {
      return answer;
    }
    return GatewayResponse.streamed(answer.status(),
        answer.headers().with("content-type", GatewayResponse.EVENT_STREAM), events);
  }

  /**
   * The headers sent upstream: the client's that may be forwarded, the attempt's trace context,
   * the gateway's key, a fresh {@code X-Request-ID}, the client's id, Spillway's User-Agent and Via.
   */
  private void upstreamHeaders(GatewayRequest request, BiConsumer<String, String> header) {
    Set<String> hopByHop = ForwardedHeaders.connectionTokens(request.headers());
    Map<String, String> traceContext = request.attribute(RequestAttributes.TRACE_CONTEXT);
    request.headers().forEach((name, value) -> {
      if (ForwardedHeaders.forwardUpstream(name) && ForwardedHeaders.forwardableValue(value)
          && !hopByHop.contains(name.toLowerCase(Locale.ROOT))
          && (!ForwardedHeaders.isTraceContext(name)
              || traceContext == null && ForwardedHeaders.traceContextWithinBounds(name, value))) {
        header.accept(name, value);
      }
    });
    if (traceContext != null) {
      traceContext.forEach(header);
    }
    if (config.apiKey() != null) {
      dialect.authorize(header, config.apiKey());
    }
    dialect.complete(request.headers(), header);
    header.accept("X-Request-ID", RequestIds.fresh());
    header.accept("X-Client-Request-ID", request.id());
    header.accept("User-Agent", Version.USER_AGENT);
    header.accept("Via", Via.forwarded(request.headers()));
  }

  private static Headers responseHeaders(Headers upstream) {
    Headers.Builder headers = Headers.builder();
    upstream.forEach((name, value) -> {
      if (ForwardedHeaders.returnToClient(name)) {
        headers.add(name, value);
      }
    });
    String upstreamId = upstream.get("x-request-id");
    if (upstreamId != null && RequestIds.acceptable(upstreamId) != null) {
      headers.add("x-upstream-request-id", upstreamId);
    }
    return headers.build();
  }

  private UpstreamException tooLarge() {
    return new UpstreamException(name, UpstreamException.Failure.RESPONSE_TOO_LARGE,
        "The " + name + " backend's answer is larger than the gateway's limit (maxResponseSize)", null);
  }

  /** The configured timeout: the whole call for buffered answers. */
  public Duration timeout() {
    return config.timeout();
  }
}
