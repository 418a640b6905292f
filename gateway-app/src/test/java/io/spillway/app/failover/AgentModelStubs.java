package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Stand-ins that answer a coding agent (Codex) like a model would: Ollama's native {@code /api/chat}
 * (NDJSON, {@code message.tool_calls} with arguments as an object, a last line with {@code done:
 * true} and the token counts), and the cloud's Responses API stream with the whole event sequence
 * OpenAI sends for a text answer. Written from Ollama's and OpenAI's API documentation.
 */
final class AgentModelStubs {
  static final String OLLAMA_MODEL = "qwen2.5-coder:7b";
  private static final String CREATED_AT = "2026-11-10T10:00:00.000000Z";
  /** JSONPath prefix: an assistant message of the conversation called the tool named next. */
  private static final String CALLED = "$.messages[*].tool_calls[?(@.function.name == ";

  private AgentModelStubs() {}

  /**
   * Makes {@code ollama} a model that works like a coding agent's, deciding from the conversation:
   * offered the {@code exec_command} tool, it asks to run {@code cmd}; once that call is in the
   * conversation (with its output), it asks the {@code apply_patch} tool (a function with one string
   * parameter, {@code input}, as Spillway offers Codex's custom tool) to apply {@code patch}; once
   * that call is in the conversation too, it answers {@code finalText}. Anything else gets {@code
   * plainText}. Also answers Spillway's readiness probes ({@code /api/version}, {@code /api/tags})
   * with {@link #OLLAMA_MODEL} present.
   */
  static void ollamaAgent(WireMockServer ollama, String cmd, String patch, String finalText, String plainText) {
    ollama.stubFor(get("/api/version").willReturn(OpenAiStubs.json(200, "{\"version\":\"0.12.6\"}")));
    ollama.stubFor(get("/api/tags").willReturn(OpenAiStubs.json(200,
        "{\"models\":[{\"name\":\"" + OLLAMA_MODEL + "\",\"model\":\"" + OLLAMA_MODEL + "\"}]}")));
    ollama.stubFor(post("/api/chat").atPriority(1)
        .withRequestBody(matchingJsonPath(CALLED + "'apply_patch')]"))
        .willReturn(ndjson(textLines(finalText))));
    ollama.stubFor(post("/api/chat").atPriority(2)
        .withRequestBody(matchingJsonPath(CALLED + "'exec_command')]"))
        .willReturn(ndjson(toolCallLines("apply_patch", Json.object().put("input", patch)))));
    ollama.stubFor(post("/api/chat").atPriority(3)
        .withRequestBody(matchingJsonPath("$.tools[?(@.function.name == 'exec_command')]"))
        .willReturn(ndjson(toolCallLines("exec_command", Json.object().put("cmd", cmd)))));
    ollama.stubFor(post("/api/chat").atPriority(9).willReturn(ndjson(textLines(plainText))));
  }

  /** The bodies Spillway sent to {@code /api/chat}, in order. */
  static List<JsonNode> ollamaChats(WireMockServer ollama) {
    List<JsonNode> bodies = new ArrayList<>();
    ollama.findAll(postRequestedFor(urlEqualTo("/api/chat"))).forEach(r -> bodies.add(parse(r.getBodyAsString())));
    return bodies;
  }

  /** Whether an {@code /api/chat} body offered the model tools (an agent's turn, not a plain prompt). */
  static boolean offersTools(JsonNode chat) {
    return chat.path("tools").isArray() && !chat.path("tools").isEmpty();
  }

  /** The contents of the {@code tool} messages (command outputs) of an {@code /api/chat} body. */
  static List<String> toolOutputs(JsonNode chat) {
    List<String> outputs = new ArrayList<>();
    chat.path("messages").forEach(m -> {
      if ("tool".equals(m.path("role").asText())) {
        outputs.add(m.path("content").asText());
      }
    });
    return outputs;
  }

  /** The names of the tools an assistant message of an {@code /api/chat} body called. */
  static List<String> assistantToolCalls(JsonNode chat) {
    List<String> names = new ArrayList<>();
    chat.path("messages").forEach(m -> m.path("tool_calls")
        .forEach(call -> names.add(call.path("function").path("name").asText())));
    return names;
  }

