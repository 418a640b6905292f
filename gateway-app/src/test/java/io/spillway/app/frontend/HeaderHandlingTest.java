package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.matching;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.Version;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What crosses the gateway in each direction, and what never does. */
class HeaderHandlingTest {
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void stub() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
  }

  @Test
  void clientKeyIsReplacedByTheCloudKey() {
    harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("Authorization", equalTo("Bearer " + GatewayHarness.CLOUD_KEY)));
    assertThat(harness.cloud.getAllServeEvents().get(0).getRequest().getBodyAsString()).doesNotContain(GOLD_KEY);
    assertThat(harness.cloud.getAllServeEvents().get(0).getRequest().getAllHeaderKeys())
        .noneMatch(name -> harness.cloud.getAllServeEvents().get(0).getRequest().getHeader(name).contains(GOLD_KEY));
  }

  @Test
  void everyUpstreamAttemptGetsAFreshRequestIdAndTheClientKeepsItsOwn() {
    HttpResponse<String> first = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false),
        "x-request-id", "client-trace-42");
    HttpResponse<String> second = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false),
        "x-request-id", "client-trace-42");

    assertThat(first.headers().firstValue("x-request-id")).hasValue("client-trace-42");
    assertThat(second.headers().firstValue("x-request-id")).hasValue("client-trace-42");
    List<LoggedRequest> upstream = harness.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
    assertThat(upstream).hasSize(2);
    String id1 = upstream.get(0).getHeader("X-Request-ID");
    String id2 = upstream.get(1).getHeader("X-Request-ID");
    assertThat(id1).isNotEqualTo("client-trace-42").isNotEqualTo(id2).startsWith("req_");
    assertThat(upstream.get(0).getHeader("X-Client-Request-ID")).isEqualTo("client-trace-42");
  }

  @Test
  void aResponseWithoutClientIdGetsAGeneratedOne() {
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    assertThat(response.headers().firstValue("x-request-id")).hasValueSatisfying(id -> assertThat(id).startsWith("req_"));
  }

  @Test
  void upstreamSeesSpillwaysUserAgent() {
    harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false), "User-Agent", "OpenAI/Python 1.50");
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("User-Agent", equalTo("spillway/" + Version.VERSION)));
  }

  @Test
  void hopByHopAndCredentialHeadersAreDropped() {
    harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false),
        "Cookie", "session=abc", "X-Forwarded-Host", "evil.example", "OpenAI-Beta", "assistants=v2");
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("Cookie", absent())
        .withHeader("X-Forwarded-Host", absent())
        .withHeader("OpenAI-Beta", equalTo("assistants=v2")));
  }

  @Test
  void unknownFieldsAndToolTypesPassThroughUntouched() {
    String body = """
        {"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],
         "some_future_field":{"nested":[1,2,{"x":true}]},
         "tools":[{"type":"web_search_preview_2030","search_context_size":"high"}],
         "temperature":0.7000}
        """;
    harness.post("/v1/chat/completions", GOLD_KEY, body);
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions")).withRequestBody(equalToJson(body)));
    assertThat(harness.cloud.getAllServeEvents().get(0).getRequest().getBodyAsString()).isEqualTo(body);
  }

  @Test
  void upstreamRequestIdIsReportedSeparately() {
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    assertThat(response.headers().firstValue("x-upstream-request-id")).hasValue("req_upstream_1");
    assertThat(response.headers().firstValue("x-request-id")).hasValueSatisfying(id -> assertThat(id).matches("req_[0-9a-f]{24}"));
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions")).withHeader("X-Request-ID", matching("req_[0-9a-f]{24}")));
  }
}
