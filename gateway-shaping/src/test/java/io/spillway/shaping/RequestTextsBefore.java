package io.spillway.shaping;

// Where shaping found the request's texts before io.spillway.core.prompt.PromptWalk recorded them in
// the one walk (RequestTexts at commit cffd118), kept verbatim but for its name as the reference
// PromptWalkTextsTest compares the walk's texts (and trimming's rewrite) with.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.spillway.core.pipeline.Route;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Where the text is in OpenAI request bodies: the completions {@code prompt}; chat
 * {@code messages[].content} (a string or text parts); the Responses API's {@code input} (a string,
 * messages with {@code input_text} parts, {@code function_call_output} outputs) and
 * {@code instructions}; Anthropic's Messages API's {@code system} and {@code messages[].content}
 * (a string or text blocks, and the content of {@code tool_result} blocks, trimmed as tool output).
 */
final class RequestTextsBefore {
  /** How a text is trimmed. */
  enum Kind {
    /** All of it is code: a completions prompt. */
    CODE,
    /** A message: its fenced code blocks, or all of it when it reads as code. */
    MESSAGE
  }

  @FunctionalInterface
  interface Rewriter {
    /** Returns {@code text} itself to leave it, or its replacement. */
    String rewrite(String text, Kind kind);
  }

  private RequestTextsBefore() {}

  /** Every text the model reads, in order. */
  static void forEach(Route route, ObjectNode body, Consumer<String> each) {
    walk(route, body, null, (text, kind) -> {
      each.accept(text);
      return text;
    }, true);
  }

  /**
   * Rewrites the code-bearing texts of messages whose role is in {@code roles} (and the whole
   * completions prompt) in place: {@code body} must be a copy the caller owns. Returns whether any
   * text changed.
   */
  static boolean rewrite(Route route, ObjectNode body, Set<String> roles, Rewriter rewriter) {
    return walk(route, body, roles, rewriter, false);
  }

  private static boolean walk(Route route, ObjectNode body, Set<String> roles, Rewriter rewriter, boolean all) {
    boolean changed = false;
    switch (route) {
      case COMPLETIONS -> {
        JsonNode prompt = body.get("prompt");
        if (prompt != null && prompt.isTextual()) {
          changed |= replace(body, "prompt", prompt.textValue(), Kind.CODE, rewriter);
        } else if (prompt instanceof ArrayNode array) {
          for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            if (item.isTextual()) {
              String text = item.textValue();
              String out = rewriter.rewrite(text, Kind.CODE);
              if (out != text) {
                array.set(i, TextNode.valueOf(out));
                changed = true;
              }
            }
          }
        }
      }
      case CHAT_COMPLETIONS -> {
        if (body.get("messages") instanceof ArrayNode messages) {
          for (JsonNode node : messages) {
            if (node instanceof ObjectNode message && (all || roles.contains(message.path("role").asText("")))) {
              changed |= content(message, "content", rewriter);
            }
          }
        }
      }
      case RESPONSES -> {
        if (all && body.get("instructions") != null && body.get("instructions").isTextual()) {
          rewriter.rewrite(body.get("instructions").textValue(), Kind.MESSAGE);
        }
        JsonNode input = body.get("input");
        if (input != null && input.isTextual()) {
          if (all || roles.contains("user")) {
            changed |= replace(body, "input", input.textValue(), Kind.MESSAGE, rewriter);
          }
        } else if (input instanceof ArrayNode items) {
          for (JsonNode node : items) {
            if (!(node instanceof ObjectNode item)) {
              continue;
            }
            String type = item.path("type").asText("message");
            if (type.equals("function_call_output") || type.equals("custom_tool_call_output")) {
              if ((all || roles.contains("tool")) && item.path("output").isTextual()) {
                changed |= replace(item, "output", item.get("output").textValue(), Kind.MESSAGE, rewriter);
              }
            } else if (type.equals("message") && (all || roles.contains(item.path("role").asText("")))) {
              changed |= content(item, "content", rewriter);
            }
          }
        }
      }
      case MESSAGES -> {
        if (all && body.get("system") != null) {
          JsonNode system = body.get("system");
          if (system.isTextual()) {
            rewriter.rewrite(system.textValue(), Kind.MESSAGE);
          } else {
            for (JsonNode block : system) {
              if (block.path("text").isTextual()) {
                rewriter.rewrite(block.get("text").textValue(), Kind.MESSAGE);
              }
            }
          }
        }
        if (body.get("messages") instanceof ArrayNode messages) {
          for (JsonNode node : messages) {
            if (!(node instanceof ObjectNode message)) {
              continue;
            }
            if (all || roles.contains(message.path("role").asText(""))) {
              changed |= content(message, "content", rewriter);
            }
            // A tool's output travels in a user message's tool_result block: trimmed as a tool message.
            if ((all || roles.contains("tool")) && message.get("content") instanceof ArrayNode blocks) {
              for (JsonNode block : blocks) {
                if (block instanceof ObjectNode result && "tool_result".equals(result.path("type").asText())) {
                  changed |= content(result, "content", rewriter);
                }
              }
            }
          }
        }
      }
      default -> {}
    }
    return changed;
  }

  /** A message's content: a string, or an array of parts whose {@code text} is rewritten. */
  private static boolean content(ObjectNode message, String field, Rewriter rewriter) {
    JsonNode content = message.get(field);
    if (content != null && content.isTextual()) {
      return replace(message, field, content.textValue(), Kind.MESSAGE, rewriter);
    }
    boolean changed = false;
    if (content instanceof ArrayNode parts) {
      for (JsonNode node : parts) {
        if (node instanceof ObjectNode part && part.path("text").isTextual()) {
          String type = part.path("type").asText("text");
          if (type.equals("text") || type.equals("input_text") || type.equals("output_text")) {
            changed |= replace(part, "text", part.get("text").textValue(), Kind.MESSAGE, rewriter);
          }
        }
      }
    }
    return changed;
  }

  private static boolean replace(ObjectNode holder, String field, String text, Kind kind, Rewriter rewriter) {
    String out = rewriter.rewrite(text, kind);
    if (out != text) {
      holder.put(field, out);
      return true;
    }
    return false;
  }
}
