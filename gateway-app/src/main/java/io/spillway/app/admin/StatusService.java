package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.server.HttpService;
import io.spillway.core.server.ServerRequest;

/** {@code GET /admin/status}: every registered section's current snapshot, by name. */
public final class StatusService implements HttpService {
  private final StatusRegistry registry;

  public StatusService(StatusRegistry registry) {
    this.registry = registry;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    ObjectNode out = Json.object();
    registry.sections().entrySet().stream()
        .sorted(java.util.Map.Entry.comparingByKey())
        .forEach(section -> out.set(section.getKey(), section.getValue().get()));
    return AdminApi.ok(out);
  }
}
