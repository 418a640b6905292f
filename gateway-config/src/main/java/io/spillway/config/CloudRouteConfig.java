package io.spillway.config;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One entry of {@code cloud.routes}: a cloud endpoint tried in list order before the local backend.
 *
 * @param name names the route in {@code x-spillway-route}, metrics ({@code route} tag), the admin
 *     API and the fleet breaker's Redis keys
 * @param kind {@code openai} (any OpenAI-compatible API, {@code Authorization: Bearer}),
 *     {@code azure} (Azure OpenAI: deployment URLs, {@code api-key} header, {@code api-version}) or
 *     {@code anthropic} (Anthropic's Messages API: {@code x-api-key}, {@code anthropic-version})
 * @param baseUrl for {@code openai} the URL ending in {@code /v1}; for {@code azure} the resource
 *     endpoint, e.g. {@code https://my-resource.openai.azure.com}; for {@code anthropic} the URL
 *     without {@code /v1}, e.g. {@code https://api.anthropic.com}
 * @param apiVersion the {@code api-version} query value for {@code azure}; for {@code anthropic}
 *     the {@code anthropic-version} header sent when the client sent none (default {@value #ANTHROPIC_VERSION})
 * @param models requested model → upstream model ({@code openai}; a model without an entry is sent as
 *     requested) or deployment ({@code azure}; a model without an entry skips this route)
 * @param timeout null: {@code cloud.timeout}
 * @param h2c HTTP/2 with prior knowledge to a plain-HTTP {@code baseUrl}; null: {@code cloud.h2c}
 */
public record CloudRouteConfig(
    String name,
    Kind kind,
    String baseUrl,
    String apiKey,
    String apiVersion,
    Map<String, String> models,
    Duration timeout,
    Boolean h2c) {

  /** A route name is a metric tag value, a header value and part of Redis key names. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  /** The {@code anthropic-version} an anthropic route sends when neither the client nor the config names one. */
  public static final String ANTHROPIC_VERSION = "2023-06-01";

  public CloudRouteConfig {
    kind = kind != null ? kind : Kind.OPENAI;
    baseUrl = baseUrl != null ? CloudConfig.stripTrailingSlash(baseUrl) : null;
    apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
    apiVersion = apiVersion == null || apiVersion.isBlank() ? null : apiVersion;
    models = models != null ? Collections.unmodifiableMap(new LinkedHashMap<>(models)) : Map.of();
    ConfigProblems.Reporter at = ConfigProblems.at("cloud.routes[]");
    if (name == null || name.isBlank()) {
      at.problem("name", "missing (every route needs a name)");
    } else if (!NAME.matcher(name).matches()) {
      at.problem("name", "'" + name + "' must be 1-64 letters, digits, '.', '_' or '-'");
    }
    if (baseUrl == null) {
      at.problem("baseUrl", "missing");
    } else {
      at.url("baseUrl", baseUrl);
    }
    if (kind == Kind.AZURE) {
      if (apiVersion == null) {
        at.problem("apiVersion", "missing (an azure route sends it as api-version, e.g. 2024-10-21)");
      }
      if (models.isEmpty()) {
        at.problem("models", "an azure route needs at least one entry (requested model: deployment)");
      }
    } else if (kind == Kind.ANTHROPIC) {
      apiVersion = apiVersion != null ? apiVersion : ANTHROPIC_VERSION;
      if (baseUrl != null && baseUrl.endsWith("/v1")) {
        at.problem("baseUrl", "an anthropic route's baseUrl has no /v1 (Spillway adds /v1/messages), e.g. "
            + "https://api.anthropic.com");
      }
    } else if (apiVersion != null) {
      at.problem("apiVersion", "only an azure or anthropic route takes an api-version");
    }
    String upstreamName = kind == Kind.AZURE ? "deployment" : "model";
    models.forEach((requested, upstream) -> {
      if (requested == null || requested.isBlank() || upstream == null || upstream.isBlank()) {
        at.problem("models", "every entry needs a requested model and an upstream " + upstreamName
            + " ('" + requested + ": " + upstream + "')");
      }
    });
    if (timeout != null) {
      at.positive("timeout", timeout, "must be longer than zero");
    }
  }

  public boolean azure() {
    return kind == Kind.AZURE;
  }

  /** What API a route speaks. */
  public enum Kind implements Choice {
    /** Any OpenAI-compatible API, {@code Authorization: Bearer}. */
    OPENAI,
    /** Azure OpenAI: deployment URLs, {@code api-key} header, {@code api-version}. */
    AZURE,
    /**
     * Anthropic's Messages API ({@code {baseUrl}/v1/messages}, {@code x-api-key},
     * {@code anthropic-version}): serves the requests Anthropic's clients (Claude Code) send.
     */
    ANTHROPIC;
  }

  /** This route with {@code timeout} filled in from {@code cloud.timeout} when it has none of its own. */
  CloudRouteConfig withDefaults(Duration cloudTimeout, boolean cloudH2c) {
    return timeout != null && h2c != null ? this : new CloudRouteConfig(name, kind, baseUrl, apiKey, apiVersion, models,
        timeout != null ? timeout : cloudTimeout, h2c != null ? h2c : cloudH2c);
  }

  /** Whether to speak HTTP/2 with prior knowledge (after {@link CloudConfig#effectiveRoutes}, never null). */
  public boolean usesH2c() {
    return Boolean.TRUE.equals(h2c);
  }
}
