package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which upstream event ends a stream whole: each API's last event, and nothing else. */
class UpstreamEventsTest {
  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource({
      "message_stop, true",
      "response.completed, true",
      "response.failed, true",
      "error, true",
      "message_delta, false",
      "content_block_stop, false",
      "ping, false"})
  void eachApisLastEventEndsTheStream(String name, boolean terminal) {
    assertThat(UpstreamEvents.isTerminal(new SseEvent(name, "{\"type\":\"" + name + "\"}"))).isEqualTo(terminal);
  }
}
