package io.spillway.shaping;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The model step's table: requested model and scenario → a smaller model. First match wins.
 *
 * <ul>
 *   <li>{@code single-line}: {@code "\n"} is among the stop sequences, or the output limit is at most
 *       {@code scenarios.singleLineMaxTokens} (inline code completion);
 *   <li>{@code short-prompt}: the prompt has at most {@code scenarios.shortPromptTokens} tokens;
 *   <li>{@code any}: every request for that model.
 * </ul>
 */
final class ModelScenarios {
  private final List<ShapingConfig.ModelRule> rules;
  private final ShapingConfig.ScenarioConfig scenarios;

  ModelScenarios(List<ShapingConfig.ModelRule> rules, ShapingConfig.ScenarioConfig scenarios) {
    this.rules = rules;
    this.scenarios = scenarios;
  }

  /** The model to use instead of {@code model}, or null. {@code longPrompt} is asked only when needed. */
  String smallerModel(String model, ObjectNode body, BooleanSupplier longPrompt) {
    if (model == null) {
      return null;
    }
    for (ShapingConfig.ModelRule rule : rules) {
      if (!matches(rule.from(), model) || rule.to().equals(model)) {
        continue;
      }
      boolean applies = switch (rule.when()) {
        case SINGLE_LINE -> singleLine(body);
        case SHORT_PROMPT -> !longPrompt.getAsBoolean();
        case ANY -> true;
      };
      if (applies) {
        return rule.to();
      }
    }
    return null;
  }

  static boolean matches(String pattern, String model) {
    return pattern.endsWith("*") ? model.startsWith(pattern.substring(0, pattern.length() - 1)) : pattern.equals(model);
  }

  private boolean singleLine(ObjectNode body) {
    JsonNode stop = body.get("stop");
    if (stop != null && (stop.isTextual() && stop.textValue().equals("\n") || contains(stop, "\n"))) {
      return true;
    }
    for (String field : ParameterDowngrade.MAX_TOKEN_FIELDS) {
      JsonNode value = body.get(field);
      if (value != null && value.canConvertToLong() && value.longValue() <= scenarios.singleLineMaxTokens()) {
        return true;
      }
    }
    return false;
  }

  private static boolean contains(JsonNode array, String value) {
    if (array.isArray()) {
      for (JsonNode item : array) {
        if (item.isTextual() && item.textValue().equals(value)) {
          return true;
        }
      }
    }
    return false;
  }
}
