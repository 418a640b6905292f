package io.spillway.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.Gateway;
import io.spillway.app.MainAccess;
import io.spillway.config.ConfigLoader;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A start that cannot go on for a reason the user can fix says so in one line, with exit code 1. */
@org.junit.jupiter.api.Timeout(60)
class StartupFailuresTest {
  @TempDir Path dir;

  record Result(int exit, String err) {}

  Result serve(Path config) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = MainAccess.run(new ByteArrayInputStream(new byte[0]), new PrintWriter(out, true),
        new PrintWriter(err, true), "serve", "--port", "0", "--config", config.toString());
    return new Result(exit, err.toString());
  }

  private Path config(String store) throws Exception {
    Path config = dir.resolve("gateway.yaml");
    Files.writeString(config, """
        server: { host: 127.0.0.1, port: 0 }
        cloud: { baseUrl: "http://127.0.0.1:9/v1", apiKey: sk-unused }
        local: { enabled: false }
        keys:
          - { key: sk-start-key, team: ci, tier: gold }
        store: "%s"
        """.formatted(store));
    return config;
  }

  @Test
  void aSecondGatewayOnTheSameDataDirectoryFailsInOneLineWithExitOne() throws Exception {
    Path data = dir.resolve("data");
    Path config = config("embedded:" + data);
    try (Gateway first = Gateway.start(new ConfigLoader(Map.<String, String>of()::get).load(config), Clock.systemUTC())) {
      Result second = serve(config);

      assertThat(second.exit()).isEqualTo(1);
      assertThat(second.err().lines().toList()).containsExactly("spillway: cannot start: the data directory " + data
          + " is in use by another Spillway (its store files are locked); stop that one, or give this one its own"
          + " directory (store: embedded:<dir>)");
    }
  }

  @Test
  void aConfigThatDoesNotExistFailsInOneLineWithExitOne() {
    Result result = serve(dir.resolve("missing.yaml"));

    assertThat(result.exit()).isEqualTo(1);
    assertThat(result.err().lines().toList())
        .containsExactly("spillway: cannot read the config: " + dir.resolve("missing.yaml") + ": no such file");
  }

  @Test
  void aConfigThatCannotBeReadFailsInOneLineWithExitOne() throws Exception {
    Path config = config("memory");
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("---------"));
    Assumptions.assumeFalse(Files.isReadable(config), "running as a user who reads every file (root)");

    Result result = serve(config);

    assertThat(result.exit()).isEqualTo(1);
    assertThat(result.err().lines().toList())
        .containsExactly("spillway: cannot read the config: " + config + ": cannot read (permission denied)");
  }

  @Test
  void aConfigThatIsReadButInvalidStillExitsTwo() throws Exception {
    Path config = dir.resolve("bad.yaml");
    Files.writeString(config, "server:\n  port: eighty\n");

    Result result = serve(config);

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err().lines().toList()).containsExactly("spillway: invalid config: " + config
        + ": key 'server.port': expected a whole number, got 'eighty'");
  }
}
