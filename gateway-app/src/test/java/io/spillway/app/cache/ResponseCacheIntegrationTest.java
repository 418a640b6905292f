package io.spillway.app.cache;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The response cache and request coalescing through the real gateway, WireMock as the cloud. */
class ResponseCacheIntegrationTest {
  static final String CHAT = "/v1/chat/completions";
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
    harness.gateway().cache().invalidateAll();
  }

  static String lint(String file, boolean stream) {
    return "{\"model\":\"gpt-4o\",\"temperature\":0,\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Lint " + file + "\"}]}";
  }

  static String cacheHeader(HttpResponse<String> response) {
    return response.headers().firstValue("x-spillway-cache").orElse(null);
  }

  static int upstreamCalls() {
    return harness.cloud.countRequestsMatching(postRequestedFor(urlEqualTo(CHAT)).build()).getCount();
  }

  @Test
  void theOpenAiSdkGetsARepeatFromTheCache() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("No issues found.")));
    OpenAIClient client = harness.openAi(GatewayHarness.GOLD_KEY);
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
        .model(ChatModel.GPT_4O).temperature(0.0).addUserMessage("Lint src/main.py").build();

    HttpResponseFor<ChatCompletion> first = client.chat().completions().withRawResponse().create(params);
    HttpResponseFor<ChatCompletion> second = client.chat().completions().withRawResponse().create(params);

    assertThat(first.headers().values("x-spillway-cache")).containsExactly("miss");
    assertThat(second.headers().values("x-spillway-cache")).containsExactly("hit");
    assertThat(second.parse().choices().get(0).message().content()).contains("No issues found.");
    assertThat(second.parse().usage().orElseThrow().totalTokens()).isEqualTo(19);
    harness.cloud.verify(1, postRequestedFor(urlEqualTo(CHAT)));
  }

  @Test
  void theOpenAiSdkGetsARepeatedStreamFromTheCache() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatStream(true, "Hel", "lo", " world")));
    OpenAIClient client = harness.openAi(GatewayHarness.SILVER_KEY);
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
        .model(ChatModel.GPT_4O).temperature(0.0).addUserMessage("Say hello").build();

    String first = streamText(client, params);
    await().until(() -> harness.gateway().cache().stats().entries() == 1);
    String second = streamText(client, params);

    assertThat(second).isEqualTo(first).isEqualTo("Hello world");
    harness.cloud.verify(1, postRequestedFor(urlEqualTo(CHAT)));
    assertThat(harness.gateway().meters().get("spillway.cache.tokens.saved").tag("tier", "silver").counter().count())
        .isEqualTo(15);
  }

  @Test
  void aResponsesStreamIsReplayedWithItsTypedEvents() {
    harness.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.responseStream("Fo", "ur.")));
    OpenAIClient client = harness.openAi(GatewayHarness.GOLD_KEY);
    ResponseCreateParams params = ResponseCreateParams.builder()
        .model(ChatModel.GPT_4_1).temperature(0.0).input("What is 2+2?").build();

    List<String> first = responseEvents(client, params);
    await().until(() -> harness.gateway().cache().stats().entries() == 1);
    List<String> second = responseEvents(client, params);

    assertThat(second).isEqualTo(first).startsWith("created").endsWith("completed").contains("delta:Fo");
    harness.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/responses")));
  }

  @Test
  void reorderedFieldsHitAChangedFieldMissesAndAnotherTeamMisses() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("ok")));

    HttpResponse<String> first = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    HttpResponse<String> reordered = harness.post(CHAT, GatewayHarness.GOLD_KEY, """
        { "messages": [ {"content": "Lint a.py", "role": "user"} ],
          "stream": false, "temperature": 0.0, "model": "gpt-4o" }""");
    HttpResponse<String> changed = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("b.py", false));
    HttpResponse<String> otherTeam = harness.post(CHAT, GatewayHarness.SILVER_KEY, lint("a.py", false));

    assertThat(List.of(first, reordered, changed, otherTeam)).map(ResponseCacheIntegrationTest::cacheHeader)
        .containsExactly("miss", "hit", "miss", "miss");
    assertThat(reordered.body()).isEqualTo(first.body());
    assertThat(upstreamCalls()).isEqualTo(3);
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void fiftyIdenticalRequestsAtOnceMakeOneUpstreamCall(boolean stream) throws Exception {
    harness.cloud.stubFor(post(CHAT).willReturn(stream
        ? OpenAiStubs.chatStream(false, "Hel", "lo", " world").withFixedDelay(2500).withChunkedDribbleDelay(4, 400)
        : OpenAiStubs.chatCompletion("Hello world").withFixedDelay(2500)));
    harness.post(CHAT, GatewayHarness.BRONZE_KEY, lint("warm-up.py", false));
    double coalescedBefore = requests("coalesced");

    List<HttpResponse<String>> answers = new ArrayList<>();
    try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<HttpResponse<String>>> calls = IntStream.range(0, 50)
          .mapToObj(i -> clients.submit(() -> harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", stream))))
          .toList();
      for (Future<HttpResponse<String>> call : calls) {
        answers.add(call.get(30, TimeUnit.SECONDS));
      }
    }

    harness.cloud.verify(2, postRequestedFor(urlEqualTo(CHAT)));
    assertThat(answers).allSatisfy(answer -> {
      assertThat(answer.statusCode()).isEqualTo(200);
      if (stream) {
        assertThat(streamedContent(answer.body())).isEqualTo("Hello world");
        assertThat(answer.body().strip()).endsWith("data: [DONE]");
      } else {
        assertThat(answer.body()).contains("\"content\":\"Hello world\"");
      }
    });
    assertThat(answers).map(ResponseCacheIntegrationTest::cacheHeader).containsOnly("miss", "hit")
        .filteredOn("miss"::equals).hasSize(1);
    assertThat(requests("coalesced") - coalescedBefore)
        .as("joined the call in flight rather than finding it stored afterwards").isPositive();
  }

  static double requests(String result) {
    return harness.gateway().meters().find("spillway.cache.requests").tag("result", result).counters().stream()
        .mapToDouble(counter -> counter.count()).sum();
  }

  @Test
  void hitsCountAgainstNoRateLimit() {
    try (GatewayHarness limited = GatewayHarness.start("quota: { tiers: { silver: { requestsPerMinutePerTeam: 2 } } }")) {
      limited.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("ok")));

      List<HttpResponse<String>> repeats = IntStream.range(0, 5)
          .mapToObj(i -> limited.post(CHAT, GatewayHarness.SILVER_KEY, lint("a.py", false))).toList();
      HttpResponse<String> secondOfTheMinute = limited.post(CHAT, GatewayHarness.SILVER_KEY, lint("b.py", false));
      HttpResponse<String> thirdOfTheMinute = limited.post(CHAT, GatewayHarness.SILVER_KEY, lint("c.py", false));

      assertThat(repeats).map(HttpResponse::statusCode).containsOnly(200);
      assertThat(repeats).map(ResponseCacheIntegrationTest::cacheHeader)
          .containsExactly("miss", "hit", "hit", "hit", "hit");
      assertThat(repeats.get(1).headers().firstValue("x-ratelimit-remaining-requests")).isEmpty();
      assertThat(secondOfTheMinute.statusCode()).isEqualTo(200);
      assertThat(thirdOfTheMinute.statusCode()).isEqualTo(429);
      assertThat(cacheHeader(thirdOfTheMinute)).isEqualTo("miss");
    }
  }

  @Test
  void upstreamErrorsAreNotCached() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.atCapacity()));
    HttpResponse<String> error = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    harness.cloud.resetAll();
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("recovered")));

    HttpResponse<String> after = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));

    assertThat(error.statusCode()).isEqualTo(503);
    assertThat(cacheHeader(error)).isEqualTo("miss");
    assertThat(after.statusCode()).isEqualTo(200);
    assertThat(after.body()).contains("recovered");
    assertThat(cacheHeader(after)).isEqualTo("miss");
  }

  @Test
  void aStreamCutOffBeforeItsEndIsNotCached() {
    String cut = OpenAiStubs.chatStreamBody(false, "Hel", "lo").replace("data: [DONE]\n\n", "");
    harness.cloud.stubFor(post(CHAT).willReturn(
        aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(cut)));
    HttpResponse<String> broken = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", true));
    await().until(() -> harness.gateway().cache().stats().inFlight() == 0);
    harness.cloud.resetAll();
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatStream(false, "Hel", "lo")));

    HttpResponse<String> after = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", true));

    assertThat(broken.body()).contains("\"error\"").contains("before it was complete");
    assertThat(cacheHeader(after)).isEqualTo("miss");
    assertThat(streamedContent(after.body())).isEqualTo("Hello");
  }

  @Test
  void noStoreAndNoCacheAreHonoured() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("first")));
    HttpResponse<String> notStored = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false),
        "Cache-Control", "no-store");
    HttpResponse<String> stored = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("second")));

    HttpResponse<String> notRead = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false),
        "Cache-Control", "no-store");
    HttpResponse<String> stillFirst = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    HttpResponse<String> refreshed = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false),
        "Cache-Control", "no-cache");
    HttpResponse<String> nowSecond = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));

    assertThat(List.of(notStored, stored, notRead, stillFirst, refreshed, nowSecond))
        .map(ResponseCacheIntegrationTest::cacheHeader)
        .containsExactly("bypass", "miss", "bypass", "hit", "miss", "hit");
    assertThat(notRead.body()).contains("second");
    assertThat(stillFirst.body()).contains("first");
    assertThat(nowSecond.body()).contains("second");
    assertThat(upstreamCalls()).isEqualTo(4);
  }

  @Test
  void answersExpireAfterTheTtlOnTheGatewaysClock() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("ok")));
    harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));

    harness.clock.advance(harness.gateway().config().cache().ttl().minusSeconds(1));
    HttpResponse<String> fresh = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    harness.clock.advance(Duration.ofSeconds(2));
    HttpResponse<String> expired = harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));

    assertThat(cacheHeader(fresh)).isEqualTo("hit");
    assertThat(cacheHeader(expired)).isEqualTo("miss");
    assertThat(upstreamCalls()).isEqualTo(2);
  }

  @Test
  void sampledRequestsAndModelListsBypass() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("creative")));
    harness.cloud.stubFor(com.github.tomakehurst.wiremock.client.WireMock.get("/v1/models")
        .willReturn(OpenAiStubs.models("gpt-4o")));

    HttpResponse<String> sampled = harness.post(CHAT, GatewayHarness.GOLD_KEY,
        GatewayHarness.chatBody("gpt-4o", "Write a poem", false));
    HttpResponse<String> models = harness.get("/v1/models", GatewayHarness.GOLD_KEY);

    assertThat(cacheHeader(sampled)).isEqualTo("bypass");
    assertThat(cacheHeader(models)).isEqualTo("bypass");
  }

  @Test
  void theAdminApiShowsTheCacheAndClearsATeam() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("ok")));
    harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));
    harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false));

    HttpResponse<String> stats = harness.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(harness.url("/admin/cache")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).GET().build());
    HttpResponse<String> cleared = harness.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(harness.url("/admin/cache/invalidate")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"team\":\"release\"}")).build());

    assertThat(stats.statusCode()).isEqualTo(200);
    assertThat(stats.body()).contains("\"entries\":1")
        .contains("\"release\":" + harness.gateway().cache().stats().tokensSavedByTeam().get("release"));
    assertThat(cleared.statusCode()).isEqualTo(200);
    assertThat(cacheHeader(harness.post(CHAT, GatewayHarness.GOLD_KEY, lint("a.py", false)))).isEqualTo("miss");
  }

  private static String streamText(OpenAIClient client, ChatCompletionCreateParams params) {
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
      return stream.stream().flatMap(chunk -> chunk.choices().stream())
          .map(choice -> choice.delta().content().orElse("")).collect(Collectors.joining());
    }
  }

  private static List<String> responseEvents(OpenAIClient client, ResponseCreateParams params) {
    try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(params)) {
      return stream.stream().map(event -> {
        if (event.isCreated()) {
          return "created";
        }
        if (event.isOutputTextDelta()) {
          return "delta:" + event.asOutputTextDelta().delta();
        }
        return event.isCompleted() ? "completed" : "other";
      }).toList();
    }
  }

  private static final Pattern CONTENT = Pattern.compile("\"delta\":\\{\"content\":\"([^\"]*)\"");

  /** The content pieces of a raw chat SSE body, joined. */
  private static String streamedContent(String sse) {
    StringBuilder out = new StringBuilder();
    Matcher m = CONTENT.matcher(sse);
    while (m.find()) {
      out.append(m.group(1));
    }
    return out.toString();
  }
}
