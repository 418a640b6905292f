package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.api.RequestParser;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks measure a request the production pipeline serves: authenticated, through every
 * stage, answered by the cloud route with the canned completion (not an error answered early).
 */
class BenchGatewayTest {
  @Test
  void theBenchmarkedRequestIsServedByTheCloudRouteThroughTheProductionPipeline() {
    try (BenchGateway gateway = new BenchGateway()) {
      Headers headers = Headers.of("authorization", "Bearer " + BenchGateway.KEY, "content-type", "application/json");
      GatewayRequest request = GatewayRequest.create("req_bench", Route.CHAT_COMPLETIONS, headers,
          RequestParser.parse(Route.CHAT_COMPLETIONS, "application/json", gateway.requestBody), gateway.requestBody,
          Instant.EPOCH);

      GatewayResponse response = gateway.pipeline.execute(request);

      assertThat(response.status()).isEqualTo(200);
      assertThat(response.headers().get("x-spillway-backend")).isEqualTo("cloud");
      assertThat(response.headers().get("x-spillway-cache")).isNotNull();
      assertThat(response.body()).isEqualTo(gateway.answer);
    }
  }

  @Test
  void aRequestWithoutTheBenchKeyIsRefusedAsInProduction() {
    try (BenchGateway gateway = new BenchGateway()) {
      GatewayRequest request = GatewayRequest.create("req_bench", Route.CHAT_COMPLETIONS,
          Headers.of("content-type", "application/json"),
          RequestParser.parse(Route.CHAT_COMPLETIONS, "application/json", gateway.requestBody), gateway.requestBody,
          Instant.EPOCH);

      assertThatThrownBy(() -> gateway.pipeline.execute(request))
          .isInstanceOfSatisfying(GatewayException.class, refused -> assertThat(refused.status()).isEqualTo(401));
    }
  }
}
