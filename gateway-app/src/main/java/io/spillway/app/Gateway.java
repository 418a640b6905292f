package io.spillway.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.app.admin.AdminApi;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.config.GatewayConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.server.GatewayServer;
import io.spillway.core.server.HttpRoutes;
import io.spillway.core.shaping.PressureSignals;
import io.spillway.core.shaping.ShapingInterceptor;
import io.spillway.core.shaping.risk.RiskIndex;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.routing.Router;
import io.spillway.routing.cloud.CloudBackend;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
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

  private Gateway(GatewayConfig config, Clock clock, Path configFile) {
    this.config = config;
    this.clock = clock;
    this.keys = new AtomicReference<>(KeyRegistry.from(config.keys()));

    Backend cloud = CloudBackend.create(config.cloud());
    Router router = new Router(cloud);

    MeterRegistry meters = new SimpleMeterRegistry();
    // Shaping reads the breaker and the pools through PressureSignals; NONE until those land.
    RiskIndex risk = new RiskIndex(config.shaping().risk(), clock).bindTo(meters);

    List<Interceptor> interceptors = new ArrayList<>();
    interceptors.add(new AuthInterceptor(keys::get));
    interceptors.add(new ShapingInterceptor(config.shaping(), PressureSignals.NONE, risk, meters, clock));
    Pipeline pipeline = new Pipeline(interceptors, router);

    AdminApi.Builder admin = AdminApi.builder(config.admin().token());
    admin.get("/admin/risk", request -> AdminApi.ok(risk.snapshot()));

    HttpRoutes.Builder routes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      routes.route(route == Route.MODELS ? "GET" : "POST", route.path(), new OpenAiEndpoint(route, pipeline));
    }
    routes.get("/healthz", request -> json("{\"status\":\"ok\"}"));
    routes.get("/readyz", request -> json("{\"status\":\"ready\"}"));
    routes.prefix("/admin/", admin.build());
    this.server = new GatewayServer(config.server(), routes.build(), clock);
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

  public GatewayConfig config() {
    return config;
  }

  @Override
  public void close() {
    server.stop(config.server().drainTimeout());
  }
}
