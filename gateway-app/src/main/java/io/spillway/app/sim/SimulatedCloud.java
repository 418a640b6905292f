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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A stand-in for the OpenAI cloud that goes "at capacity" on a schedule: OpenAI-shaped answers for
 * {@code /v1/chat/completions}, {@code /v1/completions}, {@code /v1/responses} (streamed and not, with
 * usage; {@code stream_options.include_usage} honoured; a streamed Response carries OpenAI's whole
 * event sequence) and {@code /v1/models} while healthy, and OpenAI's 503
 * {@code Selected model is at capacity} body while at capacity. Like the simulated Ollama it plays an
 * agent's model ({@link SimulatedAgent}): a chat or Responses request that offers function tools is
 * answered with a tool call until the conversation carries the tool's result, so a coding agent's
 * shell runs whichever backend serves it.
 * {@code GET /sim/status} tells where in the schedule it is.
 *
 * <p>Not a mock for unit tests: a real server for the demo and for users' CI game days.
 */
public final class SimulatedCloud extends SimServer {
  /** OpenAI's at-capacity answer, byte for byte what Spillway's classifier is built against. */
  public static final String AT_CAPACITY_BODY =
      "{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
          + "\"type\":\"server_error\",\"param\":null,\"code\":null}}";

  private static final List<String> MODELS = List.of("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo-instruct");

  private final Clock clock;
  private final AtomicReference<CapacitySchedule> schedule;
  private final String apiKey;
  private final Duration tokenPause;
  private static final String WHO = "the simulated cloud";

  private final AtomicLong served = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  /**
   * @param apiKey the key callers must send as {@code Authorization: Bearer}, or null for any
   * @param tokenPause the pause between streamed pieces (zero in tests)
   */
  public SimulatedCloud(
      String host, int port, Clock clock, CapacitySchedule schedule, String apiKey, Duration tokenPause) {
    super(host, port);
    this.clock = clock;
    this.schedule = new AtomicReference<>(schedule);
    this.apiKey = apiKey;
    this.tokenPause = tokenPause;
    route("POST", "/v1/chat/completions", e -> generate(e, Kind.CHAT));
    route("POST", "/v1/completions", e -> generate(e, Kind.COMPLETIONS));
    route("POST", "/v1/responses", e -> generate(e, Kind.RESPONSES));
    route("GET", "/v1/models", this::models);
    route("GET", "/sim/status", this::status);
  }

  @Override
  public SimulatedCloud start() {
    super.start();
    return this;
  }

  /** The OpenAI base URL, ending in {@code /v1}. */
  public String baseUrl() {
    return origin() + "/v1";
  }

  public CapacitySchedule schedule() {
    return schedule.get();
  }

  /** Starts the schedule over from now (healthy first), e.g. once everything else is up. */
  public void restartSchedule() {
    schedule.updateAndGet(s -> new CapacitySchedule(clock.instant(), s.healthyFor(), s.atCapacityFor()));
  }

  public boolean atCapacity() {
    return schedule.get().atCapacity(clock.instant());
  }

  private enum Kind { CHAT, COMPLETIONS, RESPONSES }

  private boolean authorized(HttpExchange exchange) throws IOException {
    if (apiKey == null) {
      return true;
    }
    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
    if (("Bearer " + apiKey).equals(authorization)) {
      return true;
    }
    sendJson(exchange, 401, error("Incorrect API key provided. The simulated cloud expects its configured key.",
        "invalid_request_error", "invalid_api_key"));
    return false;
  }

