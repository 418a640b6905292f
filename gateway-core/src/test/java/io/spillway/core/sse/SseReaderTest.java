package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

  @ParameterizedTest(name = "{0} bytes per read")
  @ValueSource(ints = {1, 2, 3, 7, 4096})
  void eventsSplitAnywhereAcrossReadsParseTheSame(int bytesPerRead) throws IOException {
    String text = "data: {\"content\":\"h\u00e9llo \u4e16\u754c \ud83d\ude00\"}\r\n\r\n"
        + ": comment\revent: response.output_text.delta\rdata: one\rdata\rdata: two\r\r"
        + "data: " + "y".repeat(3000) + "\n\n"
        + "data: [DONE]\n\n";
    SseReader reader = new SseReader(trickle(text.getBytes(StandardCharsets.UTF_8), bytesPerRead), 8192);

    assertThat(reader.next()).isEqualTo(SseEvent.data("{\"content\":\"h\u00e9llo \u4e16\u754c \ud83d\ude00\"}"));
    assertThat(reader.next()).isEqualTo(new SseEvent("response.output_text.delta", "one\n\ntwo"));
    assertThat(reader.next().data()).hasSize(3000);
    assertThat(reader.next().isDone()).isTrue();
    assertThat(reader.next()).isNull();
  }

  @Test
  void encodedChunksRoundTripIncludingNonAscii() throws IOException {
    SseEvent chunk = SseEvent.data("{\"delta\":\"gr\u00fc\u00dfe \ud83d\ude00\"}");
    assertThat(new String(chunk.encode(), StandardCharsets.UTF_8))
        .isEqualTo("data: {\"delta\":\"gr\u00fc\u00dfe \ud83d\ude00\"}\n\n");
    assertThat(reader(new String(chunk.encode(), StandardCharsets.UTF_8)).next()).isEqualTo(chunk);
  }

  /** A stream that hands out at most {@code perRead} bytes per read, like a slow socket. */
  private static InputStream trickle(byte[] bytes, int perRead) {
    return new InputStream() {
      private int position;

      @Override
      public int read() {
        return position < bytes.length ? bytes[position++] & 0xff : -1;
      }

      @Override
      public int read(byte[] into, int offset, int length) {
        if (position == bytes.length) {
          return -1;
        }
        int count = Math.min(Math.min(length, perRead), bytes.length - position);
        System.arraycopy(bytes, position, into, offset, count);
        position += count;
        return count;
      }
    };
  }
}
