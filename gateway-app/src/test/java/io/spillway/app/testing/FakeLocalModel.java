package io.spillway.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A local model server that speaks both Ollama's native API ({@code /api/version}, {@code /api/tags},
 * {@code /api/ps}, {@code /api/show}, {@code /api/generate}, {@code /api/chat}, buffered or NDJSON)
 * and the OpenAI-compatible one under {@code /v1} ({@code /v1/models}, {@code /v1/chat/completions},
 * buffered or SSE), as documented, with the one model {@link #MODEL}. Its answer lists every user
 * message of the conversation it was sent ("local heard: a|b"), so a test sees what context reached
 * it. On an ephemeral loopback port.
 */
public final class FakeLocalModel implements AutoCloseable {
  public static final String MODEL = "qwen2.5-coder:7b";

  private final HttpServer server;
  /** The chat bodies received ({@code /api/chat} or {@code /v1/chat/completions}), in order. */
  public final List<JsonNode> chats = new CopyOnWriteArrayList<>();

  public FakeLocalModel() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", this::handle);
    server.start();
  }

  /** Ollama's base URL (no {@code /v1}). */
  public String ollamaUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The OpenAI-compatible base URL, ending in {@code /v1}. */
  public String openAiUrl() {
    return ollamaUrl() + "/v1";
  }

  /** The {@code local:} config section for {@code kind} ({@code ollama} or {@code openai}). */
  public String localYaml(String kind) {
    return """
        local:
          kind: %s
          baseUrl: %s
          models:
            default: %s
            gpt-4o-mini: %s
        """.formatted(kind, kind.equals("ollama") ? ollamaUrl() : openAiUrl(), MODEL, MODEL);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      byte[] body = exchange.getRequestBody().readAllBytes();
      switch (path) {
        case "/api/version" -> send(exchange, 200, "application/json", "{\"version\":\"0.12.6\"}");
        case "/api/tags" -> send(exchange, 200, "application/json",
            "{\"models\":[{\"name\":\"" + MODEL + "\",\"model\":\"" + MODEL + "\"}]}");
        case "/api/ps" -> send(exchange, 200, "application/json",
            "{\"models\":[{\"name\":\"" + MODEL + "\",\"model\":\"" + MODEL + "\"}]}");
        case "/api/show" -> send(exchange, 200, "application/json",
            "{\"model_info\":{\"qwen2.context_length\":32768}}");
        case "/api/generate" -> send(exchange, 200, "application/json",
            "{\"model\":\"" + MODEL + "\",\"response\":\"\",\"done\":true}");
        case "/api/chat" -> ollamaChat(exchange, (ObjectNode) Json.parse(body));
        case "/v1/models" -> send(exchange, 200, "application/json",
            "{\"object\":\"list\",\"data\":[{\"id\":\"" + MODEL + "\",\"object\":\"model\"}]}");
        case "/v1/chat/completions" -> openAiChat(exchange, (ObjectNode) Json.parse(body));
        default -> send(exchange, 404, "application/json", "{\"error\":\"not found\"}");
      }
    }
  }

  /** What the model says to a conversation: every user message it was sent. */
  private static String answer(JsonNode chat) {
    List<String> users = new ArrayList<>();
    chat.path("messages").forEach(m -> {
      if ("user".equals(m.path("role").asText())) {
        JsonNode content = m.get("content");
        if (content.isTextual()) {
          users.add(content.textValue());
        } else {
          content.forEach(part -> users.add(part.path("text").asText()));
        }
      }
    });
    return "local heard: " + String.join("|", users);
  }

  private void ollamaChat(HttpExchange exchange, ObjectNode chat) throws IOException {
    chats.add(chat);
    String text = answer(chat);
    ObjectNode done = Json.object().put("model", MODEL).put("created_at", "2026-11-10T10:00:00Z").put("done", true)
        .put("done_reason", "stop").put("prompt_eval_count", 40).put("eval_count", 6);
    if (!chat.path("stream").asBoolean(true)) {
      done.putObject("message").put("role", "assistant").put("content", text);
      send(exchange, 200, "application/json", Json.toString(done));
      return;
    }
    done.putObject("message").put("role", "assistant").put("content", "");
    ObjectNode piece = Json.object().put("model", MODEL).put("created_at", "2026-11-10T10:00:00Z").put("done", false);
    piece.putObject("message").put("role", "assistant").put("content", text);
    send(exchange, 200, "application/x-ndjson", Json.toString(piece) + "\n" + Json.toString(done) + "\n");
  }

  private void openAiChat(HttpExchange exchange, ObjectNode chat) throws IOException {
    chats.add(chat);
    String text = answer(chat);
    if (chat.path("stream").asBoolean(false)) {
      send(exchange, 200, "text/event-stream", OpenAiStubs.chatStreamBody(true, text));
    } else {
      send(exchange, 200, "application/json", OpenAiStubs.chatCompletionBody(text, 40, 6));
    }
  }

  private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
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
