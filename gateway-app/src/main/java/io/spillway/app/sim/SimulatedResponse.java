package io.spillway.app.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;

/**
 * One Responses API answer of the simulated cloud, as OpenAI shapes it: a {@code response} object
 * whose output is either a {@code message} item with text or a {@code function_call} item (the
 * simulated agent's tool call), and the events OpenAI streams for it, each with its
 * {@code sequence_number}:
 *
 * <pre>
 * response.created, response.in_progress,
 * for text:     response.output_item.added, response.content_part.added, response.output_text.delta…,
 *               response.output_text.done, response.content_part.done, response.output_item.done
 * for a call:   response.output_item.added (arguments empty), response.function_call_arguments.delta,
 *               response.function_call_arguments.done, response.output_item.done
 * response.completed (with usage)
 * </pre>
 *
 * Agents such as the Codex CLI build their turn from the item events.
 */
final class SimulatedResponse {
  private final ObjectNode request;
  private final String model;
  private final String id;
  private final String itemId;
  private final long created;
  private final String text;
  private final SimulatedAgent.ToolCall call;
  private final int inputTokens;

  /**
   * @param text the message's text, or null when the answer is {@code call}
   * @param call the tool call, or null when the answer is {@code text}
   * @param serial makes the ids unique among the simulator's answers
   */
  SimulatedResponse(ObjectNode request, String model, long created, long serial, String text,
      SimulatedAgent.ToolCall call, int inputTokens) {
    this.request = request;
    this.model = model;
    this.created = created;
    this.id = "resp_sim" + created + "x" + serial;
    this.itemId = (call == null ? "msg_sim" : "fc_sim") + created + "x" + serial;
    this.text = text;
    this.call = call;
    this.inputTokens = inputTokens;
  }

  private int outputTokens() {
    return call == null ? SimulatedText.tokens(text) : SimulatedText.tokens(call.argumentsJson()) + 4;
  }

  /** The response object; {@code status} {@code in_progress} has no output and no usage yet. */
  ObjectNode response(String status) {
    boolean done = !status.equals("in_progress");
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("object", "response");
    out.put("created_at", created);
    out.put("status", status);
    out.putNull("error");
    out.putNull("incomplete_details");
    out.set("instructions", echo("instructions", null));
    out.set("max_output_tokens", echo("max_output_tokens", null));
    out.put("model", model);
    ArrayNode output = out.putArray("output");
    if (done) {
      output.add(item("completed"));
    }
    out.set("parallel_tool_calls", echo("parallel_tool_calls", Json.MAPPER.getNodeFactory().booleanNode(true)));
    out.set("previous_response_id", echo("previous_response_id", null));
    out.putObject("reasoning").putNull("effort").putNull("summary");
    out.put("store", request.path("store").asBoolean(true));
    out.put("temperature", 1.0);
    out.putObject("text").putObject("format").put("type", "text");
    out.set("tool_choice", echo("tool_choice", Json.MAPPER.getNodeFactory().textNode("auto")));
    out.set("tools", echo("tools", Json.MAPPER.createArrayNode()));
    out.put("top_p", 1.0);
    out.put("truncation", "disabled");
    if (done) {
      ObjectNode usage = out.putObject("usage");
      usage.put("input_tokens", inputTokens);
      usage.putObject("input_tokens_details").put("cached_tokens", 0);
      usage.put("output_tokens", outputTokens());
      usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
      usage.put("total_tokens", inputTokens + outputTokens());
    } else {
      out.putNull("usage");
    }
    out.putNull("user");
    out.putObject("metadata");
    return out;
  }

  /** Writes the whole event sequence. */
  void stream(SimServer.Chunks out) throws IOException {
    int sequence = 0;
    ObjectNode started = response("in_progress");
    out.write(event("response.created", sequence++, Json.object().set("response", started)));
    out.write(event("response.in_progress", sequence++, Json.object().set("response", started)));
    out.write(event("response.output_item.added", sequence++,
        Json.object().put("output_index", 0).set("item", item("in_progress"))));
    if (call == null) {
      out.write(event("response.content_part.added", sequence++, part().set("part", outputText(""))));
      for (String piece : SimulatedText.pieces(text)) {
        ObjectNode delta = part().put("delta", piece);
        delta.putArray("logprobs");
        out.write(event("response.output_text.delta", sequence++, delta));
      }
      ObjectNode textDone = part().put("text", text);
      textDone.putArray("logprobs");
      out.write(event("response.output_text.done", sequence++, textDone));
      out.write(event("response.content_part.done", sequence++, part().set("part", outputText(text))));
    } else {
      out.write(event("response.function_call_arguments.delta", sequence++,
          Json.object().put("item_id", itemId).put("output_index", 0).put("delta", call.argumentsJson())));
      out.write(event("response.function_call_arguments.done", sequence++, Json.object().put("item_id", itemId)
          .put("output_index", 0).put("name", call.name()).put("arguments", call.argumentsJson())));
    }
    out.write(event("response.output_item.done", sequence++,
        Json.object().put("output_index", 0).set("item", item("completed"))));
    out.write(event("response.completed", sequence, Json.object().set("response", response("completed"))));
  }

  /** The output item: a message (no content while in progress) or a function call (no arguments yet). */
  private ObjectNode item(String status) {
    boolean done = status.equals("completed");
    if (call != null) {
      return Json.object().put("id", itemId).put("type", "function_call").put("status", status)
          .put("arguments", done ? call.argumentsJson() : "").put("call_id", call.callId()).put("name", call.name());
    }
    ObjectNode item = Json.object().put("id", itemId).put("type", "message").put("status", status)
        .put("role", "assistant");
    ArrayNode content = item.putArray("content");
    if (done) {
      content.add(outputText(text));
    }
    return item;
  }

  private JsonNode echo(String field, JsonNode otherwise) {
    JsonNode value = request.get(field);
    return value != null ? value : otherwise != null ? otherwise : Json.MAPPER.getNodeFactory().nullNode();
  }

  /** The fields every content-part event carries. */
  private ObjectNode part() {
    return Json.object().put("item_id", itemId).put("output_index", 0).put("content_index", 0);
  }

  private static ObjectNode outputText(String text) {
    ObjectNode part = Json.object().put("type", "output_text");
    part.putArray("annotations");
    part.putArray("logprobs");
    part.put("text", text);
    return part;
  }

  private static String event(String type, int sequence, JsonNode fields) {
    ObjectNode event = Json.object().put("type", type).put("sequence_number", sequence);
    event.setAll((ObjectNode) fields);
    return "event: " + type + "\ndata: " + Json.toString(event) + "\n\n";
  }
}
