package io.spillway.app.observe;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.time.Ticker;
import java.util.concurrent.CompletionStage;

/**
 * Times the terminal stage (routing, the backend call, a local retry) so that the request observer
 * can tell Spillway's own time from the upstream's. For a stream the upstream part ends when the
 * backend's answer began; the rest of the stream is counted in the request's whole duration.
 */
final class MeteredTerminal implements Terminal {
  private final Terminal delegate;
  private final GatewayMetrics metrics;
  private final Ticker ticker;

  MeteredTerminal(Terminal delegate, GatewayMetrics metrics, Ticker ticker) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.ticker = ticker;
  }

  @Override
  public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
    long start = ticker.read();
    CompletionStage<GatewayResponse> answer;
    try {
      answer = delegate.handle(request);
    } catch (RuntimeException | Error e) {
      record(request, start);
      throw e;
    }
    return answer.whenComplete((response, failure) -> record(request, start));
  }

  @Override
  public boolean mayBlock() {
    return delegate.mayBlock();
  }

  private void record(GatewayRequest request, long start) {
    long elapsed = ticker.read() - start;
    Long before = request.attribute(ObserveAttributes.UPSTREAM_NANOS);
    request.setAttribute(ObserveAttributes.UPSTREAM_NANOS, (before == null ? 0 : before) + elapsed);
    metrics.recordUpstreamDuration(request.route().tag(),
        metrics.backendTag(RequestOutcome.of(request).backend()), elapsed);
  }

  @Override
  public String toString() {
    return "Metered(" + delegate + ")";
  }
}
