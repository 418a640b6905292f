package io.spillway.local.responses;

/**
 * One tool call in the chat shape, in a conversation's history or in a local model's answer.
 *
 * @param callId the id that ties the call to its output ({@code call_id} in the Responses API)
 * @param localName the function name the local model knows the tool by (see {@link LocalTool})
 * @param arguments the arguments as a JSON text (an object)
 */
public record ToolCall(String callId, String localName, String arguments) {}
