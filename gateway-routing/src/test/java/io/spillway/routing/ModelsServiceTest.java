package io.spillway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.config.LocalConfig;
import io.spillway.core.api.ModelQuery;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.ReplicaBreaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.cloud.CloudRoute;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The model list's own terminal: the cloud's list while traffic is on the cloud, else the local map. */
class ModelsServiceTest {
  static final String CLOUD_LIST = "{\"object\":\"list\",\"data\":[{\"id\":\"gpt-4o\",\"object\":\"model\","
      + "\"created\":1,\"owned_by\":\"openai\"},{\"id\":\"gpt-4o-mini\",\"object\":\"model\",\"created\":1,"
      + "\"owned_by\":\"openai\"}]}";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final Breaker breaker = new ReplicaBreaker(BreakerSettings.DEFAULTS, clock);
  final AtomicInteger cloudCalls = new AtomicInteger();

  ModelsService service(GatewayResponse cloudAnswer, AdmissionGate gate) {
    Backend cloud = new Backend() {
      @Override
      public BackendKind kind() {
        return BackendKind.CLOUD;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return Blocking.supply(() -> {
          cloudCalls.incrementAndGet();
          return cloudAnswer;
        });
      }
    };
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    models.put("gpt-4o-mini", "llama3.2:3b");
    LocalConfig local = new LocalConfig(true, LocalConfig.Kind.OLLAMA, "http://127.0.0.1:11434", models, null, null, null, null);
    return new ModelsService(List.of(CloudRoute.openAi("cloud", cloud, breaker)), new CapacityClassifier(clock), gate,
        new LocalModelList(local, clock.instant()), clock, RouterListener.NONE);
  }

  static GatewayRequest query(String id) {
    GatewayRequest request = GatewayRequest.received("req_1", Route.MODELS, Headers.EMPTY, null, clock().instant());
    request.setAttribute(ModelQuery.KEY, new ModelQuery("GET", id));
    return request;
  }

  static FakeClock clock() {
    return FakeClock.at("2026-11-10T10:00:00Z");
  }

  static GatewayResponse json(int status, String body) {
    return GatewayResponse.json(status, body.getBytes(StandardCharsets.UTF_8));
  }

  static JsonNode body(GatewayResponse response) {
    return response.json();
  }

  @Test
  void theCloudListAnswersWhileTheBreakerIsClosed() {
    GatewayRequest request = query(null);
    GatewayResponse response = Blocking.await(service(json(200, CLOUD_LIST), AdmissionGate.OPEN).handle(request));

    assertThat(response.status()).isEqualTo(200);
    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.CLOUD);
    assertThat(RequestOutcome.of(request).cache()).isEqualTo(RequestOutcome.CacheStatus.BYPASS);
    assertThat(body(response).path("data").findValuesAsText("id")).containsExactly("gpt-4o", "gpt-4o-mini");
  }

  @Test
  void theLocalMapAnswersWhileTheBreakerIsOpenWithoutAskingTheCloud() {
    breaker.override(Breaker.OverrideMode.OPEN);
    GatewayRequest request = query(null);
    GatewayResponse response = Blocking.await(service(json(200, CLOUD_LIST), AdmissionGate.OPEN).handle(request));

    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.LOCAL);
    assertThat(body(response).path("data").findValuesAsText("id"))
        .containsExactly("gpt-4o-mini", "qwen2.5-coder:7b", "llama3.2:3b");
    assertThat(body(response).path("data").get(0).path("owned_by").asText()).isEqualTo(LocalModelList.OWNER);
    assertThat(cloudCalls).hasValue(0);
  }

  @Test
  void aCloudCapacityAnswerGivesTheLocalMap() {
    String capacity = "{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
        + "\"type\":\"server_error\",\"param\":null,\"code\":null}}";
    GatewayRequest request = query(null);
    GatewayResponse response = Blocking.await(service(json(503, capacity), AdmissionGate.OPEN).handle(request));

    assertThat(response.status()).isEqualTo(200);
    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.LOCAL);
  }

  @Test
  void aFullAdmissionGateGivesTheLocalMap() {
    AdmissionGate full = (backend, request) -> {
      throw ErrorKind.RATE_LIMITED.exception("the waiting area is full");
    };
    GatewayRequest request = query(null);
    GatewayResponse response = Blocking.await(service(json(200, CLOUD_LIST), full).handle(request));

    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.LOCAL);
    assertThat(cloudCalls).hasValue(0);
  }

  @Test
  void oneModelIsPickedOutOfTheList() {
    GatewayRequest request = query("gpt-4o-mini");
    GatewayResponse response = Blocking.await(service(json(200, CLOUD_LIST), AdmissionGate.OPEN).handle(request));

    assertThat(response.status()).isEqualTo(200);
    assertThat(body(response).path("id").asText()).isEqualTo("gpt-4o-mini");
    assertThat(body(response).path("object").asText()).isEqualTo("model");
    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.CLOUD);
  }

  @Test
  void aModelNotInTheListIsNotFoundNamingTheBackend() {
    GatewayRequest request = query("gpt-9");
    GatewayResponse response = Blocking.await(service(json(200, CLOUD_LIST), AdmissionGate.OPEN).handle(request));

    assertThat(response.status()).isEqualTo(404);
    assertThat(body(response).path("error").path("code").asText()).isEqualTo("model_not_found");
    assertThat(body(response).path("error").path("message").asText()).contains("'gpt-9'");
    assertThat(RequestOutcome.of(request).backend()).isEqualTo(BackendKind.CLOUD);
  }

  @Test
  void aFailedCloudListingReachesTheClientAsItIs() {
    String unauthorized = "{\"error\":{\"message\":\"bad key\",\"type\":\"invalid_request_error\",\"param\":null,"
        + "\"code\":\"invalid_api_key\"}}";
    GatewayRequest request = query("gpt-4o");
    GatewayResponse response = Blocking.await(service(json(401, unauthorized), AdmissionGate.OPEN).handle(request));

    assertThat(response.status()).isEqualTo(401);
    assertThat(body(response).path("error").path("code").asText()).isEqualTo("invalid_api_key");
  }
}
