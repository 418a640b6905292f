package io.spillway.routing;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.config.LocalConfig;
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

  public LocalModelList(LocalConfig local, Instant created) {
    Set<String> ids = new LinkedHashSet<>();
    for (Map.Entry<String, String> entry : local.modelNames().entrySet()) {
      if (!entry.getKey().equals("default")) {
        ids.add(entry.getKey());
      }
    }
    ids.addAll(local.modelNames().values());
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

  public GatewayResponse response() {
    return GatewayResponse.json(200, body.clone());
  }
}
