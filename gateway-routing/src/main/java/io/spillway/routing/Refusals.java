package io.spillway.routing;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * The router's answers when no backend serves a request: what the client reads, with which status
 * and code, and when it may retry (asked of the breaker, never invented). Each names the backend it
 * is charged to, in {@code x-spillway-backend} and on the request. Thread-safe.
 */
final class Refusals {
  /** The breakers' {@code Retry-After}: the earliest any cloud route takes requests again (see {@code Breaker#retryAfter}). */
  private final UnaryOperator<Duration> retryAfter;
  private final RouterListener listener;

  Refusals(UnaryOperator<Duration> retryAfter, RouterListener listener) {
    this.retryAfter = retryAfter;
    this.listener = listener;
  }

  /** {@code e} as the client's answer, charged to {@code backend}. */
  static GatewayResponse error(GatewayRequest request, BackendKind backend, GatewayException e) {
    RequestOutcome.of(request).servedBy(backend);
    return ErrorMapper.toResponse(e);
  }

  /**
   * Neither backend could serve: 503 {@code model_at_capacity} with {@code Retry-After} from the
   * breaker (the time to the next probe, or the cloud's own longer wait).
   */
  GatewayResponse unavailable(GatewayRequest request, BackendKind backend, String what, Duration upstreamWait) {
    Duration retryAfter = this.retryAfter.apply(upstreamWait);
    String message = what + ". Retry after " + ErrorMapper.retryAfterSeconds(retryAfter) + "s.";
    listener.onUnavailable();
    return error(request, backend, ErrorKind.CAPACITY.exception(message).withRetryAfter(retryAfter));
  }

  /**
   * Local cannot serve the request and the cloud could not either, now: 503 {@code unsupported_on_local}
   * with {@code Retry-After} = the time until the breaker lets a request reach the cloud again (or
   * the cloud's own longer wait), when the cloud may serve it.
   *
   * @param cloudSide what became of the cloud, e.g. "The cloud, tried instead, is at capacity"
   */
  GatewayResponse unsupported(GatewayRequest request, UnsupportedOnLocalException unsupported, BackendKind backend,
      String cloudSide, Verdict cloudVerdict) {
    Duration retryAfter = this.retryAfter.apply(cloudVerdict.retryAfter());
    long seconds = ErrorMapper.retryAfterSeconds(retryAfter);
    String message = unsupported.getMessage() + " " + cloudSide + "; it may serve this request in " + seconds
        + "s. Retry after " + seconds + "s, or " + unsupported.remedy() + ".";
    listener.onUnavailable();
    return error(request, backend, ErrorKind.UNAVAILABLE.exception(message, unsupported.param())
        .withCode(UnsupportedOnLocalException.CODE).withRetryAfter(retryAfter));
  }

  /**
   * Local cannot serve the request and an operator keeps every request local: no backend will serve
   * it until someone lifts the override, so 400 without {@code Retry-After} (a client retrying on
   * its own would only be refused again).
   */
  static GatewayResponse forcedLocal(GatewayRequest request, UnsupportedOnLocalException unsupported, BackendKind local) {
    String message = unsupported.getMessage() + " An operator has forced all traffic to the local backend, so the"
        + " cloud is not tried and retrying will not help until the override is lifted; " + unsupported.remedy() + ".";
    return error(request, local, ErrorKind.INVALID_REQUEST.exception(message, unsupported.param())
        .withCode(UnsupportedOnLocalException.CODE));
  }

  /**
   * Local cannot serve the request and no cloud route takes its model (an azure route without a
   * deployment for it): 400 without {@code Retry-After}, as waiting will not help.
   */
  static GatewayResponse noRoute(GatewayRequest request, UnsupportedOnLocalException unsupported, BackendKind local) {
    String message = unsupported.getMessage() + " No cloud route serves the model '" + request.model()
        + "', so the cloud is not tried; " + unsupported.remedy() + ".";
    return error(request, local, new GatewayException(ErrorKind.INVALID_REQUEST, message, unsupported.param(),
        UnsupportedOnLocalException.CODE, null, null));
  }
}
