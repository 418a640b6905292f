package io.spillway.quota.keys;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import java.util.function.Supplier;

/**
 * Resolves the gateway key to a caller, or answers 401 with OpenAI's {@code invalid_api_key}. Takes
 * the key from {@code Authorization: Bearer}, or from {@code api-key} / {@code x-api-key} as some
 * SDKs send it. The presented key is never echoed, logged or forwarded.
 */
public final class AuthInterceptor implements Interceptor {
  private final Supplier<KeyRegistry> registry;

  public AuthInterceptor(Supplier<KeyRegistry> registry) {
    this.registry = registry;
  }

  @Override
  public GatewayResponse intercept(Chain chain) {
    String key = presentedKey(chain.request().headers());
    if (key == null) {
      throw new GatewayException(ErrorKind.INVALID_API_KEY,
          "You didn't provide an API key. Send your Spillway gateway key as 'Authorization: Bearer <key>'.",
          null, ErrorKind.INVALID_API_KEY.code(), null, null);
    }
    Caller caller = registry.get().authenticate(key);
    if (caller == null) {
      throw new GatewayException(ErrorKind.INVALID_API_KEY,
          "Incorrect API key provided. Use a Spillway gateway key issued to your team.", null,
          ErrorKind.INVALID_API_KEY.code(), null, null);
    }
    chain.request().setAttribute(RequestAttributes.CALLER, caller);
    return chain.proceed(chain.request());
  }

  static String presentedKey(Headers headers) {
    String authorization = headers.get("authorization");
    if (authorization != null) {
      if (authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
        String key = authorization.substring(7).trim();
        return key.isEmpty() ? null : key;
      }
      return null;
    }
    String key = headers.get("api-key");
    if (key == null) {
      key = headers.get("x-api-key");
    }
    return key == null || key.isBlank() ? null : key.trim();
  }

  @Override
  public String toString() {
    return "AuthInterceptor";
  }
}
