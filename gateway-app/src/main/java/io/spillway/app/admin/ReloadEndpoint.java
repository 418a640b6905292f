package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;

/**
 * {@code POST /admin/reload}: re-reads the config file. 200 {@code {"ok":true, "restartNeeded":[...]}}
 * when it was applied; 400 {@code {"ok":false, "error":"<file>: key '...': why"}} when the new file
 * was rejected and the running config stays.
 */
public final class ReloadEndpoint implements HttpService {
  private final ConfigReloader reloader;
  private final AuditLog audit;

  public ReloadEndpoint(ConfigReloader reloader, AuditLog audit) {
    this.reloader = reloader;
    this.audit = audit;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    ConfigReloader.Result result = reloader.reload();
    ObjectNode body = Json.object();
    body.put("ok", result.ok());
    if (result.error() != null) {
      body.put("error", result.error());
    }
    result.restartNeeded().forEach(body.putArray("restartNeeded")::add);
    if (!result.failed().isEmpty()) {
      result.failed().forEach(body.putArray("failed")::add);
    }
    boolean applied = result.ok() || !result.failed().isEmpty();
    audit.record(request, "config.reload", line -> line.put("ok", result.ok()).put("applied", applied));
    return GatewayResponse.json(result.ok() ? 200 : applied ? 500 : 400, Json.toBytes(body));
  }
}
