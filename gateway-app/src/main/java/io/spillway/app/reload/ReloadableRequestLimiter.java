package io.spillway.app.reload;

import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.pipeline.Caller;
import io.spillway.quota.ratelimit.Decision;
import io.spillway.quota.ratelimit.KeyRateLimits;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.quota.ratelimit.RequestLimiter;

/**
 * A request limiter whose limits follow config reloads ({@code quota.tiers.*} rate limits and
 * {@code quota.teams}), in this process and in Redis alike: a limit whose numbers did not change
 * keeps its bucket; a changed one starts full.
 */
public final class ReloadableRequestLimiter implements RequestLimiter, Reloadable {
  private final RequestLimiter limiter;
  private final KeyRateLimits keyLimits;

  public ReloadableRequestLimiter(RequestLimiter limiter) {
    this(limiter, KeyRateLimits.NONE);
  }

  /** @param keyLimits the per-key limits (keys created through the admin API) a reloaded policy keeps */
  public ReloadableRequestLimiter(RequestLimiter limiter, KeyRateLimits keyLimits) {
    this.limiter = limiter;
    this.keyLimits = keyLimits;
  }

  @Override
  public Decision acquire(Caller caller) {
    return limiter.acquire(caller);
  }

  @Override
  public void reload(GatewayConfig next) {
    limiter.limits(new RateLimitPolicy(next.quota(), keyLimits));
  }

  @Override
  public void limits(RateLimitPolicy policy) {
    limiter.limits(policy);
  }

  @Override
  public void close() {
    limiter.close();
  }

  @Override
  public String toString() {
    return "rate limits";
  }
}
