package io.spillway.core.responses;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import java.util.concurrent.CompletionStage;

/**
 * The endpoints of stored state: {@code /v1/responses/{id}} ({@code GET}, {@code DELETE}),
 * {@code /v1/responses/{id}/input_items}, what else lies under {@code /v1/responses/}, and the
 * Conversations API ({@code /v1/conversations}…), served by a pipeline of their own (observe,
 * {@link #QUERY_STAGE}, authentication, rate limits, and {@link StoredResponsesService}). Register
 * it for {@link #RESPONSES_PREFIX}, {@link #CONVERSATIONS} and {@link #CONVERSATIONS_PREFIX}.
 */
public final class StoredResponsesEndpoint implements HttpService {
  public static final String RESPONSES_PREFIX = StoredQuery.RESPONSES;
  public static final String CONVERSATIONS = StoredQuery.CONVERSATIONS;
  public static final String CONVERSATIONS_PREFIX = StoredQuery.CONVERSATIONS + "/";

  /**
   * The first stage after the observer: refuses an id no store could hold (empty, over-long,
   * control characters) with the 404 OpenAI gives an unknown one, and marks the request read.
   */
  public static final Interceptor QUERY_STAGE = new Interceptor() {
    @Override
    public CompletionStage<GatewayResponse> intercept(Chain chain) {
      GatewayRequest request = chain.request();
      StoredQuery query = request.attribute(StoredQuery.KEY);
      if (query == null) {
        throw new IllegalStateException("a stored-state request without its StoredQuery");
      }
      String id = query.id();
      if (query.kind() != StoredQuery.Kind.PASS_THROUGH
          && (id.isEmpty() || id.length() > 256 || id.chars().anyMatch(c -> c < 0x21 || c == 0x7f))) {
        throw StoredResponsesService.notFound(id);
      }
      request.setAttribute(RequestAttributes.PARSED, request);
      return chain.proceed(request);
    }

    @Override
    public boolean mayBlock() {
      return false;
    }

    @Override
    public String toString() {
      return "StoredQueryStage";
    }
  };

  private final Pipeline pipeline;

  public StoredResponsesEndpoint(Pipeline pipeline) {
    this.pipeline = pipeline;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return Blocking.await(serveAsync(request));
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    if (request.path().length() > 1024) {
      throw new GatewayException(ErrorKind.NOT_FOUND, "Unknown path.", null, ErrorKind.NOT_FOUND.code(), null, null);
    }
    byte[] body = request.body() == null || request.body().length == 0 ? null : request.body();
    StoredQuery query = StoredQuery.of(request.method(), request.path(), request.query(), body);
    GatewayRequest received =
        GatewayRequest.received(request.requestId(), Route.RESPONSES, request.headers(), null, request.receivedAt());
    received.setAttribute(StoredQuery.KEY, query);
    received.setAttribute(RequestAttributes.CLIENT_DISCONNECT, request.disconnect());
    received.setAttribute(RequestAttributes.CONNECTION_LOOP, request.loop());
    return pipeline.executeAsync(received);
  }
}
