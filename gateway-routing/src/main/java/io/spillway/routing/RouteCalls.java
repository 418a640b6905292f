package io.spillway.routing;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.time.Ticker;
import io.spillway.routing.BackendCalls.Attempt;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.routing.cloud.CloudRoute;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What the router's two ways through the backends ({@link Router}: the cloud routes first;
 * {@link LocalFirst}: local first, then the routes it went past) share: a backend call through the
 * admission gate, a route's answer recorded with its breaker, and the client's answer with what
 * served it named in the request's outcome. Thread-safe: one instance serves all requests.
 */
final class RouteCalls {
  /** A route the request went past, with the ticket its breaker gave (a local one, or a cloud one it preferred not to use). */
  record Passed(CloudRoute route, Breaker.Ticket ticket) {}

  /** A route that answered this request with a capacity answer or a transient failure. */
  record RouteFailure(CloudRoute route, Attempt attempt, Verdict verdict) {}

  final List<CloudRoute> routes;
  /** The local backend, or null when there is none. */
  final Backend local;
  final RouterListener listener;
  final Refusals refusals;
  private final BackendCalls backendCalls;
  /** Whether deciding may wait on the network: a fleet breaker in Redis. */
  final boolean blocking;

  RouteCalls(List<CloudRoute> routes, Backend local, CapacityClassifier classifier, AdmissionGate gate, Ticker ticker,
      RouterListener listener) {
    this.routes = routes;
    this.local = local;
    this.listener = listener;
    this.refusals = new Refusals(this::retryAfter, listener);
    this.backendCalls = new BackendCalls(classifier, gate, ticker, listener);
    this.blocking = routes.stream().anyMatch(route -> route.breaker().mayBlock());
  }

  /**
   * One backend call as the router sees it: refused by the admission gate (a {@link GatewayException},
   * the client's answer) or an attempt; with a breaker that may block, what follows runs on a virtual
   * thread.
   */
  CompletionStage<Attempt> call(Backend backend, GatewayRequest request) {
    CompletionStage<Attempt> attempt;
    try {
      attempt = backendCalls.callAsync(backend, request);
    } catch (RuntimeException | Error e) {
      attempt = CompletableFuture.failedFuture(e);
    }
    return blocking ? Blocking.continuedOffLoop(attempt) : attempt;
  }

  /** Reports a route's answer to its breaker (a no-op for a local ticket) and counts capacity answers. */
  Verdict recordCloud(CloudRoute route, Breaker.Ticket ticket, Attempt attempt) {
    Verdict verdict = attempt.verdict();
    route.breaker().record(ticket, verdict);
    if (verdict.outcome() == Outcome.CAPACITY) {
      listener.onCapacityAnswer(route.name(), verdict);
    }
    return verdict;
  }

  /**
   * The cloud call of a client that has gone: it was cancelled, or it failed with nobody waiting, so
   * there is no failover. Only a real capacity answer tells the breaker something about the route.
   */
  GatewayResponse clientGone(GatewayRequest request, CloudRoute route, Breaker.Ticket ticket, Attempt attempt) {
    if (attempt.verdict().outcome() == Outcome.CAPACITY) {
      recordCloud(route, ticket, attempt);
    } else {
      route.breaker().release(ticket);
    }
    attempt.discard();
    return routed(request, route, Refusals.error(request, route.backend().kind(), BackendCalls.clientClosed()));
  }

  /**
   * The answer the client gets from a cloud {@code route}, or from local when {@code route} is null:
   * its response, or its failure as an error body.
   */
  GatewayResponse answer(GatewayRequest request, CloudRoute route, Attempt attempt) {
    RequestOutcome.of(request).servedBy(route != null ? route.backend().kind() : local.kind());
    GatewayResponse response = attempt.response() != null ? attempt.response() : ErrorMapper.toResponse(attempt.failure());
    int status = response.status();
    if ((status == 429 || status == 503) && !response.headers().contains("retry-after")) {
      Duration wait = attempt.verdict().retryAfter() != null ? attempt.verdict().retryAfter()
          : route != null ? route.breaker().retryAfter(null) : retryAfter(null);
      response = response.withHeader("retry-after", Long.toString(ErrorMapper.retryAfterSeconds(wait)));
    }
    return route != null ? routed(request, route, response) : response;
  }

  /** Names the cloud route a response is charged to in the request's outcome ({@value Router#ROUTE_HEADER}). */
  static GatewayResponse routed(GatewayRequest request, CloudRoute route, GatewayResponse response) {
    RequestOutcome.of(request).route(route.name());
    return response;
  }

  static GatewayResponse withFallback(GatewayRequest request, GatewayResponse response, LocalFailure failure) {
    RequestOutcome.of(request).fellBack(failure.cause().tag());
    return response;
  }

  static void release(List<Passed> passed) {
    passed.forEach(p -> p.route().breaker().release(p.ticket()));
  }

  /**
   * The {@code Retry-After} for a client no backend served: the earliest time any route's breaker
   * lets a request through again (or the upstream's own longer wait); see {@link Breaker#retryAfter}.
   */
  Duration retryAfter(Duration upstream) {
    Duration shortest = null;
    for (CloudRoute route : routes) {
      Duration wait = route.breaker().retryAfter(upstream);
      if (shortest == null || wait.compareTo(shortest) < 0) {
        shortest = wait;
      }
    }
    return shortest;
  }

  /** The backend a refusal names: local, or with no local backend the cloud. */
  BackendKind refusingBackend() {
    return local != null ? BackendKind.LOCAL : BackendKind.CLOUD;
  }
}
