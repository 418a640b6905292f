package io.spillway.local.context;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/** Builds agent conversations of known shape and size for the fitting tests. */
final class Conversations {
  private Conversations() {}

  static final String SYSTEM = "You are a coding agent. Follow the repository's conventions. Never delete tests.";

  /**
   * A tool output that reads as Java code: {@code lines} lines of methods (about 12 tokens a line),
   * so the code-aware trimmer can shorten it.
   */
  static String javaSource(String name, int lines) {
    StringBuilder out = new StringBuilder("package demo;\n\npublic final class " + name + " {\n");
    for (int i = 0; out.chars().filter(c -> c == '\n').count() < lines; i++) {
      out.append("  int compute").append(i).append("(int value) {\n");
      out.append("    int result = value * ").append(i).append(" + offset").append(i).append(";\n");
      out.append("    return result;\n");
      out.append("  }\n");
    }
    return out.append("}\n").toString();
  }

  /** A tool output that is not code: a build log of {@code lines} lines. */
  static String buildLog(String tag, int lines) {
    return IntStream.range(0, lines)
        .mapToObj(i -> "[" + tag + "] step " + i + ": compiled module number " + i + " without warnings in 12 ms")
        .collect(Collectors.joining("\n"));
  }

  /** Prose of about {@code words} words (about one token a word). */
  static String prose(String topic, int words) {
    return IntStream.range(0, words).mapToObj(i -> i % 12 == 11 ? topic + "." : "word")
        .collect(Collectors.joining(" "));
  }

  /** A chat request: system message, then {@code turns} tool-calling turns, then a last user message. */
  static ObjectNode chatAgent(int turns, String outputKind, int outputLines) {
    ObjectNode body = Json.object().put("model", "gpt-4o");
    ArrayNode messages = body.putArray("messages");
    messages.addObject().put("role", "system").put("content", SYSTEM);
    messages.addObject().put("role", "developer").put("content", "Work in the src/ folder only.");
    messages.addObject().put("role", "user").put("content", "Task: make the build green.");
    for (int t = 0; t < turns; t++) {
      ObjectNode assistant = messages.addObject().put("role", "assistant");
      assistant.putNull("content");
      ObjectNode call = assistant.putArray("tool_calls").addObject().put("id", "call_" + t).put("type", "function");
      call.putObject("function").put("name", "shell").put("arguments", "{\"cmd\":\"cat File" + t + ".java\"}");
      String output = outputKind.equals("code") ? javaSource("File" + t, outputLines) : buildLog("turn" + t, outputLines);
      messages.addObject().put("role", "tool").put("tool_call_id", "call_" + t).put("content", output);
    }
    messages.addObject().put("role", "user").put("content", "Now fix the failing test, please.");
    body.putArray("tools").addObject().put("type", "function").putObject("function").put("name", "shell")
        .put("description", "Runs a shell command").putObject("parameters").put("type", "object");
    return body;
  }
}
