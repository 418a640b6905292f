package io.spillway.quota.keys;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Resolves the gateway key to a caller, or answers 401 with OpenAI's {@code invalid_api_key}. Takes
 * the key from {@code Authorization: Bearer}, or from {@code api-key} / {@code x-api-key} as some
 * SDKs send it. The presented key is never echoed, logged or forwarded.
 *
 * <p>Config-file keys are looked up first, then keys created through the admin API
 * ({@link ApiKeys}). An API key past its {@code expiresAt}, or a rotated key's old secret past its
 * overlap, gets 401 saying so. A key with a model allow-list (an API key's {@code models}, a config
 * key's {@code keys[].models}) gets 403 {@code model_not_allowed} for another model; the caller
 * carries the list ({@link Caller#models()}), so the model list's service shows only those models.
 * An API key's caller carries the key's id as {@code keyId}.
 */
public final class AuthInterceptor implements Interceptor {
  public static final String EXPIRED_CODE = "api_key_expired";

  private final Supplier<KeyRegistry> registry;
  private final ApiKeys apiKeys;
  private final Clock clock;

  public AuthInterceptor(Supplier<KeyRegistry> registry) {
    this(registry, null, Clock.systemUTC());
  }

  /** @param apiKeys the keys created through the admin API, or null for config keys only */
  public AuthInterceptor(Supplier<KeyRegistry> registry, ApiKeys apiKeys, Clock clock) {
    this.registry = registry;
    this.apiKeys = apiKeys;
    this.clock = clock;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    String key = presentedKey(chain.request().headers());
    if (key == null) {
      throw ErrorKind.INVALID_API_KEY.exception(
          "You didn't provide an API key. Send your Spillway gateway key as 'Authorization: Bearer <key>'.");
    }
    KeyRegistry configKeys = registry.get();
    Caller caller = configKeys.authenticate(key);
    if (caller != null) {
      caller = new Caller(caller.team(), caller.tier(), caller.keyId(), configKeys.models(caller));
    } else if (apiKeys != null) {
      ApiKeys.Match match = apiKeys.authenticate(key);
      if (match != null) {
        caller = admit(match);
      }
    }
    if (caller == null) {
      throw ErrorKind.INVALID_API_KEY.exception(
          "Incorrect API key provided. Use a Spillway gateway key issued to your team.");
    }
    GatewayRequest request = chain.request();
    String model = request.model();
    if (model != null && !caller.allows(model)) {
      throw new GatewayException(ErrorKind.MODEL_NOT_ALLOWED, "This Spillway key (" + caller.keyId()
          + ") may not use the model '" + model + "'. It may use: " + String.join(", ", caller.models()) + ".",
          "model", ErrorKind.MODEL_NOT_ALLOWED.code(), null, null);
    }
    request.setAttribute(RequestAttributes.CALLER, caller);
    return chain.proceed(request);
  }

  private Caller admit(ApiKeys.Match match) {
    ApiKey key = match.key();
    Instant now = clock.instant();
    if (key.expired(now)) {
      throw ErrorKind.INVALID_API_KEY.exception("This Spillway key (" + key.id() + ", team "
          + key.team() + ") expired at " + key.expiresAt() + ". Ask your gateway's operators for a new one.")
          .withCode(EXPIRED_CODE);
    }
    if (match.previous() && !now.isBefore(match.previousUntil())) {
      throw ErrorKind.INVALID_API_KEY.exception("This Spillway key (" + key.id()
          + ") was rotated; its old secret stopped working at " + match.previousUntil() + ". Use the new key.")
          .withCode(EXPIRED_CODE);
    }
    return new Caller(key.team(), key.tier(), key.id(), key.models());
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
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "AuthInterceptor";
  }
}
