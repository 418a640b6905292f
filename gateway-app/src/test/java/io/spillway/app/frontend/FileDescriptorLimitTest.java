package io.spillway.app.frontend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway in its own JVM under a low file-descriptor limit ({@code prlimit --nofile}), with the
 * default {@code server.maxConnections: 20000}: it lowers the limit at start without a warning (the
 * default is a ceiling; {@code serve} says how many it accepts), {@code /readyz} shows both numbers, and connections past the lowered limit get the
 * documented 503 instead of hanging on an {@code accept} that has no descriptor left.
 */
class FileDescriptorLimitTest {
  private static final Path PRLIMIT = Path.of("/usr/bin/prlimit");
  private static final int DESCRIPTOR_LIMIT = 640;
  private static final Pattern SERVING = Pattern.compile("serving http://127\\.0\\.0\\.1:(\\d+)/v1");

  @TempDir
  Path dir;
  private Process gateway;
  private final List<RawHttp> clients = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (RawHttp client : clients) {
      client.close();
    }
    if (gateway != null) {
      gateway.destroyForcibly();
    }
  }

  @Test
  void underALowDescriptorLimitConnectionsPastTheLoweredLimitGet503() throws Exception {
    assumePrlimit();
    Path log = dir.resolve("gateway.log");
    int port = startGateway(log);

    JsonNode connections;
    try (RawHttp probe = new RawHttp(port)) {
      probe.send("GET /readyz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n");
      connections = Json.parse(probe.read().body()).path("connections");
    }
    int effective = connections.path("effective").asInt();
    assertThat(connections.path("configured").asInt()).isEqualTo(20_000);
    assertThat(connections.path("fileDescriptorLimit").asInt()).isEqualTo(DESCRIPTOR_LIMIT);
    assertThat(effective).isBetween(2, DESCRIPTOR_LIMIT / 2);
    List<String> lines = Files.readAllLines(log);
    assertThat(lines).as("the default maxConnections is a ceiling fitted quietly, not a warning")
        .noneMatch(l -> l.contains("WARN") && l.contains("RLIMIT_NOFILE"));
    assertThat(lines).contains("spillway: connections: up to " + effective + " (what the file-descriptor limit "
        + DESCRIPTOR_LIMIT + " holds)");

    int accepted = 0;
    RawHttp.Answer refusal = null;
    while (refusal == null && accepted <= effective) {
      RawHttp client = new RawHttp(port);
      clients.add(client);
      client.send("GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n");
      RawHttp.Answer answer = client.read();
      if (answer.status() == 200) {
        accepted++;
      } else {
        refusal = answer;
      }
    }

    assertThat(refusal).as("a connection past the limit is refused, not left hanging").isNotNull();
    assertThat(refusal.status()).isEqualTo(503);
    assertThat(refusal.body()).contains("too_many_connections");
    assertThat(refusal.header("retry-after")).isEqualTo("1");
    // The probe's own connection may still be counted for a moment after it closed.
    assertThat(accepted).isBetween(effective - 1, effective);

    clients.remove(0).close();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      try (RawHttp again = new RawHttp(port)) {
        again.send("GET /healthz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n");
        assertThat(again.read().status()).as("a freed place is taken again").isEqualTo(200);
      }
    });
  }

  private int startGateway(Path log) throws IOException {
    Path config = dir.resolve("gateway.yaml");
    Files.writeString(config, """
        server: {host: 127.0.0.1, port: 0}
        cloud: {baseUrl: "http://127.0.0.1:9/v1", apiKey: sk-unused}
        local: {enabled: false}
        keys:
          - {key: sk-fd-test-key, team: fd, tier: gold}
        store: memory
        """);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    gateway = new ProcessBuilder(PRLIMIT.toString(), "--nofile=" + DESCRIPTOR_LIMIT + ":" + DESCRIPTOR_LIMIT,
            java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            "io.spillway.app.Main", "serve", "--config", config.toString())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    int[] port = new int[1];
    await("gateway announces its address").atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(50))
        .until(() -> {
          assertThat(gateway.isAlive()).as("gateway alive; see " + log).isTrue();
          Matcher m = SERVING.matcher(Files.readString(log, StandardCharsets.UTF_8));
          if (m.find()) {
            port[0] = Integer.parseInt(m.group(1));
            return true;
          }
          return false;
        });
    return port[0];
  }

  private static void assumePrlimit() {
    if (Files.isExecutable(PRLIMIT)) {
      return;
    }
    String reason = PRLIMIT + " is not installed (util-linux)";
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(reason + "; CI must run the file-descriptor limit test");
    }
    Assumptions.abort(reason);
  }
}
