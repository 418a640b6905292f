package io.spillway.config;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * A config value that is one of a few words ({@code kind: openai}). The enum constant keeps the YAML
 * spelling; parsing is case-sensitive, and an unknown word is reported with the allowed ones.
 */
public interface Choice {
  /** How the value is written in YAML. */
  String spelling();

  /**
   * The constant spelled {@code value}; null for null. An unknown word is a problem of the key being
   * bound (a list element reports it on the list) and gives null, so the record takes its default.
   */
  static <E extends Enum<E> & Choice> E parse(Class<E> type, String value) {
    if (value == null) {
      return null;
    }
    for (E constant : type.getEnumConstants()) {
      if (constant.spelling().equals(value)) {
        return constant;
      }
    }
    ConfigProblems.Reporter at = ConfigProblems.at(type.getSimpleName());
    String key = at.path("").replaceFirst("\\[\\d+]$", "");
    at.raw("key '" + key + "': '" + value + "' is not one of " + spellings(type));
    return null;
  }

  /** The allowed spellings, comma-separated, in declaration order. */
  static <E extends Enum<E> & Choice> String spellings(Class<E> type) {
    return Arrays.stream(type.getEnumConstants()).map(Choice::spelling).collect(Collectors.joining(", "));
  }
}
