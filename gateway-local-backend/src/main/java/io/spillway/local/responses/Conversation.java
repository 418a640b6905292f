package io.spillway.local.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.local.ContentText;
import io.spillway.local.RequestItems;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A Responses API request read as a chat conversation, the part both local kinds share: Ollama's
 * {@code /api/chat} and OpenAI-compatible {@code /v1/chat/completions} take the same messages and
 * function tools, and differ only in how they spell them.
 *
 * <ul>
 *   <li>{@code instructions} → a leading system message; {@code developer} and {@code system}
 *       messages → system messages (those the conversation starts with joined into that one);
 *       {@code user} and {@code assistant} keep their role;
 *   <li>content as a string or parts: {@code input_text}, {@code output_text} and {@code refusal}
 *       become text (joined by newlines), {@code input_image} an image of a user message;
 *   <li>{@code function_call} and {@code custom_tool_call} → tool calls of an assistant message
 *       (joined to the assistant message just before them, as chat carries them); their outputs →
 *       {@code tool} messages that keep the {@code call_id} and name the tool;
 *   <li>{@code reasoning} items are dropped (their summary is the model's own, never sent as text),
 *       and so are records of hosted tools ({@code web_search_call}, ...): each is reported as
 *       {@code input.<type>}.
 * </ul>
 *
 * <p>Stored state arrives expanded: while the response store is on ({@code responses.enabled}),
 * {@code io.spillway.core.responses.StoredStateBackend} replaces {@code previous_response_id} and
 * {@code item_reference} items with the stored items before the request gets here. What still
 * carries them (the store off) is refused as {@link Unsupported}, and so are {@code conversation}
 * (the Conversations API's state lives only in the cloud), a stored {@code prompt} and
 * {@code background}.
 *
 * @param messages the conversation, instructions first
 * @param tools the tools a local model can call
 * @param choice the request's {@code tool_choice} resolved against {@code tools}
 */
public record Conversation(List<ChatMessage> messages, ToolSet tools, ToolChoice choice) {

  public Conversation {
    messages = List.copyOf(messages);
  }

  /**
   * Reads {@code body}. Fields left out are passed to {@code drop}, parts no local model can serve
   * to {@code unsupported}; malformed input throws a 400 {@link GatewayException}.
   */
  public static Conversation parse(ObjectNode body, Consumer<String> drop, Unsupported unsupported) {
    refuseStoredState(body, unsupported);
    ToolSet tools = ToolSet.parse(body.get("tools"), drop);
    ToolChoice choice = ToolChoice.parse(body.get("tool_choice"), tools, drop);
    List<ChatMessage> messages = new ArrayList<>();
    JsonNode instructions = body.get("instructions");
    if (instructions != null && instructions.isTextual() && !instructions.textValue().isEmpty()) {
      messages.add(ChatMessage.text("system", instructions.textValue(), List.of()));
    }
    new Reader(tools, drop, unsupported, messages).input(body.get("input"));
    return new Conversation(leadingSystemJoined(messages), tools, choice);
  }

  /**
   * The messages with the system messages they start with (instructions, developer messages) joined
   * into one, blank line between: many chat templates read only one system message, the first.
   */
  private static List<ChatMessage> leadingSystemJoined(List<ChatMessage> messages) {
    int leading = 0;
    while (leading < messages.size() && messages.get(leading).role().equals("system")) {
      leading++;
    }
    if (leading < 2) {
      return messages;
    }
    StringBuilder text = new StringBuilder();
    for (ChatMessage message : messages.subList(0, leading)) {
      if (!message.text().isEmpty()) {
        text.append(text.isEmpty() ? "" : "\n\n").append(message.text());
      }
    }
    List<ChatMessage> joined = new ArrayList<>();
    joined.add(ChatMessage.text("system", text.toString(), List.of()));
    joined.addAll(messages.subList(leading, messages.size()));
    return joined;
  }

  private static void refuseStoredState(ObjectNode body, Unsupported unsupported) {
    if (present(body.get("previous_response_id"))) {
      unsupported.add("previous_response_id (the gateway's response store is off, responses.enabled: false; send "
          + "the whole conversation in 'input')", "previous_response_id");
    }
    if (present(body.get("conversation"))) {
      unsupported.add("conversation (the Conversations API's state is kept only by the cloud)", "conversation");
    }
    if (present(body.get("prompt"))) {
      unsupported.add("stored prompts ('prompt')", "prompt");
    }
    JsonNode background = body.get("background");
    if (background != null && background.asBoolean(false)) {
      unsupported.add("background responses ('background': true)", "background");
    }
  }

  static boolean present(JsonNode value) {
    return value != null && !value.isNull() && !value.isMissingNode();
  }

  /** Reads {@code input} into messages; one per request. */
  private static final class Reader {
    private final ToolSet tools;
    private final Consumer<String> drop;
    private final Unsupported unsupported;
    private final List<ChatMessage> messages;
    private final Map<String, String> toolByCallId = new HashMap<>();

    Reader(ToolSet tools, Consumer<String> drop, Unsupported unsupported, List<ChatMessage> messages) {
      this.tools = tools;
      this.drop = drop;
      this.unsupported = unsupported;
      this.messages = messages;
    }

    void input(JsonNode input) {
      if (input == null || input.isNull()) {
        return;
      }
      if (input.isTextual()) {
        messages.add(ChatMessage.text("user", input.textValue(), List.of()));
        return;
      }
      if (!input.isArray()) {
        throw GatewayException.invalid("'input' must be a string or an array", "input");
      }
      RequestItems.each(input, "input", this::item);
    }

    private void item(JsonNode item, String at) {
      String type = Json.text(item, "type");
      if (type == null) {
        if (Json.text(item, "role") == null) {
          throw GatewayException.invalid("'" + at + ".type' is missing", at + ".type");
        }
        type = "message";
      }
      switch (type) {
        case "message" -> message(item, at);
        case "function_call" -> call(item, at, false);
        case "custom_tool_call" -> call(item, at, true);
        case "function_call_output", "custom_tool_call_output" -> output(item, at);
        case "item_reference" -> unsupported.add(
            "'item_reference' input items (the gateway's response store is off, responses.enabled: false)", at);
        default -> drop.accept("input." + type);
      }
    }

    private void message(JsonNode item, String at) {
      String role = RequestItems.role(item, at);
      String chatRole = switch (role) {
        case "system", "developer" -> "system";
        case "user" -> "user";
        case "assistant" -> "assistant";
        default -> throw GatewayException.invalid(
            "'" + at + ".role' must be one of user, assistant, system, developer; got '" + role + "'", at + ".role");
      };
      List<String> images = new ArrayList<>();
      String text = content(item.get("content"), at + ".content", images);
      if (!images.isEmpty() && !chatRole.equals("user")) {
        unsupported.add("images in " + role + " messages", at + ".content");
      }
      messages.add(ChatMessage.text(chatRole, text, images));
    }

    private void call(JsonNode item, String at, boolean custom) {
      String callId = required(item, "call_id", at);
      String name = required(item, "name", at);
      String localName = tools.localName(Json.text(item, "namespace"), name);
      String arguments;
      if (custom) {
        arguments = LocalTool.customArguments(Json.text(item, "input"));
      } else {
        arguments = ToolCall.argumentsText(item.get("arguments"));
      }
      toolByCallId.put(callId, localName);
      ToolCall call = new ToolCall(callId, localName, arguments);
      int last = messages.size() - 1;
      if (last >= 0 && messages.get(last).role().equals("assistant")) {
        messages.set(last, messages.get(last).withCall(call));
      } else {
        messages.add(new ChatMessage("assistant", "", List.of(), List.of(call), null, null));
      }
    }

    private void output(JsonNode item, String at) {
      String callId = required(item, "call_id", at);
      JsonNode output = item.get("output");
      List<String> images = new ArrayList<>();
      String text;
      if (output != null && output.isObject() && output.has("content")) {
        // Older Codex versions sent a failed call's output as {"content": ..., "success": false}.
        text = content(output.get("content"), at + ".output.content", images);
      } else {
        text = content(output, at + ".output", images);
      }
      messages.add(ChatMessage.toolOutput(callId, toolByCallId.get(callId), text, images));
    }

    /** The text of a content value (a string or parts), collecting images into {@code images}. */
    private String content(JsonNode content, String at, List<String> images) {
      return ContentText.of(content, at, "input_image", part -> image(part, at, images), unsupported);
    }

    private void image(JsonNode part, String at, List<String> images) {
      String link = ContentText.imageUrl(part);
      if (link == null || link.isEmpty()) {
        unsupported.add("images given by 'file_id' (the local backend has no stored files)", at);
      } else {
        images.add(link);
      }
    }

    private static String required(JsonNode item, String field, String at) {
      String value = Json.text(item, field);
      if (value == null || value.isEmpty()) {
        throw GatewayException.invalid("'" + at + "." + field + "' is missing", at + "." + field);
      }
      return value;
    }
  }
}
