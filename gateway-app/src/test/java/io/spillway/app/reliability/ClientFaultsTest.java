package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LoopbackSockets;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import io.spillway.server.GatewayServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Clients that misbehave on the wire (read too slowly, send too slowly, hold connections open, walk
 * away mid-answer) cost the gateway bounded memory, bounded time and nothing else: everybody else
 * is still served.
 */
class ClientFaultsTest {
  static final int EVENTS = 2048;
  static final String PAD = "x".repeat(8 * 1024);

  /** A 16 MiB stream: far more than the kernel's socket buffers can hide. */
  static String bigStream() {
    StringBuilder body = new StringBuilder(EVENTS * (PAD.length() + 64));
    for (int i = 0; i < EVENTS; i++) {
      body.append("data: {\"i\":").append(i).append(",\"pad\":\"").append(PAD).append("\"}\n\n");
    }
    return body.append("data: [DONE]\n\n").toString();
  }

  static void stubProbe(GatewayHarness harness) {
    harness.cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(containing(UpstreamFaultsTest.PROBE))
        .willReturn(OpenAiStubs.chatCompletion("still serving")));
  }

  static long nettyDirectMemory() {
    return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
  }

  @Test
  void slowReaderHoldsTheStreamBackInsteadOfGrowingGatewayMemory() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start()) {
      stubProbe(harness);
      harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("big"))
          .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
              .withBody(bigStream())));
      long bound = GatewayServer.writeHighWaterMark() + 64 * 1024;

      try (RawHttp slow = new RawHttp(harness.gateway().port(), 8 * 1024)) {
        slow.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "big", true)));
        assertThat(slow.readHead().status()).isEqualTo(200);
        byte[] sip = new byte[256 * 1024];
        for (int round = 0; round < 4; round++) {
          // the client stops reading: the gateway must fill the socket, then stop at its high water mark
          await().atMost(Duration.ofSeconds(20))
              .until(() -> harness.gateway().pendingWriteBytes() >= 32 * 1024);
          assertThat(harness.gateway().pendingWriteBytes()).isLessThanOrEqualTo(bound);
          assertThat(nettyDirectMemory()).isLessThan(8L * 1024 * 1024);
          if (round == 0) {
            UpstreamFaultsTest.assertOthersAreServed(harness);
          }
          slow.input().readNBytes(sip, 0, sip.length);
        }
        assertThat(harness.gateway().pendingWriteBytes()).isLessThanOrEqualTo(bound);

        // nothing was lost on the way: every event arrives, in order, then [DONE]
        BufferedReader rest = new BufferedReader(new InputStreamReader(slow.input(), StandardCharsets.UTF_8));
        int next = -1;
        String line;
        boolean done = false;
        while ((line = rest.readLine()) != null && !done) {
          int at = line.indexOf("data: {\"i\":");
          if (at >= 0) {
            int i = Integer.parseInt(line.substring(at + 11, line.indexOf(',', at)));
            if (next >= 0) {
              assertThat(i).isEqualTo(next);
            }
            next = i + 1;
          }
          done = line.contains("data: [DONE]");
        }
        assertThat(next).isEqualTo(EVENTS);
        assertThat(done).isTrue();
      }
    }
  }

  @Test
  void clientThatStopsReadingIsClosedAtTheIdleTimeoutAndItsUpstreamCallCancelled() throws Exception {
    LoopbackSockets.assumeAvailable();
    try (GatewayHarness harness = GatewayHarness.start("server:\n  idleTimeout: 2s")) {
      stubProbe(harness);
      harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("big"))
          .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
              .withBody(bigStream())));
      try (RawHttp stuck = new RawHttp(harness.gateway().port(), 8 * 1024)) {
        stuck.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "big", true)));
        await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().inFlightRequests() == 1);

        await().atMost(Duration.ofSeconds(30)).until(() -> harness.gateway().inFlightRequests() == 0
            && harness.gateway().openConnections() == 0);
        await().atMost(Duration.ofSeconds(10))
            .until(() -> LoopbackSockets.establishedTo(harness.cloud.port()) == 0);
        UpstreamFaultsTest.assertOthersAreServed(harness);
      }
    }
  }

  @ParameterizedTest(name = "dribbled {0}")
  @ValueSource(strings = {"head", "body"})
  void slowlorisSenderGets408AtTheRequestReadTimeout(String part) throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  idleTimeout: 60s\n  requestReadTimeout: 1s")) {
      stubProbe(harness);
      String request = RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "slow", false));
      int headEnd = request.indexOf("\r\n\r\n") + 4;
      AtomicInteger sent = new AtomicInteger();
      ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
      try (RawHttp slowloris = new RawHttp(harness.gateway().port())) {
        if (part.equals("body")) {
          slowloris.send(request.substring(0, headEnd));
          sent.set(headEnd);
        }
        // one byte every 100 ms: never idle, never done
        ticker.scheduleAtFixedRate(() -> {
          int i = sent.get();
          if (i < request.length() - 1) {
            try {
              slowloris.send(request.substring(i, i + 1));
              sent.incrementAndGet();
            } catch (IOException closed) {
              throw new IllegalStateException("connection closed", closed);
            }
          }
        }, 0, 100, TimeUnit.MILLISECONDS);
        UpstreamFaultsTest.assertOthersAreServed(harness);

        RawHttp.Answer answer = slowloris.read();

        assertThat(answer.status()).isEqualTo(408);
        assertThat(Json.parse(answer.body()).get("error").get("code").asText()).isEqualTo("request_timeout");
        assertThat(answer.header("connection")).isEqualTo("close");
        assertThat(slowloris.closedByPeer()).isTrue();
        assertThat(sent.get()).isLessThan(request.length());
      } finally {
        ticker.shutdownNow();
      }
      UpstreamFaultsTest.assertOthersAreServed(harness);
    }
  }

  @Test
  void idleKeepAliveConnectionsAreBoundedAndTheOneTooManyGetsAClear503() throws Exception {
    int limit = 300;
    try (GatewayHarness harness = GatewayHarness.start("server:\n  maxConnections: " + limit)) {
      stubProbe(harness);
      List<RawHttp> idle = new ArrayList<>();
      try {
        for (int i = 0; i < limit; i++) {
          RawHttp connection = new RawHttp(harness.gateway().port());
          idle.add(connection);
          if (i % 30 == 0) {
            // some have been used and are now idle keep-alive connections
            connection.send(RawHttp.post("/v1/chat/completions", GOLD_KEY,
                chatBody("gpt-4o", UpstreamFaultsTest.PROBE, false)));
            assertThat(connection.read().status()).isEqualTo(200);
          }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> harness.gateway().openConnections() == limit);

        for (int i = 0; i < 20; i++) {
          try (RawHttp tooMany = new RawHttp(harness.gateway().port())) {
            tooMany.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false)));
            RawHttp.Answer refusal = tooMany.read();
            assertThat(refusal.status()).isEqualTo(503);
            assertThat(refusal.header("retry-after")).isEqualTo("1");
            assertThat(Json.parse(refusal.body()).get("error").get("code").asText()).isEqualTo("too_many_connections");
            assertThat(tooMany.closedByPeer()).isTrue();
          }
        }
        assertThat(harness.gateway().openConnections()).isEqualTo(limit);

        idle.remove(0).close();
        await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().openConnections() == limit - 1);
        UpstreamFaultsTest.assertOthersAreServed(harness);
      } finally {
        for (RawHttp connection : idle) {
          connection.close();
        }
      }
    }
  }

  @Test
  void clientThatDisconnectsMidStreamHasItsUpstreamCallCancelledPromptly() throws Exception {
    LoopbackSockets.assumeAvailable();
    try (GatewayHarness harness = GatewayHarness.start()) {
      stubProbe(harness);
      StringBuilder slowBody = new StringBuilder();
      for (int i = 0; i < 200; i++) {
        slowBody.append("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t").append(i)
            .append("\"}}]}\n\n");
      }
      harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("slow-stream"))
          .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
              .withBody(slowBody.toString()).withChunkedDribbleDelay(100, 60_000)));

      try (RawHttp leaving = new RawHttp(harness.gateway().port())) {
        leaving.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "slow-stream", true)));
        assertThat(leaving.readHead().status()).isEqualTo(200);
        assertThat(leaving.input().read()).isNotNegative();
        assertThat(harness.gateway().inFlightRequests()).isEqualTo(1);
        assertThat(LoopbackSockets.establishedTo(harness.cloud.port())).isEqualTo(1);
      }

      // well before the upstream would have finished (60 s), the call is gone on both sides
      await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().inFlightRequests() == 0);
      await().atMost(Duration.ofSeconds(5)).until(() -> LoopbackSockets.establishedTo(harness.cloud.port()) == 0);
      UpstreamFaultsTest.assertOthersAreServed(harness);
    }
  }
}
