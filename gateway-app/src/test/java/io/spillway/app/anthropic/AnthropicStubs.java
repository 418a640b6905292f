package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.MappingBuilder;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.matching.StringValuePattern;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Stand-ins for Anthropic's Messages API (a message, its event stream, its {@code 529
 * overloaded_error} and {@code 429 rate_limit_error}) and for Ollama's {@code /api/chat} answering
 * text or a tool call, written from Anthropic's and Ollama's API documentation.
 */
final class AnthropicStubs {
  static final String OLLAMA_MODEL = "qwen2.5-coder:7b";

  private AnthropicStubs() {}

  /** A whole Messages API answer with {@code text}. */
  static ResponseDefinitionBuilder message(String model, String text) {
    ObjectNode message = Json.object().put("id", "msg_cloud_1").put("type", "message").put("role", "assistant")
        .put("model", model);
    message.putArray("content").addObject().put("type", "text").put("text", text);
    message.put("stop_reason", "end_turn").putNull("stop_sequence");
    message.putObject("usage").put("input_tokens", 20).put("cache_creation_input_tokens", 100)
        .put("cache_read_input_tokens", 300).put("output_tokens", 7);
    return OpenAiStubs.json(200, Json.toString(message));
  }

  /** A Messages API stream answering {@code text}, with every event Anthropic sends for it. */
  static ResponseDefinitionBuilder messageStream(String model, String text) {
    List<String> events = new ArrayList<>();
    ObjectNode start = Json.object().put("type", "message_start");
    ObjectNode message = start.putObject("message").put("id", "msg_cloud_1").put("type", "message")
        .put("role", "assistant").put("model", model);
    message.putArray("content");
    message.putNull("stop_reason").putNull("stop_sequence");
    message.putObject("usage").put("input_tokens", 20).put("cache_creation_input_tokens", 100)
        .put("cache_read_input_tokens", 300).put("output_tokens", 1);
    events.add(sse("message_start", start));
    events.add(sse("content_block_start", Json.object().put("type", "content_block_start").put("index", 0)
        .set("content_block", Json.object().put("type", "text").put("text", ""))));
    events.add(sse("ping", Json.object().put("type", "ping")));
    events.add(sse("content_block_delta", Json.object().put("type", "content_block_delta").put("index", 0)
        .set("delta", Json.object().put("type", "text_delta").put("text", text))));
    events.add(sse("content_block_stop", Json.object().put("type", "content_block_stop").put("index", 0)));
    ObjectNode delta = Json.object().put("type", "message_delta");
    delta.putObject("delta").put("stop_reason", "end_turn").putNull("stop_sequence");
    delta.putObject("usage").put("output_tokens", 7);
    events.add(sse("message_delta", delta));
    events.add(sse("message_stop", Json.object().put("type", "message_stop")));
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
        .withBody(String.join("", events));
  }

  /** A whole Messages API answer calling the tool {@code name} with {@code input}. */
  static ResponseDefinitionBuilder toolUse(String model, String id, String name, ObjectNode input) {
    ObjectNode message = Json.object().put("id", "msg_cloud_tool").put("type", "message").put("role", "assistant")
        .put("model", model);
    message.putArray("content").addObject().put("type", "tool_use").put("id", id).put("name", name)
        .set("input", input);
    message.put("stop_reason", "tool_use").putNull("stop_sequence");
    message.putObject("usage").put("input_tokens", 30).put("output_tokens", 12);
    return OpenAiStubs.json(200, Json.toString(message));
  }

  /** The Messages stream of {@link #toolUse}: a {@code tool_use} block whose input comes in two pieces. */
  static ResponseDefinitionBuilder toolUseStream(String model, String id, String name, ObjectNode input) {
    List<String> events = new ArrayList<>();
    ObjectNode start = Json.object().put("type", "message_start");
    ObjectNode message = start.putObject("message").put("id", "msg_cloud_tool").put("type", "message")
        .put("role", "assistant").put("model", model);
    message.putArray("content");
    message.putNull("stop_reason").putNull("stop_sequence");
    message.putObject("usage").put("input_tokens", 30).put("output_tokens", 1);
    events.add(sse("message_start", start));
    ObjectNode block = Json.object().put("type", "tool_use").put("id", id).put("name", name);
    block.putObject("input");
    events.add(sse("content_block_start", Json.object().put("type", "content_block_start").put("index", 0)
        .set("content_block", block)));
    String json = Json.toString(input);
    int half = json.length() / 2;
    for (String piece : List.of(json.substring(0, half), json.substring(half))) {
      events.add(sse("content_block_delta", Json.object().put("type", "content_block_delta").put("index", 0)
          .set("delta", Json.object().put("type", "input_json_delta").put("partial_json", piece))));
    }
    events.add(sse("content_block_stop", Json.object().put("type", "content_block_stop").put("index", 0)));
    ObjectNode delta = Json.object().put("type", "message_delta");
    delta.putObject("delta").put("stop_reason", "tool_use").putNull("stop_sequence");
    delta.putObject("usage").put("output_tokens", 12);
    events.add(sse("message_delta", delta));
    events.add(sse("message_stop", Json.object().put("type", "message_stop")));
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
        .withBody(String.join("", events));
  }

