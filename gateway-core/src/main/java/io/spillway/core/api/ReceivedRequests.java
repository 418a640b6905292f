package io.spillway.core.api;

import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;

/** What every model endpoint does first: the transport's request as the pipeline's, with its connection's facts. */
public final class ReceivedRequests {
  private ReceivedRequests() {}

  /** {@code request} received on {@code route}, carrying its client-disconnect signal and its connection's loop. */
  public static GatewayRequest from(Route route, ServerRequest request) {
    GatewayRequest received =
        GatewayRequest.received(request.requestId(), route, request.headers(), request.body(), request.receivedAt());
    received.setAttribute(RequestAttributes.CLIENT_DISCONNECT, request.disconnect());
    received.setAttribute(RequestAttributes.CONNECTION_LOOP, request.loop());
    return received;
  }
}
