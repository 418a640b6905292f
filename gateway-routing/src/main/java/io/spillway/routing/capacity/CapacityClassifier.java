package io.spillway.routing.capacity;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamException.Failure;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Decides what an upstream answer means for routing: the one table behind the breaker and
 * request-level failover (Spillway's counterpart of Armeria's {@code CircuitBreakerRule}).
 *
 * <p>The table is an ordered list of {@link Rule rows}; the first row whose predicate holds decides.
 * A row looks at the answer's status, its headers ({@code Retry-After}) and its OpenAI-style error
 * body ({@code error.type}, {@code error.code}, {@code error.message}), or at the kind of transport
 * failure when there was no answer at all. {@link #RULES} is the whole policy; docs/failover.md shows
 * it as a table and the tests walk it row by row.
 *
 * <p>Thread-safe and stateless apart from the clock used to read HTTP-date {@code Retry-After} values.
 */
public final class CapacityClassifier {
  /** Error bodies larger than this are not parsed: real error bodies are a few hundred bytes. */
  private static final int MAX_ERROR_BODY = 64 * 1024;

  private static final Pattern CAPACITY_MESSAGE =
      Pattern.compile("\\b(at capacity|over capacity|overloaded)\\b", Pattern.CASE_INSENSITIVE);
  private static final Set<String> CAPACITY_CODES =
      Set.of("overloaded", "overloaded_error", "server_overloaded", "model_at_capacity", "engine_overloaded");

  /** The table, in order. The first matching row decides. */
  public static final List<Rule> RULES = List.of(
      Rule.of("success", Outcome.SUCCESS,
          "2xx answer", a -> a.isHttp() && a.status() / 100 == 2 && !a.streamError()),
      Rule.of("connect_failed", Outcome.TRANSIENT,
          "connection refused, DNS failure, no route", a -> a.failure() == Failure.CONNECT_FAILED),
      Rule.of("reset_before_response", Outcome.TRANSIENT,
          "connection closed before any response byte", a -> a.failure() == Failure.RESET_BEFORE_RESPONSE),
      Rule.of("timeout", Outcome.TRANSIENT,
          "no answer within cloud.timeout", a -> a.failure() == Failure.TIMEOUT),
      Rule.of("invalid_response", Outcome.TRANSIENT,
          "an answer that is not HTTP", a -> a.failure() == Failure.INVALID_RESPONSE),
      Rule.of("stream_broken_before_first_event", Outcome.TRANSIENT,
          "stream broke off before its first event",
          a -> a.failure() == Failure.RESET_MID_STREAM),
      Rule.of("credentials_rejected", Outcome.TRANSIENT,
          "401 for the gateway's own upstream key: nothing ran there",
          a -> a.failure() == Failure.CREDENTIALS_REJECTED),
      Rule.of("response_too_large", Outcome.FINAL,
          "answer larger than cloud.maxResponseSize", a -> a.failure() == Failure.RESPONSE_TOO_LARGE),
      Rule.of("transport_other", Outcome.TRANSIENT,
          "any other transport failure", a -> a.failure() != null),
      Rule.of("insufficient_quota", Outcome.QUOTA,
          "429 with error code or type insufficient_quota",
          a -> a.status() == 429 && (a.codeIs("insufficient_quota") || a.typeIs("insufficient_quota"))),
      Rule.of("rate_limit_exceeded", Outcome.RATE_LIMIT,
          "429 with error code rate_limit_exceeded", a -> a.status() == 429 && a.codeIs("rate_limit_exceeded")),
      Rule.of("loop_detected", Outcome.FINAL,
          "508, or a 5xx whose error code is loop_detected: a gateway further on refused a request that looped"
              + " (its Via header); final, never retried on local, never counted by the breaker",
          a -> a.isHttp() && (a.status() == 508 || a.status() >= 500 && a.codeIs("loop_detected"))),
      Rule.of("at_capacity_message", Outcome.CAPACITY,
          "503 or 429 (or an error as a stream's first event) saying 'at capacity' or 'overloaded'",
          a -> (a.status() == 503 || a.status() == 429 || a.status() == 529 || a.streamError())
              && a.message() != null && CAPACITY_MESSAGE.matcher(a.message()).find()),
      Rule.of("overloaded_type", Outcome.CAPACITY,
          "503, 429 or 529 whose error type or code says overloaded",
          a -> (a.status() == 503 || a.status() == 429 || a.status() == 529 || a.streamError())
              && (CAPACITY_CODES.contains(lower(a.type())) || CAPACITY_CODES.contains(lower(a.code())))),
      Rule.of("status_529", Outcome.CAPACITY,
          "529 (overloaded, as Anthropic-style gateways send)", a -> a.status() == 529),
      Rule.of("503_retry_after", Outcome.CAPACITY,
          "any 503 with Retry-After", a -> a.status() == 503 && a.hasRetryAfter()),
      Rule.of("rate_limit", Outcome.RATE_LIMIT,
          "any other 429", a -> a.status() == 429),
      Rule.of("stream_error_event", Outcome.TRANSIENT,
          "any other error as a stream's first event", Answer::streamError),
      Rule.of("server_error", Outcome.TRANSIENT,
          "any other 5xx (500, 502, 504, 503 without Retry-After)", a -> a.status() >= 500),
      Rule.of("final", Outcome.FINAL,
          "anything else (4xx)", a -> true));

  private final Clock clock;

  public CapacityClassifier(Clock clock) {
    this.clock = clock;
  }

  /**
   * Classifies an answer. For a streamed response only the status counts (a 2xx stream is a
   * success until its first event says otherwise: see {@link #classifyFirstEvent}).
   */
  public Verdict classify(GatewayResponse response) {
    Answer answer;
    if (response.isStream() || response.isSuccessful()) {
      answer = new Answer(response.status(), response.headers(), null, null, null, null, false);
    } else {
      answer = fromErrorBody(response.status(), response.headers(), errorObject(response.body()), false);
    }
    return decide(answer);
  }

  /** Classifies a failure a backend threw instead of answering (transport failure or translated error). */
  public Verdict classify(GatewayException e) {
    if (e instanceof UpstreamException upstream) {
      return decide(new Answer(0, Headers.EMPTY, null, null, null, upstream.failure(), false));
    }
    Headers headers = e.retryAfter() == null ? Headers.EMPTY
        : Headers.of("retry-after-ms", Long.toString(e.retryAfter().toMillis()));
    return decide(new Answer(e.status(), headers, e.kind().type(), e.code(), e.getMessage(), null, false));
  }

  /**
   * Classifies a stream's first event: {@link Outcome#SUCCESS} unless it is an error (OpenAI's
   * {@code {"error":{...}}} chunk, a Responses API {@code error} or {@code response.failed} event),
   * in which case the stream failed before anything useful was sent and the body rules decide.
   */
  public Verdict classifyFirstEvent(SseEvent event) {
    JsonNode error = streamError(event);
    if (error == null) {
      return decide(new Answer(200, Headers.EMPTY, null, null, null, null, false));
    }
    return decide(fromErrorBody(200, Headers.EMPTY, error, true));
  }

  /**
   * The verdict on {@code answer} to {@code request}: the one a {@link JudgingBackend} recorded when
   * the backend gave this answer, or, for an answer no judge saw, judged now.
   */
  public Verdict verdictOn(GatewayRequest request, GatewayResponse answer) {
    JudgingBackend.Judged judged = request.attribute(JudgingBackend.JUDGED);
    return judged != null && judged.answer() == answer ? judged.verdict() : classify(answer);
  }

  /** Whether an answer is a capacity answer (for metrics that observe backends from outside). */
  public boolean isCapacity(GatewayResponse response) {
    return classify(response).outcome() == Outcome.CAPACITY;
  }

  private Verdict decide(Answer answer) {
    for (Rule rule : RULES) {
      if (rule.when().test(answer)) {
        return new Verdict(rule.outcome(), rule.id(), RetryAfter.from(answer.headers(), clock));
      }
    }
    throw new AssertionError("the last rule matches everything");
  }

  private static Answer fromErrorBody(int status, Headers headers, JsonNode error, boolean streamError) {
    if (error == null) {
      return new Answer(status, headers, null, null, null, null, streamError);
    }
    if (error.isTextual()) {
      return new Answer(status, headers, null, null, error.textValue(), null, streamError);
    }
    return new Answer(status, headers, text(error, "type"), text(error, "code"), text(error, "message"), null,
        streamError);
  }

  /** The error object of an error body: {@code error} when it is an object or a string, else the root. */
  private static JsonNode errorObject(byte[] body) {
    if (body == null || body.length == 0 || body.length > MAX_ERROR_BODY) {
      return null;
    }
    JsonNode root;
    try {
      root = Json.parse(body);
    } catch (IOException e) {
      return null;
    }
    if (root == null || !root.isObject()) {
      return null;
    }
    JsonNode error = root.get("error");
    if (error != null && (error.isObject() || error.isTextual())) {
      return error;
    }
    return root;
  }

  private static JsonNode streamError(SseEvent event) {
    if (event.isDone()) {
      return null;
    }
    if (!event.nameIs("error") && !event.nameIs("response.failed")
        && !event.mayContain("\"error\"") && !event.mayContain("response.failed")) {
      return null; // every error shape below names "error" or response.failed: no decoding, no parse for a plain chunk
    }
    String name = event.event();
    JsonNode data;
    try {
      data = Json.parse(event.data());
    } catch (IOException e) {
      return null;
    }
    if (data == null || !data.isObject()) {
      return null;
    }
    if ("error".equals(name) || "error".equals(Json.text(data, "type"))) {
      JsonNode nested = data.get("error");
      return nested != null && nested.isObject() ? nested : data;
    }
    if ("response.failed".equals(name) || "response.failed".equals(Json.text(data, "type"))) {
      JsonNode error = data.path("response").get("error");
      return error != null && error.isObject() ? error : data;
    }
    JsonNode error = data.get("error");
    return error != null && (error.isObject() || error.isTextual()) ? error : null;
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull() || value.isContainerNode()) {
      return null;
    }
    return value.asText();
  }

  private static String lower(String value) {
    return value == null ? "" : value.toLowerCase(Locale.ROOT);
  }

  /**
   * One row of the table.
   *
   * @param id a short, stable name (metric tag, log field, docs)
   * @param description what the row matches, in words
   */
  public record Rule(String id, Outcome outcome, String description, Predicate<Answer> when) {
    static Rule of(String id, Outcome outcome, String description, Predicate<Answer> when) {
      return new Rule(id, outcome, description, when);
    }
  }

  /**
   * What a row sees of one answer. {@code status} is 0 and {@code failure} set when there was no
   * HTTP answer; {@code streamError} is true for an error that came as a 2xx stream's first event.
   */
  public record Answer(
      int status, Headers headers, String type, String code, String message, Failure failure, boolean streamError) {
    boolean isHttp() {
      return failure == null;
    }

    boolean typeIs(String value) {
      return value.equalsIgnoreCase(type);
    }

    boolean codeIs(String value) {
      return value.equalsIgnoreCase(code);
    }

    boolean hasRetryAfter() {
      return headers.contains("retry-after") || headers.contains("retry-after-ms");
    }
  }
}
