package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.net.ServerSocket;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Ollama's errors reach the client as OpenAI errors it can act on. */
@ExtendWith(EventLoopClient.class)
class OllamaErrorsTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), clock);

  static final String CHAT = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  static final String CHAT_STREAM =
      "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  @ParameterizedTest
  @CsvSource({"false", "true"})
  void unknownModelIs404ModelNotFoundNamingOllamaPull(boolean stream) {
    ollama.stubFor(post("/api/chat").willReturn(
        OllamaStubs.error(404, "model \"llama3.2:3b\" not found, try pulling it first")));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, stream ? CHAT_STREAM : CHAT)));

    assertThat(response.status()).isEqualTo(404);
    assertThat(response.isStream()).isFalse();
    JsonNode error = json(response).path("error");
    assertThat(error.path("code").asText()).isEqualTo("model_not_found");
    assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.path("param").asText()).isEqualTo("model");
    assertThat(error.path("message").asText())
        .contains("'llama3.2:3b'").contains("'gpt-4o-mini'").contains("ollama pull llama3.2:3b");
  }

  @ParameterizedTest
  @CsvSource({
    "503, 'server busy, please try again.  maximum pending requests exceeded'",
    "500, 'server busy, please try again.  maximum pending requests exceeded'",
    "429, 'too many requests'"
  })
  void busyServerIs503WithRetryAfter(int status, String message) {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.error(status, message)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT)));

    assertThat(response.status()).isEqualTo(503);
    assertThat(response.headers().get("retry-after")).isNotNull();
    JsonNode error = json(response).path("error");
    assertThat(error.path("code").asText()).isEqualTo("local_busy");
    assertThat(error.path("message").asText()).contains("busy");
  }

  @Test
  void busyServersRetryAfterIsPassedOn() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.error(503, "server busy").withHeader("Retry-After", "7")));

    assertThat(Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT))).headers().get("retry-after")).isEqualTo("7");
  }

  @Test
  void badRequestIs400WithOllamasReason() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.error(400, "llama3.2:3b does not support tools")));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT)));

    assertThat(response.status()).isEqualTo(400);
    assertThat(json(response).path("error").path("message").asText()).contains("does not support tools");
  }

  @Test
  void anErrorLineInsteadOfTheFirstChunkIsAnErrorResponseNotAStream() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        "{\"error\":\"model requires more system memory (16.0 GiB) than is available (8.0 GiB)\"}\n")));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT_STREAM)));

    assertThat(response.isStream()).isFalse();
    assertThat(response.status()).isEqualTo(502);
    assertThat(json(response).path("error").path("message").asText()).contains("more system memory");
  }

  @Test
  void anErrorLineMidStreamFailsTheStreamWithAnUpstreamException() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatLine("llama3.2:3b", " Yes") + "\n" + OllamaStubs.chatLine("llama3.2:3b", ".") + "\n"
            + "{\"error\":\"an error was encountered while running the model\"}\n")));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT_STREAM)));

    assertThat(response.status()).isEqualTo(200);
    try (EventStream stream = response.stream()) {
      SseEvent role = stream.next();
      assertThat(OllamaTesting.data(role).path("choices").get(0).path("delta").path("role").asText()).isEqualTo("assistant");
      assertThat(stream.started()).isTrue();
      assertThat(OllamaTesting.data(stream.next()).toString()).contains("\" Yes\"");
      assertThat(OllamaTesting.data(stream.next()).toString()).contains("\".\"");
      assertThatThrownBy(stream::next)
          .isInstanceOfSatisfying(UpstreamException.class, e -> {
            assertThat(e.failure()).isEqualTo(UpstreamException.Failure.RESET_MID_STREAM);
            assertThat(e.getMessage()).contains("an error was encountered while running the model");
          });
    }
  }

  @Test
  void aStreamThatEndsWithoutItsDoneLineFails() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(OllamaStubs.chatLine("llama3.2:3b", "Hel") + "\n")));

    try (EventStream stream = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT_STREAM))).stream()) {
      stream.next();
      stream.next();
      assertThatThrownBy(stream::next).isInstanceOfSatisfying(UpstreamException.class,
          e -> assertThat(e.getMessage()).contains("ended the stream before it was complete"));
    }
  }

  @Test
  void aConnectionResetBeforeAnswerIsAnUpstreamException() {
    ollama.stubFor(post("/api/chat").willReturn(com.github.tomakehurst.wiremock.client.WireMock.aResponse()
        .withFault(Fault.CONNECTION_RESET_BY_PEER)));

    assertThatThrownBy(() -> Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, CHAT))))
        .isInstanceOf(UpstreamException.class);
  }

  @Test
  void connectionRefusedIsConnectFailed() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    OllamaBackend nowhere = OllamaTesting.backend("http://127.0.0.1:" + closedPort, clock);

    assertThatThrownBy(() -> Blocking.await(nowhere.callAsync(request(Route.CHAT_COMPLETIONS, CHAT))))
        .isInstanceOfSatisfying(UpstreamException.class, e -> {
          assertThat(e.failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
          assertThat(e.unprocessed()).isTrue();
          assertThat(e.backend()).isEqualTo(BackendKind.LOCAL.tag());
        });
  }
}
