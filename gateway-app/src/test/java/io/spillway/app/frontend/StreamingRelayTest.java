package io.spillway.app.frontend;

import static io.spillway.app.testing.GatewayHarness.CLOUD_KEY;
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
  void unchangedEventsLeaveAsTheBytesTheyArrivedAs() throws Exception {
    // CRLF and CR line ends, an id line, a comment, a field without its space, data over two lines,
    // and reads that split events: the client gets the same bytes, keep-alives between events aside.
    String events = "id: 1\r\ndata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n"
        + ": a note\rdata:{\"id\":\"c\",\r"
        + "data: \"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u00e9 \u2603\"}}]}\r\r"
        + "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
        + "data: [DONE]\r\n\r\n";
    int split = events.indexOf("data: \"choices\"") + 3;
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, ": keep-alive\r\n\r\n");
          ScriptedUpstream.writeChunk(out, events.substring(0, split));
          ScriptedUpstream.writeChunk(out, events.substring(split));
          ScriptedUpstream.endChunks(out);
        });
        GatewayHarness harness = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      try (java.io.InputStream body = openStreamBody(harness)) {
        assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(events);
      }
    }
  }

  @Test
  void changedEventsAreEncodedAgain() throws Exception {
    // An upstream that echoes the cloud key: those events are remade with the key redacted (or, in
    // an id line, left out) and written as the gateway writes events; the others leave as they came.
    String first = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n";
    String echo = "id: 2\r\ndata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + CLOUD_KEY
        + "\"}}]}\r\n\r\n";
    String idEcho = "id: " + CLOUD_KEY + "\r\ndata: {\"id\":\"c\",\"choices\":[]}\r\n\r\n";
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, first + echo + idEcho + "data: [DONE]\r\n\r\n");
          ScriptedUpstream.endChunks(out);
        });
        GatewayHarness harness = GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl())) {
      try (java.io.InputStream body = openStreamBody(harness)) {
        assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(first
            + "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"[redacted]\"}}]}\n\n"
            + "data: {\"id\":\"c\",\"choices\":[]}\n\n"
            + "data: [DONE]\r\n\r\n");
      }
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
    return new BufferedReader(new InputStreamReader(openStreamBody(harness), StandardCharsets.UTF_8));
  }

  private static java.io.InputStream openStreamBody(GatewayHarness harness) throws Exception {
    HttpResponse<java.io.InputStream> response = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(harness.url("/v1/chat/completions")))
            .header("Authorization", "Bearer " + GOLD_KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", true)))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream");
    return response.body();
  }
}
