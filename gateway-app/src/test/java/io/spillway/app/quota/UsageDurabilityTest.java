package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded usage store through real processes: the gateway runs as its own JVM
 * ({@code Main serve}), is killed with SIGKILL or stopped with SIGTERM in the middle of traffic, and
 * a second gateway on the same directory reports what survived.
 */
class UsageDurabilityTest {
  private static final int PROMPT_TOKENS = 7;
  private static final int COMPLETION_TOKENS = 13;
  private static final long PER_REQUEST = PROMPT_TOKENS + COMPLETION_TOKENS;
  private static final String FLUSH_INTERVAL = "200ms";
  private static final int CLIENTS = 8;
  private static final Pattern SERVING = Pattern.compile("serving (http://\\S+)/v1");

  /** Kept when a test fails: the gateways' logs are in it. */
  @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir;
  private WireMockServer cloud;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<Process> processes = new ArrayList<>();

  @BeforeEach
  void startCloud() {
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(200,
        OpenAiStubs.chatCompletionBody("ok", PROMPT_TOKENS, COMPLETION_TOKENS))));
  }

  @AfterEach
  void stopAll() {
    processes.forEach(Process::destroyForcibly);
    cloud.stop();
  }

  @Test
  void killNineUnderLoadLosesAtMostWhatSettledAfterTheLastFlush() throws Exception {
    Path data = dir.resolve("data");
    Gw first = startGateway(data, "first");
    Load load = new Load(first.baseUrl);
    Instant durablePoint;
    long completedBeforePoint;
    try {
      await("traffic flows").atMost(Duration.ofSeconds(20)).until(() -> load.completed() >= 40);
      durablePoint = Instant.now();
      completedBeforePoint = load.completedBefore(durablePoint);
      await("the first gateway reports a flush that started after the point")
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> durableAsOf(first).filter(at -> at.isAfter(durablePoint)).isPresent());
      await("traffic still flows at the kill").atMost(Duration.ofSeconds(20))
          .until(() -> load.completedBefore(Instant.now()) > completedBeforePoint);
      first.process.destroyForcibly();
      assertThat(first.process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    } finally {
      load.stop();
    }
    assertThat(first.process.exitValue()).as("SIGKILL, not a clean exit").isEqualTo(137);

    Gw second = startGateway(data, "second");
    long used = report(second).at("/pools/gold/used").asLong();
    assertThat(used % PER_REQUEST).as("whole requests only").isZero();
    assertThat(used)
        .as("every request answered before a flush that the store reported as done survives")
        .isGreaterThanOrEqualTo(completedBeforePoint * PER_REQUEST)
        // Bounded by what reached the cloud, not by the client's send() calls: the JDK client may
        // resend a request on a pooled connection it finds closed, and each settles what it used.
        .as("nothing is counted that the cloud did not answer (logs in %s)", dir)
        .isLessThanOrEqualTo(cloud.getAllServeEvents().size() * PER_REQUEST);
    assertThat(report(second).at("/teams/release/used").asLong())
        .as("the flush that survived wrote the team's usage and the pool's from one cut: they agree")
        .isEqualTo(used);
  }

  @Test
  void gracefulStopUnderLoadKeepsEveryAnsweredRequest() throws Exception {
    Path data = dir.resolve("data");
    Gw first = startGateway(data, "first");
    Load load = new Load(first.baseUrl);
    try {
      await("traffic flows").atMost(Duration.ofSeconds(20)).until(() -> load.completed() >= 40);
      first.process.destroy();
      assertThat(first.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      load.stop();
    }
    assertThat(first.process.exitValue()).as("SIGTERM ends the JVM through its shutdown hook").isEqualTo(143);

    Gw second = startGateway(data, "second");
    JsonNode report = report(second);
    assertThat(report.at("/pools/gold/used").asLong())
        .as("used equals the usage of the answered requests exactly")
        .isEqualTo(load.completed() * PER_REQUEST);
    assertThat(report.at("/teams/release/used").asLong()).isEqualTo(load.completed() * PER_REQUEST);
    assertThat(report.at("/pools/gold/reserved").asLong()).isZero();
  }

  private record Gw(Process process, String baseUrl) {}

  private Gw startGateway(Path data, String name) throws IOException {
    Path config = dir.resolve(name + ".yaml");
    Files.writeString(config, """
        server: {host: 127.0.0.1, port: 0, drainTimeout: 2s}
        admin: {token: %s}
        cloud: {baseUrl: %s/v1, apiKey: sk-company-cloud-secret, timeout: 5s}
        keys:
          - {key: %s, team: release, tier: gold}
        quota: {monthlyTokens: 1000000000, flushInterval: %s}
        store: "embedded:%s"
        """.formatted(ADMIN_TOKEN, cloud.baseUrl(), GOLD_KEY, FLUSH_INTERVAL, data));
    Path log = dir.resolve(name + ".log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
            "io.spillway.app.Main", "serve", "--config", config.toString())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    processes.add(process);
    String[] baseUrl = new String[1];
    await(name + " gateway announces its address")
        .atMost(Duration.ofSeconds(40))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> {
          assertThat(process.isAlive()).as("gateway process alive; see " + log).isTrue();
          Matcher m = SERVING.matcher(Files.readString(log, StandardCharsets.UTF_8));
          if (m.find()) {
            baseUrl[0] = m.group(1);
            return true;
          }
          return false;
        });
    return new Gw(process, baseUrl[0]);
  }

  private JsonNode report(Gw gateway) throws IOException, InterruptedException {
    HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl + "/admin/quota"))
        .timeout(Duration.ofSeconds(10))
        .header("Authorization", "Bearer " + ADMIN_TOKEN)
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).isEqualTo(200);
    return Json.parse(answer.body());
  }

  private java.util.Optional<Instant> durableAsOf(Gw gateway) throws IOException, InterruptedException {
    JsonNode at = report(gateway).at("/store/durableAsOf");
    return at.isTextual() ? java.util.Optional.of(Instant.parse(at.asText())) : java.util.Optional.empty();
  }

  /** {@value #CLIENTS} clients on virtual threads, each sending one request after the other. */
  private final class Load {
    private final AtomicBoolean running = new AtomicBoolean(true);
    /** When each 200 reached the client (taken after the body was read). */
    private final ConcurrentLinkedQueue<Instant> answered = new ConcurrentLinkedQueue<>();
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    Load(String baseUrl) {
      HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/chat/completions"))
          .timeout(Duration.ofSeconds(10))
          .header("Content-Type", "application/json")
          .header("Authorization", "Bearer " + GOLD_KEY)
          .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "count me", false)))
          .build();
      for (int i = 0; i < CLIENTS; i++) {
        threads.submit(() -> {
          while (running.get()) {
            try {
              HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
              if (answer.statusCode() == 200) {
                answered.add(Instant.now());
              }
            } catch (IOException e) {
              // The gateway went away under this request: it is not counted as answered.
            } catch (InterruptedException e) {
              return;
            }
          }
        });
      }
    }

    long completed() {
      return answered.size();
    }

    long completedBefore(Instant point) {
      return answered.stream().filter(at -> at.isBefore(point)).count();
    }

    void stop() {
      running.set(false);
      threads.shutdown();
      try {
        assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).as("clients stop").isTrue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
