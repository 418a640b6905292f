package io.spillway.app.observe;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Decides whether an upstream answer was a <em>capacity answer</em> (the cloud saying the model is
 * at capacity or overloaded), for the capacity counters and the capacity rate.
 *
 * <p>The routing module owns the real classifier (one table, tested row by row), which judges each
 * answer once as it leaves its backend; the gateway points this seam at that verdict
 * ({@code (request, answer) -> classifier.verdictOn(request, answer)...}) so metrics and traces do
 * not judge the answer again. {@link #SIMPLE} applies DESIGN.md's rule in its plainest form.
 * Implementations are thread-safe and must not consume a streamed body.
 */
@FunctionalInterface
public interface CapacitySignal {
  /** Whether {@code upstreamAnswer}, the answer a backend gave {@code request}, is a capacity answer. */
  boolean isCapacity(GatewayRequest request, GatewayResponse upstreamAnswer);

  /**
   * 503 or 429 whose buffered error body says "capacity" or "overloaded", or any 503 with
   * {@code Retry-After}. A 429 {@code insufficient_quota} or a plain rate limit is not capacity.
   */
  CapacitySignal SIMPLE = (request, response) -> {
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
