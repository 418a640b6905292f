package io.spillway.quota.accounting;

import static io.spillway.quota.accounting.TokenEstimatorTest.request;
import static io.spillway.quota.testing.QuotaTesting.BRONZE;
import static io.spillway.quota.testing.QuotaTesting.GOLD;
import static io.spillway.quota.testing.QuotaTesting.SILVER;
import static io.spillway.quota.testing.QuotaTesting.quota;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.pool.PoolSnapshot;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.pool.TokenUsage;
import io.spillway.quota.store.MemoryUsageStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The accounting stages on their own: (fake auth) → token headers → accounting → a scripted terminal. */
class QuotaInterceptorTest {
  private static final String HEAD = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",";

  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final QuotaPools pools =
      new QuotaPools(quota("quota: {monthlyTokens: 100000}"), new MemoryUsageStore(), clock, new SimpleMeterRegistry());
  private final TokenEstimator estimator = new TokenEstimator(1024);
  private final AtomicReference<GatewayRequest> upstream = new AtomicReference<>();

  @AfterEach
  void tearDown() {
    pools.close();
  }

  private GatewayResponse run(Caller caller, GatewayRequest request, Function<GatewayRequest, GatewayResponse> terminal) {
    Pipeline pipeline = new Pipeline(List.of(
        chain -> {
          chain.request().setAttribute(RequestAttributes.CALLER, caller);
          return chain.proceed(chain.request());
        },
        new TokenReportInterceptor(pools),
        new QuotaInterceptor(pools, estimator)), Terminal.blocking(next -> {
          upstream.set(next);
          return terminal.apply(next);
        }));
    return pipeline.execute(request);
  }

  private static GatewayResponse json(String body) {
    return GatewayResponse.json(200, body.getBytes(StandardCharsets.UTF_8));
  }

  private static List<SseEvent> drain(GatewayResponse response) {
    List<SseEvent> events = new ArrayList<>();
    SseEvent event;
    while ((event = response.stream().next()) != null) {
      events.add(event);
    }
    response.stream().close();
    return events;
  }

  private static SseEvent chunk(String choicesAndUsage) {
    return SseEvent.data(HEAD + choicesAndUsage + "}");
  }

  private static List<SseEvent> chatStreamWithUsage(String... pieces) {
    List<SseEvent> events = new ArrayList<>();
    events.add(chunk("\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null"));
    for (String piece : pieces) {
      events.add(chunk("\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece + "\"}}],\"usage\":null"));
    }
    events.add(chunk("\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null"));
    events.add(chunk("\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":" + pieces.length
        + ",\"total_tokens\":" + (12 + pieces.length) + "}"));
    events.add(SseEvent.DONE);
    return events;
  }

  private static final String CHAT_STREAM =
      "{\"model\":\"gpt-4o\",\"stream\":true,\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Say hi\"}]}";

  private PoolSnapshot pool(Tier tier) {
    return pools.snapshot(tier);
  }

