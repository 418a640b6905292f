package io.spillway.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.app.observe.RequestObserverInterceptor;
import io.spillway.app.observe.RouterMetrics;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.app.reload.ReloadableInterceptor;
import io.spillway.app.reload.ReloadableRequestLimiter;
import io.spillway.app.reload.ReloadableStages;
import io.spillway.config.GatewayConfig;
import io.spillway.core.api.ModelQueryInterceptor;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.api.ParseInterceptor;
import io.spillway.core.api.anthropic.CountTokens;
import io.spillway.core.http.LoopGuardInterceptor;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.responses.ResponseStateInterceptor;
import io.spillway.core.responses.StoredResponsesEndpoint;
import io.spillway.core.tokens.PromptPieces;
import io.spillway.core.responses.StoredResponsesService;
import io.spillway.core.risk.RiskCounts;
import io.spillway.quota.accounting.QuotaInterceptor;
import io.spillway.quota.accounting.TokenEstimator;
import io.spillway.quota.accounting.TokenReportInterceptor;
import io.spillway.quota.admission.PriorityAdmissionGate;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.ratelimit.RateLimitInterceptor;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.quota.ratelimit.RedisRequestLimiter;
import io.spillway.quota.ratelimit.ReplicaRequestLimiter;
import io.spillway.quota.ratelimit.RequestLimiter;
import io.spillway.quota.spend.SpendLedger;
import io.spillway.quota.store.UsageStore;
import io.spillway.quota.store.UsageStores;
import io.spillway.routing.ModelsService;
import io.spillway.routing.Router;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.risk.RiskCountSources;
import io.spillway.shaping.PressureSignals;
import io.spillway.shaping.ShapingStages;
import io.spillway.shaping.risk.RiskIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The model pipeline: the stages of a model call in front of the router, and the accounting they
 * share (rate limits, the waiting area, the usage store, tier pools and spend, the risk index). The
 * one factory of it: {@code serve} runs it behind the front end, and the benchmarks
 * ({@code gateway-bench}) run it over a canned upstream, so they measure the production wiring.
 *
 * <p>Order: observe (metrics, access log) → parse → trace (when {@code traces.endpoint} is set) →
 * loop guard → auth → token report → cache → outcome headers → response state (with the response
 * store) → shaping → rate limits → quota → router (terminal, metered; admission is entered by the
 * router per backend call). Beside it, with the same front stages: the model list (observe → model
 * query → trace → loop guard → auth → rate limits → outcome headers → {@link ModelsService}),
 * Anthropic's token count, and the stored responses' retrieval.
 */
public final class ModelPipeline implements AutoCloseable {
  final RequestLimiter requestLimiter;
  final PriorityAdmissionGate admission;
  final RiskCounts riskCounts;
  final RiskIndex risk;
  final UsageStore usageStore;
  final QuotaPools quota;
  final SpendLedger spend;
  /** The model calls: chat, completions, responses, embeddings, Anthropic's messages. */
  final Pipeline modelCalls;
  /** Anthropic's token count: answered by the gateway after the same authentication and rate limits. */
  final Pipeline tokenCount;
  final Pipeline modelList;
  /** {@code GET}/{@code DELETE /v1/responses/{id}}, its input items, and the Conversations API. */
  final Pipeline storedResponses;

