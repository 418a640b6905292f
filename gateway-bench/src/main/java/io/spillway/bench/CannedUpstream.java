package io.spillway.bench;

import io.spillway.core.http.Headers;
import io.spillway.core.upstream.BodyBuffer;
import io.spillway.core.upstream.BodySource;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * An upstream that answers every request at once, from memory, with one canned chat completion: the
 * transport's part of a call without the network, so what a benchmark measures is Spillway's own
 * work from the backend ({@code OpenAiHttpBackend}) up.
 */
final class CannedUpstream implements UpstreamHttp {
  private static final Headers HEADERS = Headers.of("content-type", "application/json", "openai-processing-ms", "312");

  private final byte[] answer;

  CannedUpstream(byte[] answer) {
    this.answer = answer;
  }

  @Override
  public UpstreamExchange send(OutboundRequest request) {
    BodyBuffer body = new BodyBuffer(Math.max(answer.length, 1), () -> { }, () -> { });
    body.offer(answer);
    body.end();
    CompletableFuture<UpstreamHead> head = CompletableFuture.completedFuture(new UpstreamHead(200, HEADERS, "h2"));
    return new UpstreamExchange() {
      @Override
      public CompletableFuture<UpstreamHead> head() {
        return head;
      }

      @Override
      public BodySource body() {
        return body;
      }

      @Override
      public void cancel() {
        body.close();
      }

      /** The whole answer is in already: no phase is left to time. */
      @Override
      public Runnable schedule(Duration delay, Runnable action) {
        return () -> { };
      }
    };
  }
}
