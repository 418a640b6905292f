package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A stream that fails after its first byte ends in its own API's error events; the front end adds nothing. */
class StreamErrorFramingTest {
  private static final GatewayException CUT =
      ErrorKind.GATEWAY_TIMEOUT.exception("The stream was cut off").withCode("stream_time_limit");

  @ParameterizedTest
  @EnumSource(value = Route.class, names = {"CHAT_COMPLETIONS", "COMPLETIONS"})
  void chatAndCompletionStreamsEndWithErrorDataThenDone(Route route) {
    EventStream stream = streamServedOn(route);

    assertThat(encoded(stream.errorEvents(CUT))).isEqualTo(
        "data: {\"error\":{\"message\":\"The stream was cut off\",\"type\":\"server_error\",\"param\":null,"
            + "\"code\":\"stream_time_limit\"}}\n\n"
            + "data: [DONE]\n\n");
  }

  @Test
  void responsesStreamEndsWithOneTypedErrorEventAndNoDone() {
    EventStream stream = streamServedOn(Route.RESPONSES);

    assertThat(encoded(stream.errorEvents(CUT))).isEqualTo(
        "event: error\n"
            + "data: {\"type\":\"error\",\"code\":\"stream_time_limit\",\"message\":\"The stream was cut off\","
            + "\"param\":null}\n\n");
  }

  @Test
  void wrapperAroundAResponsesStreamKeepsItsFraming() {
    EventStream wrapped = new ForwardingEventStream(streamServedOn(Route.RESPONSES)) {};

    assertThat(wrapped.errorEvents(CUT)).singleElement().extracting(SseEvent::event).isEqualTo("error");
  }

  @Test
  void responsesStreamPassesItsEventsUnchanged() {
    EventStream stream = streamServedOn(Route.RESPONSES);

    assertThat(stream.next()).isEqualTo(new SseEvent("response.created", "{}"));
    assertThat(stream.next()).isNull();
  }

  private static EventStream streamServedOn(Route route) {
    Pipeline pipeline = new Pipeline(List.of(), request -> CompletableFuture.completedFuture(GatewayResponse.streamed(
        200, Headers.EMPTY, new ListedEventStream(List.of(new SseEvent("response.created", "{}"))))));
    byte[] body = ("{\"model\":\"m\",\"messages\":[],\"prompt\":\"p\",\"input\":\"i\",\"stream\":true}")
        .getBytes(StandardCharsets.UTF_8);
    ServerRequest request = new ServerRequest("POST", route.path(), null,
        Headers.of("content-type", "application/json"), body, "req-1", null, Instant.EPOCH, ClientDisconnect.NEVER);
    GatewayResponse response = new OpenAiEndpoint(route, pipeline).serve(request);
    assertThat(response.isStream()).isTrue();
    return response.stream();
  }

  private static String encoded(List<SseEvent> events) {
    StringBuilder out = new StringBuilder();
    events.forEach(event -> out.append(new String(event.encode(), StandardCharsets.UTF_8)));
    return out.toString();
  }
}
