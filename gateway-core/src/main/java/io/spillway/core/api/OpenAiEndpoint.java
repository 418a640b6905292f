package io.spillway.core.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;

/**
 * Serves one OpenAI route: parses the body once and runs the request through the pipeline. A
 * streamed answer leaves here speaking its API, so it frames its own failure (see
 * {@link io.spillway.core.sse.EventStream#errorEvents}).
 */
public final class OpenAiEndpoint implements HttpService {
  private final Route route;
  private final Pipeline pipeline;

  public OpenAiEndpoint(Route route, Pipeline pipeline) {
    this.route = route;
    this.pipeline = pipeline;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    ObjectNode body;
    byte[] raw;
    if (route == Route.MODELS) {
      body = Json.object();
      raw = null;
    } else {
      body = RequestParser.parse(route, request.headers().get("content-type"), request.body());
      raw = request.body();
    }
    GatewayRequest gatewayRequest =
        GatewayRequest.create(request.requestId(), route, request.headers(), body, raw, request.receivedAt());
    gatewayRequest.setAttribute(RequestAttributes.CLIENT_DISCONNECT, request.disconnect());
    GatewayResponse response = pipeline.execute(gatewayRequest);
    if (route == Route.RESPONSES && response.isStream()) {
      return response.withStream(new ResponsesEventStream(response.stream()));
    }
    return response;
  }
}
