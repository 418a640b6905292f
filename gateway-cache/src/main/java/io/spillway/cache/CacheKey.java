package io.spillway.cache;

import io.spillway.core.pipeline.Route;
import java.util.HexFormat;

/**
 * What makes two requests the same: who may share the answer ({@code scope}: {@code team:<name>},
 * {@code tier:<tier>} or {@code global}), the route, the model as the client asked for it, and a
 * SHA-256 of the canonical body (plus the few headers that change an answer). Holds no prompt text,
 * only its digest; still, never log it next to a key.
 */
record CacheKey(String scope, Route route, String model, String digest) {

  static CacheKey of(String scope, Route route, String model, byte[] sha256) {
    return new CacheKey(scope, route, model, HexFormat.of().formatHex(sha256));
  }

  /** Rough bytes this key holds, for the weigher. */
  int weight() {
    return 64 + 2 * (scope.length() + (model == null ? 0 : model.length()) + digest.length());
  }
}
