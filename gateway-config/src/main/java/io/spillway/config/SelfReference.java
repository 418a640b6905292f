package io.spillway.config;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Finds upstream URLs that point back at Spillway's own listener: {@code cloud.baseUrl} or
 * {@code local.baseUrl} on a loopback or any-address host (or {@code server.host} itself) with the
 * listener's port. The usual cause is a gateway started from a shell that exports the gateway's own
 * URL for its clients; every request would then be sent back to the gateway until
 * {@code server.maxHops} stops it. {@code check-config} prints these warnings and {@code serve} logs
 * them; neither refuses the config, because a port may be shared on purpose behind NAT or in a
 * container.
 */
public final class SelfReference {
  private static final Set<String> LOCAL_HOSTS =
      Set.of("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:1");

  private SelfReference() {}

  /**
   * One warning per upstream URL that points at {@code listenPort} on this host; empty when none
   * does, or when the port is 0 (chosen at start: call again with the bound port).
   */
  public static List<String> warnings(GatewayConfig config, int listenPort) {
    List<String> warnings = new ArrayList<>();
    if (listenPort <= 0) {
      return warnings;
    }
    if (config.cloud().routes().isEmpty()) {
      check(warnings, "cloud.baseUrl", config.cloud().baseUrl(), config.server().host(), listenPort,
          "Set SPILLWAY_CLOUD_BASE_URL (or cloud.baseUrl) to the real cloud endpoint");
    }
    for (int i = 0; i < config.cloud().routes().size(); i++) {
      check(warnings, "cloud.routes[" + i + "].baseUrl", config.cloud().routes().get(i).baseUrl(),
          config.server().host(), listenPort, "Point the route at its real cloud endpoint");
    }
    if (config.local().enabled()) {
      List<LocalServerConfig> servers = config.local().servers();
      if (servers.isEmpty()) {
        check(warnings, "local.baseUrl", config.local().baseUrl(), config.server().host(), listenPort,
            "Point it at the local model server (Ollama listens on port 11434)");
      }
      for (int i = 0; i < servers.size(); i++) {
        if (servers.get(i) != null && servers.get(i).baseUrl() != null) {
          check(warnings, "local.servers[" + i + "].baseUrl", servers.get(i).baseUrl(), config.server().host(),
              listenPort, "Point it at the local model server (Ollama listens on port 11434)");
        }
      }
    }
    return warnings;
  }

  private static void check(
      List<String> warnings, String key, String url, String serverHost, int listenPort, String remedy) {
    if (url == null) {
      return;
    }
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      return;
    }
    String host = uri.getHost();
    if (host == null) {
      return;
    }
    int port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    String lower = host.toLowerCase(Locale.ROOT);
    boolean thisHost = LOCAL_HOSTS.contains(lower) || lower.startsWith("127.")
        || lower.equals(serverHost.toLowerCase(Locale.ROOT));
    if (thisHost && port == listenPort) {
      warnings.add(key + " (" + url + ") points at this gateway's own listener (port " + listenPort + "): requests"
          + " would come back to Spillway itself and be refused as a loop (508). " + remedy + ".");
    }
  }
}
