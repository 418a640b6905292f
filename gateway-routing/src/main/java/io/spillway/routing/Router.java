package io.spillway.routing;

import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Terminal;

/**
 * The terminal stage: picks the backend for a request and calls it. Every response carries
 * {@code x-spillway-backend}.
 */
public final class Router implements Terminal {
  private final Backend cloud;

  public Router(Backend cloud) {
    this.cloud = cloud;
  }

  @Override
  public GatewayResponse handle(GatewayRequest request) {
    request.setAttribute(RequestAttributes.BACKEND, cloud.name());
    return cloud.call(request).withHeader("x-spillway-backend", cloud.name());
  }
}
