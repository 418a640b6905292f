package io.spillway.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Route;
import java.util.Set;

/**
 * The checks {@link RequestParser} makes of an Anthropic Messages API body ({@code /v1/messages}
 * and {@code /v1/messages/count_tokens}): the shape every stage that reads it relies on (token
 * estimate, trimming, the local translation). {@code messages} is an array of objects with role
 * {@code user}, {@code assistant} or {@code system} and a string or array {@code content} whose blocks each name
 * their {@code type}; {@code system} is a string or an array of blocks; a model call names its
 * {@code max_tokens}, as Anthropic requires. Everything else passes through unchecked.
 */
final class AnthropicRequests {
  /** Claude Code also sends {@code system} messages inside {@code messages} (its environment notes). */
  private static final Set<String> ROLES = Set.of("user", "assistant", "system");

  private AnthropicRequests() {}

  static void check(Route route, ObjectNode body) {
    JsonNode messages = body.get("messages");
    if (messages == null || messages.isNull()) {
      throw ErrorKind.MISSING_PARAMETER.exception("messages: Field required", "messages");
    }
    if (!messages.isArray()) {
      throw GatewayException.invalid("messages: Input should be a valid list", "messages");
    }
    for (int i = 0; i < messages.size(); i++) {
      checkMessage(messages.get(i), "messages." + i);
    }
    JsonNode system = body.get("system");
    if (system != null && !system.isNull()) {
      if (!system.isTextual() && !system.isArray()) {
        throw GatewayException.invalid("system: Input should be a valid string or a list of text blocks", "system");
      }
      checkBlocks(system, "system");
    }
    if (route == Route.MESSAGES) {
      JsonNode maxTokens = body.get("max_tokens");
      if (maxTokens == null || maxTokens.isNull()) {
        throw ErrorKind.MISSING_PARAMETER.exception("max_tokens: Field required", "max_tokens");
      }
    }
    JsonNode tools = body.get("tools");
    if (tools != null && !tools.isNull() && !tools.isArray()) {
      throw GatewayException.invalid("tools: Input should be a valid list", "tools");
    }
  }

  private static void checkMessage(JsonNode message, String at) {
    if (!message.isObject()) {
      throw GatewayException.invalid(at + ": Input should be a valid dictionary", at);
    }
    JsonNode role = message.get("role");
    if (role == null || !role.isTextual() || !ROLES.contains(role.textValue())) {
      throw GatewayException.invalid(at + ".role: Input should be 'user', 'assistant' or 'system'", at + ".role");
    }
    JsonNode content = message.get("content");
    if (content == null || content.isNull()) {
      throw ErrorKind.MISSING_PARAMETER.exception(at + ".content: Field required", at + ".content");
    }
    if (!content.isTextual() && !content.isArray()) {
      throw GatewayException.invalid(at + ".content: Input should be a valid string or a list of blocks",
          at + ".content");
    }
    checkBlocks(content, at + ".content");
  }

  private static void checkBlocks(JsonNode blocks, String at) {
    if (!blocks.isArray()) {
      return;
    }
    for (int i = 0; i < blocks.size(); i++) {
      JsonNode block = blocks.get(i);
      if (!block.isObject() || !block.path("type").isTextual()) {
        throw GatewayException.invalid(at + "." + i + ": each block must be an object with a string 'type'",
            at + "." + i);
      }
    }
  }
}
