package io.spillway.cache;

import static io.spillway.cache.CacheFixture.RELEASE;
import static io.spillway.cache.CacheFixture.body;
import static io.spillway.cache.CacheFixture.chatAnswer;
import static io.spillway.cache.CacheFixture.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A shared (coalesced) upstream call is cancelled when its leader's client leaves only if nobody
 * joined it; with joiners waiting it runs on for them. A call given up for a client that left is
 * not handed to joiners as their answer.
 */
class CacheClientDisconnectTest {
  private final CacheFixture f = new CacheFixture();

  @Test
  void aLeaderWhoseClientLeavesWithNobodyJoinedCancelsTheCall() throws Exception {
    AtomicReference<ClientDisconnect> seenUpstream = new AtomicReference<>();
    CountDownLatch cancelled = new CountDownLatch(1);
    f.upstream = request -> {
      ClientDisconnect disconnect = ClientDisconnect.of(request);
      seenUpstream.set(disconnect);
      disconnect.onDisconnect(cancelled::countDown);
      block(cancelled);
      throw ErrorKind.CLIENT_CLOSED.exception("cancelled");
    };
    ClientDisconnect leaderGone = ClientDisconnect.create();

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<GatewayResponse> leader = threads.submit(() -> f.send(RELEASE, Route.CHAT_COMPLETIONS,
          chatBody("lint a.py", false), leaderGone));
      await().until(() -> seenUpstream.get() != null);
      leaderGone.signal();

      assertThat(CacheFixture.get(leader).status()).isEqualTo(ErrorKind.CLIENT_CLOSED.status());
    }
    assertThat(seenUpstream.get().happened()).isTrue();
  }

  @Test
  void aLeaderWhoseClientLeavesKeepsTheCallRunningForItsJoiners() throws Exception {
    AtomicReference<ClientDisconnect> seenUpstream = new AtomicReference<>();
    CountDownLatch release = new CountDownLatch(1);
    f.upstream = request -> {
      seenUpstream.set(ClientDisconnect.of(request));
      block(release);
      return chatAnswer("for the joiner");
    };
    ClientDisconnect leaderGone = ClientDisconnect.create();

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<GatewayResponse> leader = threads.submit(() -> f.send(RELEASE, Route.CHAT_COMPLETIONS,
          chatBody("lint a.py", false), leaderGone));
      await().until(() -> seenUpstream.get() != null);
      Future<GatewayResponse> joiner = threads.submit(() -> f.chat(RELEASE, "lint a.py"));
      await().until(() -> f.joiners() == 1);

      leaderGone.signal();

      assertThat(seenUpstream.get().happened()).as("the call the joiner waits for is not cancelled").isFalse();
      release.countDown();
      assertThat(body(CacheFixture.get(joiner))).contains("for the joiner");
      CacheFixture.get(leader);
    }
    assertThat(f.upstreamCalls).hasValue(1);
  }

  @Test
  void aCallGivenUpForALeaderThatLeftIsNotTheAnswerOfOneWhoJoinedLate() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    f.upstream = request -> {
      if (f.upstreamCalls.get() == 1) {
        ClientDisconnect.of(request).onDisconnect(cancelled::countDown);
        block(cancelled);
        block(release);
        // What the router answers for a client that has gone.
        RequestOutcome.of(request).servedBy(BackendKind.CLOUD);
        return ErrorMapper.toResponse(ErrorKind.CLIENT_CLOSED.exception("gone"));
      }
      return chatAnswer("its own call");
    };
    ClientDisconnect leaderGone = ClientDisconnect.create();

    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<GatewayResponse> leader = threads.submit(() -> f.send(RELEASE, Route.CHAT_COMPLETIONS,
          chatBody("lint a.py", false), leaderGone));
      await().until(() -> f.upstreamCalls.get() == 1);
      leaderGone.signal(); // nobody has joined yet: the call is given up
      Future<GatewayResponse> joiner = threads.submit(() -> f.chat(RELEASE, "lint a.py"));
      await().until(() -> f.joiners() == 1);
      release.countDown();

      assertThat(CacheFixture.get(leader).status()).isEqualTo(ErrorKind.CLIENT_CLOSED.status());
      GatewayResponse answer = CacheFixture.get(joiner);
      assertThat(answer.status()).isEqualTo(200);
      assertThat(body(answer)).contains("its own call");
    }
    assertThat(f.upstreamCalls).hasValue(2);
  }

  private static void block(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
