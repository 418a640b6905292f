package io.spillway.core.api;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Attribute;

/**
 * What a {@code GET /v1/models} or {@code GET /v1/models/{id}} request asks: the whole list, or one
 * entry of it. Set by {@link ModelsEndpoint}; checked by {@link ModelQueryInterceptor}; answered by the model
 * list's terminal.
 *
 * @param method the HTTP method the client used
 * @param id the model asked for as it was in the path, or null for the whole list
 */
public record ModelQuery(String method, String id) {
  public static final Attribute<ModelQuery> KEY = Attribute.of("modelQuery");

  /** Whether one entry is asked for rather than the list. */
  public boolean single() {
    return id != null;
  }

  /** The 404 {@code model_not_found} for the asked id, quoted printable and at most 100 characters. */
  public GatewayException notFound() {
    return new GatewayException(ErrorKind.MODEL_NOT_FOUND,
        "The model '" + printable(id == null ? "" : id) + "' does not exist or you do not have access to it.",
        "model", ErrorKind.MODEL_NOT_FOUND.code(), null, null);
  }

  private static String printable(String value) {
    StringBuilder out = new StringBuilder();
    value.chars().limit(100).forEach(c -> out.append(c >= 0x20 && c < 0x7f ? (char) c : '?'));
    return out.toString();
  }
}
