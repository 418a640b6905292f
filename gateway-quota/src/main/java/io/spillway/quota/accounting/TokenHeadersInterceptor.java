package io.spillway.quota.accounting;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.quota.pool.PoolSnapshot;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.ratelimit.ResetFormat;

/**
 * Puts the caller's pool on every response, the way OpenAI reports token limits:
 * {@code x-ratelimit-limit-tokens} (the pool's ceiling: limit plus overdraft),
 * {@code x-ratelimit-remaining-tokens} (ceiling minus used minus reserved) and
 * {@code x-ratelimit-reset-tokens} (time until the month resets).
 *
 * <p>Placed right after authentication, ahead of the request rate limits and token accounting, so
 * their refusals carry the headers too; a {@link GatewayException} from a later stage is turned into
 * its error response here (exactly as the front end would render it). Reads the pools' cached view,
 * so it costs no store call. {@code GET /v1/models} gets no token headers.
 */
public final class TokenHeadersInterceptor implements Interceptor {
  public static final String LIMIT = "x-ratelimit-limit-tokens";
  public static final String REMAINING = "x-ratelimit-remaining-tokens";
  public static final String RESET = "x-ratelimit-reset-tokens";

  private final QuotaPools pools;

  public TokenHeadersInterceptor(QuotaPools pools) {
    this.pools = pools;
  }

  @Override
  public GatewayResponse intercept(Chain chain) {
    Caller caller = chain.request().attribute(RequestAttributes.CALLER);
    if (caller == null || chain.request().route() == Route.MODELS) {
      return chain.proceed(chain.request());
    }
    GatewayResponse response;
    try {
      response = chain.proceed(chain.request());
    } catch (GatewayException e) {
      response = GatewayResponse.error(e);
    }
    PoolSnapshot pool = pools.snapshot(caller.tier());
    return response.withHeaders(response.headers().toBuilder()
        .set(LIMIT, Long.toString(pool.ceiling()))
        .set(REMAINING, Long.toString(pool.remaining()))
        .set(RESET, ResetFormat.format(pools.calendar().untilReset()))
        .build());
  }

  @Override
  public String toString() {
    return "TokenHeadersInterceptor";
  }
}
