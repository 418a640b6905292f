package io.spillway.quota.testing;

import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.config.QuotaConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import java.util.Map;

/** Small helpers for quota tests: configs from YAML as users write them, and callers per tier. */
public final class QuotaTesting {
  public static final Caller GOLD = new Caller("release", Tier.GOLD, "k-gold");
  public static final Caller SILVER = new Caller("web", Tier.SILVER, "k-silver");
  public static final Caller BRONZE = new Caller("sandbox", Tier.BRONZE, "k-bronze");

  private QuotaTesting() {}

  /** A whole config parsed and validated exactly as {@code serve} does. */
  public static GatewayConfig config(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test config", yaml);
  }

  public static QuotaConfig quota(String yaml) {
    return config(yaml).quota();
  }
}
