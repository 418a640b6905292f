package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An upstream's event keeps the bytes it arrived as and leaves as them when no stage changes it;
 * its fields, decoded only when asked for, are what a plain parse of the text gives.
 */
class SseEventBytesTest {
  private static final String KEEP_ALIVE = ": keep-alive\r\n\r\n";
  private static final List<String> BLOCKS = List.of(
      "id: 1\r\nevent: response.created\r\ndata: {\"type\":\"response.created\"}\r\n\r\n",
      "data: {\"a\":\rdata: 1}\r\r",
      ": a note\ndata:{\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\nretry: 50\n\n",
      "data: {\"t\":\"h\u00e9llo \u2603\"}\r\n\r\n",
      "data: [DONE]\r\n\r\n");

  /** Tricky streams: every line end, several data lines, empty values, fields in any order, no space, Unicode. */
  private static final List<String> CORPUS = List.of(
      String.join("", BLOCKS),
      "data: one\ndata: two\n\nid: 7\nretry: 10\ndata: three\n\n",
      "data\n\ndata:\n\ndata:  two spaces\n\ndata:x\rdata:\r\r",
      "data: {}\nevent: late\nevent: later\n\nevent: no data\n\ndata: {\"a\":1}\n\n",
      "event: \u00e9v\u00e9nement\r\ndata: {\"\u2603\":\"\u00e9\"}\r\n: mid\r\ndata: \r\n\r\n",
      "data: [DONE] \n\ndata: [DONE]\ndata: \n\ndata:[DONE]\n\n",
      "data:  {\"usage\" :\n\ndata: {\"usage\":null,\"x\":\"\\\"usage\\\": {\"}\n\ndata: \t{\"a\":1}\u2003\n\n",
      "data: {\"usage\":\ndata: {\"prompt_tokens\":1}}\n\ndata: {\n\n");

  @Test
  void unchangedEventsLeaveAsTheBytesTheyArrivedAs() throws IOException {
    byte[] stream = (KEEP_ALIVE + String.join("", BLOCKS)).getBytes(StandardCharsets.UTF_8);

    List<SseEvent> events = parse(stream, stream.length, true);

    assertThat(events).hasSize(BLOCKS.size()).allMatch(SseEvent::asArrived);
    for (int i = 0; i < BLOCKS.size(); i++) {
      assertThat(new String(wire(events.get(i)), StandardCharsets.UTF_8)).isEqualTo(BLOCKS.get(i));
      assertThat(events.get(i).encode()).isEqualTo(wire(events.get(i)));
    }
  }

