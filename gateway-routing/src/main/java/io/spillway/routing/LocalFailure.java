package io.spillway.routing;

import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.routing.capacity.Verdict;
import java.util.Locale;

/**
 * Why the local backend did not serve a request it was asked to serve. The cause's tag is the value
 * of {@code x-spillway-fallback} when the cloud is tried instead, and of the
 * {@code spillway_router_fallbacks_total{cause}} metric.
 *
 * @param unsupported the local backend's refusal, when the cause is {@link Cause#UNSUPPORTED}
 */
record LocalFailure(Cause cause, String words, UnsupportedOnLocalException unsupported) {
  enum Cause {
    /** {@code local.enabled: false}: there is no local backend. */
    DISABLED,
    /** The readiness probe says the local server cannot serve now. */
    NOT_READY,
    /** The local backend refused the request as something it cannot do ({@code unsupported_on_local}). */
    UNSUPPORTED,
    /** The local server could not be reached (connection refused, reset, timeout). */
    UNREACHABLE,
    /** The local server answered with an error (5xx, overloaded, an invalid answer). */
    ERROR;

    /** {@code local_disabled}, {@code local_not_ready}, ...: the header value and metric tag. */
    String tag() {
      return "local_" + name().toLowerCase(Locale.ROOT);
    }
  }

  static LocalFailure disabled() {
    return new LocalFailure(Cause.DISABLED, "there is no local backend (local.enabled: false)", null);
  }

  static LocalFailure notReady() {
    return new LocalFailure(Cause.NOT_READY, "the local backend is not ready", null);
  }

  static LocalFailure unsupported(UnsupportedOnLocalException refusal) {
    return new LocalFailure(Cause.UNSUPPORTED, "the local backend cannot serve it", refusal);
  }

  /** The local server's failed answer, as the classifier judged it. */
  static LocalFailure answered(Verdict verdict) {
    Cause cause = switch (verdict.rule()) {
      case "connect_failed", "reset_before_response", "timeout", "transport_other" -> Cause.UNREACHABLE;
      default -> Cause.ERROR;
    };
    return new LocalFailure(cause, "the local backend " + FailureWords.of(verdict), null);
  }
}
