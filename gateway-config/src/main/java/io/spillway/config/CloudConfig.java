package io.spillway.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;

/**
 * The cloud side: one endpoint (the shorthand {@code baseUrl}, {@code apiKey}) or an ordered list of
 * {@link CloudRouteConfig routes} tried one after another before the local backend. The shorthand is
 * a one-route list whose route is named {@value #SHORTHAND_ROUTE}; setting it beside {@code routes}
 * is an error.
 *
 * @param timeout the whole call for buffered responses; the longest silence between events for streams
 * @param maxResponseSize a buffered upstream body larger than this is refused with 502
 * @param maxIdleConnections idle upstream connections kept for reuse
 * @param routes empty: the shorthand's one route
 * @param h2c speak HTTP/2 with prior knowledge to a plain-HTTP {@code baseUrl} (over TLS, ALPN
 *     decides by itself); the default for every route
 * @param poolIdleTimeout how long an idle upstream connection is kept for reuse
 */
public record CloudConfig(
    String baseUrl,
    String apiKey,
    Duration timeout,
    Duration connectTimeout,
    DataSize maxResponseSize,
    Integer maxIdleConnections,
    List<CloudRouteConfig> routes,
    Boolean h2c,
    Duration poolIdleTimeout) {

  public static final CloudConfig DEFAULTS = new CloudConfig(null, null, null, null, null, null, null, null, null);
  /** The name of the one route the shorthand ({@code cloud.baseUrl}, {@code cloud.apiKey}) describes. */
  public static final String SHORTHAND_ROUTE = "cloud";
  static final String OPENAI_BASE_URL = "https://api.openai.com/v1";

  public CloudConfig {
    routes = routes != null ? Collections.unmodifiableList(new ArrayList<>(routes)) : List.of();
    if (!routes.isEmpty() && (baseUrl != null || (apiKey != null && !apiKey.isBlank()))) {
      throw new IllegalArgumentException("cloud.baseUrl and cloud.apiKey (one route) cannot be combined with"
          + " cloud.routes (a list); move them into a route (cloud.routes[0].baseUrl, cloud.routes[0].apiKey)");
    }
    baseUrl = baseUrl != null ? stripTrailingSlash(baseUrl) : OPENAI_BASE_URL;
    apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
    timeout = timeout != null ? timeout : Duration.ofSeconds(120);
    connectTimeout = connectTimeout != null ? connectTimeout : Duration.ofSeconds(10);
    maxResponseSize = maxResponseSize != null ? maxResponseSize : DataSize.ofMebibytes(32);
    maxIdleConnections = maxIdleConnections != null ? maxIdleConnections : 256;
    h2c = h2c != null ? h2c : false;
    poolIdleTimeout = poolIdleTimeout != null ? poolIdleTimeout : Duration.ofSeconds(30);
    ConfigProblems.Reporter at = ConfigProblems.at("cloud");
    at.positive("poolIdleTimeout", poolIdleTimeout, "must be longer than zero");
    if (routes.isEmpty()) {
      at.url("baseUrl", baseUrl);
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < routes.size(); i++) {
      CloudRouteConfig route = routes.get(i);
      if (route == null) {
        at.problem("routes[" + i + "]", "empty route");
      } else if (route.name() != null && !names.add(route.name())) {
        at.problem("routes[" + i + "].name", "'" + route.name() + "' is used by an earlier route");
      }
    }
  }

  /** The old constructor, without routes: the shorthand's one route. */
  public CloudConfig(String baseUrl, String apiKey, Duration timeout, Duration connectTimeout,
      DataSize maxResponseSize, Integer maxIdleConnections) {
    this(baseUrl, apiKey, timeout, connectTimeout, maxResponseSize, maxIdleConnections, null, null, null);
  }

  /**
   * The routes in the order they are tried: {@code cloud.routes}, or the shorthand as one
   * {@code openai} route named {@value #SHORTHAND_ROUTE}; each with its timeout filled in.
   */
  public List<CloudRouteConfig> effectiveRoutes() {
    if (routes.isEmpty()) {
      return List.of(new CloudRouteConfig(SHORTHAND_ROUTE, CloudRouteConfig.Kind.OPENAI, baseUrl, apiKey, null, Map.of(),
          timeout, h2c));
    }
    return routes.stream().map(route -> route.withDefaults(timeout, h2c)).toList();
  }

  static String stripTrailingSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }
}
