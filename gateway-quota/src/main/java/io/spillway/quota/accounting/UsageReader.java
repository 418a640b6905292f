package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.tokens.ReportedCount;
import io.spillway.quota.pool.TokenUsage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the usage a backend reported, in OpenAI's two shapes: {@code usage.prompt_tokens} /
 * {@code completion_tokens} (chat/completions, completions) and {@code usage.input_tokens} /
 * {@code output_tokens} (Responses API, and Anthropic's Messages API, whose {@code input_tokens}
 * leaves out the prompt-cache writes {@code cache_creation_input_tokens} and reads
 * {@code cache_read_input_tokens}: both are added to the input, and the reads are its cached part).
 *
 * <p>A report is trusted only as a sane token count ({@link ReportedCount}, the rule the access log
 * and metrics apply to what they show too): every count a non-negative JSON integer of at most
 * {@code quota.maxReportedTokens}. A count sent as a string, a fraction, a negative number or
 * one past the bound makes the whole report refused: logged, counted, and the request settled at its
 * estimate as if the backend had reported nothing. So a hostile or broken upstream cannot empty a
 * pool, wrap a sum negative, or be charged from text.
 */
final class UsageReader {
  private static final Logger log = LoggerFactory.getLogger(UsageReader.class);

  /** Where a refusal goes: counted by reason. */
  interface Refusals {
    void refused(String reason);
  }

  private final long max;
  private final Refusals refusals;

  UsageReader(long max, Refusals refusals) {
    this.max = max;
    this.refusals = refusals;
  }

  /** The usage in {@code usage} (the object itself), or null when it holds none or was refused. */
  TokenUsage fromUsage(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    try {
      if (present(usage.get("prompt_tokens"))) {
        long prompt = count(usage, "prompt_tokens");
        return new TokenUsage(prompt, countOrZero(usage, "completion_tokens"),
            cached(usage.get("prompt_tokens_details"), prompt));
      }
      if (present(usage.get("input_tokens"))) {
        long input = count(usage, "input_tokens");
        long cacheWrites = countOrZero(usage, "cache_creation_input_tokens");
        long cacheReads = countOrZero(usage, "cache_read_input_tokens");
        if (cacheWrites > 0 || cacheReads > 0) {
          return new TokenUsage(input + cacheWrites + cacheReads, countOrZero(usage, "output_tokens"), cacheReads,
              cacheWrites);
        }
        return new TokenUsage(input, countOrZero(usage, "output_tokens"),
            cached(usage.get("input_tokens_details"), input));
      }
      if (present(usage.get("total_tokens"))) {
        return new TokenUsage(count(usage, "total_tokens"), 0);
      }
      return null;
    } catch (Refused e) {
      refusals.refused(e.reason);
      log.warn("A backend reported usage that is not a sane token count ({} = {}: {}); settling at the estimate",
          e.field, e.value, e.reason);
      return null;
    }
  }

  /** The usage of a whole response body, or null. */
  TokenUsage fromBody(JsonNode body) {
    return body == null ? null : fromUsage(body.get("usage"));
  }

  private static boolean present(JsonNode node) {
    return ReportedCount.present(node);
  }

  private long countOrZero(JsonNode usage, String field) {
    return present(usage.get(field)) ? count(usage, field) : 0;
  }

  private long count(JsonNode usage, String field) {
    JsonNode node = usage.get(field);
    String reason = ReportedCount.refusal(node, max);
    if (reason == null) {
      return node.longValue();
    }
    throw new Refused(field, abbreviated(node), reason);
  }

  /** Cached prompt tokens from a details object, within 0 and the prompt (ignored unless an integer). */
  private static long cached(JsonNode details, long prompt) {
    JsonNode cached = details == null ? null : details.get("cached_tokens");
    if (cached == null || !cached.isIntegralNumber() || !cached.canConvertToLong()) {
      return 0;
    }
    return Math.max(0, Math.min(prompt, cached.longValue()));
  }

  private static String abbreviated(JsonNode node) {
    String text = node.toString();
    return text.length() > 40 ? text.substring(0, 40) + "…" : text;
  }

  /** A count that is not one; carries no stack trace. */
  private static final class Refused extends RuntimeException {
    final String field;
    final String value;
    final String reason;

    Refused(String field, String value, String reason) {
      super(reason, null, false, false);
      this.field = field;
      this.value = value;
      this.reason = reason;
    }
  }
}
