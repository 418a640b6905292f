package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.NettyH2Client;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.ScriptedUpstream;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 with prior knowledge (h2c) on the plain port, beside HTTP/1.1, with OkHttp as a real
 * HTTP/2 client: every answer, streams included, comes back over HTTP/2 and reads exactly as over
 * HTTP/1.1. (TLS with ALPN is in {@code TlsFrontEndTest}.)
 */
class Http2FrontEndTest {
  private static final MediaType JSON = MediaType.get("application/json");
  static GatewayHarness harness;

  private OkHttpClient client;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start("server:\n  maxRequestSize: 4KiB\n");
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void newClient() {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequestsPerHost(16);
    client = new OkHttpClient.Builder()
        .protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
        .dispatcher(dispatcher)
        .readTimeout(Duration.ofSeconds(20))
        .build();
    harness.cloud.resetAll();
  }

  @AfterEach
  void closeClient() {
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }

  private static Request chat(String key, String body) {
    Request.Builder request = new Request.Builder().url(harness.url("/v1/chat/completions"))
        .post(RequestBody.create(body, JSON));
    if (key != null) {
      request.header("Authorization", "Bearer " + key);
    }
    return request.build();
  }

  @Test
  void bufferedChatCompletionIsAnsweredOverHttp2WithPriorKnowledge() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("over h2c")));
    try (Response response = client.newCall(chat(GOLD_KEY, chatBody("gpt-4o", "hi", false))).execute()) {
      assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.header("x-request-id")).isNotBlank();
      assertThat(Json.parse(response.body().string()).get("choices").get(0).get("message").get("content").asText())
          .isEqualTo("over h2c");
    }
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withoutHeader("x-http2-stream-id").withoutHeader("x-http2-scheme"));
  }

  @Test
  void streamedChatCompletionArrivesEventByEventAsDataFrames() throws Exception {
    String chunk = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
        + "\"delta\":{\"content\":\"%s\"}}]}\n\n";
    CountDownLatch clientSawFirst = new CountDownLatch(1);
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, chunk.formatted("first"));
          ScriptedUpstream.await(clientSawFirst);
          ScriptedUpstream.writeChunk(out, chunk.formatted("second"));
          ScriptedUpstream.writeChunk(out, "data: [DONE]\n\n");
          ScriptedUpstream.endChunks(out);
        });
        GatewayHarness streaming = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      Request request = new Request.Builder().url(streaming.url("/v1/chat/completions"))
          .header("Authorization", "Bearer " + GOLD_KEY)
          .post(RequestBody.create(chatBody("gpt-4o", "hi", true), JSON)).build();
      List<String> lines = new ArrayList<>();
      try (Response response = client.newCall(request).execute()) {
        assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
        assertThat(response.code()).isEqualTo(200);
        assertThat(response.header("content-type")).isEqualTo("text/event-stream");
        BufferedSource source = response.body().source();
        String line;
        while ((line = source.readUtf8Line()) != null) {
          if (line.isEmpty()) {
            continue;
          }
          lines.add(line);
          if (line.contains("first")) {
            clientSawFirst.countDown(); // the upstream sends the rest only after the client saw this
          }
        }
      }
      assertThat(lines).hasSize(3);
      assertThat(lines.get(0)).contains("first");
      assertThat(lines.get(1)).contains("second");
      assertThat(lines.get(2)).isEqualTo("data: [DONE]");
    }
  }

  /**
   * A cacheable stream is read through the cache's pump and its reader never blocks, so the front end
   * relays it from the HTTP/2 stream's event loop; so is its replay from the cache.
   */
  @Test
  void aStreamRelayedFromTheEventLoopAndItsReplayFromTheCacheArriveOverHttp2() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hel", "lo")));
    String body = "{\"model\":\"gpt-4o\",\"stream\":true,\"temperature\":0,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"relayed over h2\"}]}";

    long cached = harness.gateway().cache().stats().entries();
    List<String> first = streamLines(chat(GOLD_KEY, body));
    await().until(() -> harness.gateway().cache().stats().entries() > cached);
    List<String> replay = streamLines(chat(GOLD_KEY, body));

    assertThat(first).last().isEqualTo("data: [DONE]");
    assertThat(String.join("\n", first)).contains("\"Hel\"").contains("\"lo\"");
    assertThat(first).as("usage chunk taken out").noneMatch(line -> line.contains("prompt_tokens"));
    assertThat(replay).isEqualTo(first);
    harness.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/chat/completions")));
  }

  private List<String> streamLines(Request request) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Response response = client.newCall(request).execute()) {
      assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(response.code()).isEqualTo(200);
      BufferedSource source = response.body().source();
      String line;
      while ((line = source.readUtf8Line()) != null) {
        if (!line.isEmpty()) {
          lines.add(line);
        }
      }
    }
    return lines;
  }

  @Test
  void missingKeyGetsTheOpenAiErrorBodyOverHttp2() throws Exception {
    try (Response response = client.newCall(chat(null, chatBody("gpt-4o", "hi", false))).execute()) {
      assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(response.code()).isEqualTo(401);
      var error = Json.parse(response.body().string()).get("error");
      assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
      assertThat(error.has("message") && error.has("param") && error.has("code")).isTrue();
    }
  }

  @Test
  void bodyOverTheLimitGets413AndTheConnectionServesTheNextStream() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("still here")));
    String huge = chatBody("gpt-4o", "x".repeat(8 * 1024), false);
    try (Response response = client.newCall(chat(GOLD_KEY, huge)).execute()) {
      assertThat(response.code()).isEqualTo(413);
      assertThat(Json.parse(response.body().string()).get("error").get("code").asText())
          .isEqualTo("request_too_large");
    }
    try (Response response = client.newCall(chat(GOLD_KEY, chatBody("gpt-4o", "hi", false))).execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body().string()).contains("still here");
    }
    assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
  }

  @Test
  void severalStreamsRunAtOnceOnOneConnection() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions")
        .willReturn(OpenAiStubs.chatCompletion("together").withFixedDelay(1_500)));
    try (Response warmUp = client.newCall(new Request.Builder().url(harness.url("/healthz")).build()).execute()) {
      assertThat(warmUp.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
    }
    int streams = 6;
    List<CompletableFuture<String>> answers = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      CompletableFuture<String> answer = new CompletableFuture<>();
      client.newCall(chat(GOLD_KEY, chatBody("gpt-4o", "hi " + i, false))).enqueue(new Callback() {
        @Override
        public void onFailure(Call call, IOException e) {
          answer.completeExceptionally(e);
        }

        @Override
        public void onResponse(Call call, Response response) throws IOException {
          try (response) {
            answer.complete(response.code() + " " + response.body().string());
          }
        }
      });
      answers.add(answer);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().inFlightRequests() == streams);
    assertThat(harness.gateway().openConnections()).isEqualTo(1);
    for (CompletableFuture<String> answer : answers) {
      assertThat(answer.get(20, TimeUnit.SECONDS)).startsWith("200 ").contains("together");
    }
    assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
  }

  @Test
  void http11ClientsAreStillServedOnTheSamePort() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("over http/1.1")));
    try (HttpClient http1 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> response = http1.send(
          HttpRequest.newBuilder(URI.create(harness.url("/v1/chat/completions")))
              .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", false))).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("over http/1.1");
    }
  }

  @Test
  void headersOverTheLimitGet431AndTheConnectionLives() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("after")));
    Request huge = chat(GOLD_KEY, chatBody("gpt-4o", "hi", false)).newBuilder()
        .header("x-padding", "p".repeat(20 * 1024)).build();
    try (Response response = client.newCall(huge).execute()) {
      assertThat(response.code()).isEqualTo(431);
    }
    try (Response response = client.newCall(chat(GOLD_KEY, chatBody("gpt-4o", "hi", false))).execute()) {
      assertThat(response.code()).isEqualTo(200);
    }
    assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
  }

  @Test
  void clientCancellingAStreamEndsItsRequestButNotTheConnection() throws Exception {
    String chunk = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
        + "\"delta\":{\"content\":\"first\"}}]}\n\n";
    CountDownLatch testOver = new CountDownLatch(1);
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, chunk);
          testOver.await(20, TimeUnit.SECONDS);
        });
        GatewayHarness streaming = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      Request request = new Request.Builder().url(streaming.url("/v1/chat/completions"))
          .header("Authorization", "Bearer " + GOLD_KEY)
          .post(RequestBody.create(chatBody("gpt-4o", "hi", true), JSON)).build();
      Call call = client.newCall(request);
      try (Response response = call.execute()) {
        assertThat(response.body().source().readUtf8Line()).contains("first");
        assertThat(streaming.gateway().inFlightRequests()).isEqualTo(1);
        call.cancel(); // RST_STREAM for this stream only
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> streaming.gateway().inFlightRequests() == 0);
      assertThat(streaming.gateway().openConnections()).isEqualTo(1);
      Request health = new Request.Builder().url(streaming.url("/healthz")).build();
      try (Response response = client.newCall(health).execute()) {
        assertThat(response.code()).isEqualTo(200);
      }
      assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
    } finally {
      testOver.countDown();
    }
  }

  @Test
  void idleHttp2ConnectionIsClosedAfterTheIdleTimeout() throws Exception {
    try (GatewayHarness idle = GatewayHarness.start("server:\n  idleTimeout: 300ms")) {
      try (Response response = client.newCall(new Request.Builder().url(idle.url("/healthz")).build()).execute()) {
        assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
        assertThat(response.code()).isEqualTo(200);
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> idle.gateway().openConnections() == 0);
    }
  }

  @Test
  void streamsPastMaxConcurrentStreamsMakeTheClientOpenAnotherConnection() throws Exception {
    try (GatewayHarness limited = GatewayHarness.start("server:\n  http2:\n    maxConcurrentStreams: 2\n")) {
      limited.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.chatCompletion("limited").withFixedDelay(1_500)));
      try (Response warmUp = client.newCall(new Request.Builder().url(limited.url("/healthz")).build()).execute()) {
        assertThat(warmUp.code()).isEqualTo(200);
      }
      List<CompletableFuture<Integer>> answers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        Request request = new Request.Builder().url(limited.url("/v1/chat/completions"))
            .header("Authorization", "Bearer " + GOLD_KEY)
            .post(RequestBody.create(chatBody("gpt-4o", "hi " + i, false), JSON)).build();
        client.newCall(request).enqueue(new Callback() {
          @Override
          public void onFailure(Call call, IOException e) {
            answer.completeExceptionally(e);
          }

          @Override
          public void onResponse(Call call, Response response) {
            try (response) {
              answer.complete(response.code());
            }
          }
        });
        answers.add(answer);
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> limited.gateway().inFlightRequests() == 4);
      assertThat(limited.gateway().openConnections()).isEqualTo(2);
      for (CompletableFuture<Integer> answer : answers) {
        assertThat(answer.get(20, TimeUnit.SECONDS)).isEqualTo(200);
      }
    }
  }

  @Test
  void aStreamWhoseClientDoesNotReadHoldsTheUpstreamBackUntilItReads() throws Exception {
    int events = 48 * 1024;
    String pad = "p".repeat(1000);
    CountDownLatch upstreamDone = new CountDownLatch(1);
    AtomicLong written = new AtomicLong();
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          for (int i = 0; i < events; i++) {
            String event = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + i + ":" + pad + "\"}}]}\n\n";
            ScriptedUpstream.writeChunk(out, event);
            written.addAndGet(event.length());
          }
          ScriptedUpstream.writeChunk(out, "data: [DONE]\n\n");
          ScriptedUpstream.endChunks(out);
          upstreamDone.countDown();
        });
        GatewayHarness streaming = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl());
        NettyH2Client h2 = new NettyH2Client(streaming.gateway().port(), 16 * 1024)) {
      EventsInOrder received = new EventsInOrder();
      NettyH2Client.Exchange exchange =
          h2.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true), received::accept);
      assertThat(exchange.status.get(20, TimeUnit.SECONDS)).isEqualTo(200);

      // the client reads nothing more: the upstream is held back once the socket buffers between
      // it and the gateway are full, far short of the 48 MiB it has to send
      AtomicLong seen = new AtomicLong(-1);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(700))
          .until(() -> written.get() > 0 && written.get() == seen.getAndSet(written.get()));
      assertThat(upstreamDone.getCount()).isOne();
      assertThat(written.get()).isLessThan(16L * 1024 * 1024);

      exchange.readAll();
      exchange.ended.get(60, TimeUnit.SECONDS);
      assertThat(received.next).isEqualTo(events);
      assertThat(received.done).isTrue();
      assertThat(upstreamDone.getCount()).isZero();
    }
  }

  /** Checks a chat stream's events as they arrive in pieces: numbered 0, 1, 2, ... then [DONE]. */
  private static final class EventsInOrder {
    private final StringBuilder partial = new StringBuilder();
    volatile int next;
    volatile boolean done;

    void accept(String piece) {
      partial.append(piece);
      int end;
      while ((end = partial.indexOf("\n")) >= 0) {
        String line = partial.substring(0, end);
        partial.delete(0, end + 1);
        int at = line.indexOf("\"content\":\"");
        if (at >= 0) {
          int number = Integer.parseInt(line.substring(at + 11, line.indexOf(':', at + 11)));
          assertThat(number).isEqualTo(next);
          next = number + 1;
        }
        done |= line.equals("data: [DONE]");
      }
    }
  }
}
