package io.spillway.routing.cloud;

import io.spillway.core.config.CloudConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.upstream.OpenAiHttpBackend;
import io.spillway.core.upstream.UpstreamSettings;

/** The cloud endpoint: an OpenAI-compatible upstream called with the company's key. */
public final class CloudBackend {
  public static final String NAME = "cloud";

  private CloudBackend() {}

  public static Backend create(CloudConfig config) {
    return new OpenAiHttpBackend(NAME, UpstreamSettings.from(config));
  }
}
