package io.spillway.app.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real nginx running docker/nginx-fleet.conf as shipped, with only its addresses rendered: the
 * replicas' {@code spillway-N:8080} become their loopback ports and {@code listen 8080} a free port.
 * Its access log records, per test request ({@code X-Test-Id}), which replica it went to.
 */
final class FleetNginx implements AutoCloseable {
  private static final Pattern REPLICA = Pattern.compile("server spillway-(\\d):8080");
  final int port;
  private final Path dir;
  private final Process process;

  private FleetNginx(int port, Path dir, Process process) {
    this.port = port;
    this.dir = dir;
    this.process = process;
  }

  /** The shipped file with {@code spillway-N:8080} → {@code 127.0.0.1:<port of replica N>} and a loopback listener. */
  static String render(String shipped, List<Integer> replicaPorts, int port) {
    Matcher m = REPLICA.matcher(shipped);
    StringBuilder out = new StringBuilder();
    int replaced = 0;
    while (m.find()) {
      m.appendReplacement(out, "server 127.0.0.1:" + replicaPorts.get(Integer.parseInt(m.group(1)) - 1));
      replaced++;
    }
    m.appendTail(out);
    assertThat(replaced).as("nginx-fleet.conf names one server per replica").isEqualTo(replicaPorts.size());
    String rendered = out.toString().replace("listen 8080;", "listen 127.0.0.1:" + port + ";");
    assertThat(rendered).as("nginx-fleet.conf listens on 8080").contains("listen 127.0.0.1:" + port + ";");
    return rendered;
  }

  static FleetNginx start(Path dir, List<Integer> replicaPorts) throws IOException {
    Path nginx = ExternalTool.require("nginx", "nginx");
    Path shipped = RepositoryFiles.root().resolve("docker/nginx-fleet.conf");
    int port = PrometheusServer.freePort();
    Files.createDirectories(dir.resolve("tmp"));
    Files.writeString(dir.resolve("spillway-fleet.conf"), render(Files.readString(shipped), replicaPorts, port));
    String root = Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid")) ? "user root;\n" : "";
    Files.writeString(dir.resolve("nginx.conf"), root + """
        worker_processes 1;
        pid %1$s/nginx.pid;
        error_log %1$s/error.log warn;
        events { worker_connections 1024; }
        http {
          log_format fleet '$http_x_test_id $status $upstream_addr $upstream_status';
          access_log %1$s/access.log fleet;
          client_body_temp_path %1$s/tmp/body;
          proxy_temp_path %1$s/tmp/proxy;
          fastcgi_temp_path %1$s/tmp/fastcgi;
          uwsgi_temp_path %1$s/tmp/uwsgi;
          scgi_temp_path %1$s/tmp/scgi;
          include %1$s/spillway-fleet.conf;
        }
        """.formatted(dir));
    Process process = new ProcessBuilder(nginx.toString(), "-p", dir.toString(), "-c", dir.resolve("nginx.conf").toString(),
            "-g", "daemon off;")
        .redirectErrorStream(true).redirectOutput(dir.resolve("nginx.out").toFile()).start();
    FleetNginx server = new FleetNginx(port, dir, process);
    await("nginx listens").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> {
      if (!process.isAlive()) {
        throw new IllegalStateException("nginx exited:\n" + Files.readString(dir.resolve("nginx.out"))
            + Files.readString(dir.resolve("error.log")));
      }
      try (Socket socket = new Socket("127.0.0.1", port)) {
        return true;
      } catch (IOException e) {
        return false;
      }
    });
    return server;
  }

  String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  /** Test request id → the replica addresses nginx tried for it, as its access log has them. */
  Map<String, String> upstreamOf() {
    try {
      Map<String, String> upstreams = new HashMap<>();
      for (String line : Files.readAllLines(dir.resolve("access.log"))) {
        String[] fields = line.split(" ", 3);
        if (fields.length == 3 && !fields[0].equals("-")) {
          upstreams.put(fields[0], fields[2]);
        }
      }
      return upstreams;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
