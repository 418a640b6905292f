package io.spillway.upstream;

import io.spillway.config.CloudConfig;
import io.spillway.config.DataSize;
import io.spillway.config.LocalConfig;
import java.time.Duration;

/**
 * How to reach one OpenAI-compatible upstream.
 *
 * @param apiKey sent as {@code Authorization: Bearer}; null sends none
 * @param timeout the whole call for buffered answers; for streams, the longest wait for the whole
 *     response head and then for each whole event
 * @param h2c speak HTTP/2 with prior knowledge to a plain-HTTP {@code baseUrl}
 */
public record UpstreamSettings(
    String baseUrl,
    String apiKey,
    Duration timeout,
    Duration connectTimeout,
    DataSize maxResponseSize,
    boolean h2c) {

  public UpstreamSettings(String baseUrl, String apiKey, Duration timeout, Duration connectTimeout,
      DataSize maxResponseSize) {
    this(baseUrl, apiKey, timeout, connectTimeout, maxResponseSize, false);
  }

  public static UpstreamSettings from(CloudConfig cloud) {
    return new UpstreamSettings(cloud.baseUrl(), cloud.apiKey(), cloud.timeout(), cloud.connectTimeout(),
        cloud.maxResponseSize(), cloud.h2c());
  }

  /** A local OpenAI-compatible server: no company key ever goes there. */
  public static UpstreamSettings from(LocalConfig local, CloudConfig cloud) {
    String base = local.baseUrl().endsWith("/v1") ? local.baseUrl() : local.baseUrl() + "/v1";
    return new UpstreamSettings(base, null, local.timeout(), cloud.connectTimeout(), cloud.maxResponseSize(),
        local.h2c());
  }
}
