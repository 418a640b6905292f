package io.spillway.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.cache.ResponseCache;
import io.spillway.config.CacheConfig;
import io.spillway.config.FailoverConfig;
import io.spillway.config.KeyConfig;
import io.spillway.config.LocalConfig;
import io.spillway.config.QuotaConfig;
import io.spillway.config.ServerConfig;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.api.ParseInterceptor;
import io.spillway.core.http.Headers;
import io.spillway.core.http.HttpService;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.time.Ticker;
import io.spillway.quota.admission.PriorityAdmissionGate;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.quota.ratelimit.ReplicaRequestLimiter;
import io.spillway.quota.ratelimit.RateLimitInterceptor;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.routing.LocalModelList;
import io.spillway.routing.Router;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.ReplicaBreaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.server.HttpRoutes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Spillway's default pipeline wired as {@code io.spillway.app.Gateway} wires it (auth → cache →
 * rate limits → router with the admission gate), in front of a backend that answers at once with a
 * canned chat completion, the way {@code OpenAiHttpBackend} hands one on. Keep it in step with
 * Gateway when stages are added, so the benchmarks stay representative.
 */
public final class DefaultPipeline {
  public static final String KEY = "bench-key";

  public final byte[] requestBody = resource("/chat-request.json");
  public final byte[] answer = resource("/chat-response.json");
  public final Pipeline pipeline;
  public final HttpService routes;

  public DefaultPipeline() {
    Clock clock = Clock.systemUTC();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    KeyRegistry keys = KeyRegistry.from(List.of(new KeyConfig(KEY, null, "bench", "gold")));
    ResponseCache cache = ResponseCache.builder(CacheConfig.DEFAULTS)
        .clock(clock).streamTimeLimit(ServerConfig.DEFAULTS.streamTimeLimit()).meters(meters).build();
    Backend upstream = new Backend() {
      @Override
      public BackendKind kind() {
        return BackendKind.CLOUD;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        if (request.bodyBytes().length == 0) {
          throw new IllegalStateException("no upstream body");
        }
        // an answer from memory: nothing to wait for
        return CompletableFuture.completedFuture(GatewayResponse.buffered(200,
            Headers.of("content-type", "application/json", "openai-processing-ms", "312"), answer));
      }
    };
    pipeline = new Pipeline(
        List.of(new ParseInterceptor(), new AuthInterceptor(() -> keys), cache.interceptor(),
            new RateLimitInterceptor(new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock))),
        Router.builder()
            .cloud(upstream)
            .breaker(new ReplicaBreaker(BreakerSettings.DEFAULTS, clock))
            .classifier(new CapacityClassifier(clock))
            .admission(PriorityAdmissionGate.from(QuotaConfig.DEFAULTS, clock, Ticker.system(), meters))
            .retryLocally(FailoverConfig.DEFAULTS.retryLocally())
            .localModels(new LocalModelList(LocalConfig.DEFAULTS, clock.instant()))
            .ticker(Ticker.system())
            .build());
    HttpRoutes.Builder builder = HttpRoutes.builder();
    for (Route route : Route.values()) {
      if (route.hasBody() && route.api() == Route.Api.OPENAI) {
        builder.route(route.method(), route.path(), new OpenAiEndpoint(route, pipeline));
      }
    }
    routes = builder.build();
  }

  static byte[] resource(String name) {
    try (InputStream in = DefaultPipeline.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
