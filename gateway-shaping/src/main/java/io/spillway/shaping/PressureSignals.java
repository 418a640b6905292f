package io.spillway.shaping;

import io.spillway.core.pipeline.Tier;

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

  /** The cloud breaker is open or half-open. */
  boolean cloudDegraded();

  /** {@code tier}'s quota pool is past its soft band ({@code quota.softAt}). */
  boolean poolPastSoftBand(Tier tier);
}
