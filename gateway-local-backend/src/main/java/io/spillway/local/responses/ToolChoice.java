package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A Responses request's {@code tool_choice}, resolved against its {@link ToolSet}: whether the model
 * may, must, or must not call a tool, and which tools it may call.
 *
 * <p>{@code "auto"}, {@code "none"}, {@code "required"}, a named {@code function} or {@code custom}
 * tool, and {@code allowed_tools} are understood. A choice naming a tool that is not offered locally
 * (a hosted tool such as {@code web_search}, or an unknown name) is reported as dropped
 * ({@code tool_choice}) and the model decides.
 *
 * @param mode whether a tool call is optional, required or not allowed
 * @param forced the local name of the one tool the model must call, or null
 * @param offered the tools the model may call (empty for {@link Mode#NONE})
 */
public record ToolChoice(Mode mode, String forced, List<LocalTool> offered) {

  /** What {@code tool_choice} asks of the model. */
  public enum Mode {
    AUTO,
    NONE,
    REQUIRED
  }

  public ToolChoice {
    offered = List.copyOf(offered);
  }

  /** Resolves {@code choice} (the request's {@code tool_choice}, or null) against {@code tools}. */
  public static ToolChoice parse(JsonNode choice, ToolSet tools, Consumer<String> drop) {
    List<LocalTool> all = tools.all();
    if (choice == null || choice.isNull()) {
      return new ToolChoice(Mode.AUTO, null, all);
    }
    if (choice.isTextual()) {
      return switch (choice.textValue()) {
        case "none" -> new ToolChoice(Mode.NONE, null, List.of());
        case "required" -> new ToolChoice(Mode.REQUIRED, null, all);
        case "auto" -> new ToolChoice(Mode.AUTO, null, all);
        default -> dropped(all, drop);
      };
    }
    String type = Json.text(choice, "type");
    if ("function".equals(type) || "custom".equals(type)) {
      LocalTool tool = find(tools, Json.text(choice, "namespace"), Json.text(choice, "name"));
      return tool == null ? dropped(all, drop) : new ToolChoice(Mode.REQUIRED, tool.localName(), List.of(tool));
    }
    if ("allowed_tools".equals(type)) {
      List<LocalTool> allowed = new ArrayList<>();
      for (JsonNode entry : choice.path("tools")) {
        LocalTool tool = find(tools, Json.text(entry, "namespace"), Json.text(entry, "name"));
        if (tool == null) {
          drop.accept("tool_choice.allowed_tools." + Json.text(entry, "type"));
        } else if (!allowed.contains(tool)) {
          allowed.add(tool);
        }
      }
      Mode mode = "required".equals(Json.text(choice, "mode")) ? Mode.REQUIRED : Mode.AUTO;
      return new ToolChoice(allowed.isEmpty() ? Mode.NONE : mode, null, allowed);
    }
    return dropped(all, drop);
  }

  private static ToolChoice dropped(List<LocalTool> all, Consumer<String> drop) {
    drop.accept("tool_choice");
    return new ToolChoice(Mode.AUTO, null, all);
  }

  private static LocalTool find(ToolSet tools, String namespace, String name) {
    if (name == null) {
      return null;
    }
    LocalTool tool = tools.byLocalName(tools.localName(namespace, name));
    return tool != null ? tool : tools.byLocalName(name);
  }
}