  @Test
  void bufferedChatIsSettledWithTheReportedUsageAndAnswersWithTokenHeaders() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Say hi\"}]}");
    long estimate = estimator.estimate(chat).total();
    AtomicReference<Long> reservedDuringCall = new AtomicReference<>();

    GatewayResponse response = run(GOLD, chat, request -> {
      reservedDuringCall.set(pool(Tier.GOLD).reserved());
      return json("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[],"
          + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}");
    });

    assertThat(reservedDuringCall.get()).isEqualTo(estimate);
    assertThat(pool(Tier.GOLD)).extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(19L, 0L);
    assertThat(response.headers().get("x-ratelimit-limit-tokens")).isEqualTo("22000");
    assertThat(response.headers().get("x-ratelimit-remaining-tokens")).isEqualTo(Long.toString(22000 - 19));
    assertThat(response.headers().get("x-ratelimit-reset-tokens")).isEqualTo("494h0m0s");
    assertThat(upstream.get().bodyBytes()).isEqualTo(chat.bodyBytes());
  }

  @Test
  void responsesApiIsSettledWithInputAndOutputTokens() {
    GatewayRequest responses = request(Route.RESPONSES, "{\"model\":\"gpt-4.1\",\"input\":\"hello\"}");

    run(BRONZE, responses, request -> json(
        "{\"id\":\"resp_1\",\"object\":\"response\",\"usage\":{\"input_tokens\":36,\"output_tokens\":87,\"total_tokens\":123}}"));

    assertThat(pool(Tier.BRONZE).used()).isEqualTo(123);
  }

  @Test
  void streamedChatAsksUpstreamForUsageAndDropsTheUsageChunkTheClientDidNotAskFor() throws IOException {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    ScriptedEventStream upstreamStream = new ScriptedEventStream(chatStreamWithUsage("Hi", " there"), null);

    GatewayResponse response = run(BRONZE, chat,
        request -> GatewayResponse.streamed(200, Headers.EMPTY, upstreamStream));
    assertThat(pool(Tier.BRONZE).reserved()).isEqualTo(estimator.estimate(chat).total());
    List<SseEvent> events = drain(response);

    JsonNode sent = Json.parse(upstream.get().bodyBytes());
    assertThat(sent.at("/stream_options/include_usage").asBoolean()).isTrue();
    assertThat(chat.body().has("stream_options")).as("the client's body is not modified").isFalse();
    assertThat(events).hasSize(5).last().isEqualTo(SseEvent.DONE);
    assertThat(events).noneMatch(e -> e.data().contains("\"prompt_tokens\""));
    assertThat(pool(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(14L, 0L);
    assertThat(response.headers().get("x-ratelimit-limit-tokens")).isEqualTo("30000");
  }

  @Test
  void aClientThatAskedForUsageKeepsItsUsageChunk() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS,
        CHAT_STREAM.replace("\"stream\":true", "\"stream\":true,\"stream_options\":{\"include_usage\":true}"));

    GatewayResponse response = run(BRONZE, chat, request -> GatewayResponse.streamed(200, Headers.EMPTY,
        new ScriptedEventStream(chatStreamWithUsage("Hi"), null)));
    List<SseEvent> events = drain(response);

    assertThat(upstream.get()).isSameAs(chat);
    assertThat(events).hasSize(5);
    assertThat(events.get(3).data()).contains("\"prompt_tokens\":12");
    assertThat(pool(Tier.BRONZE).used()).isEqualTo(13);
  }

  @Test
  void aStreamClosedByAClientThatWentAwayIsSettledOnceWithWhatWasStreamed() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    ScriptedEventStream upstreamStream = new ScriptedEventStream(chatStreamWithUsage("Hello", " world", "!"), null);
    GatewayResponse response = run(SILVER, chat, request -> GatewayResponse.streamed(200, Headers.EMPTY, upstreamStream));

    response.stream().next();
    response.stream().next();
    response.stream().next(); // the client read "Hello world" and left
    response.stream().close();
    response.stream().close();

    long expected = estimator.estimate(chat).promptTokens() + estimator.count("gpt-4o", "Hello")
        + estimator.count("gpt-4o", " world");
    assertThat(pool(Tier.SILVER)).extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(expected, 0L);
    assertThat(upstreamStream.closes()).isEqualTo(2);
  }

  @Test
  void aLongStreamWithoutUsageIsSettledWithEveryTokenItStreamed() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    String piece = "word ".repeat(200);
    List<SseEvent> events = new ArrayList<>();
    int chunks = MeteredEventStream.MAX_PENDING_BYTES / piece.length() * 3;
    for (int i = 0; i < chunks; i++) {
      events.add(chunk("\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece + "\"}}],\"usage\":null"));
    }
    events.add(SseEvent.DONE);
    GatewayResponse response = run(SILVER, chat, request ->
        GatewayResponse.streamed(200, Headers.EMPTY, new ScriptedEventStream(events, null)));

    while (response.stream().next() != null) {
      // the client reads it all
    }

    long expected = estimator.estimate(chat).promptTokens() + chunks * estimator.count("gpt-4o", piece);
    assertThat(pool(Tier.SILVER)).extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(expected, 0L);
  }

  @Test
  void aStreamThatFailsMidWayIsSettledWithItsEstimateAndStreamedText() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    GatewayException reset = ErrorKind.BAD_GATEWAY.exception("reset");
    List<SseEvent> partial = chatStreamWithUsage("Hello").subList(0, 2);
    GatewayResponse response = run(BRONZE, chat, request ->
        GatewayResponse.streamed(200, Headers.EMPTY, new ScriptedEventStream(partial, reset)));

    response.stream().next();
    response.stream().next();
    assertThatThrownBy(() -> response.stream().next()).isSameAs(reset);

    assertThat(pool(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved)
        .containsExactly(estimator.estimate(chat).promptTokens() + estimator.count("gpt-4o", "Hello"), 0L);
  }

  @Test
  void aResponsesApiStreamIsSettledFromItsCompletedEvent() {
    GatewayRequest responses = request(Route.RESPONSES, "{\"model\":\"gpt-4.1\",\"stream\":true,\"input\":\"hello\"}");
    List<SseEvent> events = List.of(
        new SseEvent("response.created", "{\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\"}}"),
        new SseEvent("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"Hi\"}"),
        new SseEvent("response.completed", "{\"type\":\"response.completed\",\"sequence_number\":2,"
            + "\"response\":{\"id\":\"resp_1\",\"usage\":{\"input_tokens\":36,\"output_tokens\":87,\"total_tokens\":123}}}"));

    GatewayResponse response = run(GOLD, responses, request ->
        GatewayResponse.streamed(200, Headers.EMPTY, new ScriptedEventStream(events, null)));

    assertThat(upstream.get()).isSameAs(responses);
    assertThat(drain(response)).hasSize(3);
    assertThat(pool(Tier.GOLD).used()).isEqualTo(123);
  }

  @Test
  void anUpstreamErrorReleasesTheReservation() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM.replace("true", "false"));

    GatewayResponse response = run(BRONZE, chat, request -> GatewayResponse.json(503,
        "{\"error\":{\"message\":\"Selected model is at capacity.\",\"type\":\"server_error\"}}".getBytes(StandardCharsets.UTF_8)));

    assertThat(response.status()).isEqualTo(503);
    assertThat(pool(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(0L, 0L);
    assertThat(response.headers().get("x-ratelimit-remaining-tokens")).isEqualTo("30000");
  }

  @Test
  void aLaterStageRefusingReleasesTheReservationAndTheAnswerStillCarriesTokenHeaders() throws IOException {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);

    GatewayResponse response = run(BRONZE, chat, request -> {
      throw ErrorKind.RATE_LIMITED.exception("Too many requests").withRetryAfter(Duration.ofSeconds(18));
    });

    assertThat(response.status()).isEqualTo(429);
    assertThat(response.headers().get("retry-after")).isEqualTo("18");
    assertThat(response.headers().get("x-ratelimit-limit-tokens")).isEqualTo("30000");
    assertThat(Json.parse(response.body()).at("/error/code").asText()).isEqualTo("rate_limit_exceeded");
    assertThat(pool(Tier.BRONZE).reserved()).isZero();
  }

  @Test
  void anExhaustedPoolAnswers429InsufficientQuotaWithoutCallingUpstream() throws IOException {
    pools.reserve(BRONZE, 30_000).settle(new TokenUsage(30_000, 0));
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);

    GatewayResponse response = run(BRONZE, chat, request -> {
      throw new AssertionError("upstream must not be called");
    });

    assertThat(response.status()).isEqualTo(429);
    JsonNode error = Json.parse(response.body()).get("error");
    assertThat(error.get("type").asText()).isEqualTo("insufficient_quota");
    assertThat(error.get("code").asText()).isEqualTo("insufficient_quota");
    assertThat(response.headers().get("retry-after")).isEqualTo(Long.toString(Duration.ofDays(20).plusHours(14).toSeconds()));
    assertThat(response.headers().get("x-ratelimit-remaining-tokens")).isEqualTo("0");
    assertThat(upstream.get()).isNull();
  }


  @Test
  void aStreamsUsageIsNotedInTheOutcomeBeforeTheChunkTheClientDidNotAskForIsTakenOut() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    GatewayResponse response = run(BRONZE, chat, request ->
        GatewayResponse.streamed(200, Headers.EMPTY, new ScriptedEventStream(chatStreamWithUsage("Hi", "!"), null)));

    List<SseEvent> events = drain(response);

    assertThat(events).noneMatch(event -> event.data().contains("prompt_tokens"));
    assertThat(RequestOutcome.of(chat).usage()).isEqualTo(new RequestOutcome.Usage(12, 2));
  }

  @Test
  void aReplayedStreamLosesTheUsageChunkByTheSameRuleWithoutQuotaRunning() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, CHAT_STREAM);
    Pipeline replay = new Pipeline(List.of(
        chain -> {
          chain.request().setAttribute(RequestAttributes.CALLER, BRONZE);
          return chain.proceed(chain.request());
        },
        new TokenReportInterceptor(pools)),
        Terminal.blocking(request -> GatewayResponse.streamed(
            200, Headers.EMPTY, new ScriptedEventStream(chatStreamWithUsage("Hi"), null))));

    List<SseEvent> events = drain(replay.execute(chat));

    assertThat(events).noneMatch(event -> event.data().contains("prompt_tokens"));
    assertThat(events).last().isEqualTo(SseEvent.DONE);
  }
}
