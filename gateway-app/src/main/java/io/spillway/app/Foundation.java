package io.spillway.app;

import io.spillway.app.admin.StatusRegistry;
import io.spillway.app.observe.AccessLog;
import io.spillway.app.observe.GatewayMetrics;
import io.spillway.app.observe.RedactedMessage;
import io.spillway.app.observe.Tracing;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Store;
import io.spillway.core.redact.Redactor;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.time.Ticker;
import io.spillway.quota.keys.ApiKeys;
import io.spillway.quota.keys.ConfigKeys;
import io.spillway.quota.keys.KeyHashes;
import io.spillway.quota.keys.KeyStores;
import io.spillway.quota.responses.ResponseStores;
import io.spillway.redis.RedisLink;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What every surface of a gateway is built on: the config (its keys hashed), time, the one link to
 * Redis, the keys, the response store, metrics and the status sections, the reloader, redaction, the
 * access log and tracing. {@link Backends}, {@link ModelPipeline}, {@link AdminSurface} and
 * {@link HttpSurface} take their shared parts from here; nothing here knows them.
 *
 * <p>Only hashes of gateway keys stay in memory: in the key registry, in the config kept here, and in
 * everything built from it.
 */
public final class Foundation implements AutoCloseable {
  final GatewayConfig config;
  final Clock clock;
  final Ticker ticker;
  /** The process's one link to Redis, or null when {@code store} is not Redis. */
  final RedisLink redis;
  final ConfigKeys keys;
  final ApiKeys apiKeys;
  /** The response store ({@code responses.*}), or null when it is off. */
  final ResponseStore responseStore;
  final GatewayMetrics metrics;
  final StatusRegistry status = new StatusRegistry();
  final ConfigReloader reloader;
  final Redactor redactor;
  final AccessLog accessLog;
  final Tracing tracing;

  private Foundation(GatewayConfig loaded, Clock clock, Ticker ticker, Path configFile, Closer built) {
    this.keys = new ConfigKeys(loaded.keys());
    this.config = loaded.withKeys(loaded.keys().stream().map(KeyHashes::hashed).toList());
    GatewayConfig config = this.config;
    this.clock = clock;
    this.ticker = ticker;
    this.redis = config.store() instanceof Store.Redis shared
        ? RedisLink.open(shared.uri(), min(config.quota().storeTimeout(), config.failover().fleetTimeout()))
        : null;
    built.then("the Redis link", redis);
    this.apiKeys = new ApiKeys(KeyStores.open(config.store(), redis, config.quota().storeTimeout()), clock);
    built.then("the key store", apiKeys);
    apiKeys.startSync(config.admin().keySyncInterval());
    this.responseStore = ResponseStores.open(config, redis, clock);
    built.then("the response store", responseStore);
    this.metrics = new GatewayMetrics(config.metrics(), configuredModels(config), clock);
    // No answer and no access-log line may show a cloud route's key or the admin token.
    this.redactor = Redactor.of(secrets(config, null));
    RedactedMessage.use(redactor);
    this.accessLog = new AccessLog(config.logging(), redactor);
    this.reloader = new ConfigReloader(configFile, ConfigLoader.withSystemEnvironment()::load, config);
    reloader.register(keys, "keys"); // first: every later step sees the new keys
    reloader.register(accessLog, "logging");
    // A new admin token is redacted from then on; the one it replaced still is (the cloud key only
    // changes with a restart).
    reloader.register("redaction", next -> redactor.secrets(secrets(config, next.admin().token())), "admin.token");
    this.tracing = Tracing.from(config.traces(), clock, ticker);
  }

  /**
   * Opens the shared parts of a gateway for {@code loaded}; on a failure, what was opened is closed
   * again.
   *
   * @param configFile what a reload reads again; null for a config built in memory
   */
  public static Foundation open(GatewayConfig loaded, Clock clock, Ticker ticker, Path configFile) {
    Closer built = new Closer();
    try {
      return new Foundation(loaded, clock, ticker, configFile, built);
    } catch (RuntimeException | Error e) {
      built.unwindAfter(e);
      throw e;
    }
  }

  /** Model names the config mentions: they may have a metrics tag before any backend answered them. */
  private static Set<String> configuredModels(GatewayConfig config) {
    Set<String> models = new HashSet<>();
    config.local().models().forEach((requested, local) -> {
      if (!requested.equals("default")) {
        models.add(requested);
      }
    });
    config.shaping().models().forEach(rule -> {
      models.add(rule.from());
      models.add(rule.to());
    });
    return models;
  }

  /** Every cloud route's key and the admin token, and {@code newAdminToken} when a reload brings one. */
  private static List<String> secrets(GatewayConfig config, String newAdminToken) {
    List<String> secrets = new ArrayList<>();
    config.cloud().effectiveRoutes().forEach(route -> secrets.add(route.apiKey()));
    secrets.add(config.admin().token());
    secrets.add(newAdminToken);
    secrets.add(config.logging().keyIdSalt());
    return secrets;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Closes the stores, then the Redis link (after every part that used it), then tracing. */
  @Override
  public void close() {
    new Closer()
        .then("the response store", responseStore)
        .then("the key store", apiKeys)
        .then("the Redis link", redis)
        .then("tracing", tracing)
        .closeAll();
  }
}
