package io.spillway.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.app.admin.AdminApi;
import io.spillway.app.admin.AuditLog;
import io.spillway.app.admin.BreakerAdmin;
import io.spillway.app.admin.CacheAdmin;
import io.spillway.app.admin.Dashboard;
import io.spillway.app.admin.KeysEndpoint;
import io.spillway.app.admin.ReloadEndpoint;
import io.spillway.app.admin.StatusEndpoint;
import io.spillway.app.admin.StatusRegistry;
import io.spillway.app.observe.AccessLog;
import io.spillway.app.observe.BreakerMetrics;
import io.spillway.app.observe.CapacitySignal;
import io.spillway.app.observe.GatewayMetrics;
import io.spillway.app.observe.RedactedMessage;
import io.spillway.app.observe.RequestObserverInterceptor;
import io.spillway.app.observe.RouterMetrics;
import io.spillway.app.observe.Tracing;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.app.reload.ReloadableInterceptor;
import io.spillway.app.reload.ReloadableRequestLimiter;
import io.spillway.app.reload.ReloadableStages;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.api.ModelQueryInterceptor;
import io.spillway.core.api.ModelsEndpoint;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.api.anthropic.CountTokens;
import io.spillway.core.api.anthropic.MessagesEndpoint;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.api.ParseInterceptor;
import io.spillway.cache.ResponseCache;
import io.spillway.config.ConfigLoader;
import io.spillway.config.Durations;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.config.SelfReference;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.LoopGuardInterceptor;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.responses.ResponseStateInterceptor;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.responses.StoredResponsesEndpoint;
import io.spillway.core.responses.StoredResponsesService;
import io.spillway.core.responses.StoredStateBackend;
import io.spillway.quota.responses.ResponseStores;
import io.spillway.server.ConnectionBudget;
import io.spillway.core.redact.RedactingService;
import io.spillway.core.redact.Redactor;
import io.spillway.server.GatewayServer;
import io.spillway.server.HttpRoutes;
import io.spillway.shaping.PressureSignals;
import io.spillway.shaping.ShapingStages;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.core.risk.RiskCounts;
import io.spillway.shaping.risk.RiskIndex;
import io.spillway.trim.TrimSettings;
import io.spillway.local.LocalBackends;
import io.spillway.local.LocalPool;
import io.spillway.quota.accounting.QuotaInterceptor;
import io.spillway.quota.accounting.TokenEstimator;
import io.spillway.quota.accounting.TokenReportInterceptor;
import io.spillway.quota.admission.PriorityAdmissionGate;
import io.spillway.quota.keys.ApiKeys;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyStores;
import io.spillway.quota.keys.KeyHashes;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.ratelimit.ReplicaRequestLimiter;
import io.spillway.quota.ratelimit.RateLimitInterceptor;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.quota.ratelimit.RedisRequestLimiter;
import io.spillway.redis.RedisLink;
import io.spillway.routing.risk.RiskCountSources;
import io.spillway.quota.ratelimit.RequestLimiter;
import io.spillway.quota.spend.SpendLedger;
import io.spillway.quota.store.UsageStore;
import io.spillway.quota.store.UsageStores;
import io.spillway.routing.LocalModelList;
import io.spillway.routing.ModelsService;
import io.spillway.routing.Router;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.Breakers;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.JudgingBackend;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.cloud.CloudBackend;
import io.spillway.routing.cloud.CloudRoute;
import io.spillway.config.CloudRouteConfig;
import io.spillway.core.time.Ticker;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Spillway: builds every part from a config, wires the pipeline and starts the front
 * end. Tests start it on port 0 exactly as {@code serve} does.
 *
 * <p>Pipeline order: observe (metrics, access log) → parse → trace (when {@code traces.endpoint} is
 * set) → loop guard → auth → token report → cache → outcome headers → shaping → rate limits → quota
 * → router (terminal, metered; admission is entered by the router per backend call). The model list
 * ({@code GET /v1/models[/{id}]}) has a pipeline of its own: observe → model query → trace → loop
 * guard → auth → rate limits → outcome headers → {@link ModelsService}. Stages talk through typed
 * request attributes and the request's {@link io.spillway.core.pipeline.RequestOutcome}.
 *
 * <p>For the parts that other components plug into: {@link #meters()} (pass it to
 * constructors), {@link #status()} ({@code status.register(name, supplier)} adds a section to
 * {@code GET /admin/status}), and {@link #onReload} (a {@link Reloadable} gets every validated new
 * config on {@code SIGHUP} or {@code POST /admin/reload}).
 */
