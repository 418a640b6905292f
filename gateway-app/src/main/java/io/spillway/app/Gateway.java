package io.spillway.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.app.admin.ReloadEndpoint;
import io.spillway.app.admin.StatusRegistry;
import io.spillway.app.observe.GatewayMetrics;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.cache.ResponseCache;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.config.SelfReference;
import io.spillway.core.time.Ticker;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.local.LocalPool;
import io.spillway.quota.admission.PriorityAdmissionGate;
import io.spillway.quota.keys.ApiKeys;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.cloud.CloudRoute;
import io.spillway.server.ConnectionBudget;
import io.spillway.server.GatewayServer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Spillway: its surfaces composed from a config, behind the front end. Tests start it on
 * port 0 exactly as {@code serve} does.
 *
 * <p>The surfaces, each built on the ones before it: {@link Foundation} (config, time, Redis, keys,
 * metrics, status, reload, redaction, tracing), {@link DataPathClients} (the event loops and the
 * upstream clients), {@link Backends} (cloud routes, local pool, cache), {@link ModelPipeline} (the
 * stages and their accounting, which the benchmarks run too), {@link AdminSurface} and
 * {@link HttpSurface} (the routes the front end serves).
 *
 * <p>For the parts that other components plug into: {@link #meters()} (pass it to
 * constructors), {@link #status()} ({@code status.register(name, supplier)} adds a section to
 * {@code GET /admin/status}), and {@link #onReload} (a {@link Reloadable} gets every validated new
 * config on {@code SIGHUP} or {@code POST /admin/reload}).
 */
public final class Gateway implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);
  private final Foundation base;
  private final DataPathClients clients;
  private final Backends backends;
  private final ModelPipeline models;
  private final AdminSurface admin;
  private final GatewayServer server;

  private Gateway(GatewayConfig loaded, Clock clock, Ticker ticker, Path configFile) {
    this.base = Foundation.open(loaded, clock, ticker, configFile);
    Closer built = new Closer().then("the foundation", base);
    try {
      this.clients = new DataPathClients(base.config, ticker);
      built.then("the HTTP clients", clients);
      this.backends = Backends.create(base, clients.cloud(), clients.local());
      built.then("the backends", backends);
      this.models = ModelPipeline.create(base, backends);
      built.then("the model pipeline", models);
      this.admin = new AdminSurface(base, backends, models);
      ConnectionBudget budget = ConnectionBudget.of(base.config.server(), clients.multiplexed());
      this.server = new GatewayServer(base.config.server(), HttpSurface.routes(base, backends, models, admin, budget),
          clock, budget, clients.loops());
    } catch (RuntimeException | Error e) {
      built.unwindAfter(e);
      throw e;
    }
  }

  /** The registry every component registers its meters in; {@code /metrics} scrapes it. */
  public MeterRegistry meters() {
    return base.metrics.registry();
  }

  /** Starts a gateway; {@code configFile} (may be null) is what a reload reads again. */
  public static Gateway start(GatewayConfig config, Clock clock, Path configFile) {
    return start(config, clock, Ticker.system(), configFile);
  }

  /**
   * Starts a gateway with wall time from {@code clock} and durations from {@code ticker} (both
   * injected into every part that needs them; tests pass fakes).
   */
  public static Gateway start(GatewayConfig config, Clock clock, Ticker ticker, Path configFile) {
    Gateway gateway = new Gateway(config, clock, ticker, configFile);
    try {
      gateway.server.start();
    } catch (RuntimeException e) {
      gateway.close();
      throw e;
    }
    SelfReference.warnings(gateway.config(), gateway.port()).forEach(warning -> log.warn("config: {}", warning));
    // Once listening; readiness waits for none of these (docs/performance.md "Start to ready").
    TokenCounter.warmUp();
    gateway.clients.warmUpTls();
    gateway.base.metrics.bindJvmMeters();
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
    GatewayConfig config = base.config;
    String host = config.server().host();
    if (host.equals("0.0.0.0") || host.equals("::")) {
      host = "127.0.0.1";
    }
    return (config.server().tls() != null ? "https" : "http") + "://" + host + ":" + port() + "/v1";
  }

  /** The connection limit in force, and why it may be below {@code server.maxConnections}. */
  public ConnectionBudget connectionBudget() {
    return server.budget();
  }

  public int openConnections() {
    return server.openConnections();
  }

  public int inFlightRequests() {
    return server.inFlightRequests();
  }

  /** Request-body bytes held for uploads that have not ended yet (server.maxPendingBodyBytes). */
  public long pendingBodyBytes() {
    return server.pendingBodyBytes();
  }

  /** Response bytes waiting for slow clients to read them, over all connections. */
  public long pendingWriteBytes() {
    return server.pendingWriteBytes();
  }

  public GatewayConfig config() {
    return base.config;
  }

  public GatewayMetrics metrics() {
    return base.metrics;
  }

  /** The sections of {@code GET /admin/status}. */
  public StatusRegistry status() {
    return base.status;
  }

  /**
   * Adds a component that gets every validated new config on reload and applies the named sections
   * (e.g. {@code onReload(limiter::reload, "quota")}); other changed sections are reported as
   * needing a restart.
   */
  public void onReload(Reloadable reloadable, String... sections) {
    base.reloader.register(reloadable, sections);
  }

  /** Re-reads the config file, as {@code SIGHUP} and {@code POST /admin/reload} do. */
  public ConfigReloader.Result reload() {
    return base.reloader.reload();
  }

  /** A reload asked for by {@code SIGHUP}: as {@link #reload()}, and recorded in the audit log. */
  public ConfigReloader.Result reloadBySignal() {
    ConfigReloader.Result result = base.reloader.reload();
    admin.audit.record("signal:SIGHUP", "local", null, "config.reload", line -> ReloadEndpoint.describe(line, result));
    return result;
  }

  /** The local backend, or null when {@code local.enabled} is false. */
  public LocalPool local() {
    return backends.local;
  }

  /** The response cache; a config reload that revokes a team's key calls {@code invalidateTeam}. */
  public ResponseCache cache() {
    return backends.cache;
  }

  /** The waiting area in front of the backends; its {@code snapshot()} is the admission status. */
  public PriorityAdmissionGate admission() {
    return models.admission;
  }

  /** Keys created through the admin API, beside the config file's. */
  public ApiKeys apiKeys() {
    return base.apiKeys;
  }

  /** The first cloud route's capacity breaker: this replica's own, or the fleet's with Redis. */
  public Breaker breaker() {
    return backends.breaker();
  }

  /** The cloud routes in the order they are tried, each with its backend and breaker. */
  public List<CloudRoute> routes() {
    return backends.routes;
  }

  /** The tier pools: the shaping stage asks {@link QuotaPools#pastSoftBand} to decide on degrading. */
  public QuotaPools quota() {
    return models.quota;
  }

  /**
   * Stops the front end (letting requests in flight drain), then closes every surface, each one
   * even when one before it fails, the Redis link after every part that used it and the event loops
   * last; the first failure is thrown afterwards ({@link Closer}).
   */
  @Override
  public void close() {
    new Closer()
        .then("the front end", () -> server.stop(base.config.server().drainTimeout()))
        .then("the model pipeline", models)
        .then("the backends", backends)
        .then("the foundation", base)
        .then("the HTTP clients", clients)
        .closeAll();
  }
}
