package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
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
 * tool. One instance per request: {@link #request} reads the conversation the answer is built for.
 */
final class ResponsesTranslation extends OllamaGeneration {
  private final ResponseEcho echo;
  private Conversation conversation;

  ResponsesTranslation(ObjectNode body, String keepAlive, Integer numCtx) {
    this(body, keepAlive, numCtx, ResponseEcho.NOT_STORED);
  }

  /** @param echo what the answer says of stored state ({@code previous_response_id}, {@code store}) */
  ResponsesTranslation(ObjectNode body, String keepAlive, Integer numCtx, ResponseEcho echo) {
    super("Responses API", body, keepAlive, numCtx);
    this.echo = echo;
  }

  @Override
  void write(ObjectNode out, Unsupported unsupported) {
    params.handled("input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
        "text", "previous_response_id", "conversation", "prompt", "reasoning", "background", "client_metadata");
    conversation = Conversation.parse(body, params::drop, unsupported);
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
            unsupported.add(ChatTranslation.REMOTE_IMAGES, "input");
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
  @Override
  public ObjectNode answer(JsonNode answer, String localModel, long createdAt) {
    JsonNode message = answer.path("message");
    String text = Json.text(message, "content");
    ResponseBuilder builder = new ResponseBuilder(body, conversation.tools(), createdAt, echo);
    return builder.whole(Translation.servedModel(answer, localModel), text == null ? "" : text,
        ToolCall.listOf(message.get("tool_calls")), usage(answer), "length".equals(Json.text(answer, "done_reason")));
  }

  @Override
  public StreamTranslator streamTranslator(String localModel, long createdAt) {
    return new Stream(new ResponseEvents(new ResponseBuilder(body, conversation.tools(), createdAt, echo)), localModel);
  }

  static ResponseBuilder.Usage usage(JsonNode answer) {
    return new ResponseBuilder.Usage(answer.path("prompt_eval_count").asLong(0), answer.path("eval_count").asLong(0));
  }

  /** {@code /api/chat} NDJSON → the Responses API's typed events. */
  private record Stream(ResponseEvents events, String localModel) implements StreamTranslator {
    @Override
    public List<SseEvent> line(JsonNode line) {
      List<SseEvent> out = new ArrayList<>(events.startOnce(Translation.servedModel(line, localModel)));
      JsonNode message = line.path("message");
      out.addAll(events.text(Json.text(message, "content")));
      for (ToolCall call : ToolCall.listOf(message.get("tool_calls"))) {
        out.addAll(events.call(call));
      }
      return out;
    }

    @Override
    public List<SseEvent> end(JsonNode last) {
      return events.finish(usage(last), "length".equals(Json.text(last, "done_reason")));
    }
  }
}