  private ModelPipeline(Foundation base, Backends backends, Closer built) {
    GatewayConfig config = base.config;
    MeterRegistry meters = base.metrics.registry();
    ConfigReloader reloader = base.reloader;

    ReloadableRequestLimiter limiter =
        new ReloadableRequestLimiter(requestLimiter(base), base.apiKeys);
    this.requestLimiter = limiter;
    built.then("the request limiter", requestLimiter);
    reloader.register(limiter, "quota.tiers", "quota.teams");
    this.admission = PriorityAdmissionGate.from(config.quota(), base.clock, base.ticker, meters);
    reloader.register("admission maxWait", next -> admission.reload(next.quota()), "quota.tiers");
    base.status.register("admission", admission::snapshot);

    this.riskCounts = RiskCountSources.open(base.redis, config.shaping().risk(),
        BreakerSettings.from(config.failover()), base.clock);
    built.then("the risk counts", riskCounts);
    this.risk = new RiskIndex(config.shaping().risk(), base.clock, riskCounts).bindTo(meters);
    base.status.register("risk", risk::snapshot);

    this.usageStore = UsageStores.open(config, base.redis, base.clock);
    built.then("the usage store", usageStore);
    this.quota = new QuotaPools(config.quota(), usageStore, base.clock, meters, base.apiKeys);
    built.then("the tier pools", quota);
    reloader.register("quota pools", next -> quota.reload(next.quota()), "quota.monthlyTokens",
        "quota.alertAt", "quota.softAt", "quota.tiers", "quota.timezone", "quota.alertWebhook",
        "quota.alertWebhookTimeout", "quota.maxReportedTokens");
    this.spend = new SpendLedger(config.spend(), config.quota(), quota::calendar, usageStore, meters);
    built.then("spend", spend);
    reloader.register("spend", next -> spend.reload(next.spend(), next.quota()), "spend", "quota.alertAt",
        "quota.softAt", "quota.alertWebhook", "quota.alertWebhookTimeout");
    base.status.register("quota", this::quotaReport);

    RouterMetrics routerMetrics = new RouterMetrics(meters);
    Router router = Router.builder()
        .routes(backends.routes)
        .local(backends.meteredLocal)
        .classifier(backends.classifier)
        .admission(admission)
        .retryLocally(config.failover().retryLocally())
        .localModels(backends.localModels)
        .ticker(base.ticker)
        .listener(routerMetrics)
        .build();

    RequestObserverInterceptor observer =
        new RequestObserverInterceptor(base.metrics, base.accessLog, base.clock, base.ticker, quota::maxReportedTokens);
    List<Interceptor> front = frontStages(base, quota);
    RateLimitInterceptor rateLimits = new RateLimitInterceptor(requestLimiter);

    // One memo of request pieces for both pipelines: count_tokens is sent the turn the model call is.
    ParseInterceptor parse = new ParseInterceptor(PromptPieces.keeping(config.server().pieceMemory().bytes()));
    List<Interceptor> stages = new ArrayList<>(List.of(observer, parse));
    stages.addAll(front);
    stages.add(new TokenReportInterceptor(quota));
    stages.add(backends.cache.interceptor());
    stages.add(new OutcomeHeadersInterceptor()); // inside the cache: stored and shared answers keep their headers
    if (base.responseStore != null) {
      // Before shaping: the exchange is stored as the client sent it.
      stages.add(new ResponseStateInterceptor(base.responseStore, config.responses().maxChain(), base.clock,
          base.redactor));
    }
    stages.addAll(shaping(base, backends).stages());
    stages.add(rateLimits);
    stages.add(accounting(base));
    this.modelCalls = new Pipeline(stages, base.metrics.meter(router, base.ticker));

    List<Interceptor> countStages = new ArrayList<>(List.of(observer, parse));
    countStages.addAll(front);
    countStages.add(rateLimits);
    this.tokenCount = new Pipeline(countStages, new CountTokens(config.shaping().maxTokenizedChars()));

    List<Interceptor> listStages = new ArrayList<>(List.of(observer, new ModelQueryInterceptor()));
    listStages.addAll(front);
    listStages.add(rateLimits);
    listStages.add(new OutcomeHeadersInterceptor());
    this.modelList = new Pipeline(listStages, base.metrics.meter(new ModelsService(backends.routes,
        backends.classifier, admission, backends.localModels, base.ticker, routerMetrics), base.ticker));

    List<Interceptor> storedStages = new ArrayList<>(List.of(observer, StoredResponsesEndpoint.QUERY_STAGE));
    storedStages.addAll(front);
    storedStages.add(rateLimits);
    storedStages.add(new OutcomeHeadersInterceptor());
    this.storedResponses = new Pipeline(storedStages, base.metrics.meter(
        new StoredResponsesService(base.responseStore, backends.routes.get(0).backend()), base.ticker));
  }

