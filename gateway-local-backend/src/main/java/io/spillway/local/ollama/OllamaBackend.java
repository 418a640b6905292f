package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.Version;
import io.spillway.config.CloudConfig;
import io.spillway.config.Durations;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.Via;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.responses.ResponseEcho;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.RequestIds;
import io.spillway.core.http.Headers;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.upstream.ControlPlaneClient;
import io.spillway.local.DroppedParams;
import io.spillway.local.LocalReadiness;
import io.spillway.local.LocalServer;
import io.spillway.local.ModelMapping;
import io.spillway.local.StreamTranslator;
import io.spillway.local.TranslatedRequest;
import io.spillway.local.TranslatedStream;
import io.spillway.local.Translation;
import io.spillway.local.context.ContextFitter;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
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

  public static final String NAME = "local";
  public static final String DROPPED_HEADER = DroppedParams.HEADER;
  static final String FINGERPRINT = "fp_ollama";
  private static final MediaType JSON = MediaType.get("application/json");
  private static final int MAX_LINE_BYTES = 4 * 1024 * 1024;

  private final LocalConfig config;
  private final ModelMapping models;
  private final Clock clock;
  private final long maxResponseBytes;
  /** The control plane's clients: keep-warm loads, and probes and model questions. */
  private final OkHttpClient client;
  private final OkHttpClient probeClient;
  /** The data calls' client (the front end's event loops). */
  private final UpstreamHttp http;
  private final Duration connectTimeout;
  private final String keepAlive;
  private final Counter dropped;
  /** Local models that refused {@code /api/generate}: keep-warm loads them through {@code /api/embed}. */
  private final Set<String> embeddingOnly = ConcurrentHashMap.newKeySet();

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
    this.client = ControlPlaneClient.create(cloud.connectTimeout(), config.timeout());
    this.http = Objects.requireNonNull(http, "http");
    this.probeClient = ControlPlaneClient.forProbes(client, cloud.connectTimeout());
    this.keepAlive = keepAlive(config.keepAlive());
    this.dropped = TranslatedRequest.droppedCounter(meters);
  }

  /** Ollama's {@code keep_alive} as a Go duration string in whole seconds ({@code "1200s"}). */
  static String keepAlive(Duration duration) {
    return Math.max(1, duration.toSeconds()) + "s";
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String kind() {
    return "ollama";
  }

  @Override
  public GatewayResponse call(GatewayRequest request) {
    String requested = request.model();
    String localModel = models.map(requested);
    Routed routed = route(request);
    TranslatedRequest translated = TranslatedRequest.of(routed.translation(), request, localModel, dropped);
    boolean stream = routed.translation().stream();

    UpstreamExchange exchange = http.send(new OutboundRequest(NAME, "POST", uri(routed.path()),
        headers(request.id(), Via.forwarded(request.headers()), request.attribute(RequestAttributes.TRACE_CONTEXT)),
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
      return translated.answered(ErrorMapper.toResponse(errorFrom(head, exchange, requested, localModel)));
    }
    long created = clock.instant().getEpochSecond();
    if (!stream) {
      JsonNode answer = parse(readBounded(exchange));
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

  private GatewayException errorFrom(UpstreamHead head, UpstreamExchange exchange, String requested,
      String localModel) {
    String message = null;
    try {
      JsonNode body = parse(readBounded(exchange));
      message = Json.text(body, "error");
    } catch (UpstreamException e) {
      // Not JSON, or not whole: the status alone has to do.
    }
    return OllamaErrors.from(head.status(), message, requested, localModel,
        OllamaErrors.retryAfter(head.header("retry-after")));
  }

  private GatewayException errorFrom(Response response, String requested, String localModel) {
    return OllamaErrors.from(response.code(), errorMessage(response), requested, localModel,
        OllamaErrors.retryAfter(response.header("retry-after")));
  }

  /** The {@code error} of an Ollama error answer, or null when its body is not Ollama's JSON. */
  private String errorMessage(Response response) {
    try {
      return Json.text(parse(readBounded(response.body())), "error");
    } catch (UpstreamException e) {
      return null;
    }
  }

  private URI uri(String path) {
    return URI.create(config.baseUrl() + path);
  }

  private static Headers headers(String clientRequestId, String via, Map<String, String> traceContext) {
    Headers.Builder headers = Headers.builder()
        .add("Content-Type", "application/json")
        .add("User-Agent", Version.USER_AGENT)
        .add("Via", via)
        .add("X-Request-ID", RequestIds.fresh());
    if (clientRequestId != null) {
      headers.add("X-Client-Request-ID", clientRequestId);
    }
    if (traceContext != null) {
      traceContext.forEach(headers::add);
    }
    return headers.build();
  }

  private Request post(String path, ObjectNode body, String clientRequestId, String via,
      Map<String, String> traceContext) {
    Request.Builder builder = new Request.Builder()
        .url(config.baseUrl() + path)
        .post(RequestBody.create(Json.toBytes(body), JSON))
        .header("User-Agent", Version.USER_AGENT)
        .header("Via", via)
        .header("X-Request-ID", RequestIds.fresh());
    if (clientRequestId != null) {
      builder.header("X-Client-Request-ID", clientRequestId);
    }
    if (traceContext != null) {
      traceContext.forEach(builder::header);
    }
    return builder.build();
  }

  private byte[] readBounded(UpstreamExchange exchange) {
    byte[] bytes = UpstreamCalls.readAll(exchange.body(), maxResponseBytes);
    if (bytes == null) {
      throw tooLarge();
    }
    return bytes;
  }

  private UpstreamException tooLarge() {
    return new UpstreamException(NAME, UpstreamException.Failure.RESPONSE_TOO_LARGE,
        "The " + NAME + " backend's answer is larger than the gateway's limit (cloud.maxResponseSize)", null);
  }

  private byte[] readBounded(ResponseBody body) {
    try (InputStream in = body.byteStream()) {
      byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxResponseBytes + 1));
      if (bytes.length > maxResponseBytes) {
        throw tooLarge();
      }
      return bytes;
    } catch (IOException e) {
      throw UpstreamFailures.midStream(NAME, e);
    }
  }

  private static JsonNode parse(byte[] bytes) {
    try {
      JsonNode node = Json.parse(bytes);
      if (node != null && node.isObject()) {
        return node;
      }
    } catch (IOException e) {
      // fall through
    }
    throw new UpstreamException(NAME, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + NAME + " backend (Ollama) answered with something that is not a JSON object", null);
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
    load(model, 0);
  }

  /**
   * Loads {@code model} with {@code options.num_ctx} = {@code contextTokens} (none when 0). An
   * embedding-only model refuses {@code /api/generate} ("does not support generate"): it is loaded
   * with an empty {@code /api/embed} instead, and every later round goes there straight away.
   */
  @Override
  public void load(String model, int contextTokens) {
    if (embeddingOnly.contains(model)) {
      loadForEmbeddings(model);
      return;
    }
    ObjectNode body = Json.object();
    body.put("model", model);
    body.put("prompt", "");
    body.put("stream", false);
    body.put("keep_alive", keepAlive);
    if (contextTokens > 0) {
      body.putObject("options").put("num_ctx", contextTokens);
    }
    String refusal = loadCall("/api/generate", body, model);
    if (refusal != null && OllamaErrors.refusesGeneration(refusal)) {
      log.info("local model {} is an embedding model: keep-warm loads it through /api/embed", model);
      embeddingOnly.add(model);
      loadForEmbeddings(model);
    } else if (refusal != null) {
      throw OllamaErrors.from(400, refusal, model, model, null);
    }
  }

  /** Loads an embedding model with an {@code /api/embed} of no text, which embeds nothing. */
  private void loadForEmbeddings(String model) {
    ObjectNode body = Json.object();
    body.put("model", model);
    body.put("input", "");
    body.put("keep_alive", keepAlive);
    String refusal = loadCall("/api/embed", body, model);
    if (refusal != null) {
      throw OllamaErrors.from(400, refusal, model, model, null);
    }
  }

  /**
   * Posts a load request. Returns null when it succeeded, the error message of a 400 answer (which the
   * caller judges), and throws for any other failure.
   */
  private String loadCall(String path, ObjectNode body, String model) {
    Call call = client.newCall(post(path, body, null, Via.OWN, null));
    call.timeout().timeout(config.timeout().toMillis(), TimeUnit.MILLISECONDS);
    try (Response response = call.execute()) {
      if (response.isSuccessful()) {
        return null;
      }
      if (response.code() == 400) {
        String message = errorMessage(response);
        return message == null ? "HTTP 400" : message;
      }
      throw errorFrom(response, model, model);
    } catch (IOException e) {
      throw UpstreamFailures.beforeResponse(NAME, e);
    }
  }

  @Override
  public Probe probe(List<String> wanted) {
    String version;
    List<String> problems = new ArrayList<>();
    try (Response response = probeClient.newCall(get("/api/version")).execute()) {
      if (response.isSuccessful()) {
        version = Json.text(parse(readBounded(response.body())), "version");
      } else {
        version = null;
        problems.add("The local server answered /api/version with HTTP " + response.code()
            + ": is local.baseUrl an Ollama server? (Use local.kind: openai for OpenAI-compatible servers.)");
      }
    } catch (IOException e) {
      log.debug("probing the Ollama server at {} failed", config.baseUrl(), e);
      return Probe.unreachable("Cannot reach the Ollama server (" + LocalServer.describe(e)
          + "). Is `ollama serve` running there, and is local.baseUrl right?");
    } catch (UpstreamException e) {
      version = null;
      problems.add("The local server's /api/version answer is not Ollama's: " + e.getMessage());
    }

    Set<String> available = null;
    try (Response response = probeClient.newCall(get("/api/tags")).execute()) {
      if (response.isSuccessful()) {
        available = new HashSet<>();
        for (JsonNode model : parse(readBounded(response.body())).path("models")) {
          for (String field : List.of("name", "model")) {
            String name = Json.text(model, field);
            if (name != null) {
              available.add(normalize(name));
            }
          }
        }
      } else {
        problems.add("The local server answered /api/tags with HTTP " + response.code()
            + "; cannot tell which models it has.");
      }
    } catch (IOException | UpstreamException e) {
      log.debug("listing the Ollama server's models failed", e);
      problems.add("Could not list the local server's models (/api/tags): " + LocalServer.describe(e));
    }

    List<LocalReadiness.MissingModel> missing = new ArrayList<>();
    if (available != null) {
      for (String model : wanted) {
        if (!available.contains(normalize(model))) {
          String fix = "ollama pull " + model;
          missing.add(new LocalReadiness.MissingModel(model, fix));
          problems.add("Model '" + model + "' is not on the Ollama server. Fix: run `" + fix + "` on that host.");
        }
      }
    }
    return new Probe(true, version, missing, problems, running(wanted));
  }

  /**
   * Which of {@code wanted} are loaded in memory now: Ollama's {@code GET /api/ps} lists the running
   * models ({@code models[].name} / {@code .model}). Empty when it cannot tell.
   */
  private List<String> running(List<String> wanted) {
    Set<String> running = new HashSet<>();
    try (Response response = probeClient.newCall(get("/api/ps")).execute()) {
      if (!response.isSuccessful()) {
        return List.of();
      }
      for (JsonNode model : parse(readBounded(response.body())).path("models")) {
        for (String field : List.of("name", "model")) {
          String name = Json.text(model, field);
          if (name != null) {
            running.add(normalize(name));
          }
        }
      }
    } catch (IOException | UpstreamException e) {
      log.debug("listing the Ollama server's running models failed", e);
      return List.of();
    }
    return wanted.stream().filter(model -> running.contains(normalize(model))).toList();
  }

  /**
   * The model's trained context window from {@code POST /api/show}: {@code model_info} holds it as
   * {@code <architecture>.context_length}, the architecture being {@code general.architecture}.
   */
  @Override
  public OptionalInt contextWindow(String model) {
    ObjectNode ask = Json.object();
    ask.put("model", model);
    Request request = new Request.Builder().url(config.baseUrl() + "/api/show")
        .post(RequestBody.create(Json.toBytes(ask), JSON))
        .header("User-Agent", Version.USER_AGENT).build();
    try (Response response = probeClient.newCall(request).execute()) {
      if (!response.isSuccessful()) {
        log.debug("Ollama's /api/show answered HTTP {} for {}", response.code(), model);
        return OptionalInt.empty();
      }
      return contextLength(parse(readBounded(response.body())).path("model_info"));
    } catch (IOException | UpstreamException e) {
      log.debug("asking Ollama for the context window of {} failed", model, e);
      return OptionalInt.empty();
    }
  }

  /** {@code <general.architecture>.context_length}, else the one key ending in {@code .context_length}. */
  static OptionalInt contextLength(JsonNode modelInfo) {
    String architecture = Json.text(modelInfo, "general.architecture");
    JsonNode length = architecture != null ? modelInfo.get(architecture + ".context_length") : null;
    if (length == null) {
      Iterator<Map.Entry<String, JsonNode>> fields = modelInfo.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        if (field.getKey().endsWith(".context_length")) {
          length = field.getValue();
          break;
        }
      }
    }
    return length != null && length.canConvertToInt() && length.intValue() > 0
        ? OptionalInt.of(length.intValue()) : OptionalInt.empty();
  }

  /** Ollama names without a tag mean {@code :latest}. */
  static String normalize(String model) {
    int slash = model.lastIndexOf('/');
    return model.indexOf(':', slash + 1) < 0 ? model + ":latest" : model;
  }


  private Request get(String path) {
    return new Request.Builder().url(config.baseUrl() + path).get()
        .header("User-Agent", Version.USER_AGENT).build();
  }

  @Override
  public void close() {
    ControlPlaneClient.close(client);
  }
}
