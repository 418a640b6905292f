package io.spillway.app.frontend;

import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.ScriptedUpstream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Streams are relayed event by event, and a broken stream ends with an error event, never silently. */
class StreamingRelayTest {
  private static final String CHUNK =
      "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n";

  @Test
  void eachChunkReachesTheClientBeforeTheUpstreamSendsTheNext() throws Exception {
    CountDownLatch clientSawFirst = new CountDownLatch(1);
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, CHUNK.formatted("first"));
          ScriptedUpstream.await(clientSawFirst);
          ScriptedUpstream.writeChunk(out, CHUNK.formatted("second"));
          ScriptedUpstream.writeChunk(out, "data: [DONE]\n\n");
          ScriptedUpstream.endChunks(out);
        });
        GatewayHarness harness = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      List<String> lines = new ArrayList<>();
      try (BufferedReader reader = openStream(harness)) {
        String line;
        while ((line = reader.readLine()) != null) {
          if (line.isEmpty()) {
            continue;
          }
          lines.add(line);
          if (line.contains("first")) {
            clientSawFirst.countDown();
          }
        }
      }
      assertThat(lines).hasSize(3);
      assertThat(lines.get(0)).contains("first");
      assertThat(lines.get(1)).contains("second");
      assertThat(lines.get(2)).isEqualTo("data: [DONE]");
    }
  }

  @Test
  void upstreamCutMidStreamEndsWithAnErrorEvent() throws Exception {
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, CHUNK.formatted("partial"));
          // the upstream dies here: no [DONE], no terminating chunk
        });
        GatewayHarness harness = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      List<String> lines = new ArrayList<>();
      try (BufferedReader reader = openStream(harness)) {
        reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
      }
      assertThat(lines.get(0)).contains("partial");
      assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("data: {\"error\""));
      assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
    }
  }

  @Test
  void upstreamSilentLongerThanTheTimeoutEndsWithATimeoutErrorEvent() throws Exception {
    CountDownLatch testOver = new CountDownLatch(1);
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, CHUNK.formatted("before the silence"));
          testOver.await(10, TimeUnit.SECONDS);
        });
        GatewayHarness harness = GatewayHarness.start(
            "cloud:\n  baseUrl: " + upstream.baseUrl() + "\n  timeout: 300ms")) {
      List<String> lines = new ArrayList<>();
      try (BufferedReader reader = openStream(harness)) {
        reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
      }
      assertThat(lines.get(0)).contains("before the silence");
      assertThat(lines).anySatisfy(line -> assertThat(line)
          .startsWith("data: {\"error\"").contains("sent no whole event within 300ms"));
      assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
    } finally {
      testOver.countDown();
    }
  }

  private static BufferedReader openStream(GatewayHarness harness) throws Exception {
    HttpResponse<java.io.InputStream> response = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(harness.url("/v1/chat/completions")))
            .header("Authorization", "Bearer " + GOLD_KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", true)))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream");
    return new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
  }
}