  /**
   * The model pipeline over {@code backends}, its parts registered with {@code base}'s reloader and
   * status; on a failure, what was built is closed again.
   */
  public static ModelPipeline create(Foundation base, Backends backends) {
    Closer built = new Closer();
    try {
      return new ModelPipeline(base, backends, built);
    } catch (RuntimeException | Error e) {
      built.unwindAfter(e);
      throw e;
    }
  }

  /** The pipeline of the model calls, the one {@code serve} runs. */
  public Pipeline modelCalls() {
    return modelCalls;
  }

  /** Trace (when on) → loop guard → auth: every pipeline's stages after its first ones. */
  private static List<Interceptor> frontStages(Foundation base, QuotaPools quota) {
    List<Interceptor> front = new ArrayList<>();
    if (base.tracing.enabled()) {
      front.add(base.tracing.stage(quota::maxReportedTokens));
    }
    AtomicInteger maxHops = new AtomicInteger(base.config.server().maxHops());
    base.reloader.register("loop guard", next -> maxHops.set(next.server().maxHops()), "server.maxHops");
    front.add(new LoopGuardInterceptor(maxHops::get));
    front.add(new AuthInterceptor(base.keys, base.apiKeys, base.clock));
    return front;
  }

  /** Shaping's stages, built again from each reloaded {@code shaping} section. */
  private ReloadableStages shaping(Foundation base, Backends backends) {
    List<BooleanSupplier> routesDegraded = backends.breakers.stream()
        .<BooleanSupplier>map(breaker -> () -> breaker.state().degraded()).toList();
    PressureSignals pressure = PressureSignals.of(routesDegraded, quota::pastSoftBand);
    MeterRegistry meters = base.metrics.registry();
    ReloadableStages shaping = new ReloadableStages("shaping", base.config,
        next -> ShapingStages.create(next.shaping(), pressure, risk, meters, base.ticker));
    // The risk index keeps its windows and settings from start-up; which tiers it shapes applies.
    List<String> shapingKeys = new ArrayList<>(List.of(ConfigReloader.keysOf("shaping", "risk")));
    shapingKeys.add("shaping.risk.tiers");
    base.reloader.register(shaping, shapingKeys.toArray(String[]::new));
    return shaping;
  }

  /** Quota's stage, built again when the token estimate's settings are reloaded. */
  private ReloadableInterceptor accounting(Foundation base) {
    ReloadableInterceptor accounting = new ReloadableInterceptor(base.config,
        next -> new QuotaInterceptor(quota, new TokenEstimator(next.quota().defaultMaxTokens(),
            next.shaping().maxTokenizedChars()), spend));
    base.reloader.register(accounting, "quota.defaultMaxTokens", "shaping.maxTokenizedChars");
    return accounting;
  }

  private static RequestLimiter requestLimiter(Foundation base) {
    GatewayConfig config = base.config;
    RateLimitPolicy policy = new RateLimitPolicy(config.quota(), base.apiKeys);
    if (base.redis != null) {
      return RedisRequestLimiter.connect(base.redis, config.quota().storeTimeout(), policy, base.clock,
          config.quota().failClosed(), config.quota().flushInterval());
    }
    return new ReplicaRequestLimiter(policy, base.clock);
  }

  /** {@code GET /admin/quota}: the token pools, per-team tokens, and this month's spend. */
  ObjectNode quotaReport() {
    ObjectNode report = quota.report();
    report.set("spend", spend.report());
    return report;
  }

  /** Closes the request limiter, the tier pools, spend, the usage store and the risk counts, each even when one fails. */
  @Override
  public void close() {
    new Closer()
        .then("the request limiter", requestLimiter)
        .then("the tier pools", quota)
        .then("spend", spend)
        .then("the usage store", usageStore)
        .then("the risk counts", riskCounts)
        .closeAll();
  }
}
