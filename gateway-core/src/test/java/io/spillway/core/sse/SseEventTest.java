package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SseEventTest {
  @Test
  void aChunkWithAUsageObjectMayCarryUsage() {
    assertThat(SseEvent.data("{\"choices\":[],\"usage\":{\"prompt_tokens\":12}}").mayCarryUsage()).isTrue();
    assertThat(SseEvent.data("{\"choices\":[], \"usage\" :\n {\"prompt_tokens\":12}}").mayCarryUsage()).isTrue();
    assertThat(SseEvent.data("{\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3}}}")
        .mayCarryUsage()).isTrue();
  }

  @Test
  void theNullUsageOfEveryIncludeUsageChunkIsNotUsage() {
    assertThat(SseEvent.data("{\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}").mayCarryUsage())
        .isFalse();
    assertThat(SseEvent.data("{\"choices\":[]}").mayCarryUsage()).isFalse();
  }

  @Test
  void theWordUsageInsideStreamedTextIsNotUsage() {
    assertThat(SseEvent.data("{\"choices\":[{\"delta\":{\"content\":\"see \\\"usage\\\": {\"}}],\"usage\":null}")
        .mayCarryUsage()).isFalse();
    assertThat(SseEvent.DONE.mayCarryUsage()).isFalse();
  }
}
