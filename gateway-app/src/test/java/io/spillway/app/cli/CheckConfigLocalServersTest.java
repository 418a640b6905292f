package io.spillway.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.MainAccess;
import io.spillway.app.deploy.RepositoryFiles;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code check-config} with {@code local.servers}: the shipped two-box example, and errors named per server. */
class CheckConfigLocalServersTest {
  record Result(int exit, String out, String err) {}

  Result checkConfig(Path file) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = MainAccess.run(new ByteArrayInputStream(new byte[0]), new PrintWriter(out, true),
        new PrintWriter(err, true), java.util.Map.of("SPILLWAY_CLOUD_API_KEY", "sk-cloud", "SPILLWAY_CI_KEY", "ci-key")::get,
        "check-config", "--config", file.toString());
    return new Result(exit, out.toString(), err.toString());
  }

  @Test
  void theTwoGpuExampleIsValidAndPrintsBothServers() {
    Result result = checkConfig(RepositoryFiles.root().resolve("config/gpus.example.yaml"));

    assertThat(result.exit()).as(result.err()).isZero();
    assertThat(result.out()).contains("- name: gpu-a", "- name: gpu-b", "http://gpu-b:11434", "serverBreaker")
        .doesNotContain("  baseUrl: \"http://gpu-a:11434\"\n  models");
  }

  @Test
  void aBadServerIsNamedByItsIndex(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, """
        local:
          servers:
            - { name: gpu-a, baseUrl: "http://gpu-a:11434" }
            - { name: gpu-b, baseUrl: "gpu-b:11434" }
        """);

    Result result = checkConfig(file);

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("key 'local.servers[1].baseUrl'", "is not an http(s) URL");
  }

  @Test
  void baseUrlAndServersTogetherAreRefused(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, """
        local:
          baseUrl: http://gpu-a:11434
          servers:
            - { name: gpu-b, baseUrl: "http://gpu-b:11434" }
        """);

    Result result = checkConfig(file);

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("key 'local.servers': cannot be combined with local.baseUrl");
  }
}
