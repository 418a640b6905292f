package io.spillway.routing.cloud;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.ForwardingBackend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Sends a request with its model renamed through a route's {@code models} map (requested model →
 * the upstream's model or Azure deployment); a model without an entry goes as requested. The
 * client's request is not changed: the upstream gets a copy.
 */
final class ModelMappingBackend extends ForwardingBackend {
  private final Map<String, String> models;

  ModelMappingBackend(Backend upstream, Map<String, String> models) {
    super(upstream);
    this.models = Map.copyOf(models);
  }

  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    String requested = request.model();
    String mapped = requested == null ? null : models.get(requested);
    if (mapped == null || mapped.equals(requested)) {
      return delegateCall(request);
    }
    ObjectNode body = request.body().deepCopy();
    body.put("model", mapped);
    return delegateCall(request.withBody(body));
  }

  @Override
  public String toString() {
    return "ModelMapping(" + delegate + ")";
  }
}
