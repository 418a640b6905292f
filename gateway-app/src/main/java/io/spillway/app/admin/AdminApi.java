package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.server.HttpRoutes;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code /admin/*}: JSON endpoints behind the admin token ({@code Authorization: Bearer}),
 * compared in constant time. With no {@code admin.token} configured the whole API answers 404, as if
 * it did not exist. Endpoints are registered by the feature that owns them. A reloaded
 * {@code admin.token} applies to the next request (set, changed, or removed).
 */
public final class AdminApi implements HttpService, Reloadable {
  private volatile byte[] token;
  private final HttpRoutes routes;
  private final List<String> paths;

  private AdminApi(byte[] token, HttpRoutes routes, List<String> paths) {
    this.token = token;
    this.routes = routes;
    this.paths = List.copyOf(paths);
  }

  /** Whether {@code admin.token} is set, so that the API (and the dashboard) answer. */
  public boolean enabled() {
    return token != null;
  }

  @Override
  public void reload(GatewayConfig next) {
    String newToken = next.admin().token();
    token = newToken == null ? null : newToken.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "admin API";
  }

  /** The registered paths, in registration order (for the status page: what this gateway offers). */
  public List<String> paths() {
    return paths;
  }

  public static Builder builder(String token) {
    return new Builder(token);
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    byte[] token = this.token;
    if (token == null) {
      throw ErrorKind.NOT_FOUND.exception(
          "The admin API is off: set admin.token in the config to turn it on");
    }
    if (!authorized(request.headers().get("authorization"), token)) {
      throw ErrorKind.INVALID_API_KEY.exception(
          "The admin API needs 'Authorization: Bearer <admin.token>'").withCode("invalid_admin_token");
    }
    return routes.serve(request);
  }

  private static boolean authorized(String authorization, byte[] token) {
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return false;
    }
    byte[] presented = authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8);
    return MessageDigest.isEqual(sha256(presented), sha256(token));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** A 200 JSON answer. */
  public static GatewayResponse ok(JsonNode body) {
    return GatewayResponse.json(200, Json.toBytes(body));
  }

  /** The request body as a JSON object, or a 400. */
  public static JsonNode jsonBody(ServerRequest request) {
    try {
      JsonNode node = Json.parse(request.body());
      if (node == null || !node.isObject()) {
        throw GatewayException.invalid("The body must be a JSON object", null);
      }
      return node;
    } catch (java.io.IOException e) {
      throw GatewayException.invalid("The body is not valid JSON", null);
    }
  }

  public static final class Builder {
    private final String token;
    private final HttpRoutes.Builder routes = HttpRoutes.builder();
    private final Set<String> paths = new LinkedHashSet<>();

    private Builder(String token) {
      this.token = token;
    }

    public Builder get(String path, HttpService service) {
      routes.get(path, service);
      paths.add(path);
      return this;
    }

    public Builder post(String path, HttpService service) {
      routes.post(path, service);
      paths.add(path);
      return this;
    }

    public Builder delete(String path, HttpService service) {
      routes.route("DELETE", path, service);
      paths.add(path);
      return this;
    }

    /** Everything below {@code prefix} (ending in '/'), whatever the method; the service dispatches. */
    public Builder prefix(String prefix, String shownAs, HttpService service) {
      routes.prefix(prefix, service);
      paths.add(shownAs);
      return this;
    }

    public AdminApi build() {
      return new AdminApi(token == null ? null : token.getBytes(StandardCharsets.UTF_8), routes.build(),
          List.copyOf(paths));
    }
  }
}
