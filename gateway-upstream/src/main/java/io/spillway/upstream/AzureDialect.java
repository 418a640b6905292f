package io.spillway.upstream;

import io.spillway.core.pipeline.Route;
import okhttp3.HttpUrl;
import java.util.function.BiConsumer;

/**
 * Azure OpenAI's addressing: the deployment is part of the URL and the key goes in an
 * {@code api-key} header, with {@code api-version} on every call.
 *
 * <ul>
 *   <li>chat: {@code {baseUrl}/openai/deployments/{deployment}/chat/completions?api-version=V}
 *   <li>completions: {@code {baseUrl}/openai/deployments/{deployment}/completions?api-version=V}
 *   <li>embeddings: {@code {baseUrl}/openai/deployments/{deployment}/embeddings?api-version=V}
 *   <li>responses: {@code {baseUrl}/openai/responses?api-version=V}, the deployment in the body's
 *       {@code model} (Azure's Responses API has no deployment segment)
 *   <li>models: none (a deployment list is not OpenAI's model list); {@link #url} answers null
 * </ul>
 *
 * <p>{@code baseUrl} is the resource endpoint, e.g. {@code https://my-resource.openai.azure.com}.
 */
public final class AzureDialect implements UpstreamDialect {
  private final String apiVersion;

  public AzureDialect(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  @Override
  public HttpUrl url(String baseUrl, Route route, String deployment) {
    HttpUrl base = HttpUrl.parse(baseUrl);
    if (base == null || route == Route.MODELS) {
      return null;
    }
    HttpUrl.Builder url = base.newBuilder().addPathSegment("openai");
    if (route == Route.RESPONSES) {
      url.addPathSegment("responses");
    } else {
      if (deployment == null || deployment.isBlank()) {
        return null;
      }
      url.addPathSegment("deployments").addPathSegment(deployment);
      url.addPathSegments(route.upstreamPath().substring(1));
    }
    return url.addQueryParameter("api-version", apiVersion).build();
  }

  @Override
  public void authorize(BiConsumer<String, String> header, String apiKey) {
    header.accept("api-key", apiKey);
  }

  @Override
  public boolean urlPerModel() {
    return true;
  }

  @Override
  public String toString() {
    return "azure (api-version " + apiVersion + ")";
  }
}
