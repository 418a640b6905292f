package io.spillway.routing;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.LocalConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * {@code GET /v1/models} while traffic is local: the models a client can ask for, from
 * {@code local.models}, in OpenAI's list format. Lists every requested name that has its own mapping
 * and every local model behind the map (any other name is served by {@code default}).
 */
public final class LocalModelList {
  public static final String OWNER = "spillway-local";

  private final byte[] body;
  private final Set<String> explicit;

  public LocalModelList(LocalConfig local, Instant created) {
    Set<String> ids = new LinkedHashSet<>();
    for (Map.Entry<String, String> entry : local.modelNames().entrySet()) {
      if (!entry.getKey().equals("default")) {
        ids.add(entry.getKey());
      }
    }
    ids.addAll(local.modelNames().values());
    this.explicit = Set.copyOf(ids);
    ObjectNode list = Json.object();
    list.put("object", "list");
    ArrayNode data = list.putArray("data");
    for (String id : ids) {
      ObjectNode model = data.addObject();
      model.put("id", id);
      model.put("object", "model");
      model.put("created", created.getEpochSecond());
      model.put("owned_by", OWNER);
    }
    this.body = Json.toBytes(list);
  }

  /**
   * Whether the local backend serves {@code model} by an entry of its own in {@code local.models}
   * (or because it is one of the local models): not merely through {@code default}. Embeddings go
   * local only then, since vectors of another model would not match the ones a client stored.
   */
  public boolean mapsExplicitly(String model) {
    return model != null && explicit.contains(model);
  }

  public GatewayResponse response() {
    return GatewayResponse.json(200, body.clone());
  }
}
