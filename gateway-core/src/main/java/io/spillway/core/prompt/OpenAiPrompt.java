package io.spillway.core.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.Route;
import java.util.Map;
import java.util.Set;

/**
 * Where the prompt is in OpenAI request bodies, walked once for both of {@link PromptWalk}'s readers.
 *
 * <p>What the model reads (shaping): the completions {@code prompt} (a string, or the strings of an
 * array); chat {@code messages[].content} (a string, or its text parts); the Responses API's
 * {@code instructions}, its {@code input} (a string, or items: a message's content, a
 * {@code function_call_output}'s or {@code custom_tool_call_output}'s {@code output}). Embeddings
 * have none (their vectors must not change).
 *
 * <p>What the estimate counts: every text leaf of chat {@code messages}, of the completions
 * {@code prompt} and {@code suffix}, of the Responses API's {@code instructions} and {@code input} and
 * of the embeddings {@code input}, leaving out binary payloads and structural fields; a number as one
 * token (a token id of a pre-tokenized prompt); {@value #PER_MESSAGE} tokens around each chat message
 * and {@value #REPLY_PRIMER} to prime the reply; chat {@code tools}, {@code functions},
 * {@code response_format} and the Responses API's {@code tools} each as its JSON text.
 */
final class OpenAiPrompt {
  /** Tokens OpenAI's chat format adds around every message, and to prime the reply. */
  static final int PER_MESSAGE = 3;
  static final int REPLY_PRIMER = 3;
  /** Binary payloads (images, audio, files): not counted. */
  private static final Set<String> BINARY_KEYS =
      Set.of("image_url", "input_audio", "audio", "file", "file_data", "file_id", "image", "data", "url");
  /** Structural fields: not counted. */
  private static final Set<String> NON_TEXT_KEYS = Set.of("type", "role", "id", "call_id", "status", "detail");

  private final PromptWalk.Recorder out;

  private OpenAiPrompt(PromptWalk.Recorder out) {
    this.out = out;
  }

  static void walk(Route route, ObjectNode body, PromptWalk.Recorder out) {
    OpenAiPrompt walk = new OpenAiPrompt(out);
    switch (route) {
      case CHAT_COMPLETIONS -> walk.chat(body);
      case COMPLETIONS -> walk.completions(body);
      case RESPONSES -> walk.responses(body);
      case EMBEDDINGS -> walk.count(body.get("input"));
      default -> {}
    }
  }

  private void chat(ObjectNode body) {
    out.fixed(REPLY_PRIMER);
    if (body.get("messages") instanceof ArrayNode messages) {
      for (JsonNode message : messages) {
        out.fixed(PER_MESSAGE);
        if (message instanceof ObjectNode fields) {
          item(fields, false, true);
        } else {
          count(message);
        }
      }
    }
    definitions(body.get("tools"));
    definitions(body.get("functions"));
    definitions(body.get("response_format"));
  }

  private void completions(ObjectNode body) {
    JsonNode prompt = body.get("prompt");
    if (prompt instanceof ArrayNode items) {
      for (JsonNode item : items) {
        if (item.isTextual()) {
          out.read(item.textValue());
        }
        count(item);
      }
    } else {
      readIfText(prompt);
    }
    count(body.get("suffix"));
  }

  private void responses(ObjectNode body) {
    readIfText(body.get("instructions"));
    JsonNode input = body.get("input");
    if (input instanceof ArrayNode items) {
      for (JsonNode item : items) {
        if (item instanceof ObjectNode fields) {
          String type = fields.path("type").asText("message");
          boolean toolOutput = type.equals("function_call_output") || type.equals("custom_tool_call_output");
          item(fields, toolOutput, type.equals("message"));
        } else {
          count(item);
        }
      }
    } else {
      readIfText(input);
    }
    definitions(body.get("tools"));
  }

  /** A string the model reads and the estimate counts; anything else only counted. */
  private void readIfText(JsonNode node) {
    if (node != null && node.isTextual()) {
      out.readAndCount(node.textValue());
    } else {
      count(node);
    }
  }

  /**
   * A message or an input item: every field counted, and read where the model reads it: its
   * {@code content} when it is a message, its string {@code output} when it is a tool's output.
   */
  private void item(ObjectNode item, boolean toolOutput, boolean message) {
    for (Map.Entry<String, JsonNode> field : item.properties()) {
      String key = field.getKey();
      JsonNode value = field.getValue();
      if (!counted(key)) {
        continue;
      }
      if (message && key.equals("content")) {
        content(value);
      } else if (toolOutput && key.equals("output")) {
        readIfText(value);
      } else {
        count(value);
      }
    }
  }

  /** A message's content: a string, or parts whose text parts the model reads; all of it counted. */
  private void content(JsonNode content) {
    if (content instanceof ArrayNode parts) {
      for (JsonNode part : parts) {
        if (PromptWalk.isTextPart(part)) {
          out.read(part.get("text").textValue());
        }
        count(part);
      }
    } else {
      readIfText(content);
    }
  }

  /** Every text leaf under {@code node} counted, binary payloads and structural fields left out. */
  private void count(JsonNode node) {
    if (node == null || node.isNull()) {
      return;
    }
    if (node.isTextual()) {
      out.count(node.textValue());
    } else if (node.isNumber()) {
      out.fixed(1); // a token id in a pre-tokenized prompt
    } else if (node.isArray()) {
      for (JsonNode item : node) {
        count(item);
      }
    } else if (node.isObject()) {
      for (Map.Entry<String, JsonNode> field : node.properties()) {
        if (counted(field.getKey())) {
          count(field.getValue());
        }
      }
    }
  }

  private void definitions(JsonNode definitions) {
    if (definitions != null && !definitions.isNull() && !definitions.isMissingNode()) {
      out.countDefinitions(definitions);
    }
  }

  private static boolean counted(String key) {
    return !BINARY_KEYS.contains(key) && !NON_TEXT_KEYS.contains(key);
  }
}
