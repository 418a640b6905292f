package io.spillway.core.api;

import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import java.util.concurrent.CompletionStage;

/**
 * Serves one OpenAI model-call route: hands the request as received to the pipeline, whose
 * {@link ParseInterceptor} reads the body.
 * A streamed answer leaves here speaking its API, so it frames its own failure (see
 * {@link io.spillway.core.sse.EventStream#errorEvents}).
 */
public final class OpenAiEndpoint implements HttpService {
  private final Route route;
  private final Pipeline pipeline;

  public OpenAiEndpoint(Route route, Pipeline pipeline) {
    if (!route.hasBody()) {
      throw new IllegalArgumentException(route + " is not a model call; the model list has its own service");
    }
    if (route.api() != Route.Api.OPENAI) {
      throw new IllegalArgumentException(route + " is Anthropic's API: serve it with MessagesEndpoint");
    }
    this.route = route;
    this.pipeline = pipeline;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return Blocking.await(serveAsync(request));
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    GatewayRequest received = ReceivedRequests.from(route, request);
    CompletionStage<GatewayResponse> answer = pipeline.executeAsync(received);
    if (route != Route.RESPONSES) {
      return answer;
    }
    return answer.thenApply(response ->
        response.isStream() ? response.withStream(new ResponsesEventStream(response.stream())) : response);
  }
}
