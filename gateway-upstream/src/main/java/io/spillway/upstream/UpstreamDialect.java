package io.spillway.upstream;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Route;
import okhttp3.HttpUrl;
import java.util.function.BiConsumer;

/**
 * How an OpenAI-compatible upstream is addressed: the URL of each endpoint and how the gateway's
 * key is sent. {@link #OPENAI} is OpenAI's own form ({@code {baseUrl}/chat/completions},
 * {@code Authorization: Bearer}); {@link AzureDialect} is Azure OpenAI's. Implementations are
 * immutable and thread-safe.
 */
public interface UpstreamDialect {
  /** {@code {baseUrl}{route path}} with {@code Authorization: Bearer <key>}. */
  UpstreamDialect OPENAI = new UpstreamDialect() {
    @Override
    public HttpUrl url(String baseUrl, Route route, String model) {
      return HttpUrl.parse(baseUrl + route.upstreamPath());
    }

    @Override
    public void authorize(BiConsumer<String, String> header, String apiKey) {
      header.accept("Authorization", "Bearer " + apiKey);
    }

    @Override
    public String toString() {
      return "openai";
    }
  };

  /**
   * The URL of one call of {@code route} for {@code model} (the model as sent upstream), or null
   * when {@code baseUrl} does not make a URL.
   */
  HttpUrl url(String baseUrl, Route route, String model);

  /** Adds the gateway's own key ({@code apiKey} is never null here) to an upstream request. */
  void authorize(BiConsumer<String, String> header, String apiKey);

  /**
   * Adds the headers the upstream's API requires that the client did not send ({@code client} are
   * the client's headers). The default adds none.
   */
  default void complete(Headers client, BiConsumer<String, String> header) {}

  /** Whether the URL depends on the model (then it is built per call, not once per route). */
  default boolean urlPerModel() {
    return false;
  }
}
