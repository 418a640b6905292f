package io.spillway.app;

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
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyHashes;
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
    // Only hashes of gateway keys stay in memory, in the registry and in the config kept here.
    this.config = config.withKeys(config.keys().stream().map(KeyHashes::hashed).toList());
    this.clock = clock;
    this.keys = new AtomicReference<>(KeyRegistry.from(config.keys()));

    Backend cloud = CloudBackend.create(config.cloud());
    Router router = new Router(cloud);

    List<Interceptor> interceptors = new ArrayList<>();
    interceptors.add(new AuthInterceptor(keys::get));
    Pipeline pipeline = new Pipeline(interceptors, router);

    AdminApi.Builder admin = AdminApi.builder(config.admin().token());

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

  @Override
  public void close() {
    server.stop(config.server().drainTimeout());
  }
}
