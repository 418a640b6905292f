package io.spillway.app.observe;

import io.spillway.core.pipeline.GatewayResponse;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Decides whether an upstream answer was a <em>capacity answer</em> (the cloud saying the model is
 * at capacity or overloaded), for the capacity counters and the capacity rate.
 *
 * <p>The routing module owns the real classifier (one table, tested row by row); at wiring time
 * point this seam at it ({@code CapacitySignal signal = response -> classifier.isCapacity(response)}).
 * Until then {@link #SIMPLE} applies DESIGN.md's rule in its plainest form. Implementations are
 * thread-safe and must not consume a streamed body.
 */
@FunctionalInterface
public interface CapacitySignal {
  boolean isCapacity(GatewayResponse upstreamAnswer);

  /**
   * 503 or 429 whose buffered error body says "capacity" or "overloaded", or any 503 with
   * {@code Retry-After}. A 429 {@code insufficient_quota} or a plain rate limit is not capacity.
   */
  CapacitySignal SIMPLE = response -> {
    int status = response.status();
    if (status != 503 && status != 429) {
      return false;
    }
    if (status == 503 && response.headers().contains("retry-after")) {
      return true;
    }
    byte[] body = response.body();
    if (body == null || body.length == 0) {
      return false;
    }
    String text = new String(body, 0, Math.min(body.length, 4096), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    return text.contains("capacity") || text.contains("overloaded");
  };
}
