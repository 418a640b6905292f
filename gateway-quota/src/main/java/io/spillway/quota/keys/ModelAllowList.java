package io.spillway.quota.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.List;

/**
 * The models one key may use ({@code models} of an API-created key, {@code keys[].models} of a
 * config key); empty allows any. A request for another model gets 403 {@code model_not_allowed};
 * a model listing shows only the allowed models, so {@code GET /v1/models/{id}} of another one
 * answers 404 {@code model_not_found} as OpenAI does for a model the caller cannot see.
 */
record ModelAllowList(String keyLabel, List<String> models) {
  boolean allowsAll() {
    return models.isEmpty();
  }

  boolean allows(String model) {
    return models.isEmpty() || models.contains(model);
  }

  /** @throws GatewayException 403 {@code model_not_allowed} when {@code model} is not on the list */
  void check(String model) {
    if (model != null && !allows(model)) {
      throw new GatewayException(ErrorKind.MODEL_NOT_ALLOWED, "This Spillway key (" + keyLabel
          + ") may not use the model '" + model + "'. It may use: " + String.join(", ", models) + ".",
          "model", ErrorKind.MODEL_NOT_ALLOWED.code(), null, null);
    }
  }

  /** A successful model listing with only the allowed entries of its {@code data}; anything else as it is. */
  GatewayResponse filterListing(GatewayResponse listing) {
    if (allowsAll() || !listing.isSuccessful() || listing.isStream()) {
      return listing;
    }
    JsonNode tree = listing.json();
    if (tree == null || !tree.path("data").isArray()) {
      return listing;
    }
    ObjectNode filtered = ((ObjectNode) tree).deepCopy();
    ArrayNode data = filtered.putArray("data");
    for (JsonNode model : tree.path("data")) {
      if (allows(Json.text(model, "id"))) {
        data.add(model);
      }
    }
    return listing.withBody(Json.toBytes(filtered));
  }
}
