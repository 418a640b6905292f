package io.spillway.shaping;

import io.spillway.core.tokens.TokenTally;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.pipeline.Tier;
import java.util.concurrent.Executor;

/**
 * Shaping's meters: {@code spillway_shaping_steps_total{step,tier}} (requests each step changed),
 * {@code spillway_shaping_tokens_saved_total{step}} (prompt tokens trimmed away, and output-limit
 * tokens taken off by {@code max_tokens}), {@code spillway_shaping_low_signal_total{reason,tier}}.
 *
 * <p>The tokens a trim saved need the original's exact count, which for a large prompt takes longer
 * than the trim itself; that count runs on {@code counting} (off the request's path) and is added
 * when it is done.
 */
final class ShapingMetrics {
  private final MeterRegistry registry;
  private final Executor counting;

  ShapingMetrics(MeterRegistry registry, Executor counting) {
    this.registry = registry;
    this.counting = counting;
  }

  void step(String step, Tier tier) {
    registry.counter("spillway.shaping.steps", "step", step, "tier", tier.tag()).increment();
  }

  void tokensSaved(String step, long tokens) {
    if (tokens > 0) {
      registry.counter("spillway.shaping.tokens.saved", "step", step).increment(tokens);
    }
  }

  /** Counts {@code original} in the background and records what trimming it to {@code tokensAfter} saved. */
  void trimmed(TokenTally counter, String original, long tokensAfter) {
    counting.execute(() -> tokensSaved("trimmed", counter.count(original) - tokensAfter));
  }

  void lowSignal(String reason, Tier tier) {
    registry.counter("spillway.shaping.low_signal", "reason", reason, "tier", tier.tag()).increment();
  }
}
