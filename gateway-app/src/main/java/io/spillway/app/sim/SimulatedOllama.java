package io.spillway.app.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A stand-in for an Ollama server, speaking its native API: {@code POST /api/chat} and
 * {@code POST /api/generate} (NDJSON streams by default, one JSON object when {@code "stream": false},
 * a final line with {@code done_reason}, {@code prompt_eval_count} and {@code eval_count}; an empty
 * prompt or message list only loads the model), {@code GET /api/tags}, {@code /api/version} and
 * {@code /api/ps} (models loaded and until when, from each request's {@code keep_alive}). Unknown
 * models get Ollama's 404 {@code {"error": …}}. A chat request with {@code tools} is answered with a
 * tool call in {@code message.tool_calls} until the conversation carries the tool's result, then
 * with text ({@link SimulatedAgent}, as the simulated cloud does).
 */
public final class SimulatedOllama extends SimServer {
  public static final String VERSION = "0.12.6";
  private static final Duration DEFAULT_KEEP_ALIVE = Duration.ofMinutes(5);
  private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");

  private final Clock clock;
  private final List<String> models;
  private final Duration tokenPause;
  private final Map<String, Instant> loadedUntil = new ConcurrentHashMap<>();

  public SimulatedOllama(String host, int port, Clock clock, List<String> models, Duration tokenPause) {
    super(host, port);
    this.clock = clock;
    this.models = List.copyOf(models);
    this.tokenPause = tokenPause;
    route("POST", "/api/chat", e -> generate(e, true));
    route("POST", "/api/generate", e -> generate(e, false));
    route("GET", "/api/tags", this::tags);
    route("GET", "/api/version", e -> sendJson(e, 200, Json.object().put("version", VERSION)));
    route("GET", "/api/ps", this::running);
    route("GET", "/", e -> send(e, 200, "text/plain; charset=utf-8", "Ollama is running"));
  }

  @Override
  public SimulatedOllama start() {
    super.start();
    return this;
  }

  /** The base URL, as {@code local.baseUrl} takes it. */
  public String baseUrl() {
    return origin();
  }

  public List<String> models() {
    return models;
  }

  /** Until when {@code model} stays loaded, or null when it is not loaded. */
  public Instant loadedUntil(String model) {
    Instant until = loadedUntil.get(normalize(model));
    return until != null && until.isAfter(clock.instant()) ? until : null;
  }

  private String find(String model) {
    if (model == null) {
      return null;
    }
    String wanted = normalize(model);
    return models.stream().filter(m -> normalize(m).equals(wanted)).findFirst().orElse(null);
  }

  static String normalize(String model) {
    int slash = model.lastIndexOf('/');
    return model.indexOf(':', slash + 1) < 0 ? model + ":latest" : model;
  }

  private void generate(HttpExchange exchange, boolean chat) throws IOException {
    ObjectNode body = readJson(exchange);
    String requested = Json.text(body, "model");
    if (requested == null) {
      sendJson(exchange, 400, Json.object().put("error", "model is required"));
      return;
    }
    String model = find(requested);
    if (model == null) {
      sendJson(exchange, 404, Json.object().put("error", "model \"" + requested + "\" not found, try pulling it first"));
      return;
    }
    Duration keepAlive = keepAlive(body.get("keep_alive"));
    Instant now = clock.instant();
    if (keepAlive.isZero()) {
      loadedUntil.remove(normalize(model));
    } else {
      loadedUntil.put(normalize(model), keepAlive.isNegative() ? Instant.MAX : now.plus(keepAlive));
    }
    String prompt = chat ? SimulatedText.lastUserText(body.get("messages")) : SimulatedText.text(body.get("prompt"));
    boolean onlyLoad = chat ? body.path("messages").isEmpty() : prompt.isEmpty();
    if (onlyLoad) {
      ObjectNode loaded = line(model, chat, "");
      loaded.put("done_reason", keepAlive.isZero() ? "unload" : "load");
      loaded.put("done", true);
      sendJson(exchange, 200, loaded);
      return;
    }
    int promptTokens = SimulatedText.tokens(prompt) + 10;
    ObjectNode toolCall = chat ? toolCall(body, prompt) : null;
    if (toolCall != null) {
      ObjectNode answer = line(model, true, "");
      ((ObjectNode) answer.get("message")).putArray("tool_calls").add(toolCall);
      JsonNode stream = body.get("stream");
      if (stream != null && !stream.asBoolean(true)) {
        finish(answer, "stop", promptTokens, 12);
        sendJson(exchange, 200, answer);
        return;
      }
      try (Chunks out = new Chunks(exchange, "application/x-ndjson", tokenPause)) {
        answer.put("done", false);
        out.write(Json.toString(answer) + "\n");
        ObjectNode last = line(model, true, "");
        finish(last, "stop", promptTokens, 12);
        out.write(Json.toString(last) + "\n");
      }
      return;
    }
    String toolOutput = chat ? SimulatedAgent.chatToolOutput(body.get("messages")) : null;
    String who = "the local model (simulated Ollama)";
    List<String> pieces = SimulatedText.pieces(toolOutput != null
        ? SimulatedText.afterTool(who, model, toolOutput)
        : SimulatedText.answer(who, model, prompt));
    String doneReason = "stop";
    JsonNode numPredict = body.path("options").get("num_predict");
    if (numPredict != null && numPredict.canConvertToInt() && numPredict.intValue() >= 0
        && numPredict.intValue() < pieces.size()) {
      pieces = pieces.subList(0, numPredict.intValue());
      doneReason = "length";
    }
    JsonNode stream = body.get("stream");
    if (stream != null && !stream.asBoolean(true)) {
      ObjectNode whole = line(model, chat, String.join("", pieces));
      finish(whole, doneReason, promptTokens, pieces.size());
      sendJson(exchange, 200, whole);
      return;
    }
    try (Chunks out = new Chunks(exchange, "application/x-ndjson", tokenPause)) {
      for (String piece : pieces) {
        ObjectNode line = line(model, chat, piece);
        line.put("done", false);
        out.write(Json.toString(line) + "\n");
      }
      ObjectNode last = line(model, chat, "");
      finish(last, doneReason, promptTokens, pieces.size());
      out.write(Json.toString(last) + "\n");
    }
  }

  /**
   * The tool call a chat request gets ({@link SimulatedAgent}) in Ollama's shape, or null: {@code id},
   * and {@code function} with {@code index}, {@code name} and {@code arguments} as an object.
   */
  static ObjectNode toolCall(ObjectNode body, String prompt) {
    SimulatedAgent.ToolCall call = SimulatedAgent.forChat(body.get("tools"), body.get("messages"), prompt);
    if (call == null) {
      return null;
    }
    ObjectNode out = Json.object();
    out.put("id", call.callId());
    out.putObject("function").put("index", 0).put("name", call.name()).set("arguments", call.arguments());
    return out;
  }

  private ObjectNode line(String model, boolean chat, String text) {
    ObjectNode line = Json.object();
    line.put("model", model);
    line.put("created_at", clock.instant().toString());
    if (chat) {
      line.putObject("message").put("role", "assistant").put("content", text);
    } else {
      line.put("response", text);
    }
    return line;
  }

  private static void finish(ObjectNode line, String doneReason, int promptTokens, int evalTokens) {
    line.put("done", true);
    line.put("done_reason", doneReason);
    line.put("total_duration", 1_200_000_000L);
    line.put("load_duration", 2_000_000L);
    line.put("prompt_eval_count", promptTokens);
    line.put("prompt_eval_duration", 150_000_000L);
    line.put("eval_count", evalTokens);
    line.put("eval_duration", 1_000_000_000L);
  }

  /** Ollama's {@code keep_alive}: seconds as a number, or a Go duration string; negative = forever. */
  static Duration keepAlive(JsonNode value) {
    if (value == null || value.isNull()) {
      return DEFAULT_KEEP_ALIVE;
    }
    if (value.isNumber()) {
      return Duration.ofMillis((long) (value.doubleValue() * 1000));
    }
    String text = value.asText().trim();
    boolean negative = text.startsWith("-");
    if (negative) {
      return Duration.ofSeconds(-1);
    }
    if (text.matches("\\d+")) {
      return Duration.ofSeconds(Long.parseLong(text));
    }
    Matcher m = GO_DURATION.matcher(text);
    double nanos = 0;
    int end = 0;
    while (m.find() && m.start() == end) {
      double n = Double.parseDouble(m.group(1));
      nanos += n * switch (m.group(2)) {
        case "ns" -> 1;
        case "us", "µs" -> 1e3;
        case "ms" -> 1e6;
        case "s" -> 1e9;
        case "m" -> 60e9;
        default -> 3600e9;
      };
      end = m.end();
    }
    if (end != text.length() || end == 0) {
      throw new BadRequest("time: invalid duration \"" + text + "\"");
    }
    return Duration.ofNanos((long) nanos);
  }

  private void tags(HttpExchange exchange) throws IOException {
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("models");
    for (String model : models) {
      ObjectNode entry = list.addObject();
      entry.put("name", normalize(model));
      entry.put("model", normalize(model));
      entry.put("modified_at", "2026-10-04T14:56:49.277302595Z");
      entry.put("size", 4_683_087_332L);
      entry.put("digest", Integer.toHexString(model.hashCode()) + "0".repeat(56));
      entry.putObject("details").put("format", "gguf").put("family", "llama").putNull("families")
          .put("parameter_size", "7B").put("quantization_level", "Q4_K_M");
    }
    sendJson(exchange, 200, out);
  }

  private void running(HttpExchange exchange) throws IOException {
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("models");
    Instant now = clock.instant();
    loadedUntil.forEach((model, until) -> {
      if (until.isAfter(now)) {
        list.addObject().put("name", model).put("model", model).put("size", 5_137_025_024L)
            .put("expires_at", until.equals(Instant.MAX) ? "2318-01-01T00:00:00Z" : until.toString())
            .put("size_vram", 5_137_025_024L);
      }
    });
    sendJson(exchange, 200, out);
  }

  @Override
  void notFound(HttpExchange exchange) throws IOException {
    send(exchange, 404, "text/plain; charset=utf-8", "404 page not found");
  }

  @Override
  void badRequest(HttpExchange exchange, String message) throws IOException {
    sendJson(exchange, 400, Json.object().put("error", message));
  }
}
