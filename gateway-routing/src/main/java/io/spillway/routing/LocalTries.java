package io.spillway.routing;

import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.routing.BackendCalls.Attempt;
import io.spillway.routing.capacity.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's tries on the local backend: whether local may take the request at all (enabled,
 * ready, an embeddings model it maps, a client still there), and what its answer comes to. Records
 * shaping's preference for local as taken once the request is sent there.
 */
final class LocalTries {
  private static final Logger log = LoggerFactory.getLogger(Router.class);

  private final RouteCalls calls;
  private final LocalModelList localModels;

  LocalTries(RouteCalls calls, LocalModelList localModels) {
    this.calls = calls;
    this.localModels = localModels;
  }

  /**
   * One try on the local backend. {@code failover}: the cloud already failed this request, so
   * anything but a success counts as local failing too (a local 404 for a model that was never pulled
   * is not passed off as the answer); otherwise a local 4xx about the request itself is the answer.
   */
  CompletionStage<LocalTry> tryLocal(GatewayRequest request, boolean failover) {
    if (Boolean.TRUE.equals(request.attribute(RequestAttributes.PREFER_LOCAL))) {
      RequestOutcome.of(request).localByPreference(true); // shaping's local step took effect
    }
    if (ClientDisconnect.of(request).happened()) {
      return CompletableFuture.completedFuture(
          new LocalTry(null, Refusals.error(request, BackendKind.LOCAL, BackendCalls.clientClosed()), null));
    }
    if (request.route() == Route.EMBEDDINGS && !localModels.mapsExplicitly(request.model())) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.unsupported(embeddingsNotMapped(request))));
    }
    if (calls.local == null) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.disabled()));
    }
    if (!calls.local.ready()) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.notReady()));
    }
    return calls.call(calls.local, request).handle((attempt, thrown) -> {
      if (thrown != null) {
        if (Blocking.cause(thrown) instanceof GatewayException refused) {
          return new LocalTry(null, Refusals.error(request, calls.local.kind(), refused), null);
        }
        throw Blocking.rethrow(Blocking.cause(thrown));
      }
      if (attempt.failure() instanceof UnsupportedOnLocalException unsupported) {
        return LocalTry.failed(LocalFailure.unsupported(unsupported));
      }
      Outcome outcome = attempt.verdict().outcome();
      boolean failed = failover ? outcome != Outcome.SUCCESS : outcome.failsOver();
      if (!failed) {
        return new LocalTry(attempt, null, null);
      }
      log.warn("request {}: the local backend could not serve it ({})", request.id(), attempt.verdict().rule());
      attempt.discard();
      return LocalTry.failed(LocalFailure.answered(attempt.verdict()));
    });
  }

  /** What one local try came to: exactly one of the three is set. */
  record LocalTry(Attempt served, GatewayResponse refusedByGate, LocalFailure failure) {
    static LocalTry failed(LocalFailure failure) {
      return new LocalTry(null, null, failure);
    }
  }

  /**
   * Embeddings of a model that {@code local.models} does not map explicitly: a local model's vectors
   * would not match the ones the client already stored, so local refuses them like any request it
   * cannot serve (the cloud is tried where it may; the status and {@code Retry-After} come from the
   * breaker).
   */
  private static UnsupportedOnLocalException embeddingsNotMapped(GatewayRequest request) {
    return new UnsupportedOnLocalException(List.of("embeddings of '" + request.model()
        + "' (local.models has no entry for it, and another model's vectors would not match the ones"
        + " already computed with it; map it to a local embedding model in local.models)"),
        "Embeddings API", "model");
  }
}
