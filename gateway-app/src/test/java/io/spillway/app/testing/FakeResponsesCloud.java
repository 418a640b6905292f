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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A cloud that keeps Responses API state as OpenAI documents it: it stores each response it issues
 * ({@code store} true, the default), continues one named by {@code previous_response_id} with
 * that response's whole context, resolves {@code item_reference}s to items it issued, and answers
 * 400 ({@code previous_response_not_found}, "Item with id … not found.") for any id it did not
 * issue. Its answer text lists every user text of the conversation it saw ("cloud heard: a|b"), so a
 * test sees what context reached it. {@code GET}/{@code DELETE /v1/responses/{id}} and
 * {@code /input_items} answer from what it holds, 404 otherwise. {@link #atCapacity} makes every
 * model call a 503 "Selected model is at capacity". On an ephemeral loopback port.
 */
public final class FakeResponsesCloud implements AutoCloseable {
  private final HttpServer server;
  private final AtomicInteger next = new AtomicInteger();
  /** Per response id: its whole context (input items then output items, every turn before it too). */
  private final Map<String, ArrayNode> contexts = new ConcurrentHashMap<>();
  private final Map<String, ObjectNode> responses = new ConcurrentHashMap<>();
  private final Map<String, ArrayNode> inputs = new ConcurrentHashMap<>();
  private final Map<String, JsonNode> items = new ConcurrentHashMap<>();
  /** The bodies of every {@code POST /v1/responses} received, in order. */
  public final List<JsonNode> received = new CopyOnWriteArrayList<>();
  public final List<String> paths = new CopyOnWriteArrayList<>();
  public final AtomicBoolean atCapacity = new AtomicBoolean();

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

  /** Whether it issued {@code id} and still holds it. */
  public boolean holds(String id) {
    return responses.containsKey(id);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      String method = exchange.getRequestMethod();
      paths.add(method + " " + path);
      byte[] body = exchange.getRequestBody().readAllBytes();
      if (method.equals("POST") && path.equals("/v1/responses")) {
        create(exchange, (ObjectNode) Json.parse(body));
      } else if (method.equals("POST") && path.equals("/v1/conversations")) {
        send(exchange, 200, Json.object().put("id", "conv_cloud" + next.incrementAndGet()).put("object", "conversation")
            .put("created_at", 1_794_304_800L));
      } else if (path.startsWith("/v1/responses/")) {
        stored(exchange, method, path.substring("/v1/responses/".length()));
      } else {
        send(exchange, 404, error("Unknown path " + path, null, null));
      }
    }
  }

  private void create(HttpExchange exchange, ObjectNode request) throws IOException {
    received.add(request);
    if (atCapacity.get()) {
      ObjectNode capacity = error("Selected model is at capacity. Please try a different model.", null, null);
      ((ObjectNode) capacity.get("error")).put("type", "server_error");
      send(exchange, 503, capacity);
      return;
    }
    ArrayNode context = Json.MAPPER.createArrayNode();
    String previous = Json.text(request, "previous_response_id");
    if (previous != null) {
      ArrayNode before = contexts.get(previous);
      if (before == null) {
        send(exchange, 400, error("Previous response with id '" + previous + "' not found.", "previous_response_id",
            "previous_response_not_found"));
        return;
      }
      context.addAll(before);
    }
    int n = next.incrementAndGet();
    ArrayNode input = Json.MAPPER.createArrayNode();
    JsonNode given = request.get("input");
    if (given.isTextual()) {
      input.add(Json.object().put("id", "msg_cin" + n).put("type", "message").put("role", "user")
          .set("content", Json.MAPPER.createArrayNode().add(Json.object().put("type", "input_text")
              .put("text", given.textValue()))));
    } else {
      int i = 0;
      for (JsonNode item : given) {
        if ("item_reference".equals(Json.text(item, "type"))) {
          JsonNode known = items.get(Json.text(item, "id"));
          if (known == null) {
            send(exchange, 400, error("Item with id '" + Json.text(item, "id") + "' not found.", "input", null));
            return;
          }
          input.add(known);
        } else {
          ObjectNode copy = ((ObjectNode) item).deepCopy();
          if (!copy.has("id")) {
            copy.put("id", "msg_cin" + n + "_" + i);
          }
          input.add(copy);
        }
        i++;
      }
    }
    context.addAll(input);
    String id = "resp_cloud" + n;
    String text = "cloud heard: " + String.join("|", userTexts(context));
    ObjectNode message = Json.object().put("id", "msg_cloud" + n).put("type", "message").put("status", "completed")
        .put("role", "assistant");
    message.putArray("content").addObject().put("type", "output_text").put("text", text).putArray("annotations");
    ObjectNode response = Json.object().put("id", id).put("object", "response").put("created_at", 1_794_304_800L)
        .put("status", "completed").put("model", Json.text(request, "model"));
    response.putNull("error");
    response.putNull("incomplete_details");
    ArrayNode output = response.putArray("output");
    if (Json.toString(request.path("include")).contains("reasoning.encrypted_content")) {
      ObjectNode reasoning = output.addObject().put("id", "rs_cloud" + n).put("type", "reasoning")
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
    response.putObject("usage").put("input_tokens", 10).put("output_tokens", 5).put("total_tokens", 15);
    context.add(message);
    if (store) {
      contexts.put(id, context);
      responses.put(id, response);
      inputs.put(id, input);
      input.forEach(item -> items.put(Json.text(item, "id"), item));
      items.put(Json.text(message, "id"), message);
    }
    if (request.path("stream").asBoolean(false)) {
      stream(exchange, response, message, text);
    } else {
      send(exchange, 200, response);
    }
  }

  private void stream(HttpExchange exchange, ObjectNode response, ObjectNode message, String text) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    ObjectNode created = response.deepCopy().put("status", "in_progress");
    created.putArray("output");
    StringBuilder out = new StringBuilder();
    event(out, "response.created", Json.object().put("type", "response.created").put("sequence_number", 0)
        .set("response", created));
    ObjectNode added = message.deepCopy().put("status", "in_progress");
    added.putArray("content");
    event(out, "response.output_item.added", Json.object().put("type", "response.output_item.added")
        .put("sequence_number", 1).put("output_index", 0).set("item", added));
    event(out, "response.output_text.delta", Json.object().put("type", "response.output_text.delta")
        .put("sequence_number", 2).put("item_id", Json.text(message, "id")).put("output_index", 0)
        .put("content_index", 0).put("delta", text));
    event(out, "response.output_item.done", Json.object().put("type", "response.output_item.done")
        .put("sequence_number", 3).put("output_index", 0).set("item", message));
    event(out, "response.completed", Json.object().put("type", "response.completed").put("sequence_number", 4)
        .set("response", response));
    try (OutputStream body = exchange.getResponseBody()) {
      body.write(out.toString().getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void event(StringBuilder out, String name, ObjectNode data) {
    out.append("event: ").append(name).append("\ndata: ").append(Json.toString(data)).append("\n\n");
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