  private static List<ObjectNode> toolCallLines(String name, ObjectNode arguments) {
    ObjectNode call = Json.object();
    call.putObject("function").put("name", name).set("arguments", arguments);
    ObjectNode first = line(false);
    ObjectNode message = first.putObject("message").put("role", "assistant").put("content", "");
    message.putArray("tool_calls").add(call);
    return List.of(first, last(31));
  }

  private static List<ObjectNode> textLines(String text) {
    List<ObjectNode> lines = new ArrayList<>();
    for (String piece : text.split("(?<= )")) {
      ObjectNode line = line(false);
      line.putObject("message").put("role", "assistant").put("content", piece);
      lines.add(line);
    }
    lines.add(last(lines.size()));
    return lines;
  }

  private static ObjectNode line(boolean done) {
    return Json.object().put("model", OLLAMA_MODEL).put("created_at", CREATED_AT).put("done", done);
  }

  private static ObjectNode last(int evalCount) {
    ObjectNode last = line(true);
    last.putObject("message").put("role", "assistant").put("content", "");
    return last.put("done_reason", "stop").put("total_duration", 912_000_000L).put("load_duration", 1_200_000L)
        .put("prompt_eval_count", 1_480).put("prompt_eval_duration", 310_000_000L)
        .put("eval_count", evalCount).put("eval_duration", 560_000_000L);
  }

  private static ResponseDefinitionBuilder ndjson(List<ObjectNode> lines) {
    StringBuilder body = new StringBuilder();
    lines.forEach(l -> body.append(Json.toString(l)).append('\n'));
    return aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson").withBody(body.toString());
  }

  /**
   * A Responses API stream answering {@code text}, with every event OpenAI sends for a text answer:
   * {@code response.created}, {@code .in_progress}, {@code .output_item.added}, {@code
   * .content_part.added}, {@code .output_text.delta} per piece, {@code .output_text.done}, {@code
   * .content_part.done}, {@code .output_item.done}, {@code .completed} with usage.
   */
  static ResponseDefinitionBuilder cloudTextStream(String model, String text) {
    List<ObjectNode> events = new ArrayList<>();
    ObjectNode response = Json.object().put("id", "resp_cloud_1").put("object", "response")
        .put("created_at", 1_794_304_800L).put("status", "in_progress").put("model", model);
    response.putArray("output");
    events.add(event("response.created").set("response", response.deepCopy()));
    events.add(event("response.in_progress").set("response", response.deepCopy()));
    ObjectNode item = Json.object().put("id", "msg_cloud_1").put("type", "message").put("status", "in_progress")
        .put("role", "assistant");
    item.putArray("content");
    events.add(event("response.output_item.added").put("output_index", 0).set("item", item.deepCopy()));
    ObjectNode emptyPart = Json.object().put("type", "output_text").put("text", "");
    emptyPart.putArray("annotations");
    events.add(part(event("response.content_part.added")).set("part", emptyPart));
    for (String piece : text.split("(?<= )")) {
      events.add(part(event("response.output_text.delta")).put("delta", piece));
    }
    events.add(part(event("response.output_text.done")).put("text", text));
    ObjectNode fullPart = Json.object().put("type", "output_text").put("text", text);
    fullPart.putArray("annotations");
    events.add(part(event("response.content_part.done")).set("part", fullPart.deepCopy()));
    item.put("status", "completed");
    ((ArrayNode) item.get("content")).add(fullPart);
    events.add(event("response.output_item.done").put("output_index", 0).set("item", item.deepCopy()));
    response.put("status", "completed");
    ((ArrayNode) response.get("output")).add(item);
    ObjectNode usage = response.putObject("usage").put("input_tokens", 1_480).put("output_tokens", 9)
        .put("total_tokens", 1_489);
    usage.putObject("input_tokens_details").put("cached_tokens", 0);
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    events.add(event("response.completed").set("response", response));

    StringBuilder body = new StringBuilder();
    for (int i = 0; i < events.size(); i++) {
      ObjectNode e = events.get(i).put("sequence_number", i);
      body.append("event: ").append(e.get("type").asText()).append("\ndata: ").append(Json.toString(e)).append("\n\n");
    }
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body.toString());
  }

  private static ObjectNode event(String type) {
    return Json.object().put("type", type);
  }

  private static ObjectNode part(ObjectNode event) {
    return event.put("item_id", "msg_cloud_1").put("output_index", 0).put("content_index", 0);
  }

  private static JsonNode parse(String body) {
    try {
      return Json.parse(body);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + body, e);
    }
  }
}
