package io.spillway.local.responses;

import java.util.List;

/**
 * One message of a Responses request's conversation in the chat shape that both Ollama's
 * {@code /api/chat} and OpenAI's chat completions take.
 *
 * @param role {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param text the text (parts joined by newlines); empty when there is none
 * @param imageUrls images on a user message, as the client gave them ({@code data:} URLs or links)
 * @param toolCalls an assistant message's tool calls
 * @param toolCallId a tool message's call id
 * @param toolName a tool message's tool, by its local name; null when the call is not in the input
 */
public record ChatMessage(
    String role, String text, List<String> imageUrls, List<ToolCall> toolCalls, String toolCallId, String toolName) {

  public ChatMessage {
    imageUrls = List.copyOf(imageUrls);
    toolCalls = List.copyOf(toolCalls);
  }

  static ChatMessage text(String role, String text, List<String> imageUrls) {
    return new ChatMessage(role, text, imageUrls, List.of(), null, null);
  }

  static ChatMessage toolOutput(String callId, String toolName, String text, List<String> imageUrls) {
    return new ChatMessage("tool", text, imageUrls, List.of(), callId, toolName);
  }

  /** This assistant message with {@code call} added to its tool calls. */
  ChatMessage withCall(ToolCall call) {
    List<ToolCall> calls = new java.util.ArrayList<>(toolCalls);
    calls.add(call);
    return new ChatMessage(role, text, imageUrls, calls, toolCallId, toolName);
  }
}
