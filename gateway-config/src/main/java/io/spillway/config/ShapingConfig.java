package io.spillway.config;

import java.time.Duration;
import java.util.List;

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
    String degrade,
    TiersConfig tiers,
    TrimConfig trim,
    DowngradeConfig downgrade,
    StopConfig stop,
    SignalConfig signal,
    RiskConfig risk,
    LadderConfig ladder,
    List<ModelRule> models,
    ScenarioConfig scenarios,
    Integer maxTokenizedChars) {

  /** The ladder's steps, in order. (Declared first: the defaults below use it.) */
  public static final List<String> STEPS = List.of("trim", "downgrade", "model", "local");

  public static final ShapingConfig DEFAULTS =
      new ShapingConfig(null, null, null, null, null, null, null, null, null, null, null);

  public ShapingConfig {
    degrade = degrade != null ? degrade : "pressure";
    // Not TiersConfig.DEFAULTS: its initialisation reads STEPS, which may be running this very line.
    tiers = tiers != null ? tiers : new TiersConfig(null, null, null);
    trim = trim != null ? trim : TrimConfig.DEFAULTS;
    downgrade = downgrade != null ? downgrade : DowngradeConfig.DEFAULTS;
    stop = stop != null ? stop : StopConfig.DEFAULTS;
    signal = signal != null ? signal : SignalConfig.DEFAULTS;
    risk = risk != null ? risk : RiskConfig.DEFAULTS;
    ladder = ladder != null ? ladder : LadderConfig.DEFAULTS;
    models = models != null
        ? List.copyOf(models)
        : List.of(new ModelRule("gpt-4o", "gpt-4o-mini", "single-line"),
            new ModelRule("gpt-4.1", "gpt-4.1-mini", "single-line"));
    scenarios = scenarios != null ? scenarios : ScenarioConfig.DEFAULTS;
    maxTokenizedChars = maxTokenizedChars != null ? maxTokenizedChars : 131_072;
  }

  /** The settings of {@code tier} ({@code gold}, {@code silver} or {@code bronze}). */
  public TierConfig tier(String tier) {
    return switch (tier) {
      case "gold" -> tiers.gold();
      case "silver" -> tiers.silver();
      case "bronze" -> tiers.bronze();
      default -> throw new IllegalArgumentException("unknown tier " + tier);
    };
  }

  public record TiersConfig(TierConfig gold, TierConfig silver, TierConfig bronze) {
    public static final TiersConfig DEFAULTS = new TiersConfig(null, null, null);

    public TiersConfig {
      gold = TierConfig.merge(gold, new TierConfig("never", 0, 1000, null, null, STEPS));
      silver = TierConfig.merge(silver, new TierConfig(null, 64_000, 1000, null, null, STEPS));
      bronze = TierConfig.merge(bronze, new TierConfig(null, 32_000, 1000, null, null, STEPS));
    }
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
      String degrade,
      Integer trimAboveTokens,
      Integer pressureTrimAboveTokens,
      Integer keepLastLines,
      Integer keepDefinitions,
      List<String> steps) {

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
          given.steps != null ? List.copyOf(given.steps) : defaults.steps);
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
  public record StopConfig(String apply, List<String> risky, Integer maxTokens) {
    public static final StopConfig DEFAULTS = new StopConfig(null, null, null);

    public StopConfig {
      apply = apply != null ? apply : "pressure";
      risky = risky != null ? List.copyOf(risky) : List.of("\n\n");
      maxTokens = maxTokens != null ? maxTokens : 512;
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
   */
  public record SignalConfig(
      Boolean enabled,
      Integer maxNestedLoops,
      Integer base64MinChars,
      Integer placeholderRepeats,
      Double hotTemperature,
      Integer hotMaxTokens) {
    public static final SignalConfig DEFAULTS = new SignalConfig(null, null, null, null, null, null);

    public SignalConfig {
      enabled = enabled != null ? enabled : true;
      maxNestedLoops = maxNestedLoops != null ? maxNestedLoops : 3;
      base64MinChars = base64MinChars != null ? base64MinChars : 1024;
      placeholderRepeats = placeholderRepeats != null ? placeholderRepeats : 5;
      hotTemperature = hotTemperature != null ? hotTemperature : 0.95;
      hotMaxTokens = hotMaxTokens != null ? hotMaxTokens : 2048;
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
      List<String> tiers) {
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
      tiers = tiers != null ? List.copyOf(tiers) : List.of("silver", "bronze");
    }
  }

  public record WeightsConfig(Double growth, Double latency, Double errors) {
    public static final WeightsConfig DEFAULTS = new WeightsConfig(null, null, null);

    public WeightsConfig {
      growth = growth != null ? growth : 0.4;
      latency = latency != null ? latency : 0.3;
      errors = errors != null ? errors : 0.3;
    }
  }

  /**
   * The deepest ladder step ({@code trim}, {@code downgrade}, {@code model}, {@code local}) that each
   * kind of pressure reaches; every step before it applies too.
   */
  public record LadderConfig(String risk, String softBand, String breaker, String always) {
    public static final LadderConfig DEFAULTS = new LadderConfig(null, null, null, null);

    public LadderConfig {
      risk = risk != null ? risk : "model";
      softBand = softBand != null ? softBand : "model";
      breaker = breaker != null ? breaker : "local";
      always = always != null ? always : "model";
    }
  }

  /**
   * One row of the model-scenario table.
   *
   * @param from the requested model; a trailing {@code *} matches any model with that prefix
   * @param to the smaller model used instead
   * @param when {@code single-line}, {@code short-prompt} or {@code any}
   */
  public record ModelRule(String from, String to, String when) {
    public ModelRule {
      when = when != null ? when : "any";
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
    }
  }
}
