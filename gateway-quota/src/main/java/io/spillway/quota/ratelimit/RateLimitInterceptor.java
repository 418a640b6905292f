package io.spillway.quota.ratelimit;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.CallerInterceptor;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Enforces request rate limits right after authentication. A caller over its limit gets 429
 * {@code rate_limit_exceeded} with {@code Retry-After} (seconds until its next request would be
 * allowed) and the request goes no further.
 *
 * <p>Every response of a limited caller, success or error, carries the headers OpenAI clients read:
 * {@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests} and
 * {@code x-ratelimit-reset-requests} (time until the bucket is full again, as {@code 1.2s} or
 * {@code 6m0s}). When several limits apply, the headers describe the one with the fewest requests
 * left. A caller without any request limit (gold by default) gets none of these headers: there is
 * no number that would be true, and OpenAI's SDKs treat their absence as "no limit known".
 *
 * <p>Its own 429 is thrown with the headers on the exception (the {@code ErrorMapper} writes them);
 * to put them on later stages' errors too, a {@link GatewayException} from those is turned into its
 * error response here, by the same mapper.
 */
public final class RateLimitInterceptor extends CallerInterceptor {
  public static final String LIMIT = "x-ratelimit-limit-requests";
  public static final String REMAINING = "x-ratelimit-remaining-requests";
  public static final String RESET = "x-ratelimit-reset-requests";

  private final RequestLimiter limiter;

  public RateLimitInterceptor(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  protected CompletionStage<GatewayResponse> intercept(Chain chain, Caller caller) {
    Decision decision = limiter.acquire(caller);
    if (!decision.allowed()) {
      GatewayException rejection = rejection(decision);
      for (Map.Entry<String, String> header : headers(decision).entrySet()) {
        rejection = rejection.withHeader(header.getKey(), header.getValue());
      }
      throw rejection;
    }
    CompletionStage<GatewayResponse> answer = chain.proceedAnswering(chain.request());
    if (!decision.limited()) {
      return answer;
    }
    return answer.thenApply(response -> {
      Headers.Builder headers = response.headers().toBuilder();
      headers(decision).forEach(headers::set);
      return response.withHeaders(headers.build());
    });
  }

  @Override
  public boolean mayBlock() {
    return limiter.mayBlock();
  }

  private static GatewayException rejection(Decision decision) {
    RateLimit limit = decision.limit();
    String message = "Rate limit reached for " + limit.scope() + " on " + limit.periodName() + ": Limit "
        + limit.capacity() + ", Used " + (limit.capacity() - decision.remaining()) + ", Requested 1. "
        + "Please try again in " + ResetFormat.format(decision.retryAfter()) + ".";
    return ErrorKind.RATE_LIMITED.exception(message).withRetryAfter(decision.retryAfter());
  }

  /** The {@code x-ratelimit-*-requests} headers of a limited caller's answers, in order. */
  private static Map<String, String> headers(Decision decision) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(LIMIT, Long.toString(decision.limit().capacity()));
    headers.put(REMAINING, Long.toString(decision.remaining()));
    headers.put(RESET, ResetFormat.format(decision.reset()));
    return headers;
  }

  @Override
  public String toString() {
    return "RateLimitInterceptor";
  }
}
