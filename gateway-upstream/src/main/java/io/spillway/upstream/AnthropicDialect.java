package io.spillway.upstream;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Route;
import java.util.function.BiConsumer;
import okhttp3.HttpUrl;

/**
 * Anthropic's addressing: {@code {baseUrl}/v1/messages} (the base URL without {@code /v1}, as
 * {@code https://api.anthropic.com}), the key in {@code x-api-key}, and {@code anthropic-version}
 * on every call: the client's own when it sent one (with its {@code anthropic-beta}, both passed on
 * as they are), else the route's. Only the Messages API's routes have a URL here.
 */
public final class AnthropicDialect implements UpstreamDialect {
  private final String version;

  /** @param version the {@code anthropic-version} sent when the client sent none */
  public AnthropicDialect(String version) {
    this.version = version;
  }

  @Override
  public HttpUrl url(String baseUrl, Route route, String model) {
    if (route.api() != Route.Api.ANTHROPIC) {
      return null;
    }
    return HttpUrl.parse(baseUrl + route.path());
  }

  @Override
  public void authorize(BiConsumer<String, String> header, String apiKey) {
    header.accept("x-api-key", apiKey);
  }

  @Override
  public void complete(Headers client, BiConsumer<String, String> header) {
    if (client.get("anthropic-version") == null) {
      header.accept("anthropic-version", version);
    }
  }

  @Override
  public String toString() {
    return "anthropic (anthropic-version " + version + ")";
  }
}
