package io.spillway.local.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.responses.ResponseEcho;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Translation;
import io.spillway.local.Unsupported;
import io.spillway.local.responses.ChatMessage;
import io.spillway.local.responses.Conversation;
import io.spillway.local.responses.LocalTool;
import io.spillway.local.responses.ResponseBuilder;
import io.spillway.local.responses.ResponseEvents;
import io.spillway.local.responses.ToolCall;
import io.spillway.local.responses.ToolChoice;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Responses API over an OpenAI-compatible server that only has {@code /v1/chat/completions}
 * (vLLM, llama.cpp's {@code llama-server}, LM Studio): the request read as a {@link Conversation}
 * and written as a chat completions request, the answer (a {@code chat.completion} or its chunks)
 * made a {@code response} or the typed stream events.
 *
 * <p>Chat completions can say everything the conversation holds: tool calls with their ids and
 * JSON-text arguments, {@code tool} messages with {@code tool_call_id}, image parts. Unlike Ollama,
 * {@code tool_choice} {@code required} and a named tool are passed on as such. Request fields the
 * Responses API does not define are passed on untouched, as for every OpenAI-compatible backend.
 * One instance per request: {@link #request} reads the conversation the answer is built for.
 */
final class ResponsesOverChat implements Translation {
  /** Fields of a Responses request, each translated here, dropped, or without effect on the answer. */
  private static final Set<String> RESPONSES_FIELDS = Set.of(
      "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options",
      "temperature", "top_p", "max_output_tokens", "text", "reasoning", "previous_response_id", "conversation",
      "prompt", "background", "top_logprobs", "store", "include", "metadata", "prompt_cache_key",
      "prompt_cache_retention", "client_metadata", "truncation", "service_tier", "safety_identifier", "user",
      "max_tool_calls");

  private final ObjectNode body;
  private final List<String> dropped = new ArrayList<>();
  private final ResponseEcho echo;
  private Conversation conversation;

  ResponsesOverChat(ObjectNode body) {
    this(body, ResponseEcho.NOT_STORED);
  }

  /** @param echo what the answer says of stored state ({@code previous_response_id}, {@code store}) */
  ResponsesOverChat(ObjectNode body, ResponseEcho echo) {
    this.body = body;
    this.echo = echo;
  }

  @Override
  public String api() {
    return "Responses API";
  }

  private void drop(String field) {
    if (!dropped.contains(field)) {
      dropped.add(field);
    }
  }

  @Override
  public List<String> dropped() {
    return dropped;
  }

  @Override
  public boolean stream() {
    JsonNode stream = body.get("stream");
    return stream != null && stream.asBoolean(false);
  }

  /** The {@code /v1/chat/completions} body, for {@code model}. */
  @Override
  public ObjectNode request(String model, Unsupported unsupported) {
    conversation = Conversation.parse(body, this::drop, unsupported);
    ObjectNode out = Json.object();
    out.put("model", model);
    out.set("messages", messages());
    tools(out);
    copyNumber("temperature", out, "temperature");
    copyNumber("top_p", out, "top_p");
    copyNumber("max_output_tokens", out, "max_tokens");
    text(out);
    if (present(body.get("reasoning"))) {
      drop("reasoning");
    }
    if (present(body.get("top_logprobs"))) {
      drop("top_logprobs");
    }
    if (stream()) {
      out.put("stream", true);
      out.putObject("stream_options").put("include_usage", true);
    }
    Iterator<Map.Entry<String, JsonNode>> fields = body.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      if (!RESPONSES_FIELDS.contains(field.getKey()) && !out.has(field.getKey())) {
        out.set(field.getKey(), field.getValue());
      }
    }
    return out;
  }

  private ArrayNode messages() {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (ChatMessage message : conversation.messages()) {
      ObjectNode converted = out.addObject();
      converted.put("role", message.role());
      switch (message.role()) {
        case "user" -> userContent(converted, message);
        case "assistant" -> {
          if (message.text().isEmpty() && !message.toolCalls().isEmpty()) {
            converted.putNull("content");
          } else {
            converted.put("content", message.text());
          }
          if (!message.toolCalls().isEmpty()) {
            ArrayNode calls = converted.putArray("tool_calls");
            for (ToolCall call : message.toolCalls()) {
              ObjectNode chatCall = calls.addObject();
              chatCall.put("id", call.callId());
              chatCall.put("type", "function");
              chatCall.putObject("function").put("name", call.localName()).put("arguments", call.arguments());
            }
          }
        }
        case "tool" -> {
          converted.put("tool_call_id", message.toolCallId());
          converted.put("content", message.text());
          if (!message.imageUrls().isEmpty()) {
            // Chat completions' tool messages carry text only.
            drop("input.function_call_output.input_image");
          }
        }
        default -> converted.put("content", message.text());
      }
    }
    return out;
  }

  private static void userContent(ObjectNode converted, ChatMessage message) {
    if (message.imageUrls().isEmpty()) {
      converted.put("content", message.text());
      return;
    }
    ArrayNode parts = converted.putArray("content");
    if (!message.text().isEmpty()) {
      parts.addObject().put("type", "text").put("text", message.text());
    }
    for (String url : message.imageUrls()) {
      parts.addObject().put("type", "image_url").putObject("image_url").put("url", url);
    }
  }

  private void tools(ObjectNode out) {
    ToolChoice choice = conversation.choice();
    if (choice.offered().isEmpty()) {
      return;
    }
    ArrayNode tools = out.putArray("tools");
    for (LocalTool tool : choice.offered()) {
      tools.add(tool.functionJson());
    }
    if (choice.forced() != null) {
      ObjectNode forced = out.putObject("tool_choice");
      forced.put("type", "function");
      forced.putObject("function").put("name", choice.forced());
    } else if (choice.mode() == ToolChoice.Mode.REQUIRED) {
      out.put("tool_choice", "required");
    }
    JsonNode parallel = body.get("parallel_tool_calls");
    if (parallel != null && parallel.isBoolean()) {
      out.put("parallel_tool_calls", parallel.booleanValue());
    }
  }

  private void text(ObjectNode out) {
    JsonNode text = body.get("text");
    if (text == null || !text.isObject()) {
      return;
    }
    JsonNode verbosity = text.get("verbosity");
    if (verbosity != null && verbosity.isTextual() && !verbosity.textValue().equals("medium")) {
      drop("text.verbosity");
    }
    JsonNode format = text.get("format");
    String type = Json.text(format, "type");
    if ("json_object".equals(type)) {
      out.putObject("response_format").put("type", "json_object");
    } else if ("json_schema".equals(type)) {
      ObjectNode schema = Json.object();
      for (String field : List.of("name", "description", "schema", "strict")) {
        if (format.has(field)) {
          schema.set(field, format.get(field));
        }
      }
      ObjectNode responseFormat = out.putObject("response_format");
      responseFormat.put("type", "json_schema");
      responseFormat.set("json_schema", schema);
    }
  }

  private void copyNumber(String from, ObjectNode out, String to) {
    JsonNode value = body.get(from);
    if (value != null && value.isNumber()) {
      out.set(to, value);
    }
  }

  private static boolean present(JsonNode value) {
    return value != null && !value.isNull();
  }

  /** A whole {@code chat.completion} as a {@code response}. */
  @Override
  public ObjectNode answer(JsonNode completion, String localModel, long createdAt) {
    JsonNode choice = completion.path("choices").path(0);
    JsonNode message = choice.path("message");
    String text = Json.text(message, "content");
    return builder(createdAt).whole(Translation.servedModel(completion, localModel), text == null ? "" : text,
        ToolCall.listOf(message.get("tool_calls")), usage(completion.get("usage")),
        "length".equals(Json.text(choice, "finish_reason")));
  }

  @Override
  public StreamTranslator streamTranslator(String localModel, long createdAt) {
    return new ChatChunksAsResponseEvents(new ResponseEvents(builder(createdAt)), localModel);
  }

  /**
   * A whole {@code chat.completion} as the events a stream of it would have been, for a server that
   * ignored {@code "stream": true}.
   */
  List<SseEvent> answerAsEvents(JsonNode completion, String localModel, long createdAt) {
    ResponseEvents events = new ResponseEvents(builder(createdAt));
    List<SseEvent> all = new ArrayList<>(events.start(Translation.servedModel(completion, localModel)));
    JsonNode choice = completion.path("choices").path(0);
    JsonNode message = choice.path("message");
    all.addAll(events.text(Json.text(message, "content")));
    for (ToolCall call : ToolCall.listOf(message.get("tool_calls"))) {
      all.addAll(events.call(call));
    }
    all.addAll(events.finish(usage(completion.get("usage")), "length".equals(Json.text(choice, "finish_reason"))));
    return all;
  }

  private ResponseBuilder builder(long createdAt) {
    return new ResponseBuilder(body, conversation.tools(), createdAt, echo);
  }

  static ResponseBuilder.Usage usage(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return ResponseBuilder.Usage.NONE;
    }
    return new ResponseBuilder.Usage(usage.path("prompt_tokens").asLong(0), usage.path("completion_tokens").asLong(0));
  }
}
