package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.routing.breaker.Breaker;
import java.util.List;

/**
 * {@code GET /admin/breaker} and {@code POST /admin/breaker} with {@code {"state":"open"|"closed"|"auto"}}:
 * force traffic past a cloud route, force it to the route, or hand the decision back to its breaker.
 *
 * <p>Each cloud route has its own breaker. The answer is the first route's snapshot (the one-route
 * shape, unchanged) with a {@code routes} array holding every route's snapshot, in route order. A
 * {@code POST} without {@code "route"} applies to every route; with {@code "route":"<name>"} to that
 * one (an unknown name is a 400). Answers with the snapshot after the change.
 */
public final class BreakerAdmin {
  private BreakerAdmin() {}

  public static void register(AdminApi.Builder admin, List<Breaker> breakers, AuditLog audit) {
    admin.get("/admin/breaker", request -> AdminApi.ok(snapshot(breakers)));
    admin.post("/admin/breaker", request -> {
      JsonNode body = AdminApi.jsonBody(request);
      Breaker.OverrideMode override = Breaker.OverrideMode.parse(Json.text(body, "state"));
      if (override == null) {
        throw GatewayException.invalid(
            "'state' must be \"open\" (all traffic local), \"closed\" (all traffic to the cloud) or \"auto\"",
            "state");
      }
      String route = Json.text(body, "route");
      List<Breaker> targets = route == null ? breakers
          : breakers.stream().filter(b -> b.route().equals(route)).toList();
      if (targets.isEmpty()) {
        throw GatewayException.invalid("'route' must name a cloud route (one of "
            + String.join(", ", breakers.stream().map(Breaker::route).toList()) + ") or be left out for all", "route");
      }
      targets.forEach(breaker -> breaker.override(override));
      audit.record(request, "breaker.override", line -> {
        line.put("state", Json.text(body, "state"));
        line.put("route", route == null ? "*" : route);
      });
      return AdminApi.ok(snapshot(breakers));
    });
  }

  /** The first route's snapshot with {@code routes}: every route's, in order. */
  public static ObjectNode snapshot(List<Breaker> breakers) {
    ObjectNode first = breakers.get(0).status().toJson();
    ArrayNode routes = first.putArray("routes");
    for (int i = 0; i < breakers.size(); i++) {
      routes.add(i == 0 ? first.deepCopy().without("routes") : breakers.get(i).status().toJson());
    }
    return first;
  }
}
