package io.spillway.config;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One entry of {@code cloud.routes}: a cloud endpoint tried in list order before the local backend.
 *
 * @param name names the route in {@code x-spillway-route}, metrics ({@code route} tag), the admin
 *     API and the fleet breaker's Redis keys
 * @param kind {@value #OPENAI} (any OpenAI-compatible API, {@code Authorization: Bearer}) or
 *     {@value #AZURE} (Azure OpenAI: deployment URLs, {@code api-key} header, {@code api-version})
 * @param baseUrl for {@code openai} the URL ending in {@code /v1}; for {@code azure} the resource
 *     endpoint, e.g. {@code https://my-resource.openai.azure.com}
 * @param apiVersion the {@code api-version} query value; only for {@code azure}
 * @param models requested model → upstream model ({@code openai}; a model without an entry is sent as
 *     requested) or deployment ({@code azure}; a model without an entry skips this route)
 * @param timeout null: {@code cloud.timeout}
 */
public record CloudRouteConfig(
    String name,
    String kind,
    String baseUrl,
    String apiKey,
    String apiVersion,
    Map<String, String> models,
    Duration timeout) {

  public static final String OPENAI = "openai";
  public static final String AZURE = "azure";

  public CloudRouteConfig {
    kind = kind != null ? kind : OPENAI;
    baseUrl = baseUrl != null ? CloudConfig.stripTrailingSlash(baseUrl) : null;
    apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
    apiVersion = apiVersion == null || apiVersion.isBlank() ? null : apiVersion;
    models = models != null ? Collections.unmodifiableMap(new LinkedHashMap<>(models)) : Map.of();
  }

  public boolean azure() {
    return AZURE.equals(kind);
  }

  /** This route with {@code timeout} filled in from {@code cloud.timeout} when it has none of its own. */
  CloudRouteConfig withDefaultTimeout(Duration cloudTimeout) {
    return timeout != null ? this : new CloudRouteConfig(name, kind, baseUrl, apiKey, apiVersion, models, cloudTimeout);
  }
}
