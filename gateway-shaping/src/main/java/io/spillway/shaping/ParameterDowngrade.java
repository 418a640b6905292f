package io.spillway.shaping;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import java.util.List;

/**
 * The downgrade step: {@code temperature} down to at most {@code maxTemperature}, {@code top_p} to at
 * most {@code maxTopP}, and the output limit ({@code max_tokens}, {@code max_completion_tokens},
 * {@code max_output_tokens}) times {@code maxTokensFactor}. Only values the request sets are changed
 * (reasoning models refuse a {@code temperature} they did not ask for), and only downwards.
 */
final class ParameterDowngrade {
  static final List<String> MAX_TOKEN_FIELDS = List.of("max_tokens", "max_completion_tokens", "max_output_tokens");

  private final ShapingConfig.DowngradeConfig config;

  ParameterDowngrade(ShapingConfig.DowngradeConfig config) {
    this.config = config;
  }

  /**
   * Tightens {@code body} (a copy the caller owns) and appends the names of what changed
   * ({@code temperature}, {@code top_p}, {@code max_tokens}) to {@code steps}; returns the output
   * tokens taken off the limit.
   */
  long apply(ObjectNode body, List<String> steps) {
    if (lower(body, "temperature", config.maxTemperature())) {
      steps.add("temperature");
    }
    if (lower(body, "top_p", config.maxTopP())) {
      steps.add("top_p");
    }
    long saved = 0;
    for (String field : MAX_TOKEN_FIELDS) {
      JsonNode value = body.get(field);
      if (value != null && value.canConvertToLong() && value.isIntegralNumber()) {
        long before = value.longValue();
        long after = Math.max(1, (long) Math.floor(before * config.maxTokensFactor()));
        if (after < before) {
          body.put(field, after);
          saved += before - after;
        }
      }
    }
    if (saved > 0) {
      steps.add("max_tokens");
    }
    return saved;
  }

  private static boolean lower(ObjectNode body, String field, double max) {
    JsonNode value = body.get(field);
    if (value != null && value.isNumber() && value.doubleValue() > max) {
      body.put(field, max);
      return true;
    }
    return false;
  }
}
