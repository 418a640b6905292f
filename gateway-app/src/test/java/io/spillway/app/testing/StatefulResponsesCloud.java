package io.spillway.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.spillway.core.json.Json;
import java.io.IOException;
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
 * A stand-in for OpenAI's {@code POST /v1/responses} that keeps stored state the way OpenAI does, so
 * a test sees what a conversation that relies on it needs from the gateway. It knows only the ids it
 * issued itself: {@code previous_response_id} continues one of its own stored responses (their inputs
 * and outputs, in order), an {@code item_reference} resolves one of its own stored output items, and
 * anything else is answered 400 with OpenAI's error body ({@code previous_response_not_found}, or
 * "Item with id … not found" on {@code input}). A request with {@code store: false} is answered and
 * forgotten.
 *
 * <p>Each answer says how much conversation this cloud saw ({@code "Cloud answer 3: I have read 3
 * user messages and 2 assistant answers."}), so a test can tell a continued conversation from a lost
 * one. Streamed requests get the Responses event sequence OpenAI sends for a text answer. {@link
 * #atCapacity(boolean)} turns on a capacity storm: every request gets OpenAI's 503 "Selected model is
 * at capacity". Every request and its status are kept for assertions. Thread-safe.
 */
public final class StatefulResponsesCloud implements AutoCloseable {
  private static final String AT_CAPACITY = """
      {"error":{"message":"Selected model is at capacity. Please try a different model.","type":"server_error","param":null,"code":null}}""";

  /** One request the cloud received, and the status it answered. */
  public record Exchange(String authorization, JsonNode request, int status, String response) {}

  private record Stored(List<JsonNode> conversation) {}

  private final HttpServer server;
  private final Map<String, Stored> responses = new ConcurrentHashMap<>();
  private final Map<String, JsonNode> items = new ConcurrentHashMap<>();
  private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();
  private volatile boolean atCapacity;

  private StatefulResponsesCloud(HttpServer server) {
    this.server = server;
  }

  /** Starts on an ephemeral loopback port. */
  public static StatefulResponsesCloud start() {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      StatefulResponsesCloud cloud = new StatefulResponsesCloud(server);
      server.createContext("/v1/responses", cloud::handle);
      server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
      server.start();
      return cloud;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The base URL a gateway's {@code cloud.baseUrl} takes, ending in {@code /v1}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  /** While on, every request is answered 503 "Selected model is at capacity". */
  public void atCapacity(boolean on) {
    atCapacity = on;
  }

  public List<Exchange> exchanges() {
    return List.copyOf(exchanges);
  }

  /** Whether this cloud issued (and stored) the response or item id. */
  public boolean issued(String id) {
    return responses.containsKey(id) || items.containsKey(id);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod()) || !"/v1/responses".equals(exchange.getRequestURI().getPath())) {
        send(exchange, null, 404, "application/json", error("No such route.", "invalid_request_error", null, null));
        return;
      }
      JsonNode request = Json.parse(exchange.getRequestBody().readAllBytes());
      if (atCapacity) {
        send(exchange, request, 503, "application/json", AT_CAPACITY);
        return;
      }
      List<JsonNode> conversation = new ArrayList<>();
      String previous = request.path("previous_response_id").asText(null);
      if (previous != null) {
        Stored stored = responses.get(previous);
        if (stored == null) {
          send(exchange, request, 400, "application/json", error("Previous response with id '" + previous
              + "' not found.", "invalid_request_error", "previous_response_id", "previous_response_not_found"));
          return;
        }
        conversation.addAll(stored.conversation());
      }
      JsonNode input = request.path("input");
      if (input.isTextual()) {
        conversation.add(Json.object().put("type", "message").put("role", "user").put("content", input.asText()));
      } else {
        for (JsonNode item : input) {
          if ("item_reference".equals(item.path("type").asText())) {
            JsonNode referenced = items.get(item.path("id").asText());
            if (referenced == null) {
              send(exchange, request, 400, "application/json", error("Item with id '" + item.path("id").asText()
                  + "' not found. Items are not persisted when `store` is set to false. Try again with `store` set"
                  + " to true, or remove this item from your input.", "invalid_request_error", "input", null));
              return;
            }
            conversation.add(referenced);
          } else {
            conversation.add(item);
          }
        }
      }
      answer(exchange, request, conversation);
    } catch (RuntimeException e) {
      send(exchange, null, 500, "application/json", error("fake cloud failed: " + e, "server_error", null, null));
    }
  }

  private void answer(HttpExchange exchange, JsonNode request, List<JsonNode> conversation) throws IOException {
    int n = ids.incrementAndGet();
    String responseId = "resp_cloud_" + n;
    String messageId = "msg_cloud_" + n;
    long users = conversation.stream().filter(i -> "user".equals(i.path("role").asText())).count();
    long assistants = conversation.stream().filter(i -> "assistant".equals(i.path("role").asText())).count();
    String text = "Cloud answer " + n + ": I have read " + users + " user messages and " + assistants
        + " assistant answers.";

    ObjectNode part = Json.object().put("type", "output_text").put("text", text);
    part.putArray("annotations");
    ObjectNode message = Json.object().put("id", messageId).put("type", "message").put("status", "completed")
        .put("role", "assistant");
    message.putArray("content").add(part);
    boolean store = request.path("store").asBoolean(true);
    ObjectNode response = Json.object().put("id", responseId).put("object", "response")
        .put("created_at", 1_794_304_800L + n).put("status", "completed").put("model", request.path("model").asText())
        .put("store", store);
    response.set("previous_response_id", request.path("previous_response_id").isMissingNode()
        ? Json.MAPPER.nullNode() : request.get("previous_response_id"));
    response.putArray("output").add(message);
    ObjectNode usage = response.putObject("usage").put("input_tokens", 20 * conversation.size())
        .put("output_tokens", 12).put("total_tokens", 20 * conversation.size() + 12);
    usage.putObject("input_tokens_details").put("cached_tokens", 0);
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    if (store) {
      List<JsonNode> kept = new ArrayList<>(conversation);
      kept.add(message);
      responses.put(responseId, new Stored(List.copyOf(kept)));
      items.put(messageId, message);
    }
    if (request.path("stream").asBoolean(false)) {
      send(exchange, request, 200, "text/event-stream", events(response, message, text));
    } else {
      send(exchange, request, 200, "application/json", Json.toString(response));
    }
  }

  /** The event sequence OpenAI streams for one text answer, {@code response.created} to {@code .completed}. */
  private static String events(ObjectNode completed, ObjectNode message, String text) {
    String itemId = message.get("id").asText();
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
      body.append("event: ").append(e.get("type").asText()).append("\ndata: ").append(Json.toString(e)).append("\n\n");
    }
    return body.toString();
  }

  private static ObjectNode event(String type) {
    return Json.object().put("type", type);
  }

  private static ObjectNode part(ObjectNode event, String itemId) {
    return event.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
  }

  private static String error(String message, String type, String param, String code) {
    ObjectNode error = Json.object();
    ObjectNode body = error.putObject("error").put("message", message).put("type", type);
    body.set("param", param == null ? Json.MAPPER.nullNode() : Json.MAPPER.getNodeFactory().textNode(param));
    body.set("code", code == null ? Json.MAPPER.nullNode() : Json.MAPPER.getNodeFactory().textNode(code));
    return Json.toString(error);
  }

  private void send(HttpExchange exchange, JsonNode request, int status, String contentType, String body)
      throws IOException {
    exchanges.add(new Exchange(exchange.getRequestHeaders().getFirst("Authorization"), request, status, body));
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
  }

  /** The conversation a stored response continues with, for assertions: its items in order. */
  public List<JsonNode> conversationOf(String responseId) {
    Stored stored = responses.get(responseId);
    if (stored == null) {
      throw new IllegalArgumentException("this cloud never stored " + responseId);
    }
    return stored.conversation();
  }
}
