package io.spillway.app.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.FakeClock;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.testing.SampleSources;
import io.spillway.quota.accounting.QuotaInterceptor;
import io.spillway.quota.accounting.TokenEstimator;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.store.MemoryUsageStore;
import io.spillway.quota.testing.QuotaTesting;
import io.spillway.shaping.PressureSignals;
import io.spillway.shaping.ShapingStages;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Shaping (signal scoring, the trim decision) and the quota estimate read a request's prompt from one
 * walk over it ({@link PromptWalk}): together they go through the client's messages once, for every
 * tier and every API that has a prompt. A body shaping trimmed is estimated from the walk of the
 * trimmed copy, as the estimator always estimated the body it was handed.
 */
class PromptWalkedOnceTest {
  private static final long MAX_TOKENIZED = 131_072;
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final QuotaPools pools = new QuotaPools(QuotaTesting.quota("quota: {monthlyTokens: 1000000000}"),
      new MemoryUsageStore(), clock, new SimpleMeterRegistry());

  @AfterEach
  void tearDown() {
    pools.close();
  }

  /** What reached the terminal, and the tokens the tier's pool held reserved for it then. */
  private record Seen(GatewayRequest request, long reserved) {}

  static List<Arguments> bodiesByTier() {
    List<Arguments> out = new ArrayList<>();
    for (PromptBodies.Body body : PromptBodies.captured()) {
      if (body.name().startsWith("bench/codex") || body.name().equals("codex/first-turn.json")
          || body.route() == Route.MESSAGES) {
        for (Tier tier : Tier.values()) {
          out.add(Arguments.of(body, tier));
        }
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}, {1}")
  @MethodSource("bodiesByTier")
  void shapingAndTheEstimateShareOneWalkOfTheClientsBody(PromptBodies.Body captured, Tier tier) {
    ObjectNode body = captured.body().deepCopy();
    CountedArray prompt = counted(body, captured.route() == Route.RESPONSES ? "input" : "messages");

    Seen seen = send(ShapingConfig.DEFAULTS, tier, captured.route(), body);

    assertThat(seen.request().body()).as("no stage changed the body").isSameAs(body);
    assertThat(prompt.walks).as("times the client's %s were gone through", prompt.field).isEqualTo(1);
    assertThat(PromptWalk.of(seen.request())).isSameAs(PromptWalk.of(seen.request(), body));
    assertThat(PromptWalk.of(seen.request()).texts()).isNotEmpty();
    assertThat(seen.reserved()).isEqualTo(freshEstimate(captured.route(), body))
        .isEqualTo(recordedEstimate(captured.name()));
  }

  @ParameterizedTest
  @EnumSource(Tier.class)
  void aTrimmedCopyIsEstimatedFromItsOwnWalkAndTheClientsBodyIsWalkedOnce(Tier tier) {
    String file = SampleSources.pythonModuleWithTraceback(2000);
    ObjectNode body = Json.object().put("model", "gpt-4o");
    body.putArray("messages").add(Json.object().put("role", "system").put("content", "You fix bugs."))
        .add(Json.object().put("role", "user").put("content", "This fails:\n```python\n" + file + "```\nWhy?"));
    CountedArray messages = counted(body, "messages");
    ShapingConfig trimAbove1000 = QuotaTesting.config("""
        shaping:
          tiers:
            gold: { trimAboveTokens: 1000 }
            silver: { trimAboveTokens: 1000 }
            bronze: { trimAboveTokens: 1000 }
        """).shaping();

    Seen seen = send(trimAbove1000, tier, Route.CHAT_COMPLETIONS, body);

    ObjectNode trimmed = seen.request().body();
    assertThat(trimmed).isNotSameAs(body);
    assertThat(messages.walks).isEqualTo(1);
    PromptWalk client = PromptWalk.of(seen.request(), body);
    PromptWalk own = PromptWalk.of(seen.request());
    assertThat(own).isNotSameAs(client);
    assertThat(own.texts().get(1)).contains("... (context trimmed)")
        .hasSizeLessThan(client.texts().get(1).length());
    assertThat(seen.reserved()).isEqualTo(freshEstimate(Route.CHAT_COMPLETIONS, trimmed))
        .isLessThan(freshEstimate(Route.CHAT_COMPLETIONS, body));
  }

  private Seen send(ShapingConfig shaping, Tier tier, Route route, ObjectNode body) {
    AtomicReference<Seen> seen = new AtomicReference<>();
    List<Interceptor> stages = new ArrayList<>();
    stages.add(chain -> {
      chain.request().setAttribute(RequestAttributes.CALLER, new Caller("team", tier, "k1"));
      return chain.proceed(chain.request());
    });
    stages.addAll(ShapingStages.create(shaping, PressureSignals.NONE, null, new SimpleMeterRegistry(), clock));
    stages.add(new QuotaInterceptor(pools, new TokenEstimator(1024, MAX_TOKENIZED)));
    Pipeline pipeline = new Pipeline(stages, Terminal.blocking(request -> {
      seen.set(new Seen(request, pools.snapshot(tier).reserved()));
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    }));
    GatewayResponse answer = pipeline.execute(GatewayRequest.create("req-1", route, Headers.EMPTY, body, null,
        clock.instant()));
    assertThat(answer.status()).isEqualTo(200);
    return seen.get();
  }

  /** The estimate of a fresh request with {@code body}, from a walk of its own. */
  private static long freshEstimate(Route route, ObjectNode body) {
    return new TokenEstimator(1024, MAX_TOKENIZED)
        .estimate(GatewayRequest.create("fresh", route, Headers.EMPTY, body, null, Instant.EPOCH)).total();
  }

  /**
   * The whole-prompt estimate of a captured body as the estimator made it when it walked the body
   * itself, recorded in gateway-quota's golden file (these prompts are all within the bound).
   */
  private static long recordedEstimate(String name) {
    for (JsonNode entry : Golden.read("prompt-estimates.json").get("warm")) {
      if (entry.get("name").asText().equals(name)) {
        return entry.get("promptTokens").get(0).asLong() + entry.get("maxOutputTokens").asLong();
      }
    }
    throw new AssertionError("no golden estimate for " + name);
  }

  /** Puts a counting copy of {@code body}'s array {@code field} in its place. */
  private static CountedArray counted(ObjectNode body, String field) {
    CountedArray array = new CountedArray(field, (ArrayNode) body.get(field));
    body.set(field, array);
    return array;
  }

  /** An array that counts how often it is gone through (a deep copy of it is a plain array). */
  private static final class CountedArray extends ArrayNode {
    final String field;
    int walks;

    CountedArray(String field, ArrayNode items) {
      super(JsonNodeFactory.instance);
      this.field = field;
      addAll(items);
    }

    @Override
    public Iterator<JsonNode> elements() {
      walks++;
      return super.elements();
    }
  }
}
