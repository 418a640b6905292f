package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.EventFields;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.quota.pool.Reservation;
import io.spillway.quota.pool.TokenUsage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a streamed answer for the usage its backend reports and settles the request's reservation
 * when the stream ends, fails, or is closed (a client that went away), whichever comes first: the
 * {@link Reservation} makes that exactly once.
 *
 * <p>Chat/completions and completions report usage in a last chunk with empty {@code choices}
 * (asked for with {@code stream_options.include_usage}). The Responses API reports it in its final
 * {@code response.completed} (or {@code .incomplete}/{@code .failed}) event. Events pass unchanged.
 *
 * <p>A stream that ends without reported usage is settled with the prompt estimate plus the tokens
 * of the text that was actually streamed.
 *
 * <p>Per event this costs a scan of its bytes: only events that may carry usage
 * ({@link SseEvent#mayCarryUsage}) are decoded and parsed as they pass. The first others are kept,
 * as the bytes they arrived as (no string is made of them), and parsed and tokenized only if the
 * stream ends without usage, which with Spillway asking chat streams for it is rare: a short answer
 * costs no parse. Once they pass {@value #MAX_PENDING_BYTES} bytes the kept ones are counted and let
 * go, and every later event is counted as it passes and kept by nobody: an open stream holds at most
 * that much, however long it runs, and nothing it holds for long points at an event made since (a
 * long-lived list gaining young events is what the young collections of many open streams pay for).
 * Events arrive on the relay thread while {@link #close} may come from another; the kept state is
 * guarded by this.
 *
 * <p>Settling writes to the usage store (Redis, or the embedded store's file), which may block: a
 * {@link #nonBlocking} stream, polled on an event loop, settles on a virtual thread before it
 * gives its end (see {@link #settleThenEnd}); {@link #close} settles on the closing thread, which
 * the front end never makes an event loop.
 */
final class MeteredEventStream extends ForwardingEventStream {
  /**
   * Kept events beyond this many bytes are counted at once and let go, and later ones counted as
   * they pass: about twenty chat chunks, more than a short answer's whole stream.
   */
  static final int MAX_PENDING_BYTES = 4 * 1024;
  private static final Logger log = LoggerFactory.getLogger(MeteredEventStream.class);

  private final Reservation reservation;
  private final long promptEstimate;
  private final ToLongFunction<String> tokenCounter;
  private final UsageReader usageReader;
  private final ArrayList<SseEvent> pending = new ArrayList<>();
  private int pendingBytes;
  /** Past {@link #MAX_PENDING_BYTES}: each event is counted as it passes, none kept. */
  private boolean counting;
  private volatile TokenUsage reported;
  /** The input a Messages stream told in its {@code message_start}, completed by its {@code message_delta}. */
  private TokenUsage messageInput;
  /** Set once a non-blocking stream ended and its usage is settling off the event loop. */
  private volatile CompletableFuture<Void> settling;
  /** How the delegate ended, given to the reader once the usage is settled; null for a normal end. */
  private RuntimeException endFailure;
  private long streamedTokens;

  MeteredEventStream(EventStream delegate, Reservation reservation, long promptEstimate,
      ToLongFunction<String> tokenCounter, UsageReader usageReader) {
    super(delegate);
    this.reservation = reservation;
    this.promptEstimate = promptEstimate;
    this.tokenCounter = tokenCounter;
    this.usageReader = usageReader;
  }

  @Override
  public SseEvent poll() {
    CompletableFuture<Void> settling = this.settling;
    if (settling != null) {
      return afterSettling(settling);
    }
    SseEvent event;
    try {
      event = delegate.poll();
    } catch (RuntimeException e) {
      return settleThenEnd(e);
    } catch (Error e) {
      settle();
      throw e;
    }
    if (event == null) {
      return settleThenEnd(null);
    }
    if (event != SseEvent.PENDING) {
      inspect(event);
    }
    return event;
  }

  /**
   * Settles, then ends the stream as its delegate did ({@code failure}, or null for the end). A
   * blocking stream is read on a thread of its own and settles there. A non-blocking one is polled
   * on an event loop, which must not wait for the store: it settles on a virtual thread and answers
   * {@link SseEvent#PENDING} until that is done, so the client still sees the stream's end only
   * after its usage counts, exactly as with a blocking stream.
   */
  private SseEvent settleThenEnd(RuntimeException failure) {
    if (!delegate.nonBlocking() || reservation.ended()) {
      settle();
      if (failure != null) {
        throw failure;
      }
      return null;
    }
    endFailure = failure;
    CompletableFuture<Void> settling = new CompletableFuture<>();
    this.settling = settling;
    Thread.ofVirtual().name("spillway-settle").start(() -> {
      try {
        settle();
      } catch (RuntimeException | Error e) {
        log.warn("settling a stream's usage failed", e);
      } finally {
        settling.complete(null);
      }
    });
    return afterSettling(settling);
  }

  private SseEvent afterSettling(CompletableFuture<Void> settling) {
    if (!settling.isDone()) {
      return SseEvent.PENDING;
    }
    RuntimeException failure = endFailure;
    if (failure != null) {
      endFailure = null;
      throw failure;
    }
    return null;
  }

  /** While the usage settles, ready once it has; otherwise when the delegate is. */
  @Override
  public void onReady(Runnable action) {
    CompletableFuture<Void> settling = this.settling;
    if (settling != null) {
      settling.whenComplete((done, e) -> action.run());
    } else {
      delegate.onReady(action);
    }
  }

  /** Reads reported usage from an event now; keeps any other event's data for {@link #countPending}. */
  private synchronized void inspect(SseEvent event) {
    if (!event.dataStartsWith('{')) {
      return; // [DONE], or nothing a count could come from
    }
    if (event.mayCarryUsage()) {
      if (!(event.mayContain("\"response.") && readResponseEnd(event.data()))) {
        read(event.data());
      }
      return;
    }
    if (reported != null) {
      return; // the backend already reported; nothing streamed after it changes the count
    }
    if (counting) {
      read(event.data());
      return;
    }
    pending.add(event);
    pendingBytes += event.size();
    if (pendingBytes > MAX_PENDING_BYTES) {
      countPending();
      counting = true;
    }
  }

  private void countPending() {
    for (SseEvent event : pending) {
      read(event.data());
    }
    pending.clear();
    pending.trimToSize();
    pendingBytes = 0;
  }

  /** How many bytes of events this stream keeps now (for tests). */
  synchronized int keptBytes() {
    return pendingBytes;
  }

  /**
   * Reads the usage of a Responses API stream's last event ({@code response.completed},
   * {@code response.incomplete}, {@code response.failed}), which carries the whole answer, without a
   * tree of it; false when the event is another one.
   */
  private boolean readResponseEnd(String data) {
    EventFields fields = EventFields.read(data);
    String type = fields.type();
    if (type == null || !(type.equals("response.completed") || type.equals("response.incomplete")
        || type.equals("response.failed"))) {
      return false;
    }
    TokenUsage usage = usageReader.fromUsage(fields.responseUsage());
    if (usage != null) {
      reported = usage;
    }
    return true;
  }

  /** Reads reported usage, and the text streamed, from one event's data. */
  private void read(String data) {
    JsonNode json;
    try {
      json = Json.parse(data);
    } catch (IOException e) {
      return;
    }
    if (json == null || !json.isObject()) {
      return;
    }
    String type = Json.text(json, "type");
    if (type != null && type.startsWith("response.")) {
      inspectResponsesEvent(type, json);
      return;
    }
    if (type != null && (type.startsWith("message_") || type.startsWith("content_block_"))) {
      inspectMessagesEvent(type, json);
      return;
    }
    JsonNode choices = json.get("choices");
    TokenUsage usage = usageReader.fromUsage(json.get("usage"));
    if (usage != null) {
      reported = usage;
    }
    if (choices != null && choices.isArray()) {
      for (JsonNode choice : choices) {
        countText(choice.path("delta").path("content"));
        countText(choice.path("delta").path("refusal"));
        countText(choice.get("text"));
        for (JsonNode call : choice.path("delta").path("tool_calls")) {
          countText(call.path("function").path("arguments"));
        }
      }
    }
  }

  private void inspectResponsesEvent(String type, JsonNode json) {
    if (type.equals("response.output_text.delta") || type.equals("response.function_call_arguments.delta")
        || type.equals("response.refusal.delta")) {
      countText(json.get("delta"));
    } else if (type.equals("response.completed") || type.equals("response.incomplete")
        || type.equals("response.failed")) {
      TokenUsage usage = usageReader.fromBody(json.get("response"));
      if (usage != null) {
        reported = usage;
      }
    }
  }

  /**
   * Anthropic's Messages stream: {@code message_start} tells the input (and a first output count),
   * {@code message_delta} the output so far; the two make the usage.
   */
  private void inspectMessagesEvent(String type, JsonNode json) {
    if (type.equals("content_block_delta")) {
      JsonNode delta = json.path("delta");
      countText(delta.get("text"));
      countText(delta.get("partial_json"));
      countText(delta.get("thinking"));
    } else if (type.equals("message_start")) {
      TokenUsage usage = usageReader.fromUsage(json.path("message").get("usage"));
      if (usage != null) {
        messageInput = usage;
        reported = usage;
      }
    } else if (type.equals("message_delta")) {
      JsonNode usage = json.get("usage");
      if (usage != null && usage.isObject()) {
        TokenUsage input = messageInput;
        TokenUsage delta = usageReader.fromUsage(usage);
        long output = usage.path("output_tokens").asLong(0);
        if (input != null && (delta == null || !usage.has("input_tokens"))) {
          reported = new TokenUsage(input.input(), output, input.cachedInput(), input.cacheWrites());
        } else if (delta != null) {
          reported = delta;
        }
      }
    }
  }

  private void countText(JsonNode text) {
    if (text != null && text.isTextual() && !text.textValue().isEmpty()) {
      streamedTokens += tokenCounter.applyAsLong(text.textValue());
    }
  }

  @Override
  public void close() {
    try {
      delegate.close();
    } finally {
      settle();
    }
  }

  private synchronized void settle() {
    if (reservation.ended()) {
      return;
    }
    TokenUsage usage = reported;
    if (usage == null) {
      countPending();
    }
    reservation.settle(usage != null ? usage : new TokenUsage(promptEstimate, streamedTokens));
    pending.clear();
  }
}
