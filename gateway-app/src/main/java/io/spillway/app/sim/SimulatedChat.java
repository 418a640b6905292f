package io.spillway.app.sim;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;

/**
 * One chat completion of the simulated cloud, as OpenAI shapes it, whole or as a stream of
 * {@code chat.completion.chunk}s: text ({@code finish_reason: stop}), or the simulated agent's tool
 * call ({@code message.tool_calls} with the arguments as JSON text, {@code finish_reason: tool_calls};
 * streamed as a first delta with the call's id, type and name and a second with its arguments).
 */
final class SimulatedChat {
  private final String id;
  private final String model;
  private final long created;
  private final String text;
  private final SimulatedAgent.ToolCall call;
  private final int promptTokens;

  /**
   * @param text the answer's text, or null when the answer is {@code call}
   * @param call the tool call, or null when the answer is {@code text}
   * @param serial makes the id unique among the simulator's answers
   */
  SimulatedChat(String model, long created, long serial, String text, SimulatedAgent.ToolCall call, int promptTokens) {
    this.id = "chatcmpl-sim" + created + "x" + serial;
    this.model = model;
    this.created = created;
    this.text = text;
    this.call = call;
    this.promptTokens = promptTokens;
  }

  private String finishReason() {
    return call == null ? "stop" : "tool_calls";
  }

  private int completionTokens() {
    return call == null ? SimulatedText.tokens(text) : SimulatedText.tokens(call.argumentsJson()) + 4;
  }

  ObjectNode completion() {
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("object", "chat.completion");
    out.put("created", created);
    out.put("model", model);
    ObjectNode choice = out.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode message = choice.putObject("message").put("role", "assistant");
    if (call == null) {
      message.put("content", text);
    } else {
      message.putNull("content");
      ObjectNode toolCall = message.putArray("tool_calls").addObject().put("id", call.callId()).put("type", "function");
      toolCall.putObject("function").put("name", call.name()).put("arguments", call.argumentsJson());
    }
    message.putNull("refusal");
    message.putArray("annotations");
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason());
    out.set("usage", SimulatedCloud.usage(promptTokens, completionTokens()));
    out.put("service_tier", "default");
    out.put("system_fingerprint", "fp_simulated");
    return out;
  }

  /** Writes the chunks, a usage-only chunk when {@code includeUsage}, and {@code [DONE]}. */
  void stream(SimServer.Chunks out, boolean includeUsage) throws IOException {
    if (call == null) {
      out.write(SimulatedCloud.data(chunk(Json.object().put("role", "assistant").put("content", ""), null, includeUsage)));
      for (String piece : SimulatedText.pieces(text)) {
        out.write(SimulatedCloud.data(chunk(Json.object().put("content", piece), null, includeUsage)));
      }
    } else {
      ObjectNode opening = Json.object().put("role", "assistant").putNull("content");
      ObjectNode named = opening.putArray("tool_calls").addObject().put("index", 0).put("id", call.callId())
          .put("type", "function");
      named.putObject("function").put("name", call.name()).put("arguments", "");
      out.write(SimulatedCloud.data(chunk(opening, null, includeUsage)));
      ObjectNode arguments = Json.object();
      arguments.putArray("tool_calls").addObject().put("index", 0).putObject("function")
          .put("arguments", call.argumentsJson());
      out.write(SimulatedCloud.data(chunk(arguments, null, includeUsage)));
    }
    out.write(SimulatedCloud.data(chunk(Json.object(), finishReason(), includeUsage)));
    if (includeUsage) {
      ObjectNode usage = header();
      usage.putArray("choices");
      usage.set("usage", SimulatedCloud.usage(promptTokens, completionTokens()));
      out.write(SimulatedCloud.data(usage));
    }
    out.write("data: [DONE]\n\n");
  }

  private ObjectNode header() {
    return Json.object().put("id", id).put("object", "chat.completion.chunk").put("created", created)
        .put("model", model).put("system_fingerprint", "fp_simulated");
  }

  private ObjectNode chunk(ObjectNode delta, String finishReason, boolean includeUsage) {
    ObjectNode chunk = header();
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return chunk;
  }
}
