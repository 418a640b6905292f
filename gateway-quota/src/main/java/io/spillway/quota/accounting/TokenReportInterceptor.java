package io.spillway.quota.accounting;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.quota.pool.PoolSnapshot;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.ratelimit.ResetFormat;

/**
 * What the client is told about tokens. Every response carries the caller's pool the way OpenAI
 * reports token limits: {@code x-ratelimit-limit-tokens} (the pool's ceiling: limit plus
 * overdraft), {@code x-ratelimit-remaining-tokens} (ceiling minus used minus reserved) and
 * {@code x-ratelimit-reset-tokens} (time until the month resets). And a chat/completions or
 * completions stream loses the usage-only chunk that {@link QuotaInterceptor} asked the upstream
 * for when the client did not ask for it itself.
 *
 * <p>Placed right after authentication, ahead of the response cache, the request rate limits and
 * token accounting: their answers (cache hits and 429s included) get the headers, and the cache
 * records a stream with its usage chunk (it counts the tokens a hit saves) while each client still
 * gets exactly the stream it asked for. A {@link GatewayException} from a later stage is turned
 * into its error response here (as the front end would render it). Reads the pools' cached view, so
 * it costs no store call. {@code GET /v1/models} is left alone.
 */
public final class TokenReportInterceptor implements Interceptor {
  public static final String LIMIT = "x-ratelimit-limit-tokens";
  public static final String REMAINING = "x-ratelimit-remaining-tokens";
  public static final String RESET = "x-ratelimit-reset-tokens";

  private final QuotaPools pools;

  public TokenReportInterceptor(QuotaPools pools) {
    this.pools = pools;
  }

  @Override
  public GatewayResponse intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Caller caller = request.attribute(RequestAttributes.CALLER);
    if (caller == null || request.route() == Route.MODELS) {
      return chain.proceed(request);
    }
    GatewayResponse response;
    try {
      response = chain.proceed(request);
    } catch (GatewayException e) {
      response = ErrorMapper.toResponse(e);
    }
    if (response.isStream() && QuotaInterceptor.asksUpstreamForUsage(request)) {
      response = response.withStream(new UsageChunkFilter(response.stream()));
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
    return "TokenReportInterceptor";
  }
}
