package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * The text subset of the Responses API over Ollama's {@code /api/chat}: {@code input} as a string or
 * as message items with text content, {@code instructions}, text output, and the typed stream events
 * ({@code response.created} … {@code response.output_text.delta} … {@code response.completed}).
 *
 * <p>What cannot be translated faithfully — tools, stored state ({@code previous_response_id},
 * {@code conversation}), images, files, audio, non-message input items — is refused as a whole (see
 * {@link Unsupported}) instead of being answered differently than the cloud would.
 */
final class ResponsesTranslation {
  private ResponsesTranslation() {}

  static ObjectNode request(
      ObjectNode body, String model, Parameters params, Unsupported unsupported, String keepAlive) {
    params.handled("model", "input", "instructions", "stream", "tools", "tool_choice", "parallel_tool_calls",
        "text", "previous_response_id", "conversation", "prompt", "reasoning");
    JsonNode tools = body.get("tools");
    if (Parameters.present(tools) && tools.isArray() && !tools.isEmpty()) {
      unsupported.add("tools", "tools");
    }
    if (Parameters.present(body.get("previous_response_id"))) {
      unsupported.add("previous_response_id (the local backend keeps no stored responses)", "previous_response_id");
    }
    if (Parameters.present(body.get("conversation"))) {
      unsupported.add("conversation (the local backend keeps no conversations)", "conversation");
    }
    if (Parameters.present(body.get("prompt"))) {
      unsupported.add("stored prompts ('prompt')", "prompt");
    }
    if (Parameters.present(body.get("reasoning"))) {
      params.drop("reasoning");
    }

    ObjectNode out = Json.object();
    out.put("model", model);
    ArrayNode messages = out.putArray("messages");
    JsonNode instructions = body.get("instructions");
    if (instructions != null && instructions.isTextual() && !instructions.textValue().isEmpty()) {
      messages.addObject().put("role", "system").put("content", instructions.textValue());
    }
    input(body.get("input"), messages, unsupported);

    JsonNode text = body.get("text");
    params.responseFormat(text == null ? null : text.get("format"), "text");
    params.sampling(false).maxTokens("max_output_tokens").logprobs();
    ChatTranslation.finish(out, params, body, keepAlive);
    return out;
  }

  private static void input(JsonNode input, ArrayNode messages, Unsupported unsupported) {
    if (input == null || input.isNull()) {
      return;
    }
    if (input.isTextual()) {
      messages.addObject().put("role", "user").put("content", input.textValue());
      return;
    }
    if (!input.isArray()) {
      throw GatewayException.invalid("'input' must be a string or an array", "input");
    }
    for (int i = 0; i < input.size(); i++) {
      JsonNode item = input.get(i);
      String at = "input[" + i + "]";
      if (!item.isObject()) {
        throw GatewayException.invalid("'" + at + "' must be an object", at);
      }
      String type = Json.text(item, "type");
      String role = Json.text(item, "role");
      if (type != null && !type.equals("message")) {
        unsupported.add("'" + type + "' input items", "input");
        continue;
      }
      if (role == null) {
        throw GatewayException.invalid("'" + at + ".role' is missing", at + ".role");
      }
      String ollamaRole = switch (role) {
        case "system", "developer" -> "system";
        case "user" -> "user";
        case "assistant" -> "assistant";
        default -> throw GatewayException.invalid(
            "'" + at + ".role' must be one of user, assistant, system, developer; got '" + role + "'", at + ".role");
      };
      ArrayNode images = Json.MAPPER.createArrayNode();
      String content = ChatTranslation.content(item.get("content"), at + ".content", images, unsupported);
      if (!images.isEmpty()) {
        unsupported.add("image input", "input");
      }
      messages.addObject().put("role", ollamaRole).put("content", content);
    }
  }

  /** A whole {@code /api/chat} answer as a Responses API {@code response}. */
  static ObjectNode response(JsonNode answer, ObjectNode request, String model, long createdAt) {
    String text = Json.text(answer.path("message"), "content");
    return response(Ids.next("resp_"), Ids.next("msg_"), request, model, createdAt, text == null ? "" : text, answer);
  }

  /**
   * The {@code response} object; {@code answer} null means still in progress (no output, no usage).
   */
  static ObjectNode response(
      String id, String messageId, ObjectNode request, String model, long createdAt, String text, JsonNode answer) {
    boolean finished = answer != null;
    boolean cut = finished && "length".equals(Json.text(answer, "done_reason"));
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("object", "response");
    out.put("created_at", createdAt);
    out.put("status", !finished ? "in_progress" : cut ? "incomplete" : "completed");
    out.putNull("error");
    if (cut) {
      out.putObject("incomplete_details").put("reason", "max_output_tokens");
    } else {
      out.putNull("incomplete_details");
    }
    out.set("instructions", orNull(request.get("instructions")));
    out.set("max_output_tokens", orNull(request.get("max_output_tokens")));
    out.put("model", model);
    ArrayNode output = out.putArray("output");
    if (finished) {
      output.add(message(messageId, text, cut ? "incomplete" : "completed"));
    }
    out.put("parallel_tool_calls", true);
    out.putNull("previous_response_id");
    out.putObject("reasoning").putNull("effort").putNull("summary");
    out.put("store", false);
    out.set("temperature", numberOr(request.get("temperature"), 1.0));
    JsonNode format = request.path("text").get("format");
    out.putObject("text").set("format", format != null && format.isObject() ? format : Json.object().put("type", "text"));
    out.put("tool_choice", "auto");
    out.putArray("tools");
    out.set("top_p", numberOr(request.get("top_p"), 1.0));
    out.put("truncation", "disabled");
    if (finished) {
      out.set("usage", usage(answer));
    } else {
      out.putNull("usage");
    }
    out.set("user", orNull(request.get("user")));
    JsonNode metadata = request.get("metadata");
    out.set("metadata", metadata != null && metadata.isObject() ? metadata : Json.object());
    return out;
  }

