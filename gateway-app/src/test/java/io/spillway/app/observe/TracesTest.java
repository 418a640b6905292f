package io.spillway.app.observe;

import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.OtlpReceiver;
import io.spillway.app.testing.OtlpReceiver.Received;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Traces end to end: the real gateway exports its spans over OTLP/HTTP to an in-process collector
 * that decodes them with the OTLP proto classes; WireMock plays the cloud and the local server and
 * shows the {@code traceparent} each upstream call carried.
 */
class TracesTest {
  private static final String CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CLIENT_SPAN = "00f067aa0ba902b7";
  private static final String CLIENT_TRACEPARENT = "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01";
  private static final String PROMPT = "a private prompt about payroll";

  private static String tracing(OtlpReceiver receiver) {
    return tracing(receiver, 1.0);
  }

  private static String tracing(OtlpReceiver receiver, double sampleRatio) {
    return """
        traces:
          endpoint: %s
          serviceName: spillway-test
          exportInterval: 100ms
          sampleRatio: %s
        """.formatted(receiver.endpoint(), sampleRatio);
  }

  @ParameterizedTest(name = "local kind {0}")
  @ValueSource(strings = {"ollama", "openai"})
  void aCapacityAnswerThenALocalRetryShowsAsTwoAttemptsUnderTheClientsTrace(String kind) {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver) + "local: { kind: " + kind + " }\n");
        LogCapture logs = new LogCapture()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      String localPath = kind.equals("ollama") ? "/api/chat" : "/v1/chat/completions";
      h.ollama.stubFor(post(localPath).willReturn(kind.equals("ollama")
          ? okJson("""
              {"model":"qwen2.5-coder:7b","created_at":"2026-11-10T10:00:00Z",
               "message":{"role":"assistant","content":"served locally"},
               "done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}""")
          : OpenAiStubs.chatCompletion("served locally")));

      HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", PROMPT, false), "traceparent", CLIENT_TRACEPARENT);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      List<Received> spans = awaitSpans(receiver, CLIENT_TRACE, 3);
      Received request = only(spans, SpanKind.SPAN_KIND_SERVER);
      assertThat(request.parentSpanId()).as("the client's span is the request's parent").isEqualTo(CLIENT_SPAN);
      assertThat(request.name()).isEqualTo("chat gpt-4o");
      assertThat(request.attribute("gen_ai.operation.name")).isEqualTo("chat");
      assertThat(request.attribute("gen_ai.request.model")).isEqualTo("gpt-4o");
      assertThat(request.attribute("gen_ai.response.model")).isNotNull();
      assertThat(request.attribute("gen_ai.provider.name")).isEqualTo(kind);
      assertThat(request.attribute("gen_ai.usage.input_tokens")).isNotNull();
      assertThat(request.attribute("gen_ai.usage.output_tokens")).isNotNull();
      assertThat(request.attribute("gen_ai.response.finish_reasons")).isEqualTo("[stop]");
      assertThat(request.attribute("spillway.backend")).isEqualTo("local");
      assertThat(request.attribute("spillway.tier")).isEqualTo("gold");
      assertThat(request.attribute("spillway.team")).isEqualTo("release");
      assertThat(request.attribute("spillway.degraded")).isEqualTo("[]");
      assertThat(request.attribute("spillway.cache")).isNotNull();
      assertThat(request.attribute("http.response.status_code")).isEqualTo("200");

      List<Received> attempts = spans.stream().filter(s -> s.kind() == SpanKind.SPAN_KIND_CLIENT)
          .sorted(Comparator.comparingLong(s -> s.span().getStartTimeUnixNano())).toList();
      assertThat(attempts).extracting(a -> a.attribute("spillway.backend")).containsExactly("cloud", "local");
      assertThat(attempts).allSatisfy(a -> assertThat(a.parentSpanId()).isEqualTo(request.spanId()));
      Received cloud = attempts.get(0);
      Received local = attempts.get(1);
      assertThat(cloud.attribute("spillway.capacity")).isEqualTo("true");
      assertThat(cloud.attribute("http.response.status_code")).isEqualTo("503");
      assertThat(cloud.attribute("gen_ai.provider.name")).isEqualTo("openai");
      assertThat(local.attribute("http.response.status_code")).isEqualTo("200");
      assertThat(local.attribute("gen_ai.provider.name")).isEqualTo(kind);

      h.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
          .withHeader("traceparent", equalTo("00-" + CLIENT_TRACE + "-" + cloud.spanId() + "-01")));
      h.ollama.verify(postRequestedFor(urlEqualTo(localPath))
          .withHeader("traceparent", equalTo("00-" + CLIENT_TRACE + "-" + local.spanId() + "-01")));

      for (Received span : spans) {
        for (String key : span.attributeKeys()) {
          assertThat(span.attribute(key)).as(key).doesNotContain(PROMPT, "served locally", GatewayHarness.GOLD_KEY,
              GatewayHarness.CLOUD_KEY);
        }
      }
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(logs.lines())
          .anyMatch(line -> line.contains("\"traceId\":\"" + CLIENT_TRACE + "\"")));
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"sk-gold-team-key, gold, release", "sk-silver-team-key, silver, web",
      "sk-bronze-team-key, bronze, sandbox"})
  void aStreamsSpanEndsWithTheStreamAndHoldsItsUsageFinishReasonAndCaller(String key, String tier, String team) {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver))) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hello ", "world")));

      HttpResponse<String> response = h.post("/v1/chat/completions", key,
          GatewayHarness.chatBody("gpt-4o", PROMPT, true), "traceparent", CLIENT_TRACEPARENT);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.body()).contains("[DONE]");
      List<Received> spans = awaitSpans(receiver, CLIENT_TRACE, 2);
      Received request = only(spans, SpanKind.SPAN_KIND_SERVER);
      Received attempt = only(spans, SpanKind.SPAN_KIND_CLIENT);
      assertThat(attempt.parentSpanId()).isEqualTo(request.spanId());
      assertThat(request.attribute("spillway.stream")).isEqualTo("true");
      assertThat(request.attribute("gen_ai.response.model")).isEqualTo("gpt-4o-2024-08-06");
      assertThat(request.attribute("gen_ai.usage.input_tokens")).isEqualTo("12");
      assertThat(request.attribute("gen_ai.usage.output_tokens")).isEqualTo("2");
      assertThat(request.attribute("gen_ai.response.finish_reasons")).isEqualTo("[stop]");
      assertThat(request.attribute("spillway.tier")).isEqualTo(tier);
      assertThat(request.attribute("spillway.team")).isEqualTo(team);
      assertThat(request.attribute("spillway.backend")).isEqualTo("cloud");
      assertThat(request.span().getEndTimeUnixNano()).isGreaterThanOrEqualTo(attempt.span().getEndTimeUnixNano());
    }
  }

  @ParameterizedTest(name = "stream {0}")
  @ValueSource(booleans = {false, true})
  void aResponsesApiAnswerGivesItsStatusAsTheFinishReason(boolean stream) {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver))) {
      h.cloud.stubFor(post("/v1/responses").willReturn(
          stream ? OpenAiStubs.responseStream("Hello ", "world") : OpenAiStubs.response("Hello world")));

      HttpResponse<String> response = h.post("/v1/responses", GatewayHarness.SILVER_KEY,
          "{\"model\":\"gpt-4.1\",\"stream\":" + stream + ",\"input\":\"" + PROMPT + "\"}",
          "traceparent", CLIENT_TRACEPARENT);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      Received request = only(awaitSpans(receiver, CLIENT_TRACE, 2), SpanKind.SPAN_KIND_SERVER);
      assertThat(request.name()).isEqualTo("chat gpt-4.1");
      assertThat(request.attribute("gen_ai.response.model")).isEqualTo("gpt-4.1-2025-04-14");
      assertThat(request.attribute("gen_ai.response.finish_reasons")).isEqualTo("[completed]");
      assertThat(request.attribute("gen_ai.usage.input_tokens")).isEqualTo("36");
      assertThat(request.attribute("gen_ai.usage.output_tokens")).isEqualTo("87");
    }
  }

  @Test
  void aRefusedRequestHasASpanNamingTheErrorAndNoAttempt() {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver))) {
      HttpResponse<String> response = h.post("/v1/chat/completions", "sk-not-a-key",
          GatewayHarness.chatBody("gpt-4o", PROMPT, false), "traceparent", CLIENT_TRACEPARENT);

      assertThat(response.statusCode()).isEqualTo(401);
      Received request = only(awaitSpans(receiver, CLIENT_TRACE, 1), SpanKind.SPAN_KIND_SERVER);
      assertThat(request.attribute("error.type")).isEqualTo("invalid_api_key");
      assertThat(request.attribute("http.response.status_code")).isEqualTo("401");
      assertThat(request.attribute("spillway.tier")).isNull();
      assertThat(receiver.spans()).noneMatch(span -> span.kind() == SpanKind.SPAN_KIND_CLIENT);
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  @Test
  void withoutATraceparentTheGatewayStartsTheTraceAndExportsItAsOtlpProtobuf() {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver))) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

      HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", PROMPT, false));

      assertThat(response.statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).until(() -> receiver.spans().size() >= 2);
      Received request = only(receiver.spans(), SpanKind.SPAN_KIND_SERVER);
      Received attempt = only(receiver.spans(), SpanKind.SPAN_KIND_CLIENT);
      assertThat(request.span().getParentSpanId().isEmpty()).as("a root span").isTrue();
      assertThat(attempt.traceId()).isEqualTo(request.traceId());
      assertThat(request.resourceAttribute("service.name")).isEqualTo("spillway-test");
      assertThat(receiver.contentTypes()).allMatch(type -> type.startsWith("application/x-protobuf"));
      LoggedRequest upstream = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).get(0);
      // The trace-flags byte: sampled (01), and "random" (02, W3C Trace Context level 2) on a trace
      // the gateway started.
      assertThat(upstream.getHeader("traceparent"))
          .isEqualTo("00-" + request.traceId() + "-" + attempt.spanId() + "-03");
    }
  }

  @Test
  void offByDefaultTheClientsTraceparentPassesToTheCloudUnchangedAndNoneIsAdded() {
    try (GatewayHarness h = GatewayHarness.start();
        LogCapture logs = new LogCapture()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

      assertThat(h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", PROMPT, false), "traceparent", CLIENT_TRACEPARENT).statusCode())
          .isEqualTo(200);
      assertThat(h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", "another prompt", false)).statusCode()).isEqualTo(200);

      assertThat(h.config().traces().enabled()).isFalse();
      h.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/chat/completions"))
          .withHeader("traceparent", equalTo(CLIENT_TRACEPARENT)));
      h.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/chat/completions")).withHeader("traceparent", absent()));
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(logs.lines())
          .filteredOn(line -> line.contains("\"requestId\"")).hasSizeGreaterThanOrEqualTo(2));
      assertThat(logs.lines()).noneMatch(line -> line.contains("traceId"));
    }
  }

  @Test
  void aSampleRatioOfZeroRecordsNoNewTraceButFollowsAClientThatSampled() {
    try (OtlpReceiver receiver = new OtlpReceiver();
        GatewayHarness h = GatewayHarness.start(tracing(receiver, 0))) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

      assertThat(h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", PROMPT, false)).statusCode()).isEqualTo(200);
      assertThat(h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", PROMPT, false), "traceparent", CLIENT_TRACEPARENT).statusCode())
          .isEqualTo(200);

      awaitSpans(receiver, CLIENT_TRACE, 2);
      assertThat(receiver.spans()).as("the unsampled request exported nothing")
          .allMatch(span -> span.traceId().equals(CLIENT_TRACE));
      List<LoggedRequest> upstream = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(upstream.get(0).getHeader("traceparent")).as("unsampled, yet passed on")
          .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-02");
      assertThat(upstream.get(1).getHeader("traceparent")).startsWith("00-" + CLIENT_TRACE + "-").endsWith("-01");
    }
  }

  private static List<Received> awaitSpans(OtlpReceiver receiver, String traceId, int count) {
    await().atMost(Duration.ofSeconds(10))
        .until(() -> receiver.spans().stream().filter(s -> s.traceId().equals(traceId)).count() >= count);
    return receiver.spans().stream().filter(s -> s.traceId().equals(traceId)).toList();
  }

  private static Received only(List<Received> spans, SpanKind kind) {
    List<Received> matching = spans.stream().filter(s -> s.kind() == kind).toList();
    assertThat(matching).as("%s spans", kind).hasSize(1);
    return matching.get(0);
  }
}
