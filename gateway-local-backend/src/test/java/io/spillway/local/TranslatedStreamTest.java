package io.spillway.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How every local stream ends and fails, whatever the server and the API the client called. */
class TranslatedStreamTest {

  /**
   * A server's answer as scripted objects; the one whose {@code end} is true marks the end, and
   * {@link #NOTHING_YET} is a poll that finds no whole object (until {@link #arrive}).
   */
  static final class Scripted implements UpstreamObjects {
    static final String NOTHING_YET = "nothing yet";
    private final Deque<Object> parts = new ArrayDeque<>();
    private boolean finished;
    private Runnable waiter;
    int closes;

    Scripted(Object... parts) {
      this.parts.addAll(List.of(parts));
    }

    @Override
    public JsonNode poll() {
      if (finished || parts.isEmpty()) {
        return null;
      }
      if (NOTHING_YET.equals(parts.peek())) {
        return PENDING;
      }
      Object part = parts.poll();
      if (part instanceof UpstreamException e) {
        throw e;
      }
      JsonNode object = json((String) part);
      finished = object.path("end").asBoolean(false);
      return object;
    }

    /** The object a poll found missing is here now: the waiting reader is told. */
    void arrive() {
      parts.remove(NOTHING_YET);
      Runnable ready = waiter;
      waiter = null;
      if (ready != null) {
        ready.run();
      }
    }

    @Override
    public void onReady(Runnable action) {
      if (NOTHING_YET.equals(parts.peek())) {
        waiter = action;
      } else {
        action.run();
      }
    }

    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public boolean finished() {
      return finished;
    }

    @Override
    public void close() {
      closes++;
    }
  }

  /** Passes each object's {@code text} on, is whole once one said {@code whole}, and ends with {@code "end"}. */
  static final class Echo implements StreamTranslator {
    private boolean whole;

    @Override
    public List<SseEvent> line(JsonNode object) {
      whole |= object.path("whole").asBoolean(false);
      String text = Json.text(object, "text");
      return text == null ? List.of() : List.of(SseEvent.data(text));
    }

    @Override
    public boolean whole() {
      return whole;
    }

    @Override
    public List<SseEvent> end(JsonNode last) {
      return List.of(SseEvent.data("end after " + last.path("text").asText("-")), SseEvent.DONE);
    }
  }

  static JsonNode json(String text) {
    try {
      return Json.parse(text);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  static TranslatedStream stream(Scripted upstream) {
    return new TranslatedStream("local", "local backend (Test)", upstream, new Echo());
  }

  static List<String> drain(TranslatedStream stream) {
    List<String> data = new ArrayList<>();
    for (SseEvent event = stream.next(); event != null; event = stream.next()) {
      data.add(event.data());
    }
    return data;
  }

  @Test
  void theServersEndMarkerEndsTheStreamWithTheClosingEventsAndReleasesTheServer() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}", "{\"text\":\"b\",\"end\":true}", "{\"text\":\"never read\"}");
    TranslatedStream stream = stream(upstream);

    assertThat(drain(stream)).containsExactly("a", "b", "end after b", "[DONE]");
    assertThat(upstream.closes).isEqualTo(1);
    assertThat(stream.started()).isTrue();
  }

  @Test
  void aWholeAnswerMayStopWithoutTheEndMarker() {
    TranslatedStream stream = stream(new Scripted("{\"text\":\"a\",\"whole\":true}"));

    assertThat(drain(stream)).containsExactly("a", "end after a", "[DONE]");
  }

  @Test
  void anAnswerThatStopsBeforeItIsWholeFailsAsResetMidStream() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}");
    TranslatedStream stream = stream(upstream);

    assertThat(stream.next().data()).isEqualTo("a");
    assertThatThrownBy(stream::next).isInstanceOfSatisfying(UpstreamException.class, e -> {
      assertThat(e.failure()).isEqualTo(UpstreamException.Failure.RESET_MID_STREAM);
      assertThat(e.getMessage()).isEqualTo("The local backend (Test) ended the stream before it was complete");
    });
    assertThat(upstream.closes).isEqualTo(1);
  }

  @Test
  void anErrorObjectFailsTheStreamWithTheServersMessageWhetherTextOrObject() {
    TranslatedStream text = stream(new Scripted("{\"text\":\"a\"}", "{\"error\":\"out of memory\"}"));
    TranslatedStream object = stream(new Scripted("{\"error\":{\"message\":\"overloaded\"}}"));

    text.next();
    assertThatThrownBy(text::next).isInstanceOfSatisfying(UpstreamException.class, e -> {
      assertThat(e.failure()).isEqualTo(UpstreamException.Failure.RESET_MID_STREAM);
      assertThat(e.getMessage()).isEqualTo("The local backend (Test) failed in the middle of the answer: out of memory");
    });
    assertThatThrownBy(object::next).hasMessageEndingWith("failed in the middle of the answer: overloaded");
  }

  @Test
  void aBrokenConnectionFailsTheStreamAndReleasesTheServer() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}", new UpstreamException("local",
        UpstreamException.Failure.RESET_MID_STREAM, "connection reset", null));
    TranslatedStream stream = stream(upstream);

    stream.next();
    assertThatThrownBy(stream::next).isInstanceOf(UpstreamException.class);
    assertThat(upstream.closes).isEqualTo(1);
  }

  @Test
  void aClosedStreamGivesNothingMoreAndReleasesTheServerOnce() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}", "{\"text\":\"b\"}", "{\"end\":true}");
    TranslatedStream stream = stream(upstream);
    stream.next();

    stream.close();
    stream.close();

    assertThat(stream.next()).isNull();
    assertThat(upstream.closes).isEqualTo(1);
  }

  @Test
  void eachEventReadsOnlyTheObjectsItNeeds() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}", "{}", "{\"text\":\"b\"}", "{\"end\":true}");
    TranslatedStream stream = stream(upstream);

    assertThat(stream.next().data()).isEqualTo("a");
    assertThat(upstream.parts).hasSize(3);
    assertThat(stream.next().data()).isEqualTo("b");
    assertThat(upstream.parts).hasSize(1);
  }

  @Test
  void aPollThatFindsNoWholeObjectAnswersPendingAndTheReaderIsToldWhenOneArrives() {
    Scripted upstream = new Scripted("{\"text\":\"a\"}", Scripted.NOTHING_YET, "{\"text\":\"b\",\"end\":true}");
    TranslatedStream stream = stream(upstream);
    List<String> told = new ArrayList<>();

    assertThat(stream.nonBlocking()).isTrue();
    assertThat(stream.poll().data()).isEqualTo("a");
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    stream.onReady(() -> told.add("ready"));
    assertThat(told).isEmpty();

    upstream.arrive();

    assertThat(told).containsExactly("ready");
    assertThat(drain(stream)).containsExactly("b", "end after b", "[DONE]");
  }
}
