package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.Main;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.io.TempDir;

/**
 * A prompt that is cheap to send must be cheap to serve. The gateway runs in a child JVM with a
 * 256 MiB heap (as {@code java -Xmx256m -jar spillway.jar serve} would), so that a tokenizer that
 * allocates without bound shows up as an {@code OutOfMemoryError} and a request left unanswered.
 */
class PromptCostTest {
  private static final Pattern SERVING = Pattern.compile("serving (http://\\S+/v1)");

  @Test
  void sevenMegabytesOfOneLetterAreAnsweredUnderA256MiBHeapOnEveryTier(@TempDir Path dir, TestReporter report)
      throws Exception {
    WireMockServer cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("fine")));
    Path config = dir.resolve("gateway.yaml");
    Files.writeString(config, """
        server: { host: 127.0.0.1, port: 0 }
        cloud: { baseUrl: %s/v1, apiKey: sk-cloud-key-for-the-child, timeout: 30s }
        local: { enabled: false }
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
          - { key: %s, team: sandbox, tier: bronze }
        store: memory
        """.formatted(cloud.baseUrl(), GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY));
    Process child = new ProcessBuilder(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "--enable-native-access=ALL-UNNAMED",
        "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        Main.class.getName(), "serve", "--config", config.toString()))
        .redirectErrorStream(true)
        .start();
    StringBuilder output = new StringBuilder();
    CompletableFuture<String> baseUrl = new CompletableFuture<>();
    Thread.ofVirtual().start(() -> {
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = lines.readLine()) != null; ) {
          synchronized (output) {
            output.append(line).append('\n');
          }
          Matcher serving = SERVING.matcher(line);
          if (serving.find()) {
            baseUrl.complete(serving.group(1));
          }
        }
      } catch (Exception ignored) {
        // the child ended
      }
      baseUrl.completeExceptionally(new IllegalStateException("the child gateway ended before serving"));
    });
    try {
      String url = baseUrl.get(60, TimeUnit.SECONDS) + "/chat/completions";
      HttpClient http = HttpClient.newHttpClient();
      String prompt = "a".repeat(7 * 1024 * 1024 - 200);
      for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
        long started = System.nanoTime();
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + key)
                .POST(HttpRequest.BodyPublishers.ofString(GatewayHarness.chatBody("gpt-4o", prompt, false)))
                .build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(answer.statusCode()).as("answer for %s; child output:%n%s", key, output).isEqualTo(200);
        assertThat(answer.body()).contains("fine");
        report.publishEntry("answered in ms", Long.toString((System.nanoTime() - started) / 1_000_000));
      }
      assertThat(child.isAlive()).as("child output:%n%s", output).isTrue();
      synchronized (output) {
        assertThat(output.toString()).doesNotContain("OutOfMemoryError");
      }
    } finally {
      child.destroy();
      if (!child.waitFor(10, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
      cloud.stop();
    }
  }
}
