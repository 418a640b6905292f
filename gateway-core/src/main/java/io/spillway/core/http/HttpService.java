package io.spillway.core.http;

import io.spillway.core.pipeline.GatewayResponse;

/**
 * What the front end serves. Called on a virtual thread per request, so it may block. A thrown
 * {@link io.spillway.core.error.GatewayException} becomes an OpenAI error response; anything else
 * becomes a 500 and is logged.
 */
@FunctionalInterface
public interface HttpService {
  GatewayResponse serve(ServerRequest request);
}
