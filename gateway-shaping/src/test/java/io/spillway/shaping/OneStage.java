package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.ConfigLoader;
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
import io.spillway.core.testing.FakeClock;
import io.spillway.core.testing.SampleSources;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One shaping stage alone in a pipeline: in front of it, a caller of the given tier and (when given)
 * the ladder's plan, as authentication and {@link LadderInterceptor} would leave them; behind it, a
 * terminal that records what reached it and answers with {@link #answer}.
 */
final class OneStage {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final ShapingMetrics metrics = new ShapingMetrics(meters, Runnable::run);
  GatewayRequest upstream;
  Function<GatewayRequest, GatewayResponse> answer =
      request -> GatewayResponse.json(200, "{\"choices\":[]}".getBytes(StandardCharsets.UTF_8));

  static ShapingConfig config(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml).shaping();
  }

  /** A plan under pressure that allows {@code steps}. */
  static ShapingPolicy.Plan plan(Tier tier, LadderStep... steps) {
    EnumSet<LadderStep> allowed = EnumSet.noneOf(LadderStep.class);
    allowed.addAll(List.of(steps));
    return new ShapingPolicy.Plan(tier, List.of("always"), allowed);
  }

  GatewayResponse send(Interceptor stage, Tier tier, ShapingPolicy.Plan plan, Route route, String json) {
    return send(stage, tier, route, json, request -> request.setAttribute(ShapingAttributes.PLAN, plan));
  }

  GatewayResponse send(Interceptor stage, Tier tier, Route route, String json, Consumer<GatewayRequest> before) {
    Pipeline pipeline = new Pipeline(List.of(chain -> {
      if (tier != null) {
        chain.request().setAttribute(RequestAttributes.CALLER, new Caller("team", tier, "k1"));
      }
      before.accept(chain.request());
      return chain.proceed(chain.request());
    }, stage), Terminal.blocking(request -> {
      upstream = request;
      return answer.apply(request);
    }));
    byte[] raw = json.getBytes(StandardCharsets.UTF_8);
    try {
      ObjectNode body = (ObjectNode) Json.parse(raw);
      return pipeline.execute(GatewayRequest.create("req-1", route, Headers.EMPTY, body, raw, clock.instant()));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  String upstreamBytes() {
    return new String(upstream.bodyBytes(), StandardCharsets.UTF_8);
  }

  static String chat(String extra, String content) {
    return "{\"model\":\"gpt-4o\"," + extra + "\"messages\":[{\"role\":\"user\",\"content\":" + quote(content) + "}]}";
  }

  static String chatWithFile(String extra) {
    String file = SampleSources.pythonModuleWithTraceback(2000);
    return chat(extra, "This fails:\n```python\n" + file + "```\nWhy?");
  }

  static String quote(String text) {
    return Json.MAPPER.getNodeFactory().textNode(text).toString();
  }

  double counter(String name, String... tags) {
    var counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }
}
