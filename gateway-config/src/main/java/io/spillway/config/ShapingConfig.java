package io.spillway.config;

import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Request shaping: context trimming, parameter downgrading, stop rewriting, signal scoring, the
 * degradation ladder and the capacity risk index. Every number here is a default; see
 * {@code docs/shaping.md} for what each part does.
 *
 * @param degrade {@code never}, {@code pressure} (when the breaker is open, a pool is past its soft
 *     band, or the risk index is high) or {@code always}; a tier's own {@code degrade} overrides it
 * @param tiers per-tier settings (gold is never degraded unless configured)
 * @param trim what the context trimmer keeps
 * @param downgrade how far sampling parameters are tightened
 * @param stop which stop sequences are cut by the gateway instead of upstream
 * @param signal when a request counts as low-signal
 * @param risk the capacity risk index
 * @param ladder the deepest ladder step each kind of pressure reaches
 * @param models the model-scenario table of the ladder's {@code model} step, first match wins
 * @param scenarios the thresholds that define the scenarios named in {@code models}
 * @param maxTokenizedChars the most characters of one request that shaping, and the quota
 *     estimate, each hand to the tokenizer; the rest of a longer prompt is estimated from its length
 */
public record ShapingConfig(
    Mode degrade,
    Map<Tier, TierConfig> tiers,
    TrimConfig trim,
    DowngradeConfig downgrade,
    StopConfig stop,
    SignalConfig signal,
    RiskConfig risk,
    LadderConfig ladder,
    List<ModelRule> models,
    ScenarioConfig scenarios,
    Integer maxTokenizedChars) {

  public static final ShapingConfig DEFAULTS =
      new ShapingConfig(null, null, null, null, null, null, null, null, null, null, null);

  public ShapingConfig {
    degrade = degrade != null ? degrade : Mode.PRESSURE;
    tiers = TierMaps.withDefaults(tiers, TierConfig.defaults(), TierConfig::merge);
    trim = trim != null ? trim : TrimConfig.DEFAULTS;
    downgrade = downgrade != null ? downgrade : DowngradeConfig.DEFAULTS;
    stop = stop != null ? stop : StopConfig.DEFAULTS;
    signal = signal != null ? signal : SignalConfig.DEFAULTS;
    risk = risk != null ? risk : RiskConfig.DEFAULTS;
    ladder = ladder != null ? ladder : LadderConfig.DEFAULTS;
    models = models != null
        ? List.copyOf(models)
        : List.of(new ModelRule("gpt-4o", "gpt-4o-mini", Scenario.SINGLE_LINE),
            new ModelRule("gpt-4.1", "gpt-4.1-mini", Scenario.SINGLE_LINE));
    scenarios = scenarios != null ? scenarios : ScenarioConfig.DEFAULTS;
    maxTokenizedChars = maxTokenizedChars != null ? maxTokenizedChars : 131_072;
    ConfigProblems.Reporter at = ConfigProblems.at("shaping");
    tiers.forEach((tier, settings) -> settings.check(at.below("tiers." + tier.tag())));
    at.atLeast("maxTokenizedChars", maxTokenizedChars, 1);
  }

  /** The settings of {@code tier}. */
  public TierConfig tier(Tier tier) {
    return tiers.get(tier);
  }

  /** When shaping applies: {@code never}, {@code pressure} or {@code always}. */
  public enum Mode implements Choice {
    NEVER,
    PRESSURE,
    ALWAYS;
  }

  /** The ladder's steps, in order: each is taken together with every step before it. */
  public enum Step implements Choice {
    TRIM,
    DOWNGRADE,
    MODEL,
    LOCAL;
  }

  /** The scenarios of the model-scenario table. */
  public enum Scenario implements Choice {
    SINGLE_LINE,
    SHORT_PROMPT,
    ANY;
  }

  /** Unknown words were reported while binding and left as nulls; they are dropped here. */
  private static <T> List<T> known(List<T> values) {
    return values.stream().filter(Objects::nonNull).toList();
  }

  /**
   * One tier's shaping.
   *
   * @param degrade overrides {@code shaping.degrade} for this tier; null inherits it
   * @param trimAboveTokens trim code context of requests larger than this even without pressure
   *     ({@code 0}: never without pressure)
   * @param pressureTrimAboveTokens under pressure, trim requests larger than this
   * @param keepLastLines overrides {@code shaping.trim.keepLastLines}; null inherits it
   * @param keepDefinitions overrides {@code shaping.trim.keepDefinitions}; null inherits it
   * @param steps the ladder steps this tier may take ({@code trim}, {@code downgrade},
   *     {@code model}, {@code local})
   */
  public record TierConfig(
      Mode degrade,
      Integer trimAboveTokens,
      Integer pressureTrimAboveTokens,
      Integer keepLastLines,
      Integer keepDefinitions,
      List<Step> steps) {

    public TierConfig {
      steps = steps != null ? known(steps) : null;
    }

    /** Each tier's defaults: gold is never degraded, every tier may take every step. */
    static Map<Tier, TierConfig> defaults() {
      List<Step> all = List.of(Step.values());
      return Map.of(
          Tier.GOLD, new TierConfig(Mode.NEVER, 0, 1000, null, null, all),
          Tier.SILVER, new TierConfig(null, 64_000, 1000, null, null, all),
          Tier.BRONZE, new TierConfig(null, 32_000, 1000, null, null, all));
    }

    /** Checks a tier's merged settings under its key ({@code shaping.tiers.gold}). */
    void check(ConfigProblems.Reporter at) {
      at.atLeast("trimAboveTokens", trimAboveTokens, 0);
      at.atLeast("pressureTrimAboveTokens", pressureTrimAboveTokens, 0);
      if (keepLastLines != null) {
        at.atLeast("keepLastLines", keepLastLines, 1);
      }
      if (keepDefinitions != null) {
        at.atLeast("keepDefinitions", keepDefinitions, 0);
      }
    }

    static TierConfig merge(TierConfig given, TierConfig defaults) {
      if (given == null) {
        return defaults;
      }
      return new TierConfig(
          given.degrade != null ? given.degrade : defaults.degrade,
          given.trimAboveTokens != null ? given.trimAboveTokens : defaults.trimAboveTokens,
          given.pressureTrimAboveTokens != null ? given.pressureTrimAboveTokens : defaults.pressureTrimAboveTokens,
          given.keepLastLines != null ? given.keepLastLines : defaults.keepLastLines,
          given.keepDefinitions != null ? given.keepDefinitions : defaults.keepDefinitions,
          given.steps != null ? given.steps : defaults.steps);
    }
  }

  /**
   * What the context trimmer keeps of an oversized code block.
   *
   * @param keepLastLines the last code lines of each block
   * @param keepDefinitions the last function/method/class definitions of each block
   * @param keepTraceDefinitions further definitions named in a stack trace (the failing functions)
   * @param maxDefinitionLines code lines kept of one definition, from its header
   * @param marker the one line that marks each cut
   * @param roles chat/Responses message roles whose content is trimmed
   */
  public record TrimConfig(
      Integer keepLastLines,
      Integer keepDefinitions,
      Integer keepTraceDefinitions,
      Integer maxDefinitionLines,
      String marker,
      List<String> roles) {
    public static final TrimConfig DEFAULTS = new TrimConfig(null, null, null, null, null, null);

    public TrimConfig {
      keepLastLines = keepLastLines != null ? keepLastLines : 50;
      keepDefinitions = keepDefinitions != null ? keepDefinitions : 3;
      keepTraceDefinitions = keepTraceDefinitions != null ? keepTraceDefinitions : 3;
      maxDefinitionLines = maxDefinitionLines != null ? maxDefinitionLines : 120;
      marker = marker != null ? marker : "... (context trimmed)";
      roles = roles != null ? List.copyOf(roles) : List.of("user", "assistant", "tool");
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.trim");
      at.atLeast("keepLastLines", keepLastLines, 1);
      at.atLeast("keepDefinitions", keepDefinitions, 0);
      at.atLeast("keepTraceDefinitions", keepTraceDefinitions, 0);
      at.atLeast("maxDefinitionLines", maxDefinitionLines, 1);
      if (marker.isBlank() || marker.indexOf('\n') >= 0 || marker.indexOf('\r') >= 0) {
        at.problem("marker", "must be one non-blank line");
      }
    }
  }

  /**
   * The downgrade step: sampling parameters are tightened, never loosened.
   *
   * @param maxTemperature {@code temperature} is lowered to at most this
   * @param maxTopP {@code top_p} is lowered to at most this
   * @param maxTokensFactor {@code max_tokens}, {@code max_completion_tokens} and
   *     {@code max_output_tokens} are multiplied by this
   */
  public record DowngradeConfig(Double maxTemperature, Double maxTopP, Double maxTokensFactor) {
    public static final DowngradeConfig DEFAULTS = new DowngradeConfig(null, null, null);

    public DowngradeConfig {
      maxTemperature = maxTemperature != null ? maxTemperature : 0.3;
      maxTopP = maxTopP != null ? maxTopP : 0.7;
      maxTokensFactor = maxTokensFactor != null ? maxTokensFactor : 0.7;
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.downgrade");
      at.between("maxTemperature", maxTemperature, 0, 2);
      at.between("maxTopP", maxTopP, 0, 1);
      if (!(maxTokensFactor > 0 && maxTokensFactor <= 1)) {
        at.problem("maxTokensFactor", "must be above 0 and at most 1");
      }
    }
  }

  /**
   * Stop rewriting: risky stop sequences are removed from the upstream request, the output length is
   * capped instead, and the gateway cuts the output at the first match itself.
   *
   * @param apply {@code pressure} (with the ladder), {@code always} or {@code never}
   * @param risky the stop sequences to rewrite
   * @param maxTokens the output cap set in their place
   */
  public record StopConfig(Mode apply, List<String> risky, Integer maxTokens) {
    public static final StopConfig DEFAULTS = new StopConfig(null, null, null);

    public StopConfig {
      apply = apply != null ? apply : Mode.PRESSURE;
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.stop");
      if (risky != null && risky.stream().anyMatch(stop -> stop == null || stop.isEmpty())) {
        at.problem("risky", "stop sequences must not be empty");
        risky = risky.stream().filter(stop -> stop != null && !stop.isEmpty()).toList();
      }
      risky = risky != null ? List.copyOf(risky) : List.of("\n\n");
      maxTokens = maxTokens != null ? maxTokens : 512;
      at.atLeast("maxTokens", maxTokens, 1);
    }
  }

  /**
   * Signal scoring: a low-signal request waits behind everyone else.
   *
   * @param maxNestedLoops more loops nested than this, none with a break, is low-signal
   * @param base64MinChars a base64-looking run longer than this is low-signal
   * @param placeholderRepeats this many identical placeholder lines ({@code // TODO: implement}) is low-signal
   * @param hotTemperature with {@code hotMaxTokens}: a temperature above this ...
   * @param hotMaxTokens ... with an output limit above this is low-signal
   * @param memoEntries how many texts' scan results are remembered (keyed by a hash of the text, never
   *     the text), so the prefix an agent sends again on every turn is not scanned again; 0 scans
   *     every text every time
   */
  public record SignalConfig(
      Boolean enabled,
      Integer maxNestedLoops,
      Integer base64MinChars,
      Integer placeholderRepeats,
      Double hotTemperature,
      Integer hotMaxTokens,
      Integer memoEntries) {
    public static final SignalConfig DEFAULTS = new SignalConfig(null, null, null, null, null, null, null);

    /** The thresholds alone, with the default memo. */
    public SignalConfig(Boolean enabled, Integer maxNestedLoops, Integer base64MinChars, Integer placeholderRepeats,
        Double hotTemperature, Integer hotMaxTokens) {
      this(enabled, maxNestedLoops, base64MinChars, placeholderRepeats, hotTemperature, hotMaxTokens, null);
    }

    public SignalConfig {
      enabled = enabled != null ? enabled : true;
      maxNestedLoops = maxNestedLoops != null ? maxNestedLoops : 3;
      base64MinChars = base64MinChars != null ? base64MinChars : 1024;
      placeholderRepeats = placeholderRepeats != null ? placeholderRepeats : 5;
      hotTemperature = hotTemperature != null ? hotTemperature : 0.95;
      hotMaxTokens = hotMaxTokens != null ? hotMaxTokens : 2048;
      memoEntries = memoEntries != null ? memoEntries : 65_536;
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.signal");
      at.atLeast("maxNestedLoops", maxNestedLoops, 1);
      at.atLeast("base64MinChars", base64MinChars, 16);
      at.atLeast("placeholderRepeats", placeholderRepeats, 2);
      at.between("hotTemperature", hotTemperature, 0, 2);
      at.atLeast("hotMaxTokens", hotMaxTokens, 1);
      at.atLeast("memoEntries", memoEntries, 0);
    }
  }

  /**
   * The capacity risk index: {@code growth × request growth + latency × latency increase + errors ×
   * error rate}, each part between 0 and 1.
   *
   * @param threshold above this the ladder turns on for {@code tiers}
   * @param hold ... and stays on this long
   * @param latencyBaseline the latency that counts as normal
   * @param growthWindow request growth compares this much time with the same time before it
   * @param window latency and error rate are measured over this much time
   * @param minRequests request growth is relative to at least this many requests
   * @param minSamples latency and error rate count only with at least this many requests in the window
   * @param tiers the tiers the index degrades
   */
  public record RiskConfig(
      Boolean enabled,
      Double threshold,
      Duration hold,
      WeightsConfig weights,
      Duration latencyBaseline,
      Duration growthWindow,
      Duration window,
      Integer minRequests,
      Integer minSamples,
      List<Tier> tiers) {
    public static final RiskConfig DEFAULTS = new RiskConfig(null, null, null, null, null, null, null, null, null, null);

    public RiskConfig {
      enabled = enabled != null ? enabled : true;
      threshold = threshold != null ? threshold : 0.65;
      hold = hold != null ? hold : Duration.ofMinutes(15);
      weights = weights != null ? weights : WeightsConfig.DEFAULTS;
      latencyBaseline = latencyBaseline != null ? latencyBaseline : Duration.ofMillis(800);
      growthWindow = growthWindow != null ? growthWindow : Duration.ofHours(1);
      window = window != null ? window : Duration.ofMinutes(5);
      minRequests = minRequests != null ? minRequests : 50;
      minSamples = minSamples != null ? minSamples : 20;
      tiers = tiers != null ? known(tiers) : List.of(Tier.SILVER, Tier.BRONZE);
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.risk");
      if (!(threshold > 0)) {
        at.problem("threshold", "must be above 0");
      }
      at.positive("latencyBaseline", latencyBaseline, "must be longer than 0");
      at.positive("growthWindow", growthWindow, "must be longer than 0");
      at.positive("window", window, "must be longer than 0");
      if (hold.isNegative()) {
        at.problem("hold", "must not be negative");
      }
      at.atLeast("minRequests", minRequests, 1);
      at.atLeast("minSamples", minSamples, 1);
    }
  }

  public record WeightsConfig(Double growth, Double latency, Double errors) {
    public static final WeightsConfig DEFAULTS = new WeightsConfig(null, null, null);

    public WeightsConfig {
      growth = growth != null ? growth : 0.4;
      latency = latency != null ? latency : 0.3;
      errors = errors != null ? errors : 0.3;
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.risk.weights");
      at.between("growth", growth, 0, 1);
      at.between("latency", latency, 0, 1);
      at.between("errors", errors, 0, 1);
    }
  }

  /**
   * The deepest ladder step ({@code trim}, {@code downgrade}, {@code model}, {@code local}) that each
   * kind of pressure reaches; every step before it applies too.
   */
  public record LadderConfig(Step risk, Step softBand, Step breaker, Step always) {
    public static final LadderConfig DEFAULTS = new LadderConfig(null, null, null, null);

    public LadderConfig {
      risk = risk != null ? risk : Step.MODEL;
      softBand = softBand != null ? softBand : Step.MODEL;
      breaker = breaker != null ? breaker : Step.LOCAL;
      always = always != null ? always : Step.MODEL;
    }
  }

  /**
   * One row of the model-scenario table.
   *
   * @param from the requested model; a trailing {@code *} matches any model with that prefix
   * @param to the smaller model used instead
   * @param when {@code single-line}, {@code short-prompt} or {@code any}
   */
  public record ModelRule(String from, String to, Scenario when) {
    public ModelRule {
      when = when != null ? when : Scenario.ANY;
      if (from == null || from.isBlank() || to == null || to.isBlank()) {
        ConfigProblems.at("shaping.models[]").problem("", "needs both 'from' and 'to'");
      }
    }
  }

  /**
   * @param singleLineMaxTokens a request with {@code "\n"} among its stops, or an output limit of at
   *     most this, is a single-line completion
   * @param shortPromptTokens a prompt of at most this many tokens is short
   */
  public record ScenarioConfig(Integer singleLineMaxTokens, Integer shortPromptTokens) {
    public static final ScenarioConfig DEFAULTS = new ScenarioConfig(null, null);

    public ScenarioConfig {
      singleLineMaxTokens = singleLineMaxTokens != null ? singleLineMaxTokens : 64;
      shortPromptTokens = shortPromptTokens != null ? shortPromptTokens : 2000;
      ConfigProblems.Reporter at = ConfigProblems.at("shaping.scenarios");
      at.atLeast("singleLineMaxTokens", singleLineMaxTokens, 1);
      at.atLeast("shortPromptTokens", shortPromptTokens, 1);
    }
  }
}
