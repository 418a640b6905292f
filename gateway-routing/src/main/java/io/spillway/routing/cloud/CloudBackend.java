package io.spillway.routing.cloud;

import io.spillway.config.CloudConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.upstream.OpenAiHttpBackend;
import io.spillway.upstream.UpstreamSettings;

/** The cloud endpoint: an OpenAI-compatible upstream called with the company's key. */
public final class CloudBackend {
  public static final String NAME = "cloud";

  private CloudBackend() {}

  public static Backend create(CloudConfig config) {
    return new OpenAiHttpBackend(NAME, UpstreamSettings.from(config));
  }
}
