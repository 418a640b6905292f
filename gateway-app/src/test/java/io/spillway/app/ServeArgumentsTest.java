package io.spillway.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which command lines start the gateway without picocli, and what they mean. */
class ServeArgumentsTest {
  @Test
  void noArgumentsServeTheDefaultConfig() {
    assertThat(ServeArguments.parse()).isEqualTo(new ServeArguments(Path.of("config/gateway.yaml"), null));
    assertThat(ServeArguments.parse("serve")).isEqualTo(new ServeArguments(Path.of("config/gateway.yaml"), null));
  }

  @Test
  void serveReadsConfigAndPortInEitherOrderAndSpelling() {
    ServeArguments expected = new ServeArguments(Path.of("/etc/spillway.yaml"), 8081);

    assertThat(ServeArguments.parse("serve", "--config", "/etc/spillway.yaml", "--port", "8081")).isEqualTo(expected);
    assertThat(ServeArguments.parse("serve", "--port=8081", "--config=/etc/spillway.yaml")).isEqualTo(expected);
    assertThat(ServeArguments.parse("serve", "--port", "0").port()).isZero();
  }

  @Test
  void theDefaultCommandTakesOnlyConfig() {
    assertThat(ServeArguments.parse("--config", "a.yaml")).isEqualTo(new ServeArguments(Path.of("a.yaml"), null));
    assertThat(ServeArguments.parse("--port", "8081")).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "serve --help", "--help", "--version", "serve -h", "demo", "check-config", "hash-key", "simulate",
      "serve --config", "serve --config a.yaml --config b.yaml", "serve --port 80 --port 81",
      "serve --port eighty", "serve --port -1", "serve --port 123456", "serve --config --port",
      "serve @args.txt", "serve --config @args.txt", "serve extra", "serve -- --config", "--config a.yaml serve",
      "serve --config="})
  void everythingElseIsLeftToPicocli(String line) {
    assertThat(ServeArguments.parse(line.split(" "))).isNull();
  }
}
