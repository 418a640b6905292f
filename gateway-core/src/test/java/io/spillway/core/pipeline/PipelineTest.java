package io.spillway.core.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PipelineTest {
  private static GatewayRequest request() {
    return GatewayRequest.create("req_1", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object().put("model", "m"),
        null, Instant.EPOCH);
  }

  @Test
  void stagesSeeTheRequestInOrderAndTheResponseInReverse() {
    List<String> seen = new ArrayList<>();
    Interceptor a = chain -> {
      seen.add("a in");
      return chain.proceed(chain.request()).thenApply(response -> {
        seen.add("a out");
        return response.withHeader("x-a", "1");
      });
    };
    Interceptor b = chain -> {
      seen.add("b in");
      return chain.proceed(chain.request().withBody(Json.object().put("model", "changed"))).thenApply(response -> {
        seen.add("b out");
        return response;
      });
    };
    Pipeline pipeline = new Pipeline(List.of(a, b), request -> {
      seen.add("terminal " + request.model());
      return CompletableFuture.completedFuture(GatewayResponse.json(200, new byte[0]));
    });

    GatewayResponse response = pipeline.execute(request());

    assertThat(seen).containsExactly("a in", "b in", "terminal changed", "b out", "a out");
    assertThat(response.headers().get("x-a")).isEqualTo("1");
  }

  @Test
  void aStageMayAnswerWithoutProceeding() {
    Pipeline pipeline = new Pipeline(List.of(chain -> CompletableFuture.completedFuture(GatewayResponse.json(204, new byte[0]))), request -> {
      throw new AssertionError("must not be reached");
    });
    assertThat(pipeline.execute(request()).status()).isEqualTo(204);
  }

  @Test
  void proceedingTwiceIsAnError() {
    Interceptor twice = chain -> {
      chain.proceed(chain.request());
      return chain.proceed(chain.request());
    };
    Pipeline pipeline = new Pipeline(List.of(twice), request -> CompletableFuture.completedFuture(GatewayResponse.json(200, new byte[0])));
    assertThatThrownBy(() -> pipeline.execute(request())).hasMessageContaining("at most once");
  }

  @Test
  void unmodifiedRequestsForwardTheClientsExactBytes() {
    byte[] raw = "{ \"model\" : \"m\" }".getBytes();
    GatewayRequest request = GatewayRequest.create("r", Route.COMPLETIONS, Headers.EMPTY,
        Json.object().put("model", "m"), raw, Instant.EPOCH);
    assertThat(request.bodyBytes()).isSameAs(raw);
    assertThat(new String(request.withBody(Json.object().put("model", "x")).bodyBytes())).isEqualTo("{\"model\":\"x\"}");
  }

  @Test
  void headersRefuseLineBreaksSoNothingCanBeInjected() {
    assertThatThrownBy(() -> Headers.of("x-a", "v\r\nx-evil: 1")).isInstanceOf(IllegalArgumentException.class);
    assertThat(Headers.of("Authorization", "Bearer secret").toString()).doesNotContain("secret");
  }
}
