package io.spillway.app.admin;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.BooleanSupplier;
import io.spillway.server.HttpRoutes;

/**
 * {@code GET /dashboard}: one self-contained HTML page (inline CSS and JavaScript, no external
 * resource) that reads the admin API with the admin token the operator types in once, or passes as
 * {@code /dashboard#token=...}. The page itself holds no data and no secret; a strict
 * Content-Security-Policy keeps it from loading or sending anything outside this gateway.
 *
 * <p>What the page shows and how it reads each figure is described in docs/dashboard.md.
 */
public final class Dashboard implements HttpService {
  static final String RESOURCE = "/io/spillway/app/admin/dashboard.html";
  private static final String CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
      + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  private final byte[] page;

  public Dashboard() {
    try (InputStream in = Dashboard.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing classpath resource " + RESOURCE);
      }
      page = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Registers {@code GET /dashboard} and {@code GET /dashboard/runbook} ({@link RunbookPage}); both
   * answer 404 while {@code adminOn} says the admin API is off (no {@code admin.token}).
   */
  public static void register(HttpRoutes.Builder routes, BooleanSupplier adminOn) {
    Dashboard dashboard = new Dashboard();
    RunbookPage runbook = new RunbookPage();
    routes.get("/dashboard", request -> {
      requireOn(adminOn);
      return dashboard.serve(request);
    });
    routes.get("/dashboard/runbook", request -> {
      requireOn(adminOn);
      return runbook.serve(request);
    });
  }

  private static void requireOn(BooleanSupplier adminOn) {
    if (!adminOn.getAsBoolean()) {
      throw ErrorKind.NOT_FOUND.exception("The dashboard is off: set admin.token in the config to turn it on");
    }
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return GatewayResponse.buffered(200, Headers.of(
        "content-type", "text/html; charset=utf-8",
        "cache-control", "no-store",
        "content-security-policy", CSP,
        "x-frame-options", "DENY",
        "x-content-type-options", "nosniff",
        "referrer-policy", "no-referrer"), page);
  }
}
