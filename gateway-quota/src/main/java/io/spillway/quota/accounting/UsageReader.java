package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.quota.pool.TokenUsage;

/**
 * Reads the usage a backend reported, in OpenAI's two shapes: {@code usage.prompt_tokens} /
 * {@code completion_tokens} (chat/completions, completions) and {@code usage.input_tokens} /
 * {@code output_tokens} (Responses API, and Anthropic's Messages API, whose
 * {@code input_tokens} leaves out the prompt-cache writes {@code cache_creation_input_tokens} and
 * reads {@code cache_read_input_tokens}: both are added to the input, and the reads are its cached part).
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
      long cacheWrites = count(usage.get("cache_creation_input_tokens"));
      long cacheReads = count(usage.get("cache_read_input_tokens"));
      if (cacheWrites > 0 || cacheReads > 0) {
        return new TokenUsage(input.asLong() + cacheWrites + cacheReads, output != null ? output.asLong() : 0,
            cacheReads);
      }
      return new TokenUsage(input.asLong(), output != null ? output.asLong() : 0,
          cached(usage.get("input_tokens_details"), input.asLong()));
    }
    JsonNode total = usage.get("total_tokens");
    if (total != null && total.canConvertToLong()) {
      return new TokenUsage(total.asLong(), 0);
    }
    return null;
  }

  private static long count(JsonNode value) {
    return value != null && value.canConvertToLong() ? Math.max(0, value.asLong()) : 0;
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
