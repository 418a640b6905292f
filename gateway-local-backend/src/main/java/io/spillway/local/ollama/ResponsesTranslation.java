package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.Unsupported;
import io.spillway.local.responses.ChatMessage;
import io.spillway.local.responses.Conversation;
import io.spillway.local.responses.LocalTool;
import io.spillway.local.responses.ResponseBuilder;
import io.spillway.local.responses.ResponseEvents;
import io.spillway.local.responses.ToolCall;
import io.spillway.local.responses.ToolChoice;
import java.util.ArrayList;
import java.util.List;

/**
 * The Responses API over Ollama's {@code /api/chat}: the request read as a {@link Conversation}
 * (messages, function tools, tool calls and their outputs), spelled the way Ollama takes it, and
 * Ollama's answer made a {@code response} or the typed stream events ({@link ResponseEvents}).
 *
 * <p>Ollama's spelling: tool call arguments as an object, not a JSON string; a tool message names its
 * tool in {@code tool_name} (and carries the call's id in {@code tool_call_id}, which newer Ollama
 * versions read); images as base64 in {@code images}. Ollama cannot force a tool call, so
 * {@code tool_choice: "required"} is dropped, while a named tool is honoured by offering only that
 * tool. One instance per request.
 */
final class ResponsesTranslation {
  private final ObjectNode body;
  private final Parameters params;
  private final Conversation conversation;

  ResponsesTranslation(ObjectNode body, Parameters params, Unsupported unsupported) {
    this.body = body;
    this.params = params;
    params.handled("model", "input", "instructions", "stream", "tools", "tool_choice", "parallel_tool_calls",
        "text", "previous_response_id", "conversation", "prompt", "reasoning", "background", "client_metadata");
    this.conversation = Conversation.parse(body, params::drop, unsupported);
  }

  /** The {@code /api/chat} body. */
  ObjectNode request(String model, Unsupported unsupported, String keepAlive) {
    if (Parameters.present(body.get("reasoning"))) {
      params.drop("reasoning");
    }
    JsonNode verbosity = body.path("text").get("verbosity");
    if (verbosity != null && verbosity.isTextual() && !verbosity.textValue().equals("medium")) {
      params.drop("text.verbosity");
    }
    JsonNode parallel = body.get("parallel_tool_calls");
    if (parallel != null && parallel.isBoolean() && !parallel.booleanValue()) {
      params.drop("parallel_tool_calls");
    }
    ObjectNode out = Json.object();
    out.put("model", model);
    out.set("messages", messages(unsupported));
    ToolChoice choice = conversation.choice();
    if (choice.mode() == ToolChoice.Mode.REQUIRED && choice.forced() == null) {
      params.drop("tool_choice");
    }
    if (!choice.offered().isEmpty()) {
      ArrayNode tools = out.putArray("tools");
      for (LocalTool tool : choice.offered()) {
        tools.add(tool.functionJson());
      }
    }
    JsonNode text = body.get("text");
    params.responseFormat(text == null ? null : text.get("format"), "text");
    params.sampling(false).maxTokens("max_output_tokens").logprobs();
    ChatTranslation.finish(out, params, body, keepAlive);
    return out;
  }

  private ArrayNode messages(Unsupported unsupported) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (ChatMessage message : conversation.messages()) {
      ObjectNode converted = out.addObject();
      converted.put("role", message.role());
      converted.put("content", message.text());
      if (!message.imageUrls().isEmpty()) {
        ArrayNode images = converted.putArray("images");
        for (String url : message.imageUrls()) {
          String base64 = ChatTranslation.dataUrlBase64(url);
          if (base64 == null) {
            unsupported.add("image URLs that are not inline base64 data: URLs (the local backend does not fetch "
                + "remote images)", "input");
          } else {
            images.add(base64);
          }
        }
      }
      if (!message.toolCalls().isEmpty()) {
        ArrayNode calls = converted.putArray("tool_calls");
        for (ToolCall call : message.toolCalls()) {
          ObjectNode convertedCall = calls.addObject();
          convertedCall.put("id", call.callId());
          ObjectNode function = convertedCall.putObject("function");
          function.put("name", call.localName());
          function.set("arguments", argumentsObject(call));
        }
      }
      if (message.role().equals("tool")) {
        if (message.toolName() != null) {
          converted.put("tool_name", message.toolName());
        }
        converted.put("tool_call_id", message.toolCallId());
      }
    }
    return out;
  }

  /** Ollama takes a call's arguments as the object that the Responses API sends as a JSON text. */
  private static JsonNode argumentsObject(ToolCall call) {
    if (call.arguments().isBlank()) {
      return Json.object();
    }
    try {
      JsonNode parsed = Json.parse(call.arguments());
      if (parsed != null && parsed.isObject()) {
        return parsed;
      }
    } catch (java.io.IOException e) {
      // reported below
    }
    throw GatewayException.invalid("the arguments of tool call '" + call.callId() + "' must be a JSON object",
        "input");
  }

  /** A whole {@code /api/chat} answer as a {@code response}. */
  ObjectNode response(JsonNode answer, String model, long createdAt) {
    JsonNode message = answer.path("message");
    String text = Json.text(message, "content");
    ResponseBuilder builder = new ResponseBuilder(body, conversation.tools(), createdAt);
    return builder.whole(model, text == null ? "" : text, calls(message.get("tool_calls")), usage(answer),
        "length".equals(Json.text(answer, "done_reason")));
  }

  /** The stream translator for a streamed answer. */
  StreamTranslator stream(String model, long createdAt) {
    return new Stream(new ResponseEvents(new ResponseBuilder(body, conversation.tools(), createdAt)), model);
  }

  /** Ollama's tool calls (arguments as an object, an id only from newer versions) as {@link ToolCall}s. */
  static List<ToolCall> calls(JsonNode ollamaCalls) {
    List<ToolCall> calls = new ArrayList<>();
    if (ollamaCalls == null || !ollamaCalls.isArray()) {
      return calls;
    }
    for (JsonNode call : ollamaCalls) {
      JsonNode function = call.path("function");
      String id = Json.text(call, "id");
      JsonNode arguments = function.get("arguments");
      String json = arguments == null || arguments.isNull() ? "{}"
          : arguments.isTextual() ? arguments.textValue() : Json.toString(arguments);
      String name = Json.text(function, "name");
      calls.add(new ToolCall(id != null && !id.isEmpty() ? id : Ids.next("call_"), name == null ? "" : name, json));
    }
    return calls;
  }

  static ResponseBuilder.Usage usage(JsonNode answer) {
    return new ResponseBuilder.Usage(answer.path("prompt_eval_count").asLong(0), answer.path("eval_count").asLong(0));
  }

  /** {@code /api/chat} NDJSON → the Responses API's typed events. */
  private static final class Stream implements StreamTranslator {
    private final ResponseEvents events;
    private String model;
    private boolean started;

    Stream(ResponseEvents events, String model) {
      this.events = events;
      this.model = model;
    }

    @Override
    public List<SseEvent> line(JsonNode line) {
      List<SseEvent> out = new ArrayList<>();
      if (!started) {
        String served = Json.text(line, "model");
        if (served != null && !served.isEmpty()) {
          model = served;
        }
        started = true;
        out.addAll(events.start(model));
      }
      JsonNode message = line.path("message");
      out.addAll(events.text(Json.text(message, "content")));
      for (ToolCall call : calls(message.get("tool_calls"))) {
        out.addAll(events.call(call));
      }
      return out;
    }

    @Override
    public List<SseEvent> done(JsonNode last) {
      return events.finish(usage(last), "length".equals(Json.text(last, "done_reason")));
    }
  }
}
