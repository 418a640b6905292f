package io.spillway.routing;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.routing.RouteCalls.Passed;
import io.spillway.routing.RouteCalls.RouteFailure;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.routing.cloud.CloudRoute;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request sent local first (a breaker open on its own, shaping's preference for local, an
 * operator's forced open, or no route serving its model), and the fallback: when local cannot serve,
 * the cloud routes it went past are tried once each, in order, except those an operator forced open;
 * the answer says so in {@value Router#FALLBACK_HEADER}.
 */
final class LocalFirst {
  private static final Logger log = LoggerFactory.getLogger(Router.class);

  private final RouteCalls calls;
  private final LocalTries localTries;

  LocalFirst(RouteCalls calls, LocalTries localTries) {
    this.calls = calls;
    this.localTries = localTries;
  }

  /**
   * The local backend; when it cannot serve, the routes it went past once each, in order, except
   * those an operator forced open. Those are released unused.
   */
  CompletionStage<GatewayResponse> localFirst(GatewayRequest request, List<Passed> passed) {
    String situation = situation(request, passed);
    return localTries.tryLocal(request, false).thenCompose(tried -> {
      if (tried.failure() == null) {
        calls.release(passed);
        return CompletableFuture.completedFuture(
            tried.served() != null ? calls.answer(request, null, tried.served()) : tried.refusedByGate());
      }
      LocalFailure failure = tried.failure();
      List<Passed> fallbacks = new ArrayList<>();
      List<Passed> forced = new ArrayList<>();
      passed.forEach(p -> (p.ticket().forcedLocal() ? forced : fallbacks).add(p));
      calls.release(forced);
      if (!fallbacks.isEmpty()) {
        log.info("request {}: {}; trying the cloud instead", request.id(), failure.words());
        calls.listener.onFallback(failure.cause().tag());
        return fallBackToCloud(request, fallbacks, 0, situation, failure, null);
      }
      if (failure.unsupported() != null) {
        return CompletableFuture.completedFuture(passed.isEmpty()
            ? Refusals.noRoute(request, failure.unsupported(), calls.refusingBackend())
            : Refusals.forcedLocal(request, failure.unsupported(), calls.refusingBackend()));
      }
      return CompletableFuture.completedFuture(
          calls.refusals.unavailable(request, calls.refusingBackend(), situation + ", and " + failure.words(), null));
    });
  }

  /** What a request sent local first says when no backend serves it. */
  private String situation(GatewayRequest request, List<Passed> passed) {
    if (calls.local == null) {
      return passed.isEmpty() ? "No cloud route serves the model '" + request.model() + "'"
          : "An operator has forced the cloud's breaker open";
    }
    if (passed.isEmpty()) {
      return "No cloud route serves the model '" + request.model() + "', so it went to the local backend";
    }
    if (passed.stream().allMatch(p -> p.ticket().forcedLocal())) {
      return "An operator has forced all traffic to the local backend";
    }
    if (passed.stream().anyMatch(p -> p.ticket().cloud())) {
      return "This request was routed to the local backend";
    }
    return "Traffic is on the local backend while the cloud is at capacity";
  }

  /**
   * The routes the request went past, once each from {@code index}, for a request local could not
   * serve. A cloud ticket (breaker closed, the request only preferred local) is recorded as any
   * cloud answer is; a local ticket (breaker open, or half-open with the probe out) is not: this try
   * is not the probe, so neither its capacity answer nor its success moves the breaker.
   */
  private CompletionStage<GatewayResponse> fallBackToCloud(GatewayRequest request, List<Passed> fallbacks, int index,
      String situation, LocalFailure failure, RouteFailure last) {
    if (index == fallbacks.size()) {
      return CompletableFuture.completedFuture(noFallbackServed(request, situation, failure, last));
    }
    CloudRoute route = fallbacks.get(index).route();
    Breaker.Ticket ticket = fallbacks.get(index).ticket();
    List<Passed> rest = fallbacks.subList(index + 1, fallbacks.size());
    return calls.call(route.backend(), request).handle((attempt, thrown) -> {
      if (thrown != null) {
        route.breaker().release(ticket);
        calls.release(rest);
        if (Blocking.cause(thrown) instanceof GatewayException refused) {
          return CompletableFuture.completedFuture(calls.withFallback(request,
              calls.routed(request, route, Refusals.error(request, route.backend().kind(), refused)), failure));
        }
        throw Blocking.rethrow(Blocking.cause(thrown));
      }
      if (attempt.verdict().outcome() != Outcome.SUCCESS && ClientDisconnect.of(request).happened()) {
        calls.release(rest);
        return CompletableFuture.completedFuture(calls.clientGone(request, route, ticket, attempt));
      }
      Verdict verdict = calls.recordCloud(route, ticket, attempt);
      if (!verdict.outcome().failsOver()) {
        calls.release(rest);
        return CompletableFuture.completedFuture(calls.withFallback(request, calls.answer(request, route, attempt), failure));
      }
      return fallBackToCloud(request, fallbacks, index + 1, situation, failure,
          new RouteFailure(route, attempt, verdict));
    }).thenCompose(next -> next);
  }

  /** What the client of a request local could not serve gets when no route it went past served it either. */
  private GatewayResponse noFallbackServed(
      GatewayRequest request, String situation, LocalFailure failure, RouteFailure last) {
    Verdict verdict = last.verdict();
    GatewayResponse refused;
    if (failure.unsupported() != null) {
      refused = calls.refusals.unsupported(request, failure.unsupported(), last.route().backend().kind(),
          "The cloud, tried instead, " + FailureWords.of(verdict), verdict);
    } else if (verdict.outcome() == Outcome.TRANSIENT) {
      return calls.withFallback(request, calls.answer(request, last.route(), last.attempt()), failure);
    } else {
      refused = calls.refusals.unavailable(request, last.route().backend().kind(),
          situation + ", and " + failure.words() + "; the cloud, tried instead, " + FailureWords.of(verdict),
          verdict.retryAfter());
    }
    return calls.withFallback(request, calls.routed(request, last.route(), refused), failure);
  }
}
