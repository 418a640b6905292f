package io.spillway.app.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * How both simulators play an agent's model, so a coding agent's turn of "run a command, read its
 * output, answer" works on either: a request that offers function tools is answered with a call of
 * one as long as the conversation holds no tool result since the latest user message, and with text
 * once it does. The call prefers a shell tool ({@code shell}, {@code exec_command}, ...: the command
 * {@code ls}), else the first function tool; each required parameter gets a value of its JSON-schema
 * type (strings the user's text).
 *
 * <p>Reads the two shapes requests come in: chat's ({@code tools[].function}, {@code tool} messages;
 * Ollama's native chat uses it too) and the Responses API's (flat {@code tools[]} of type
 * {@code function}, {@code function_call_output} / {@code custom_tool_call_output} input items).
 */
final class SimulatedAgent {
  private static final List<String> SHELL_TOOLS = List.of("shell", "exec_command", "local_shell", "bash", "run_command");
  private static final List<String> TOOL_OUTPUTS = List.of("function_call_output", "custom_tool_call_output");

  private SimulatedAgent() {}

  /**
   * A tool call the simulated model makes.
   *
   * @param callId the call's id ({@code call_…}), the same for the same tool and prompt
   * @param arguments the arguments as an object (chat and the Responses API send them as its JSON text)
   */
  record ToolCall(String callId, String name, ObjectNode arguments) {
    String argumentsJson() {
      return Json.toString(arguments);
    }
  }

  /** The call a chat request ({@code tools[].function}, {@code messages}) gets, or null for a text answer. */
  static ToolCall forChat(JsonNode tools, JsonNode messages, String prompt) {
    if (messages == null || !messages.isArray() || chatToolOutput(messages) != null) {
      return null;
    }
    List<JsonNode> functions = new ArrayList<>();
    if (tools != null && tools.isArray()) {
      tools.forEach(tool -> {
        if (tool.path("function").isObject()) {
          functions.add(tool.path("function"));
        }
      });
    }
    return call(functions, prompt);
  }

  /** The call a Responses API request ({@code tools}, {@code input}) gets, or null for a text answer. */
  static ToolCall forResponses(JsonNode tools, JsonNode input, String prompt) {
    if (responsesToolOutput(input) != null) {
      return null;
    }
    List<JsonNode> functions = new ArrayList<>();
    if (tools != null && tools.isArray()) {
      tools.forEach(tool -> {
        if ("function".equals(Json.text(tool, "type")) && Json.text(tool, "name") != null) {
          functions.add(tool);
        }
      });
    }
    return call(functions, prompt);
  }

  /** The output of the tool results since the latest user message of chat {@code messages}, or null when none. */
  static String chatToolOutput(JsonNode messages) {
    if (messages == null || !messages.isArray()) {
      return null;
    }
    List<String> outputs = new ArrayList<>();
    for (int i = messages.size() - 1; i >= 0; i--) {
      String role = Json.text(messages.get(i), "role");
      if ("user".equals(role)) {
        break;
      }
      if ("tool".equals(role)) {
        outputs.addFirst(SimulatedText.text(messages.get(i).get("content")));
      }
    }
    return outputs.isEmpty() ? null : String.join("\n", outputs);
  }

  /** The output of the tool results since the latest user message of a Responses {@code input}, or null. */
  static String responsesToolOutput(JsonNode input) {
    if (input == null || !input.isArray()) {
      return null;
    }
    List<String> outputs = new ArrayList<>();
    for (int i = input.size() - 1; i >= 0; i--) {
      JsonNode item = input.get(i);
      if ("user".equals(Json.text(item, "role"))) {
        break;
      }
      if (TOOL_OUTPUTS.contains(Json.text(item, "type"))) {
        JsonNode output = item.get("output");
        outputs.addFirst(output != null && output.isTextual() ? output.textValue() : SimulatedText.text(output));
      }
    }
    return outputs.isEmpty() ? null : String.join("\n", outputs);
  }

  private static ToolCall call(List<JsonNode> functions, String prompt) {
    if (functions.isEmpty()) {
      return null;
    }
    JsonNode function = functions.stream().filter(f -> SHELL_TOOLS.contains(Json.text(f, "name"))).findFirst()
        .orElse(functions.get(0));
    String name = Json.text(function, "name");
    ObjectNode arguments = Json.object();
    JsonNode properties = function.path("parameters").path("properties");
    for (JsonNode required : function.path("parameters").path("required")) {
      String parameter = required.asText();
      arguments.set(parameter, argument(parameter, properties.path(parameter), prompt));
    }
    return new ToolCall("call_" + Integer.toHexString((name + prompt).hashCode()), name, arguments);
  }

  /** A value of the parameter's JSON-schema type; a command parameter gets {@code ls}. */
  private static JsonNode argument(String name, JsonNode schema, String prompt) {
    boolean command = name.equals("command") || name.equals("cmd");
    return switch (String.valueOf(Json.text(schema, "type"))) {
      case "array" -> {
        ArrayNode values = Json.MAPPER.createArrayNode();
        values.add(command ? "ls" : prompt);
        yield values;
      }
      case "integer", "number" -> Json.MAPPER.getNodeFactory().numberNode(1);
      case "boolean" -> Json.MAPPER.getNodeFactory().booleanNode(false);
      case "object" -> Json.object();
      default -> Json.MAPPER.getNodeFactory().textNode(command ? "ls" : prompt);
    };
  }
}
