package io.spillway.routing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.api.ModelQuery;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.time.Ticker;
import io.spillway.routing.BackendCalls.Attempt;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Verdict;
import io.spillway.routing.cloud.CloudRoute;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The terminal of the model list ({@code GET /v1/models} and {@code GET /v1/models/{id}}), apart from
 * the model calls' router: the list of the first cloud route that takes traffic (breaker not open)
 * and can list models (not an azure route), through the admission gate as any cloud call; a route
 * that answers at capacity or cannot be reached passes the turn to the next. When no route answers,
 * or the admission gate is full, the {@link LocalModelList}. A caller whose key has a model
 * allow-list ({@link Caller#models()}) sees only those models. For {@code /v1/models/{id}} it picks the entry out of that list, or answers
 * 404 {@code model_not_found}; a failed listing reaches the client as it is. Every answer names its
 * source in the {@link RequestOutcome} (the headers stage writes {@code x-spillway-backend}). The
 * caller ({@link RequestAttributes#CALLER}) is on the request. The list is never cached: its cache
 * status is {@code bypass}, as every answer past authentication states one. Thread-safe.
 */
public final class ModelsService implements Terminal {
  private final List<CloudRoute> routes;
  private final BackendCalls calls;
  private final LocalModelList localModels;

  public ModelsService(List<CloudRoute> routes, CapacityClassifier classifier, AdmissionGate gate,
      LocalModelList localModels, Ticker ticker, RouterListener listener) {
    this.routes = List.copyOf(routes);
    this.calls = new BackendCalls(Objects.requireNonNull(classifier, "classifier"),
        gate != null ? gate : AdmissionGate.OPEN, Objects.requireNonNull(ticker, "ticker"),
        Objects.requireNonNull(listener, "listener"));
    this.localModels = Objects.requireNonNull(localModels, "localModels");
  }

  @Override
  public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
    // The list waits for the cloud by blocking: the pipeline calls this on a virtual thread (mayBlock),
    // where this runs in place; a caller on an event loop gets it on a virtual thread.
    return Blocking.supply(() -> answer(request));
  }

  private GatewayResponse answer(GatewayRequest request) {
    RequestOutcome.of(request).cache(RequestOutcome.CacheStatus.BYPASS); // the model list is never cached
    GatewayResponse list = allowedOnly(request.attribute(RequestAttributes.CALLER), list(request));
    ModelQuery query = request.attribute(ModelQuery.KEY);
    if (query == null || !query.single() || !list.isSuccessful() || list.isStream()) {
      return list;
    }
    JsonNode tree = list.json();
    if (tree != null) {
      for (JsonNode model : tree.path("data")) {
        if (query.id().equals(Json.text(model, "id"))) {
          return GatewayResponse.buffered(200, list.headers(), Json.toBytes(model))
              .withHeader("content-type", GatewayResponse.JSON);
        }
      }
    }
    return ErrorMapper.toResponse(query.notFound());
  }

  private GatewayResponse list(GatewayRequest request) {
    for (CloudRoute route : routes) {
      Breaker.State state = route.breaker().state();
      if (!route.serves(request) || state == Breaker.State.OPEN || state == Breaker.State.FORCED_OPEN) {
        continue;
      }
      Attempt attempt;
      try {
        attempt = calls.call(route.backend(), request);
      } catch (GatewayException full) {
        break; // the waiting area is full: the model list does not need the cloud, the local map answers
      }
      if (!attempt.verdict().outcome().failsOver()) {
        return fromRoute(request, route, attempt);
      }
    }
    RequestOutcome.of(request).servedBy(BackendKind.LOCAL);
    return localModels.response();
  }

  /** The answer of a route that did not answer at capacity or fail to be reached: its list, or its error. */
  private static GatewayResponse fromRoute(GatewayRequest request, CloudRoute route, Attempt attempt) {
    Backend cloud = route.backend();
    GatewayResponse response = attempt.response() != null ? attempt.response() : ErrorMapper.toResponse(attempt.failure());
    Verdict verdict = attempt.verdict();
    RequestOutcome outcome = RequestOutcome.of(request);
    outcome.servedBy(cloud.kind());
    outcome.route(route.name());
    int status = response.status();
    if ((status == 429 || status == 503) && !response.headers().contains("retry-after")) {
      Duration wait = verdict.retryAfter() != null ? verdict.retryAfter() : route.breaker().retryAfter(null);
      response = response.withHeader("retry-after", Long.toString(ErrorMapper.retryAfterSeconds(wait)));
    }
    return response;
  }

  /** A successful listing with only the entries the caller's key may use; anything else as it is. */
  private static GatewayResponse allowedOnly(Caller caller, GatewayResponse listing) {
    if (caller == null || caller.models().isEmpty() || !listing.isSuccessful() || listing.isStream()) {
      return listing;
    }
    JsonNode tree = listing.json();
    if (tree == null || !tree.path("data").isArray()) {
      return listing;
    }
    ObjectNode filtered = ((ObjectNode) tree).deepCopy();
    ArrayNode data = filtered.putArray("data");
    for (JsonNode model : tree.path("data")) {
      if (caller.allows(Json.text(model, "id"))) {
        data.add(model);
      }
    }
    return listing.withBody(Json.toBytes(filtered));
  }
}
