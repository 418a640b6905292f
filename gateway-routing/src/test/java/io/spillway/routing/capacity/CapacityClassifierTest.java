package io.spillway.routing.capacity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamException.Failure;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The capacity table, row by row, against error bodies shaped exactly as the upstreams send them. */
class CapacityClassifierTest {
  static final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  static final CapacityClassifier classifier = new CapacityClassifier(clock);

  static Stream<Arguments> httpAnswers() {
    return Stream.of(
        // status, headers, body file (or null), outcome, rule
        arguments(200, Headers.EMPTY, "chat-stream-first-chunk.json", Outcome.SUCCESS, "success"),
        arguments(201, Headers.EMPTY, null, Outcome.SUCCESS, "success"),
        arguments(503, Headers.EMPTY, "openai-at-capacity.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(429, Headers.EMPTY, "openai-at-capacity.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(503, Headers.EMPTY, "openai-overloaded.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(429, Headers.EMPTY, "openai-model-overloaded.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(529, Headers.EMPTY, "anthropic-overloaded.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(503, Headers.EMPTY, "overloaded-type-only.json", Outcome.CAPACITY, "overloaded_type"),
        arguments(529, Headers.EMPTY, null, Outcome.CAPACITY, "status_529"),
        arguments(503, Headers.of("Retry-After", "30"), "envoy-503.txt", Outcome.CAPACITY, "503_retry_after"),
        arguments(503, Headers.of("retry-after-ms", "800"), null, Outcome.CAPACITY, "503_retry_after"),
        arguments(429, Headers.of("retry-after", "1"), "openai-rate-limit-requests.json", Outcome.RATE_LIMIT,
            "rate_limit_exceeded"),
        arguments(429, Headers.of("retry-after", "2"), "openai-rate-limit-tokens.json", Outcome.RATE_LIMIT,
            "rate_limit_exceeded"),
        arguments(429, Headers.of("retry-after", "20"), "openai-insufficient-quota.json", Outcome.QUOTA,
            "insufficient_quota"),
        arguments(429, Headers.EMPTY, null, Outcome.RATE_LIMIT, "rate_limit"),
        arguments(508, Headers.EMPTY, "spillway-loop-detected.json", Outcome.FINAL, "loop_detected"),
        arguments(508, Headers.EMPTY, null, Outcome.FINAL, "loop_detected"),
        arguments(503, Headers.of("Retry-After", "5"), "spillway-loop-detected.json", Outcome.FINAL, "loop_detected"),
        arguments(503, Headers.EMPTY, "envoy-503.txt", Outcome.TRANSIENT, "server_error"),
        arguments(500, Headers.EMPTY, "openai-server-error.json", Outcome.TRANSIENT, "server_error"),
        arguments(502, Headers.EMPTY, "cloudflare-502.html", Outcome.TRANSIENT, "server_error"),
        arguments(504, Headers.EMPTY, null, Outcome.TRANSIENT, "server_error"),
        arguments(400, Headers.EMPTY, "openai-context-length.json", Outcome.FINAL, "final"),
        arguments(401, Headers.EMPTY, "openai-invalid-api-key.json", Outcome.FINAL, "final"),
        arguments(404, Headers.EMPTY, "openai-model-not-found.json", Outcome.FINAL, "final"),
        arguments(413, Headers.EMPTY, null, Outcome.FINAL, "final"));
  }

  @ParameterizedTest(name = "{0} {2} -> {3} ({4})")
  @MethodSource("httpAnswers")
  void httpAnswerIsClassifiedByTheFirstMatchingRow(
      int status, Headers headers, String bodyFile, Outcome outcome, String rule) {
    GatewayResponse answer = GatewayResponse.buffered(status, headers, bodyFile == null ? new byte[0] : read(bodyFile));

    Verdict verdict = classifier.classify(answer);

    assertThat(verdict.outcome()).isEqualTo(outcome);
    assertThat(verdict.rule()).isEqualTo(rule);
    assertThat(classifier.isCapacity(answer)).isEqualTo(outcome == Outcome.CAPACITY);
  }

  static Stream<Arguments> transportFailures() {
    return Stream.of(
        arguments(Failure.CONNECT_FAILED, Outcome.TRANSIENT, "connect_failed"),
        arguments(Failure.RESET_BEFORE_RESPONSE, Outcome.TRANSIENT, "reset_before_response"),
        arguments(Failure.TIMEOUT, Outcome.TRANSIENT, "timeout"),
        arguments(Failure.INVALID_RESPONSE, Outcome.TRANSIENT, "invalid_response"),
        arguments(Failure.RESET_MID_STREAM, Outcome.TRANSIENT, "stream_broken_before_first_event"),
        arguments(Failure.RESPONSE_TOO_LARGE, Outcome.FINAL, "response_too_large"),
        arguments(Failure.CREDENTIALS_REJECTED, Outcome.TRANSIENT, "credentials_rejected"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("transportFailures")
  void transportFailureIsClassifiedByItsKind(Failure failure, Outcome outcome, String rule) {
    Verdict verdict = classifier.classify(new UpstreamException("cloud", failure, "test", null));

    assertThat(verdict.outcome()).isEqualTo(outcome);
    assertThat(verdict.rule()).isEqualTo(rule);
  }

  @ParameterizedTest
  @EnumSource(Failure.class)
  void everyTransportFailureHasItsOwnRow(Failure failure) {
    Verdict verdict = classifier.classify(new UpstreamException("cloud", failure, "test", null));

    assertThat(verdict.rule()).isNotEqualTo("transport_other");
  }

  static Stream<Arguments> firstEvents() {
    return Stream.of(
        arguments(null, "chat-stream-first-chunk.json", Outcome.SUCCESS, "success"),
        arguments("response.created", "responses-stream-created.json", Outcome.SUCCESS, "success"),
        arguments(null, "openai-at-capacity.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments(null, "openai-server-error.json", Outcome.TRANSIENT, "stream_error_event"),
        arguments("response.failed", "responses-stream-failed.json", Outcome.CAPACITY, "at_capacity_message"),
        arguments("error", "responses-stream-error.json", Outcome.TRANSIENT, "stream_error_event"));
  }

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @MethodSource("firstEvents")
  void streamsFirstEventDecidesWhetherItStarted(String eventName, String dataFile, Outcome outcome, String rule) {
    SseEvent first = new SseEvent(eventName, new String(read(dataFile), StandardCharsets.UTF_8).strip());

    Verdict verdict = classifier.classifyFirstEvent(first);

    assertThat(verdict.outcome()).isEqualTo(outcome);
    assertThat(verdict.rule()).isEqualTo(rule);
  }

  @Test
  void aStreamedAnswerIsJudgedByItsStatusAlone() {
    GatewayResponse stream = GatewayResponse.streamed(200, Headers.EMPTY, new EventStream() {
      @Override
      public SseEvent poll() {
        throw new AssertionError("the classifier must not read a stream");
      }

      @Override
      public void close() {}

      @Override
      public boolean started() {
        return false;
      }
    });

    assertThat(classifier.classify(stream).outcome()).isEqualTo(Outcome.SUCCESS);
  }

  @Test
  void translatedErrorsFromABackendAreClassifiedLikeTheirHttpForm() {
    assertThat(classifier.classify(ErrorKind.CAPACITY.exception("Ollama: server busy")
        .withRetryAfter(Duration.ofSeconds(5))))
        .isEqualTo(new Verdict(Outcome.CAPACITY, "overloaded_type", Duration.ofSeconds(5)));
    assertThat(classifier.classify(ErrorKind.RATE_LIMITED.exception("slow down").withRetryAfter(Duration.ofSeconds(1)))
        .outcome()).isEqualTo(Outcome.RATE_LIMIT);
    assertThat(classifier.classify(ErrorKind.MODEL_NOT_FOUND.exception("no such model")).outcome())
        .isEqualTo(Outcome.FINAL);
    assertThat(classifier.classify(ErrorKind.UNAVAILABLE.exception("down")).outcome())
        .isEqualTo(Outcome.TRANSIENT);
    assertThat(classifier.classify(ErrorKind.LOOP_DETECTED.exception("looped")).outcome())
        .isEqualTo(Outcome.FINAL);
  }

  static Stream<Arguments> retryAfterHeaders() {
    return Stream.of(
        arguments(Headers.of("Retry-After", "120"), Duration.ofSeconds(120)),
        arguments(Headers.of("Retry-After", "1.5"), Duration.ofMillis(1500)),
        arguments(Headers.of("retry-after-ms", "250", "retry-after", "1"), Duration.ofMillis(250)),
        arguments(Headers.of("Retry-After", "Tue, 10 Nov 2026 10:02:00 GMT"), Duration.ofMinutes(2)),
        arguments(Headers.of("Retry-After", "Tue, 10 Nov 2026 09:00:00 GMT"), Duration.ZERO),
        arguments(Headers.of("Retry-After", "soon"), null),
        arguments(Headers.of("Retry-After", "-5"), null),
        arguments(Headers.EMPTY, null));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("retryAfterHeaders")
  void retryAfterIsReadAsSecondsMillisecondsOrHttpDate(Headers headers, Duration expected) {
    Verdict verdict = classifier.classify(GatewayResponse.buffered(503, headers, read("openai-at-capacity.json")));

    assertThat(verdict.retryAfter()).isEqualTo(expected);
  }

  @Test
  void everyRowOfTheTableHasACaseAbove() {
    Set<String> covered = new HashSet<>();
    Stream.of(httpAnswers(), transportFailures(), firstEvents())
        .flatMap(cases -> cases)
        .forEach(arguments -> {
          Object[] values = arguments.get();
          covered.add((String) values[values.length - 1]);
        });
    Set<String> rows = CapacityClassifier.RULES.stream().map(CapacityClassifier.Rule::id).collect(Collectors.toSet());
    rows.remove("transport_other"); // reached only by Failure constants added later; see everyTransportFailureHasItsOwnRow

    assertThat(covered).containsAll(rows);
  }

  static byte[] read(String file) {
    try (InputStream in = CapacityClassifierTest.class.getResourceAsStream("/upstream/" + file)) {
      if (in == null) {
        throw new IllegalArgumentException("missing test resource " + file);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
