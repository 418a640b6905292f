package io.spillway.quota.admission;

import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Tier;

/** The order of the waiting area: a lower ordinal is served first. */
enum WaitClass {
  GOLD("gold"),
  SILVER("silver"),
  BRONZE("bronze"),
  /** Requests scored low-signal by shaping, whatever their tier. */
  LOW_SIGNAL("low_signal");

  private final String tag;

  WaitClass(String tag) {
    this.tag = tag;
  }

  String tag() {
    return tag;
  }

  /** The class of {@code request}; a request without a caller waits like bronze. */
  static WaitClass of(GatewayRequest request) {
    if (Boolean.TRUE.equals(request.attribute(RequestAttributes.LOW_SIGNAL))) {
      return LOW_SIGNAL;
    }
    return switch (tier(request)) {
      case GOLD -> GOLD;
      case SILVER -> SILVER;
      case BRONZE -> BRONZE;
    };
  }

  static Tier tier(GatewayRequest request) {
    Caller caller = request.attribute(RequestAttributes.CALLER);
    return caller != null ? caller.tier() : Tier.BRONZE;
  }
}
