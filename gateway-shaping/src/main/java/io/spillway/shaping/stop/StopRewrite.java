package io.spillway.shaping.stop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Stop rewriting. Some stop sequences (by default a blank line, {@code "\n\n"}) make an upstream stop
 * at the first paragraph break of code and the client retry, or keep a slot busy while it searches;
 * Spillway takes them out of the upstream request, caps the output length instead, and cuts the
 * answer at the first match itself — buffered answers and streams alike — with
 * {@code finish_reason: "stop"}, so the client sees what it asked for.
 *
 * <p>Applies to {@code /v1/chat/completions} and {@code /v1/completions} (the Responses API has no
 * stop sequences). Thread-safe.
 */
public final class StopRewrite {
  private final ShapingConfig.StopConfig config;

  public StopRewrite(ShapingConfig.StopConfig config) {
    this.config = config;
  }

  /** Whether {@code body} asks for any of the risky stop sequences. */
  public boolean applies(Route route, ObjectNode body) {
    if (route != Route.CHAT_COMPLETIONS && route != Route.COMPLETIONS) {
      return false;
    }
    JsonNode stop = body.get("stop");
    if (stop == null) {
      return false;
    }
    if (stop.isTextual()) {
      return config.risky().contains(stop.textValue());
    }
    if (stop.isArray()) {
      for (JsonNode item : stop) {
        if (item.isTextual() && config.risky().contains(item.textValue())) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Takes the risky stop sequences out of {@code body} (a copy the caller owns) and caps the output
   * length; returns the sequences removed, which the answer must then be cut at.
   */
  public List<String> rewrite(Route route, ObjectNode body) {
    if (!applies(route, body)) {
      return List.of();
    }
    JsonNode stop = body.get("stop");
    List<String> removed = new ArrayList<>();
    if (stop.isTextual()) {
      removed.add(stop.textValue());
      body.remove("stop");
    } else {
      ArrayNode kept = Json.MAPPER.createArrayNode();
      for (JsonNode item : stop) {
        if (item.isTextual() && config.risky().contains(item.textValue())) {
          removed.add(item.textValue());
        } else {
          kept.add(item);
        }
      }
      if (kept.isEmpty()) {
        body.remove("stop");
      } else {
        body.set("stop", kept);
      }
    }
    capOutput(route, body);
    return removed;
  }

  private void capOutput(Route route, ObjectNode body) {
    String field = "max_tokens";
    if (route == Route.CHAT_COMPLETIONS && body.has("max_completion_tokens")) {
      field = "max_completion_tokens";
    }
    JsonNode current = body.get(field);
    if (current == null || !current.canConvertToLong() || current.longValue() > config.maxTokens()) {
      body.put(field, config.maxTokens());
    }
  }

  /** The buffered answer cut at the first match, or {@code response} itself when nothing matched. */
  public static GatewayResponse cut(GatewayResponse response, Route route, List<String> stops) {
    if (stops.isEmpty() || !response.isSuccessful()) {
      return response;
    }
    if (response.isStream()) {
      return response.withStream(new StopCuttingEventStream(response.stream(), route, stops));
    }
    ObjectNode body;
    try {
      if (!(Json.parse(response.body()) instanceof ObjectNode object)) {
        return response;
      }
      body = object;
    } catch (IOException | RuntimeException e) {
      return response;
    }
    if (!(body.get("choices") instanceof ArrayNode choices)) {
      return response;
    }
    boolean changed = false;
    for (JsonNode node : choices) {
      if (!(node instanceof ObjectNode choice)) {
        continue;
      }
      ObjectNode holder = route == Route.CHAT_COMPLETIONS && choice.get("message") instanceof ObjectNode m ? m : choice;
      String field = route == Route.CHAT_COMPLETIONS ? "content" : "text";
      JsonNode text = holder.get(field);
      if (text == null || !text.isTextual()) {
        continue;
      }
      String cut = StopMatcher.cut(text.textValue(), stops);
      if (cut.length() != text.textValue().length()) {
        holder.put(field, cut);
        choice.put("finish_reason", "stop");
        changed = true;
      }
    }
    return changed ? response.withBody(Json.toBytes(body)) : response;
  }
}
