package io.spillway.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.KeyDeserializer;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.stream.Collectors;

/** Per-tier sections ({@code quota.tiers.gold}): a map from {@link Tier} with every tier present. */
final class TierMaps {
  private TierMaps() {}

  /**
   * Every tier's entry: the given one merged over the tier's default ({@code merge(given, default)}),
   * or the default alone. A null key (an unknown tier, already reported) is skipped.
   */
  static <T> Map<Tier, T> withDefaults(Map<Tier, T> given, Map<Tier, T> defaults, BinaryOperator<T> merge) {
    Map<Tier, T> all = new EnumMap<>(defaults);
    if (given != null) {
      given.forEach((tier, entry) -> {
        if (tier != null && entry != null) {
          all.put(tier, merge.apply(entry, defaults.get(tier)));
        }
      });
    }
    return Collections.unmodifiableMap(all);
  }

  /** Reads a tier value as YAML spells it ({@code gold}, case-sensitive); reports any other word. */
  static final class Values extends JsonDeserializer<Tier> {
    @Override
    public Tier deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      String value = p.getValueAsString();
      for (Tier tier : Tier.values()) {
        if (tier.tag().equals(value)) {
          return tier;
        }
      }
      String key = BindingPaths.pathOf(p).replaceFirst("\\[\\d+]$", "");
      ConfigProblems.at("").raw("key '" + key + "': " + notATier(value));
      return null;
    }
  }

  private static final java.util.List<String> TAG_LIST = Arrays.stream(Tier.values()).map(Tier::tag).toList();
  private static final String TAGS = String.join(", ", TAG_LIST);

  /** A tier value that is none of the tiers, as written ({@code Gold}): choices are case-sensitive. */
  static String notATier(String value) {
    return "'" + value + "' is not one of " + TAGS + Suggestions.didYouMean(value, TAG_LIST, "; ");
  }

  /** The tier spelled exactly {@code value}, or null. */
  static Tier exactly(String value) {
    for (Tier tier : Tier.values()) {
      if (tier.tag().equals(value)) {
        return tier;
      }
    }
    return null;
  }

  /** Reads a tier key as YAML spells it ({@code gold}, case-sensitive); reports any other word. */
  static final class Keys extends KeyDeserializer {
    @Override
    public Object deserializeKey(String key, DeserializationContext ctxt) {
      for (Tier tier : Tier.values()) {
        if (tier.tag().equals(key)) {
          return tier;
        }
      }
      ConfigProblems.at("").raw("unknown key '" + BindingPaths.pathOf(ctxt.getParser()) + "'"
          + Suggestions.knownKeys(key, TAG_LIST));
      return null;
    }
  }
}