  @Test
  void theBytesOutAreTheBytesInHoweverTheReadsSplitThem() throws IOException {
    String events = String.join("", BLOCKS);
    byte[] stream = (KEEP_ALIVE + events).getBytes(StandardCharsets.UTF_8);
    int afterKeepAlive = KEEP_ALIVE.getBytes(StandardCharsets.UTF_8).length;

    for (boolean keepsReads : new boolean[] {true, false}) {
      for (int split = 1; split < stream.length; split++) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (SseEvent event : parse(stream, split, stream.length - split, keepsReads)) {
          out.writeBytes(wire(event));
        }
        // An event is out once its blank line's CR is in; when the LF of that CRLF comes in the
        // next read, it leads the next event, so events laid end to end are still the stream. Only
        // after a block that is no event (a keep-alive) or after the last one is it seen alone.
        String expected = split == afterKeepAlive - 1 ? "\n" + events
            : split == stream.length - 1 ? events.substring(0, events.length() - 1)
            : events;
        assertThat(new String(out.toByteArray(), StandardCharsets.UTF_8)).as("split at %d", split).isEqualTo(expected);
      }
    }
  }

  @Test
  void anEventIsASliceOfTheReadItArrivedInOnlyWhenTheReadIsTheParsersToKeep() throws IOException {
    byte[] read = "data: {\"n\":1}\n\n".getBytes(StandardCharsets.UTF_8);
    List<SseEvent> kept = new ArrayList<>();
    new SseParser(1024, () -> {}, true, true).feed(read, 0, read.length, kept::add);
    List<SseEvent> copied = new ArrayList<>();
    new SseParser(1024, () -> {}, true, false).feed(read, 0, read.length, copied::add);

    Arrays.fill(read, (byte) 'x');

    assertThat(new String(wire(copied.get(0)), StandardCharsets.UTF_8)).isEqualTo("data: {\"n\":1}\n\n");
    assertThat(kept.get(0).<byte[]>wire((array, offset, length) -> array)).isSameAs(read);
  }

  @Test
  void changedEventsAreEncodedAgain() throws IOException {
    byte[] stream = "event: response.output_text.delta\r\nid: 9\r\ndata: {\"delta\":\"a\"}\r\n\r\n"
        .getBytes(StandardCharsets.UTF_8);
    SseEvent arrived = parse(stream, stream.length, true).get(0);

    SseEvent changed = new SseEvent(arrived.event(), "{\"delta\":\"b\"}\n{\"more\":1}");
    SseEvent unnamed = SseEvent.data("{\"delta\":\"c\"}");

    assertThat(changed.asArrived()).isFalse();
    assertThat(new String(wire(changed), StandardCharsets.UTF_8))
        .isEqualTo("event: response.output_text.delta\ndata: {\"delta\":\"b\"}\ndata: {\"more\":1}\n\n");
    assertThat(new String(wire(unnamed), StandardCharsets.UTF_8)).isEqualTo("data: {\"delta\":\"c\"}\n\n");
    assertThat(changed.encode()).isEqualTo(wire(changed));
  }

  @Test
  void anEventTheStreamEndedInsideOfIsEncodedSoWhatFollowsStaysApart() throws IOException {
    SseParser parser = new SseParser(1024, () -> {}, true, true);
    byte[] read = "data: {\"last\":true}\r\n".getBytes(StandardCharsets.UTF_8);
    parser.feed(read, 0, read.length, event -> {});

    SseEvent last = parser.finish();

    assertThat(last.asArrived()).isFalse();
    assertThat(new String(wire(last), StandardCharsets.UTF_8)).isEqualTo("data: {\"last\":true}\n\n");
  }

  @Test
  void lazilyDecodedFieldsEqualTheEagerParse() throws IOException {
    for (String text : CORPUS) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      List<SseEvent> eager = eagerParse(text);
      for (int size = 1; size <= bytes.length; size++) {
        for (boolean keepsReads : new boolean[] {true, false}) {
          List<SseEvent> lazy = parse(bytes, size, keepsReads);
          assertThat(lazy).as("%s in reads of %d", text, size).hasSameSizeAs(eager);
          for (int i = 0; i < eager.size(); i++) {
            assertSameFields(lazy.get(i), eager.get(i), text + " event " + i + " in reads of " + size);
          }
        }
      }
    }
  }

  @Test
  void theChecksOnTheBytesAnswerAsTheChecksOnTheText() throws IOException {
    for (String text : CORPUS) {
      List<SseEvent> checked = parse(text.getBytes(StandardCharsets.UTF_8), Integer.MAX_VALUE, true);
      List<SseEvent> eager = eagerParse(text);
      for (int i = 0; i < eager.size(); i++) {
        SseEvent lazy = checked.get(i);
        SseEvent made = eager.get(i);
        String as = text + " event " + i;
        assertThat(lazy.isDone()).as(as).isEqualTo(made.isDone());
        assertThat(lazy.mayCarryUsage()).as(as).isEqualTo(made.mayCarryUsage());
        assertThat(lazy.dataLooksLikeJsonObject()).as(as).isEqualTo(made.dataLooksLikeJsonObject());
        assertThat(lazy.dataStartsWith('{')).as(as).isEqualTo(made.dataStartsWith('{'));
        assertThat(lazy.named()).as(as).isEqualTo(made.named());
        assertThat(lazy.nameIs("response.created")).as(as).isEqualTo(made.nameIs("response.created"));
        assertThat(lazy.nameIs("later")).as(as).isEqualTo(made.nameIs("later"));
        assertThat(lazy.nameIs("\u00e9v\u00e9nement")).as(as).isEqualTo(made.nameIs("\u00e9v\u00e9nement"));
        assertThat(UpstreamEvents.isTerminal(lazy)).as(as).isEqualTo(UpstreamEvents.isTerminal(made));
      }
    }
  }

  private static void assertSameFields(SseEvent lazy, SseEvent eager, String as) {
    assertThat(lazy.event()).as(as).isEqualTo(eager.event());
    assertThat(lazy.data()).as(as).isEqualTo(eager.data());
    assertThat(lazy).as(as).isEqualTo(eager).hasSameHashCodeAs(eager);
  }

  /** The events of {@code stream} read in two pieces, the first of {@code first} bytes. */
  private static List<SseEvent> parse(byte[] stream, int first, int rest, boolean keepsReads) throws IOException {
    SseParser parser = new SseParser(1024, () -> {}, true, keepsReads);
    List<SseEvent> events = new ArrayList<>();
    byte[] one = Arrays.copyOfRange(stream, 0, first);
    byte[] two = Arrays.copyOfRange(stream, first, first + rest);
    parser.feed(one, 0, one.length, events::add);
    parser.feed(two, 0, two.length, events::add);
    return events;
  }

  /** The events of {@code stream} read in pieces of {@code size} bytes, each a fresh array. */
  private static List<SseEvent> parse(byte[] stream, int size, boolean keepsReads) throws IOException {
    SseParser parser = new SseParser(1024, () -> {}, true, keepsReads);
    List<SseEvent> events = new ArrayList<>();
    for (int at = 0; at < stream.length; at += size) {
      byte[] read = Arrays.copyOfRange(stream, at, (int) Math.min(stream.length, (long) at + size));
      parser.feed(read, 0, read.length, events::add);
    }
    SseEvent last = parser.finish();
    if (last != null) {
      events.add(last);
    }
    return events;
  }

  private static byte[] wire(SseEvent event) {
    return event.wire((array, offset, length) -> Arrays.copyOfRange(array, offset, offset + length));
  }

  /** The format's rules read off the whole text at once, with strings: the reference. */
  private static List<SseEvent> eagerParse(String text) {
    List<SseEvent> events = new ArrayList<>();
    String name = null;
    StringBuilder data = null;
    for (String line : text.split("\r\n|\r|\n", -1)) {
      if (line.isEmpty()) {
        if (data != null) {
          events.add(new SseEvent(name, data.toString()));
        }
        name = null;
        data = null;
        continue;
      }
      if (line.startsWith(":")) {
        continue;
      }
      int colon = line.indexOf(':');
      String field = colon < 0 ? line : line.substring(0, colon);
      String value = colon < 0 ? "" : line.substring(colon + 1);
      if (value.startsWith(" ")) {
        value = value.substring(1);
      }
      if (field.equals("data")) {
        data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
      } else if (field.equals("event")) {
        name = value;
      }
    }
    return events;
  }
}
