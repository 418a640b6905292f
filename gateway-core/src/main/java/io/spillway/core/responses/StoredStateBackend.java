package io.spillway.core.responses;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.ForwardingBackend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A backend as the response store sees it: before a Responses request goes out, expands the stored
 * state it refers to as this backend needs ({@link StoredState#expandFor}: everything for the local
 * backend, only what a cloud route did not issue itself for that route), and notes on the request
 * which backend the attempt went to ({@link StoredState#ORIGIN}), so the answer is stored under it.
 * For the local backend it also sets the {@link ResponseEcho} its answer carries. Requests without
 * a {@link StoredState} (other routes, or the store off) pass untouched. Adds no I/O: the state was
 * read by {@link ResponseStateInterceptor}.
 */
public final class StoredStateBackend extends ForwardingBackend {
  /** The answer header that names what was left out, as the local backend's. */
  static final String DROPPED_HEADER = "x-spillway-dropped-params";

  private final String origin;
  private final boolean local;

  private StoredStateBackend(Backend delegate, String origin, boolean local) {
    super(delegate);
    this.origin = origin;
    this.local = local;
  }

  /** The cloud route {@code name}'s backend. */
  public static Backend cloud(String name, Backend delegate) {
    return new StoredStateBackend(delegate, name, false);
  }

  /** The local backend (every local server: any of them continues what another served). */
  public static Backend local(Backend delegate) {
    return new StoredStateBackend(delegate, StoredState.LOCAL, true);
  }

  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    StoredState state = request.attribute(StoredState.KEY);
    if (state == null || request.route() != Route.RESPONSES) {
      return delegateCall(request);
    }
    List<String> dropped = new ArrayList<>();
    ObjectNode body;
    try {
      body = state.expandFor(request.body(), origin, local, dropped);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    request.setAttribute(StoredState.ORIGIN, origin);
    if (local) {
      request.setAttribute(ResponseEcho.KEY,
          new ResponseEcho(state.previousId(), ResponseRecorder.wantsStore(request.body())));
    }
    GatewayRequest outgoing = body == request.body() ? request : request.withBody(body);
    CompletionStage<GatewayResponse> answer = delegateCall(outgoing);
    if (dropped.isEmpty()) {
      return answer;
    }
    RequestOutcome.of(request).dropped(dropped);
    String list = String.join(",", dropped);
    return answer.thenApply(response -> response.withHeader(DROPPED_HEADER, list));
  }
}
