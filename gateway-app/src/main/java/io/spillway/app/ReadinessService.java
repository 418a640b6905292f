package io.spillway.app;

import io.spillway.core.fleet.FleetMode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.config.QuotaConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.server.ConnectionBudget;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.local.LocalPool;
import io.spillway.quota.store.StoreStatus;
import io.spillway.core.risk.RiskCounts;
import io.spillway.routing.breaker.Breaker;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code GET /readyz}: 200 when some backend can serve, 503 (with the reasons as JSON) when neither
 * can — the cloud is not configured (no key for OpenAI's API) and the local backend is off,
 * unreachable or lacks its default model — or when the shared quota store (Redis) is unreachable
 * and {@code quota.failClosed} is set. The details also show the quota store's health and the
 * connection limit in force ({@code server.maxConnections}, lowered to fit the file-descriptor
 * limit). The local part carries the readiness snapshot, missing models with their fix included; the
 * local server's address and the store's are not shown here (this endpoint needs no token).
 * With several local servers ({@code local.servers}) it is ready while at least one of them is,
 * and {@code local.servers} lists each with its readiness, breaker state and outstanding requests.
 * The {@code breaker} part says who decides the breaker ({@code local}, {@code fleet}, or
 * {@code local-fallback} while the fleet's Redis does not answer), and the {@code risk} part whose
 * requests the risk index counts (the same three modes); neither changes readiness. Nor does the
 * {@code tokenizer} part ({@code loaded}: whether the o200k vocabulary has finished loading in the
 * background since the listener came up): only requests that count tokens wait for it, and a probe,
 * {@code /healthz}, {@code /v1/models} or {@code /metrics} never does.
 */
final class ReadinessService implements HttpService {
  private final CloudConfig cloud;
  private final LocalConfig localConfig;
  private final LocalPool local;
  private final ConnectionBudget connections;
  private final Supplier<StoreStatus> store;
  private final boolean failClosed;
  private final Duration storeRetry;
  private final Breaker breaker;
  private final Supplier<FleetMode> riskMode;
  private final BooleanSupplier tokenizerLoaded;

  /**
   * {@code local} is null when {@code local.enabled} is false. With {@code quota.failClosed}, an
   * unreachable shared store makes the replica not ready (Retry-After: {@code quota.flushInterval},
   * how often the store tries again).
   */
  ReadinessService(CloudConfig cloud, LocalConfig localConfig, LocalPool local, ConnectionBudget connections,
      Supplier<StoreStatus> store, QuotaConfig quota, Breaker breaker, Supplier<FleetMode> riskMode,
      BooleanSupplier tokenizerLoaded) {
    this.cloud = cloud;
    this.localConfig = localConfig;
    this.local = local;
    this.connections = connections;
    this.store = store;
    this.failClosed = quota.failClosed();
    this.storeRetry = quota.flushInterval();
    this.breaker = breaker;
    this.riskMode = riskMode;
    this.tokenizerLoaded = tokenizerLoaded;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    ObjectNode out = Json.object();
    ArrayNode reasons = Json.MAPPER.createArrayNode();
    boolean cloudUsable = cloudConfigured(cloud);
    out.putObject("cloud").put("configured", cloudUsable);
    if (!cloudUsable) {
      reasons.add(cloud.routes().isEmpty() ? "cloud: no cloud.apiKey for " + cloud.baseUrl()
          : "cloud: no route has an apiKey (cloud.routes[].apiKey)");
    }
    boolean localUsable = false;
    if (local == null) {
      out.putObject("local").put("enabled", false);
      reasons.add("local: switched off (local.enabled: false)");
    } else {
      out.set("local", local.toJson(false));
      localUsable = local.ready();
      if (!localUsable) {
        local.readiness().problems().forEach(problem -> reasons.add("local: " + problem));
      }
    }
    FleetMode mode = breaker.mode();
    ObjectNode breakerJson = out.putObject("breaker").put("mode", mode.tag());
    if (mode == FleetMode.REPLICA_FALLBACK) {
      breakerJson.put("detail", "the fleet's breaker in Redis does not answer; this replica decides on its own");
    }
    FleetMode counts = riskMode.get();
    ObjectNode riskJson = out.putObject("risk").put("mode", counts.tag());
    if (counts == FleetMode.REPLICA_FALLBACK) {
      riskJson.put("detail", "the fleet's risk counts in Redis do not answer; the risk index counts this replica's requests");
    }
    out.putObject("tokenizer").put("loaded", tokenizerLoaded.getAsBoolean());
    StoreStatus quotaStore = store.get();
    // Where the store is (a Redis address) is not shown: this endpoint needs no token.
    out.putObject("quotaStore").put("kind", quotaStore.kind()).put("healthy", quotaStore.healthy())
        .put("failClosed", failClosed);
    boolean storeUsable = quotaStore.healthy() || !failClosed;
    if (!storeUsable) {
      reasons.add("quota store: " + quotaStore.kind() + " is unreachable and quota.failClosed is set;"
          + " requests are refused until it answers");
    }
    out.putObject("connections")
        .put("configured", connections.configured())
        .put("effective", connections.effective())
        .put("fileDescriptorLimit", connections.descriptorLimit());
    boolean ready = (cloudUsable || localUsable) && storeUsable;
    out.put("status", ready ? "ready" : "not_ready");
    out.set("reasons", reasons);
    if (ready) {
      return GatewayResponse.json(200, Json.toBytes(out));
    }
    long retryAfter = ErrorMapper.retryAfterSeconds(
        storeUsable ? localConfig.checkEvery() : storeRetry);
    return GatewayResponse.buffered(503,
        Headers.of("content-type", GatewayResponse.JSON, "retry-after", Long.toString(retryAfter)), Json.toBytes(out));
  }

  /**
   * A cloud route is usable with a key, or without one when it is not OpenAI's own API; the cloud is
   * configured when any route is.
   */
  static boolean cloudConfigured(CloudConfig cloud) {
    return cloud.effectiveRoutes().stream()
        .anyMatch(route -> route.apiKey() != null || !route.baseUrl().startsWith("https://api.openai.com"));
  }
}
