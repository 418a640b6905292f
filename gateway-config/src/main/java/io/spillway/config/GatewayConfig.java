package io.spillway.config;

import java.util.List;

/**
 * The whole configuration, as bound from YAML. Every section may be left out and then takes its
 * defaults. Immutable; a reload builds a new instance.
 *
 * @param store where state is kept: {@code embedded:<dir>} (durable file store, the default),
 *     {@code redis://host:port} (shared) or {@code memory}, parsed once ({@link Store})
 * @param responses the response store kept in {@code store} (stored Responses API state)
 */
public record GatewayConfig(
    ServerConfig server,
    AdminConfig admin,
    CloudConfig cloud,
    LocalConfig local,
    FailoverConfig failover,
    List<KeyConfig> keys,
    QuotaConfig quota,
    ShapingConfig shaping,
    CacheConfig cache,
    Store store,
    MetricsConfig metrics,
    LoggingConfig logging,
    SpendConfig spend,
    TracesConfig traces,
    ResponsesConfig responses) {

  public GatewayConfig {
    server = server != null ? server : ServerConfig.DEFAULTS;
    admin = admin != null ? admin : AdminConfig.DEFAULTS;
    cloud = cloud != null ? cloud : CloudConfig.DEFAULTS;
    local = local != null ? local : LocalConfig.DEFAULTS;
    failover = failover != null ? failover : FailoverConfig.DEFAULTS;
    keys = keys != null ? List.copyOf(keys) : List.of();
    quota = quota != null ? quota : QuotaConfig.DEFAULTS;
    shaping = shaping != null ? shaping : ShapingConfig.DEFAULTS;
    cache = cache != null ? cache : CacheConfig.DEFAULTS;
    store = store != null ? store : Store.DEFAULT;
    metrics = metrics != null ? metrics : MetricsConfig.DEFAULTS;
    logging = logging != null ? logging : LoggingConfig.DEFAULTS;
    spend = spend != null ? spend : SpendConfig.DEFAULTS;
    traces = traces != null ? traces : TracesConfig.DEFAULTS;
    responses = responses != null ? responses : ResponsesConfig.DEFAULTS;
  }

  public static GatewayConfig defaults() {
    return new GatewayConfig(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
  }

  public GatewayConfig withKeys(List<KeyConfig> newKeys) {
    return new GatewayConfig(
        server, admin, cloud, local, failover, newKeys, quota, shaping, cache, store, metrics, logging, spend, traces, responses);
  }

  public GatewayConfig withServer(ServerConfig newServer) {
    return new GatewayConfig(
        newServer, admin, cloud, local, failover, keys, quota, shaping, cache, store, metrics, logging, spend, traces, responses);
  }
}
