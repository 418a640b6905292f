package io.spillway.quota.accounting;

import static io.spillway.quota.accounting.TokenEstimatorTest.request;
import static io.spillway.quota.testing.QuotaTesting.BRONZE;
import static io.spillway.quota.testing.QuotaTesting.GOLD;
import static io.spillway.quota.testing.QuotaTesting.SILVER;
import static io.spillway.quota.testing.QuotaTesting.quota;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.store.MemoryUsageStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A backend that reports absurd usage (issue 25, finding 3): 4e18 tokens, Long.MAX_VALUE, a count as a
 * string, a negative or fractional count. Each report is refused and counted, and the request is
 * settled exactly as if the backend had reported nothing (at the estimate), for every tier, buffered
 * and streamed; the pool and the team stay sane.
 */
class HostileUsageTest {
  private static final String HEAD = "{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-4o\",";
  private static final String CHAT = "{\"model\":\"gpt-4o\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Say hi\"}]}";
  private static final String CHAT_STREAM = CHAT.replace("\"max_tokens\"", "\"stream\":true,\"max_tokens\"");

  /** The usage objects a hostile upstream sends, and the reason each is refused for. */
  static Stream<Arguments> hostileReports() {
    List<Arguments> all = new ArrayList<>();
    String[][] reports = {
        {"{\"prompt_tokens\":4e18,\"completion_tokens\":4e18,\"total_tokens\":8e18}", "fractional"},
        {"{\"prompt_tokens\":4000000000000000000,\"completion_tokens\":4000000000000000000}", "too_large"},
        {"{\"prompt_tokens\":9223372036854775807,\"completion_tokens\":9223372036854775807}", "too_large"},
        {"{\"prompt_tokens\":12,\"completion_tokens\":\"99999999\"}", "string"},
        {"{\"prompt_tokens\":12,\"completion_tokens\":-5000}", "negative"},
        {"{\"prompt_tokens\":12.5,\"completion_tokens\":3}", "fractional"},
        {"{\"input_tokens\":12,\"output_tokens\":99999999999999999999}", "too_large"},
    };
    for (Caller caller : List.of(GOLD, SILVER, BRONZE)) {
      for (String[] report : reports) {
        for (boolean streamed : new boolean[] {false, true}) {
          all.add(Arguments.of(caller.tier().tag(), caller, report[0], report[1], streamed));
        }
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} {2} streamed={4}")
  @MethodSource("hostileReports")
  void anAbsurdUsageReportIsRefusedCountedAndSettledAtTheEstimate(String tier, Caller caller, String usage,
      String reason, boolean streamed) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    long honestWithoutUsage = settle(caller, null, streamed, new SimpleMeterRegistry());

    long used = settle(caller, usage, streamed, meters);

    assertThat(used).as("settled as if the backend had reported nothing").isEqualTo(honestWithoutUsage)
        .isPositive().isLessThan(1000);
    assertThat(meters.get("spillway.quota.usage.refused").tag("reason", reason).counter().count()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tiers")
  void aSaneReportIsTakenAsReported(String tier, Caller caller) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();

    long used = settle(caller, "{\"prompt_tokens\":12,\"completion_tokens\":30}", false, meters);

    assertThat(used).isEqualTo(42);
    assertThat(meters.find("spillway.quota.usage.refused").counter()).isNull();
  }

  static Stream<Arguments> tiers() {
    return Stream.of(GOLD, SILVER, BRONZE).map(c -> Arguments.of(c.tier().tag(), c));
  }

  /** Runs one request whose backend reports {@code usage} (null: none) and answers what its pool settled. */
  private long settle(Caller caller, String usage, boolean streamed, SimpleMeterRegistry meters) {
    FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
    try (QuotaPools pools = new QuotaPools(quota("quota: {monthlyTokens: 100000000}"), new MemoryUsageStore(), clock,
        meters)) {
      Function<GatewayRequest, GatewayResponse> backend = streamed
          ? request -> GatewayResponse.streamed(200, Headers.EMPTY, new ScriptedEventStream(events(usage), null))
          : request -> GatewayResponse.json(200, (HEAD + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
              + "\"content\":\"Hi there\"},\"finish_reason\":\"stop\"}]" + (usage == null ? "" : ",\"usage\":" + usage)
              + "}").getBytes(StandardCharsets.UTF_8));
      Pipeline pipeline = new Pipeline(List.of(
          chain -> {
            chain.request().setAttribute(RequestAttributes.CALLER, caller);
            return chain.proceed(chain.request());
          },
          new TokenReportInterceptor(pools),
          new QuotaInterceptor(pools, new TokenEstimator(1024))), Terminal.blocking(backend::apply));
      GatewayResponse response = pipeline.execute(request(Route.CHAT_COMPLETIONS, streamed ? CHAT_STREAM : CHAT));
      if (response.isStream()) {
        while (response.stream().next() != null) {
          // read to the end, as a client does
        }
        response.stream().close();
      }
      return pools.snapshot(caller.tier()).used();
    }
  }

  private static List<SseEvent> events(String usage) {
    List<SseEvent> events = new ArrayList<>();
    String head = HEAD.replace("chat.completion", "chat.completion.chunk");
    events.add(SseEvent.data(head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi there\"}}],\"usage\":null}"));
    events.add(SseEvent.data(head + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}"));
    if (usage != null) {
      events.add(SseEvent.data(head + "\"choices\":[],\"usage\":" + usage + "}"));
    }
    events.add(SseEvent.DONE);
    return events;
  }
}
