package io.spillway.shaping;

import io.spillway.core.tokens.TokenTally;
import io.spillway.core.tokens.TokenCounter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.shaping.risk.RiskIndex;
import io.spillway.shaping.signal.SignalScorer;
import io.spillway.shaping.stop.StopRewrite;
import io.spillway.shaping.trim.ContextTrimmer;
import io.spillway.shaping.trim.TrimSettings;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shaping stage (after authentication, before quota): makes each request cheaper to serve under
 * pressure instead of failing it, and tells the client exactly what it changed.
 *
 * <p>Per request, in this order:
 *
 * <ol>
 *   <li><b>signal scoring</b>: a low-signal request gets {@link RequestAttributes#LOW_SIGNAL} (the
 *       admission queue serves it last) and {@code x-spillway-signal: low};
 *   <li>the {@link ShapingPolicy} decides how far down the ladder the request goes;
 *   <li><b>trim</b> oversized code context (also without pressure above the tier's
 *       {@code trimAboveTokens}); <b>downgrade</b> sampling parameters; <b>stop rewrite</b>;
 *       <b>model</b> (a smaller one from the scenario table, {@link RequestAttributes#MODEL_REWRITTEN_FROM});
 *       <b>local</b> ({@link RequestAttributes#PREFER_LOCAL}: a preference the router honours unless the
 *       request becomes the breaker's half-open probe or local cannot serve it);
 *   <li>the answer is observed for the {@link RiskIndex} (latency, errors and capacity answers), cut
 *       at the rewritten stop sequences, and gets {@code x-spillway-degraded} listing the steps applied
 *       (also in {@link RequestAttributes#DEGRADED}); {@code local} is listed only when the local
 *       backend served it.
 * </ol>
 *
 * A request that nothing applies to is passed on untouched, as the exact bytes the client sent. The
 * body is copied once when something changes. Thread-safe; one instance serves every request.
 */
public final class ShapingInterceptor implements Interceptor {
  public static final String DEGRADED_HEADER = "x-spillway-degraded";
  public static final String SIGNAL_HEADER = "x-spillway-signal";
  private static final Logger log = LoggerFactory.getLogger(ShapingInterceptor.class);
  private static final String LOCAL_STEP = "local";
  /** The value the router sets in {@link RequestAttributes#BACKEND} when the local backend served. */
  private static final String LOCAL_BACKEND = "local";

  private final ShapingConfig config;
  private final ShapingPolicy policy;
  private final RiskIndex risk;
  private final Clock clock;
  private final SignalScorer scorer;
  private final ParameterDowngrade downgrade;
  private final StopRewrite stopRewrite;
  private final ModelScenarios scenarios;
  private final ShapingMetrics metrics;
  private final Set<String> roles;
  private final Map<Tier, TierTrim> trims = new EnumMap<>(Tier.class);

  private record TierTrim(ContextTrimmer trimmer, int aboveTokens, int underPressureAboveTokens) {}

  /**
   * @param risk the risk index this stage feeds and the policy reads, or null to run without one
   */
  public ShapingInterceptor(ShapingConfig config, PressureSignals signals, RiskIndex risk, MeterRegistry meters,
      Clock clock) {
    this(config, signals, risk, meters, clock, Executors.newVirtualThreadPerTaskExecutor());
  }

  ShapingInterceptor(ShapingConfig config, PressureSignals signals, RiskIndex risk, MeterRegistry meters, Clock clock,
      Executor counting) {
    this.config = config;
    this.risk = risk;
    this.clock = clock;
    this.policy = new ShapingPolicy(config, signals, risk);
    this.scorer = new SignalScorer(config.signal());
    this.downgrade = new ParameterDowngrade(config.downgrade());
    this.stopRewrite = new StopRewrite(config.stop());
    this.scenarios = new ModelScenarios(config.models(), config.scenarios());
    this.metrics = new ShapingMetrics(meters, counting);
    this.roles = Set.copyOf(config.trim().roles());
    ShapingConfig.TrimConfig trim = config.trim();
    for (Tier tier : Tier.values()) {
      ShapingConfig.TierConfig t = config.tier(tier.tag());
      TrimSettings settings = new TrimSettings(
          t.keepLastLines() != null ? t.keepLastLines() : trim.keepLastLines(),
          t.keepDefinitions() != null ? t.keepDefinitions() : trim.keepDefinitions(),
          trim.keepTraceDefinitions(), trim.maxDefinitionLines(), trim.marker());
      trims.put(tier, new TierTrim(new ContextTrimmer(settings), t.trimAboveTokens(), t.pressureTrimAboveTokens()));
    }
  }

  public ShapingPolicy policy() {
    return policy;
  }

  @Override
  public GatewayResponse intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Caller caller = request.attribute(RequestAttributes.CALLER);
    if (request.route() == Route.MODELS || request.route() == Route.EMBEDDINGS || caller == null) {
      // Nothing to shape: a model list, or texts whose vectors must not change.
      return chain.proceed(request);
    }
    Tier tier = caller.tier();
    ObjectNode body = request.body();
    List<String> texts = texts(request.route(), body);
    String lowSignal = score(texts, body);
    if (lowSignal != null) {
      request.setAttribute(RequestAttributes.LOW_SIGNAL, true);
      metrics.lowSignal(lowSignal, tier);
    }
    ShapingPolicy.Plan plan = policy.plan(tier);
    Shaped shaped = shape(request, plan, texts);
    if (!shaped.steps().isEmpty()) {
      request.setAttribute(RequestAttributes.DEGRADED, List.copyOf(shaped.steps()));
      for (String step : shaped.steps()) {
        metrics.step(step, tier);
      }
      if (log.isDebugEnabled()) {
        log.debug("request {} shaped: steps={} pressure={}", request.id(), shaped.steps(), plan.pressure());
      }
    }
    GatewayResponse response = proceedObserved(chain, shaped.request());
    if (!shaped.stops().isEmpty()) {
      response = StopRewrite.cut(response, request.route(), shaped.stops());
    }
    // Read back from the request: a later stage (the local backend fitting the context) may have
    // added a step of its own.
    List<String> applied = applied(request, request.attribute(RequestAttributes.DEGRADED, shaped.steps()));
    if (!applied.isEmpty()) {
      response = response.withHeader(DEGRADED_HEADER, String.join(",", applied));
    }
    if (lowSignal != null) {
      response = response.withHeader(SIGNAL_HEADER, "low");
    }
    return response;
  }

  /**
   * The steps that really applied: {@code local} is a preference the router may override (the
   * breaker's half-open probe goes to the cloud whatever shaping asked, and so does a request local
   * could not serve), so it is not reported when the router says another backend served it.
   */
  private static List<String> applied(GatewayRequest request, List<String> steps) {
    String backend = request.attribute(RequestAttributes.BACKEND);
    if (!steps.contains(LOCAL_STEP) || backend == null || backend.equals(LOCAL_BACKEND)) {
      return steps;
    }
    List<String> applied = new ArrayList<>(steps);
    applied.remove(LOCAL_STEP);
    request.setAttribute(RequestAttributes.DEGRADED, List.copyOf(applied));
    return applied;
  }

  private String score(List<String> texts, ObjectNode body) {
    if (!config.signal().enabled()) {
      return null;
    }
    JsonNode temperature = body.get("temperature");
    SignalScorer.Reason reason = scorer.score(texts,
        temperature != null && temperature.isNumber() ? temperature.doubleValue() : null, maxTokens(body));
    return reason != null ? reason.tag() : null;
  }

  private static long maxTokens(ObjectNode body) {
    long max = 0;
    for (String field : ParameterDowngrade.MAX_TOKEN_FIELDS) {
      JsonNode value = body.get(field);
      if (value != null && value.canConvertToLong()) {
        max = Math.max(max, value.longValue());
      }
    }
    return max;
  }

  private record Shaped(GatewayRequest request, List<String> steps, List<String> stops) {}

  /** Applies what the plan allows; {@code texts} are every text of the request, for the size checks. */
  private Shaped shape(GatewayRequest request, ShapingPolicy.Plan plan, List<String> texts) {
    Route route = request.route();
    ObjectNode body = request.body();
    List<String> steps = new ArrayList<>(4);
    ObjectNode copy = null;
    TokenCounter tokenizer = TokenCounter.forModel(request.model());
    TokenTally counter = tokenizer.tally(config.maxTokenizedChars());

    TierTrim trim = trims.get(plan.tier());
    boolean trimUnderPressure = plan.allows(LadderStep.TRIM);
    if (trimUnderPressure || trim.aboveTokens() > 0) {
      int limit = trim.aboveTokens() > 0 ? trim.aboveTokens() : Integer.MAX_VALUE;
      if (trimUnderPressure) {
        limit = Math.min(limit, trim.underPressureAboveTokens());
      }
      if (counter.exceeds(texts, limit)) {
        ObjectNode candidate = body.deepCopy();
        boolean trimmed = RequestTexts.rewrite(route, candidate, roles,
            (text, kind) -> trimText(trim.trimmer(), tokenizer, counter, text, kind));
        if (trimmed) {
          copy = candidate;
          steps.add("trimmed");
        }
      }
    }

    if (plan.allows(LadderStep.DOWNGRADE)) {
      ObjectNode candidate = copy != null ? copy : body.deepCopy();
      int before = steps.size();
      metrics.tokensSaved("max_tokens", downgrade.apply(candidate, steps));
      if (steps.size() > before) {
        copy = candidate;
      }
    }

    List<String> stops = List.of();
    if (rewriteStops(plan) && stopRewrite.applies(route, body)) {
      copy = copy != null ? copy : body.deepCopy();
      stops = stopRewrite.rewrite(route, copy);
      steps.add("stop");
    }

    if (plan.allows(LadderStep.MODEL)) {
      String smaller = scenarios.smallerModel(request.model(), body,
          () -> counter.exceeds(texts, config.scenarios().shortPromptTokens()));
      if (smaller != null) {
        copy = copy != null ? copy : body.deepCopy();
        copy.put("model", smaller);
        request.setAttribute(RequestAttributes.MODEL_REWRITTEN_FROM, request.model());
        steps.add("model");
      }
    }

    if (plan.allows(LadderStep.LOCAL)) {
      request.setAttribute(RequestAttributes.PREFER_LOCAL, true);
      steps.add(LOCAL_STEP);
    }
    return new Shaped(copy != null ? request.withBody(copy) : request, steps, stops);
  }

  private boolean rewriteStops(ShapingPolicy.Plan plan) {
    return switch (config.stop().apply()) {
      case "always" -> true;
      case "pressure" -> plan.underPressure();
      default -> false;
    };
  }

  private static List<String> texts(Route route, ObjectNode body) {
    List<String> texts = new ArrayList<>();
    RequestTexts.forEach(route, body, texts::add);
    return texts;
  }

  /** One text trimmed, kept only if that gives fewer tokens. */
  private String trimText(
      ContextTrimmer trimmer, TokenCounter tokenizer, TokenTally counter, String text, RequestTexts.Kind kind) {
    String trimmed = kind == RequestTexts.Kind.CODE ? trimmer.trimCode(text, null) : trimmer.trimMessage(text);
    return TokenGuard.fewerTokens(text, trimmed, counter, (original, after) ->
        metrics.trimmed(tokenizer.tally(config.maxTokenizedChars()), original, after));
  }

  /** Calls the rest of the pipeline and tells the risk index how the upstream did. */
  private GatewayResponse proceedObserved(Chain chain, GatewayRequest request) {
    long started = clock.millis();
    GatewayResponse response;
    try {
      response = chain.proceed(request);
    } catch (UpstreamException e) {
      observe(started, true);
      throw e;
    } catch (GatewayException e) {
      if (refusedByGateway(e.kind())) {
        if (risk != null) {
          risk.recordRefused();
        }
      } else {
        observe(started, e.status() == 429 || e.status() >= 500);
      }
      throw e;
    } catch (RuntimeException e) {
      observe(started, true);
      throw e;
    }
    observe(started, response.status() == 429 || response.status() >= 500);
    return response;
  }

  private static boolean refusedByGateway(ErrorKind kind) {
    return kind == ErrorKind.RATE_LIMITED || kind == ErrorKind.QUOTA_EXCEEDED || kind.status() < 429;
  }

  private void observe(long started, boolean error) {
    if (risk != null) {
      risk.record(clock.millis() - started, error);
    }
  }

  @Override
  public String toString() {
    return "ShapingInterceptor";
  }
}
