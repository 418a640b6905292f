package io.spillway.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for OpenAI's Responses API that keeps stored state as OpenAI documents it: it stores
 * each response it issues ({@code store} true, the default), continues one named by
 * {@code previous_response_id} with that response's whole context, resolves {@code item_reference}s
 * to items it issued, and answers 400 ({@code previous_response_not_found}, "Item with id … not
 * found.") for any id it did not issue; a request with {@code store: false} is answered and
 * forgotten. {@code GET}/{@code DELETE /v1/responses/{id}} and {@code /input_items} answer from what
 * it holds, 404 otherwise; {@code POST /v1/conversations} makes a conversation id.
 *
 * <p>Each answer says what conversation reached it: every user text in order, then how many user
 * messages and assistant answers it read ({@code "cloud heard: a|b; I have read 2 user messages and 1
 * assistant answers."}), so a test tells a continued conversation from a lost one. Streamed requests
 * get the event sequence OpenAI streams for a text answer. {@link #atCapacity(boolean)} makes every
 * model call OpenAI's 503 "Selected model is at capacity". Every model call, its authorization and
 * the answer are kept ({@link #exchanges()}), and every path asked. On an ephemeral loopback port;
 * thread-safe.
 */
public final class FakeResponsesCloud implements AutoCloseable {
  private final HttpServer server;
  private final AtomicInteger next = new AtomicInteger();
  /** Per response id: its whole context (input items then output items, every turn before it too). */
  private final Map<String, ArrayNode> contexts = new ConcurrentHashMap<>();
  private final Map<String, ObjectNode> responses = new ConcurrentHashMap<>();
  private final Map<String, ArrayNode> inputs = new ConcurrentHashMap<>();
  private final Map<String, JsonNode> items = new ConcurrentHashMap<>();
  private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
  /** Every request's method and path, in order. */
  public final List<String> paths = new CopyOnWriteArrayList<>();
  private volatile boolean atCapacity;

  /** One model call ({@code POST /v1/responses}) the cloud received, and what it answered. */
  public record Exchange(String authorization, JsonNode request, int status, String response) {}

  /** Starts on an ephemeral loopback port. */
  public static FakeResponsesCloud start() {
    return new FakeResponsesCloud();
  }

  public FakeResponsesCloud() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", this::handle);
    server.start();
  }

  /** The base URL to configure as {@code cloud.baseUrl}, ending in {@code /v1}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  /** While on, every model call is answered 503 "Selected model is at capacity". */
  public void atCapacity(boolean on) {
    atCapacity = on;
  }

  /** Every model call so far, in order. */
  public List<Exchange> exchanges() {
    return List.copyOf(exchanges);
  }

  /** The bodies of every model call so far, in order. */
  public List<JsonNode> received() {
    return exchanges.stream().map(Exchange::request).toList();
  }

  /** Whether it issued the response {@code id} and still holds it. */
  public boolean holds(String id) {
    return responses.containsKey(id);
  }

  /** Whether it issued (and stored) the response or item {@code id}. */
  public boolean issued(String id) {
    return responses.containsKey(id) || items.containsKey(id);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      String method = exchange.getRequestMethod();
      paths.add(method + " " + path);
      byte[] body = exchange.getRequestBody().readAllBytes();
      if (method.equals("POST") && path.equals("/v1/responses")) {
        ObjectNode request = (ObjectNode) Json.parse(body);
        try {
          create(exchange, request);
        } catch (RuntimeException e) {
          answer(exchange, request, 500, error("fake cloud failed: " + e, null, null));
        }
      } else if (method.equals("POST") && path.equals("/v1/conversations")) {
        send(exchange, 200, Json.object().put("id", "conv_cloud_" + next.incrementAndGet()).put("object", "conversation")
            .put("created_at", 1_794_304_800L));
      } else if (path.startsWith("/v1/responses/")) {
        stored(exchange, method, path.substring("/v1/responses/".length()));
      } else {
        send(exchange, 404, error("Unknown path " + path, null, null));
      }
    }
  }

  private void create(HttpExchange exchange, ObjectNode request) throws IOException {
    if (atCapacity) {
      ObjectNode capacity = error("Selected model is at capacity. Please try a different model.", null, null);
      ((ObjectNode) capacity.get("error")).put("type", "server_error");
      answer(exchange, request, 503, capacity);
      return;
    }
    ArrayNode context = Json.MAPPER.createArrayNode();
    String previous = Json.text(request, "previous_response_id");
    if (previous != null) {
      ArrayNode before = contexts.get(previous);
      if (before == null) {
        answer(exchange, request, 400, error("Previous response with id '" + previous + "' not found.",
            "previous_response_id", "previous_response_not_found"));
        return;
      }
      context.addAll(before);
    }
    int n = next.incrementAndGet();
    ArrayNode input = Json.MAPPER.createArrayNode();
    JsonNode given = request.get("input");
    if (given.isTextual()) {
      input.add(Json.object().put("id", "msg_cin_" + n).put("type", "message").put("role", "user")
          .set("content", Json.MAPPER.createArrayNode().add(Json.object().put("type", "input_text")
              .put("text", given.textValue()))));
    } else {
      int i = 0;
      for (JsonNode item : given) {
        if ("item_reference".equals(Json.text(item, "type"))) {
          JsonNode known = items.get(Json.text(item, "id"));
          if (known == null) {
            answer(exchange, request, 400, error("Item with id '" + Json.text(item, "id") + "' not found.", "input", null));
            return;
          }
          input.add(known);
        } else {
          ObjectNode copy = ((ObjectNode) item).deepCopy();
          if (!copy.has("id")) {
            copy.put("id", "msg_cin_" + n + "_" + i);
          }
          input.add(copy);
        }
        i++;
      }
    }
    context.addAll(input);
    String id = "resp_cloud_" + n;
    long assistants = 0;
    for (JsonNode item : context) {
      assistants += "assistant".equals(Json.text(item, "role")) ? 1 : 0;
    }
    List<String> users = userTexts(context);
    String text = "cloud heard: " + String.join("|", users) + "; I have read " + users.size() + " user messages and "
        + assistants + " assistant answers.";
    ObjectNode message = Json.object().put("id", "msg_cloud_" + n).put("type", "message").put("status", "completed")
        .put("role", "assistant");
    message.putArray("content").addObject().put("type", "output_text").put("text", text).putArray("annotations");
    ObjectNode response = Json.object().put("id", id).put("object", "response").put("created_at", 1_794_304_800L + n)
        .put("status", "completed").put("model", Json.text(request, "model"));
    response.putNull("error");
    response.putNull("incomplete_details");
    ArrayNode output = response.putArray("output");
    if (Json.toString(request.path("include")).contains("reasoning.encrypted_content")) {
      ObjectNode reasoning = output.addObject().put("id", "rs_cloud_" + n).put("type", "reasoning")
          .put("encrypted_content", "gAAAA-sealed-by-the-cloud-" + n);
      reasoning.putArray("summary");
      context.add(reasoning);
      items.put(Json.text(reasoning, "id"), reasoning);
    }
    output.add(message);
    response.put("parallel_tool_calls", true);
    response.set("previous_response_id", previous == null ? Json.MAPPER.nullNode() : Json.MAPPER.valueToTree(previous));
    boolean store = !request.has("store") || request.get("store").asBoolean(true);
    response.put("store", store);
    response.put("tool_choice", "auto");
    response.putArray("tools");
    ObjectNode usage = response.putObject("usage").put("input_tokens", 20 * context.size()).put("output_tokens", 12)
        .put("total_tokens", 20 * context.size() + 12);
    usage.putObject("input_tokens_details").put("cached_tokens", 0);
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    context.add(message);
    if (store) {
      contexts.put(id, context);
      responses.put(id, response);
      inputs.put(id, input);
      input.forEach(item -> items.put(Json.text(item, "id"), item));
      items.put(Json.text(message, "id"), message);
    }
    if (request.path("stream").asBoolean(false)) {
      String events = events(response, message, text);
      exchanges.add(new Exchange(authorization(exchange), request, 200, events));
      byte[] bytes = events.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
      exchange.sendResponseHeaders(200, bytes.length);
      try (OutputStream body = exchange.getResponseBody()) {
        body.write(bytes);
      }
    } else {
      answer(exchange, request, 200, response);
    }
  }

  /** The event sequence OpenAI streams for one text answer, {@code response.created} to {@code .completed}. */
  private static String events(ObjectNode completed, ObjectNode message, String text) {
    String itemId = Json.text(message, "id");
    List<ObjectNode> events = new ArrayList<>();
    ObjectNode inProgress = completed.deepCopy().put("status", "in_progress");
    inProgress.putArray("output");
    inProgress.remove("usage");
    events.add(event("response.created").set("response", inProgress.deepCopy()));
    events.add(event("response.in_progress").set("response", inProgress));
    ObjectNode added = message.deepCopy().put("status", "in_progress");
    added.putArray("content");
    events.add(event("response.output_item.added").put("output_index", 0).set("item", added));
    ObjectNode emptyPart = Json.object().put("type", "output_text").put("text", "");
    emptyPart.putArray("annotations");
    events.add(part(event("response.content_part.added"), itemId).set("part", emptyPart));
    for (String piece : text.split("(?<= )")) {
      events.add(part(event("response.output_text.delta"), itemId).put("delta", piece));
    }
    events.add(part(event("response.output_text.done"), itemId).put("text", text));
    events.add(part(event("response.content_part.done"), itemId).set("part", message.get("content").get(0)));
    events.add(event("response.output_item.done").put("output_index", 0).set("item", message));
    events.add(event("response.completed").set("response", completed));
    StringBuilder body = new StringBuilder();
    for (int i = 0; i < events.size(); i++) {
      ObjectNode e = events.get(i).put("sequence_number", i);
      body.append("event: ").append(Json.text(e, "type")).append("\ndata: ").append(Json.toString(e)).append("\n\n");
    }
    return body.toString();
  }

  private static ObjectNode event(String type) {
    return Json.object().put("type", type);
  }

  private static ObjectNode part(ObjectNode event, String itemId) {
    return event.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
  }

  private static String authorization(HttpExchange exchange) {
    return exchange.getRequestHeaders().getFirst("Authorization");
  }

  /** Answers a model call with {@code body}, and keeps the exchange. */
  private void answer(HttpExchange exchange, JsonNode request, int status, ObjectNode body) throws IOException {
    exchanges.add(new Exchange(authorization(exchange), request, status, Json.toString(body)));
    send(exchange, status, body);
  }

  private void stored(HttpExchange exchange, String method, String rest) throws IOException {
    String[] parts = rest.split("/");
    String id = parts[0];
    ObjectNode response = responses.get(id);
    if (response == null) {
      send(exchange, 404, error("Response with id '" + id + "' not found.", null, null));
      return;
    }
    if (method.equals("DELETE")) {
      responses.remove(id);
      contexts.remove(id);
      send(exchange, 200, Json.object().put("id", id).put("object", "response").put("deleted", true));
    } else if (parts.length == 2 && parts[1].equals("input_items")) {
      ObjectNode list = Json.object().put("object", "list");
      ArrayNode data = list.putArray("data");
      List<JsonNode> all = new ArrayList<>();
      inputs.get(id).forEach(all::add);
      java.util.Collections.reverse(all);
      all.forEach(data::add);
      list.put("first_id", Json.text(all.get(0), "id")).put("last_id", Json.text(all.get(all.size() - 1), "id"))
          .put("has_more", false);
      send(exchange, 200, list);
    } else {
      send(exchange, 200, response);
    }
  }

  /** Every user text of a context, in order. */
  public static List<String> userTexts(JsonNode context) {
    List<String> texts = new ArrayList<>();
    for (JsonNode item : context) {
      if (!"user".equals(Json.text(item, "role"))) {
        continue;
      }
      JsonNode content = item.get("content");
      if (content.isTextual()) {
        texts.add(content.textValue());
      } else {
        content.forEach(part -> texts.add(part.path("text").asText()));
      }
    }
    return texts;
  }

  private static ObjectNode error(String message, String param, String code) {
    ObjectNode error = Json.object();
    ObjectNode body = error.putObject("error").put("message", message).put("type", "invalid_request_error");
    body.set("param", param == null ? Json.MAPPER.nullNode() : Json.MAPPER.valueToTree(param));
    body.set("code", code == null ? Json.MAPPER.nullNode() : Json.MAPPER.valueToTree(code));
    return error;
  }

  private static void send(HttpExchange exchange, int status, ObjectNode body) throws IOException {
    byte[] bytes = Json.toBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
