package io.spillway.app.keys;

import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The key admin API as an operator calls it: plain HTTP with the admin token. */
final class AdminKeys {
  private AdminKeys() {}

  /** A created key: its id and its plain secret. */
  record Created(String id, String key) {}

  static Created create(GatewayHarness gateway, String body) {
    HttpResponse<String> response = gateway.post("/admin/keys", ADMIN_TOKEN, body);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode answer = json(response);
    return new Created(answer.get("id").asText(), answer.get("key").asText());
  }

  static HttpResponse<String> revoke(GatewayHarness gateway, String id) {
    return gateway.send(HttpRequest.newBuilder(URI.create(gateway.url("/admin/keys/" + id)))
        .timeout(Duration.ofSeconds(10))
        .header("Authorization", "Bearer " + ADMIN_TOKEN)
        .DELETE()
        .build());
  }

  static JsonNode json(HttpResponse<String> response) {
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