  private void generate(HttpExchange exchange, Kind kind) throws IOException {
    if (!authorized(exchange)) {
      return;
    }
    ObjectNode body = readJson(exchange);
    if (atCapacity()) {
      refused.incrementAndGet();
      send(exchange, 503, "application/json", AT_CAPACITY_BODY);
      return;
    }
    long serial = served.incrementAndGet();
    String model = Json.text(body, "model");
    if (model == null) {
      sendJson(exchange, 400, error("you must provide a model parameter", "invalid_request_error", null));
      return;
    }
    String prompt = switch (kind) {
      case CHAT -> SimulatedText.lastUserText(body.get("messages"));
      case COMPLETIONS -> SimulatedText.text(body.get("prompt"));
      case RESPONSES -> SimulatedText.responsesInput(body.get("input"));
    };
    SimulatedAgent.ToolCall call = switch (kind) {
      case CHAT -> SimulatedAgent.forChat(body.get("tools"), body.get("messages"), prompt);
      case COMPLETIONS -> null;
      case RESPONSES -> SimulatedAgent.forResponses(body.get("tools"), body.get("input"), prompt);
    };
    String toolOutput = switch (kind) {
      case CHAT -> SimulatedAgent.chatToolOutput(body.get("messages"));
      case COMPLETIONS -> null;
      case RESPONSES -> SimulatedAgent.responsesToolOutput(body.get("input"));
    };
    String answer = call != null ? null
        : toolOutput != null ? SimulatedText.afterTool(WHO, model, toolOutput)
        : SimulatedText.answer(WHO, model, prompt);
    int promptTokens = SimulatedText.tokens(prompt) + 8;
    boolean stream = body.path("stream").asBoolean(false);
    boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
    long created = clock.instant().getEpochSecond();
    String requestId = "req_" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    exchange.getResponseHeaders().set("x-request-id", requestId);
    exchange.getResponseHeaders().set("openai-processing-ms", "42");
    switch (kind) {
      case CHAT -> {
        SimulatedChat chat = new SimulatedChat(model, created, serial, answer, call, promptTokens);
        if (stream) {
          try (Chunks out = new Chunks(exchange, "text/event-stream", tokenPause)) {
            chat.stream(out, includeUsage);
          }
        } else {
          sendJson(exchange, 200, chat.completion());
        }
      }
      case COMPLETIONS -> {
        if (stream) {
          completionStream(exchange, model, answer, promptTokens, created, includeUsage);
        } else {
          sendJson(exchange, 200, completion(model, answer, promptTokens, created));
        }
      }
      case RESPONSES -> {
        SimulatedResponse response = new SimulatedResponse(body, model, created, serial, answer, call, promptTokens);
        if (stream) {
          try (Chunks out = new Chunks(exchange, "text/event-stream", tokenPause)) {
            response.stream(out);
          }
        } else {
          sendJson(exchange, 200, response.response("completed"));
        }
      }
    }
  }

  static ObjectNode usage(int prompt, int completion) {
    return Json.object().put("prompt_tokens", prompt).put("completion_tokens", completion)
        .put("total_tokens", prompt + completion);
  }

  private ObjectNode completion(String model, String answer, int promptTokens, long created) {
    ObjectNode out = Json.object().put("id", "cmpl-sim" + created).put("object", "text_completion")
        .put("created", created).put("model", model);
    out.putArray("choices").addObject().put("text", answer).put("index", 0).putNull("logprobs")
        .put("finish_reason", "stop");
    out.set("usage", usage(promptTokens, SimulatedText.tokens(answer)));
    return out;
  }

  private void completionStream(
      HttpExchange exchange, String model, String answer, int promptTokens, long created, boolean includeUsage)
      throws IOException {
    List<String> pieces = SimulatedText.pieces(answer);
    try (Chunks out = new Chunks(exchange, "text/event-stream", tokenPause)) {
      for (int i = 0; i <= pieces.size(); i++) {
        ObjectNode chunk = Json.object().put("id", "cmpl-sim" + created).put("object", "text_completion")
            .put("created", created).put("model", model);
        chunk.putArray("choices").addObject().put("text", i < pieces.size() ? pieces.get(i) : "").put("index", 0)
            .putNull("logprobs").put("finish_reason", i < pieces.size() ? null : "stop");
        if (includeUsage) {
          chunk.putNull("usage");
        }
        out.write(data(chunk));
      }
      if (includeUsage) {
        ObjectNode usage = Json.object().put("id", "cmpl-sim" + created).put("object", "text_completion")
            .put("created", created).put("model", model);
        usage.putArray("choices");
        usage.set("usage", usage(promptTokens, pieces.size()));
        out.write(data(usage));
      }
      out.write("data: [DONE]\n\n");
    }
  }

  static String data(JsonNode chunk) {
    return "data: " + Json.toString(chunk) + "\n\n";
  }

  private void models(HttpExchange exchange) throws IOException {
    if (!authorized(exchange)) {
      return;
    }
    ObjectNode out = Json.object().put("object", "list");
    ArrayNode data = out.putArray("data");
    for (String model : MODELS) {
      data.addObject().put("id", model).put("object", "model").put("created", 1686935002).put("owned_by", "system");
    }
    sendJson(exchange, 200, out);
  }

  private void status(HttpExchange exchange) throws IOException {
    Instant now = clock.instant();
    CapacitySchedule current = schedule.get();
    Instant next = current.nextChange(now);
    ObjectNode out = Json.object();
    out.put("state", current.atCapacity(now) ? "at_capacity" : "healthy");
    out.put("nextChangeAt", next == null ? null : next.toString());
    out.put("served", served.get());
    out.put("refusedAtCapacity", refused.get());
    sendJson(exchange, 200, out);
  }

  private static ObjectNode error(String message, String type, String code) {
    ObjectNode out = Json.object();
    out.putObject("error").put("message", message).put("type", type).putNull("param").put("code", code);
    return out;
  }

  @Override
  void notFound(HttpExchange exchange) throws IOException {
    sendJson(exchange, 404, error("Unknown path " + exchange.getRequestURI().getPath() + " on the simulated cloud",
        "invalid_request_error", "unknown_url"));
  }

  @Override
  void badRequest(HttpExchange exchange, String message) throws IOException {
    sendJson(exchange, 400, error(message, "invalid_request_error", null));
  }
}
