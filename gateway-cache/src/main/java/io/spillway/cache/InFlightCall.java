package io.spillway.cache;

import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Caller;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One upstream call that identical requests share. The request that registered it (the leader)
 * makes the call and publishes the {@link Outcome} once; the others (joiners) continue from the
 * future when it completes, holding no thread while they wait. Thread-safe.
 */
final class InFlightCall {
  private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
  private final List<Caller> joiners = new ArrayList<>();

  /** What joiners get. */
  sealed interface Outcome {
    /** The answer was already stored by the time the leader registered: replay it. */
    record Cached(CachedAnswer answer) implements Outcome {}

    /** A buffered answer from the upstream, 2xx or an upstream error. */
    record Buffered(int status, Headers headers, byte[] body) implements Outcome {}

    /** A stream: subscribe to it (null subscription: it closed to joiners, call alone). */
    record Streamed(int status, Headers headers, SharedStream stream) implements Outcome {}

    /** The upstream call failed before answering; every joiner gets the same error. */
    record Failed(GatewayException error) implements Outcome {}

    /**
     * The leader was refused for reasons of its own (its quota, its place in the queue), which
     * says nothing about the joiners: each makes its own call.
     */
    record Alone() implements Outcome {}
  }

  /** Publishes the outcome; later calls are ignored. */
  void complete(Outcome result) {
    outcome.complete(result);
  }

  /** The outcome, once the leader publishes it. */
  CompletionStage<Outcome> outcome() {
    return outcome;
  }

  synchronized void joined(Caller caller) {
    joiners.add(caller);
  }

  synchronized List<Caller> joiners() {
    return List.copyOf(joiners);
  }
}
