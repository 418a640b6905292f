package io.spillway.app;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.app.observe.BreakerMetrics;
import io.spillway.app.observe.CapacitySignal;
import io.spillway.cache.ResponseCache;
import io.spillway.config.CloudRouteConfig;
import io.spillway.config.GatewayConfig;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Route;
import io.spillway.core.responses.StoredStateBackend;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.local.LocalBackends;
import io.spillway.local.LocalPool;
import io.spillway.routing.LocalModelList;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.Breakers;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.JudgingBackend;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.cloud.CloudBackend;
import io.spillway.routing.cloud.CloudRoute;
import io.spillway.trim.TrimSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What answers a model call: the cloud routes in the order they are tried (each with its breaker),
 * the local pool, and the response cache that answers instead of either. Each backend is judged once
 * as its answer leaves it (capacity or not), then metered and traced; with the response store on, its
 * stored state is expanded around it.
 */
public final class Backends implements AutoCloseable {
  final CapacityClassifier classifier;
  /** Whether a judged answer was a capacity answer, for metrics and traces. */
  final CapacitySignal capacity;
  /** One thread per local server, so that a slow keep-warm load on one does not delay another's checks. */
  private final ScheduledExecutorService localScheduler;
  /** The local pool, or null when {@code local.enabled} is false. */
  final LocalPool local;
  /** The local pool as the router calls it (judged, metered, traced), or null. */
  final Backend meteredLocal;
  final List<CloudRoute> routes;
  final List<Breaker> breakers;
  final LocalModelList localModels;
  final ResponseCache cache;

  private Backends(Foundation base, UpstreamHttp cloudHttp, UpstreamHttp localHttp, Closer built) {
    GatewayConfig config = base.config;
    MeterRegistry meters = base.metrics.registry();
    this.classifier = new CapacityClassifier(base.clock);
    this.capacity = (request, answer) -> classifier.verdictOn(request, answer).outcome() == Outcome.CAPACITY;
    this.localScheduler = Executors.newScheduledThreadPool(config.local().serverList().size(),
        Thread.ofPlatform().name("spillway-local").daemon().factory());
    this.local = config.local().enabled()
        ? LocalBackends.create(config.local(), config.cloud(), trimSettings(config.shaping().trim()), base.clock,
            base.ticker, localScheduler, meters, localHttp)
        : null;
    built.then("the local backend", local).then("the local scheduler", localScheduler::shutdownNow);
    this.meteredLocal = local == null ? null : local(base);
    this.routes = cloudRoutes(base, cloudHttp, built);
    this.breakers = routes.stream().map(CloudRoute::breaker).toList();
    this.localModels = new LocalModelList(config.local(), base.clock.instant());
    this.cache = ResponseCache.builder(config.cache())
        .clock(base.clock).streamTimeLimit(config.server().streamTimeLimit()).meters(meters).build();
    // A team that lost a key on reload loses its cached answers with it.
    base.keys.onTeamRevoked(cache::invalidateTeam);
    if (local != null) {
      base.status.register("local", () -> local.toJson(true));
    }
    base.status.register("breaker", () -> breaker().status().toJson());
    base.status.register("routes", () -> routesStatus(config));
  }

  /**
   * The backends of {@code base}'s config, over {@code cloud} (every cloud route's model calls) and
   * {@code local} (the local servers'); on a failure, what was built is closed again.
   */
  public static Backends create(Foundation base, UpstreamHttp cloud, UpstreamHttp local) {
    Closer built = new Closer();
    try {
      return new Backends(base, cloud, local, built);
    } catch (RuntimeException | Error e) {
      built.unwindAfter(e);
      throw e;
    }
  }

  private Backend local(Foundation base) {
    // The gen_ai.provider.name of local answers is the API the local server speaks.
    Backend metered = judgedMeteredTraced(base, local, base.config.local().kind().spelling());
    // Stored state is expanded before the local pool fits the conversation to the model's window.
    return base.responseStore != null ? StoredStateBackend.local(metered) : metered;
  }

  private List<CloudRoute> cloudRoutes(Foundation base, UpstreamHttp http, Closer built) {
    GatewayConfig config = base.config;
    List<CloudRoute> routes = new ArrayList<>();
    BreakerSettings breakerSettings = BreakerSettings.from(config.failover()).withLocalBackend(config.local().enabled());
    for (CloudRouteConfig route : config.cloud().effectiveRoutes()) {
      Backend backend = config.cloud().routes().isEmpty()
          ? CloudBackend.create(config.cloud(), http)
          : CloudBackend.create(route, config.cloud(), http);
      String provider = switch (route.kind()) {
        case AZURE -> "azure.ai.openai";
        case ANTHROPIC -> "anthropic";
        case OPENAI -> "openai";
      };
      Backend traced = judgedMeteredTraced(base, backend, provider);
      if (base.responseStore != null) {
        traced = StoredStateBackend.cloud(route.name(), traced);
      }
      Breaker breaker = Breakers.create(route.name(), base.redis, breakerSettings, base.clock);
      built.then("the breaker of route " + route.name(), breaker);
      BreakerMetrics.bind(breaker, base.metrics.registry());
      routes.add(new CloudRoute(route.name(), traced, breaker,
          route.azure() ? route.models().keySet() : null,
          route.kind() == CloudRouteConfig.Kind.ANTHROPIC ? Route.Api.ANTHROPIC : Route.Api.OPENAI));
    }
    return List.copyOf(routes);
  }

  /** Judged innermost (once, as the answer leaves), then metered, then traced. */
  private Backend judgedMeteredTraced(Foundation base, Backend backend, String provider) {
    return base.tracing.trace(base.metrics.meter(new JudgingBackend(backend, classifier), capacity, base.ticker),
        provider, capacity);
  }

  /** The code-aware trimmer's settings from {@code shaping.trim}, for fitting requests to the local model. */
  private static TrimSettings trimSettings(ShapingConfig.TrimConfig trim) {
    return new TrimSettings(trim.keepLastLines(), trim.keepDefinitions(), trim.keepTraceDefinitions(),
        trim.maxDefinitionLines(), trim.marker());
  }

  /** {@code routes} of {@code GET /admin/status}: each cloud route in order, with its breaker. */
  private ArrayNode routesStatus(GatewayConfig config) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    List<CloudRouteConfig> configured = config.cloud().effectiveRoutes();
    for (int i = 0; i < routes.size(); i++) {
      out.addObject()
          .put("name", routes.get(i).name())
          .put("kind", configured.get(i).kind().spelling())
          .put("baseUrl", configured.get(i).baseUrl())
          .set("breaker", routes.get(i).breaker().status().toJson());
    }
    return out;
  }

  /** The first cloud route's capacity breaker: this replica's own, or the fleet's with Redis. */
  Breaker breaker() {
    return routes.get(0).breaker();
  }

  /** The first cloud route's backend, then the local pool's when there is one, for the status page. */
  List<Backend> all() {
    Backend cloud = routes.get(0).backend();
    return meteredLocal == null ? List.of(cloud) : List.of(cloud, meteredLocal);
  }

  /** Closes the local pool, its scheduler and every route's breaker, each even when one fails. */
  @Override
  public void close() {
    Closer closer = new Closer().then("the local backend", local).then("the local scheduler", localScheduler::shutdownNow);
    routes.forEach(route -> closer.then("the breaker of route " + route.name(), route.breaker()));
    closer.closeAll();
  }
}
