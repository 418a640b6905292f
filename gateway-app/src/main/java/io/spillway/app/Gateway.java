package io.spillway.app;

import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.config.GatewayConfig;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.server.GatewayServer;
import io.spillway.core.server.HttpRoutes;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.routing.Router;
import io.spillway.routing.cloud.CloudBackend;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One running Spillway: builds every part from a config, wires the pipeline and starts the front
 * end. Tests start it on port 0 exactly as {@code serve} does.
 */
public final class Gateway implements AutoCloseable {
  private final GatewayConfig config;
  private final GatewayServer server;
  private final AtomicReference<KeyRegistry> keys;

  private Gateway(GatewayConfig config, Clock clock) {
    this.config = config;
    this.keys = new AtomicReference<>(KeyRegistry.from(config.keys()));
    CloudBackend cloud = new CloudBackend(config.cloud());
    List<Interceptor> interceptors = new ArrayList<>();
    interceptors.add(new AuthInterceptor(keys::get));
    Pipeline pipeline = new Pipeline(interceptors, new Router(cloud));
    HttpRoutes.Builder routes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      routes.route(route == Route.MODELS ? "GET" : "POST", route.path(), new OpenAiEndpoint(route, pipeline));
    }
    routes.get("/healthz", request -> GatewayResponse.json(200, "{\"status\":\"ok\"}".getBytes()));
    routes.get("/readyz", request -> GatewayResponse.json(200, "{\"status\":\"ready\"}".getBytes()));
    this.server = new GatewayServer(config.server(), routes.build(), clock);
  }

  public static Gateway start(GatewayConfig config, Clock clock, Path configFile) {
    return start(config, clock);
  }

  public static Gateway start(GatewayConfig config, Clock clock) {
    Gateway gateway = new Gateway(config, clock);
    gateway.server.start();
    return gateway;
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
