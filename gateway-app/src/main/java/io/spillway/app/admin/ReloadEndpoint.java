package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;

/**
 * {@code POST /admin/reload}: re-reads the config file. 200 {@code {"ok":true, "changed":[...],
 * "restartNeeded":[...]}} when it was applied; 400 {@code {"ok":false, "error":"<file>: key '...': why"}} when the new file
 * was rejected and the running config stays. Either way one audit line says who asked (the admin
 * token it was made with, even when the reload replaces that token) and what changed.
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
    String who = audit.who(); // the token this request was let in with, even if the reload changes it
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
    result.changed().forEach(body.putArray("changed")::add);
    boolean applied = result.ok() || !result.failed().isEmpty();
    audit.record(who, request.remoteAddress(), request.requestId(), "config.reload",
        line -> describe(line, result));
    return GatewayResponse.json(result.ok() ? 200 : applied ? 500 : 400, Json.toBytes(body));
  }

  /**
   * A reload's audit fields: whether it was applied, what changed (dotted config keys, never
   * values), what needs a restart, and why it was refused.
   */
  public static void describe(ObjectNode line, ConfigReloader.Result result) {
    boolean applied = result.ok() || !result.failed().isEmpty();
    line.put("ok", result.ok()).put("applied", applied);
    result.changed().forEach(line.putArray("changed")::add);
    if (!result.restartNeeded().isEmpty()) {
      result.restartNeeded().forEach(line.putArray("restartNeeded")::add);
    }
    if (result.error() != null) {
      line.put("error", result.error());
    }
  }
}
