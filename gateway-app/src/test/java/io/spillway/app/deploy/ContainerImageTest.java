package io.spillway.app.deploy;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.testing.OpenAiStubs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer.OrderAnnotation;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * docker/Dockerfile as shipped, built with buildah ({@code buildah bud --isolation chroot}, no
 * daemon) on stand-ins for its base images (.ci/base-images: Debian from debootstrap plus this
 * machine's JDK 25), then run as a container would be ({@code buildah run --isolation chroot}: the
 * image's entrypoint and command, its user, its environment, a volume on /app/data) on the host's
 * loopback, with the image's own config (docker/gateway.docker.yaml) driven by its variables.
 */
@Tag("packaged")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(OrderAnnotation.class)
class ContainerImageTest {
  static final String IMAGE = "localhost/spillway:ci-test";
  static final String CI_KEY = "sk-image-ci-key";
  static final String ADMIN_TOKEN = "image-admin-token";
  static final ObjectMapper JSON = new ObjectMapper();
  static final Path ROOT = RepositoryFiles.root();

  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  Path buildah;
  Path dir;
  Path data;
  WireMockServer cloud;
  String container;
  JsonNode image;
  JsonNode config;
  int port;
  Process running;

  @BeforeAll
  void buildTheImage() throws IOException {
    buildah = ExternalTool.require("buildah", "buildah");
    ExternalTool.require("debootstrap", "debootstrap");
    dir = Files.createTempDirectory("spillway-image");
    ExternalTool.Result bases = ExternalTool.run(ROOT, Duration.ofMinutes(20), ROOT.resolve(".ci/base-images").toString());
    assertThat(bases.exitCode()).as(bases.output()).isZero();
    ExternalTool.Result build = ExternalTool.run(ROOT, Duration.ofMinutes(40), buildah.toString(), "bud",
        "--isolation", "chroot", "--pull-never", "--layers", "--format", "docker", "-f", "docker/Dockerfile", "-t", IMAGE, ".");
    assertThat(build.exitCode()).as(tail(build.output())).isZero();
    String inspected = buildah("inspect", "--type", "image", IMAGE);
    image = JSON.readTree(inspected.substring(inspected.indexOf('{')));
    config = image.at("/OCIv1/config");

    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(OpenAiStubs.chatCompletion("Rivers run to the sea")));
    cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(OpenAiStubs.chatStream(true, "Rivers ", "run ", "to ", "the ", "sea")));
    cloud.stubFor(post("/v1/chat/completions").atPriority(0)
        .withRequestBody(matchingJsonPath("$.messages[0].content", equalTo("slow")))
        .willReturn(OpenAiStubs.chatStream(true, "one ", "two ", "three ", "four ", "five ", "six ").withChunkedDribbleDelay(8, 4000)));

    data = dir.resolve("data");
    Files.createDirectories(data);
    chown(data, 10001);
    port = PrometheusServer.freePort();
    String[] created = buildah("from", "--pull-never", IMAGE).trim().split("\n");
    container = created[created.length - 1].trim();
    List<String> env = List.of("SPILLWAY_PORT=" + port, "SPILLWAY_HOST=127.0.0.1",
        "SPILLWAY_CLOUD_BASE_URL=" + cloud.baseUrl() + "/v1", "SPILLWAY_CLOUD_API_KEY=sk-image-cloud",
        "SPILLWAY_CI_KEY=" + CI_KEY, "SPILLWAY_ADMIN_TOKEN=" + ADMIN_TOKEN, "SPILLWAY_LOCAL_ENABLED=false",
        "SPILLWAY_STORE=embedded:/app/data");
    List<String> configure = new ArrayList<>(List.of("config"));
    env.forEach(e -> {
      configure.add("--env");
      configure.add(e);
    });
    configure.add(container);
    buildah(configure.toArray(String[]::new));
  }

  @AfterAll
  void removeTheContainer() throws IOException {
    stop();
    if (container != null) {
      ExternalTool.run(ROOT, Duration.ofMinutes(2), buildah.toString(), "rm", container);
    }
    if (cloud != null) {
      cloud.stop();
    }
    if (dir != null) {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Starts the container the way its runtime would: the image's entrypoint and command, /app/data a volume. */
  void start() throws IOException {
    List<String> command = new ArrayList<>(List.of(buildah.toString(), "run", "--isolation", "chroot",
        "-v", data + ":/app/data", container, "--"));
    config.path("Entrypoint").forEach(part -> command.add(part.asText()));
    config.path("Cmd").forEach(part -> command.add(part.asText()));
    running = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("container.log").toFile())).start();
    await("the container answers /healthz").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
        .until(() -> {
          if (!running.isAlive()) {
            throw new IllegalStateException("the container exited:\n" + tail(Files.readString(dir.resolve("container.log"))));
          }
          return status("/healthz") == 200;
        });
  }

  /** The JVM inside the container: the process the runtime's stop signal goes to. */
  ProcessHandle java() {
    return running.descendants().filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false))
        .findFirst().orElseThrow(() -> new AssertionError("no java process under buildah run"));
  }

  /** What {@code docker stop} does: SIGTERM to the container's process, then wait for it to exit. */
  int stop() {
    if (running == null || !running.isAlive()) {
      return running == null ? 0 : running.exitValue();
    }
    signal(java(), "TERM");
    try {
      if (!running.waitFor(60, TimeUnit.SECONDS)) {
        running.descendants().forEach(ProcessHandle::destroyForcibly);
        running.destroyForcibly();
        throw new AssertionError("the container did not stop within 60 s of SIGTERM");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return running.exitValue();
  }

  @Test
  @Order(1)
  void itRunsAsUid10001AndAnswersHealthAndReadiness() throws IOException {
    assertThat(config.path("User").asText()).isEqualTo("10001:10001");
    start();

    assertThat(status("/healthz")).isEqualTo(200);
    assertThat(status("/readyz")).isEqualTo(200);
    String status = Files.readString(Path.of("/proc", Long.toString(java().pid()), "status"));
    assertThat(status).containsPattern("(?m)^Uid:\\s+10001\\s+10001\\s+10001\\s+10001$");

    // The image's HEALTHCHECK, run in the container as the runtime would.
    JsonNode healthcheck = image.at("/Docker/config/Healthcheck/Test");
    assertThat(healthcheck.get(0).asText()).isEqualTo("CMD-SHELL");
    ExternalTool.Result health = ExternalTool.run(ROOT, Duration.ofMinutes(1), buildah.toString(), "run", "--isolation", "chroot",
        container, "--", "sh", "-c", healthcheck.get(1).asText());
    assertThat(health.exitCode()).as(health.output()).isZero();
  }

  @Test
  @Order(2)
  void itStartsFromItsAotCache() throws IOException {
    String commandLine = Files.readString(Path.of("/proc", Long.toString(java().pid()), "cmdline")).replace('\0', ' ');
    assertThat(commandLine).contains("-XX:AOTCache=/app/spillway.aot");

    // AOTMode=on makes the JVM refuse to start unless the cache fits this very JVM and jar.
    ExternalTool.Result strict = ExternalTool.run(ROOT, Duration.ofMinutes(2), buildah.toString(), "run", "--isolation", "chroot",
        container, "--", "java", "-XX:AOTCache=/app/spillway.aot", "-XX:AOTMode=on", "--enable-native-access=ALL-UNNAMED",
        "-jar", "/app/spillway.jar", "--version");
    assertThat(strict.exitCode()).as(strict.output()).isZero();
  }

  @Test
  @Order(3)
  void itServesAChatAndAStreamThroughItsCloud() throws IOException, InterruptedException {
    HttpResponse<String> chat = chat(false, "Write a haiku about rivers");
    assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
    assertThat(chat.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(JSON.readTree(chat.body()).at("/choices/0/message/content").asText()).isEqualTo("Rivers run to the sea");

    HttpResponse<String> stream = chat(true, "Write a haiku about rivers");
    assertThat(stream.statusCode()).isEqualTo(200);
    assertThat(stream.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
    assertThat(stream.body()).contains("\"sea\"").endsWith("data: [DONE]\n\n");
    assertThat(cloud.getAllServeEvents()).allSatisfy(e ->
        assertThat(e.getRequest().getHeader("Authorization")).isEqualTo("Bearer sk-image-cloud"));
  }

  @Test
  @Order(4)
  void usageInAppDataSurvivesARestart() throws IOException, InterruptedException {
    long before = teamUsage();
    assertThat(before).as("the chat and the stream were counted").isGreaterThan(0);

    assertThat(stop()).as("a clean exit on SIGTERM").isZero();
    assertThat(data.resolve("usage.mv.db")).exists();
    start();

    assertThat(teamUsage()).isEqualTo(before);
  }

  @Test
  @Order(5)
  void sigtermLetsAStreamInFlightFinish() throws Exception {
    CountDownLatch firstEvent = new CountDownLatch(1);
    CompletableFuture<String> stream = CompletableFuture.supplyAsync(() -> readStream(firstEvent));
    assertThat(firstEvent.await(30, TimeUnit.SECONDS)).as("the stream started").isTrue();

    ProcessHandle jvm = java();
    signal(jvm, "TERM");

    String body = stream.get(60, TimeUnit.SECONDS);
    assertThat(body).contains("six").endsWith("data: [DONE]\n\n");
    assertThat(running.waitFor(60, TimeUnit.SECONDS)).as("the container exits after the stream").isTrue();
    assertThat(running.exitValue()).isZero();
  }

  String readStream(CountDownLatch firstEvent) {
    HttpRequest request = chatRequest(true, "slow");
    try {
      HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      StringBuilder body = new StringBuilder();
      try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          body.append(line).append('\n');
          if (line.startsWith("data: ")) {
            firstEvent.countDown();
          }
        }
      }
      return body.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  HttpRequest chatRequest(boolean stream, String content) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(60))
        .header("Authorization", "Bearer " + CI_KEY)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"gpt-4o\",\"stream\":" + stream
            + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "")
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}"))
        .build();
  }

  HttpResponse<String> chat(boolean stream, String content) throws IOException, InterruptedException {
    return http.send(chatRequest(stream, content), HttpResponse.BodyHandlers.ofString());
  }

  long teamUsage() throws IOException, InterruptedException {
    HttpResponse<String> quota = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/admin/quota"))
        .header("Authorization", "Bearer " + ADMIN_TOKEN).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(quota.statusCode()).as(quota.body()).isEqualTo(200);
    return JSON.readTree(quota.body()).at("/teams/ci/used").asLong();
  }

  int status(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  String buildah(String... args) {
    List<String> command = new ArrayList<>(List.of(buildah.toString()));
    command.addAll(List.of(args));
    ExternalTool.Result result = ExternalTool.run(ROOT, Duration.ofMinutes(5), command.toArray(String[]::new));
    assertThat(result.exitCode()).as(String.join(" ", command) + ":\n" + result.output()).isZero();
    return result.output();
  }

  static void signal(ProcessHandle process, String signal) {
    ExternalTool.Result kill = ExternalTool.run(ROOT, Duration.ofSeconds(10), "kill", "-" + signal, Long.toString(process.pid()));
    assertThat(kill.exitCode()).as(kill.output()).isZero();
  }

  static void chown(Path path, int uid) {
    ExternalTool.Result chown = ExternalTool.run(ROOT, Duration.ofSeconds(10), "chown", uid + ":" + uid, path.toString());
    assertThat(chown.exitCode()).as(chown.output()).isZero();
  }

  static String tail(String output) {
    String[] lines = output.split("\n");
    return String.join("\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 60), lines.length));
  }
}
