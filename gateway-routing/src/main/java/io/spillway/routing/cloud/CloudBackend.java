package io.spillway.routing.cloud;

import io.spillway.config.CloudConfig;
import io.spillway.config.CloudRouteConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.upstream.AnthropicDialect;
import io.spillway.upstream.AzureDialect;
import io.spillway.upstream.OpenAiHttpBackend;
import io.spillway.upstream.UpstreamDialect;
import io.spillway.upstream.UpstreamSettings;

/**
 * A cloud endpoint: an OpenAI-compatible upstream called with the company's key. Every route's
 * backend is of kind {@link BackendKind#CLOUD} (the admission gate, {@code x-spillway-backend} and the
 * backend metrics tag count the cloud as one side); which route served is told apart by
 * {@link CloudRoute#name()}.
 */
public final class CloudBackend {
  private CloudBackend() {}

  /** The shorthand's one route ({@code cloud.baseUrl}, {@code cloud.apiKey}), over {@code http} (the data path's client). */
  public static Backend create(CloudConfig config, UpstreamHttp http) {
    return new OpenAiHttpBackend(BackendKind.CLOUD, UpstreamSettings.from(config), UpstreamDialect.OPENAI, http);
  }

  /**
   * One route's upstream over {@code http} (the data path's client): OpenAI's addressing for kind
   * {@code openai}, Azure's for {@code azure}; the requested model is rewritten through the
   * route's {@code models} map on the way.
   */
  public static Backend create(CloudRouteConfig route, CloudConfig cloud, UpstreamHttp http) {
    UpstreamSettings settings = new UpstreamSettings(route.baseUrl(), route.apiKey(), route.timeout(),
        cloud.connectTimeout(), cloud.maxResponseSize(), route.usesH2c());
    UpstreamDialect dialect = switch (route.kind()) {
      case AZURE -> new AzureDialect(route.apiVersion());
      case ANTHROPIC -> new AnthropicDialect(route.apiVersion());
      case OPENAI -> UpstreamDialect.OPENAI;
    };
    Backend upstream = new OpenAiHttpBackend(BackendKind.CLOUD, settings, dialect, http);
    return route.models().isEmpty() ? upstream : new ModelMappingBackend(upstream, route.models());
  }
}