  private static ObjectNode message(String id, String text, String status) {
    ObjectNode item = Json.object();
    item.put("type", "message");
    item.put("id", id);
    item.put("status", status);
    item.put("role", "assistant");
    item.putArray("content").add(outputText(text));
    return item;
  }

  private static ObjectNode outputText(String text) {
    ObjectNode part = Json.object();
    part.put("type", "output_text");
    part.put("text", text);
    part.putArray("annotations");
    part.putArray("logprobs");
    return part;
  }

  private static ObjectNode usage(JsonNode answer) {
    long input = answer.path("prompt_eval_count").asLong(0);
    long output = answer.path("eval_count").asLong(0);
    ObjectNode usage = Json.object();
    usage.put("input_tokens", input);
    usage.putObject("input_tokens_details").put("cached_tokens", 0);
    usage.put("output_tokens", output);
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    usage.put("total_tokens", input + output);
    return usage;
  }

  private static JsonNode orNull(JsonNode node) {
    return node == null ? Json.MAPPER.getNodeFactory().nullNode() : node;
  }

  private static JsonNode numberOr(JsonNode node, double fallback) {
    return node != null && node.isNumber() ? node : Json.MAPPER.getNodeFactory().numberNode(fallback);
  }

  /**
   * {@code /api/chat} NDJSON → the Responses API's typed events, each with its
   * {@code sequence_number}. The closing events repeat the whole text, as OpenAI's do.
   */
  static final class Stream implements StreamTranslator {
    private final String id = Ids.next("resp_");
    private final String messageId = Ids.next("msg_");
    private final ObjectNode request;
    private final long createdAt;
    private final StringBuilder text = new StringBuilder();
    private String model;
    private int sequence;
    private boolean started;

    Stream(ObjectNode request, String model, long createdAt) {
      this.request = request;
      this.model = model;
      this.createdAt = createdAt;
    }

    @Override
    public List<SseEvent> line(JsonNode line) {
      List<SseEvent> events = new ArrayList<>();
      if (!started) {
        String served = Json.text(line, "model");
        if (served != null) {
          model = served;
        }
        started = true;
        ObjectNode inProgress = response(id, messageId, request, model, createdAt, "", null);
        events.add(event("response.created", Json.object().set("response", inProgress)));
        events.add(event("response.in_progress", Json.object().set("response", inProgress)));
        ObjectNode item = Json.object();
        item.put("id", messageId);
        item.put("type", "message");
        item.put("status", "in_progress");
        item.put("role", "assistant");
        item.putArray("content");
        events.add(event("response.output_item.added", Json.object().put("output_index", 0).set("item", item)));
        ObjectNode part = Json.object().put("type", "output_text").put("text", "");
        part.putArray("annotations");
        events.add(event("response.content_part.added", position().set("part", part)));
      }
      String piece = Json.text(line.path("message"), "content");
      if (piece != null && !piece.isEmpty()) {
        text.append(piece);
        ObjectNode delta = position().put("delta", piece);
        delta.putArray("logprobs");
        events.add(event("response.output_text.delta", delta));
      }
      return events;
    }

    @Override
    public List<SseEvent> done(JsonNode last) {
      List<SseEvent> events = new ArrayList<>(4);
      String full = text.toString();
      ObjectNode textDone = position().put("text", full);
      textDone.putArray("logprobs");
      events.add(event("response.output_text.done", textDone));
      events.add(event("response.content_part.done", position().set("part", outputText(full))));
      ObjectNode finished = response(id, messageId, request, model, createdAt, full, last);
      events.add(event("response.output_item.done",
          Json.object().put("output_index", 0).set("item", finished.path("output").get(0))));
      String type = "incomplete".equals(finished.path("status").asText()) ? "response.incomplete" : "response.completed";
      events.add(event(type, Json.object().set("response", finished)));
      return events;
    }

    private ObjectNode position() {
      return Json.object().put("item_id", messageId).put("output_index", 0).put("content_index", 0);
    }

    private SseEvent event(String type, JsonNode fields) {
      ObjectNode event = Json.object();
      event.put("type", type);
      event.put("sequence_number", sequence++);
      event.setAll((ObjectNode) fields);
      return new SseEvent(type, Json.toString(event));
    }
  }
}
