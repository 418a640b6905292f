package io.spillway.app;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.config.ConfigLoader;
import io.spillway.server.GatewayServer;
import java.security.KeyStore;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.LoggerFactory;

/**
 * Start-up is mostly class loading and one-time initialization, which the JVM does on whichever
 * thread first needs it. {@code main} starts this on a second thread before it parses the command
 * line when the command starts a gateway, so that the independent pieces the main thread needs next
 * are ready, or half ready, by the time it gets to them. They are warmed in the order the main thread
 * needs them: the config binder (Jackson and its YAML parser, the deserializers of the config
 * records), logging, the metrics registry, the TLS trust store OkHttp builds its socket factory
 * from, and the native transport. It only touches shared JVM state that is initialized once anyway
 * and the config binder's deserializer cache; nothing it builds is kept, and a failure here changes
 * nothing but timing.
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
    Thread.ofPlatform().name("spillway-startup-warmer").daemon().start(StartupWarmer::warm);
  }

  private static void warm() {
    try {
      ConfigLoader.warmUp();
      LoggerFactory.getILoggerFactory();
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT).close();
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init((KeyStore) null);
      SSLContext.getInstance("TLS").init(null, trust.getTrustManagers(), null);
      GatewayServer.warmTransport();
    } catch (Exception | LinkageError e) {
      // Only timing depends on this: the main thread initializes whatever is left.
    }
  }
}
