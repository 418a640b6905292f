package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;

/**
 * One tool of a Responses request as a local model sees it: a chat-style function.
 *
 * <p>A {@code function} tool keeps its name and JSON schema. A {@code custom} tool (free-form text
 * input, such as Codex's {@code apply_patch}) becomes a function with one string parameter,
 * {@value #CUSTOM_INPUT}, and its call comes back as a {@code custom_tool_call}. A tool inside a
 * {@code namespace} is offered under {@code <namespace>__<name>} and its call comes back with its
 * own name and the {@code namespace} field, as the Responses API returns namespaced calls.
 *
 * @param localName the function name the local model sees and calls
 * @param custom whether the client declared it as a {@code custom} tool
 * @param namespace the namespace it was declared in, or null
 * @param name its name as the client declared it
 * @param description what the local model reads about it (never null)
 * @param parameters its JSON schema
 */
public record LocalTool(
    String localName, boolean custom, String namespace, String name, String description, JsonNode parameters) {

  /** The one parameter of a custom tool's function. */
  public static final String CUSTOM_INPUT = "input";

  /** The shape both Ollama's {@code tools} and chat completions' {@code tools} take. */
  public ObjectNode functionJson() {
    ObjectNode tool = Json.object();
    tool.put("type", "function");
    ObjectNode function = tool.putObject("function");
    function.put("name", localName);
    if (!description.isEmpty()) {
      function.put("description", description);
    }
    function.set("parameters", parameters);
    return tool;
  }

  /** The arguments of a call of this tool for an input the client sent as a custom call's text. */
  static String customArguments(String input) {
    ObjectNode arguments = Json.object();
    arguments.put(CUSTOM_INPUT, input == null ? "" : input);
    return Json.toString(arguments);
  }

  /**
   * A custom call's text from the arguments the local model gave: the {@value #CUSTOM_INPUT}
   * string, or, when the model did not follow the schema, its arguments as they are.
   */
  static String customInput(String argumentsJson) {
    try {
      JsonNode parsed = Json.parse(argumentsJson);
      if (parsed != null && parsed.isObject()) {
        JsonNode input = parsed.get(CUSTOM_INPUT);
        if (input != null && input.isTextual()) {
          return input.textValue();
        }
      } else if (parsed != null && parsed.isTextual()) {
        return parsed.textValue();
      }
    } catch (java.io.IOException | RuntimeException e) {
      // Not JSON: the model wrote the text itself.
    }
    return argumentsJson;
  }
}
