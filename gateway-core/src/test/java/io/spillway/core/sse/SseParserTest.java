package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The incremental parser hands out each event as soon as the bytes that complete it arrive, in
 * whatever pieces they come: a line, a CRLF, even a multi-byte character split across two pieces.
 */
class SseParserTest {
  final List<SseEvent> events = new ArrayList<>();
  final AtomicInteger linesWithoutData = new AtomicInteger();
  final SseParser parser = new SseParser(1024, linesWithoutData::incrementAndGet, true);

  void feed(String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    parser.feed(bytes, 0, bytes.length, events::add);
  }

  @Test
  void anEventIsHandedOutWhenItsBlankLineArrivesAndNotBefore() throws IOException {
    feed("event: response.created\ndata: {\"a\":1}\n");
    assertThat(events).isEmpty();

    feed("\n");

    assertThat(events).containsExactly(new SseEvent("response.created", "{\"a\":1}"));
  }

  @Test
  void everySplitOfTheBytesGivesTheSameEvents() throws IOException {
    String text = "data: {\"t\":\"h\u00e9llo \u2603\"}\r\n\r\n: keep-alive\r\n\r\nevent: e\rdata: 2\r\rdata: [DONE]\n\n";
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    List<SseEvent> whole = new ArrayList<>();
    new SseParser(1024, () -> {}, true).feed(bytes, 0, bytes.length, whole::add);
    assertThat(whole).containsExactly(
        new SseEvent(null, "{\"t\":\"h\u00e9llo \u2603\"}"), new SseEvent("e", "2"), new SseEvent(null, "[DONE]"));

    for (int split = 1; split < bytes.length; split++) {
      List<SseEvent> pieces = new ArrayList<>();
      SseParser fresh = new SseParser(1024, () -> {}, true);
      fresh.feed(bytes, 0, split, pieces::add);
      fresh.feed(bytes, split, bytes.length - split, pieces::add);
      assertThat(pieces).as("split at %d", split).isEqualTo(whole);
    }
  }

  @Test
  void aByteAtATimeGivesTheSameEventsAsOnePiece() throws IOException {
    byte[] bytes = "data: one\ndata: two\n\nid: 7\nretry: 10\ndata: three\n\n".getBytes(StandardCharsets.UTF_8);
    for (byte b : bytes) {
      parser.feed(new byte[] {b}, 0, 1, events::add);
    }
    assertThat(events).containsExactly(new SseEvent(null, "one\ntwo"), new SseEvent(null, "three"));
  }

  @Test
  void commentsAndBlankLinesCountAsLinesWithoutData() throws IOException {
    feed(": keep-alive\n\n: keep-alive\n\n");

    assertThat(events).isEmpty();
    assertThat(linesWithoutData).hasValue(4);
  }

  @Test
  void aLineThatIsNoFieldIsNotAnEventStreamWhenStrict() {
    assertThatThrownBy(() -> feed("<html>\n")).isInstanceOf(SseReader.NotAnEventStreamException.class);
  }

  @Test
  void aLineThatIsNoFieldIsSkippedWhenLenient() throws IOException {
    SseParser lenient = new SseParser(1024, () -> {}, false);
    byte[] bytes = "foo: bar\ndata: x\n\n".getBytes(StandardCharsets.UTF_8);
    lenient.feed(bytes, 0, bytes.length, events::add);

    assertThat(events).containsExactly(new SseEvent(null, "x"));
  }

  @Test
  void aLineLongerThanTheLimitFailsEvenWhenItArrivesInPieces() throws IOException {
    feed("data: " + "x".repeat(1000));

    assertThatThrownBy(() -> feed("x".repeat(100))).isInstanceOf(IOException.class).hasMessageContaining("1024");
  }

  @Test
  void finishHandsOutAnEventWhoseBlankLineNeverCame() throws IOException {
    feed("data: {\"last\":true}");

    assertThat(parser.finish()).isEqualTo(new SseEvent(null, "{\"last\":true}"));
    assertThat(parser.finish()).isNull();
  }
}
