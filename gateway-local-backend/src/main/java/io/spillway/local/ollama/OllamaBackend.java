package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.CloudConfig;
import io.spillway.config.Durations;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Via;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.responses.ResponseEcho;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Route;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamEventStream;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.upstream.ControlPlaneClient;
import io.spillway.local.DroppedParams;
import io.spillway.local.LocalServer;
import io.spillway.local.ModelMapping;
import io.spillway.local.StreamTranslator;
import io.spillway.local.TranslatedRequest;
import io.spillway.local.TranslatedStream;
import io.spillway.local.Translation;
import io.spillway.local.context.ContextFitter;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ollama's native API behind the OpenAI one ({@code local.kind: ollama}).
 *
 * <ul>
 *   <li>{@code /v1/chat/completions} → {@code POST /api/chat} (messages, inline images, tools);
 *   <li>{@code /v1/completions} → {@code POST /api/generate};
 *   <li>{@code /v1/responses} → {@code POST /api/chat} (messages, function and custom tools, tool
 *       calls and their outputs; see {@link ResponsesTranslation}); stored state is refused
 *       ({@link io.spillway.core.error.UnsupportedOnLocalException}, which the router answers);
 *   <li>{@code /v1/embeddings} → {@code POST /api/embed} (text inputs).
 * </ul>
 *
 * <p>Requested models are mapped by {@link ModelMapping}; the answer names the model that served it.
 * Sampling parameters go to {@code options}; those Ollama cannot honour are dropped and listed in
 * the {@code x-spillway-dropped-params} response header. NDJSON streams are relayed as OpenAI
 * server-sent events line by line, never buffered. Every request carries {@code keep_alive} =
 * {@code local.keepAlive} so real traffic does not shorten what keep-warm set up, and
 * {@code options.num_ctx} as {@link io.spillway.local.LocalBackend} sized it for the request
 * ({@link ContextFitter#NUM_CTX}); the model's window is read once from {@code /api/show}.
 *
 * <p>Each route's request and answer are its {@link Translation}'s ({@link ChatTranslation},
 * {@link CompletionTranslation}, {@link ResponsesTranslation}, {@link EmbeddingTranslation}); this
 * class sends the request, maps Ollama's errors ({@link OllamaErrors}) and relays the answer, a
 * stream through {@link TranslatedStream}.
 *
 * <p>No credential is ever sent to the local server. One instance serves all requests; thread-safe.
 */
public final class OllamaBackend implements LocalServer, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(OllamaBackend.class);

  public static final String NAME = BackendKind.LOCAL.tag();
  public static final String DROPPED_HEADER = DroppedParams.HEADER;
  static final String FINGERPRINT = "fp_ollama";
  private static final int MAX_LINE_BYTES = 4 * 1024 * 1024;

  private final LocalConfig config;
  private final ModelMapping models;
  private final Clock clock;
  private final long maxResponseBytes;
  /** Probes, model questions and keep-warm loads, over OkHttp. */
  private final OllamaControlPlane control;
  /** The data calls' client (the front end's event loops). */
  private final UpstreamHttp http;
  private final Duration connectTimeout;
  private final String keepAlive;
  private final Counter dropped;

  /**
   * A backend that makes its data calls ({@code /api/chat}, {@code /api/generate},
   * {@code /api/embed}) over {@code http}, the data path's client on the front end's event loops;
   * probes, model questions and keep-warm loads go over OkHttp ({@link ControlPlaneClient}).
   *
   * @param cloud supplies the connect timeout and the largest buffered answer accepted
   */
  public OllamaBackend(LocalConfig config, CloudConfig cloud, Clock clock, MeterRegistry meters, UpstreamHttp http) {
    this.config = config;
    this.models = new ModelMapping(config);
    this.clock = clock;
    this.maxResponseBytes = cloud.maxResponseSize().bytes();
    this.connectTimeout = cloud.connectTimeout();
    this.http = Objects.requireNonNull(http, "http");
    this.keepAlive = keepAlive(config.keepAlive());
    this.control = new OllamaControlPlane(config, cloud, keepAlive);
    this.dropped = TranslatedRequest.droppedCounter(meters);
  }

  /** Ollama's {@code keep_alive} as a Go duration string in whole seconds ({@code "1200s"}). */
  static String keepAlive(Duration duration) {
    return Math.max(1, duration.toSeconds()) + "s";
  }

  @Override
  public BackendKind kind() {
    return BackendKind.LOCAL;
  }

  @Override
  public String serverKind() {
    return "ollama";
  }

  /**
   * The answer, on a virtual thread: the exchange itself runs on the data path's client, and the
   * head and a stream's first line are waited for here (see {@link #exchange}).
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    if (request.route() == Route.MESSAGES) {
      return Blocking.supply(() -> messages(request));
    }
    return Blocking.supply(() -> exchange(request));
  }

  /** Whether the last probe found Ollama's own {@code /v1/messages} (0.14 and later). */
  @Override
  public boolean servesMessages() {
    return control.servesMessages();
  }

  /**
   * A Messages request passed to Ollama's own {@code /v1/messages} as the client sent it, with the
   * model mapped; the answer (a message, or Anthropic's event stream) relayed as Ollama wrote it.
   * Ollama's Anthropic-shaped errors become the gateway's, mapped as its native ones are.
   */
  private GatewayResponse messages(GatewayRequest request) {
    String requested = request.model();
    String localModel = models.map(requested);
    ObjectNode body = request.body().deepCopy();
    body.put("model", localModel);
    boolean stream = request.stream();
    UpstreamExchange exchange = http.send(new OutboundRequest(NAME, "POST", uri("/v1/messages"),
        OllamaWire.headers(true, request.id(), Via.forwarded(request.headers()),
            request.attribute(RequestAttributes.TRACE_CONTEXT)),
        Json.toBytes(body), connectTimeout, config.timeout(), stream ? null : config.timeout(),
        request.attribute(RequestAttributes.CONNECTION_LOOP), config.h2c()));
    ClientDisconnect.of(request).onDisconnect(exchange::cancel);
    UpstreamHead head = UpstreamCalls.head(exchange);
    if (head.status() < 200 || head.status() >= 300) {
      byte[] bytes = readBounded(exchange);
      return ErrorMapper.toResponse(OllamaErrors.from(head.status(), anthropicErrorMessage(bytes), requested,
          localModel, OllamaErrors.retryAfter(head.header("retry-after"))));
    }
    String contentType = head.header("content-type");
    if (stream && contentType != null && contentType.startsWith("text/event-stream")) {
      return GatewayResponse.streamed(200, Headers.of("content-type", "text/event-stream"),
          new UpstreamEventStream(NAME, exchange, config.timeout(), () -> {}));
    }
    byte[] bytes = readBounded(exchange);
    OllamaWire.parse(bytes); // one JSON object, or an invalid answer
    if (stream) {
      throw new UpstreamException(NAME, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + NAME + " backend (Ollama) answered a Messages stream request with no stream", null);
    }
    return GatewayResponse.buffered(200, Headers.of("content-type", GatewayResponse.JSON), bytes);
  }

  /** The message of an Anthropic-shaped error body ({@code error.message}), or Ollama's plain {@code error}. */
  private static String anthropicErrorMessage(byte[] bytes) {
    try {
      JsonNode error = OllamaWire.parse(bytes).path("error");
      return error.isObject() ? Json.text(error, "message") : error.isTextual() ? error.asText() : null;
    } catch (UpstreamException e) {
      return null;
    }
  }

  /** One data call, blocking the calling (virtual) thread until the answer's head (and a stream's first line). */
  private GatewayResponse exchange(GatewayRequest request) {
    String requested = request.model();
    String localModel = models.map(requested);
    Routed routed = route(request);
    TranslatedRequest translated = TranslatedRequest.of(routed.translation(), request, localModel, dropped);
    boolean stream = routed.translation().stream();

    UpstreamExchange exchange = http.send(new OutboundRequest(NAME, "POST", uri(routed.path()),
        OllamaWire.headers(true, request.id(), Via.forwarded(request.headers()),
            request.attribute(RequestAttributes.TRACE_CONTEXT)),
        Json.toBytes(translated.body()), connectTimeout, config.timeout(), stream ? null : config.timeout(),
        request.attribute(RequestAttributes.CONNECTION_LOOP), config.h2c()));
    // A client that goes away cancels the call, before its first byte too; cancelling a finished
    // exchange does nothing.
    ClientDisconnect.of(request).onDisconnect(exchange::cancel);
    // A stream's head and first line must arrive whole within the timeout, and then each line
    // (NdjsonLines): a per-read timeout is reset by every byte of an upstream that trickles.
    FirstLineTimer first = stream ? new FirstLineTimer(exchange, config.timeout()) : null;
    UpstreamHead head;
    try {
      head = UpstreamCalls.head(exchange);
    } catch (UpstreamException e) {
      throw first != null && first.end() ? headTimedOut(e) : e;
    }
    if (head.status() < 200 || head.status() >= 300) {
      if (first != null) {
        first.end();
      }
      return translated.answered(ErrorMapper.toResponse(
          OllamaWire.error(head.status(), () -> readBounded(exchange), head.header("retry-after"), requested, localModel)));
    }
    long created = clock.instant().getEpochSecond();
    if (!stream) {
      JsonNode answer = OllamaWire.parse(readBounded(exchange));
      String error = Json.text(answer, "error");
      if (error != null) {
        return translated.answered(ErrorMapper.toResponse(OllamaErrors.from(500, error, requested, localModel, null)));
      }
      ObjectNode out = routed.translation().answer(answer, localModel, created);
      return GatewayResponse.buffered(200, translated.report().with("content-type", GatewayResponse.JSON),
          Json.toBytes(out));
    }
    return streamed(translated, exchange, first, requested, localModel, created);
  }

  /**
   * Bounds the wait for a stream's head and first line together, from the moment the request is
   * sent: past the timeout the exchange is cancelled.
   */
  private static final class FirstLineTimer {
    private final Runnable timer;
    private volatile boolean timedOut;

    FirstLineTimer(UpstreamExchange exchange, Duration limit) {
      this.timer = exchange.schedule(limit, () -> {
        timedOut = true;
        exchange.cancel();
      });
    }

    /** Stops the timer; true when it had already run out. */
    boolean end() {
      timer.run();
      return timedOut;
    }
  }

  /** The Ollama API a route goes to, and its translation for this request. */
  private record Routed(String path, Translation translation) {}

  private Routed route(GatewayRequest request) {
    ObjectNode body = request.body();
    Integer numCtx = request.attribute(ContextFitter.NUM_CTX);
    return switch (request.route()) {
      case CHAT_COMPLETIONS -> new Routed("/api/chat", new ChatTranslation(body, keepAlive, numCtx));
      case COMPLETIONS -> new Routed("/api/generate", new CompletionTranslation(body, keepAlive, numCtx));
      case RESPONSES -> new Routed("/api/chat", new ResponsesTranslation(body, keepAlive, numCtx,
          request.attribute(ResponseEcho.KEY, ResponseEcho.NOT_STORED)));
      case EMBEDDINGS -> new Routed("/api/embed", new EmbeddingTranslation(body, keepAlive));
      default -> throw new IllegalStateException("unhandled route " + request.route());
    };
  }

  private UpstreamException headTimedOut(Exception cause) {
    return new UpstreamException(NAME, UpstreamException.Failure.TIMEOUT,
        "The " + NAME + " backend (Ollama) did not begin its answer within " + Durations.format(config.timeout()),
        cause);
  }

  private GatewayResponse streamed(
      TranslatedRequest translated,
      UpstreamExchange exchange,
      FirstLineTimer timer,
      String requested,
      String localModel,
      long created) {
    NdjsonLines lines = new NdjsonLines(NAME, exchange, MAX_LINE_BYTES, config.timeout());
    JsonNode first;
    try {
      // Read the first line before answering: an error that arrives instead of it (the model failed
      // to load, the server is busy) becomes a proper error status the router can act on, since the
      // client has seen nothing yet.
      first = lines.first();
    } catch (UpstreamException e) {
      lines.close();
      if (timer.end()) {
        throw headTimedOut(e);
      }
      throw e.failure() == UpstreamException.Failure.RESET_MID_STREAM
          ? new UpstreamException(NAME, UpstreamException.Failure.RESET_BEFORE_RESPONSE,
              "The " + NAME + " backend closed the connection before answering", e)
          : e;
    }
    if (timer.end()) {
      lines.close();
      throw headTimedOut(null);
    }
    if (first == null) {
      lines.close();
      throw new UpstreamException(NAME, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + NAME + " backend (Ollama) answered with an empty stream", null);
    }
    String error = Json.text(first, "error");
    if (error != null) {
      lines.close();
      return translated.answered(ErrorMapper.toResponse(OllamaErrors.from(500, error, requested, localModel, null)));
    }
    StreamTranslator translator = translated.translation().streamTranslator(localModel, created);
    return GatewayResponse.streamed(200, translated.report(),
        new TranslatedStream(NAME, NAME + " backend (Ollama)", lines, translator));
  }

  private URI uri(String path) {
    return URI.create(config.baseUrl() + path);
  }

  private byte[] readBounded(UpstreamExchange exchange) {
    byte[] bytes = UpstreamCalls.readAll(exchange.body(), maxResponseBytes);
    if (bytes == null) {
      throw OllamaWire.tooLarge();
    }
    return bytes;
  }

  @Override
  public boolean keepsWarm() {
    return true;
  }

  /**
   * Loads {@code model} with an empty {@code /api/generate} (Ollama's documented way to load a model
   * without generating) that carries {@code keep_alive}.
   */
  @Override
  public void load(String model) {
    control.load(model, 0);
  }

  /** Loads {@code model} with {@code options.num_ctx} = {@code contextTokens} (none when 0). */
  @Override
  public void load(String model, int contextTokens) {
    control.load(model, contextTokens);
  }

  @Override
  public Probe probe(List<String> wanted) {
    return control.probe(wanted);
  }

  @Override
  public OptionalInt contextWindow(String model) {
    return control.contextWindow(model);
  }

  @Override
  public void close() {
    control.close();
  }
}
