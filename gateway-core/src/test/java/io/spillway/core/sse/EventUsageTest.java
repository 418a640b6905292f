package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.tokens.ReportedCount;
import io.spillway.core.json.Json;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** A stream's usage is read only when every count in it is one quota accounting would charge. */
class EventUsageTest {
  static final long MAX = 1_000_000;

  private static SseEvent chat(String usage) {
    return new SseEvent(null, "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":" + usage + "}");
  }

  private static SseEvent responses(String usage) {
    return new SseEvent("response.completed", "{\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"usage\":"
        + usage + "}}");
  }

  private static SseEvent anthropicStart(String usage) {
    return new SseEvent("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":" + usage + "}}");
  }

  @Test
  void aSaneReportIsReadInEachApisFieldNames() {
    assertThat(EventUsage.of(chat("{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}"), MAX))
        .isEqualTo(new RequestOutcome.Usage(12, 7));
    assertThat(EventUsage.of(responses("{\"input_tokens\":12,\"output_tokens\":7,\"total_tokens\":19}"), MAX))
        .isEqualTo(new RequestOutcome.Usage(12, 7));
    assertThat(EventUsage.of(anthropicStart("{\"input_tokens\":3,\"cache_creation_input_tokens\":4,"
        + "\"cache_read_input_tokens\":5,\"output_tokens\":1}"), MAX)).isEqualTo(new RequestOutcome.Usage(12, 1));
    assertThat(EventUsage.of(chat("{\"prompt_tokens\":" + MAX + ",\"completion_tokens\":0}"), MAX))
        .as("the bound itself is allowed").isEqualTo(new RequestOutcome.Usage(MAX, 0));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', value = {
      "negative       | -5",
      "fractional     | 4e18",
      "fractional     | 12.5",
      "too_large      | 1000001",
      "too_large      | 9223372036854775808",
      "string         | \"99999999\"",
      "not_a_number   | true"})
  void oneHostileCountMakesTheWholeReportReadAsNone(String reason, String count) throws Exception {
    assertThat(ReportedCount.refusal(Json.parse(count), MAX)).isEqualTo(reason);
    assertThat(EventUsage.of(chat("{\"prompt_tokens\":12,\"completion_tokens\":" + count + "}"), MAX)).isNull();
    assertThat(EventUsage.of(chat("{\"prompt_tokens\":" + count + ",\"completion_tokens\":7}"), MAX)).isNull();
    assertThat(EventUsage.of(responses("{\"input_tokens\":12,\"output_tokens\":" + count + "}"), MAX)).isNull();
    assertThat(EventUsage.of(responses("{\"input_tokens\":12,\"output_tokens\":7,\"total_tokens\":" + count + "}"),
        MAX)).isNull();
    assertThat(EventUsage.of(anthropicStart("{\"input_tokens\":3,\"cache_read_input_tokens\":" + count + "}"), MAX))
        .isNull();
    assertThat(EventUsage.ofUsage(Json.parse("{\"prompt_tokens\":" + count + "}"), MAX)).as("a buffered answer's")
        .isNull();
  }

  @Test
  void sumsOfCountsWithinTheBoundCannotWrap() {
    RequestOutcome.Usage usage = EventUsage.of(anthropicStart("{\"input_tokens\":" + Long.MAX_VALUE / 2
        + ",\"cache_read_input_tokens\":" + Long.MAX_VALUE / 2 + ",\"cache_creation_input_tokens\":"
        + Long.MAX_VALUE / 2 + "}"), Long.MAX_VALUE / 2);
    assertThat(usage).isNotNull();
    assertThat(usage.promptTokens()).isPositive();
  }
}
