package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * An Anthropic Messages API request written as a chat completions request, the API every local
 * server serves (Ollama's {@code /api/chat} through its own translation, OpenAI-kind servers as it
 * is):
 *
 * <ul>
 *   <li>{@code system} (a string or text blocks) becomes the first {@code system} message, a
 *       {@code system} message inside {@code messages} (Claude Code sends its environment so) a
 *       {@code system} message in its place;
 *   <li>a user message's text and image blocks become its content parts (a base64 image as a
 *       {@code data:} URL), its {@code tool_result} blocks each a {@code tool} message with the
 *       {@code tool_call_id} of the call it answers, before the rest of the message;
 *   <li>an assistant message's text becomes its content, its {@code tool_use} blocks its
 *       {@code tool_calls} (the input as JSON text);
 *   <li>{@code tools} become functions with their {@code input_schema} as parameters,
 *       {@code tool_choice} {@code auto}/{@code any}/{@code tool}/{@code none} the chat equivalents;
 *   <li>{@code max_tokens}, {@code temperature}, {@code top_p} and {@code stop_sequences} (as
 *       {@code stop}) carry over.
 * </ul>
 *
 * <p>What a local model cannot do but can do without is left out and named ({@link #dropped()}):
 * thinking blocks and the {@code thinking} setting, {@code top_k}, server tools (web search, code
 * execution). What would change the answer's meaning is refused ({@link Unsupported}): documents
 * (PDFs), MCP servers, and content blocks of a type this translation does not know. Not
 * thread-safe; one per request.
 */
final class MessagesAsChat {
  /** Fields that change nothing a local model does. */
  private static final Set<String> NO_EFFECT = Set.of("model", "messages", "system", "max_tokens", "stream",
      "temperature", "top_p", "stop_sequences", "tools", "tool_choice", "metadata", "service_tier");

  private final ObjectNode body;
  private final List<String> dropped = new ArrayList<>();

  MessagesAsChat(ObjectNode body) {
    this.body = body;
  }

  /** The request fields left out, in the order found; read after {@link #request}. */
  List<String> dropped() {
    return dropped;
  }

  boolean stream() {
    return body.path("stream").asBoolean(false);
  }

  /** The chat completions body (for the model the client named: the local backend maps it). */
  ObjectNode request(Unsupported unsupported) {
    ObjectNode out = Json.object();
    out.put("model", body.path("model").asText());
    ArrayNode messages = out.putArray("messages");
    String system = systemText(body.get("system"));
    if (!system.isEmpty()) {
      messages.addObject().put("role", "system").put("content", system);
    }
    JsonNode given = body.path("messages");
    for (int i = 0; i < given.size(); i++) {
      JsonNode message = given.get(i);
      String role = message.path("role").asText();
      if ("assistant".equals(role)) {
        assistant(messages, message.get("content"), i, unsupported);
      } else if ("system".equals(role)) {
        String text = systemText(message.get("content"));
        if (!text.isEmpty()) {
          messages.addObject().put("role", "system").put("content", text);
        }
      } else {
        user(messages, message.get("content"), i, unsupported);
      }
    }
    tools(out);
    copy("max_tokens", out, "max_tokens");
    copy("temperature", out, "temperature");
    copy("top_p", out, "top_p");
    copy("stop_sequences", out, "stop");
    if (stream()) {
      out.put("stream", true);
      out.putObject("stream_options").put("include_usage", true);
    }
    if (present(body.get("thinking"))) {
      drop("thinking");
    }
    if (present(body.get("top_k"))) {
      drop("top_k");
    }
    if (present(body.get("mcp_servers"))) {
      unsupported.add("MCP servers (mcp_servers): a local model cannot call them", "mcp_servers");
    }
    for (var field : body.properties()) {
      String name = field.getKey();
      if (!NO_EFFECT.contains(name) && !name.equals("thinking") && !name.equals("top_k")
          && !name.equals("mcp_servers") && present(field.getValue())) {
        drop(name);
      }
    }
    return out;
  }

  private static String systemText(JsonNode system) {
    if (system == null || system.isNull()) {
      return "";
    }
    if (system.isTextual()) {
      return system.textValue();
    }
    List<String> parts = new ArrayList<>();
    for (JsonNode block : system) {
      if (block.path("text").isTextual()) {
        parts.add(block.get("text").textValue());
      }
    }
    return String.join("\n\n", parts);
  }

  private void user(ArrayNode messages, JsonNode content, int index, Unsupported unsupported) {
    if (content.isTextual()) {
      messages.addObject().put("role", "user").put("content", content.textValue());
      return;
    }
    ArrayNode parts = Json.MAPPER.createArrayNode();
    boolean images = false;
    for (int b = 0; b < content.size(); b++) {
      JsonNode block = content.get(b);
      String at = "messages." + index + ".content." + b;
      switch (block.path("type").asText()) {
        case "text" -> parts.addObject().put("type", "text").put("text", block.path("text").asText());
        case "image" -> {
          String url = imageUrl(block.path("source"));
          if (url == null) {
            unsupported.add("an image whose source is neither base64 data nor a URL", at);
          } else {
            parts.addObject().put("type", "image_url").putObject("image_url").put("url", url);
            images = true;
          }
        }
        case "tool_result" -> {
          String text = resultText(block.get("content"));
          if (block.path("is_error").asBoolean(false)) {
            text = "Error: " + text;
          }
          messages.addObject().put("role", "tool").put("tool_call_id", block.path("tool_use_id").asText())
              .put("content", text);
          if (block.get("content") != null && block.get("content").isArray()) {
            for (JsonNode part : block.get("content")) {
              if ("image".equals(part.path("type").asText())) {
                drop("tool_result.image"); // chat completions' tool messages carry text only
              }
            }
          }
        }
        case "thinking", "redacted_thinking" -> drop("thinking");
        case "document" -> unsupported.add("documents (PDF or text document blocks)", at);
        default -> unsupported.add("content blocks of type '" + block.path("type").asText() + "'", at);
      }
    }
    if (parts.isEmpty()) {
      return;
    }
    ObjectNode message = messages.addObject().put("role", "user");
    if (!images) {
      List<String> texts = new ArrayList<>();
      parts.forEach(part -> texts.add(part.path("text").asText()));
      message.put("content", String.join("\n\n", texts));
    } else {
      message.set("content", parts);
    }
  }

  private void assistant(ArrayNode messages, JsonNode content, int index, Unsupported unsupported) {
    ObjectNode message = messages.addObject().put("role", "assistant");
    if (content.isTextual()) {
      message.put("content", content.textValue());
      return;
    }
    List<String> texts = new ArrayList<>();
    ArrayNode calls = Json.MAPPER.createArrayNode();
    for (int b = 0; b < content.size(); b++) {
      JsonNode block = content.get(b);
      switch (block.path("type").asText()) {
        case "text" -> texts.add(block.path("text").asText());
        case "tool_use" -> {
          ObjectNode call = calls.addObject();
          call.put("id", block.path("id").asText());
          call.put("type", "function");
          JsonNode input = block.get("input");
          call.putObject("function").put("name", block.path("name").asText())
              .put("arguments", input == null || input.isNull() ? "{}" : Json.toString(input));
        }
        case "thinking", "redacted_thinking" -> drop("thinking");
        default -> unsupported.add("assistant content blocks of type '" + block.path("type").asText() + "'",
            "messages." + index + ".content." + b);
      }
    }
    if (texts.isEmpty() && !calls.isEmpty()) {
      message.putNull("content");
    } else {
      message.put("content", String.join("", texts));
    }
    if (!calls.isEmpty()) {
      message.set("tool_calls", calls);
    }
  }

  private static String imageUrl(JsonNode source) {
    String type = source.path("type").asText();
    if (type.equals("base64") && source.path("data").isTextual()) {
      return "data:" + source.path("media_type").asText("image/png") + ";base64," + source.get("data").asText();
    }
    if (type.equals("url") && source.path("url").isTextual()) {
      return source.get("url").asText();
    }
    return null;
  }

  /** A tool result's content: a string, or the text of its blocks. */
  private static String resultText(JsonNode content) {
    if (content == null || content.isNull()) {
      return "";
    }
    if (content.isTextual()) {
      return content.textValue();
    }
    List<String> texts = new ArrayList<>();
    for (JsonNode part : content) {
      if (part.path("text").isTextual()) {
        texts.add(part.get("text").asText());
      }
    }
    return String.join("\n", texts);
  }

  private void tools(ObjectNode out) {
    JsonNode tools = body.get("tools");
    if (tools == null || !tools.isArray() || tools.isEmpty()) {
      return;
    }
    ArrayNode functions = Json.MAPPER.createArrayNode();
    for (JsonNode tool : tools) {
      String type = tool.path("type").asText("custom");
      if (!type.equals("custom") || !tool.path("name").isTextual()) {
        drop("tools." + (tool.path("name").isTextual() ? tool.get("name").asText() : type));
        continue;
      }
      ObjectNode function = functions.addObject().put("type", "function").putObject("function");
      function.put("name", tool.get("name").asText());
      if (tool.path("description").isTextual()) {
        function.put("description", tool.get("description").asText());
      }
      JsonNode schema = tool.get("input_schema");
      function.set("parameters", schema != null && schema.isObject() ? schema : Json.object().put("type", "object"));
    }
    if (functions.isEmpty()) {
      return;
    }
    out.set("tools", functions);
    JsonNode choice = body.get("tool_choice");
    if (choice == null || !choice.isObject()) {
      return;
    }
    switch (choice.path("type").asText()) {
      case "any" -> out.put("tool_choice", "required");
      case "none" -> out.put("tool_choice", "none");
      case "tool" -> out.putObject("tool_choice").put("type", "function").putObject("function")
          .put("name", choice.path("name").asText());
      default -> out.put("tool_choice", "auto");
    }
    if (choice.path("disable_parallel_tool_use").asBoolean(false)) {
      out.put("parallel_tool_calls", false);
    }
  }

  private void copy(String from, ObjectNode out, String to) {
    JsonNode value = body.get(from);
    if (present(value)) {
      out.set(to, value);
    }
  }

  private void drop(String field) {
    if (!dropped.contains(field)) {
      dropped.add(field);
    }
  }

  private static boolean present(JsonNode value) {
    return value != null && !value.isNull();
  }
}
