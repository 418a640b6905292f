package io.spillway.routing.capacity;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.TestBackends;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each answer is judged once, where it leaves its backend; whoever looks at it later reads that verdict. */
class JudgingBackendTest {
  private final CapacityClassifier classifier = new CapacityClassifier(FakeClock.at("2026-11-10T10:00:00Z"));

  private static final GatewayResponse AT_CAPACITY = GatewayResponse.json(503,
      "{\"error\":{\"message\":\"The model is at capacity\",\"type\":\"server_error\",\"param\":null,\"code\":null}}"
          .getBytes(StandardCharsets.UTF_8));

  @Test
  void bufferedAnswerIsJudgedOnceAndItsVerdictIsReadLater() {
    GatewayRequest request = request();
    GatewayResponse answer = Blocking.await(new JudgingBackend(answering(AT_CAPACITY), classifier).callAsync(request));

    Verdict recorded = request.attribute(JudgingBackend.JUDGED).verdict();
    assertThat(recorded.outcome()).isEqualTo(Outcome.CAPACITY);
    assertThat(classifier.verdictOn(request, answer)).isSameAs(recorded);
    assertThat(classifier.verdictOn(request, answer)).isSameAs(recorded);
  }

  @Test
  void verdictOnAnEarlierAnswerDoesNotCountForAnother() {
    GatewayRequest request = request();
    Blocking.await(new JudgingBackend(answering(AT_CAPACITY), classifier).callAsync(request));
    GatewayResponse other = GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));

    assertThat(classifier.verdictOn(request, other).outcome()).isEqualTo(Outcome.SUCCESS);
  }

  @Test
  void answerNoJudgeSawIsJudgedWhenAsked() {
    assertThat(classifier.verdictOn(request(), AT_CAPACITY).outcome()).isEqualTo(Outcome.CAPACITY);
  }

  @Test
  void streamIsLeftForItsFirstEventToDecide() {
    GatewayRequest request = request();
    Blocking.await(new JudgingBackend(answering(GatewayResponse.streamed(200, Headers.EMPTY, new ListedEventStream(List.of()))),
        classifier).callAsync(request));

    assertThat(request.attribute(JudgingBackend.JUDGED)).isNull();
  }

  private static Backend answering(GatewayResponse response) {
    return TestBackends.blocking(BackendKind.CLOUD, request -> response);
  }

  private static GatewayRequest request() {
    return GatewayRequest.create("req-1", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(), null,
        java.time.Instant.EPOCH);
  }
}
