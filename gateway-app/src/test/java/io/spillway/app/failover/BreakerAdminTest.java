package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.CLOUD_TEXT;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_OPENAI;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_TEXT;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.chat;
import static io.spillway.app.failover.FailoverFixtures.chatStream;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.models.models.Model;
import io.spillway.app.failover.FailoverFixtures.Served;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The breaker's manual override and its views: /admin/breaker, /admin/status, and /v1/models while open. */
class BreakerAdminTest {

  @Test
  void forcedOpenSendsTrafficLocalUntilAutoHandsItBackThroughAProbe() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, CLOUD_TEXT);
      stubChat(h.ollama, LOCAL_TEXT);

      HttpResponse<String> forced = setBreaker(h, "{\"state\":\"open\"}");

      assertThat(forced.statusCode()).isEqualTo(200);
      assertThat(json(forced).get("state").asText()).isEqualTo("open");
      assertThat(json(forced).get("override").asText()).isEqualTo("open");
      h.clock.advance(Duration.ofHours(2));
      assertThat(chat(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));

      JsonNode auto = json(setBreaker(h, "{\"state\":\"auto\"}"));

      assertThat(auto.get("state").asText()).isEqualTo("half_open");
      assertThat(auto.get("override").asText()).isEqualTo("auto");
      assertThat(chat(client)).as("the probe").isEqualTo(new Served("cloud", CLOUD_TEXT));
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
    }
  }

  @Test
  void forcedClosedKeepsTrafficOnTheCloudWhileItIsAtCapacity() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);
      setBreaker(h, "{\"state\":\"closed\"}");

      for (int i = 0; i < 5; i++) {
        assertThat(chat(client)).as("each capacity answer is still retried locally")
            .isEqualTo(new Served("local", LOCAL_TEXT));
      }

      h.cloud.verify(5, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      JsonNode breaker = breaker(h);
      assertThat(breaker.get("state").asText()).isEqualTo("closed");
      assertThat(breaker.get("override").asText()).isEqualTo("closed");

      setBreaker(h, "{\"state\":\"auto\"}");
      for (int i = 0; i < 3; i++) {
        chat(client);
      }
      assertThat(breaker(h).get("state").asText()).as("auto counts again from zero").isEqualTo("open");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"state\":\"sideways\"}", "{\"state\":\"OPEN\"}", "{}", "{\"state\":1}", "[\"open\"]", "open"})
  void theOverrideAcceptsOnlyOpenClosedOrAuto(String body) {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      HttpResponse<String> response = setBreaker(h, body);

      assertThat(response.statusCode()).isEqualTo(400);
      assertThat(json(response).get("error").get("type").asText()).isEqualTo("invalid_request_error");
      assertThat(breaker(h).get("override").asText()).isEqualTo("auto");
    }
  }

  @Test
  void theBreakerEndpointsNeedTheAdminToken() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      HttpResponse<String> noToken = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker"))).GET().build());
      HttpResponse<String> wrongToken = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
          .header("Authorization", "Bearer " + GatewayHarness.GOLD_KEY)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
      HttpResponse<String> status = h.get("/admin/status", null);

      assertThat(noToken.statusCode()).isEqualTo(401);
      assertThat(wrongToken.statusCode()).isEqualTo(401);
      assertThat(status.statusCode()).isEqualTo(401);
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
    }
  }

  @Test
  void adminStatusShowsTheBreakerStateSinceStreakAndNextProbe() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);
      chat(client);
      HttpResponse<String> closed = h.get("/admin/status", GatewayHarness.ADMIN_TOKEN);
      assertThat(closed.statusCode()).isEqualTo(200);
      assertThat(json(closed).get("breaker").get("streak").asInt()).isEqualTo(1);

      h.clock.advance(Duration.ofSeconds(10));
      chat(client);
      chat(client);
      JsonNode breaker = json(h.get("/admin/status", GatewayHarness.ADMIN_TOKEN)).get("breaker");

      assertThat(breaker.get("state").asText()).isEqualTo("open");
      assertThat(breaker.get("since").asText()).isEqualTo("2026-11-10T10:00:10Z");
      assertThat(breaker.get("streak").asInt()).isZero();
      assertThat(breaker.get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:05:10Z");
      assertThat(breaker.get("history").get(0).get("reason").asText()).contains("3 capacity answers in a row");
    }
  }

  @Test
  void modelListComesFromTheLocalModelMapWhileTheBreakerIsOpen() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      h.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.models("gpt-4o", "gpt-4o-mini", "o3")));
      assertThat(client.models().list().data()).extracting(Model::id).containsExactly("gpt-4o", "gpt-4o-mini", "o3");

      setBreaker(h, "{\"state\":\"open\"}");
      List<Model> local = client.models().list().data();

      assertThat(local).extracting(Model::id).containsExactly("gpt-4o-mini", "qwen2.5-coder:7b", "llama3.2:3b");
      assertThat(local).extracting(Model::ownedBy).containsOnly("spillway-local");
      h.cloud.verify(1, getRequestedFor(urlEqualTo("/v1/models")));
      HttpResponse<String> raw = h.get("/v1/models", GatewayHarness.GOLD_KEY);
      assertThat(raw.headers().firstValue("x-spillway-backend")).hasValue("local");
    }
  }

  @Test
  void modelListFallsBackToTheLocalMapWhenTheCloudIsAtCapacity() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      h.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.atCapacity()));

      HttpResponse<String> response = h.get("/v1/models", GatewayHarness.GOLD_KEY);

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(json(response).get("data").get(0).get("id").asText()).isEqualTo("gpt-4o-mini");
      assertThat(breaker(h).get("streak").asInt()).as("model lists do not count").isZero();
    }
  }
}
