package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The first stage of each pipeline: the parse stage of model calls and the query stage of the model list. */
class FirstStagesTest {
  static final Instant NOW = Instant.parse("2026-11-10T10:00:00Z");
  final AtomicReference<GatewayRequest> reached = new AtomicReference<>();

  GatewayResponse run(Pipeline pipeline, GatewayRequest request) {
    return pipeline.execute(request);
  }

  Pipeline behind(io.spillway.core.pipeline.Interceptor first) {
    return new Pipeline(List.of(first), request -> {
      reached.set(request);
      return CompletableFuture.completedFuture(GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8)));
    });
  }

  static GatewayRequest chat(String body, String contentType) {
    return GatewayRequest.received("req_1", Route.CHAT_COMPLETIONS,
        contentType == null ? Headers.EMPTY : Headers.of("content-type", contentType),
        body.getBytes(StandardCharsets.UTF_8), NOW);
  }

  static GatewayRequest models(String method, String id) {
    GatewayRequest request = GatewayRequest.received("req_1", Route.MODELS, Headers.EMPTY, null, NOW);
    request.setAttribute(ModelQuery.KEY, new ModelQuery(method, id));
    return request;
  }

  @Test
  void theParseStageHandsOnTheParsedBodyAndForwardsTheClientsExactBytes() {
    String sent = "{ \"model\" : \"gpt-4o\", \"messages\": [{\"role\":\"user\",\"content\":\"hi\"}] }";
    run(behind(new ParseInterceptor()), chat(sent, "application/json"));

    GatewayRequest next = reached.get();
    assertThat(next.model()).isEqualTo("gpt-4o");
    assertThat(new String(next.bodyBytes(), StandardCharsets.UTF_8)).isEqualTo(sent);
    assertThat(next.attribute(RequestAttributes.PARSED)).isSameAs(next);
  }

  @Test
  void aMalformedBodyGoesNoFurtherThanTheParseStage() {
    assertThatThrownBy(() -> run(behind(new ParseInterceptor()), chat("{\"model\":", "application/json")))
        .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.status()).isEqualTo(400));
    assertThat(reached.get()).isNull();
  }

  @Test
  void aBodyThatIsNotJsonByContentTypeIsRefusedAs415() {
    assertThatThrownBy(() -> run(behind(new ParseInterceptor()), chat("{\"model\":\"gpt-4o\"}", "text/plain")))
        .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.status()).isEqualTo(415));
    assertThat(reached.get()).isNull();
  }

  @Test
  void theModelQueryStageLetsAGetThrough() {
    run(behind(new ModelQueryInterceptor()), models("GET", "gpt-4o"));

    assertThat(reached.get().attribute(RequestAttributes.PARSED)).isNotNull();
  }

  @Test
  void aModelQueryWithAnotherMethodIsRefusedBeforeAnyLaterStage() {
    assertThatThrownBy(() -> run(behind(new ModelQueryInterceptor()), models("DELETE", "gpt-4o")))
        .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.status()).isEqualTo(405));
    assertThat(reached.get()).isNull();
  }

  @Test
  void aModelIdWithControlCharactersIsNotFoundBeforeAnyLaterStage() {
    assertThatThrownBy(() -> run(behind(new ModelQueryInterceptor()), models("GET", "gpt\u0001")))
        .isInstanceOfSatisfying(GatewayException.class, e -> {
          assertThat(e.status()).isEqualTo(404);
          assertThat(e.getMessage()).contains("'gpt?'");
        });
    assertThat(reached.get()).isNull();
  }
}
