package io.spillway.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Route;
import okhttp3.Request;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AzureDialectTest {
  private final AzureDialect azure = new AzureDialect("2024-10-21");

  @ParameterizedTest
  @CsvSource({
      "CHAT_COMPLETIONS, https://res.openai.azure.com/openai/deployments/gpt4o-eu/chat/completions?api-version=2024-10-21",
      "COMPLETIONS, https://res.openai.azure.com/openai/deployments/gpt4o-eu/completions?api-version=2024-10-21",
      "EMBEDDINGS, https://res.openai.azure.com/openai/deployments/gpt4o-eu/embeddings?api-version=2024-10-21",
      "RESPONSES, https://res.openai.azure.com/openai/responses?api-version=2024-10-21"})
  void eachEndpointHasAzuresUrlForTheDeployment(Route route, String url) {
    assertThat(azure.url("https://res.openai.azure.com", route, "gpt4o-eu")).hasToString(url);
  }

  @Test
  void aBaseUrlWithAPathKeepsIt() {
    assertThat(azure.url("https://gw.example.com/azure", Route.CHAT_COMPLETIONS, "d1"))
        .hasToString("https://gw.example.com/azure/openai/deployments/d1/chat/completions?api-version=2024-10-21");
  }

  @Test
  void thereIsNoModelListAndNoUrlWithoutADeployment() {
    assertThat(azure.url("https://res.openai.azure.com", Route.MODELS, null)).isNull();
    assertThat(azure.url("https://res.openai.azure.com", Route.CHAT_COMPLETIONS, null)).isNull();
  }

  @Test
  void theKeyGoesInTheApiKeyHeaderNotAuthorization() {
    Request.Builder request = new Request.Builder().url("https://res.openai.azure.com/");
    azure.authorize(request::header, "azure-secret");
    Request built = request.build();
    assertThat(built.header("api-key")).isEqualTo("azure-secret");
    assertThat(built.header("Authorization")).isNull();
  }

  @Test
  void openAisOwnDialectIsBaseUrlPlusPathWithABearerKey() {
    assertThat(UpstreamDialect.OPENAI.url("https://api.openai.com/v1", Route.RESPONSES, "gpt-4o"))
        .hasToString("https://api.openai.com/v1/responses");
    Request.Builder request = new Request.Builder().url("https://api.openai.com/v1/");
    UpstreamDialect.OPENAI.authorize(request::header, "sk-x");
    assertThat(request.build().header("Authorization")).isEqualTo("Bearer sk-x");
  }
}
