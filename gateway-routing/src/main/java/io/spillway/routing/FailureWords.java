package io.spillway.routing;

import io.spillway.routing.capacity.Verdict;

/**
 * What a backend's failed answer was, in words for an error message: the classifier's row ids are
 * for logs and metrics, a client reads "could not be reached". Stateless.
 */
final class FailureWords {
  private FailureWords() {}

  /** The predicate of "the cloud ..." / "the local backend ...", e.g. {@code could not be reached}. */
  static String of(Verdict verdict) {
    return switch (verdict.rule()) {
      case "connect_failed" -> "could not be reached";
      case "reset_before_response" -> "closed the connection before answering";
      case "timeout" -> "did not answer in time";
      case "invalid_response" -> "gave an answer that is not a valid OpenAI answer";
      case "stream_broken_before_first_event" -> "broke off its stream before the first event";
      case "credentials_rejected" -> "rejected Spillway's credentials";
      case "transport_other" -> "could not be reached";
      case "response_too_large" -> "gave an answer larger than Spillway accepts";
      case "insufficient_quota" -> "is out of quota";
      case "rate_limit_exceeded", "rate_limit" -> "is rate limiting";
      case "stream_error_event" -> "began its stream with an error";
      case "server_error" -> "answered with a server error";
      default -> switch (verdict.outcome()) {
        case CAPACITY -> "is at capacity";
        case SUCCESS -> "answered";
        default -> "answered with an error";
      };
    };
  }
}
