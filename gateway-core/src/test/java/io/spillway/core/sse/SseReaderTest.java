package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SseReaderTest {
  private static SseReader reader(String text) {
    return new SseReader(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), 1024);
  }

  @Test
  void readsUnnamedAndTypedEvents() throws IOException {
    SseReader reader = reader("data: {\"a\":1}\n\nevent: response.created\ndata: {\"b\":2}\n\ndata: [DONE]\n\n");
    assertThat(reader.next()).isEqualTo(new SseEvent(null, "{\"a\":1}"));
    assertThat(reader.next()).isEqualTo(new SseEvent("response.created", "{\"b\":2}"));
    assertThat(reader.next().isDone()).isTrue();
    assertThat(reader.next()).isNull();
  }

  @Test
  void joinsMultiLineDataAndSkipsComments() throws IOException {
    SseReader reader = reader(": keep-alive\r\ndata: line one\r\ndata: line two\r\n\r\n");
    assertThat(reader.next().data()).isEqualTo("line one\nline two");
  }

  @Test
  void encodeRoundTrips() throws IOException {
    SseEvent event = new SseEvent("response.output_text.delta", "multi\nline");
    SseReader reader = reader(new String(event.encode(), StandardCharsets.UTF_8));
    assertThat(reader.next()).isEqualTo(event);
  }

  @Test
  void refusesAbsurdlyLongLines() {
    SseReader reader = reader("data: " + "x".repeat(5000) + "\n\n");
    assertThatThrownBy(reader::next).isInstanceOf(IOException.class).hasMessageContaining("longer than");
  }

  @Test
  void eventWithoutTrailingBlankLineIsStillDelivered() throws IOException {
    assertThat(reader("data: last").next().data()).isEqualTo("last");
  }
}
