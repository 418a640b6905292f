package io.spillway.core.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class ErrorMapperTest {

  @Test
  void failureBecomesOpenAiErrorBodyWithItsKindsStatus() {
    GatewayResponse response =
        ErrorMapper.toResponse(ErrorKind.MODEL_NOT_FOUND.exception("The model 'x' does not exist", "model"));

    assertThat(response.status()).isEqualTo(404);
    assertThat(response.headers().get("content-type")).isEqualTo("application/json");
    assertThat(response.headers().get("retry-after")).isNull();
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo(
        "{\"error\":{\"message\":\"The model 'x' does not exist\",\"type\":\"invalid_request_error\","
            + "\"param\":\"model\",\"code\":\"model_not_found\"}}");
  }

  @ParameterizedTest
  @EnumSource(value = ErrorKind.class, names = {"RATE_LIMITED", "QUOTA_EXCEEDED", "QUEUE_TIMEOUT", "CAPACITY",
      "UNAVAILABLE"})
  void tooManyOrUnavailableWithoutOwnWaitAsksForOneSecond(ErrorKind kind) {
    GatewayResponse response = ErrorMapper.toResponse(kind.exception("busy"));

    assertThat(response.headers().get("retry-after")).isEqualTo("1");
  }

  @ParameterizedTest
  @EnumSource(value = ErrorKind.class, names = {"INVALID_REQUEST", "INTERNAL", "BAD_GATEWAY", "GATEWAY_TIMEOUT"})
  void otherFailuresWithoutOwnWaitCarryNoRetryAfter(ErrorKind kind) {
    assertThat(ErrorMapper.toResponse(kind.exception("no")).headers().get("retry-after")).isNull();
  }

  @ParameterizedTest
  @CsvSource({"PT0.2S, 1", "PT1S, 1", "PT1.001S, 2", "PT42S, 42", "PT0S, 1"})
  void ownWaitIsSentInWholeSecondsRoundedUp(Duration wait, String header) {
    GatewayResponse response = ErrorMapper.toResponse(ErrorKind.RATE_LIMITED.exception("slow down").withRetryAfter(wait));

    assertThat(response.headers().get("retry-after")).isEqualTo(header);
  }

  @Test
  void unexpectedFailureIsA500PointingAtTheLogAndSayingNothingOfItsCause() {
    GatewayResponse response = ErrorMapper.toResponse(
        new IllegalStateException("password=hunter2"), "Spillway failed to handle the request", "req-7");

    assertThat(response.status()).isEqualTo(500);
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo(
        "{\"error\":{\"message\":\"Spillway failed to handle the request; see its log for req-7\","
            + "\"type\":\"server_error\",\"param\":null,\"code\":\"internal_error\"}}");
  }

  @Test
  void errorThrownAsSuchMapsAsItself() {
    GatewayResponse response = ErrorMapper.toResponse(
        (Throwable) ErrorKind.LOOP_DETECTED.exception("looped"), "unused", "req-8");

    assertThat(response.status()).isEqualTo(508);
  }

  @Test
  void kindFactoryTakesTheKindsCodeAndCopiesChangeOnlyWhatTheyName() {
    GatewayException base = ErrorKind.UNAVAILABLE.exception("full", "model");
    GatewayException copy = base.withCode("queue_full").withRetryAfter(Duration.ofSeconds(3));

    assertThat(base.code()).isEqualTo("service_unavailable");
    assertThat(base.retryAfter()).isNull();
    assertThat(copy.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
    assertThat(copy.getMessage()).isEqualTo("full");
    assertThat(copy.param()).isEqualTo("model");
    assertThat(copy.code()).isEqualTo("queue_full");
    assertThat(copy.retryAfter()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void headersAFailureCarriesAreWrittenAfterRetryAfterInOrderAndSurviveCopies() {
    GatewayException limited = ErrorKind.RATE_LIMITED.exception("slow down")
        .withHeader("x-ratelimit-limit-requests", "50")
        .withHeader("x-ratelimit-remaining-requests", "0")
        .withRetryAfter(Duration.ofMillis(1200));

    var answer = ErrorMapper.toResponse(limited);

    assertThat(answer.status()).isEqualTo(429);
    assertThat(answer.headers().get("retry-after")).isEqualTo("2");
    assertThat(answer.headers().get("x-ratelimit-limit-requests")).isEqualTo("50");
    assertThat(answer.headers().get("x-ratelimit-remaining-requests")).isEqualTo("0");
    assertThat(limited.withCode("other").headers()).containsKeys("x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests");
  }
}
