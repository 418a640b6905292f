package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the gateway shows of a backend's usage (the access log's token counts, the
 * {@code spillway_tokens_total} metric) passes the rule quota accounting charges by: a count that is
 * negative, fractional ({@code 4e18}), past {@code quota.maxReportedTokens}, past a 64-bit integer, or
 * a string makes the whole report read as none, buffered or streamed, in chat's field names and the
 * Responses API's, for every tier. A sane report right after is shown as reported.
 */
class HostileUsageShownTest {
  static final long MAX_REPORTED = 1_000_000;
  /** {prompt, completion} pairs, each with one hostile count. */
  static final List<String[]> HOSTILE = List.of(
      new String[] {"-5", "7"},
      new String[] {"4e18", "4e18"},
      new String[] {"12", "5000000"},
      new String[] {"9223372036854775808", "1"},
      new String[] {"12", "\"99999999\""});

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void absurdUsageIsNeverShownInTheAccessLogNorCountedInTheTokenMetric(String tier) {
    try (LogCapture logs = new LogCapture();
        GatewayHarness gateway = GatewayHarness.start("""
            quota: {maxReportedTokens: %d}
            shaping: {degrade: never}
            """.formatted(MAX_REPORTED))) {
      String key = HostileUsageGatewayTest.key(tier);
      int requests = 0;
      for (String[] counts : HOSTILE) {
        for (boolean responsesApi : new boolean[] {false, true}) {
          for (boolean streamed : new boolean[] {false, true}) {
            JsonNode line = send(gateway, logs, ++requests, key, responsesApi, streamed, counts[0], counts[1]);
            assertThat(line.has("promptTokens") || line.has("completionTokens") || line.has("totalTokens"))
                .as("%s: usage %s/%s (%s, streamed %s) in %s", tier, counts[0], counts[1],
                    responsesApi ? "responses" : "chat", streamed, line).isFalse();
          }
        }
      }
      assertThat(tokensCounted(gateway, tier)).as("spillway_tokens_total for %s", tier).isZero();

      for (boolean responsesApi : new boolean[] {false, true}) {
        for (boolean streamed : new boolean[] {false, true}) {
          JsonNode sane = send(gateway, logs, ++requests, key, responsesApi, streamed, "12", "7");
          assertThat(sane.path("promptTokens").asLong()).as(sane.toString()).isEqualTo(12);
          assertThat(sane.path("completionTokens").asLong()).as(sane.toString()).isEqualTo(7);
        }
      }
      assertThat(tokensCounted(gateway, tier)).isEqualTo(4 * 19);
    }
  }

  /** One request answered with the usage {@code prompt}/{@code completion}; its access-log line. */
  private static JsonNode send(GatewayHarness gateway, LogCapture logs, int nth, String key, boolean responsesApi,
      boolean streamed, String prompt, String completion) {
    String path = responsesApi ? "/v1/responses" : "/v1/chat/completions";
    gateway.cloud.stubFor(post(path).willReturn(answer(responsesApi, streamed, prompt, completion)));
    String body = responsesApi
        ? "{\"model\":\"gpt-4o\",\"stream\":" + streamed + ",\"input\":\"hi\"}"
        : GatewayHarness.chatBody("gpt-4o", "hi", streamed);
    HttpResponse<String> answer = gateway.post(path, key, body);
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(10)).until(() -> logs.accessLines().size() >= nth);
    assertThat(logs.accessLines()).hasSize(nth);
    try {
      return Json.parse(logs.accessLines().get(nth - 1));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static ResponseDefinitionBuilder answer(boolean responsesApi, boolean streamed, String prompt,
      String completion) {
    if (!responsesApi) {
      String usage = "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + "}";
      String body = streamed ? OpenAiStubs.chatStreamBody(true, "ok") : OpenAiStubs.chatCompletionBody("ok", 1, 1);
      body = body.replaceFirst("\"usage\":\\{[^}]*}", Matcher.quoteReplacement("\"usage\":" + usage));
      return streamed
          ? aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body)
          : OpenAiStubs.json(200, body);
    }
    String usage = "{\"input_tokens\":" + prompt + ",\"output_tokens\":" + completion + "}";
    String response = Pattern.compile("\"usage\":\\{\"input_tokens\":36.*?\"total_tokens\":123}", Pattern.DOTALL)
        .matcher(OpenAiStubs.responseBody("ok").replace("\n", " ").strip())
        .replaceFirst(Matcher.quoteReplacement("\"usage\":" + usage));
    assertThat(response).contains(usage);
    if (!streamed) {
      return OpenAiStubs.json(200, response);
    }
    String events = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,"
        + "\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n"
        + "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,"
        + "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"ok\"}\n\n"
        + "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":"
        + response + "}\n\n";
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(events);
  }

  /** The tier's prompt and completion tokens in {@code spillway_tokens_total}, summed. */
  private static long tokensCounted(GatewayHarness gateway, String tier) {
    Pattern series = Pattern.compile("(?m)^spillway_tokens_total\\{([^}]*)} (\\S+)$");
    Matcher m = series.matcher(gateway.get("/metrics", null).body());
    double sum = 0;
    while (m.find()) {
      if (m.group(1).contains("tier=\"" + tier + "\"")) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return (long) sum;
  }
}
