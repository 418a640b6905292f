package io.spillway.quota.accounting;

// How the Messages API's prompt was counted before io.spillway.core.prompt.PromptWalk recorded it in
// the one walk (core's MessageTexts at commit cffd118), kept verbatim but for its name as the
// reference TokenEstimatorBefore and TokenEstimatorOwnWalk count Messages requests with.

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.tokens.TokenTally;
import java.util.Set;

/**
 * Counts the tokens a model reads of a Messages API request: the {@code system} text, every text,
 * {@code tool_use} input and {@code tool_result} of {@code messages}, and the {@code tools}
 * definitions. Images and documents (their base64 data) are not counted, thinking blocks' signatures
 * neither; the backend's reported usage settles the difference. Stateless.
 */
final class MessageTextsBefore {
  /** Tokens the Messages format adds around every message, as OpenAI's chat format does. */
  private static final int PER_MESSAGE = 3;
  private static final Set<String> NOT_READ = Set.of("type", "id", "tool_use_id", "source", "signature",
      "cache_control", "citations", "data");

  private MessageTextsBefore() {}

  /** The prompt tokens of {@code body} counted with {@code tally}. */
  public static long promptTokens(TokenTally tally, JsonNode body) {
    long tokens = text(tally, body.get("system"));
    for (JsonNode message : body.path("messages")) {
      tokens += PER_MESSAGE + text(tally, message.get("content"));
    }
    JsonNode tools = body.get("tools");
    if (tools != null && tools.isArray() && !tools.isEmpty()) {
      tokens += tally.count(Json.toString(tools));
    }
    return tokens;
  }

  private static long text(TokenTally tally, JsonNode node) {
    if (node == null || node.isNull()) {
      return 0;
    }
    if (node.isTextual()) {
      return tally.count(node.textValue());
    }
    long tokens = 0;
    if (node.isArray()) {
      for (JsonNode item : node) {
        tokens += text(tally, item);
      }
    } else if (node.isObject()) {
      if (node.has("input") && "tool_use".equals(Json.text(node, "type"))) {
        return tokens + tally.count(Json.toString(node.get("input"))) + text(tally, node.get("name"));
      }
      for (var field : node.properties()) {
        if (!NOT_READ.contains(field.getKey())) {
          tokens += text(tally, field.getValue());
        }
      }
    }
    return tokens;
  }
}