  /** A stream that starts, then reports {@code overloaded_error} before any content, as Anthropic can. */
  static ResponseDefinitionBuilder overloadedMidStream(String model) {
    ObjectNode start = Json.object().put("type", "message_start");
    ObjectNode message = start.putObject("message").put("id", "msg_cloud_2").put("type", "message")
        .put("role", "assistant").put("model", model);
    message.putArray("content");
    message.putObject("usage").put("input_tokens", 20).put("output_tokens", 1);
    String body = sse("message_start", start) + sse("ping", Json.object().put("type", "ping"))
        + sse("error", overloadedBody());
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
  }

  static ResponseDefinitionBuilder overloaded529() {
    return OpenAiStubs.json(529, Json.toString(overloadedBody()));
  }

  static ResponseDefinitionBuilder rateLimited(int retryAfterSeconds) {
    ObjectNode body = Json.object().put("type", "error");
    body.putObject("error").put("type", "rate_limit_error")
        .put("message", "This request would exceed your organization's rate limit.");
    return OpenAiStubs.json(429, Json.toString(body)).withHeader("retry-after", Integer.toString(retryAfterSeconds));
  }

  private static ObjectNode overloadedBody() {
    ObjectNode body = Json.object().put("type", "error");
    body.putObject("error").put("type", "overloaded_error").put("message", "Overloaded");
    return body;
  }

  private static String sse(String name, JsonNode data) {
    return "event: " + name + "\ndata: " + Json.toString(data) + "\n\n";
  }

  /** Makes {@code ollama} answer its readiness probes with {@link #OLLAMA_MODEL} present. */
  static void ollamaReady(WireMockServer ollama) {
    ollama.stubFor(get("/api/version").willReturn(OpenAiStubs.json(200, "{\"version\":\"0.12.6\"}")));
    ollama.stubFor(get("/api/tags").willReturn(OpenAiStubs.json(200,
        "{\"models\":[{\"name\":\"" + OLLAMA_MODEL + "\",\"model\":\"" + OLLAMA_MODEL + "\"}]}")));
  }

  /**
   * Makes {@code ollama} an Ollama of 0.14 or later, which serves Anthropic's Messages API itself:
   * its {@code /v1/messages} refuses a request without a model as Ollama does (400, in Anthropic's
   * shape, before any model is loaded), which is how Spillway's probe learns that the endpoint is there.
   */
  static void ollamaServesMessages(WireMockServer ollama) {
    ollama.stubFor(get("/api/version").willReturn(OpenAiStubs.json(200, "{\"version\":\"0.14.2\"}")));
    ObjectNode refusal = Json.object().put("type", "error");
    refusal.putObject("error").put("type", "invalid_request_error").put("message", "model is required");
    ollama.stubFor(post("/v1/messages").atPriority(1).withRequestBody(matchingJsonPath("$[?(@.model == '')]"))
        .willReturn(OpenAiStubs.json(400, Json.toString(refusal))));
  }

  /**
   * Makes {@code ollama}'s own {@code /v1/messages} answer requests matching {@code body} (any when
   * null): with {@code streamed} to a stream request, {@code whole} otherwise.
   */
  static void ollamaMessages(WireMockServer ollama, int priority, StringValuePattern body,
      ResponseDefinitionBuilder streamed, ResponseDefinitionBuilder whole) {
    MappingBuilder stream = post("/v1/messages").atPriority(priority)
        .withRequestBody(matchingJsonPath("$[?(@.stream == true)]"));
    MappingBuilder buffered = post("/v1/messages").atPriority(priority + 1);
    if (body != null) {
      stream = stream.withRequestBody(body);
      buffered = buffered.withRequestBody(body);
    }
    ollama.stubFor(stream.willReturn(streamed));
    ollama.stubFor(buffered.willReturn(whole));
  }

  /** The bodies Spillway sent to Ollama's own {@code /v1/messages} (its probe left out), in order. */
  static List<JsonNode> ollamaMessagesCalls(WireMockServer ollama) {
    List<JsonNode> bodies = new ArrayList<>();
    ollama.findAll(postRequestedFor(urlEqualTo("/v1/messages"))).forEach(r -> bodies.add(parse(r.getBodyAsString())));
    return bodies.stream().filter(b -> !b.path("model").asText().isEmpty()).toList();
  }

