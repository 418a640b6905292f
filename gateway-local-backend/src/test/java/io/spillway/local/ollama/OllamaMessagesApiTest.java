package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.testing.FakeClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The probe learns whether Ollama serves Anthropic's Messages API itself (0.14 and later) with a
 * request Ollama refuses before loading anything, and asks nothing that would generate.
 */
class OllamaMessagesApiTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  private static void ready(String version) {
    ollama.stubFor(get("/api/version").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json").withBody("{\"version\":\"" + version + "\"}")));
    ollama.stubFor(get("/api/tags").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json").withBody("{\"models\":[]}")));
  }

  @Test
  void anOllamaThatRefusesAModellessMessagesRequestInAnthropicsShapeServesTheMessagesApi() {
    ready("0.14.2");
    ollama.stubFor(post("/v1/messages").withRequestBody(matchingJsonPath("$[?(@.model == '')]"))
        .willReturn(aResponse().withStatus(400).withHeader("Content-Type", "application/json").withBody(
            "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"model is required\"}}")));
    OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), FakeClock.at("2026-12-02T06:00:00Z"));

    assertThat(backend.servesMessages()).as("not before a probe").isFalse();
    backend.probe(java.util.List.of("qwen2.5-coder:7b"));

    assertThat(backend.servesMessages()).isTrue();
    ollama.verify(1, postRequestedFor(urlEqualTo("/v1/messages")).withRequestBody(matchingJsonPath("$.messages.length()",
        com.github.tomakehurst.wiremock.client.WireMock.equalTo("0"))));
    ollama.verify(0, postRequestedFor(urlEqualTo("/api/generate")));
  }

  @Test
  void anOlderOllamaWithoutTheRouteIsTranslatedFor() {
    ready("0.12.6");
    ollama.stubFor(post("/v1/messages").willReturn(aResponse().withStatus(404).withBody("404 page not found")));
    OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), FakeClock.at("2026-12-02T06:00:00Z"));

    backend.probe(java.util.List.of("qwen2.5-coder:7b"));

    assertThat(backend.servesMessages()).isFalse();
  }
}
