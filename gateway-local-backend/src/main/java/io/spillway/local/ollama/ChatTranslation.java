package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.local.ContentText;
import io.spillway.local.Ids;
import io.spillway.local.RequestItems;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Translation;
import io.spillway.local.Unsupported;
import io.spillway.local.responses.ToolCall;
import java.util.HashMap;
import java.util.Map;

/**
 * OpenAI chat completions ⇄ Ollama {@code /api/chat}: messages (text, inline images, tool calls and
 * tool results), tools, and the answer back as a {@code chat.completion}.
 *
 * <p>Ollama's chat message is {@code {role, content, images?, tool_calls?, tool_name?}}; its tool
 * calls carry arguments as a JSON object where OpenAI carries a JSON string, and no id, so ids are
 * made here ({@code call_…}).
 */
final class ChatTranslation extends OllamaGeneration {
  ChatTranslation(ObjectNode body, String keepAlive, Integer numCtx) {
    super("Chat Completions API", body, keepAlive, numCtx);
  }

  @Override
  public ObjectNode answer(JsonNode answer, String localModel, long created) {
    return completion(answer, Translation.servedModel(answer, localModel), created);
  }

  @Override
  public StreamTranslator streamTranslator(String localModel, long created) {
    return new ChatStream(localModel, created, includeUsage());
  }

  @Override
  void write(ObjectNode out, Unsupported unsupported) {
    out.set("messages", messages(body.get("messages"), unsupported));
    params.handled("messages");
    tools(body, out, params, unsupported);
    params.sampling(true)
        .maxTokens("max_completion_tokens", "max_tokens")
        .n()
        .logprobs()
        .responseFormat(body.get("response_format"), "response_format");
  }

  static ArrayNode messages(JsonNode messages, Unsupported unsupported) {
    if (messages == null || !messages.isArray()) {
      throw GatewayException.invalid("'messages' must be an array", "messages");
    }
    ArrayNode out = Json.MAPPER.createArrayNode();
    Map<String, String> toolNamesById = new HashMap<>();
    RequestItems.each(messages, "messages", (message, at) -> out.add(message(message, at, toolNamesById, unsupported)));
    return out;
  }

  /** One chat message as Ollama's; remembers the names of the assistant's tool calls for the tool messages after. */
  private static ObjectNode message(
      JsonNode message, String at, Map<String, String> toolNamesById, Unsupported unsupported) {
    String role = RequestItems.role(message, at);
    ObjectNode converted = Json.object();
    ArrayNode images = Json.MAPPER.createArrayNode();
    String content = content(message.get("content"), at + ".content", images, unsupported);
    switch (role) {
      case "system", "developer" -> converted.put("role", "system");
      case "user" -> converted.put("role", "user");
      case "assistant" -> {
        converted.put("role", "assistant");
        ArrayNode calls = assistantToolCalls(message.get("tool_calls"), at, toolNamesById);
        if (calls != null) {
          converted.set("tool_calls", calls);
        }
      }
      case "tool" -> {
        converted.put("role", "tool");
        String name = toolNamesById.get(Json.text(message, "tool_call_id"));
        if (name != null) {
          converted.put("tool_name", name);
        }
      }
      case "function" -> {
        converted.put("role", "tool");
        String name = Json.text(message, "name");
        if (name != null) {
          converted.put("tool_name", name);
        }
      }
      default -> throw GatewayException.invalid("'" + at + ".role' must be one of system, developer, user, "
          + "assistant, tool; got '" + role + "'", at + ".role");
    }
    converted.put("content", content);
    if (!images.isEmpty()) {
      converted.set("images", images);
    }
    return converted;
  }

  /**
   * The text of a message's content (a string or an array of parts), collecting inline images into
   * {@code images}. Parts that Ollama cannot take are reported to {@code unsupported}.
   */
  static String content(JsonNode content, String at, ArrayNode images, Unsupported unsupported) {
    return ContentText.of(content, at, "image_url", part -> {
      String base64 = dataUrlBase64(ContentText.imageUrl(part));
      if (base64 == null) {
        unsupported.add(REMOTE_IMAGES, at);
      } else {
        images.add(base64);
      }
    }, unsupported);
  }

  /** Why an image given by a link is refused: Ollama takes images inline only. */
  static final String REMOTE_IMAGES =
      "image URLs that are not inline base64 data: URLs (the local backend does not fetch remote images)";

  /** The base64 payload of {@code data:<type>;base64,<payload>}, or null for anything else. */
  static String dataUrlBase64(String url) {
    if (url == null || !url.regionMatches(true, 0, "data:", 0, 5)) {
      return null;
    }
    int comma = url.indexOf(',');
    if (comma < 0 || !url.substring(0, comma).toLowerCase(java.util.Locale.ROOT).endsWith(";base64")) {
      return null;
    }
    return url.substring(comma + 1);
  }

  private static ArrayNode assistantToolCalls(JsonNode calls, String at, Map<String, String> toolNamesById) {
    if (calls == null || !calls.isArray() || calls.isEmpty()) {
      return null;
    }
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (int j = 0; j < calls.size(); j++) {
      JsonNode call = calls.get(j);
      JsonNode function = call.get("function");
      String name = Json.text(function, "name");
      if (name == null) {
        throw GatewayException.invalid("'" + at + ".tool_calls[" + j + "].function.name' is missing",
            at + ".tool_calls");
      }
      String id = Json.text(call, "id");
      if (id != null) {
        toolNamesById.put(id, name);
      }
      ObjectNode fn = out.addObject().putObject("function");
      fn.put("name", name);
      fn.set("arguments", parseArguments(function.get("arguments"), at + ".tool_calls[" + j + "].function.arguments"));
    }
    return out;
  }

