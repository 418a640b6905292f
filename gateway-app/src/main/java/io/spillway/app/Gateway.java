package io.spillway.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.app.admin.AdminApi;
import io.spillway.app.admin.BreakerAdmin;
import io.spillway.app.admin.StatusEndpoint;
import io.spillway.app.admin.StatusRegistry;
import io.spillway.app.admin.CacheAdmin;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.cache.ResponseCache;
import io.spillway.core.config.GatewayConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.server.GatewayServer;
import io.spillway.core.server.HttpRoutes;
import io.spillway.local.LocalBackend;
import io.spillway.local.LocalBackends;
import io.spillway.quota.admission.PriorityAdmissionGate;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyHashes;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.quota.ratelimit.LocalRequestLimiter;
import io.spillway.quota.ratelimit.RateLimitInterceptor;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.quota.ratelimit.RedisRequestLimiter;
import io.spillway.quota.ratelimit.RequestLimiter;
import io.spillway.routing.LocalModelList;
import io.spillway.routing.Router;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.cloud.CloudBackend;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One running Spillway: builds every part from a config, wires the pipeline and starts the front
 * end. Tests start it on port 0 exactly as {@code serve} does.
 *
 * <p>Pipeline order: auth → cache → shaping → quota → admission → router (terminal).
 */
public final class Gateway implements AutoCloseable {
  private final GatewayConfig config;
  private final Clock clock;
  private final GatewayServer server;
  private final AtomicReference<KeyRegistry> keys;
  private final MeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final StatusRegistry status = new StatusRegistry();
  private final ScheduledExecutorService localScheduler;
  private final LocalBackend local;
  private final RequestLimiter requestLimiter;
  private final PriorityAdmissionGate admission;
  private final ResponseCache cache;

  private Gateway(GatewayConfig config, Clock clock, Path configFile) {
    // Only hashes of gateway keys stay in memory, in the registry and in the config kept here.
    this.config = config.withKeys(config.keys().stream().map(KeyHashes::hashed).toList());
    this.clock = clock;
    this.keys = new AtomicReference<>(KeyRegistry.from(config.keys()));

    this.requestLimiter = requestLimiter(config, clock);
    this.admission = PriorityAdmissionGate.from(config.quota(), clock, meters);
    status.register("admission", admission::snapshot);

    Backend cloud = CloudBackend.create(config.cloud());
    this.localScheduler = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-local").daemon().factory());
    this.local = config.local().enabled()
        ? LocalBackends.create(config.local(), config.cloud(), config.failover().localFor(), clock, localScheduler,
            meters)
        : null;
    if (local != null) {
      status.register("local", () -> local.readiness().toJson(true));
    }
    Breaker breaker = new Breaker(config.failover(), clock, meters);
    status.register("breaker", breaker::snapshot);
    Router router = Router.builder()
        .cloud(cloud)
        .local(local)
        .breaker(breaker)
        .classifier(new CapacityClassifier(clock))
        .admission(admission)
        .failover(config.failover())
        .localModels(new LocalModelList(config.local(), clock.instant()))
        .meters(meters)
        .build();

    List<Interceptor> interceptors = new ArrayList<>();
    interceptors.add(new AuthInterceptor(keys::get));
    this.cache = ResponseCache.builder(config.cache())
        .clock(clock).streamTimeLimit(config.server().streamTimeLimit()).meters(meters).build();
    interceptors.add(cache.interceptor());
    interceptors.add(new RateLimitInterceptor(requestLimiter));
    Pipeline pipeline = new Pipeline(interceptors, router);

    AdminApi.Builder admin = AdminApi.builder(config.admin().token());
    BreakerAdmin.register(admin, breaker);
    StatusEndpoint.register(admin, status);
    CacheAdmin.register(admin, cache);

    HttpRoutes.Builder routes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      routes.route(route == Route.MODELS ? "GET" : "POST", route.path(), new OpenAiEndpoint(route, pipeline));
    }
    routes.get("/healthz", request -> json("{\"status\":\"ok\"}"));
    routes.get("/readyz", new ReadinessService(config.cloud(), config.local(), local));
    routes.prefix("/admin/", admin.build());
    this.server = new GatewayServer(config.server(), routes.build(), clock);
  }

  /** The registry every component registers its meters in; {@code /metrics} scrapes it. */
  public MeterRegistry meters() {
    return meters;
  }

  private static RequestLimiter requestLimiter(GatewayConfig config, Clock clock) {
    RateLimitPolicy policy = new RateLimitPolicy(config.quota());
    if (config.store().startsWith("redis://") || config.store().startsWith("rediss://")) {
      return RedisRequestLimiter.connect(config.store(), policy, clock, config.quota().failClosed());
    }
    return new LocalRequestLimiter(policy, clock);
  }

  private static GatewayResponse json(String body) {
    return GatewayResponse.json(200, body.getBytes(StandardCharsets.UTF_8));
  }

  /** Starts a gateway; {@code configFile} (may be null) is what a reload reads again. */
  public static Gateway start(GatewayConfig config, Clock clock, Path configFile) {
    Gateway gateway = new Gateway(config, clock, configFile);
    gateway.server.start();
    return gateway;
  }

  public static Gateway start(GatewayConfig config, Clock clock) {
    return start(config, clock, null);
  }

  public int port() {
    return server.port();
  }

  /** The OpenAI base URL clients point at, e.g. {@code http://127.0.0.1:8080/v1}. */
  public String baseUrl() {
    String host = config.server().host();
    if (host.equals("0.0.0.0") || host.equals("::")) {
      host = "127.0.0.1";
    }
    return (config.server().tls() != null ? "https" : "http") + "://" + host + ":" + port() + "/v1";
  }

  public int openConnections() {
    return server.openConnections();
  }

  public int inFlightRequests() {
    return server.inFlightRequests();
  }

  /** Response bytes waiting for slow clients to read them, over all connections. */
  public long pendingWriteBytes() {
    return server.pendingWriteBytes();
  }

  public GatewayConfig config() {
    return config;
  }

  /** The local backend, or null when {@code local.enabled} is false. */
  public LocalBackend local() {
    return local;
  }

  /** The response cache; a config reload that revokes a team's key calls {@code invalidateTeam}. */
  public ResponseCache cache() {
    return cache;
  }

  /** The waiting area in front of the backends; its {@code snapshot()} is the admission status. */
  public PriorityAdmissionGate admission() {
    return admission;
  }

  @Override
  public void close() {
    server.stop(config.server().drainTimeout());
    if (local != null) {
      local.close();
    }
    localScheduler.shutdownNow();
    requestLimiter.close();
  }
}
