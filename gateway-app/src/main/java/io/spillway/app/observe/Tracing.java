package io.spillway.app.observe;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.spillway.config.TracesConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.time.Ticker;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * OpenTelemetry traces of the gateway: a server span per request ({@link #stage}) and a client span
 * per backend attempt ({@link #trace}), exported over OTLP/HTTP in batches. Built once at start-up;
 * when {@code traces.endpoint} is not set it is {@link #enabled() off} and adds nothing: no stage, no
 * wrapper, no {@code traceparent} of its own.
 *
 * <p>The SDK is private to this gateway (never the global OpenTelemetry), so two gateways in one JVM
 * keep separate traces. Span start times come from the injected clock, span durations from the injected ticker. Thread-safe.
 */
public final class Tracing implements AutoCloseable {
  private static final String SCOPE = "io.spillway.gateway";

  private final SdkTracerProvider provider;
  private final Tracer tracer;
  private final Map<BackendKind, String> providers = new ConcurrentHashMap<>();

  private Tracing(SdkTracerProvider provider) {
    this.provider = provider;
    this.tracer = provider == null ? null : provider.get(SCOPE);
  }

  /** Tracing as {@code traces} configures it; off when no endpoint is set. */
  public static Tracing from(TracesConfig config, Clock clock, Ticker ticker) {
    if (!config.enabled()) {
      return new Tracing(null);
    }
    OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder().setEndpoint(config.endpoint()).build();
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setClock(new SpanClock(clock, ticker))
        .setResource(Resource.getDefault().merge(Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), config.serviceName()))))
        .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(config.sampleRatio())))
        .addSpanProcessor(BatchSpanProcessor.builder(exporter).setScheduleDelay(config.exportInterval()).build())
        .build();
    return new Tracing(provider);
  }

  public boolean enabled() {
    return provider != null;
  }

  /**
   * The stage that opens each request's span, to be placed right after the request observer (which
   * writes the span's trace id in the access log). Call only when {@link #enabled()}.
   */
  public Interceptor stage(LongSupplier maxReportedTokens) {
    requireEnabled();
    return new TracingInterceptor(tracer, providers::get, maxReportedTokens);
  }

  /**
   * The backend with a span around each call and its trace context sent upstream; the backend
   * itself when tracing is off.
   *
   * @param provider the {@code gen_ai.provider.name} of this backend's answers ({@code openai},
   *     {@code ollama})
   */
  public Backend trace(Backend backend, String provider, CapacitySignal capacity) {
    if (!enabled()) {
      return backend;
    }
    providers.put(backend.kind(), provider);
    return new TracedBackend(backend, tracer, provider, capacity);
  }

  private void requireEnabled() {
    if (provider == null) {
      throw new IllegalStateException("tracing is off (traces.endpoint is not set)");
    }
  }

  /** Sends the spans still waiting, then stops the exporter. */
  @Override
  public void close() {
    if (provider != null) {
      provider.shutdown().join(10, TimeUnit.SECONDS);
    }
  }

  /** The SDK's clock on the injected ones: wall time from the clock, durations from the ticker. */
  private record SpanClock(Clock clock, Ticker ticker) implements io.opentelemetry.sdk.common.Clock {
    @Override
    public long now() {
      java.time.Instant now = clock.instant();
      return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }

    @Override
    public long nanoTime() {
      return ticker.read();
    }
  }
}