  /** OpenAI sends tool arguments as a JSON string; Ollama wants the object. */
  private static JsonNode parseArguments(JsonNode arguments, String at) {
    if (arguments == null || arguments.isNull()) {
      return Json.object();
    }
    if (arguments.isObject()) {
      return arguments;
    }
    if (!arguments.isTextual()) {
      throw GatewayException.invalid("'" + at + "' must be a JSON string", at);
    }
    if (arguments.textValue().isBlank()) {
      return Json.object();
    }
    try {
      JsonNode parsed = Json.parse(arguments.textValue());
      if (parsed == null || !parsed.isObject()) {
        throw GatewayException.invalid("'" + at + "' must encode a JSON object", at);
      }
      return parsed;
    } catch (java.io.IOException e) {
      throw GatewayException.invalid("'" + at + "' is not valid JSON", at);
    }
  }

  private static void tools(ObjectNode body, ObjectNode out, Parameters params, Unsupported unsupported) {
    params.handled("tools", "tool_choice", "parallel_tool_calls");
    JsonNode tools = body.get("tools");
    if (!Parameters.present(tools) || tools.isEmpty()) {
      return;
    }
    if (!tools.isArray()) {
      throw GatewayException.invalid("'tools' must be an array", "tools");
    }
    JsonNode choice = body.get("tool_choice");
    if (choice != null && choice.isTextual() && choice.textValue().equals("none")) {
      return;
    }
    if (Parameters.present(choice) && !(choice.isTextual() && choice.textValue().equals("auto"))) {
      // Ollama lets the model decide; it cannot be forced to call a tool.
      params.drop("tool_choice");
    }
    JsonNode parallel = body.get("parallel_tool_calls");
    if (parallel != null && parallel.isBoolean() && !parallel.booleanValue()) {
      params.drop("parallel_tool_calls");
    }
    ArrayNode converted = out.putArray("tools");
    for (JsonNode tool : tools) {
      String type = Json.text(tool, "type");
      JsonNode function = tool.get("function");
      if (!"function".equals(type) || function == null || !function.isObject()) {
        unsupported.add("'" + type + "' tools", "tools");
        continue;
      }
      ObjectNode fn = converted.addObject().put("type", "function").putObject("function");
      fn.put("name", Json.text(function, "name"));
      if (function.hasNonNull("description")) {
        fn.set("description", function.get("description"));
      }
      if (function.hasNonNull("parameters")) {
        fn.set("parameters", function.get("parameters"));
      }
    }
  }

  /** Ollama's tool calls as OpenAI's: ids made up where Ollama gave none, arguments as a JSON string. */
  static ArrayNode toolCalls(JsonNode ollamaCalls, int firstIndex, boolean withIndex) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    int index = firstIndex;
    for (JsonNode call : ollamaCalls) {
      JsonNode function = call.path("function");
      ObjectNode converted = out.addObject();
      if (withIndex) {
        converted.put("index", index++);
      }
      String id = Json.text(call, "id");
      converted.put("id", id != null && !id.isEmpty() ? id : Ids.next("call_"));
      converted.put("type", "function");
      ObjectNode fn = converted.putObject("function");
      fn.put("name", Json.text(function, "name"));
      fn.put("arguments", ToolCall.argumentsText(function.get("arguments")));
    }
    return out;
  }

  /** OpenAI's {@code finish_reason} for Ollama's {@code done_reason}. */
  static String finishReason(JsonNode answer, boolean toolCalls) {
    if (toolCalls) {
      return "tool_calls";
    }
    return "length".equals(Json.text(answer, "done_reason")) ? "length" : "stop";
  }

  /** OpenAI's {@code usage} from Ollama's {@code prompt_eval_count} and {@code eval_count}. */
  static ObjectNode usage(JsonNode answer) {
    long prompt = answer.path("prompt_eval_count").asLong(0);
    long completion = answer.path("eval_count").asLong(0);
    ObjectNode usage = Json.object();
    usage.put("prompt_tokens", prompt);
    usage.put("completion_tokens", completion);
    usage.put("total_tokens", prompt + completion);
    return usage;
  }

  /** A whole (not streamed) {@code /api/chat} answer as a {@code chat.completion}. */
  static ObjectNode completion(JsonNode answer, String model, long created) {
    JsonNode message = answer.path("message");
    JsonNode calls = message.get("tool_calls");
    boolean hasCalls = calls != null && calls.isArray() && !calls.isEmpty();
    ObjectNode out = Json.object();
    out.put("id", Ids.next("chatcmpl-"));
    out.put("object", "chat.completion");
    out.put("created", created);
    out.put("model", model);
    ObjectNode choice = out.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode converted = choice.putObject("message");
    converted.put("role", "assistant");
    String content = Json.text(message, "content");
    if (hasCalls && (content == null || content.isEmpty())) {
      converted.putNull("content");
    } else {
      converted.put("content", content == null ? "" : content);
    }
    if (hasCalls) {
      converted.set("tool_calls", toolCalls(calls, 0, false));
    }
    converted.putNull("refusal");
    converted.putArray("annotations");
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason(answer, hasCalls));
    out.set("usage", usage(answer));
    out.put("system_fingerprint", OllamaBackend.FINGERPRINT);
    return out;
  }
}
