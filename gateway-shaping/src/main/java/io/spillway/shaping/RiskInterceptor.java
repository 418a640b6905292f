package io.spillway.shaping;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.time.Ticker;
import io.spillway.shaping.risk.RiskIndex;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Feeds the {@link RiskIndex} the policy reads: times the rest of the pipeline and records its
 * latency and whether it failed (429, 5xx, transport failures); a request the gateway refused itself
 * (rate limits, exhausted pools, client errors) counts toward request growth only. Thread-safe.
 */
final class RiskInterceptor implements Interceptor {
  private final RiskIndex risk;
  private final Ticker ticker;

  RiskInterceptor(RiskIndex risk, Ticker ticker) {
    this.risk = risk;
    this.ticker = ticker;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    if (ShapingAttributes.tierToShape(request) == null) {
      return chain.proceed(request);
    }
    long started = ticker.read();
    return chain.proceed(request).whenComplete((response, failure) -> {
      if (response != null) {
        observe(started, response.status() == 429 || response.status() >= 500);
      } else if (Blocking.cause(failure) instanceof GatewayException e && !(e instanceof UpstreamException)) {
        if (refusedByGateway(e.kind())) {
          risk.recordRefused();
        } else {
          observe(started, e.status() == 429 || e.status() >= 500);
        }
      } else {
        observe(started, true);
      }
    });
  }

  private static boolean refusedByGateway(ErrorKind kind) {
    return kind == ErrorKind.RATE_LIMITED || kind == ErrorKind.QUOTA_EXCEEDED || kind.status() < 429;
  }

  private void observe(long started, boolean error) {
    risk.record(TimeUnit.NANOSECONDS.toMillis(ticker.read() - started), error);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "RiskInterceptor";
  }
}
