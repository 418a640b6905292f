package io.spillway.server;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A fixed table from method and path to service. Paths match exactly (no percent-decoding, no dot
 * segments), or by a registered prefix, so tricks like {@code /admin/../v1} or {@code /%61dmin}
 * cannot reach a route they do not name. Unknown paths get 404, known paths with another method 405.
 */
public final class HttpRoutes implements HttpService {
  private final Map<String, Map<String, HttpService>> exact;
  private final List<Map.Entry<String, HttpService>> prefixes;

  private HttpRoutes(Builder builder) {
    this.exact = Map.copyOf(builder.exact);
    this.prefixes = List.copyOf(builder.prefixes);
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return serviceFor(request).serve(request);
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    return serviceFor(request).serveAsync(request);
  }

  /** The service of {@code request}'s path and method; 404 or 405 when there is none. */
  private HttpService serviceFor(ServerRequest request) {
    String path = request.path();
    Map<String, HttpService> byMethod = exact.get(path);
    if (byMethod != null) {
      HttpService service = byMethod.get(request.method());
      if (service == null && "HEAD".equals(request.method())) {
        service = byMethod.get("GET");
      }
      if (service == null) {
        throw ErrorKind.METHOD_NOT_ALLOWED.exception(
            "Method " + request.method() + " is not allowed on " + path + " (allowed: "
                + String.join(", ", byMethod.keySet()) + ")");
      }
      return service;
    }
    if (!path.contains("..") && !path.contains("//") && !path.contains("%")) {
      for (Map.Entry<String, HttpService> prefix : prefixes) {
        if (path.startsWith(prefix.getKey())) {
          return prefix.getValue();
        }
      }
    }
    throw ErrorKind.NOT_FOUND.exception(
        "Unknown path " + (path.length() > 200 ? path.substring(0, 200) + "…" : path)
            + ". Spillway serves /v1/chat/completions, /v1/completions, /v1/responses, /v1/embeddings and /v1/models.");
  }

  public static final class Builder {
    private final Map<String, Map<String, HttpService>> exact = new LinkedHashMap<>();
    private final List<Map.Entry<String, HttpService>> prefixes = new ArrayList<>();

    public Builder route(String method, String path, HttpService service) {
      exact.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(method, service);
      return this;
    }

    public Builder get(String path, HttpService service) {
      return route("GET", path, service);
    }

    public Builder post(String path, HttpService service) {
      return route("POST", path, service);
    }

    /** Everything under {@code prefix} (which must end in '/') that no exact route names. */
    public Builder prefix(String prefix, HttpService service) {
      if (!prefix.endsWith("/")) {
        throw new IllegalArgumentException("prefix must end in '/'");
      }
      prefixes.add(Map.entry(prefix, service));
      return this;
    }

    public HttpRoutes build() {
      return new HttpRoutes(this);
    }
  }
}
