package io.spillway.config;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/** The checks of the {@code shaping} section; called by {@link ConfigValidator}. */
final class ShapingConfigValidator {
  private static final Set<String> MODES = Set.of("never", "pressure", "always");
  private static final Set<String> TIERS = Set.of("gold", "silver", "bronze");
  private static final Set<String> SCENARIOS = Set.of("single-line", "short-prompt", "any");

  private ShapingConfigValidator() {}

  static void check(ShapingConfig s, List<String> problems) {
    if (!MODES.contains(s.degrade())) {
      problems.add("key 'shaping.degrade': '" + s.degrade() + "' is not one of never, pressure, always");
    }
    for (String tier : List.of("gold", "silver", "bronze")) {
      ShapingConfig.TierConfig t = s.tier(tier);
      String at = "key 'shaping.tiers." + tier + ".";
      if (t.degrade() != null && !MODES.contains(t.degrade())) {
        problems.add(at + "degrade': '" + t.degrade() + "' is not one of never, pressure, always");
      }
      atLeast(problems, at + "trimAboveTokens'", t.trimAboveTokens(), 0);
      atLeast(problems, at + "pressureTrimAboveTokens'", t.pressureTrimAboveTokens(), 0);
      if (t.keepLastLines() != null) {
        atLeast(problems, at + "keepLastLines'", t.keepLastLines(), 1);
      }
      if (t.keepDefinitions() != null) {
        atLeast(problems, at + "keepDefinitions'", t.keepDefinitions(), 0);
      }
      for (String step : t.steps()) {
        if (!ShapingConfig.STEPS.contains(step)) {
          problems.add(at + "steps': '" + step + "' is not one of " + String.join(", ", ShapingConfig.STEPS));
        }
      }
    }
    ShapingConfig.TrimConfig trim = s.trim();
    atLeast(problems, "key 'shaping.maxTokenizedChars'", s.maxTokenizedChars(), 1);
    atLeast(problems, "key 'shaping.trim.keepLastLines'", trim.keepLastLines(), 1);
    atLeast(problems, "key 'shaping.trim.keepDefinitions'", trim.keepDefinitions(), 0);
    atLeast(problems, "key 'shaping.trim.keepTraceDefinitions'", trim.keepTraceDefinitions(), 0);
    atLeast(problems, "key 'shaping.trim.maxDefinitionLines'", trim.maxDefinitionLines(), 1);
    if (trim.marker().isBlank() || trim.marker().indexOf('\n') >= 0 || trim.marker().indexOf('\r') >= 0) {
      problems.add("key 'shaping.trim.marker': must be one non-blank line");
    }
    ShapingConfig.DowngradeConfig d = s.downgrade();
    between(problems, "key 'shaping.downgrade.maxTemperature'", d.maxTemperature(), 0, 2);
    between(problems, "key 'shaping.downgrade.maxTopP'", d.maxTopP(), 0, 1);
    if (!(d.maxTokensFactor() > 0 && d.maxTokensFactor() <= 1)) {
      problems.add("key 'shaping.downgrade.maxTokensFactor': must be above 0 and at most 1");
    }
    ShapingConfig.StopConfig stop = s.stop();
    if (!MODES.contains(stop.apply())) {
      problems.add("key 'shaping.stop.apply': '" + stop.apply() + "' is not one of never, pressure, always");
    }
    for (String risky : stop.risky()) {
      if (risky == null || risky.isEmpty()) {
        problems.add("key 'shaping.stop.risky': stop sequences must not be empty");
      }
    }
    atLeast(problems, "key 'shaping.stop.maxTokens'", stop.maxTokens(), 1);
    ShapingConfig.SignalConfig signal = s.signal();
    atLeast(problems, "key 'shaping.signal.maxNestedLoops'", signal.maxNestedLoops(), 1);
    atLeast(problems, "key 'shaping.signal.base64MinChars'", signal.base64MinChars(), 16);
    atLeast(problems, "key 'shaping.signal.placeholderRepeats'", signal.placeholderRepeats(), 2);
    between(problems, "key 'shaping.signal.hotTemperature'", signal.hotTemperature(), 0, 2);
    atLeast(problems, "key 'shaping.signal.hotMaxTokens'", signal.hotMaxTokens(), 1);
    ShapingConfig.RiskConfig risk = s.risk();
    if (!(risk.threshold() > 0)) {
      problems.add("key 'shaping.risk.threshold': must be above 0");
    }
    between(problems, "key 'shaping.risk.weights.growth'", risk.weights().growth(), 0, 1);
    between(problems, "key 'shaping.risk.weights.latency'", risk.weights().latency(), 0, 1);
    between(problems, "key 'shaping.risk.weights.errors'", risk.weights().errors(), 0, 1);
    positive(problems, "key 'shaping.risk.latencyBaseline'", risk.latencyBaseline());
    positive(problems, "key 'shaping.risk.growthWindow'", risk.growthWindow());
    positive(problems, "key 'shaping.risk.window'", risk.window());
    if (risk.hold().isNegative()) {
      problems.add("key 'shaping.risk.hold': must not be negative");
    }
    atLeast(problems, "key 'shaping.risk.minRequests'", risk.minRequests(), 1);
    atLeast(problems, "key 'shaping.risk.minSamples'", risk.minSamples(), 1);
    for (String tier : risk.tiers()) {
      if (!TIERS.contains(tier)) {
        problems.add("key 'shaping.risk.tiers': '" + tier + "' is not one of gold, silver, bronze");
      }
    }
    ShapingConfig.LadderConfig ladder = s.ladder();
    step(problems, "risk", ladder.risk());
    step(problems, "softBand", ladder.softBand());
    step(problems, "breaker", ladder.breaker());
    step(problems, "always", ladder.always());
    for (int i = 0; i < s.models().size(); i++) {
      ShapingConfig.ModelRule rule = s.models().get(i);
      String at = "key 'shaping.models[" + i + "]";
      if (rule.from() == null || rule.from().isBlank() || rule.to() == null || rule.to().isBlank()) {
        problems.add(at + "': needs both 'from' and 'to'");
      }
      if (!SCENARIOS.contains(rule.when())) {
        problems.add(at + ".when': '" + rule.when() + "' is not one of single-line, short-prompt, any");
      }
    }
    atLeast(problems, "key 'shaping.scenarios.singleLineMaxTokens'", s.scenarios().singleLineMaxTokens(), 1);
    atLeast(problems, "key 'shaping.scenarios.shortPromptTokens'", s.scenarios().shortPromptTokens(), 1);
  }

  private static void step(List<String> problems, String key, String value) {
    if (!ShapingConfig.STEPS.contains(value)) {
      problems.add("key 'shaping.ladder." + key + "': '" + value + "' is not one of "
          + String.join(", ", ShapingConfig.STEPS));
    }
  }

  private static void atLeast(List<String> problems, String key, int value, int min) {
    if (value < min) {
      problems.add(key + ": must be at least " + min);
    }
  }

  private static void between(List<String> problems, String key, double value, double min, double max) {
    if (!(value >= min && value <= max)) {
      problems.add(key + ": must be between " + min + " and " + max);
    }
  }

  private static void positive(List<String> problems, String key, Duration value) {
    if (value.isZero() || value.isNegative()) {
      problems.add(key + ": must be longer than 0");
    }
  }
}
