package io.spillway.quota.spend;

import io.spillway.config.SpendConfig;
import io.spillway.config.SpendConfig.PriceConfig;
import io.spillway.quota.pool.TokenUsage;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Prices per model, USD per million tokens. A model is found by its exact name, else by its name
 * without a dated snapshot suffix ({@code gpt-4o-mini-2024-07-18} is priced as {@code gpt-4o-mini},
 * {@code claude-sonnet-4-5-20250929} as {@code claude-sonnet-4-5}). Prompt tokens are priced in three
 * parts: read from the provider's prompt cache, written to it, and the rest.
 * Immutable.
 */
final class PriceTable {
  /** OpenAI's dated snapshots ({@code -2024-07-18}) and Anthropic's ({@code -20250929}). */
  private static final Pattern SNAPSHOT = Pattern.compile("-(\\d{4}-\\d{2}-\\d{2}|\\d{8})$");
  /** USD per million tokens × this = nano-dollars per token. */
  private static final double NANOS_PER_TOKEN_PER_USD_PER_MILLION = 1_000.0;

  private final Map<String, PriceConfig> prices;

  PriceTable(SpendConfig config) {
    this.prices = config.effectivePrices();
  }

  /** The name the table prices {@code model} under, or null when it has no price for it. */
  String pricedName(String model) {
    if (model == null) {
      return null;
    }
    if (prices.containsKey(model)) {
      return model;
    }
    String base = SNAPSHOT.matcher(model).replaceFirst("");
    return prices.containsKey(base) ? base : null;
  }

  /**
   * What {@code usage} of {@code pricedName} costs in nano-dollars (10⁻⁹ USD), rounded to the
   * nearest: exact for any price with at most three decimals per million tokens.
   */
  long costNanos(String pricedName, TokenUsage usage) {
    PriceConfig price = prices.get(pricedName);
    long cached = Math.max(0, Math.min(usage.cachedInput(), usage.input()));
    long written = Math.max(0, Math.min(usage.cacheWrites(), usage.input() - cached));
    long uncached = Math.max(0, usage.input() - cached - written);
    return Math.round((uncached * price.input() + cached * price.cachedInputOrInput()
        + written * price.cacheWriteOrInput()
        + Math.max(0, usage.output()) * price.output()) * NANOS_PER_TOKEN_PER_USD_PER_MILLION);
  }

  int size() {
    return prices.size();
  }
}
