package io.spillway.routing;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.time.Ticker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.core.pipeline.Route;
import io.spillway.routing.internal.FirstEvent;
import io.spillway.routing.internal.OncePermit;
import io.spillway.routing.internal.StartedStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * How the router and the model list's service call a backend: a place in its admission gate first,
 * then the call, judged by the capacity classifier and timed on the ticker for the
 * {@link RouterListener}. Thread-safe.
 */
final class BackendCalls {
  private final CapacityClassifier classifier;
  private final AdmissionGate gate;
  private final Ticker ticker;
  private final RouterListener listener;

  BackendCalls(CapacityClassifier classifier, AdmissionGate gate, Ticker ticker, RouterListener listener) {
    this.classifier = classifier;
    this.gate = gate;
    this.ticker = ticker;
    this.listener = listener;
  }

  /**
   * One call to one backend, classified, waited for: {@link #callAsync} on the calling (virtual)
   * thread. Throws only the admission gate's refusal (a {@link GatewayException}).
   */
  Attempt call(Backend backend, GatewayRequest request) {
    return Blocking.await(callAsync(backend, request));
  }

  /**
   * One call to one backend, classified. A stream is read up to its first event, which decides
   * whether it started; the permit then travels with the stream. Fails only with the admission
   * gate's refusal (a {@link GatewayException}); every failure of the backend itself is classified.
   *
   * <p>Nothing here blocks a thread on the common path: a free place in the gate is taken at once
   * ({@link AdmissionGate#tryEnter}), the backend answers through its own {@link Backend#callAsync},
   * and a non-blocking stream's first event is waited for by callback. Only a wait in the gate, a
   * backend that blocks and a stream that can only be read by blocking move to a virtual thread.
   */
  CompletionStage<Attempt> callAsync(Backend backend, GatewayRequest request) {
    return enter(backend, request).thenCompose(permit -> attempt(backend, request, new OncePermit(permit)));
  }

