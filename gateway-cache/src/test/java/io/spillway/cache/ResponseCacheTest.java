package io.spillway.cache;

import static io.spillway.cache.CacheFixture.RELEASE;
import static io.spillway.cache.CacheFixture.WEB;
import static io.spillway.cache.CacheFixture.body;
import static io.spillway.cache.CacheFixture.chatAnswer;
import static io.spillway.cache.CacheFixture.chatBody;
import static io.spillway.cache.CacheFixture.chunk;
import static io.spillway.cache.CacheFixture.drain;
import static io.spillway.cache.CacheFixture.streamed;
import static io.spillway.cache.CacheFixture.usageChunk;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.config.CacheConfig;
import io.spillway.config.DataSize;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ResponseCacheTest {
  final CacheFixture f = new CacheFixture();

  @Test
  void aRepeatIsAnsweredFromTheCacheWithoutGoingFurther() {
    f.upstream = request -> chatAnswer("Looks fine.");

    GatewayResponse first = f.chat(RELEASE, "lint a.py");
    GatewayResponse second = f.chat(RELEASE, "lint a.py");

    assertThat(first.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(second.headers().get("x-spillway-cache")).isEqualTo("hit");
    assertThat(body(second)).isEqualTo(body(first));
    assertThat(second.headers().get("x-spillway-backend")).isEqualTo("cloud");
    assertThat(second.headers().contains("x-ratelimit-remaining-requests"))
        .as("rate-limit state belongs to the call that made the answer").isFalse();
    assertThat(f.upstreamCalls).hasValue(1);
    assertThat(f.count("hit")).isEqualTo(1);
    assertThat(f.meters.get("spillway.cache.tokens.saved").tag("tier", "gold").counter().count()).isEqualTo(19);
    assertThat(f.cache.stats().tokensSavedByTeam()).containsEntry("release", 19L);
  }

  @Test
  void anotherTeamNeverSeesTheAnswer() {
    f.upstream = request -> chatAnswer("for " + request.id());

    f.chat(RELEASE, "lint a.py");
    GatewayResponse web = f.chat(WEB, "lint a.py");

    assertThat(web.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(f.upstreamCalls).hasValue(2);
  }

  @Test
  void answersExpireAfterTheTtlOnTheInjectedClock() {
    f.upstream = request -> chatAnswer("Looks fine.");
    f.chat(RELEASE, "lint a.py");

    f.clock.advance(Duration.ofMinutes(9));
    GatewayResponse stillFresh = f.chat(RELEASE, "lint a.py");
    f.clock.advance(Duration.ofMinutes(1).plusSeconds(1));
    GatewayResponse expired = f.chat(RELEASE, "lint a.py");

    assertThat(stillFresh.headers().get("x-spillway-cache")).isEqualTo("hit");
    assertThat(stillFresh.headers().get("age")).isEqualTo("540");
    assertThat(expired.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(f.upstreamCalls).hasValue(2);
  }

  @Test
  void theTotalSizeStaysWithinMaxSize() {
    CacheFixture small = new CacheFixture(new CacheConfig(null, DataSize.ofKibibytes(64), null,
        DataSize.ofKibibytes(16), null, null, null));
    small.upstream = request -> chatAnswer("x".repeat(8000));

    for (int i = 0; i < 30; i++) {
      small.chat(RELEASE, "prompt " + i);
    }

    ResponseCache.Stats stats = small.cache.stats();
    assertThat(stats.bytes()).isLessThanOrEqualTo(64 * 1024).isGreaterThan(32 * 1024);
    assertThat(stats.entries()).isBetween(4L, 8L);
    assertThat(small.meters.get("spillway.cache.evictions").tag("cause", "size").counter().count())
        .isEqualTo(30 - stats.entries());
  }

  @Test
  void answersLargerThanMaxEntrySizeAreNotStored() {
    CacheFixture small = new CacheFixture(new CacheConfig(null, DataSize.ofKibibytes(64), null,
        DataSize.ofKibibytes(16), null, null, null));
    small.upstream = request -> chatAnswer("x".repeat(20_000));

    small.chat(RELEASE, "big");
    GatewayResponse again = small.chat(RELEASE, "big");

    assertThat(again.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(small.upstreamCalls).hasValue(2);
  }

  @Test
  void errorsAreNeverCached() {
    List<GatewayResponse> errors = List.of(
        ErrorMapper.toResponse(ErrorKind.CAPACITY.exception("Selected model is at capacity"))
            .withHeader("x-spillway-backend", "cloud"),
        GatewayResponse.json(400, "{\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\"}}"
            .getBytes(StandardCharsets.UTF_8)),
        GatewayResponse.json(200, "{\"error\":{\"message\":\"odd backend\"}}".getBytes(StandardCharsets.UTF_8)));
    for (GatewayResponse error : errors) {
      CacheFixture fixture = new CacheFixture();
      fixture.upstream = request -> error;

      GatewayResponse first = fixture.chat(RELEASE, "lint a.py");
      GatewayResponse second = fixture.chat(RELEASE, "lint a.py");

      assertThat(first.status()).isEqualTo(error.status());
      assertThat(second.headers().get("x-spillway-cache")).isEqualTo("miss");
      assertThat(fixture.upstreamCalls).as("status %d", error.status()).hasValue(2);
    }
  }

  @Test
  void upstreamFailuresAreNotCachedAndStillCarryTheHeader() {
    f.upstream = request -> {
      throw new UpstreamException("cloud", UpstreamException.Failure.TIMEOUT, "too slow", null);
    };

    GatewayResponse first = f.chat(RELEASE, "lint a.py");
    f.upstream = request -> chatAnswer("fine now");
    GatewayResponse second = f.chat(RELEASE, "lint a.py");

    assertThat(first.status()).isEqualTo(504);
    assertThat(first.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(body(second)).contains("fine now");
  }

  @Test
  void sampledRequestsBypassTheCache() {
    f.upstream = request -> chatAnswer("creative");
    String sampled = "{\"model\":\"gpt-4o\",\"temperature\":0.9,\"messages\":[]}";

    GatewayResponse first = f.send(RELEASE, Route.CHAT_COMPLETIONS, sampled);
    f.send(RELEASE, Route.CHAT_COMPLETIONS, sampled);

    assertThat(first.headers().get("x-spillway-cache")).isEqualTo("bypass");
    assertThat(f.upstreamCalls).hasValue(2);
    assertThat(f.meters.get("spillway.cache.bypass").tag("reason", "sampling").counter().count()).isEqualTo(2);
  }

  @Test
  void noStoreNeitherReadsNorWrites() {
    f.upstream = request -> chatAnswer("v" + f.upstreamCalls.get());

    GatewayResponse notWritten = f.chat(RELEASE, "lint a.py", "Cache-Control", "no-store");
    GatewayResponse stored = f.chat(RELEASE, "lint a.py");
    GatewayResponse notRead = f.chat(RELEASE, "lint a.py", "Cache-Control", "no-store");

    assertThat(notWritten.headers().get("x-spillway-cache")).isEqualTo("bypass");
    assertThat(stored.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(notRead.headers().get("x-spillway-cache")).isEqualTo("bypass");
    assertThat(body(notRead)).contains("v3");
    assertThat(f.upstreamCalls).hasValue(3);
  }

  @Test
  void noCacheFetchesAFreshAnswerAndRefreshesTheEntry() {
    f.upstream = request -> chatAnswer("old");
    f.chat(RELEASE, "lint a.py");
    f.upstream = request -> chatAnswer("new");

    GatewayResponse fresh = f.chat(RELEASE, "lint a.py", "Cache-Control", "no-cache");
    GatewayResponse after = f.chat(RELEASE, "lint a.py");

    assertThat(fresh.headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(body(fresh)).contains("new");
    assertThat(after.headers().get("x-spillway-cache")).isEqualTo("hit");
    assertThat(body(after)).contains("new");
  }

  @Test
  void degradedAnswersAreNotStored() {
    f.upstream = request -> {
      RequestOutcome.of(request).degrade(List.of("max_tokens"));
      return chatAnswer("short");
    };

    f.chat(RELEASE, "lint a.py");
    f.chat(RELEASE, "lint a.py");

    assertThat(f.upstreamCalls).hasValue(2);
  }

  @Test
  void invalidatingATeamDropsOnlyItsAnswers() {
    f.upstream = request -> chatAnswer("ok");
    f.chat(RELEASE, "lint a.py");
    f.chat(WEB, "lint a.py");

    f.cache.invalidateTeam("release");

    assertThat(f.chat(RELEASE, "lint a.py").headers().get("x-spillway-cache")).isEqualTo("miss");
    assertThat(f.chat(WEB, "lint a.py").headers().get("x-spillway-cache")).isEqualTo("hit");
    f.cache.invalidateAll();
    assertThat(f.chat(WEB, "lint a.py").headers().get("x-spillway-cache")).isEqualTo("miss");
  }

  @Test
  void anAnswerInFlightWhenItsTeamIsInvalidatedIsNotStored() {
    f.upstream = request -> {
      f.cache.invalidateTeam("release");
      return chatAnswer("made with a revoked key");
    };

    f.chat(RELEASE, "lint a.py");
    f.upstream = request -> chatAnswer("ok");

    assertThat(f.chat(RELEASE, "lint a.py").headers().get("x-spillway-cache")).isEqualTo("miss");
  }

  @Test
  void identicalBufferedRequestsInFlightShareOneCall() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    f.upstream = request -> {
      block(release);
      return chatAnswer("shared");
    };

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<GatewayResponse>> answers = IntStream.range(0, 20)
          .mapToObj(i -> threads.submit(() -> f.chat(RELEASE, "lint a.py"))).toList();
      await().until(() -> f.joiners() == 19);
      release.countDown();

      List<String> results = answers.stream().map(CacheFixture::get).map(r ->
          r.status() + " " + r.headers().get("x-spillway-cache") + " " + body(r).contains("shared")).toList();
      assertThat(results).containsOnly("200 miss true", "200 hit true");
      assertThat(results).filteredOn(r -> r.contains("miss")).hasSize(1);
    }
    assertThat(f.upstreamCalls).hasValue(1);
    assertThat(f.count("coalesced")).isEqualTo(19);
    assertThat(f.cache.stats().inFlight()).isZero();
  }

  @Test
  void aSharedUpstreamFailureReachesEveryJoinerAndIsNotCached() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    f.upstream = request -> {
      block(release);
      throw new UpstreamException("cloud", UpstreamException.Failure.RESET_BEFORE_RESPONSE, "reset", null);
    };

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<GatewayResponse>> answers = IntStream.range(0, 5)
          .mapToObj(i -> threads.submit(() -> f.chat(RELEASE, "lint a.py"))).toList();
      await().until(() -> f.joiners() == 4);
      release.countDown();

      assertThat(answers.stream().map(CacheFixture::get).map(GatewayResponse::status)).containsOnly(502);
    }
    assertThat(f.upstreamCalls).hasValue(1);
    f.upstream = request -> chatAnswer("back");
    assertThat(body(f.chat(RELEASE, "lint a.py"))).contains("back");
  }

  @Test
  void aLeaderRefusedForItsOwnReasonsLetsTheJoinersCallThemselves() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    f.upstream = request -> {
      if (f.upstreamCalls.get() == 1) {
        block(release);
        throw ErrorKind.RATE_LIMITED.exception("the leader's own rate limit").withRetryAfter(Duration.ofSeconds(3));
      }
      return chatAnswer("admitted");
    };

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<GatewayResponse> leader = threads.submit(() -> f.chat(RELEASE, "lint a.py"));
      await().until(() -> f.upstreamCalls.get() == 1);
      List<Future<GatewayResponse>> joiners = IntStream.range(0, 3)
          .mapToObj(i -> threads.submit(() -> f.chat(RELEASE, "lint a.py"))).toList();
      await().until(() -> f.joiners() == 3);
      release.countDown();

      assertThat(CacheFixture.get(leader).status()).isEqualTo(429);
      assertThat(joiners.stream().map(CacheFixture::get).map(GatewayResponse::status)).containsOnly(200);
    }
    assertThat(f.upstreamCalls).hasValue(4);
  }

  @Test
  void aStreamIsStoredOnceCompleteAndReplayedAsAStream() {
    ScriptedStream upstream = new ScriptedStream()
        .send(chunk("Hel"), chunk("lo"), usageChunk(14), SseEvent.DONE).end();
    f.upstream = request -> streamed(upstream);

    List<String> first = drain(f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true)));
    await().until(() -> f.cache.stats().entries() == 1);
    GatewayResponse hit = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));

    assertThat(hit.isStream()).isTrue();
    assertThat(hit.headers().get("x-spillway-cache")).isEqualTo("hit");
    assertThat(hit.headers().get("content-type")).isEqualTo("text/event-stream");
    assertThat(drain(hit)).isEqualTo(first).endsWith("[DONE]").hasSize(4);
    assertThat(upstream.closed()).isTrue();
    assertThat(f.upstreamCalls).hasValue(1);
    assertThat(f.meters.get("spillway.cache.tokens.saved").counter().count()).isEqualTo(14);
  }

  @Test
  void aResponsesStreamIsReplayedWithItsTypedEvents() {
    ScriptedStream upstream = new ScriptedStream().send(
        new SseEvent("response.created", "{\"type\":\"response.created\",\"sequence_number\":0}"),
        new SseEvent("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"delta\":\"4\"}"),
        new SseEvent("response.completed", "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\","
            + "\"usage\":{\"input_tokens\":5,\"output_tokens\":1,\"total_tokens\":6}}}")).end();
    f.upstream = request -> streamed(upstream);
    String body = "{\"model\":\"gpt-4.1\",\"temperature\":0,\"stream\":true,\"input\":\"2+2?\"}";

    List<String> first = drain(f.send(RELEASE, Route.RESPONSES, body));
    await().until(() -> f.cache.stats().entries() == 1);
    List<String> replay = drain(f.send(RELEASE, Route.RESPONSES, body));

    assertThat(replay).isEqualTo(first);
    assertThat(replay.get(0)).startsWith("response.created:");
    assertThat(replay.get(2)).startsWith("response.completed:");
  }

  @Test
  void aStreamCutByAFailureIsNotCachedAndEveryReaderGetsTheError() {
    ScriptedStream upstream = new ScriptedStream();
    f.upstream = request -> streamed(upstream);

    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    GatewayResponse joiner = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    upstream.send(chunk("Hel"), chunk("lo"))
        .fail(new UpstreamException("cloud", UpstreamException.Failure.RESET_MID_STREAM, "cut", null));

    assertThat(joiner.headers().get("x-spillway-cache")).isEqualTo("hit");
    assertThat(drain(leader)).hasSize(3).last().isEqualTo("error:502");
    assertThat(drain(joiner)).hasSize(3).last().isEqualTo("error:502");
    await().until(() -> f.cache.stats().inFlight() == 0);
    assertThat(f.cache.stats().entries()).isZero();
    f.upstream = request -> streamed(new ScriptedStream().send(chunk("ok"), SseEvent.DONE).end());
    assertThat(f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true)).headers().get("x-spillway-cache"))
        .isEqualTo("miss");
    assertThat(f.upstreamCalls).hasValue(2);
  }

  @Test
  void streamsWithAnErrorEventOrWithoutTheirEndAreNotCached() {
    List<List<SseEvent>> broken = List.of(
        List.of(chunk("Hel"), SseEvent.data("{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}"),
            SseEvent.DONE),
        List.of(chunk("Hel"), chunk("lo")));
    for (List<SseEvent> events : broken) {
      CacheFixture fixture = new CacheFixture();
      fixture.upstream = request -> streamed(new ScriptedStream().send(events.toArray(SseEvent[]::new)).end());

      drain(fixture.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true)));
      await().until(() -> fixture.cache.stats().inFlight() == 0);

      assertThat(fixture.cache.stats().entries()).as("%s", events).isZero();
    }
  }

  @Test
  void aLateJoinerGetsTheEventsSentSoFarThenTheRest() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"), chunk("b"));
    f.upstream = request -> streamed(upstream);
    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    assertThat(leader.stream().next().data()).contains("\"a\"");
    assertThat(leader.stream().next().data()).contains("\"b\"");

    GatewayResponse late = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    assertThat(late.stream().next().data()).contains("\"a\"");
    upstream.send(chunk("c"), SseEvent.DONE).end();

    assertThat(drain(late)).hasSize(3).endsWith("[DONE]");
    assertThat(drain(leader)).hasSize(2).endsWith("[DONE]");
    assertThat(f.upstreamCalls).hasValue(1);
  }

  @Test
  void aCaughtUpReaderOfASharedStreamIsPolledWithoutBlockingAndToldWhenTheNextEventComes() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"));
    f.upstream = request -> streamed(upstream);
    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    EventStream reader = leader.stream();
    assertThat(reader.nonBlocking()).as("relayed from an event loop").isTrue();
    assertThat(reader.next().data()).contains("\"a\"");

    assertThat(reader.poll()).as("caught up: nothing yet").isSameAs(SseEvent.PENDING);
    AtomicInteger told = new AtomicInteger();
    reader.onReady(told::incrementAndGet);
    upstream.send(chunk("b"));

    await().until(() -> told.get() == 1);
    assertThat(reader.poll().data()).contains("\"b\"");
    upstream.send(SseEvent.DONE).end();
    assertThat(drain(leader)).hasSize(1).endsWith("[DONE]");
    assertThat(told).as("each callback runs once").hasValue(1);
  }

  @Test
  void aReplayedStreamIsPolledWithoutBlocking() {
    f.upstream = request -> streamed(new ScriptedStream().send(chunk("ok"), SseEvent.DONE).end());
    drain(f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true)));
    await().until(() -> f.cache.stats().entries() == 1);

    GatewayResponse hit = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));

    assertThat(hit.stream().nonBlocking()).isTrue();
    assertThat(hit.stream().poll().data()).contains("\"ok\"");
    assertThat(hit.stream().poll()).isEqualTo(SseEvent.DONE);
    assertThat(hit.stream().poll()).isNull();
  }

  @Test
  void aClientThatGoesAwayDoesNotCancelTheSharedCall() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"));
    f.upstream = request -> streamed(upstream);
    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    GatewayResponse joiner = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    leader.stream().next();

    leader.stream().close();
    upstream.send(chunk("b"), SseEvent.DONE).end();

    assertThat(drain(joiner)).hasSize(3).endsWith("[DONE]");
    await().until(() -> f.cache.stats().entries() == 1);
    assertThat(upstream.closeCalls()).as("closed once, at its end").isEqualTo(1);
  }

  @Test
  void aStreamEveryoneLeftRunsToItsEndAndIsCached() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"));
    f.upstream = request -> streamed(upstream);
    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    leader.stream().next();

    leader.stream().close();
    assertThat(upstream.closed()).isFalse();
    upstream.send(chunk("b"), SseEvent.DONE).end();

    await().until(() -> f.cache.stats().entries() == 1);
    assertThat(upstream.closed()).isTrue();
    assertThat(drain(f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true)))).hasSize(3);
  }

  @Test
  void aStreamEveryoneLeftIsCancelledWhenItCannotBeCached() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"));
    f.upstream = request -> {
      RequestOutcome.of(request).degrade(List.of("temperature"));
      return streamed(upstream);
    };
    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    leader.stream().next();

    leader.stream().close();

    await().until(upstream::closed);
    assertThat(f.cache.stats().entries()).isZero();
  }

  @Test
  void aStreamLargerThanMaxEntrySizeIsClosedToJoinersAndNotCached() {
    CacheFixture small = new CacheFixture(new CacheConfig(null, DataSize.ofKibibytes(64), null,
        DataSize.ofKibibytes(1), null, null, null));
    ScriptedStream upstream = new ScriptedStream();
    small.upstream = request -> small.upstreamCalls.get() == 1
        ? streamed(upstream) : streamed(new ScriptedStream().send(chunk("own"), SseEvent.DONE).end());
    GatewayResponse leader = small.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    for (int i = 0; i < 20; i++) {
      upstream.send(chunk("y".repeat(100)));
    }
    upstream.send(SseEvent.DONE).end();
    await().until(() -> small.cache.stats().inFlight() == 0);

    GatewayResponse second = small.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));

    assertThat(drain(leader)).hasSize(21).endsWith("[DONE]");
    assertThat(drain(second)).containsExactly(chunk("own").data(), "[DONE]");
    assertThat(small.upstreamCalls).hasValue(2);
    await().until(() -> small.cache.stats().entries() == 1);
    assertThat(drain(small.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true))))
        .as("only the second, small answer was stored").containsExactly(chunk("own").data(), "[DONE]");
  }

  @Test
  void headersOfASharedStreamReachTheJoiner() {
    ScriptedStream upstream = new ScriptedStream().send(chunk("a"), SseEvent.DONE).end();
    f.upstream = request -> GatewayResponse.streamed(200,
        Headers.of("x-spillway-backend", "local", "x-ratelimit-remaining-requests", "3"), upstream);

    GatewayResponse leader = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));
    GatewayResponse joiner = f.send(RELEASE, Route.CHAT_COMPLETIONS, chatBody("hi", true));

    assertThat(joiner.headers().get("x-spillway-backend")).isEqualTo("local");
    assertThat(joiner.headers().contains("x-ratelimit-remaining-requests")).isFalse();
    assertThat(leader.headers().get("x-ratelimit-remaining-requests")).isEqualTo("3");
    drain(leader);
    drain(joiner);
  }

  private static void block(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
