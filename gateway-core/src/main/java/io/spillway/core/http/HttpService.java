package io.spillway.core.http;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.concurrent.CompletionStage;

/**
 * What the front end serves. The front end calls {@link #serveAsync} on the connection's event loop;
 * a service that blocks implements only {@link #serve}, which then runs on a virtual thread, and a
 * service that does not block (the model calls' pipeline) answers from {@link #serveAsync} directly.
 * A {@link io.spillway.core.error.GatewayException}, thrown or failing the stage, becomes an OpenAI
 * error response; anything else becomes a 500 and is logged.
 */
@FunctionalInterface
public interface HttpService {
  /** The answer, blocking the calling (virtual) thread as long as it takes. */
  GatewayResponse serve(ServerRequest request);

  /** The answer without blocking the caller: by default {@link #serve} where blocking is allowed. */
  default CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    return Blocking.supply(() -> serve(request));
  }
}
