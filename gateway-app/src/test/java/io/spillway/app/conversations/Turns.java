package io.spillway.app.conversations;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;

/** Turns of a Responses API conversation sent through the gateway, buffered or streamed, and what came back. */
final class Turns {
  private Turns() {}

  /** One answer: its status, {@code x-spillway-backend}, and the response object (or the error body). */
  record Turn(int status, String backend, JsonNode body, HttpResponse<String> raw) {
    String id() {
      return Json.text(body, "id");
    }

    /** The id of the first output item (the assistant message). */
    String messageId() {
      return body.path("output").path(0).path("id").asText();
    }

    ObjectNode message() {
      return (ObjectNode) body.path("output").path(0);
    }

    String text() {
      return body.path("output").path(0).path("content").path(0).path("text").asText();
    }
  }

  static ObjectNode request(boolean stream) {
    return Json.object().put("model", "gpt-4.1").put("stream", stream);
  }

  static ObjectNode user(String text) {
    return Json.object().put("role", "user").put("content", text);
  }

  static ObjectNode reference(String id) {
    return Json.object().put("type", "item_reference").put("id", id);
  }

  static ArrayNode items(JsonNode... items) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (JsonNode item : items) {
      out.add(item);
    }
    return out;
  }

  static Turn send(GatewayHarness h, String key, ObjectNode request) {
    HttpResponse<String> response = h.post("/v1/responses", key, Json.toString(request));
    String backend = response.headers().firstValue("x-spillway-backend").orElse(null);
    JsonNode body;
    if (response.statusCode() == 200 && request.path("stream").asBoolean(false)) {
      body = completed(response.body());
    } else {
      body = parse(response.body());
    }
    return new Turn(response.statusCode(), backend, body, response);
  }

  /** The response of a stream's {@code response.completed} event. */
  static JsonNode completed(String sse) {
    for (String block : sse.split("\n\n")) {
      for (String line : block.split("\n")) {
        if (line.startsWith("data: ") && line.contains("\"response.completed\"")) {
          return parse(line.substring("data: ".length())).get("response");
        }
      }
    }
    throw new AssertionError("no response.completed event in:\n" + sse);
  }

  static JsonNode parse(String text) {
    try {
      return Json.parse(text);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + text, e);
    }
  }

  static HttpResponse<String> breaker(GatewayHarness h, String state) {
    return h.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"state\":\"" + state + "\"}")).build());
  }
}
