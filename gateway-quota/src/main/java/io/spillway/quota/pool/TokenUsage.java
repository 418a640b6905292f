package io.spillway.quota.pool;

/**
 * Tokens one request consumed, as its backend reported them (or, when it reported none, as
 * estimated).
 *
 * @param input prompt tokens, cached ones included
 * @param output completion tokens
 * @param cachedInput the part of {@code input} the provider served from its prompt cache (billed lower)
 * @param cacheWrites the part of {@code input} the provider wrote to its prompt cache (Anthropic's
 *     {@code cache_creation_input_tokens}, billed higher)
 */
public record TokenUsage(long input, long output, long cachedInput, long cacheWrites) {
  public TokenUsage(long input, long output) {
    this(input, output, 0, 0);
  }

  public TokenUsage(long input, long output, long cachedInput) {
    this(input, output, cachedInput, 0);
  }

  /** Input plus output, saturating at {@link Long#MAX_VALUE} instead of wrapping. */
  public long total() {
    return io.spillway.quota.store.Saturating.add(input, output);
  }
}
