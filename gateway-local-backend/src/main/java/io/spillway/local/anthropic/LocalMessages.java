package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.spillway.config.LocalMessagesConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.local.DroppedParams;
import io.spillway.local.Unsupported;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Anthropic's Messages API on one local server ({@code local.messages}).
 *
 * <p>Which way: a server that has its own {@code /v1/messages} (Ollama 0.14 and later, as its probe
 * learned) gets the request as the client sent it, with the model mapped, when nothing in it needs
 * Spillway's hand: every part is one the translation would pass on too, and it fits the model's
 * context window without cutting (Ollama's endpoint takes no {@code num_ctx}, so a request that
 * must be cut or sized goes the other way). Every other request is translated to chat completions
 * ({@link MessagesOverChat}), refusals included.
 *
 * <p>Pings: a streamed request whose server has not begun its answer within
 * {@code local.messages.pingEvery} is answered at once with a stream that says {@code ping} until
 * the answer comes and in every later silence ({@link PingingStream}); one answered sooner is
 * passed on as it came (an error still an error status the router may act on), with pings in its
 * silences. The timers run on the injected scheduler. Thread-safe.
 */
public final class LocalMessages {
  private static final Headers EARLY = Headers.of("content-type", "text/event-stream");

  private final LocalMessagesConfig config;
  private final ScheduledExecutorService scheduler;
  private final Counter dropped;

  /**
   * @param scheduler runs the ping timers; owned by the caller
   * @param dropped counts requests served with something left out
   */
  public LocalMessages(LocalMessagesConfig config, ScheduledExecutorService scheduler, Counter dropped) {
    this.config = config;
    this.scheduler = scheduler;
    this.dropped = dropped;
  }

  /**
   * The answer to the Messages request {@code request}.
   *
   * @param direct sends it to the server's own {@code /v1/messages}, or null when the server has none
   * @param chat answers a chat completions request on the same server
   * @param fitsAsSent whether a chat body fits the model's window without cutting
   */
  public CompletionStage<GatewayResponse> call(GatewayRequest request,
      Function<GatewayRequest, CompletionStage<GatewayResponse>> direct,
      Function<GatewayRequest, CompletionStage<GatewayResponse>> chat, Predicate<ObjectNode> fitsAsSent) {
    MessagesAsChat translation = new MessagesAsChat(request.body());
    Unsupported unsupported = new Unsupported();
    ObjectNode chatBody = translation.request(unsupported);
    boolean passThrough = direct != null && config.api() == LocalMessagesConfig.Api.AUTO && unsupported.isEmpty()
        && fitsAsSent.test(chatBody);
    CompletionStage<GatewayResponse> answer = passThrough ? direct.apply(request)
        : MessagesOverChat.call(request, translation, chatBody, unsupported, chat, dropped);
    if (!request.stream()) {
      return answer;
    }
    // An early answer's head says what the translation leaves out (the outcome records it when the
    // server's answer comes); what the server itself drops is known only then.
    Headers early = passThrough || translation.dropped().isEmpty() ? EARLY
        : EARLY.toBuilder().set(DroppedParams.HEADER, String.join(",", translation.dropped())).build();
    return pinged(answer.toCompletableFuture(), early);
  }

  private CompletionStage<GatewayResponse> pinged(CompletableFuture<GatewayResponse> answer, Headers head) {
    CompletableFuture<GatewayResponse> result = new CompletableFuture<>();
    ScheduledFuture<?> early = scheduler.schedule(() -> {
      if (answer.isDone()) {
        return;
      }
      PingingStream stream = PingingStream.awaiting(answer, config.pingEvery(), scheduler);
      if (!result.complete(GatewayResponse.streamed(200, head, stream))) {
        stream.stopPinging(); // the answer came first after all
      }
    }, config.pingEvery().toNanos(), TimeUnit.NANOSECONDS);
    answer.whenComplete((response, failure) -> {
      early.cancel(false);
      if (result.isDone()) {
        return; // the pinging stream already answered, and relays this answer itself
      }
      if (failure != null) {
        result.completeExceptionally(failure);
      } else if (response.isStream() && response.isSuccessful()) {
        PingingStream stream = PingingStream.around(response.stream(), config.pingEvery(), scheduler);
        if (!result.complete(response.withStream(stream))) {
          stream.stopPinging(); // the early stream relays the answer
        }
      } else {
        result.complete(response);
      }
    });
    return result;
  }
}
