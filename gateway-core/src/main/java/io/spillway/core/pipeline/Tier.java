package io.spillway.core.pipeline;

import java.util.Locale;

/** Service tiers, in priority order: a lower ordinal is served first. */
public enum Tier {
  GOLD,
  SILVER,
  BRONZE;

  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Tier parse(String value) {
    for (Tier tier : values()) {
      if (tier.tag().equalsIgnoreCase(value)) {
        return tier;
      }
    }
    throw new IllegalArgumentException("unknown tier '" + value + "' (expected gold, silver or bronze)");
  }
}
