package io.spillway.app;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.core.json.Json;
import io.spillway.core.time.Ticker;
import io.spillway.quota.store.UsageStores;
import io.spillway.server.GatewayServer;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.LoggerFactory;

/**
 * Start-up is mostly class loading and one-time initialization, which the JVM does on whichever
 * thread first needs it. {@code main} starts warm-up threads before it reads the command line when
 * the command starts a gateway, so that the independent pieces the main thread needs are ready, or
 * half ready, by the time it gets to them:
 * <ul>
 *   <li>only when picocli reads the command line (anything but a plain {@code serve}, see
 *       {@link ServeArguments}): the config binder (Jackson and its YAML parser, and the
 *       deserializers of every config record, built by binding a small sample), which the main
 *       thread needs right after the command line;
 *   <li>the rest in the order the gateway's constructor needs it: logging, the embedded store's
 *       engine, the metrics registry, the JSON tree writer, virtual threads, the native transport and
 *       the HTTP codec of the first request, the response cache's Caffeine classes, and last the TLS
 *       trust store the local backend's OkHttp probes build their socket factory from, when the
 *       loaded config has a TLS upstream.
 * </ul>
 * They only touch shared JVM state that is initialized once anyway and the config binder's
 * deserializer cache; nothing they build is kept, and a failure here changes nothing but timing.
 */
final class StartupWarmer {
  /** The commands that start a gateway (none: {@code serve} is the default). */
  private static final Set<String> STARTING = Set.of("serve", "demo", "--config");

  private StartupWarmer() {}

  /**
   * The config {@code serve} loaded, for the last step; the other commands never complete it and
   * warm the trust store regardless.
   */
  private static final CompletableFuture<GatewayConfig> LOADED = new CompletableFuture<>();

  /**
   * Starts the warm-up when {@code args} name a command that starts a gateway; {@code serve} is
   * the command {@link ServeArguments} read from them, or null when picocli reads them.
   */
  static void startFor(ServeArguments serve, String... args) {
    if (serve != null) {
      // No command line to parse first: the main thread reads the config straight away, and a
      // second bind of a sample beside it would only take CPU from it.
      Thread.ofPlatform().name("spillway-warm-runtime").daemon().start(() -> warmRuntime(true));
    } else if (args.length == 0 || STARTING.contains(args[0]) || args[0].startsWith("--config=")) {
      Thread.ofPlatform().name("spillway-warm-config").daemon().start(() -> quietly(ConfigLoader::warmUp));
      boolean serving = args.length == 0 || !args[0].equals("demo");
      Thread.ofPlatform().name("spillway-warm-runtime").daemon().start(() -> warmRuntime(serving));
    }
  }

  /** {@code serve} read its config: the warm-up learns whether anything needs TLS before the first request. */
  static void configLoaded(GatewayConfig config) {
    LOADED.complete(config);
  }

  private static void warmRuntime(boolean serving) {
    quietly(LoggerFactory::getILoggerFactory);
    quietly(UsageStores::warmUp);
    quietly(() -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT).close());
    quietly(() -> Json.toBytes(Json.object().put("status", "ready").set("reasons", Json.MAPPER.createArrayNode())));
    quietly(() -> Thread.ofVirtual().name("spillway-warm-virtual").start(() -> { }).join());
    quietly(GatewayServer::warmTransport);
    quietly(StartupWarmer::warmCache);
    // Last, and only when the config has a TLS upstream: the local backend's OkHttp probes build
    // their socket factory with the gateway; the data path's client makes its TLS context on first
    // use, or just after the listener is up for an https cloud route. Without one, the trust store
    // (about a fifth of this thread's CPU) would only compete with the main thread.
    quietly(() -> {
      if (serving && !usesTls(LOADED.get())) {
        return;
      }
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init((KeyStore) null);
      SSLContext.getInstance("TLS").init(null, trust.getTrustManagers(), null);
    });
  }

  /**
   * A throw-away cache with the features of the response cache's (weight, expiry after write, its
   * own ticker and executor, an eviction listener): Caffeine picks and loads the cache and entry
   * classes for that combination the first time, some 35 ms of CPU the main thread no longer pays.
   */
  static void warmCache() {
    Caffeine.newBuilder()
        .maximumWeight(1)
        .weigher((Object key, Object value) -> 1)
        .expireAfterWrite(Duration.ofSeconds(1))
        .ticker(Ticker.system()::read)
        .executor(Runnable::run)
        .evictionListener((Object key, Object value, RemovalCause cause) -> { })
        .build()
        .put("warm-up", "warm-up");
  }

  static boolean usesTls(GatewayConfig config) {
    return config.local().enabled()
        || config.cloud().effectiveRoutes().stream().anyMatch(route -> route.baseUrl().startsWith("https"));
  }

  /** One warm-up step; only timing depends on it, so whatever it throws is dropped. */
  private static void quietly(Step step) {
    try {
      step.run();
    } catch (Exception | LinkageError e) {
      // The main thread initializes whatever is left.
    }
  }

  @FunctionalInterface
  private interface Step {
    void run() throws Exception;
  }
}
