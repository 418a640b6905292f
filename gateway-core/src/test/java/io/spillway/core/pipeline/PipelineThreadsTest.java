package io.spillway.core.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where the stages run: on the calling thread (the connection's event loop) while none may block,
 * on a virtual thread from the first one that may, and never back on the loop for a blocking
 * stage's way out. The "event loop" here is the test's own platform thread, and the upstream's
 * answer arrives on another platform thread, as it would on a loop.
 */
class PipelineThreadsTest {
  private final Map<String, Thread> ranOn = new ConcurrentHashMap<>();

  private static GatewayRequest request() {
    return GatewayRequest.create("req_1", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object().put("model", "m"),
        null, Instant.EPOCH);
  }

  /** A stage that notes where its way in and its way out ran. */
  private Interceptor stage(String name, boolean mayBlock) {
    return new Interceptor() {
      @Override
      public CompletionStage<GatewayResponse> intercept(Chain chain) {
        ranOn.put(name + " in", Thread.currentThread());
        return chain.proceed(chain.request()).thenApply(response -> {
          ranOn.put(name + " out", Thread.currentThread());
          return response;
        });
      }

      @Override
      public boolean mayBlock() {
        return mayBlock;
      }
    };
  }

  /** A terminal that does not block: its answer arrives later, completed by {@link #answer}. */
  private final CompletableFuture<GatewayResponse> upstream = new CompletableFuture<>();

  private final CountDownLatch terminalReached = new CountDownLatch(1);

  private final Terminal router = new Terminal() {
    @Override
    public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
      ranOn.put("terminal", Thread.currentThread());
      terminalReached.countDown();
      return upstream;
    }

    @Override
    public boolean mayBlock() {
      return false;
    }
  };

  /** Completes the upstream's answer on a platform thread of its own, as an event loop would. */
  private Thread answer() throws InterruptedException {
    Thread loop = Thread.ofPlatform().name("upstream-loop").start(
        () -> upstream.complete(GatewayResponse.json(200, new byte[0])));
    loop.join();
    return loop;
  }

  @Test
  void stagesThatDoNotBlockRunOnTheCallingThreadBothWaysWithoutAHandOff() throws Exception {
    Pipeline pipeline = new Pipeline(List.of(stage("a", false), stage("b", false)), router);
    long handOffs = Blocking.handOffs();

    CompletionStage<GatewayResponse> answered = pipeline.executeAsync(request());
    Thread loop = answer();

    assertThat(answered.toCompletableFuture().join().status()).isEqualTo(200);
    assertThat(ranOn.get("a in")).isSameAs(Thread.currentThread());
    assertThat(ranOn.get("b in")).isSameAs(Thread.currentThread());
    assertThat(ranOn.get("terminal")).isSameAs(Thread.currentThread());
    assertThat(ranOn.get("b out")).as("the way out continues where the answer arrived").isSameAs(loop);
    assertThat(ranOn.get("a out")).isSameAs(loop);
    assertThat(Blocking.handOffs() - handOffs).isZero();
  }

  @Test
  void theFirstStageThatMayBlockMovesTheRestOfTheWayInToAVirtualThread() throws Exception {
    Pipeline pipeline = new Pipeline(List.of(stage("a", false), stage("quota", true), stage("c", false)), router);

    CompletionStage<GatewayResponse> answered = pipeline.executeAsync(request());
    awaitTerminalReached();
    answer();
    answered.toCompletableFuture().join();

    assertThat(ranOn.get("a in")).isSameAs(Thread.currentThread());
    assertThat(ranOn.get("quota in").isVirtual()).isTrue();
    assertThat(ranOn.get("c in")).as("already on a virtual thread: no second hand-off").isSameAs(ranOn.get("quota in"));
    assertThat(ranOn.get("terminal")).isSameAs(ranOn.get("quota in"));
  }

  @Test
  void aBlockingStagesWayOutRunsOnAVirtualThreadWhenTheAnswerArrivesOnALoop() throws Exception {
    Pipeline pipeline = new Pipeline(List.of(stage("quota", true), stage("c", false)), router);

    CompletionStage<GatewayResponse> answered = pipeline.executeAsync(request());
    awaitTerminalReached();
    Thread loop = answer();
    answered.toCompletableFuture().join();

    assertThat(ranOn.get("c out")).isSameAs(loop);
    assertThat(ranOn.get("quota out").isVirtual()).as("the stage may block on its way out too").isTrue();
  }

  @Test
  void aStageThatThrowsOnTheWayInFailsTheAnswerWithItsError() {
    Interceptor refusing = new Interceptor() {
      @Override
      public CompletionStage<GatewayResponse> intercept(Chain chain) {
        throw ErrorKind.INVALID_API_KEY.exception("no key");
      }

      @Override
      public boolean mayBlock() {
        return false;
      }
    };
    Pipeline pipeline = new Pipeline(List.of(stage("a", false), refusing), router);

    assertThatThrownBy(() -> pipeline.execute(request()))
        .isInstanceOf(GatewayException.class).hasMessage("no key");
    assertThat(ranOn).containsKey("a in").doesNotContainKey("terminal");
  }

  @Test
  void proceedAnsweringTurnsALaterStagesErrorIntoItsResponse() {
    Interceptor headers = chain -> chain.proceedAnswering(chain.request())
        .thenApply(response -> response.withHeader("x-limit", "1"));
    Pipeline pipeline = new Pipeline(List.of(headers), request -> {
      throw ErrorKind.RATE_LIMITED.exception("slow down");
    });

    GatewayResponse response = pipeline.execute(request());

    assertThat(response.status()).isEqualTo(429);
    assertThat(response.headers().get("x-limit")).isEqualTo("1");
  }

  /**
   * The virtual thread the chain moved to reaches the terminal on its own time, and the stage before
   * it attaches its way out to the answer a moment after the terminal returns: an answer completed
   * before that would rightly run the way out where it was attached, so the test waits for both.
   */
  private void awaitTerminalReached() throws InterruptedException {
    assertThat(terminalReached.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> upstream.getNumberOfDependents() > 0);
  }
}