  private CompletionStage<Attempt> attempt(Backend backend, GatewayRequest request, OncePermit permit) {
    long start = ticker.read();
    CompletionStage<GatewayResponse> answer;
    try {
      answer = backend.callAsync(request);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer.handle((response, failure) -> {
      if (failure != null) {
        permit.close();
        return failedAttempt(backend, start, Blocking.cause(failure));
      }
      if (!response.isStream()) {
        permit.close();
        return done(timed(backend, start, Attempt.answered(response, classifier.verdictOn(request, response))));
      }
      EventStream stream = response.stream();
      return FirstEvent.of(stream, preamble(backend, request)).handle((head, streamFailure) -> {
        if (streamFailure != null) {
          closeQuietly(stream, permit);
          return failedAttempt(backend, start, Blocking.cause(streamFailure));
        }
        return done(started(backend, start, response, head, permit));
      }).thenCompose(Function.identity());
    }).thenCompose(Function.identity());
  }

  /** A classified failure of the backend, or any other failure passed on as it is. */
  private CompletionStage<Attempt> failedAttempt(Backend backend, long start, Throwable failure) {
    if (failure instanceof GatewayException e) {
      return done(timed(backend, start, Attempt.failed(e, classifier.classify(e))));
    }
    return CompletableFuture.failedFuture(failure);
  }

  /**
   * The events of a stream that come before anything tells how it goes: for Anthropic's Messages API
   * {@code message_start} and {@code ping}, after which an {@code overloaded_error} event still means
   * the answer never began; none for OpenAI's APIs, whose first event decides. None for the local
   * backend either: its streams fail by throwing, never by an error event, and its {@code ping}s
   * while a slow model thinks must reach the client at once rather than wait here.
   */
  private static Predicate<SseEvent> preamble(Backend backend, GatewayRequest request) {
    if (request.route() != Route.MESSAGES || backend.kind() == BackendKind.LOCAL) {
      return event -> false;
    }
    return event -> event.nameIs("message_start") || event.nameIs("ping");
  }

  /**
   * The attempt of a stream whose head has arrived: its preamble events, then the first that decides
   * ({@code null}: none before its end).
   */
  private Attempt started(Backend backend, long start, GatewayResponse response, List<SseEvent> head,
      OncePermit permit) {
    EventStream stream = response.stream();
    SseEvent first = head.get(head.size() - 1);
    if (first == null) {
      closeQuietly(stream, permit);
      UpstreamException e = new UpstreamException(backend.kind().tag(), UpstreamException.Failure.RESET_MID_STREAM,
          "The " + backend.kind().tag() + " backend ended the stream before its first event", null);
      return timed(backend, start, Attempt.failed(e, classifier.classify(e)));
    }
    Verdict verdict = classifier.classifyFirstEvent(first);
    if (verdict.outcome() != Outcome.SUCCESS) {
      closeQuietly(stream, permit);
      ErrorKind kind = verdict.outcome() == Outcome.CAPACITY ? ErrorKind.CAPACITY : ErrorKind.BAD_GATEWAY;
      GatewayException e = kind.exception("The " + backend.kind().tag() + " backend's stream began with an error")
          .withRetryAfter(verdict.retryAfter());
      return timed(backend, start, Attempt.failed(e, verdict));
    }
    return timed(backend, start,
        Attempt.answered(response.withStream(new StartedStream(head, stream, permit)), verdict));
  }

  /**
   * A place in the admission gate: taken at once when one is free ({@link AdmissionGate#tryEnter},
   * on this thread, whatever it is), else waited for where blocking is allowed.
   */
  private CompletionStage<AdmissionGate.Permit> enter(Backend backend, GatewayRequest request) {
    AdmissionGate.Permit permit;
    try {
      permit = gate.tryEnter(backend.kind(), request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (permit == null) {
      return Blocking.supply(() -> waitToEnter(backend, request));
    }
    if (ClientDisconnect.of(request).happened()) {
      permit.close();
      return CompletableFuture.failedFuture(clientClosed());
    }
    return done(permit);
  }

  /**
   * Waits in the admission gate; a client that goes away meanwhile ends the wait (by interrupting
   * it) and its place is given up, as is a permit obtained just as it left.
   */
  private AdmissionGate.Permit waitToEnter(Backend backend, GatewayRequest request) {
    ClientDisconnect disconnect = ClientDisconnect.of(request);
    Thread waiter = Thread.currentThread();
    AdmissionGate.Permit permit;
    try (ClientDisconnect.Registration waiting = disconnect.onDisconnect(waiter::interrupt)) {
      permit = gate.enter(backend.kind(), request);
    } catch (GatewayException e) {
      if (disconnect.happened()) {
        Thread.interrupted(); // the interrupt only ended the wait
        throw clientClosed();
      }
      throw e;
    }
    if (disconnect.happened()) {
      Thread.interrupted();
      permit.close();
      throw clientClosed();
    }
    return permit;
  }

  private static <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  static GatewayException clientClosed() {
    return ErrorKind.CLIENT_CLOSED.exception("The client closed its connection before the answer");
  }

  private Attempt timed(Backend backend, long startNanos, Attempt attempt) {
    listener.onAttempt(backend.kind(), attempt.verdict(), ticker.read() - startNanos);
    return attempt;
  }

  private static void closeQuietly(EventStream stream, OncePermit permit) {
    try {
      stream.close();
    } catch (RuntimeException ignored) {
      // The stream is being abandoned; its connection is discarded either way.
    } finally {
      permit.close();
    }
  }

  /** One backend call: exactly one of {@code response} and {@code failure} is set. */
  record Attempt(GatewayResponse response, GatewayException failure, Verdict verdict) {
    /** Drops an answer that will not be sent (a stream's connection and permit are given back). */
    void discard() {
      if (response != null && response.isStream()) {
        response.stream().close();
      }
    }

    static Attempt answered(GatewayResponse response, Verdict verdict) {
      return new Attempt(response, null, verdict);
    }

    static Attempt failed(GatewayException failure, Verdict verdict) {
      return new Attempt(null, failure, verdict);
    }
  }
}
