package io.spillway.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;

/**
 * {@code GET /v1/models/{id}}: one entry of the model list, in OpenAI's shape ({@code id},
 * {@code object: "model"}, {@code created}, {@code owned_by}), or 404 {@code model_not_found}.
 *
 * <p>It runs the request through the pipeline as a model listing (so it is authenticated and
 * served by whichever backend answers {@code /v1/models} now: the cloud, or the local model map while
 * traffic is local) and picks the entry out of the list. A failed listing reaches the client as it is.
 */
public final class ModelEndpoint implements HttpService {
  public static final String PREFIX = Route.MODELS.path() + "/";

  private final Pipeline pipeline;

  public ModelEndpoint(Pipeline pipeline) {
    this.pipeline = pipeline;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    if (!"GET".equals(request.method()) && !"HEAD".equals(request.method())) {
      throw ErrorKind.METHOD_NOT_ALLOWED.exception("Method " + request.method() + " is not allowed on "
          + PREFIX + "{model} (allowed: GET)");
    }
    String id = request.path().substring(PREFIX.length());
    if (id.isEmpty() || id.length() > 256 || id.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw notFound(id.isEmpty() ? "" : printable(id));
    }
    GatewayRequest listing = GatewayRequest.create(
        request.requestId(), Route.MODELS, request.headers(), Json.object(), null, request.receivedAt());
    GatewayResponse list = pipeline.execute(listing);
    if (!list.isSuccessful() || list.isStream()) {
      return list;
    }
    JsonNode tree = list.json();
    if (tree != null) {
      for (JsonNode model : tree.path("data")) {
        if (id.equals(Json.text(model, "id"))) {
          return GatewayResponse.buffered(200, list.headers(), Json.toBytes(model)).withHeader("content-type",
              GatewayResponse.JSON);
        }
      }
    }
    GatewayResponse missing = ErrorMapper.toResponse(notFound(printable(id)));
    String backend = list.headers().get("x-spillway-backend");
    return backend == null ? missing : missing.withHeader("x-spillway-backend", backend);
  }

  private static GatewayException notFound(String id) {
    return ErrorKind.MODEL_NOT_FOUND.exception(
        "The model '" + id + "' does not exist or you do not have access to it.", "model");
  }

  private static String printable(String value) {
    StringBuilder out = new StringBuilder();
    value.chars().limit(100).forEach(c -> out.append(c >= 0x20 && c < 0x7f ? (char) c : '?'));
    return out.toString();
  }
}
