package io.spillway.core.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorDialect;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.OpenAiError;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import java.time.Duration;

/**
 * The one place a failure becomes what the client sees (as Armeria's {@code ServerErrorHandler}):
 * the OpenAI error body {@code {"error":{"message","type","param","code"}}} (or, for a client of
 * Anthropic's Messages API, the same failure in that API's shape: {@link ErrorDialect}), the status of its
 * {@link ErrorKind}, and {@code Retry-After}. Stages throw; the front end maps what reaches it, and a
 * stage that must put its own headers on an error answer (the router's backend, the rate limiter's
 * {@code x-ratelimit-*}) maps through here too, so every error answer has the same shape.
 *
 * <p>Anything that is not a {@link GatewayException} is a bug: it becomes a 500 {@code internal_error}
 * whose message points at the log by request id and says nothing else (the cause may hold secrets).
 * A streamed answer that fails after its first event is framed by its own stream
 * ({@link io.spillway.core.sse.EventStream#errorEvents}). Stateless and thread-safe.
 */
public final class ErrorMapper {
  /** The wait a 429 or 503 answer asks for when the failure did not say how long. */
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  private ErrorMapper() {}

  /**
   * {@code e} as the client's answer: error body, matching status, {@code Retry-After} if any, and
   * the headers the failure carries ({@code x-ratelimit-*} of a rate limit).
   */
  public static GatewayResponse toResponse(GatewayException e) {
    return toResponse(e, ErrorDialect.OPENAI);
  }

  /**
   * {@code e} as the answer of a client speaking {@code dialect}: the same status and headers as
   * {@link #toResponse(GatewayException)}, the body in that API's error shape.
   */
  public static GatewayResponse toResponse(GatewayException e, ErrorDialect dialect) {
    Headers.Builder headers = Headers.builder().add("content-type", GatewayResponse.JSON);
    Duration retryAfter = retryAfter(e);
    if (retryAfter != null) {
      headers.add("retry-after", Long.toString(retryAfterSeconds(retryAfter)));
    }
    e.headers().forEach(headers::set);
    byte[] body = dialect == ErrorDialect.OPENAI ? body(e.toError()) : Json.toBytes(dialect.body(e));
    return GatewayResponse.buffered(e.status(), headers.build(), body);
  }

  /**
   * The OpenAI error body a client reads, {@code {"error":{"message","type","param","code"}}}: the
   * one place such a body is written ({@code ArchitectureTest} holds every other class to it).
   */
  public static byte[] body(OpenAiError error) {
    return error.toBytes();
  }

  /** {@code e}'s OpenAI error body as a JSON tree (a stream's error event carries it). */
  public static ObjectNode json(GatewayException e) {
    return e.toError().toJson();
  }

  /**
   * Any failure as the client's answer: a {@link GatewayException} as itself, anything else as the
   * 500 of {@link #internal}. Logging the unexpected is the caller's job, once, with its cause.
   *
   * @param what what failed, completing "... ; see its log for {requestId}"
   */
  public static GatewayResponse toResponse(Throwable failure, String what, String requestId) {
    return toResponse(failure instanceof GatewayException e ? e : internal(what, requestId));
  }

  /** The 500 for a bug: "{what}; see its log for {requestId}", nothing of the cause. */
  public static GatewayException internal(String what, String requestId) {
    return ErrorKind.INTERNAL.exception(what + "; see its log for " + requestId);
  }

  /** The failure's own wait, else {@link #DEFAULT_RETRY_AFTER} for a 429 or 503, else null. */
  public static Duration retryAfter(GatewayException e) {
    if (e.retryAfter() != null) {
      return e.retryAfter();
    }
    return e.status() == 429 || e.status() == 503 ? DEFAULT_RETRY_AFTER : null;
  }

  /** Whole seconds, rounded up, at least 1: what {@code Retry-After} carries. */
  public static long retryAfterSeconds(Duration retryAfter) {
    long seconds = retryAfter.toSeconds() + (retryAfter.toNanosPart() > 0 ? 1 : 0);
    return Math.max(1, seconds);
  }
}
