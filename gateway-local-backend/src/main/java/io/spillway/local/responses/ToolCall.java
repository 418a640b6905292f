package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.local.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * One tool call in the chat shape, in a conversation's history or in a local model's answer.
 *
 * @param callId the id that ties the call to its output ({@code call_id} in the Responses API)
 * @param localName the function name the local model knows the tool by (see {@link LocalTool})
 * @param arguments the arguments as a JSON text (an object)
 */
public record ToolCall(String callId, String localName, String arguments) {

  /**
   * The tool calls of a model's answer in the chat shape both local kinds answer with
   * ({@code [{id?, function: {name, arguments}}]}): an id made up where the server gave none,
   * arguments as a JSON text whether sent as text (OpenAI) or as an object (Ollama), {@code "{}"}
   * when there are none or they are blank. Empty for anything but an array.
   */
  public static List<ToolCall> listOf(JsonNode calls) {
    List<ToolCall> out = new ArrayList<>();
    if (calls == null || !calls.isArray()) {
      return out;
    }
    for (JsonNode call : calls) {
      JsonNode function = call.path("function");
      String id = Json.text(call, "id");
      String name = Json.text(function, "name");
      String arguments = argumentsText(function.get("arguments"));
      out.add(new ToolCall(id != null && !id.isEmpty() ? id : Ids.next("call_"), name == null ? "" : name,
          arguments.isBlank() ? "{}" : arguments));
    }
    return out;
  }

  /** Arguments as a JSON text: a text as it is, an object written out, none as {@code "{}"}. */
  public static String argumentsText(JsonNode arguments) {
    if (arguments == null || arguments.isNull()) {
      return "{}";
    }
    return arguments.isTextual() ? arguments.textValue() : Json.toString(arguments);
  }
}
