package io.spillway.app;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.server.GatewayServer;
import java.security.KeyStore;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.LoggerFactory;

/**
 * Start-up is mostly class loading and one-time initialization, which the JVM does on whichever
 * thread first needs it. {@code serve} starts this on a second thread before reading the config, so
 * that the slowest independent pieces (logging, the TLS trust store OkHttp builds its socket factory
 * from, the metrics registry, the native transport) are ready, or half ready, by the time the main
 * thread gets to them. It only touches shared JVM state that is initialized once anyway; nothing it
 * builds is kept, and a failure here changes nothing but timing.
 */
final class StartupWarmer {
  private StartupWarmer() {}

  static void start() {
    Thread.ofPlatform().name("spillway-startup-warmer").daemon().start(StartupWarmer::warm);
  }

  private static void warm() {
    try {
      LoggerFactory.getILoggerFactory();
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init((KeyStore) null);
      SSLContext.getInstance("TLS").init(null, trust.getTrustManagers(), null);
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT).close();
      GatewayServer.warmTransport();
    } catch (Exception | LinkageError e) {
      // Only timing depends on this: the main thread initializes whatever is left.
    }
  }
}
