package io.spillway.app.local;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Long coding-agent conversations, as Chat Completions messages or Responses input items: a system
 * prompt, the task, then turns of tool calls whose outputs are build logs and source files, then the
 * latest user message.
 */
final class AgentConversations {
  static final String SYSTEM = "You are a coding agent working in the user's repository. Keep changes minimal.";
  static final String TASK = "Task: the release build fails; find out why and fix it.";
  static final String LATEST = "Good. Now run the whole test suite and summarize what still fails.";

  private AgentConversations() {}

  static String output(int turn) {
    if (turn % 3 == 2) {
      StringBuilder source = new StringBuilder("package app;\n\npublic final class Module" + turn + " {\n");
      for (int i = 0; i < 40; i++) {
        source.append("  long step").append(i).append("(long input) {\n    return input * ").append(i)
            .append(" + ").append(turn).append(";\n  }\n");
      }
      return source.append("}\n").toString();
    }
    return IntStream.range(0, 45).mapToObj(i -> "[INFO] turn " + turn + " task " + i
        + ": compiling module-" + i + " (12 source files) ... ok in " + (i * 7 % 50) + " ms")
        .collect(Collectors.joining("\n"));
  }

  /** Chat Completions: {@code turns} assistant tool calls, each answered by a tool message. */
  static ObjectNode chat(int turns) {
    ObjectNode body = Json.object().put("model", "gpt-4o");
    ArrayNode messages = body.putArray("messages");
    messages.addObject().put("role", "system").put("content", SYSTEM);
    messages.addObject().put("role", "user").put("content", TASK);
    for (int t = 0; t < turns; t++) {
      ObjectNode assistant = messages.addObject().put("role", "assistant");
      assistant.putNull("content");
      assistant.putArray("tool_calls").addObject().put("id", "call_" + t).put("type", "function")
          .putObject("function").put("name", "shell").put("arguments", "{\"command\":\"make step-" + t + "\"}");
      messages.addObject().put("role", "tool").put("tool_call_id", "call_" + t).put("content", output(t));
    }
    messages.addObject().put("role", "user").put("content", LATEST);
    ObjectNode tool = body.putArray("tools").addObject().put("type", "function");
    tool.putObject("function").put("name", "shell").put("description", "Runs a shell command in the repository")
        .putObject("parameters").put("type", "object").putObject("properties").putObject("command")
        .put("type", "string");
    return body;
  }

  /** Responses API: {@code instructions}, then function_call/custom_tool_call items with their outputs. */
  static ObjectNode responses(int turns) {
    ObjectNode body = Json.object().put("model", "gpt-4o").put("instructions", SYSTEM);
    ArrayNode input = body.putArray("input");
    input.addObject().put("type", "message").put("role", "user").putArray("content").addObject()
        .put("type", "input_text").put("text", TASK);
    for (int t = 0; t < turns; t++) {
      if (t % 4 == 3) {
        input.addObject().put("type", "custom_tool_call").put("call_id", "call_" + t).put("name", "apply_patch")
            .put("input", "*** Begin Patch\n*** Update File: src/Module.java\n+// turn " + t + "\n*** End Patch");
        input.addObject().put("type", "custom_tool_call_output").put("call_id", "call_" + t).put("output", output(t));
      } else {
        input.addObject().put("type", "function_call").put("call_id", "call_" + t).put("name", "shell")
            .put("arguments", "{\"command\":[\"make\",\"step-" + t + "\"]}");
        input.addObject().put("type", "function_call_output").put("call_id", "call_" + t).put("output", output(t));
      }
    }
    input.addObject().put("type", "message").put("role", "user").putArray("content").addObject()
        .put("type", "input_text").put("text", LATEST);
    body.putArray("tools").addObject().put("type", "function").put("name", "shell")
        .putObject("parameters").put("type", "object");
    return body;
  }

  /** Responses API, message items only (the subset every local backend serves). */
  static ObjectNode responsesMessages(int turns) {
    ObjectNode body = Json.object().put("model", "gpt-4o").put("instructions", SYSTEM);
    ArrayNode input = body.putArray("input");
    input.addObject().put("role", "user").put("content", TASK);
    for (int t = 0; t < turns; t++) {
      input.addObject().put("role", "assistant").put("content", "Ran step " + t + ".");
      input.addObject().put("role", "user").put("content", "Output of step " + t + ":\n" + output(t));
    }
    input.addObject().put("role", "user").put("content", LATEST);
    return body;
  }
}
