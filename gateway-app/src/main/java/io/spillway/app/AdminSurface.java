package io.spillway.app;

import io.spillway.app.admin.AdminApi;
import io.spillway.app.admin.AuditLog;
import io.spillway.app.admin.BreakerAdmin;
import io.spillway.app.admin.CacheAdmin;
import io.spillway.app.admin.KeysEndpoint;
import io.spillway.app.admin.ReloadEndpoint;
import io.spillway.app.admin.StatusEndpoint;
import io.spillway.app.reload.ConfigReloader;
import io.spillway.config.Durations;
import io.spillway.core.json.Json;
import java.time.Duration;

/**
 * The admin surface ({@code /admin/...} and {@code /dashboard}, on with {@code admin.token}): status,
 * keys, series, reload, quota, the breakers and the cache, each change recorded in the audit log.
 */
final class AdminSurface {
  final AuditLog audit;
  final AdminApi api;

  AdminSurface(Foundation base, Backends backends, ModelPipeline models) {
    ConfigReloader reloader = base.reloader;
    Duration capacityWindow = base.config.metrics().capacityWindow();
    base.status.register("traffic", () -> Json.object()
        .put("requests", base.metrics.series().totalRequests())
        .put("capacityRate", base.metrics.series().capacityRate(capacityWindow))
        .put("capacityWindow", Durations.format(capacityWindow)));
    AdminApi.Builder admin = AdminApi.builder(base.config.admin().token());
    this.audit = new AuditLog(base.config.admin().token(), base.clock);
    reloader.register(audit, "admin.token");
    admin.get("/admin/status", new StatusEndpoint(base.clock, backends::all, base.status));
    // Read at each rotation, so a reloaded admin.rotationOverlap is the one rotations use.
    new KeysEndpoint(base.keys, base.apiKeys, audit, base.clock, () -> reloader.current().admin().rotationOverlap(),
        models.quota::calendar, base.accessLog::logId).register(admin);
    reloader.register("rotation overlap", next -> { }, "admin.rotationOverlap");
    admin.get("/admin/series", request -> AdminApi.ok(base.metrics.series().toJson()));
    admin.post("/admin/reload", new ReloadEndpoint(reloader, audit));
    admin.get("/admin/quota", request -> AdminApi.ok(models.quotaReport()));
    BreakerAdmin.register(admin, backends.breakers, audit);
    CacheAdmin.register(admin, backends.cache, audit);
    this.api = admin.build();
    reloader.register(api, "admin.token"); // admin.keySyncInterval: at start-up only
    base.status.register("admin", () -> {
      var endpoints = Json.object().putArray("endpoints");
      api.paths().forEach(endpoints::add);
      return Json.object().set("endpoints", endpoints);
    });
  }
}
