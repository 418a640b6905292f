package io.spillway.core.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the prompt is in an Anthropic Messages API request ({@code /v1/messages} and its
 * {@code count_tokens}), walked once for both of {@link PromptWalk}'s readers.
 *
 * <p>What the model reads (shaping, {@code /v1/messages} only): the {@code system} text (a string, or
 * its blocks' {@code text}); each message's content (a string, or its text blocks), then the content
 * of its {@code tool_result} blocks, which shaping trims as a tool's output.
 *
 * <p>What the estimate counts: every text of {@code system} and of each message's content, a
 * {@code tool_use} block's {@code input} as its JSON text and its {@code name}, and the {@code tools}
 * definitions as their JSON text; {@value #PER_MESSAGE} tokens around each message. Images and
 * documents (their base64 data) are not counted, thinking blocks' signatures neither, numbers neither.
 * These JSON texts are written out and counted as plain texts, as they always were for this API:
 * remembering their counts by structure instead would change which later requests find a count
 * remembered, and so, past a request's bound on tokenized text, their estimates.
 */
final class MessagesPrompt {
  /** Tokens the Messages format adds around every message, as OpenAI's chat format does. */
  static final int PER_MESSAGE = 3;
  private static final Set<String> NOT_COUNTED = Set.of("type", "id", "tool_use_id", "source", "signature",
      "cache_control", "citations", "data");

  private final PromptWalk.Recorder out;
  private final boolean read;

  private MessagesPrompt(PromptWalk.Recorder out, boolean read) {
    this.out = out;
    this.read = read;
  }

  /** Records {@code body}'s prompt; the texts the model reads only when {@code read} (not for a count). */
  static void walk(ObjectNode body, boolean read, PromptWalk.Recorder out) {
    MessagesPrompt walk = new MessagesPrompt(out, read);
    walk.system(body.get("system"));
    JsonNode messages = body.path("messages");
    boolean readMessages = read && messages instanceof ArrayNode;
    for (JsonNode message : messages) {
      out.fixed(PER_MESSAGE);
      if (readMessages && message instanceof ObjectNode) {
        walk.messageContent(message.get("content"));
      } else {
        walk.count(message.get("content"));
      }
    }
    JsonNode tools = body.get("tools");
    if (tools != null && tools.isArray() && !tools.isEmpty()) {
      out.countWritten(tools);
    }
  }

  /** The system prompt: a string, or blocks whose {@code text} the model reads. */
  private void system(JsonNode system) {
    if (system == null || !read) {
      count(system);
    } else if (system.isTextual()) {
      out.readAndCount(system.textValue());
    } else if (system instanceof ArrayNode blocks) {
      for (JsonNode block : blocks) {
        readText(block);
        count(block);
      }
    } else {
      // An object's values are read as blocks are; what is counted of it is any object's.
      for (JsonNode value : system) {
        readText(value);
      }
      count(system);
    }
  }

  private void readText(JsonNode block) {
    if (block.path("text").isTextual()) {
      out.read(block.get("text").textValue());
    }
  }

  /** A message's content, counted; read, with the texts of its tool results after its own. */
  private void messageContent(JsonNode content) {
    if (!(content instanceof ArrayNode blocks)) {
      content(content, null);
      return;
    }
    List<String> toolResults = new ArrayList<>(0);
    for (JsonNode block : blocks) {
      if (PromptWalk.isTextPart(block)) {
        out.read(block.get("text").textValue());
      }
      if (block instanceof ObjectNode result && "tool_result".equals(result.path("type").asText())) {
        toolResult(result, toolResults);
      } else {
        count(block);
      }
    }
    toolResults.forEach(out::read);
  }

  /** A {@code tool_result} block, counted, its content's texts kept in {@code texts}. */
  private void toolResult(ObjectNode result, List<String> texts) {
    for (Map.Entry<String, JsonNode> field : result.properties()) {
      if (NOT_COUNTED.contains(field.getKey())) {
        continue;
      }
      if (field.getKey().equals("content")) {
        content(field.getValue(), texts);
      } else {
        count(field.getValue());
      }
    }
  }

  /**
   * Content as the model reads it: a string, or text blocks; all of it counted. What is read goes to
   * {@code texts}, or straight to the walk when null.
   */
  private void content(JsonNode content, List<String> texts) {
    if (content != null && content.isTextual()) {
      read(content.textValue(), texts);
      out.count(content.textValue());
    } else if (content instanceof ArrayNode parts) {
      for (JsonNode part : parts) {
        if (PromptWalk.isTextPart(part)) {
          read(part.get("text").textValue(), texts);
        }
        count(part);
      }
    } else {
      count(content);
    }
  }

  private void read(String text, List<String> texts) {
    if (texts != null) {
      texts.add(text);
    } else {
      out.read(text);
    }
  }

  /** Every text the estimate counts under {@code node}. */
  private void count(JsonNode node) {
    if (node == null || node.isNull()) {
      return;
    }
    if (node.isTextual()) {
      out.count(node.textValue());
    } else if (node.isArray()) {
      for (JsonNode item : node) {
        count(item);
      }
    } else if (node.isObject()) {
      if (node.has("input") && "tool_use".equals(Json.text(node, "type"))) {
        out.countWritten(node.get("input"));
        count(node.get("name"));
        return;
      }
      for (Map.Entry<String, JsonNode> field : node.properties()) {
        if (!NOT_COUNTED.contains(field.getKey())) {
          count(field.getValue());
        }
      }
    }
  }
}
