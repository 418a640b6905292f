package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The tools of a Responses request that a local model can call, by the name it calls them, and the
 * way back from that name to the item the client expects ({@code function_call} or
 * {@code custom_tool_call}, with its {@code namespace}).
 *
 * <p>{@code function} and {@code custom} tools are kept, and so are those inside a
 * {@code namespace}. Every other type ({@code web_search}, {@code tool_search},
 * {@code file_search}, {@code code_interpreter}, {@code image_generation}, {@code mcp},
 * {@code computer_use_preview}, {@code local_shell}, ...) runs on OpenAI's side or needs its
 * protocol, so it is left out and reported as {@code tools.<type>}. Immutable once built.
 */
public final class ToolSet {
  /** Separates a namespace from a tool's name in the name the local model sees. */
  static final String NAMESPACE_SEPARATOR = "__";

  private final Map<String, LocalTool> byLocalName;

  private ToolSet(Map<String, LocalTool> byLocalName) {
    this.byLocalName = byLocalName;
  }

  /** A set with no tools. */
  public static ToolSet empty() {
    return new ToolSet(Map.of());
  }

  /** The tools of {@code tools} (a request's {@code tools} array, or null); what is left out goes to {@code drop}. */
  public static ToolSet parse(JsonNode tools, Consumer<String> drop) {
    if (tools == null || tools.isNull()) {
      return empty();
    }
    if (!tools.isArray()) {
      throw GatewayException.invalid("'tools' must be an array", "tools");
    }
    Map<String, LocalTool> out = new LinkedHashMap<>();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode tool = tools.get(i);
      String at = "tools[" + i + "]";
      String type = Json.text(tool, "type");
      if (type == null) {
        throw GatewayException.invalid("'" + at + ".type' is missing", at + ".type");
      }
      switch (type) {
        case "function", "custom" -> add(out, tool, null, at, drop);
        case "namespace" -> {
          String namespace = required(tool, "name", at);
          JsonNode inner = tool.get("tools");
          if (inner == null || !inner.isArray()) {
            throw GatewayException.invalid("'" + at + ".tools' must be an array", at + ".tools");
          }
          for (int j = 0; j < inner.size(); j++) {
            JsonNode member = inner.get(j);
            String innerType = Json.text(member, "type");
            if ("function".equals(innerType) || "custom".equals(innerType)) {
              add(out, member, namespace, at + ".tools[" + j + "]", drop);
            } else {
              drop.accept("tools." + innerType);
            }
          }
        }
        default -> drop.accept("tools." + type);
      }
    }
    return new ToolSet(out);
  }

  private static void add(Map<String, LocalTool> out, JsonNode tool, String namespace, String at, Consumer<String> drop) {
    boolean custom = "custom".equals(Json.text(tool, "type"));
    // Chat-completions requests nest the function; Responses requests do not. Accept both.
    JsonNode fields = tool.has("function") && tool.get("function").isObject() ? tool.get("function") : tool;
    String name = required(fields, "name", at);
    String description = Json.text(fields, "description");
    description = description == null ? "" : description;
    JsonNode parameters;
    if (custom) {
      JsonNode format = tool.get("format");
      if (format != null && format.isObject() && !"text".equals(Json.text(format, "type"))) {
        // Local servers cannot constrain the text to the grammar; the model gets it to read instead.
        drop.accept("tools.custom.format");
      }
      parameters = customParameters(format);
      description = description.isEmpty() ? "Call with one argument, 'input': the text this tool takes."
          : description + "\n\nCall it with one argument, 'input': the raw text this tool takes, not JSON.";
    } else {
      JsonNode declared = fields.get("parameters");
      parameters = declared != null && declared.isObject() ? declared : emptySchema();
    }
    String localName = namespace == null ? name : namespace + NAMESPACE_SEPARATOR + name;
    String unique = localName;
    for (int n = 2; out.containsKey(unique); n++) {
      unique = localName + "_" + n;
    }
    out.put(unique, new LocalTool(unique, custom, namespace, name, description, parameters));
  }

  private static ObjectNode customParameters(JsonNode format) {
    ObjectNode schema = Json.object();
    schema.put("type", "object");
    ObjectNode input = schema.putObject("properties").putObject(LocalTool.CUSTOM_INPUT);
    input.put("type", "string");
    String definition = format == null ? null : Json.text(format, "definition");
    if (definition != null) {
      String syntax = Json.text(format, "syntax");
      input.put("description", "The raw input. It must follow this " + (syntax == null ? "" : syntax + " ")
          + "grammar:\n" + definition);
    } else {
      input.put("description", "The raw input.");
    }
    schema.putArray("required").add(LocalTool.CUSTOM_INPUT);
    return schema;
  }

  private static ObjectNode emptySchema() {
    ObjectNode schema = Json.object();
    schema.put("type", "object");
    schema.putObject("properties");
    return schema;
  }

  private static String required(JsonNode node, String field, String at) {
    String value = Json.text(node, field);
    if (value == null || value.isEmpty()) {
      throw GatewayException.invalid("'" + at + "." + field + "' is missing", at + "." + field);
    }
    return value;
  }

  public boolean isEmpty() {
    return byLocalName.isEmpty();
  }

  /** Every tool, in the order the request declared them. */
  public List<LocalTool> all() {
    return List.copyOf(byLocalName.values());
  }

  /** The tool the local model calls {@code localName}, or null. */
  public LocalTool byLocalName(String localName) {
    return localName == null ? null : byLocalName.get(localName);
  }

  /**
   * The name the local model knows the client's tool {@code name} (in {@code namespace}, or null)
   * by: its entry's, or, for a tool no longer offered, the name it would have had.
   */
  public String localName(String namespace, String name) {
    for (LocalTool tool : byLocalName.values()) {
      if (tool.name().equals(name) && java.util.Objects.equals(tool.namespace(), namespace)) {
        return tool.localName();
      }
    }
    return namespace == null ? name : namespace + NAMESPACE_SEPARATOR + name;
  }
}
