package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * {@code GET /admin/status}: every {@link StatusRegistry} section under its name, e.g.
 * {@code {"breaker":{"state":"open","since":...}}}. A section that fails to render shows its error
 * instead of failing the whole page.
 */
public final class StatusEndpoint {
  private StatusEndpoint() {}

  public static void register(AdminApi.Builder admin, StatusRegistry status) {
    admin.get("/admin/status", request -> AdminApi.ok(render(status)));
  }

  static ObjectNode render(StatusRegistry status) {
    ObjectNode json = Json.object();
    for (Map.Entry<String, Supplier<JsonNode>> section : new TreeMap<>(status.sections()).entrySet()) {
      try {
        json.set(section.getKey(), section.getValue().get());
      } catch (RuntimeException e) {
        json.putObject(section.getKey()).put("error", e.toString());
      }
    }
    return json;
  }
}
