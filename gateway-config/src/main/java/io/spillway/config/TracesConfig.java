package io.spillway.config;

import java.time.Duration;

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (protobuf). Off unless {@code endpoint} is set.
 *
 * @param endpoint the collector's traces URL, e.g. {@code http://127.0.0.1:4318/v1/traces}; null
 *     (the default) turns tracing off: no spans, and no {@code traceparent} of the gateway's own
 * @param sampleRatio share of new traces recorded (0 to 1); a client's sampled flag is followed
 * @param serviceName the {@code service.name} of the gateway's spans
 * @param exportInterval how long finished spans wait before they are sent in a batch
 */
public record TracesConfig(String endpoint, Double sampleRatio, String serviceName, Duration exportInterval) {
  public static final TracesConfig DEFAULTS = new TracesConfig(null, null, null, null);

  public TracesConfig {
    endpoint = endpoint != null && endpoint.isBlank() ? null : endpoint;
    sampleRatio = sampleRatio != null ? sampleRatio : 1.0;
    serviceName = serviceName != null ? serviceName : "spillway";
    exportInterval = exportInterval != null ? exportInterval : Duration.ofSeconds(5);
    ConfigProblems.Reporter at = ConfigProblems.at("traces");
    if (sampleRatio < 0 || sampleRatio > 1 || sampleRatio.isNaN()) {
      at.problem("sampleRatio", "must be between 0 and 1");
    }
    if (serviceName.isBlank()) {
      at.problem("serviceName", "must not be empty");
    }
    at.positive("exportInterval", exportInterval, "must be positive");
    if (endpoint != null && !httpUrl(endpoint)) {
      at.problem("endpoint", "'" + endpoint + "' is not an http(s) URL");
    }
  }

  /** Whether spans are recorded and exported. */
  public boolean enabled() {
    return endpoint != null;
  }

  private static boolean httpUrl(String url) {
    try {
      java.net.URI uri = java.net.URI.create(url);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
