package io.spillway.config;

import java.time.Duration;

/**
 * The cloud endpoint (OpenAI or any OpenAI-compatible API).
 *
 * @param timeout the whole call for buffered responses; the longest silence between events for streams
 * @param maxResponseSize a buffered upstream body larger than this is refused with 502
 * @param maxIdleConnections idle upstream connections kept for reuse
 */
public record CloudConfig(
    String baseUrl,
    String apiKey,
    Duration timeout,
    Duration connectTimeout,
    DataSize maxResponseSize,
    Integer maxIdleConnections) {

  public static final CloudConfig DEFAULTS = new CloudConfig(null, null, null, null, null, null);

  public CloudConfig {
    baseUrl = baseUrl != null ? stripTrailingSlash(baseUrl) : "https://api.openai.com/v1";
    apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
    timeout = timeout != null ? timeout : Duration.ofSeconds(120);
    connectTimeout = connectTimeout != null ? connectTimeout : Duration.ofSeconds(10);
    maxResponseSize = maxResponseSize != null ? maxResponseSize : DataSize.ofMebibytes(32);
    maxIdleConnections = maxIdleConnections != null ? maxIdleConnections : 256;
  }

  static String stripTrailingSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }
}
