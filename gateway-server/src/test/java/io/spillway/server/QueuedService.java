package io.spillway.server;

import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A service whose answers are tasks the test runs itself, so it decides when each answer is ready
 * (as a request waiting on its upstream would be). {@link #serve} is the answer each task computes.
 */
final class QueuedService implements HttpService {
  private final HttpService answers;
  private final ArrayDeque<Runnable> pending = new ArrayDeque<>();

  QueuedService(HttpService answers) {
    this.answers = answers;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return answers.serve(request);
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    CompletableFuture<GatewayResponse> answer = new CompletableFuture<>();
    pending.add(() -> {
      try {
        answer.complete(answers.serve(request));
      } catch (RuntimeException | Error e) {
        answer.completeExceptionally(e);
      }
    });
    return answer;
  }

  /** How many requests wait for their answer. */
  int waiting() {
    return pending.size();
  }

  /** Computes the oldest waiting request's answer. */
  void answerNext() {
    pending.remove().run();
  }
}
