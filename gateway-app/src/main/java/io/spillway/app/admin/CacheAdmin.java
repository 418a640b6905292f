package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.cache.ResponseCache;
import io.spillway.core.json.Json;

/**
 * {@code GET /admin/cache} (entries, bytes, calls in flight, counts, tokens saved per team) and
 * {@code POST /admin/cache/invalidate} with {@code {"team": "<name>"}} for one team or {@code {}}
 * for everything.
 */
public final class CacheAdmin {
  private CacheAdmin() {}

  public static void register(AdminApi.Builder admin, ResponseCache cache, AuditLog audit) {
    admin.get("/admin/cache", request -> AdminApi.ok(Json.MAPPER.valueToTree(cache.stats())));
    admin.post("/admin/cache/invalidate", request -> {
      JsonNode body = request.body().length == 0 ? Json.object() : AdminApi.jsonBody(request);
      String team = Json.text(body, "team");
      if (team != null) {
        cache.invalidateTeam(team);
      } else {
        cache.invalidateAll();
      }
      audit.record(request, "cache.purge", line -> line.put("team", team == null ? "*" : team));
      ObjectNode answer = Json.object();
      answer.put("invalidated", team != null ? "team" : "all");
      if (team != null) {
        answer.put("team", team);
      }
      return AdminApi.ok(answer);
    });
  }
}
