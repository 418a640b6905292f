package io.spillway.shaping;

import io.spillway.core.pipeline.Tier;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * What other parts of the gateway know about pressure, as the shaping policy asks for it: the
 * breaker (routing) and the quota pools (quota). The gateway wires the real ones; until then, and in
 * tests, {@link #NONE} reports no pressure. Implementations must be cheap and thread-safe: they are
 * asked once per request.
 */
public interface PressureSignals {
  /** No pressure from anywhere. */
  PressureSignals NONE = new PressureSignals() {
    @Override
    public boolean cloudDegraded() {
      return false;
    }

    @Override
    public boolean poolPastSoftBand(Tier tier) {
      return false;
    }
  };

  /**
   * The pressure of a gateway with these cloud routes and pools: the cloud is degraded while every
   * route is (one route still taking traffic is no reason to push requests local).
   *
   * @param routesDegraded per cloud route, whether its breaker is open or half-open (at least one)
   * @param poolPastSoftBand whether a tier's quota pool is past its soft band
   */
  static PressureSignals of(List<BooleanSupplier> routesDegraded, Predicate<Tier> poolPastSoftBand) {
    if (routesDegraded.isEmpty()) {
      throw new IllegalArgumentException("no cloud route");
    }
    List<BooleanSupplier> routes = List.copyOf(routesDegraded);
    return new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return routes.stream().allMatch(BooleanSupplier::getAsBoolean);
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return poolPastSoftBand.test(tier);
      }
    };
  }

  /** Every cloud route's breaker is open or half-open. */
  boolean cloudDegraded();

  /** {@code tier}'s quota pool is past its soft band ({@code quota.softAt}). */
  boolean poolPastSoftBand(Tier tier);
}
