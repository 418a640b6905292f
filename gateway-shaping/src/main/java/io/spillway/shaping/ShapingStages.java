package io.spillway.shaping;

import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.time.Ticker;
import io.spillway.shaping.risk.RiskIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * Shaping as the pipeline runs it (after authentication and the cache, before quota): small stages
 * that make a request cheaper to serve under pressure instead of failing it, and tell the client
 * exactly what they changed. In order:
 *
 * <ol>
 *   <li>{@link SignalInterceptor}: low-signal scoring ({@code x-spillway-signal: low});
 *   <li>{@link LadderInterceptor}: the {@link ShapingPolicy}'s plan for the request's pressure;
 *   <li>the ladder's steps, each applied when the plan allows it and recorded in the
 *       {@link io.spillway.core.pipeline.RequestOutcome}'s degraded steps (which the headers stage
 *       writes as {@code x-spillway-degraded}) in this order: {@link TrimInterceptor} (also without
 *       pressure above the tier's {@code trimAboveTokens}), {@link DowngradeInterceptor},
 *       {@link StopRewriteInterceptor} ({@code shaping.stop.apply}), {@link ModelStepInterceptor},
 *       {@link LocalStepInterceptor};
 *   <li>{@link RiskInterceptor}: how the rest of the pipeline did, for the {@link RiskIndex}.
 * </ol>
 *
 * Each stage leaves a model list, embeddings and a request without a caller alone; a request that
 * nothing applies to is passed on as the exact bytes the client sent. The stages hand each other
 * typed values on the request ({@link ShapingAttributes}), never headers.
 */
public final class ShapingStages {
  /** Lists the steps that changed the request, in order. */
  public static final String DEGRADED_HEADER = OutcomeHeadersInterceptor.DEGRADED;
  /** {@code low} on the answer to a low-signal request. */
  public static final String SIGNAL_HEADER = SignalInterceptor.HEADER;

  private ShapingStages() {}

  /**
   * The stages for {@code config}, in pipeline order; always the same number of them.
   *
   * @param risk the risk index the stages feed and the policy reads, or null to run without one
   */
  public static List<Interceptor> create(ShapingConfig config, PressureSignals signals, RiskIndex risk,
      MeterRegistry meters, Ticker ticker) {
    return create(config, signals, risk, ticker, new ShapingMetrics(meters, Executors.newVirtualThreadPerTaskExecutor()));
  }

  static List<Interceptor> create(ShapingConfig config, PressureSignals signals, RiskIndex risk, Ticker ticker,
      ShapingMetrics metrics) {
    List<Interceptor> stages = new ArrayList<>(List.of(
        new SignalInterceptor(config.signal(), metrics),
        new LadderInterceptor(new ShapingPolicy(config, signals, risk)),
        new TrimInterceptor(config, metrics),
        new DowngradeInterceptor(config.downgrade(), metrics),
        new StopRewriteInterceptor(config.stop(), metrics),
        new ModelStepInterceptor(config, metrics),
        new LocalStepInterceptor(metrics)));
    if (risk != null) {
      stages.add(new RiskInterceptor(risk, ticker));
    }
    return List.copyOf(stages);
  }
}
