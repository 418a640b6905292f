package io.spillway.app;

import io.spillway.config.CloudRouteConfig;
import io.spillway.config.GatewayConfig;
import io.spillway.config.KeyConfig;
import io.spillway.core.Version;
import io.spillway.local.LocalPool;
import io.spillway.local.LocalReadiness;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.cloud.CloudRoute;
import io.spillway.server.ConnectionBudget;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code serve} tells a newcomer on start and on stop, one line each, on stderr beside the
 * diagnostics: where it listens, where the dashboard is or why it is off, whether each cloud route
 * has a key and is taking traffic, whether the local backend is ready, how many keys admit whom; and
 * on stop how many requests it is draining and that it stopped. Secrets are never printed, only
 * whether they are set.
 */
final class ServeReport {
  private ServeReport() {}

  /** The lines printed once the gateway listens; {@code configWarnings} come from the loader. */
  static List<String> started(Gateway gateway, List<String> configWarnings) {
    GatewayConfig config = gateway.config();
    String root = gateway.baseUrl().substring(0, gateway.baseUrl().length() - "/v1".length());
    List<String> lines = new ArrayList<>();
    lines.add("Spillway " + Version.VERSION + " serving " + gateway.baseUrl() + " (listening on "
        + config.server().host() + ":" + gateway.port() + "; clients use that as their OpenAI base URL)");
    configWarnings.forEach(warning -> lines.add("warning: " + warning));
    if (config.admin().enabled()) {
      lines.add("dashboard: " + root + "/dashboard (paste the admin token); admin API on at " + root + "/admin/");
    } else {
      lines.add("dashboard: off, and the admin API too: admin.token is empty (the shipped config reads"
          + " SPILLWAY_ADMIN_TOKEN)");
    }
    List<CloudRouteConfig> routeConfigs = config.cloud().effectiveRoutes();
    List<CloudRoute> routes = gateway.routes();
    for (int i = 0; i < routes.size(); i++) {
      CloudRouteConfig route = routeConfigs.get(i);
      lines.add("cloud route '" + route.name() + "': " + route.baseUrl() + ", "
          + (route.apiKey() == null || route.apiKey().isBlank() ? "NO API KEY (the cloud will refuse every request)"
              : "API key set")
          + ", " + breakerState(routes.get(i).breaker()));
    }
    lines.add(local(config, gateway.local()));
    List<KeyConfig> keys = config.keys().stream().filter(key -> !key.disabled()).toList();
    lines.add("keys: " + keys.size() + " from the config"
        + (keys.isEmpty() ? " (none admits anyone yet: add one under keys:, or create one with POST /admin/keys)"
            : " for team" + (keys.size() == 1 ? " " : "s ")
                + String.join(", ", keys.stream().map(KeyConfig::team).distinct().sorted().toList())));
    ConnectionBudget budget = gateway.connectionBudget();
    lines.add("connections: up to " + budget.effective()
        + (budget.lowered() ? " (what the file-descriptor limit " + budget.descriptorLimit() + " holds)" : ""));
    lines.add("ready; Ctrl-C stops (requests in flight get up to " + io.spillway.config.Durations.format(
        config.server().drainTimeout()) + " to finish)");
    return lines;
  }

  private static String breakerState(Breaker breaker) {
    return switch (breaker.state()) {
      case CLOSED -> "ready (breaker closed)";
      case HALF_OPEN -> "probing (breaker half-open)";
      case OPEN -> "not taking traffic (breaker open)";
      case FORCED_OPEN -> "not taking traffic (breaker forced open by an operator)";
      case FORCED_CLOSED -> "taking all traffic (breaker forced closed by an operator)";
    };
  }

  private static String local(GatewayConfig config, LocalPool local) {
    if (local == null) {
      return "local: off (local.enabled: false): capacity answers go back to the client with the cloud's Retry-After";
    }
    LocalReadiness readiness = local.checkNow();
    String where = config.local().kind().spelling() + " at " + String.join(", ",
        config.local().serverList().stream().map(server -> server.baseUrl()).toList());
    if (readiness.ready()) {
      return "local: " + where + ", ready (models " + String.join(", ", readiness.models()) + ")";
    }
    List<String> why = new ArrayList<>(readiness.problems());
    readiness.missing().forEach(missing -> why.add(missing.fix()));
    return "local: " + where + ", NOT ready: " + (why.isEmpty() ? "not reachable" : String.join("; ", why))
        + " (failover to local fails until it is; /readyz says when it is)";
  }

  /** The line printed when a stop begins. */
  static String stopping(int inFlight, java.time.Duration drainTimeout) {
    return "stopping: draining " + inFlight + " request" + (inFlight == 1 ? "" : "s") + " in flight (up to "
        + io.spillway.config.Durations.format(drainTimeout) + ")";
  }

  static final String STOPPED = "stopped";
}
