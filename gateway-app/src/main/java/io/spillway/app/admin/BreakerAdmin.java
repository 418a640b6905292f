package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.routing.breaker.Breaker;

/**
 * {@code GET /admin/breaker} (the breaker's snapshot) and {@code POST /admin/breaker} with
 * {@code {"state":"open"|"closed"|"auto"}}: force traffic local, force it to the cloud, or hand the
 * decision back to the breaker. Answers with the snapshot after the change.
 */
public final class BreakerAdmin {
  private BreakerAdmin() {}

  public static void register(AdminApi.Builder admin, Breaker breaker, AuditLog audit) {
    admin.get("/admin/breaker", request -> AdminApi.ok(breaker.snapshot()));
    admin.post("/admin/breaker", request -> {
      JsonNode body = AdminApi.jsonBody(request);
      Breaker.OverrideMode override = Breaker.OverrideMode.parse(Json.text(body, "state"));
      if (override == null) {
        throw GatewayException.invalid(
            "'state' must be \"open\" (all traffic local), \"closed\" (all traffic to the cloud) or \"auto\"",
            "state");
      }
      breaker.override(override);
      audit.record(request, "breaker.override", line -> line.put("state", Json.text(body, "state")));
      return AdminApi.ok(breaker.snapshot());
    });
  }
}
