package io.spillway.app.observe;

import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ForwardingBackend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.time.Ticker;
import java.util.Locale;
import java.util.concurrent.CompletionStage;

/**
 * A backend whose every call is timed and classified: status class, upstream errors by class
 * (transport failures by {@link UpstreamException.Failure}, HTTP answers by status), and capacity
 * answers per {@link CapacitySignal}. Answers from the {@code cloud} backend feed the capacity rate.
 * Adds nothing to the request or response.
 */
final class MeteredBackend extends ForwardingBackend {
  private final GatewayMetrics metrics;
  private final CapacitySignal capacity;
  private final Ticker ticker;
  private final String name;

  MeteredBackend(Backend delegate, GatewayMetrics metrics, CapacitySignal capacity, Ticker ticker) {
    super(delegate);
    this.metrics = metrics;
    this.capacity = capacity;
    this.ticker = ticker;
    this.name = metrics.backendTag(delegate.kind());
  }

  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    long start = ticker.read();
    return delegateCall(request).whenComplete((response, failure) -> {
      if (failure != null) {
        failed(Blocking.cause(failure), start);
      } else {
        answered(request, response, start);
      }
    });
  }

  private void failed(Throwable failure, long start) {
    if (failure instanceof UpstreamException e) {
      metrics.recordBackendCall(name, "error", ticker.read() - start);
      metrics.countUpstreamError(name, e.failure().name().toLowerCase(Locale.ROOT));
    } else if (failure instanceof GatewayException e) {
      metrics.recordBackendCall(name, "error", ticker.read() - start);
      metrics.countUpstreamError(name, e.kind().name().toLowerCase(Locale.ROOT));
    }
  }

  private void answered(GatewayRequest request, GatewayResponse response, long start) {
    long elapsed = ticker.read() - start;
    int status = response.status();
    metrics.recordBackendCall(name, RequestObserverInterceptor.statusClass(status), elapsed);
    boolean atCapacity = !response.isStream() && capacity.isCapacity(request, response);
    if (atCapacity) {
      metrics.countCapacityAnswer(name);
      metrics.countUpstreamError(name, "capacity");
    } else if (status == 429) {
      metrics.countUpstreamError(name, "http_429");
    } else if (status >= 500) {
      metrics.countUpstreamError(name, "http_5xx");
    }
    if (isCloud()) {
      metrics.series().recordCloudAnswer(atCapacity);
    }
  }

  private boolean isCloud() {
    return delegate.kind() == BackendKind.CLOUD;
  }

  @Override
  public String toString() {
    return "Metered(" + delegate + ")";
  }
}
