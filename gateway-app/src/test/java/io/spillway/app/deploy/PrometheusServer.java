package io.spillway.app.deploy;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A real Prometheus server of its own: a free loopback port, a temporary data directory, 1 s intervals. */
public final class PrometheusServer implements AutoCloseable {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final ObjectMapper json = new ObjectMapper();
  private final Path dir;
  private final Process process;
  private final int port;

  private PrometheusServer(Path dir, Process process, int port) {
    this.dir = dir;
    this.process = process;
    this.port = port;
  }

  public static PrometheusServer start(Path binary, Path rules, int... gatewayPorts) throws IOException {
    Path dir = Files.createTempDirectory("spillway-prometheus");
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(config, """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files:
          - %s
        scrape_configs:
          - job_name: spillway
            metrics_path: /metrics
            static_configs:
              - targets: [%s]
        """.formatted(rules, java.util.Arrays.stream(gatewayPorts).mapToObj(p -> "\"127.0.0.1:" + p + "\"")
            .collect(java.util.stream.Collectors.joining(", "))));
    int port = freePort();
    Process process = new ProcessBuilder(binary.toString(), "--config.file=" + config,
            "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
        .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
    PrometheusServer server = new PrometheusServer(dir, process, port);
    try {
      await("Prometheus is ready").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> server.get("/-/ready").statusCode() == 200);
    } catch (RuntimeException e) {
      server.close();
      throw new IllegalStateException("Prometheus did not start:\n" + Files.readString(dir.resolve("prometheus.log")), e);
    }
    return server;
  }

  /** The states ({@code pending}, {@code firing}) of the alerts of that name Prometheus holds now. */
  public List<String> alerts(String name) throws IOException {
    List<String> states = new ArrayList<>();
    for (JsonNode alert : json.readTree(get("/api/v1/alerts").body()).path("data").path("alerts")) {
      if (alert.path("labels").path("alertname").asText().equals(name)) {
        states.add(alert.path("state").asText());
      }
    }
    return states;
  }

  public List<JsonNode> query(String promql) throws IOException {
    String q = java.net.URLEncoder.encode(promql, java.nio.charset.StandardCharsets.UTF_8);
    List<JsonNode> result = new ArrayList<>();
    json.readTree(get("/api/v1/query?query=" + q).body()).path("data").path("result").forEach(result::add);
    return result;
  }

  HttpResponse<String> get(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