  /**
   * Makes {@code ollama}'s {@code /api/chat} answer requests matching {@code body} (any when null)
   * with {@code lines}: as NDJSON to a stream request, as one object (the pieces' content joined,
   * the done line's counts) otherwise, as Ollama does.
   */
  static void ollamaChat(WireMockServer ollama, int priority, StringValuePattern body, List<ObjectNode> lines) {
    MappingBuilder streamed = post("/api/chat").atPriority(priority)
        .withRequestBody(matchingJsonPath("$[?(@.stream == true)]"));
    MappingBuilder whole = post("/api/chat").atPriority(priority + 1);
    if (body != null) {
      streamed = streamed.withRequestBody(body);
      whole = whole.withRequestBody(body);
    }
    ollama.stubFor(streamed.willReturn(ndjson(lines)));
    ObjectNode one = lines.get(lines.size() - 1).deepCopy();
    ObjectNode message = one.putObject("message").put("role", "assistant");
    StringBuilder content = new StringBuilder();
    for (ObjectNode line : lines) {
      content.append(line.path("message").path("content").asText(""));
      if (line.path("message").has("tool_calls")) {
        message.set("tool_calls", line.path("message").get("tool_calls"));
      }
    }
    message.put("content", content.toString());
    ollama.stubFor(whole.willReturn(OpenAiStubs.json(200, Json.toString(one))));
  }

  /** Makes {@code ollama}'s {@code /api/chat} stream {@code lines} only after {@code delayMillis}, as a model busy with a long prompt. */
  static void ollamaChatDelayed(WireMockServer ollama, List<ObjectNode> lines, int delayMillis) {
    ollama.stubFor(post("/api/chat").atPriority(5).withRequestBody(matchingJsonPath("$[?(@.stream == true)]"))
        .willReturn(ndjson(lines).withFixedDelay(delayMillis)));
  }

  /** Makes {@code ollama}'s {@code /api/chat} stream {@code lines} in {@code chunks} spread over {@code millis}. */
  static void ollamaChatDribbled(WireMockServer ollama, List<ObjectNode> lines, int chunks, int millis) {
    ollama.stubFor(post("/api/chat").atPriority(5).withRequestBody(matchingJsonPath("$[?(@.stream == true)]"))
        .willReturn(ndjson(lines).withChunkedDribbleDelay(chunks, millis)));
  }

  /** Ollama's answer lines: {@code text} in pieces, then the done line with the counts. */
  static List<ObjectNode> textLines(String text) {
    List<ObjectNode> lines = new ArrayList<>();
    for (String piece : text.split("(?<= )")) {
      ObjectNode line = line(false);
      line.putObject("message").put("role", "assistant").put("content", piece);
      lines.add(line);
    }
    lines.add(last(lines.size()));
    return lines;
  }

  /** Ollama's answer lines calling the tool {@code name} with {@code arguments}. */
  static List<ObjectNode> toolCallLines(String name, ObjectNode arguments) {
    ObjectNode call = Json.object();
    call.putObject("function").put("name", name).set("arguments", arguments);
    ObjectNode first = line(false);
    first.putObject("message").put("role", "assistant").put("content", "").putArray("tool_calls").add(call);
    return List.of(first, last(12));
  }

  /** The bodies Spillway sent to {@code /api/chat}, in order. */
  static List<JsonNode> ollamaChats(WireMockServer ollama) {
    List<JsonNode> bodies = new ArrayList<>();
    ollama.findAll(postRequestedFor(urlEqualTo("/api/chat"))).forEach(r -> bodies.add(parse(r.getBodyAsString())));
    return bodies;
  }

  static JsonNode parse(String body) {
    try {
      return Json.parse(body);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + body, e);
    }
  }

  private static ObjectNode line(boolean done) {
    return Json.object().put("model", OLLAMA_MODEL).put("created_at", "2026-11-10T10:00:00.000000Z")
        .put("done", done);
  }

  private static ObjectNode last(int evalCount) {
    ObjectNode last = line(true);
    last.putObject("message").put("role", "assistant").put("content", "");
    return last.put("done_reason", "stop").put("prompt_eval_count", 1_480).put("eval_count", evalCount);
  }

  private static ResponseDefinitionBuilder ndjson(List<ObjectNode> lines) {
    StringBuilder body = new StringBuilder();
    lines.forEach(l -> body.append(Json.toString(l)).append('\n'));
    return aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson").withBody(body.toString());
  }
}
