package io.spillway.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.MainAccess;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The spillway.jar commands other than serve. */
class CommandLineTest {
  @TempDir Path dir;

  record Result(int exit, String out, String err) {}

  Result run(String stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = MainAccess.run(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
        new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Result(exit, out.toString(), err.toString());
  }

  @Test
  void hashKeyPrintsTheSha256OfTheKeyOnStdin() {
    Result result = run("my-team-key\n", "hash-key");
    assertThat(result.exit()).isZero();
    // sha256("my-team-key")
    assertThat(result.out().strip()).matches("sha256:[0-9a-f]{64}");
    assertThat(result.out().strip()).isEqualTo(run("my-team-key", "hash-key").out().strip());
    assertThat(result.out()).doesNotContain("my-team-key");
  }

  @Test
  void hashKeyWithEmptyInputFails() {
    Result result = run("", "hash-key");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("stdin");
  }

  @Test
  void checkConfigPrintsTheEffectiveConfigWithSecretsMasked() throws IOException {
    Path config = dir.resolve("gateway.yaml");
    Files.writeString(config, """
        admin: { token: super-secret-admin }
        cloud: { apiKey: sk-live-company-key }
        keys:
          - { key: plain-team-key, team: ci, tier: gold }
        store: redis://user:redispass@127.0.0.1:6379
        """);
    Result result = run("", "check-config", "--config", config.toString());
    assertThat(result.exit()).isZero();
    assertThat(result.out()).contains("valid").contains("capacityStreak: 3").contains("localFor: 5m")
        .contains("team: ci");
    assertThat(result.out()).doesNotContain("super-secret-admin").doesNotContain("sk-live-company-key")
        .doesNotContain("plain-team-key").doesNotContain("redispass");
  }

  @Test
  void checkConfigNamesFileKeyAndReasonAndExitsNonZero() throws IOException {
    Path config = dir.resolve("bad.yaml");
    Files.writeString(config, "failover:\n  capacityStreek: 3\n");
    Result result = run("", "check-config", "--config", config.toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains(config.toString()).contains("failover.capacityStreek").contains("unknown key");
  }

  @Test
  void theShippedDefaultConfigIsValid() {
    Path shipped = Path.of("..", "config", "gateway.yaml");
    Result result = run("", "check-config", "--config", shipped.toString());
    assertThat(result.err()).isEmpty();
    assertThat(result.exit()).isZero();
  }
}
