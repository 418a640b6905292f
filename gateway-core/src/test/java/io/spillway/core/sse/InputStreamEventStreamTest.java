package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.UpstreamException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** What the gateway relays from an upstream stream: events with JSON data, nothing else. */
class InputStreamEventStreamTest {
  private final AtomicBoolean released = new AtomicBoolean();

  private InputStreamEventStream stream(String body) {
    return new InputStreamEventStream(
        "cloud", new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)), () -> released.set(true));
  }

  @Test
  void commentsIdsAndRetriesAreSkippedUntilTheNextEvent() {
    InputStreamEventStream stream = stream(": a\n: b\n\nid: 7\nretry: 100\n: c\ndata: {\"n\":1}\n\ndata: [DONE]\n\n");

    assertThat(stream.next().data()).isEqualTo("{\"n\":1}");
    assertThat(stream.next().isDone()).isTrue();
    assertThat(stream.next()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "<html><body>502 Bad Gateway</body></html>\n",
      "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\"}\n",
      "data: {\"n\":1}\n\nhello there\n\n"})
  void aBodyThatIsNotAnEventStreamFailsAsAnInvalidResponse(String body) {
    InputStreamEventStream stream = stream(body);

    assertThatThrownBy(() -> {
      while (stream.next() != null) {
        // drain
      }
    }).isInstanceOfSatisfying(UpstreamException.class,
        e -> assertThat(e.failure()).isEqualTo(UpstreamException.Failure.INVALID_RESPONSE))
        .hasMessageContaining("is not server-sent events");
    assertThat(released).as("the upstream call is released").isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"hello", "{\"truncated\":", "[1,2]", "\"text\"", "<html>"})
  void anEventWhoseDataIsNotAJsonObjectFailsAsAnInvalidResponse(String data) {
    InputStreamEventStream stream = stream("data: {\"n\":1}\n\ndata: " + data + "\n\ndata: [DONE]\n\n");

    assertThat(stream.next().data()).isEqualTo("{\"n\":1}");
    assertThatThrownBy(stream::next).isInstanceOfSatisfying(UpstreamException.class,
        e -> assertThat(e.failure()).isEqualTo(UpstreamException.Failure.INVALID_RESPONSE))
        .hasMessageContaining("not a JSON object");
  }
}
