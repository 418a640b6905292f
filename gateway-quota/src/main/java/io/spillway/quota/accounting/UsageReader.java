package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.quota.pool.TokenUsage;

/**
 * Reads the usage a backend reported, in OpenAI's two shapes: {@code usage.prompt_tokens} /
 * {@code completion_tokens} (chat/completions, completions) and {@code usage.input_tokens} /
 * {@code output_tokens} (Responses API).
 */
final class UsageReader {
  private UsageReader() {}

  /** The usage in {@code usage} (the object itself), or null when it holds none. */
  static TokenUsage fromUsage(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    JsonNode prompt = usage.get("prompt_tokens");
    JsonNode completion = usage.get("completion_tokens");
    if (prompt != null && prompt.canConvertToLong()) {
      return new TokenUsage(prompt.asLong(), completion != null ? completion.asLong() : 0,
          cached(usage.get("prompt_tokens_details"), prompt.asLong()));
    }
    JsonNode input = usage.get("input_tokens");
    JsonNode output = usage.get("output_tokens");
    if (input != null && input.canConvertToLong()) {
      return new TokenUsage(input.asLong(), output != null ? output.asLong() : 0,
          cached(usage.get("input_tokens_details"), input.asLong()));
    }
    JsonNode total = usage.get("total_tokens");
    if (total != null && total.canConvertToLong()) {
      return new TokenUsage(total.asLong(), 0);
    }
    return null;
  }

  /** Cached prompt tokens from a details object, within 0 and the prompt. */
  private static long cached(JsonNode details, long prompt) {
    JsonNode cached = details == null ? null : details.get("cached_tokens");
    if (cached == null || !cached.canConvertToLong()) {
      return 0;
    }
    return Math.max(0, Math.min(prompt, cached.asLong()));
  }

  /** The usage of a whole response body, or null. */
  static TokenUsage fromBody(JsonNode body) {
    return body == null ? null : fromUsage(body.get("usage"));
  }
}
