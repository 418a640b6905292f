package io.spillway.core.api;

import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import java.util.concurrent.CompletionStage;

/**
 * {@code GET /v1/models} and {@code GET /v1/models/{id}}: the model list, served by a pipeline of its
 * own (observe, {@link ModelQueryInterceptor}, authentication, rate limits, and the model list's terminal),
 * apart from the model calls' pipeline. Register it for both the path and {@link #PREFIX}.
 */
public final class ModelsEndpoint implements HttpService {
  public static final String PREFIX = Route.MODELS.path() + "/";

  private final Pipeline pipeline;

  public ModelsEndpoint(Pipeline pipeline) {
    this.pipeline = pipeline;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return Blocking.await(serveAsync(request));
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    String path = request.path();
    String id = path.startsWith(PREFIX) ? path.substring(PREFIX.length()) : null;
    GatewayRequest received =
        GatewayRequest.received(request.requestId(), Route.MODELS, request.headers(), null, request.receivedAt());
    received.setAttribute(ModelQuery.KEY, new ModelQuery(request.method(), id));
    received.setAttribute(RequestAttributes.CLIENT_DISCONNECT, request.disconnect());
    received.setAttribute(RequestAttributes.CONNECTION_LOOP, request.loop());
    return pipeline.executeAsync(received);
  }
}