public final class Gateway implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);
  private final GatewayConfig config;
  private final Clock clock;
  private final Ticker ticker;
  private final GatewayServer server;
  private final AtomicReference<KeyRegistry> keys;
  private final GatewayMetrics metrics;
  private final StatusRegistry status = new StatusRegistry();
  private final ConfigReloader reloader;
  private AuditLog audit;
  private final ScheduledExecutorService localScheduler;
  private final LocalPool local;
  private final RequestLimiter requestLimiter;
  private final PriorityAdmissionGate admission;
  private final ResponseCache cache;
  private final UsageStore usageStore;
  private final QuotaPools quota;
  private final SpendLedger spend;
  private final ApiKeys apiKeys;
  private final Breaker breaker;
  private final RiskCounts riskCounts;
  private final List<CloudRoute> routes;
  private final Tracing tracing;
  private final DataPathClients clients;
  private final RedisLink redis;
  /** The response store ({@code responses.*}), or null when it is off. */
  private final ResponseStore responseStore;

  private Gateway(GatewayConfig loaded, Clock clock, Ticker ticker, Path configFile) {
    // Only hashes of gateway keys stay in memory: in the registry, in the config kept here, and in
    // everything built below from it (lambdas capture `config`, never `loaded`).
    this.keys = new AtomicReference<>(KeyRegistry.from(loaded.keys()));
    this.config = loaded.withKeys(loaded.keys().stream().map(KeyHashes::hashed).toList());
    GatewayConfig config = this.config;
    this.clock = clock;
    this.ticker = ticker;
    // One link to Redis for the whole process (null without Redis): every Redis user goes through it.
    this.redis = RedisLink.names(config.store()) ? RedisLink.open(config.store(),
        min(config.quota().storeTimeout(), config.failover().fleetTimeout())) : null;
    this.apiKeys = new ApiKeys(KeyStores.open(config.store(), redis, config.quota().storeTimeout()), clock);
    apiKeys.startSync(config.admin().keySyncInterval());
    this.metrics = new GatewayMetrics(config.metrics(), configuredModels(config), clock);
    // No answer and no access-log line may show a cloud route's key or the admin token.
    Redactor redactor = Redactor.of(secrets(config, null));
    RedactedMessage.use(redactor);
    AccessLog accessLog = new AccessLog(config.logging(), redactor);
    this.reloader = new ConfigReloader(configFile, ConfigLoader.withSystemEnvironment()::load, config);
    reloader.register(this::reloadKeys, "keys");
    reloader.register(accessLog, "logging");
    // A new admin token is redacted from then on; the one it replaced still is (the cloud key only
    // changes with a restart).
    reloader.register(named("redaction", next -> redactor.secrets(secrets(config, next.admin().token()))),
        "admin.token");

    ReloadableRequestLimiter limiter =
        new ReloadableRequestLimiter(requestLimiter(config, redis, clock, apiKeys), apiKeys);
    reloader.register(limiter, "quota.tiers", "quota.teams");
    this.requestLimiter = limiter;
    this.admission = PriorityAdmissionGate.from(config.quota(), clock, ticker, metrics.registry());
    reloader.register(named("admission maxWait", next -> admission.reload(next.quota())), "quota.tiers");
    status.register("admission", admission::snapshot);

    MeterRegistry meters = metrics.registry();
    CapacityClassifier classifier = new CapacityClassifier(clock);
    // Each answer is judged once, as it leaves its backend; metrics, traces and the router read that verdict.
    CapacitySignal capacity =
        (request, answer) -> classifier.verdictOn(request, answer).outcome() == Outcome.CAPACITY;
    this.tracing = Tracing.from(config.traces(), clock, ticker);
    // One thread per local server, so that a slow keep-warm load on one does not delay another's checks.
    this.localScheduler = Executors.newScheduledThreadPool(config.local().serverList().size(),
        Thread.ofPlatform().name("spillway-local").daemon().factory());
    this.clients = new DataPathClients(config, ticker);
    this.responseStore = ResponseStores.open(config, redis, clock);
    this.local = config.local().enabled()
        ? LocalBackends.create(config.local(), config.cloud(), trimSettings(config.shaping().trim()), clock, ticker,
            localScheduler, meters, clients.local())
        : null;
    if (local != null) {
      status.register("local", () -> local.toJson(true));
    }
    Backend meteredLocal = local == null ? null
        : tracing.trace(metrics.meter(new JudgingBackend(local, classifier), capacity, ticker), localProvider(config),
            capacity);
    if (meteredLocal != null && responseStore != null) {
      // Stored state is expanded before the local pool fits the conversation to the model's window.
      meteredLocal = StoredStateBackend.local(meteredLocal);
    }
    List<CloudRoute> cloudRoutes = new ArrayList<>();
    BreakerSettings breakerSettings = BreakerSettings.from(config.failover());
    for (CloudRouteConfig route : config.cloud().effectiveRoutes()) {
      Backend backend = config.cloud().routes().isEmpty()
          ? CloudBackend.create(config.cloud(), clients.cloud())
          : CloudBackend.create(route, config.cloud(), clients.cloud());
      String provider = switch (route.kind()) {
        case AZURE -> "azure.ai.openai";
        case ANTHROPIC -> "anthropic";
        case OPENAI -> "openai";
      };
      Backend traced = tracing.trace(metrics.meter(new JudgingBackend(backend, classifier), capacity, ticker), provider,
          capacity);
      if (responseStore != null) {
        traced = StoredStateBackend.cloud(route.name(), traced);
      }
      Breaker routeBreaker = Breakers.create(route.name(), redis, breakerSettings, clock);
      BreakerMetrics.bind(routeBreaker, meters);
      cloudRoutes.add(new CloudRoute(route.name(), traced, routeBreaker,
          route.azure() ? route.models().keySet() : null,
          route.kind() == CloudRouteConfig.Kind.ANTHROPIC ? Route.Api.ANTHROPIC : Route.Api.OPENAI));
    }
    this.routes = List.copyOf(cloudRoutes);
    Backend cloud = routes.get(0).backend();
    List<Backend> backends = local == null ? List.of(cloud) : List.of(cloud, meteredLocal);
    this.breaker = routes.get(0).breaker();
    List<Breaker> breakers = routes.stream().map(CloudRoute::breaker).toList();
    status.register("breaker", () -> breaker.status().toJson());
    status.register("routes", () -> routesStatus(config));
    this.riskCounts = RiskCountSources.open(redis, config.shaping().risk(), breakerSettings, clock);
    RiskIndex risk = new RiskIndex(config.shaping().risk(), clock, riskCounts).bindTo(meters);
    status.register("risk", risk::snapshot);
    LocalModelList localModels = new LocalModelList(config.local(), clock.instant());
    RouterMetrics routerMetrics = new RouterMetrics(meters);
    Router router = Router.builder()
        .routes(routes)
        .local(meteredLocal)
        .classifier(classifier)
        .admission(admission)
        .retryLocally(config.failover().retryLocally())
        .localModels(localModels)
        .ticker(ticker)
        .listener(routerMetrics)
        .build();

    this.usageStore = UsageStores.open(config, redis, clock);
    this.quota = new QuotaPools(config.quota(), usageStore, clock, meters, apiKeys);
    reloader.register(named("quota pools", next -> quota.reload(next.quota())), "quota.monthlyTokens",
        "quota.alertAt", "quota.softAt", "quota.tiers", "quota.timezone", "quota.alertWebhook",
        "quota.alertWebhookTimeout", "quota.maxReportedTokens");
    this.spend = new SpendLedger(config.spend(), config.quota(), quota::calendar, usageStore, meters);
    reloader.register(named("spend", next -> spend.reload(next.spend(), next.quota())), "spend", "quota.alertAt",
        "quota.softAt", "quota.alertWebhook", "quota.alertWebhookTimeout");
    status.register("quota", () -> quotaReport());

    List<Interceptor> interceptors = new ArrayList<>();
    RequestObserverInterceptor observer = new RequestObserverInterceptor(metrics, accessLog, clock, ticker, quota::maxReportedTokens);
    interceptors.add(observer);
    interceptors.add(new ParseInterceptor());
    List<Interceptor> models = new ArrayList<>(List.of(observer, new ModelQueryInterceptor()));
    // Anthropic's token count: answered by the gateway after the same authentication and rate limits.
    List<Interceptor> countStages = new ArrayList<>(List.of(observer, new ParseInterceptor()));
    List<Interceptor> frontStages = new ArrayList<>();
    if (tracing.enabled()) {
      frontStages.add(tracing.stage(quota::maxReportedTokens));
    }
    AtomicInteger maxHops = new AtomicInteger(config.server().maxHops());
    reloader.register(named("loop guard", next -> maxHops.set(next.server().maxHops())), "server.maxHops");
    frontStages.add(new LoopGuardInterceptor(maxHops::get));
    frontStages.add(new AuthInterceptor(keys::get, apiKeys, clock));
    interceptors.addAll(frontStages);
    models.addAll(frontStages);
    countStages.addAll(frontStages);
    interceptors.add(new TokenReportInterceptor(quota));
    this.cache = ResponseCache.builder(config.cache())
        .clock(clock).streamTimeLimit(config.server().streamTimeLimit()).meters(meters).build();
    interceptors.add(cache.interceptor());
    interceptors.add(new OutcomeHeadersInterceptor()); // inside the cache: stored and shared answers keep their headers
    if (responseStore != null) {
      // Before shaping: the exchange is stored as the client sent it.
      interceptors.add(new ResponseStateInterceptor(responseStore, config.responses().maxChain(), clock, redactor));
    }
    PressureSignals pressure = pressure(breakers, quota);
    ReloadableStages shaping = new ReloadableStages("shaping", config,
        next -> ShapingStages.create(next.shaping(), pressure, risk, meters, ticker));
    // The risk index keeps its windows and settings from start-up; which tiers it shapes applies.
    List<String> shapingKeys = new ArrayList<>(List.of(ConfigReloader.keysOf("shaping", "risk")));
    shapingKeys.add("shaping.risk.tiers");
    reloader.register(shaping, shapingKeys.toArray(String[]::new));
    interceptors.addAll(shaping.stages());
    RateLimitInterceptor rateLimits = new RateLimitInterceptor(requestLimiter);
    interceptors.add(rateLimits);
    models.add(rateLimits);
    ReloadableInterceptor accounting = new ReloadableInterceptor(config,
        next -> new QuotaInterceptor(quota, new TokenEstimator(next.quota().defaultMaxTokens(),
            next.shaping().maxTokenizedChars()), spend));
    reloader.register(accounting, "quota.defaultMaxTokens", "shaping.maxTokenizedChars");
    interceptors.add(accounting);
    Pipeline pipeline = new Pipeline(interceptors, metrics.meter(router, ticker));
    countStages.add(rateLimits);
    Pipeline tokenCount = new Pipeline(countStages, new CountTokens(config.shaping().maxTokenizedChars()));
    models.add(new OutcomeHeadersInterceptor());
    Pipeline modelList = new Pipeline(models, metrics.meter(
        new ModelsService(routes, classifier, admission, localModels, ticker, routerMetrics), ticker));

    Duration capacityWindow = config.metrics().capacityWindow();
    status.register("traffic", () -> Json.object()
        .put("requests", metrics.series().totalRequests())
        .put("capacityRate", metrics.series().capacityRate(capacityWindow))
        .put("capacityWindow", Durations.format(capacityWindow)));
    AdminApi.Builder admin = AdminApi.builder(config.admin().token());
    AuditLog audit = new AuditLog(config.admin().token(), clock);
    this.audit = audit;
    reloader.register(audit, "admin.token");
    admin.get("/admin/status", new StatusEndpoint(clock, () -> backends, status));
    // Read at each rotation, so a reloaded admin.rotationOverlap is the one rotations use.
    new KeysEndpoint(keys::get, apiKeys, audit, clock, () -> reloader.current().admin().rotationOverlap(),
        quota::calendar, accessLog::logId).register(admin);
    reloader.register(named("rotation overlap", next -> { }), "admin.rotationOverlap");
    admin.get("/admin/series", request -> AdminApi.ok(metrics.series().toJson()));
    admin.post("/admin/reload", new ReloadEndpoint(reloader, audit));
    admin.get("/admin/quota", request -> AdminApi.ok(quotaReport()));
    BreakerAdmin.register(admin, breakers, audit);
    CacheAdmin.register(admin, cache, audit);

    HttpRoutes.Builder httpRoutes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      if (route.hasBody() && route.api() == Route.Api.OPENAI) {
        httpRoutes.route(route.method(), route.path(), new OpenAiEndpoint(route, pipeline));
      }
    }
    httpRoutes.route(Route.MESSAGES.method(), Route.MESSAGES.path(), new MessagesEndpoint(Route.MESSAGES, pipeline));
    httpRoutes.route(Route.MESSAGES_COUNT_TOKENS.method(), Route.MESSAGES_COUNT_TOKENS.path(),
        new MessagesEndpoint(Route.MESSAGES_COUNT_TOKENS, tokenCount));
    List<Interceptor> storedStages = new ArrayList<>(List.of(observer, StoredResponsesEndpoint.QUERY_STAGE));
    storedStages.addAll(frontStages);
    storedStages.add(rateLimits);
    storedStages.add(new OutcomeHeadersInterceptor());
    StoredResponsesEndpoint storedResponses = new StoredResponsesEndpoint(new Pipeline(storedStages,
        metrics.meter(new StoredResponsesService(responseStore, routes.get(0).backend()), ticker)));
    httpRoutes.prefix(StoredResponsesEndpoint.RESPONSES_PREFIX, storedResponses);
    httpRoutes.prefix(StoredResponsesEndpoint.CONVERSATIONS_PREFIX, storedResponses);
    for (String method : List.of("GET", "POST")) {
      httpRoutes.route(method, StoredResponsesEndpoint.CONVERSATIONS, storedResponses);
    }
    ModelsEndpoint modelsEndpoint = new ModelsEndpoint(modelList);
    httpRoutes.get(Route.MODELS.path(), modelsEndpoint);
    httpRoutes.prefix(ModelsEndpoint.PREFIX, modelsEndpoint);
    httpRoutes.get("/healthz", request -> json("{\"status\":\"ok\"}"));
    ConnectionBudget connectionBudget = ConnectionBudget.of(config.server(), clients.multiplexed());
    httpRoutes.get("/readyz", new ReadinessService(config.cloud(), config.local(), local, connectionBudget,
        usageStore::status, config.quota(), breaker, risk::mode, TokenCounter::vocabularyLoaded));
    if (config.metrics().enabled()) {
      httpRoutes.get("/metrics", request -> GatewayResponse.text(200, PROMETHEUS_TEXT, metrics.scrape()));
    }
    AdminApi adminApi = admin.build();
    reloader.register(adminApi, "admin.token"); // admin.keySyncInterval: at start-up only
    Dashboard dashboard = new Dashboard();
    httpRoutes.get("/dashboard", request -> {
      if (!adminApi.enabled()) {
        throw ErrorKind.NOT_FOUND.exception(
            "The dashboard is off: set admin.token in the config to turn it on");
      }
      return dashboard.serve(request);
    });
    status.register("admin", () -> {
      var endpoints = Json.object().putArray("endpoints");
      adminApi.paths().forEach(endpoints::add);
      return Json.object().set("endpoints", endpoints);
    });
    httpRoutes.prefix("/admin/", adminApi);
    this.server = new GatewayServer(config.server(), RedactingService.wrap(httpRoutes.build(), redactor), clock,
        connectionBudget, clients.loops());
  }

  /** The {@code gen_ai.provider.name} of local answers: the API the local server speaks. */
  private static String localProvider(GatewayConfig config) {
    return config.local().kind().spelling();
  }

  /** A reload step with a name for the log and for {@code failed} in the reload answer. */
  private static Reloadable named(String name, Reloadable reloadable) {
    return new Reloadable() {
      @Override
      public void reload(GatewayConfig next) {
        reloadable.reload(next);
      }

      @Override
      public String toString() {
        return name;
      }
    };
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

  /** {@code routes} of {@code GET /admin/status}: each cloud route in order, with its breaker. */
  private ArrayNode routesStatus(GatewayConfig config) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    List<CloudRouteConfig> configured = config.cloud().effectiveRoutes();
    for (int i = 0; i < routes.size(); i++) {
      ObjectNode route = out.addObject()
          .put("name", routes.get(i).name())
          .put("kind", configured.get(i).kind().spelling())
          .put("baseUrl", configured.get(i).baseUrl());
      route.set("breaker", routes.get(i).breaker().status().toJson());
    }
    return out;
  }

  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  /** The registry every component registers its meters in; {@code /metrics} scrapes it. */
  public MeterRegistry meters() {
    return metrics.registry();
  }

  /** Swaps in the new keys; a team that lost a key loses its cached answers with it. */
  private void reloadKeys(GatewayConfig next) {
    KeyRegistry previous = keys.getAndSet(KeyRegistry.from(next.keys()));
    Set<String> stillValid = new HashSet<>();
    keys.get().callers().forEach(caller -> stillValid.add(caller.keyId()));
    previous.callers().stream()
        .filter(caller -> !stillValid.contains(caller.keyId()))
        .map(Caller::team)
        .distinct()
        .forEach(team -> cache.invalidateTeam(team));
  }

  /** The code-aware trimmer's settings from {@code shaping.trim}, for fitting requests to the local model. */
  private static TrimSettings trimSettings(ShapingConfig.TrimConfig trim) {
    return new TrimSettings(trim.keepLastLines(), trim.keepDefinitions(), trim.keepTraceDefinitions(),
        trim.maxDefinitionLines(), trim.marker());
  }

  private static RequestLimiter requestLimiter(GatewayConfig config, RedisLink redis, Clock clock, ApiKeys apiKeys) {
    RateLimitPolicy policy = new RateLimitPolicy(config.quota(), apiKeys);
    if (redis != null) {
      return RedisRequestLimiter.connect(redis, config.quota().storeTimeout(), policy, clock,
          config.quota().failClosed(), config.quota().flushInterval());
    }
    return new ReplicaRequestLimiter(policy, clock);
  }

  /**
   * What shaping asks about pressure: the breakers and the quota pools. The cloud is degraded while
   * no route's breaker is closed (one route still taking traffic is no reason to push requests local).
   */
  private static PressureSignals pressure(List<Breaker> breakers, QuotaPools quota) {
    return new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return breakers.stream().allMatch(breaker -> {
          Breaker.State state = breaker.state();
          return state == Breaker.State.OPEN || state == Breaker.State.HALF_OPEN
              || state == Breaker.State.FORCED_OPEN;
        });
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return quota.pastSoftBand(tier);
      }
    };
  }

  private static GatewayResponse json(String body) {
    return GatewayResponse.json(200, body.getBytes(StandardCharsets.UTF_8));
  }

  /** Starts a gateway; {@code configFile} (may be null) is what a reload reads again. */
  public static Gateway start(GatewayConfig config, Clock clock, Path configFile) {
    return start(config, clock, Ticker.system(), configFile);
  }

  /**
   * Starts a gateway with wall time from {@code clock} and durations from {@code ticker} (both
   * injected into every part that needs them; tests pass fakes).
   */
  public static Gateway start(GatewayConfig config, Clock clock, Ticker ticker, Path configFile) {
    Gateway gateway = new Gateway(config, clock, ticker, configFile);
    try {
      gateway.server.start();
    } catch (RuntimeException e) {
      gateway.close();
      throw e;
    }
    SelfReference.warnings(gateway.config, gateway.port()).forEach(warning -> log.warn("config: {}", warning));
    // Once listening; readiness waits for none of these (docs/performance.md "Start to ready").
    TokenCounter.warmUp();
    gateway.clients.warmUpTls();
    gateway.metrics.bindJvmMeters();
    return gateway;
  }

  public static Gateway start(GatewayConfig config, Clock clock) {
    return start(config, clock, null);
  }

  public int port() {
    return server.port();
  }

  /** The OpenAI base URL clients point at, e.g. {@code http://127.0.0.1:8080/v1}. */
  public String baseUrl() {
    String host = config.server().host();
    if (host.equals("0.0.0.0") || host.equals("::")) {
      host = "127.0.0.1";
    }
    return (config.server().tls() != null ? "https" : "http") + "://" + host + ":" + port() + "/v1";
  }

  /** The connection limit in force, and why it may be below {@code server.maxConnections}. */
  public ConnectionBudget connectionBudget() {
    return server.budget();
  }

  public int openConnections() {
    return server.openConnections();
  }

  public int inFlightRequests() {
    return server.inFlightRequests();
  }

  /** Request-body bytes held for uploads that have not ended yet (server.maxPendingBodyBytes). */
  public long pendingBodyBytes() {
    return server.pendingBodyBytes();
  }

  /** Response bytes waiting for slow clients to read them, over all connections. */
  public long pendingWriteBytes() {
    return server.pendingWriteBytes();
  }

  public GatewayConfig config() {
    return config;
  }

  public GatewayMetrics metrics() {
    return metrics;
  }

  /** The sections of {@code GET /admin/status}. */
  public StatusRegistry status() {
    return status;
  }

  /**
   * Adds a component that gets every validated new config on reload and applies the named sections
   * (e.g. {@code onReload(limiter::reload, "quota")}); other changed sections are reported as
   * needing a restart.
   */
  public void onReload(Reloadable reloadable, String... sections) {
    reloader.register(reloadable, sections);
  }

  /** Re-reads the config file, as {@code SIGHUP} and {@code POST /admin/reload} do. */
  public ConfigReloader.Result reload() {
    return reloader.reload();
  }

  /** A reload asked for by {@code SIGHUP}: as {@link #reload()}, and recorded in the audit log. */
  public ConfigReloader.Result reloadBySignal() {
    ConfigReloader.Result result = reloader.reload();
    audit.record("signal:SIGHUP", "local", null, "config.reload", line -> ReloadEndpoint.describe(line, result));
    return result;
  }

  /** The local backend, or null when {@code local.enabled} is false. */
  public LocalPool local() {
    return local;
  }

  /** The response cache; a config reload that revokes a team's key calls {@code invalidateTeam}. */
  public ResponseCache cache() {
    return cache;
  }

  /** The waiting area in front of the backends; its {@code snapshot()} is the admission status. */
  public PriorityAdmissionGate admission() {
    return admission;
  }

  /** Keys created through the admin API, beside the config file's. */
  public ApiKeys apiKeys() {
    return apiKeys;
  }

  /** The first cloud route's capacity breaker: this replica's own, or the fleet's with Redis. */
  public Breaker breaker() {
    return breaker;
  }

  /** The cloud routes in the order they are tried, each with its backend and breaker. */
  public List<CloudRoute> routes() {
    return routes;
  }

  /** {@code GET /admin/quota}: the token pools, per-team tokens, and this month's spend. */
  private ObjectNode quotaReport() {
    ObjectNode report = quota.report();
    report.set("spend", spend.report());
    return report;
  }

  /** The tier pools: the shaping stage asks {@link QuotaPools#pastSoftBand} to decide on degrading. */
  public QuotaPools quota() {
    return quota;
  }

  /**
   * Stops the front end (letting requests in flight drain), then closes every part, each one even
   * when one before it fails; the first failure is thrown afterwards ({@link Closer}).
   */
  @Override
  public void close() {
    Closer closer = new Closer()
        .then("the front end", () -> server.stop(config.server().drainTimeout()))
        .then("the local backend", local)
        .then("the local scheduler", localScheduler::shutdownNow)
        .then("the request limiter", requestLimiter)
        .then("the tier pools", quota)
        .then("spend", spend)
        .then("the usage store", usageStore)
        .then("the response store", responseStore)
        .then("the key store", apiKeys);
    routes.forEach(route -> closer.then("the breaker of route " + route.name(), route.breaker()));
    closer.then("the risk counts", riskCounts)
        .then("the Redis link", redis) // after every part that used it
        .then("tracing", tracing)
        .then("the HTTP clients", clients)
        .closeAll();
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
