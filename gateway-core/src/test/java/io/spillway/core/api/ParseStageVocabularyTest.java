package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.tokens.PromptPieces;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Terminal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * While the tokenizer's vocabulary is loading, the parse stage does not let a request that came
 * through a connection wait for it on the connection's event loop: the request goes on when the
 * load completes, on that loop. (The caller's tier is not known yet at this stage, so this holds
 * alike for every tier.)
 */
class ParseStageVocabularyTest {
  static final String BODY = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  final AtomicReference<GatewayRequest> reached = new AtomicReference<>();
  final CompletableFuture<Void> load = new CompletableFuture<>();
  /** The connection's loop, run by hand: what it was given to run. */
  final Queue<Runnable> loopTasks = new ArrayDeque<>();
  final Executor loop = loopTasks::add;

  /** The parse stage before a last stage that answers at once and never blocks, as a loop runs it. */
  Pipeline behind(ParseInterceptor parse) {
    return new Pipeline(List.of(parse), new Terminal() {
      @Override
      public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
        reached.set(request);
        return CompletableFuture.completedFuture(GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8)));
      }

      @Override
      public boolean mayBlock() {
        return false;
      }
    });
  }

  ParseInterceptor parse(boolean loaded) {
    return new ParseInterceptor(PromptPieces.off(), () -> loaded, () -> load);
  }

  GatewayRequest fromConnection() {
    GatewayRequest request = FirstStagesTest.chat(BODY, "application/json");
    request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);
    return request;
  }

  @Test
  void whileTheVocabularyLoadsARequestFromAConnectionGoesOnOnItsLoopOnceItIsLoaded() {
    CompletionStage<GatewayResponse> answer = behind(parse(false)).executeAsync(fromConnection());

    assertThat(reached.get()).as("held, and no thread holds it").isNull();
    assertThat(loopTasks).isEmpty();
    assertThat(answer.toCompletableFuture()).isNotDone();

    load.complete(null);
    assertThat(reached.get()).as("not on the thread that finished the load").isNull();
    assertThat(loopTasks).hasSize(1);
    loopTasks.poll().run();

    assertThat(reached.get().model()).isEqualTo("gpt-4o");
    assertThat(reached.get().attribute(RequestAttributes.PARSED)).isSameAs(reached.get());
    assertThat(answer.toCompletableFuture()).isCompletedWithValueMatching(response -> response.status() == 200);
  }

  @Test
  void onceTheVocabularyIsLoadedARequestFromAConnectionGoesStraightOn() {
    CompletionStage<GatewayResponse> answer = behind(parse(true)).executeAsync(fromConnection());

    assertThat(reached.get()).isNotNull();
    assertThat(loopTasks).isEmpty();
    assertThat(answer.toCompletableFuture()).isCompleted();
  }

  @Test
  void aRequestFromNoConnectionIsNotHeldByTheParseStage() {
    CompletionStage<GatewayResponse> answer =
        behind(parse(false)).executeAsync(FirstStagesTest.chat(BODY, "application/json"));

    assertThat(reached.get()).as("counts on its own thread, as before").isNotNull();
    assertThat(answer.toCompletableFuture()).isCompleted();
  }
}
