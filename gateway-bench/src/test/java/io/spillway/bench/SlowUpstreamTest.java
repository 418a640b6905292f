package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fake upstream of {@code bench/stream-scale.sh} speaks HTTP/1.1 and h2c with prior knowledge
 * on one port and streams the same events either way, checked with OkHttp as a real client.
 */
class SlowUpstreamTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final String WITH_USAGE =
      "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"stream_options\":{\"include_usage\": true},\"messages\":[]}";
  private static final String WITHOUT_USAGE = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[]}";

  private SlowUpstream upstream;

  @BeforeEach
  void start() throws InterruptedException {
    upstream = SlowUpstream.start(0, new SlowStreamShape(3, Duration.ofMillis(5)), 1, 100_000);
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  @Test
  void h2cStreamsEveryEventThenUsageThenDoneWhenTheRequestAsksForUsage() throws IOException {
    OkHttpClient client = client(Protocol.H2_PRIOR_KNOWLEDGE);
    try (Response response = client.newCall(chat(WITH_USAGE)).execute()) {
      assertThat(response.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.header("Content-Type")).isEqualTo("text/event-stream");
      assertThat(dataLines(response.body().string())).containsExactly(
          "token 0 ", "token 1 ", "token 2 ", "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":6,\"total_tokens\":26}",
          "[DONE]");
    }
  }

  @Test
  void http1StreamsTheSameEventsWithoutUsageWhenNotAskedAndKeepsTheConnection() throws IOException {
    OkHttpClient client = client(Protocol.HTTP_1_1);
    for (int call = 0; call < 2; call++) {
      try (Response response = client.newCall(chat(WITHOUT_USAGE)).execute()) {
        assertThat(response.protocol()).isEqualTo(Protocol.HTTP_1_1);
        assertThat(response.header("Transfer-Encoding")).isEqualTo("chunked");
        assertThat(dataLines(response.body().string())).containsExactly("token 0 ", "token 1 ", "token 2 ", "[DONE]");
      }
    }
    assertThat(client.connectionPool().connectionCount()).as("one kept-alive connection").isEqualTo(1);
  }

  @Test
  void manyConcurrentH2cStreamsShareOneConnection() throws Exception {
    OkHttpClient client = client(Protocol.H2_PRIOR_KNOWLEDGE);
    try (Response first = client.newCall(chat(WITH_USAGE)).execute()) {
      assertThat(first.body().string()).endsWith("data: [DONE]\n\n");
    }
    List<Future<String>> streams = new ArrayList<>();
    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < 200; i++) {
        streams.add(threads.submit(() -> {
          try (Response response = client.newCall(chat(WITH_USAGE)).execute()) {
            return response.body().string();
          }
        }));
      }
    }
    for (Future<String> stream : streams) {
      assertThat(stream.get()).contains("\"total_tokens\":26").endsWith("data: [DONE]\n\n");
    }
    assertThat(client.connectionPool().connectionCount()).as("streams multiplexed on one connection").isEqualTo(1);
  }

  private static OkHttpClient client(Protocol protocol) {
    return new OkHttpClient.Builder().protocols(List.of(protocol)).build();
  }

  private Request chat(String body) {
    return new Request.Builder()
        .url("http://127.0.0.1:" + upstream.port() + "/v1/chat/completions")
        .post(RequestBody.create(body, JSON))
        .build();
  }

  /** Each event's content, its usage object, or {@code [DONE]}, in order. */
  private static List<String> dataLines(String sse) {
    List<String> out = new ArrayList<>();
    for (String line : sse.split("\n")) {
      if (line.equals("data: [DONE]")) {
        out.add("[DONE]");
      } else if (line.contains("\"usage\"")) {
        out.add(line.substring(line.indexOf("\"usage\""), line.length() - 1));
      } else if (line.startsWith("data: ")) {
        out.add(line.replaceAll(".*\"content\":\"([^\"]*)\".*", "$1"));
      }
    }
    return out;
  }
}
