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
 * event sequence) and {@code /v1/models} while healthy, and
 * OpenAI's 503 {@code Selected model is at capacity} body while at capacity.
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
    served.incrementAndGet();
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
    String answer = SimulatedText.answer("the simulated cloud", model, prompt);
    int promptTokens = SimulatedText.tokens(prompt) + 8;
    boolean stream = body.path("stream").asBoolean(false);
    boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
    long created = clock.instant().getEpochSecond();
    String requestId = "req_" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    exchange.getResponseHeaders().set("x-request-id", requestId);
    exchange.getResponseHeaders().set("openai-processing-ms", "42");
    switch (kind) {
      case CHAT -> {
        if (stream) {
          chatStream(exchange, model, answer, promptTokens, created, includeUsage);
        } else {
          sendJson(exchange, 200, chatCompletion(model, answer, promptTokens, created));
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
        if (stream) {
          responseStream(exchange, body, model, answer, promptTokens, created);
        } else {
          sendJson(exchange, 200, response(body, model, answer, promptTokens, created, "completed"));
        }
      }
    }
  }

  private static ObjectNode usage(int prompt, int completion) {
    return Json.object().put("prompt_tokens", prompt).put("completion_tokens", completion)
        .put("total_tokens", prompt + completion);
  }

  private ObjectNode chatCompletion(String model, String answer, int promptTokens, long created) {
    ObjectNode out = Json.object();
    out.put("id", "chatcmpl-sim" + created);
    out.put("object", "chat.completion");
    out.put("created", created);
    out.put("model", model);
    ObjectNode choice = out.putArray("choices").addObject();
    choice.put("index", 0);
    choice.putObject("message").put("role", "assistant").put("content", answer).putNull("refusal")
        .putArray("annotations");
    choice.putNull("logprobs");
    choice.put("finish_reason", "stop");
    out.set("usage", usage(promptTokens, SimulatedText.tokens(answer)));
    out.put("service_tier", "default");
    out.put("system_fingerprint", "fp_simulated");
    return out;
  }

  private void chatStream(
      HttpExchange exchange, String model, String answer, int promptTokens, long created, boolean includeUsage)
      throws IOException {
    String id = "chatcmpl-sim" + created;
    List<String> pieces = SimulatedText.pieces(answer);
    try (Chunks out = new Chunks(exchange, "text/event-stream", tokenPause)) {
      out.write(data(chatChunk(id, model, created, Json.object().put("role", "assistant").put("content", ""), null,
          includeUsage)));
      for (String piece : pieces) {
        out.write(data(chatChunk(id, model, created, Json.object().put("content", piece), null, includeUsage)));
      }
      out.write(data(chatChunk(id, model, created, Json.object(), "stop", includeUsage)));
      if (includeUsage) {
        ObjectNode usage = Json.object().put("id", id).put("object", "chat.completion.chunk").put("created", created)
            .put("model", model).put("system_fingerprint", "fp_simulated");
        usage.putArray("choices");
        usage.set("usage", usage(promptTokens, pieces.size()));
        out.write(data(usage));
      }
      out.write("data: [DONE]\n\n");
    }
  }

  private static ObjectNode chatChunk(
      String id, String model, long created, ObjectNode delta, String finishReason, boolean includeUsage) {
    ObjectNode chunk = Json.object().put("id", id).put("object", "chat.completion.chunk").put("created", created)
        .put("model", model).put("system_fingerprint", "fp_simulated");
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return chunk;
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

  private ObjectNode response(
      ObjectNode request, String model, String answer, int promptTokens, long created, String status) {
    boolean done = !status.equals("in_progress");
    ObjectNode out = Json.object();
    out.put("id", "resp_sim" + created);
    out.put("object", "response");
    out.put("created_at", created);
    out.put("status", status);
    out.putNull("error");
    out.putNull("incomplete_details");
    out.set("instructions", request.has("instructions") ? request.get("instructions") : Json.MAPPER.getNodeFactory().nullNode());
    out.set("max_output_tokens",
        request.has("max_output_tokens") ? request.get("max_output_tokens") : Json.MAPPER.getNodeFactory().nullNode());
    out.put("model", model);
    ArrayNode output = out.putArray("output");
    if (done) {
      output.add(messageItem("msg_sim" + created, "completed", answer));
    }
    out.put("parallel_tool_calls", true);
    out.putNull("previous_response_id");
    out.putObject("reasoning").putNull("effort").putNull("summary");
    out.put("store", true);
    out.put("temperature", 1.0);
    out.putObject("text").putObject("format").put("type", "text");
    out.set("tool_choice", request.has("tool_choice") ? request.get("tool_choice") : Json.MAPPER.getNodeFactory().textNode("auto"));
    out.set("tools", request.has("tools") ? request.get("tools") : Json.MAPPER.createArrayNode());
    out.put("top_p", 1.0);
    out.put("truncation", "disabled");
    if (done) {
      int outputTokens = SimulatedText.tokens(answer);
      ObjectNode usage = out.putObject("usage");
      usage.put("input_tokens", promptTokens);
      usage.putObject("input_tokens_details").put("cached_tokens", 0);
      usage.put("output_tokens", outputTokens);
      usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
      usage.put("total_tokens", promptTokens + outputTokens);
    } else {
      out.putNull("usage");
    }
    out.putNull("user");
    out.putObject("metadata");
    return out;
  }

  /**
   * A streamed Response with the event sequence the OpenAI API emits for one text message:
   * {@code response.created}, {@code response.in_progress}, {@code response.output_item.added},
   * {@code response.content_part.added}, {@code response.output_text.delta} per piece,
   * {@code response.output_text.done}, {@code response.content_part.done},
   * {@code response.output_item.done} and {@code response.completed} (with usage), each with its
   * {@code sequence_number}. Agents such as the Codex CLI build their turn from the item events.
   */
  private void responseStream(
      HttpExchange exchange, ObjectNode request, String model, String answer, int promptTokens, long created)
      throws IOException {
    String itemId = "msg_sim" + created;
    int sequence = 0;
    try (Chunks out = new Chunks(exchange, "text/event-stream", tokenPause)) {
      ObjectNode started = response(request, model, answer, promptTokens, created, "in_progress");
      out.write(event("response.created", sequence++, Json.object().set("response", started)));
      out.write(event("response.in_progress", sequence++, Json.object().set("response", started)));
      out.write(event("response.output_item.added", sequence++,
          Json.object().put("output_index", 0).set("item", messageItem(itemId, "in_progress", null))));
      out.write(event("response.content_part.added", sequence++, part(itemId).set("part", outputText(""))));
      for (String piece : SimulatedText.pieces(answer)) {
        ObjectNode delta = part(itemId).put("delta", piece);
        delta.putArray("logprobs");
        out.write(event("response.output_text.delta", sequence++, delta));
      }
      ObjectNode done = part(itemId).put("text", answer);
      done.putArray("logprobs");
      out.write(event("response.output_text.done", sequence++, done));
      out.write(event("response.content_part.done", sequence++, part(itemId).set("part", outputText(answer))));
      out.write(event("response.output_item.done", sequence++,
          Json.object().put("output_index", 0).set("item", messageItem(itemId, "completed", answer))));
      out.write(event("response.completed", sequence,
          Json.object().set("response", response(request, model, answer, promptTokens, created, "completed"))));
    }
  }

  /** The fields every content-part event carries. */
  private static ObjectNode part(String itemId) {
    return Json.object().put("item_id", itemId).put("output_index", 0).put("content_index", 0);
  }

  private static ObjectNode outputText(String text) {
    ObjectNode part = Json.object().put("type", "output_text");
    part.putArray("annotations");
    part.putArray("logprobs");
    part.put("text", text);
    return part;
  }

  /** An assistant message output item; {@code text} null while it has no content yet. */
  private static ObjectNode messageItem(String itemId, String status, String text) {
    ObjectNode item = Json.object().put("id", itemId).put("type", "message").put("status", status)
        .put("role", "assistant");
    ArrayNode content = item.putArray("content");
    if (text != null) {
      content.add(outputText(text));
    }
    return item;
  }

  private static String event(String type, int sequence, JsonNode fields) {
    ObjectNode event = Json.object().put("type", type).put("sequence_number", sequence);
    event.setAll((ObjectNode) fields);
    return "event: " + type + "\ndata: " + Json.toString(event) + "\n\n";
  }

  private static String data(JsonNode chunk) {
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
