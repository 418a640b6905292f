package io.spillway.core.api.anthropic;

import io.spillway.core.error.ErrorDialect;
import io.spillway.core.error.GatewayException;
import io.spillway.core.api.ReceivedRequests;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import java.util.concurrent.CompletionStage;

/**
 * Serves one route of Anthropic's Messages API ({@code POST /v1/messages}, and
 * {@code /v1/messages/count_tokens} through a pipeline of its own): hands the request as received
 * to the pipeline, as {@link io.spillway.core.api.OpenAiEndpoint} does for OpenAI's routes, so every
 * stage applies to it alike.
 *
 * <p>Inside the pipeline a failure is what it is for every route; at this edge it is written in
 * Anthropic's dialect ({@link ErrorDialect#ANTHROPIC}): a thrown failure through
 * {@link ErrorMapper}, an error answer from a stage or a backend by {@link AnthropicErrors}, and a
 * stream that fails after its first event ends with Anthropic's {@code error} event
 * ({@link MessagesEventStream}). Every answer carries {@code request-id}, the header Anthropic's
 * clients report, with the id of {@code x-request-id}.
 */
public final class MessagesEndpoint implements HttpService {
  /** The header Anthropic's API and SDKs name a request by. */
  public static final String REQUEST_ID = "request-id";

  private final Route route;
  private final Pipeline pipeline;

  public MessagesEndpoint(Route route, Pipeline pipeline) {
    if (route.api() != Route.Api.ANTHROPIC) {
      throw new IllegalArgumentException(route + " is not a route of Anthropic's API");
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
    return pipeline.executeAsync(received).handle((response, thrown) -> {
      if (thrown != null) {
        if (Blocking.cause(thrown) instanceof GatewayException e) {
          response = ErrorMapper.toResponse(e, ErrorDialect.ANTHROPIC);
        } else {
          throw Blocking.rethrow(Blocking.cause(thrown));
        }
      }
      return answer(response, request.requestId());
    });
  }

  private static GatewayResponse answer(GatewayResponse response, String requestId) {
    GatewayResponse answer = response;
    if (answer.isStream()) {
      answer = answer.withStream(new MessagesEventStream(answer.stream()));
    } else if (!answer.isSuccessful()) {
      answer = AnthropicErrors.inAnthropicDialect(answer);
    }
    return answer.withHeader(REQUEST_ID, requestId);
  }
}
