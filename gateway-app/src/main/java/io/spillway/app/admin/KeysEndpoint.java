package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.server.HttpService;
import io.spillway.core.server.ServerRequest;
import io.spillway.quota.keys.KeyRegistry;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * {@code GET /admin/keys}: each configured key as team, tier and fingerprint (the first bytes of
 * the key's SHA-256, the same {@code keyId} the access log carries). Never a key or a full hash.
 * Reflects the registry after the last reload.
 */
public final class KeysEndpoint implements HttpService {
  private final Supplier<KeyRegistry> keys;

  public KeysEndpoint(Supplier<KeyRegistry> keys) {
    this.keys = keys;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    ObjectNode root = Json.object();
    ArrayNode list = root.putArray("keys");
    for (Caller caller : keys.get().callers()) {
      list.addObject()
          .put("team", caller.team())
          .put("tier", caller.tier().name().toLowerCase(Locale.ROOT))
          .put("fingerprint", caller.keyId());
    }
    return AdminApi.ok(root);
  }
}
