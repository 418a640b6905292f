package io.spillway.upstream;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.netty.channel.EventLoop;
import io.spillway.config.DataSize;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.time.Ticker;
import io.spillway.server.EventLoops;
import io.spillway.server.client.ClientSettings;
import io.spillway.server.client.NettyUpstreamHttp;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link OpenAiHttpBackend#callAsync} over the data path's real client: called on the event loop
 * that also receives the answer, it completes there. Had anything on the way blocked that loop
 * (waiting for the head, or for a buffered body), the answer could never have arrived: no thread
 * waits, and none is handed the call.
 */
class OpenAiHttpBackendAsyncTest {
  private static final String ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,"
      + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},"
      + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}";

  @RegisterExtension
  static WireMockExtension cloud =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  static final EventLoops loops = new EventLoops(1);
  static final NettyUpstreamHttp http = new NettyUpstreamHttp(loops, ClientSettings.DEFAULTS, Ticker.system());

  @AfterAll
  static void stopLoops() {
    loops.close();
  }

  final EventLoop loop = loops.workers().next();

  @Test
  void callAsyncCompletesOnTheEventLoopWithoutAVirtualThread() throws Exception {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER)));

    Completion completion = onTheLoop(backend(cloud.baseUrl()), request(false));

    GatewayResponse answer = completion.answer.get(30, TimeUnit.SECONDS);
    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.json().path("id").asText()).isEqualTo("chatcmpl-1");
    assertThat(completion.thread.get().isVirtual()).isFalse();
    assertThat(loop.inEventLoop(completion.thread.get())).as("completed on the loop it was called on").isTrue();
  }

  @Test
  void streamedAnswerStartsOnTheEventLoopAndIsPolledFromIt() throws Exception {
    cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "text/event-stream")
        .withBody("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")));

    Completion completion = onTheLoop(backend(cloud.baseUrl()), request(true));

    GatewayResponse answer = completion.answer.get(30, TimeUnit.SECONDS);
    assertThat(loop.inEventLoop(completion.thread.get())).isTrue();
    EventStream events = answer.stream();
    assertThat(events.nonBlocking()).isTrue();
    assertThat(events.next().data()).contains("hi");
    assertThat(events.next()).isEqualTo(SseEvent.DONE);
    events.close();
  }

  @Test
  void aStreamRequestAnsweredWithOneJsonBodyIsReadOnTheLoopAndToldAsAStream() throws Exception {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER)));

    Completion completion = onTheLoop(backend(cloud.baseUrl()), request(true));

    GatewayResponse answer = completion.answer.get(30, TimeUnit.SECONDS);
    assertThat(loop.inEventLoop(completion.thread.get())).isTrue();
    assertThat(answer.isStream()).isTrue();
    assertThat(answer.stream().next().data()).contains("hi");
    answer.stream().close();
  }

  @Test
  void theGatewaysOwnKeyRefusedFailsTheStageWithCredentialsRejected() {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(401, "{\"error\":{\"message\":\"bad key sk-com\"}}")));

    assertThat(failure(onTheLoop(backend(cloud.baseUrl()), request(false))))
        .isEqualTo(UpstreamException.Failure.CREDENTIALS_REJECTED);
  }

  @Test
  void anUnreachableUpstreamFailsTheStageWithConnectFailed() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }

    assertThat(failure(onTheLoop(backend("http://127.0.0.1:" + closedPort), request(false))))
        .isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
  }

  @Test
  void anAnswerOverTheLimitFailsTheStageWithResponseTooLarge() {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER)));
    OpenAiHttpBackend small = new OpenAiHttpBackend(BackendKind.CLOUD, new UpstreamSettings(cloud.baseUrl() + "/v1", "sk-company",
        Duration.ofSeconds(5), Duration.ofSeconds(2), DataSize.ofBytes(64)), UpstreamDialect.OPENAI, http);

    assertThat(failure(onTheLoop(small, request(false)))).isEqualTo(UpstreamException.Failure.RESPONSE_TOO_LARGE);
  }

  @Test
  void anAnswerLaterThanTheTimeoutFailsTheStageWithTimeout() {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER).withFixedDelay(5_000)));
    OpenAiHttpBackend impatient = new OpenAiHttpBackend(BackendKind.CLOUD, new UpstreamSettings(cloud.baseUrl() + "/v1",
        "sk-company", Duration.ofMillis(300), Duration.ofSeconds(2), DataSize.ofMebibytes(1)),
        UpstreamDialect.OPENAI, http);

    assertThat(failure(onTheLoop(impatient, request(false)))).isEqualTo(UpstreamException.Failure.TIMEOUT);
  }

  @Test
  void aClientThatGoesAwayCancelsTheCallBeforeItsHead() {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER).withFixedDelay(30_000)));
    ClientDisconnect disconnect = ClientDisconnect.create();
    GatewayRequest request = request(false);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);

    Completion completion = onTheLoop(backend(cloud.baseUrl()), request);
    await().atMost(Duration.ofSeconds(30)).until(() -> cloud.getAllServeEvents().size() == 1);
    disconnect.signal();

    await().atMost(Duration.ofSeconds(30)).until(completion.answer::isDone);
    assertThat(completion.answer).isCompletedExceptionally();
    assertThat(Blocking.cause(completion.answer.handle((a, e) -> e).join())).isInstanceOf(UpstreamException.class);
  }

  @Test
  void callWaitsForTheSameAnswer() {
    cloud.stubFor(post("/v1/chat/completions").willReturn(json(200, ANSWER)));
    GatewayRequest request = request(false);
    request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);

    GatewayResponse answer = Blocking.await(backend(cloud.baseUrl()).callAsync(request));

    assertThat(answer.status()).isEqualTo(200);
  }

  /** The answer of a call made on {@link #loop}, and the thread its stage completed on. */
  private record Completion(CompletableFuture<GatewayResponse> answer, CompletableFuture<Thread> thread) {}

  private Completion onTheLoop(OpenAiHttpBackend backend, GatewayRequest request) {
    request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);
    Completion completion = new Completion(new CompletableFuture<>(), new CompletableFuture<>());
    loop.execute(() -> backend.callAsync(request).whenComplete((answer, failure) -> {
      completion.thread.complete(Thread.currentThread());
      if (failure != null) {
        completion.answer.completeExceptionally(failure);
      } else {
        completion.answer.complete(answer);
      }
    }));
    return completion;
  }

  private static UpstreamException.Failure failure(Completion completion) {
    Throwable failure = Blocking.cause(completion.answer.handle((answer, e) -> e)
        .orTimeout(10, TimeUnit.SECONDS).join());
    assertThat(failure).isInstanceOf(UpstreamException.class);
    return ((UpstreamException) failure).failure();
  }

  private static OpenAiHttpBackend backend(String baseUrl) {
    return new OpenAiHttpBackend(BackendKind.CLOUD, new UpstreamSettings(baseUrl + "/v1", "sk-company", Duration.ofSeconds(5),
        Duration.ofSeconds(2), DataSize.ofMebibytes(1)), UpstreamDialect.OPENAI, http);
  }

  private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder json(int status, String body) {
    return aResponse().withStatus(status).withHeader("Content-Type", "application/json").withBody(body);
  }

  private static GatewayRequest request(boolean stream) {
    ObjectNode body = Json.object();
    body.put("model", "gpt-4o");
    body.put("stream", stream);
    body.putArray("messages").addObject().put("role", "user").put("content", "hi");
    return GatewayRequest.create("req_1", Route.CHAT_COMPLETIONS, Headers.EMPTY, body,
        body.toString().getBytes(StandardCharsets.UTF_8), Instant.parse("2026-11-10T10:00:00Z"));
  }
}
