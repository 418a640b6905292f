package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.redact.Redactor;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The response store's stage, for {@code POST /v1/responses} past authentication. On the way in it
 * reads from the store what the request refers to ({@code previous_response_id} and the chain before
 * it, {@code item_reference} items) into a {@link StoredState} on the request, for the backends to
 * expand from. A reference to what another team stored is answered as OpenAI answers an unknown id
 * (400), and never passed on. On the way out it keeps the exchange ({@code store} true, the API's
 * default) under the caller's team, whichever backend served it ({@link StoredState#ORIGIN}):
 * a buffered answer at once, a stream at its {@code response.completed}.
 *
 * <p>It may block when the store does (Redis); with the embedded store it runs in place.
 */
public final class ResponseStateInterceptor implements Interceptor {
  private final ResponseStore store;
  private final int maxChain;
  private final Clock clock;
  private final Redactor redactor;

  /**
   * @param maxChain the most responses of a conversation expanded ({@code responses.maxChain})
   * @param redactor removes the gateway's own secrets from what is stored, as from every answer
   */
  public ResponseStateInterceptor(ResponseStore store, int maxChain, Clock clock, Redactor redactor) {
    this.store = store;
    this.maxChain = maxChain;
    this.clock = clock;
    this.redactor = redactor;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Caller caller = request.attribute(RequestAttributes.CALLER);
    if (request.route() != Route.RESPONSES || caller == null) {
      return chain.proceed(request);
    }
    ObjectNode body = request.body();
    StoredState state = load(caller.team(), body);
    request.setAttribute(StoredState.KEY, state);
    if (!ResponseRecorder.wantsStore(body)) {
      return chain.proceed(request);
    }
    ResponseRecorder recorder = new ResponseRecorder(store, caller.team(), body, state, request.id(), clock, redactor);
    return chain.proceed(request).thenApply(response -> recorded(request, response, recorder));
  }

  private GatewayResponse recorded(GatewayRequest request, GatewayResponse response, ResponseRecorder recorder) {
    if (!response.isSuccessful()) {
      return response;
    }
    String origin = request.attribute(StoredState.ORIGIN);
    if (origin == null) {
      return response;
    }
    if (response.isStream()) {
      return response.withStream(new RecordingEventStream(response.stream(),
          answered -> recorder.record(answered, origin), store.blocks()));
    }
    recorder.record(response.json(), origin);
    return response;
  }

  /** What the request refers to, as far as the caller's team holds it. */
  private StoredState load(String team, ObjectNode body) {
    String previousId = Json.text(body, "previous_response_id");
    if (previousId != null && previousId.isEmpty()) {
      previousId = null;
    }
    List<StoredResponse> chain = new ArrayList<>();
    if (previousId != null) {
      StoredResponse previous = store.get(team, previousId);
      if (previous == null) {
        if (store.heldByAnotherTeam(team, previousId)) {
          throw StoredState.previousNotFound(previousId);
        }
      } else {
        List<String> before = previous.chain();
        if (before.size() >= maxChain) {
          before = before.subList(before.size() - (maxChain - 1), before.size());
        }
        if (!before.isEmpty()) {
          chain.addAll(store.getAll(team, before));
        }
        chain.add(previous);
      }
    }
    Set<String> referenced = StoredState.referencedItems(body);
    Map<String, StoredState.Held> items = new HashMap<>();
    if (!referenced.isEmpty()) {
      Map<String, StoredResponse> known = new HashMap<>();
      chain.forEach(response -> known.put(response.id(), response));
      Map<String, String> owners = store.responsesOfItems(team, referenced);
      Set<String> missing = new LinkedHashSet<>(owners.values());
      missing.removeAll(known.keySet());
      if (!missing.isEmpty()) {
        store.getAll(team, List.copyOf(missing)).forEach(response -> known.put(response.id(), response));
      }
      for (String itemId : referenced) {
        StoredResponse holder = known.get(owners.get(itemId));
        JsonNode item = holder == null ? null : holder.item(itemId);
        if (item != null) {
          items.put(itemId, new StoredState.Held(item, holder.origin()));
        } else if (store.heldByAnotherTeam(team, itemId)) {
          throw StoredState.itemNotFound(itemId, "input");
        }
      }
    }
    return new StoredState(previousId, chain, items);
  }

  @Override
  public boolean mayBlock() {
    return store.blocks();
  }

  @Override
  public String toString() {
    return "ResponseStateInterceptor";
  }
}
