package io.spillway.app.local;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import io.spillway.app.testing.OpenAiStubs;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A fake GPU server on a loopback port, speaking Ollama's native API ({@code /api/version},
 * {@code /api/tags}, {@code /api/ps}, {@code /api/generate} loads, {@code /api/chat}) or an
 * OpenAI-compatible one ({@code /v1/models}, {@code /v1/chat/completions}), written from the
 * documented wire formats. Answers can be slowed down so that requests overlap, and the box can be
 * killed and started again on the same port.
 */
final class GpuBox implements AutoCloseable {
  static final String CREATED_AT = "2026-11-10T10:00:00.123456Z";

  final String name;
  final String kind;
  private final List<String> models;
  private List<String> running;
  private final int answerMillis;
  private WireMockServer server;
  private int port;

  private GpuBox(String name, String kind, List<String> models, List<String> running, int answerMillis) {
    this.name = name;
    this.kind = kind;
    this.models = List.copyOf(models);
    this.running = List.copyOf(running);
    this.answerMillis = answerMillis;
  }

  /** An Ollama box with {@code models} pulled and {@code running} loaded, answering after {@code answerMillis}. */
  static GpuBox ollama(String name, List<String> models, List<String> running, int answerMillis) {
    return new GpuBox(name, "ollama", models, running, answerMillis).start(0);
  }

  /** An OpenAI-compatible box (vLLM-like) serving {@code models}. */
  static GpuBox openai(String name, List<String> models, int answerMillis) {
    return new GpuBox(name, "openai", models, models, answerMillis).start(0);
  }

  private GpuBox start(int onPort) {
    server = new WireMockServer(wireMockConfig().port(onPort).bindAddress("127.0.0.1").containerThreads(60)
        .jettyStopTimeout(0L));
    server.start();
    port = server.port();
    stub();
    return this;
  }

  private void stub() {
    if (kind.equals("ollama")) {
      server.stubFor(get("/api/version").willReturn(OpenAiStubs.json(200, "{\"version\":\"0.12.6\"}")));
      server.stubFor(get("/api/tags").willReturn(OpenAiStubs.json(200, "{\"models\":[" + models.stream()
          .map(m -> "{\"name\":\"" + m + "\",\"model\":\"" + m + "\",\"size\":4683087332}")
          .collect(Collectors.joining(",")) + "]}")));
      stubRunning();
      server.stubFor(post("/api/generate").willReturn(OpenAiStubs.json(200,
          "{\"model\":\"m\",\"created_at\":\"" + CREATED_AT + "\",\"response\":\"\",\"done\":true,\"done_reason\":\"load\"}")));
      for (String model : models) {
        server.stubFor(post("/api/chat").atPriority(4)
            .withRequestBody(matchingJsonPath("$.model", equalTo(model)))
            .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
            .willReturn(slow(aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson")
                .withBody(chatLines(model)))));
        server.stubFor(post("/api/chat").atPriority(5)
            .withRequestBody(matchingJsonPath("$.model", equalTo(model)))
            .willReturn(slow(OpenAiStubs.json(200, chatAnswer(model)))));
      }
      server.stubFor(post("/api/chat").atPriority(9).willReturn(OpenAiStubs.json(404,
          "{\"error\":\"model not found, try pulling it first\"}")));
    } else {
      server.stubFor(get("/v1/models").willReturn(OpenAiStubs.models(models.toArray(String[]::new))));
      server.stubFor(post("/v1/chat/completions").atPriority(1)
          .withRequestBody(matchingJsonPath("$.stream",
              equalTo("true")))
          .willReturn(slow(OpenAiStubs.chatStream(false, "Served ", "by ", name))));
      server.stubFor(post("/v1/chat/completions").atPriority(5)
          .willReturn(slow(OpenAiStubs.chatCompletion("Served by " + name))));
    }
  }

  private void stubRunning() {
    server.stubFor(get("/api/ps").willReturn(OpenAiStubs.json(200, "{\"models\":[" + running.stream()
        .map(m -> "{\"name\":\"" + m + "\",\"model\":\"" + m + "\",\"size\":5137025024,\"digest\":\"2ae6f6dd7a3dd7\","
            + "\"expires_at\":\"2026-11-10T10:20:00Z\",\"size_vram\":5137025024}")
        .collect(Collectors.joining(",")) + "]}")));
  }

  /** Ollama's streamed answer: a few lines of text naming this box, then the final line. */
  private String chatLines(String model) {
    StringBuilder out = new StringBuilder();
    for (String piece : List.of("Served ", "by ", name)) {
      out.append("{\"model\":\"").append(model).append("\",\"created_at\":\"").append(CREATED_AT)
          .append("\",\"message\":{\"role\":\"assistant\",\"content\":\"").append(piece).append("\"},\"done\":false}\n");
    }
    out.append("{\"model\":\"").append(model).append("\",\"created_at\":\"").append(CREATED_AT)
        .append("\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,")
        .append("\"prompt_eval_count\":12,\"eval_count\":3}\n");
    return out.toString();
  }

  /** Ollama's answer with {@code "stream": false}: one object. */
  private String chatAnswer(String model) {
    return "{\"model\":\"" + model + "\",\"created_at\":\"" + CREATED_AT + "\",\"message\":{\"role\":\"assistant\","
        + "\"content\":\"Served by " + name + "\"},\"done_reason\":\"stop\",\"done\":true,\"prompt_eval_count\":12,"
        + "\"eval_count\":3}";
  }

  private ResponseDefinitionBuilder slow(ResponseDefinitionBuilder answer) {
    return answerMillis > 0 ? answer.withChunkedDribbleDelay(4, answerMillis) : answer;
  }

  /** From now on the box answers chat requests with {@code status} (a broken GPU, say). */
  void failChats(int status) {
    String path = kind.equals("ollama") ? "/api/chat" : "/v1/chat/completions";
    server.stubFor(post(path).atPriority(0).willReturn(
        aResponse().withStatus(status).withHeader("Content-Type", "application/json")
            .withBody(kind.equals("ollama") ? "{\"error\":\"CUDA error: an illegal memory access was encountered\"}"
                : "{\"error\":{\"message\":\"CUDA error\",\"type\":\"server_error\"}}")));
  }

  /** Chat requests answer as they did before {@link #failChats}. */
  void healChats() {
    server.resetAll();
    stub();
  }

  /** Changes which models {@code /api/ps} says are loaded. */
  void running(List<String> loaded) {
    this.running = List.copyOf(loaded);
    stubRunning();
  }

  /** Chat requests this box received. */
  int chats() {
    String path = kind.equals("ollama") ? "/api/chat" : "/v1/chat/completions";
    return server.countRequestsMatching(postRequestedFor(urlEqualTo(path)).build()).getCount();
  }

  /** Chat requests this box received for {@code model}. */
  int chatsFor(String model) {
    String path = kind.equals("ollama") ? "/api/chat" : "/v1/chat/completions";
    return server.countRequestsMatching(postRequestedFor(urlEqualTo(path))
        .withRequestBody(matchingJsonPath("$.model",
            equalTo(model))).build()).getCount();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  /** Stops the box as a crash would: its port refuses connections, open connections are cut. */
  void kill() {
    server.stop();
  }

  /** Starts the box again on the same port, with the same models; its request log starts empty. */
  void restart() {
    start(port);
  }

  /** The YAML of this box as one entry of {@code local.servers}. */
  String serverYaml() {
    return "    - { name: " + name + ", kind: " + kind + ", baseUrl: " + baseUrl() + " }\n";
  }

  @Override
  public void close() {
    if (server.isRunning()) {
      server.stop();
    }
  }
}
