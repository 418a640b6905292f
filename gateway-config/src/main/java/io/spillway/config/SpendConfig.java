package io.spillway.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What requests cost in money: a price per model and optional monthly budgets per team.
 *
 * <p>The shipped prices ({@link #DEFAULT_PRICES}) are OpenAI's published standard-tier prices
 * (https://openai.com/api/pricing) and Anthropic's (its pricing page) in USD per million tokens, last revised
 * {@value #DEFAULT_PRICES_AS_OF}; docs/spend.md gives each row's date and source.
 * Prices change: an operator overrides or adds a model under {@code spend.prices}, or drops the
 * shipped table with {@code spend.defaultPrices: false}. A request served by the local backend
 * costs nothing whatever its model.
 *
 * @param defaultPrices whether the shipped price table is used (entries in {@code prices} win)
 * @param prices USD per million tokens, per model name as the client or shaping names it
 * @param teams monthly budgets in USD per team
 */
public record SpendConfig(Boolean defaultPrices, Map<String, PriceConfig> prices, Map<String, TeamBudgetConfig> teams) {
  /**
   * The date the shipped price table was last revised: the GPT-5.1 and later and the Codex models
   * were added then; the older entries are as of 2025-08-07 (docs/spend.md gives each row's date).
   */
  public static final String DEFAULT_PRICES_AS_OF = "2026-12-02";

  /** OpenAI's standard-tier prices (revised {@link #DEFAULT_PRICES_AS_OF}), USD per million tokens. */
  public static final Map<String, PriceConfig> DEFAULT_PRICES = defaults();

  public static final SpendConfig DEFAULTS = new SpendConfig(null, null, null);

  public SpendConfig {
    defaultPrices = defaultPrices != null ? defaultPrices : true;
    prices = prices != null ? prices : Map.of();
    teams = teams != null ? teams : Map.of();
    ConfigProblems.Reporter at = ConfigProblems.at("spend");
    prices.forEach((model, price) -> {
      ConfigProblems.Reporter entry = at.below("prices." + model);
      if (price == null) {
        entry.problem("", "needs input and output (USD per million tokens)");
        return;
      }
      checkPrice(entry, "input", price.input(), true);
      checkPrice(entry, "output", price.output(), true);
      checkPrice(entry, "cachedInput", price.cachedInput(), false);
      checkPrice(entry, "cacheWrite", price.cacheWrite(), false);
    });
    teams.forEach((team, budget) -> {
      ConfigProblems.Reporter entry = at.below("teams." + team);
      if (budget == null || budget.monthlyUsd() == null) {
        entry.problem("monthlyUsd", "is required (USD per quota month)");
      } else if (!(budget.monthlyUsd() >= 0) || budget.monthlyUsd().isInfinite()) {
        entry.problem("monthlyUsd", "must be a finite amount of 0 or more");
      }
    });
    prices = copyWithoutEmpty(prices);
    teams = copyWithoutEmpty(teams);
  }

  /** A copy without entries left empty in YAML (they were reported above). */
  private static <V> Map<String, V> copyWithoutEmpty(Map<String, V> map) {
    Map<String, V> copy = new LinkedHashMap<>();
    map.forEach((key, value) -> {
      if (value != null) {
        copy.put(key, value);
      }
    });
    return Map.copyOf(copy);
  }

  /** The shipped table (unless turned off) with the configured entries over it. */
  public Map<String, PriceConfig> effectivePrices() {
    Map<String, PriceConfig> table = new LinkedHashMap<>();
    if (defaultPrices) {
      table.putAll(DEFAULT_PRICES);
    }
    table.putAll(prices);
    return Map.copyOf(table);
  }

  private static void checkPrice(ConfigProblems.Reporter at, String key, Double value, boolean required) {
    if (value == null) {
      if (required) {
        at.problem(key, "is required (USD per million tokens)");
      }
    } else if (!(value >= 0) || value.isInfinite()) {
      at.problem(key, "must be a finite price of 0 or more");
    }
  }

  /**
   * One model's price in USD per million tokens.
   *
   * @param input uncached prompt tokens
   * @param cachedInput prompt tokens the provider served from its prompt cache (Anthropic's cache
   *     reads); {@code input} when unset
   * @param output completion (output) tokens, reasoning tokens included
   * @param cacheWrite prompt tokens written to the provider's prompt cache (Anthropic's
   *     {@code cache_creation_input_tokens}, at the 5-minute rate); {@code input} when unset
   */
  public record PriceConfig(Double input, Double cachedInput, Double output, Double cacheWrite) {
    /** A price without a cache-write rate (OpenAI's models: no separate write price). */
    public PriceConfig(Double input, Double cachedInput, Double output) {
      this(input, cachedInput, output, null);
    }

    /** The cached-input price, falling back to the input price. */
    public double cachedInputOrInput() {
      return cachedInput != null ? cachedInput : input;
    }

    /** The cache-write price, falling back to the input price. */
    public double cacheWriteOrInput() {
      return cacheWrite != null ? cacheWrite : input;
    }
  }

  /** A team's money budget per quota month (the month of {@code quota.timezone}). */
  public record TeamBudgetConfig(Double monthlyUsd) {}

  private static Map<String, PriceConfig> defaults() {
    Map<String, PriceConfig> table = new LinkedHashMap<>();
    // Added 2026-12-02 (DEFAULT_PRICES_AS_OF): the current GPT-5 family and the Codex models, as
    // copies of OpenAI's pricing page quoted them that day (docs/spend.md names them and where they disagree).
    table.put("gpt-5.5", new PriceConfig(5.00, 0.50, 30.00));
    table.put("gpt-5.4", new PriceConfig(2.50, 0.25, 15.00));
    table.put("gpt-5.2", new PriceConfig(1.75, 0.175, 14.00));
    table.put("gpt-5.3-codex", new PriceConfig(1.75, 0.175, 14.00));
    table.put("gpt-5.2-codex", new PriceConfig(1.75, 0.175, 14.00));
    table.put("gpt-5.1", new PriceConfig(1.25, 0.125, 10.00));
    table.put("gpt-5.1-codex", new PriceConfig(1.25, 0.125, 10.00));
    table.put("gpt-5.1-codex-max", new PriceConfig(1.25, 0.125, 10.00));
    table.put("gpt-5-codex", new PriceConfig(1.25, 0.125, 10.00));
    // Added 2026-12-02 (DEFAULT_PRICES_AS_OF): Anthropic's Claude models, from Anthropic's published
    // pricing (platform.claude.com/docs/en/about-claude/pricing and the model pages): input, cache
    // read, output, 5-minute cache write. docs/spend.md gives each row's source.
    table.put("claude-fable-5-1", new PriceConfig(10.00, 0.25, 50.00, 12.50));
    table.put("claude-fable-5", new PriceConfig(10.00, 1.00, 50.00, 12.50));
    table.put("claude-opus-5-5", new PriceConfig(4.00, 0.20, 20.00, 5.00));
    table.put("claude-opus-5", new PriceConfig(5.00, 0.50, 25.00, 6.25));
    table.put("claude-opus-4-8", new PriceConfig(5.00, 0.50, 25.00, 6.25));
    table.put("claude-opus-4-7", new PriceConfig(5.00, 0.50, 25.00, 6.25));
    table.put("claude-opus-4-6", new PriceConfig(5.00, 0.50, 25.00, 6.25));
    table.put("claude-opus-4-5", new PriceConfig(5.00, 0.50, 25.00, 6.25));
    table.put("claude-opus-4-1", new PriceConfig(15.00, 1.50, 75.00, 18.75));
    table.put("claude-sonnet-5-5", new PriceConfig(2.00, 0.20, 10.00, 2.50));
    table.put("claude-sonnet-5", new PriceConfig(2.00, 0.20, 10.00, 2.50));
    table.put("claude-sonnet-4-6", new PriceConfig(3.00, 0.30, 15.00, 3.75));
    table.put("claude-sonnet-4-5", new PriceConfig(3.00, 0.30, 15.00, 3.75));
    table.put("claude-sonnet-4", new PriceConfig(3.00, 0.30, 15.00, 3.75));
    table.put("claude-haiku-4-5", new PriceConfig(1.00, 0.10, 5.00, 1.25));
    // As of 2025-08-07.
    table.put("gpt-5", new PriceConfig(1.25, 0.125, 10.00));
    table.put("gpt-5-mini", new PriceConfig(0.25, 0.025, 2.00));
    table.put("gpt-5-nano", new PriceConfig(0.05, 0.005, 0.40));
    table.put("gpt-4.1", new PriceConfig(2.00, 0.50, 8.00));
    table.put("gpt-4.1-mini", new PriceConfig(0.40, 0.10, 1.60));
    table.put("gpt-4.1-nano", new PriceConfig(0.10, 0.025, 0.40));
    table.put("gpt-4o", new PriceConfig(2.50, 1.25, 10.00));
    table.put("gpt-4o-mini", new PriceConfig(0.15, 0.075, 0.60));
    table.put("o3", new PriceConfig(2.00, 0.50, 8.00));
    table.put("o4-mini", new PriceConfig(1.10, 0.275, 4.40));
    return Map.copyOf(table);
  }
}
