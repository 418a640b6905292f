package io.spillway.core.api;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import java.util.concurrent.CompletionStage;

/**
 * The first stage of the model list after the observer, its counterpart of {@link ParseInterceptor}: checks
 * the method and the asked id of a {@link ModelQuery} (405 for anything but {@code GET}/{@code HEAD},
 * 404 {@code model_not_found} for an empty, over-long or control-character id) before anything else
 * (authentication included) looks at the request. Sets {@link RequestAttributes#PARSED}. Thread-safe.
 */
public final class ModelQueryInterceptor implements Interceptor {
  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    ModelQuery query = request.attribute(ModelQuery.KEY);
    if (query == null) {
      throw new IllegalStateException("a model list request without its ModelQuery");
    }
    if (!"GET".equals(query.method()) && !"HEAD".equals(query.method())) {
      throw new GatewayException(ErrorKind.METHOD_NOT_ALLOWED, "Method " + query.method() + " is not allowed on "
          + ModelsEndpoint.PREFIX + "{model} (allowed: GET)", null, ErrorKind.METHOD_NOT_ALLOWED.code(), null, null);
    }
    String id = query.id();
    if (id != null && (id.isEmpty() || id.length() > 256 || id.chars().anyMatch(c -> c < 0x20 || c == 0x7f))) {
      throw query.notFound();
    }
    request.setAttribute(RequestAttributes.PARSED, request);
    return chain.proceed(request);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "ModelQueryInterceptor";
  }
}
