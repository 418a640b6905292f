package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.responses.ResponseEcho;
import io.spillway.local.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the Responses API's {@code response} object and its output items for one answer of a
 * local model: a {@code message} with the text, then a {@code function_call} or
 * {@code custom_tool_call} per tool call (named back as the client declared the tool, with its
 * {@code namespace}). The request's settings are echoed as OpenAI echoes them; {@code store} and
 * {@code previous_response_id} say what the response store did ({@link ResponseEcho}): with the store
 * off, {@code store} is false and nothing is continued. One instance per response; not thread-safe.
 */
public final class ResponseBuilder {
  private final String id = Ids.next("resp_");
  private final ObjectNode request;
  private final ToolSet tools;
  private final long createdAt;
  private final ResponseEcho echo;

  /** A builder for an answer nothing is stored of. */
  public ResponseBuilder(ObjectNode request, ToolSet tools, long createdAt) {
    this(request, tools, createdAt, ResponseEcho.NOT_STORED);
  }

  /**
   * @param request the client's Responses request (read, never changed)
   * @param tools its tools, to name calls back
   * @param createdAt the response's {@code created_at}, in epoch seconds
   * @param echo what the answer says of stored state
   */
  public ResponseBuilder(ObjectNode request, ToolSet tools, long createdAt, ResponseEcho echo) {
    this.request = request;
    this.tools = tools;
    this.createdAt = createdAt;
    this.echo = echo;
  }

  /** Token counts of one answer. */
  public record Usage(long input, long output) {
    public static final Usage NONE = new Usage(0, 0);

    ObjectNode toJson() {
      ObjectNode usage = Json.object();
      usage.put("input_tokens", input);
      usage.putObject("input_tokens_details").put("cached_tokens", 0);
      usage.put("output_tokens", output);
      usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
      usage.put("total_tokens", input + output);
      return usage;
    }
  }

  /** The whole answer, not streamed: its text (possibly empty) and tool calls. */
  public ObjectNode whole(String model, String text, List<ToolCall> calls, Usage usage, boolean cut) {
    List<ObjectNode> output = new ArrayList<>();
    if (!text.isEmpty() || calls.isEmpty()) {
      output.add(message(Ids.next("msg_"), text, cut ? "incomplete" : "completed"));
    }
    for (ToolCall call : calls) {
      output.add(call(itemId(call), call, "completed"));
    }
    return response(model, cut ? "incomplete" : "completed", output, usage);
  }

  /**
   * The {@code response} object. {@code status} {@code in_progress} has no usage; {@code incomplete}
   * says the output limit was reached.
   */
  public ObjectNode response(String model, String status, List<ObjectNode> output, Usage usage) {
    boolean finished = !"in_progress".equals(status);
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("object", "response");
    out.put("created_at", createdAt);
    out.put("status", status);
    out.putNull("error");
    if ("incomplete".equals(status)) {
      out.putObject("incomplete_details").put("reason", "max_output_tokens");
    } else {
      out.putNull("incomplete_details");
    }
    out.set("instructions", orNull(request.get("instructions")));
    out.set("max_output_tokens", orNull(request.get("max_output_tokens")));
    out.put("model", model);
    ArrayNode items = out.putArray("output");
    output.forEach(items::add);
    JsonNode parallel = request.get("parallel_tool_calls");
    out.put("parallel_tool_calls", parallel == null || !parallel.isBoolean() || parallel.booleanValue());
    if (echo.previousResponseId() != null) {
      out.put("previous_response_id", echo.previousResponseId());
    } else {
      out.putNull("previous_response_id");
    }
    out.putObject("reasoning").putNull("effort").putNull("summary");
    out.put("store", echo.store());
    out.set("temperature", numberOr(request.get("temperature"), 1.0));
    JsonNode format = request.path("text").get("format");
    out.putObject("text").set("format", format != null && format.isObject() ? format : Json.object().put("type", "text"));
    JsonNode choice = request.get("tool_choice");
    out.set("tool_choice", choice != null && !choice.isNull() ? choice : Json.MAPPER.getNodeFactory().textNode("auto"));
    JsonNode requestTools = request.get("tools");
    out.set("tools", requestTools != null && requestTools.isArray() ? requestTools : Json.MAPPER.createArrayNode());
    out.set("top_p", numberOr(request.get("top_p"), 1.0));
    out.put("truncation", "disabled");
    if (finished) {
      out.set("usage", usage.toJson());
    } else {
      out.putNull("usage");
    }
    out.set("user", orNull(request.get("user")));
    JsonNode metadata = request.get("metadata");
    out.set("metadata", metadata != null && metadata.isObject() ? metadata : Json.object());
    return out;
  }

  /** An assistant {@code message} item with one {@code output_text} part. */
  public ObjectNode message(String itemId, String text, String status) {
    ObjectNode item = Json.object();
    item.put("id", itemId);
    item.put("type", "message");
    item.put("status", status);
    item.put("role", "assistant");
    item.putArray("content").add(outputText(text));
    return item;
  }

  static ObjectNode outputText(String text) {
    ObjectNode part = Json.object();
    part.put("type", "output_text");
    part.put("text", text);
    part.putArray("annotations");
    part.putArray("logprobs");
    return part;
  }

  /** Whether the client declared the tool {@code call} calls as a {@code custom} tool. */
  public boolean isCustom(ToolCall call) {
    LocalTool tool = tools.byLocalName(call.localName());
    return tool != null && tool.custom();
  }

  /** A new item id for {@code call}: {@code fc_…} or {@code ctc_…}. */
  public String itemId(ToolCall call) {
    return Ids.next(isCustom(call) ? "ctc_" : "fc_");
  }

  /**
   * The item for {@code call}: a {@code function_call} with its JSON arguments, or for a custom
   * tool a {@code custom_tool_call} with its text {@code input}; an unfinished one
   * ({@code in_progress}) has empty arguments or input.
   */
  public ObjectNode call(String itemId, ToolCall call, String status) {
    LocalTool tool = tools.byLocalName(call.localName());
    boolean custom = tool != null && tool.custom();
    boolean finished = !"in_progress".equals(status);
    ObjectNode item = Json.object();
    item.put("id", itemId);
    item.put("type", custom ? "custom_tool_call" : "function_call");
    item.put("status", status);
    if (custom) {
      item.put("input", finished ? LocalTool.customInput(call.arguments()) : "");
    } else {
      item.put("arguments", finished ? call.arguments() : "");
    }
    item.put("call_id", call.callId());
    item.put("name", tool != null ? tool.name() : call.localName());
    if (tool != null && tool.namespace() != null) {
      item.put("namespace", tool.namespace());
    }
    return item;
  }

  private static JsonNode orNull(JsonNode node) {
    return node == null ? Json.MAPPER.getNodeFactory().nullNode() : node;
  }

  private static JsonNode numberOr(JsonNode node, double fallback) {
    return node != null && node.isNumber() ? node : Json.MAPPER.getNodeFactory().numberNode(fallback);
  }
}
