package io.spillway.app;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.config.ConfigLoader;
import io.spillway.core.json.Json;
import io.spillway.quota.store.UsageStores;
import io.spillway.server.GatewayServer;
import java.security.KeyStore;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.LoggerFactory;

/**
 * Start-up is mostly class loading and one-time initialization, which the JVM does on whichever
 * thread first needs it. {@code main} starts two warm-up threads before it parses the command line
 * when the command starts a gateway, so that the independent pieces the main thread needs are ready,
 * or half ready, by the time it gets to them:
 * <ul>
 *   <li>the config binder (Jackson and its YAML parser, and the deserializers of every config record,
 *       built by binding a small sample), which the main thread needs first, right after the command
 *       line;
 *   <li>the rest in the order the gateway's constructor needs it: logging, the embedded store's
 *       engine, the metrics registry, the JSON tree writer, virtual threads, the native transport and
 *       the HTTP codec of the first request, and last the TLS trust store the local backend's OkHttp
 *       probes build their socket factory from.
 * </ul>
 * They only touch shared JVM state that is initialized once anyway and the config binder's
 * deserializer cache; nothing they build is kept, and a failure here changes nothing but timing.
 */
final class StartupWarmer {
  /** The commands that start a gateway (none: {@code serve} is the default). */
  private static final Set<String> STARTING = Set.of("serve", "demo", "--config");

  private StartupWarmer() {}

  /** Starts the warm-up when {@code args} name a command that starts a gateway. */
  static void startFor(String... args) {
    if (args.length == 0 || STARTING.contains(args[0]) || args[0].startsWith("--config=")) {
      start();
    }
  }

  static void start() {
    Thread.ofPlatform().name("spillway-warm-config").daemon().start(() -> quietly(ConfigLoader::warmUp));
    Thread.ofPlatform().name("spillway-warm-runtime").daemon().start(StartupWarmer::warmRuntime);
  }

  private static void warmRuntime() {
    quietly(LoggerFactory::getILoggerFactory);
    quietly(UsageStores::warmUp);
    quietly(() -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT).close());
    quietly(() -> Json.toBytes(Json.object().put("status", "ready").set("reasons", Json.MAPPER.createArrayNode())));
    quietly(() -> Thread.ofVirtual().name("spillway-warm-virtual").start(() -> { }).join());
    quietly(GatewayServer::warmTransport);
    // Last: only the local backend's OkHttp probes need TLS before the first request (the data
    // path's client makes its TLS context on first use, after the listener is up).
    quietly(() -> {
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init((KeyStore) null);
      SSLContext.getInstance("TLS").init(null, trust.getTrustManagers(), null);
    });
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
