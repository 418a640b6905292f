package io.spillway.app.reload;

import io.spillway.core.config.GatewayConfig;
import io.spillway.core.config.Reloadable;
import io.spillway.core.pipeline.Caller;
import io.spillway.quota.ratelimit.KeyRateLimits;
import io.spillway.quota.ratelimit.LocalRequestLimiter;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.quota.ratelimit.RequestLimiter;
import io.spillway.quota.ratelimit.Decision;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A request limiter whose limits follow config reloads. With the local limiter a reload builds new
 * buckets from the new limits (so every caller starts the new limits with a full bucket); a Redis
 * limiter keeps its shared buckets, and new limits there need a restart.
 */
public final class ReloadableRequestLimiter implements RequestLimiter, Reloadable {
  private final AtomicReference<RequestLimiter> current;
  private final Clock clock;
  private final boolean local;
  private final KeyRateLimits keyLimits;

  public ReloadableRequestLimiter(RequestLimiter initial, Clock clock) {
    this(initial, clock, KeyRateLimits.NONE);
  }

  /** @param keyLimits the per-key limits the rebuilt local limiter keeps applying */
  public ReloadableRequestLimiter(RequestLimiter initial, Clock clock, KeyRateLimits keyLimits) {
    this.current = new AtomicReference<>(initial);
    this.clock = clock;
    this.local = initial instanceof LocalRequestLimiter;
    this.keyLimits = keyLimits;
  }

  @Override
  public Decision acquire(Caller caller) {
    return current.get().acquire(caller);
  }

  @Override
  public void reload(GatewayConfig next) {
    if (local) {
      current.set(new LocalRequestLimiter(new RateLimitPolicy(next.quota(), keyLimits), clock));
    }
  }

  @Override
  public void close() {
    current.get().close();
  }
}
