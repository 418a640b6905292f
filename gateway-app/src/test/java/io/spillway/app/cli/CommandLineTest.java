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
import io.spillway.app.observe.LogCapture;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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

  @ParameterizedTest
  @ValueSource(strings = {"serve", "--config", "serve --port 0 --config"})
  void serveWithAnInvalidConfigNamesFileKeyAndReasonAndExitsTwo(String command) throws IOException {
    Path config = dir.resolve("bad-serve.yaml");
    Files.writeString(config, "failover:\n  capacityStreek: 3\n");
    String[] words = command.split(" ");
    String[] args = java.util.Arrays.copyOf(words, words.length + (command.equals("serve") ? 2 : 1));
    if (command.equals("serve")) {
      args[1] = "--config";
    }
    args[args.length - 1] = config.toString();

    Result result = run("", args);

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err().strip()).startsWith("spillway: invalid config: " + config)
        .contains("failover.capacityStreek").contains("unknown key");
  }

  Result runWith(java.util.Map<String, String> environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = MainAccess.run(new ByteArrayInputStream(new byte[0]), new PrintWriter(out, true),
        new PrintWriter(err, true), environment::get, args);
    return new Result(exit, out.toString(), err.toString());
  }

  private static final java.util.Map<String, String> EXPORTED = java.util.Map.of(
      "SPILLWAY_CLOUD_API_KEY", "sk-company", "SPILLWAY_CI_KEY", "ci-team-key", "SPILLWAY_AZURE_API_KEY", "az-key",
      "SPILLWAY_ADMIN_TOKEN", "admin-token");

  @Test
  void theShippedDefaultConfigIsValidWithItsVariablesExported() {
    Path shipped = Path.of("..", "config", "gateway.yaml");
    Result result = runWith(EXPORTED, "check-config", "--config", shipped.toString());
    assertThat(result.err()).isEmpty();
    assertThat(result.exit()).isZero();
  }

  @Test
  void theShippedDefaultConfigFailsClosedWhenNothingIsExported() {
    Path shipped = Path.of("..", "config", "gateway.yaml");
    Result result = runWith(java.util.Map.of(), "check-config", "--config", shipped.toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err().strip()).startsWith("spillway: invalid config: ").contains("cloud.apiKey")
        .contains("SPILLWAY_CLOUD_API_KEY is not set").doesNotContain("\n");
    assertThat(result.out()).doesNotContain("valid");
  }

  @Test
  void theShippedDefaultConfigWithoutAGatewayKeyFailsNamingItsVariable() {
    Path shipped = Path.of("..", "config", "gateway.yaml");
    Result result = runWith(java.util.Map.of("SPILLWAY_CLOUD_API_KEY", "sk-company"), "check-config", "--config",
        shipped.toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("keys[0].key").contains("SPILLWAY_CI_KEY is not set");
  }

  @Test
  void theShippedDefaultConfigWithoutAnAdminTokenWarnsAndShowsItEmpty() {
    Path shipped = Path.of("..", "config", "gateway.yaml");
    java.util.Map<String, String> noAdmin = new java.util.HashMap<>(EXPORTED);
    noAdmin.remove("SPILLWAY_ADMIN_TOKEN");
    Result result = runWith(noAdmin, "check-config", "--config", shipped.toString());
    assertThat(result.exit()).isZero();
    assertThat(result.out()).contains("token: (empty)").contains("apiKey: '****'").doesNotContain("sk-company");
    assertThat(result.err().strip()).isEqualTo("spillway: warning: admin.token: SPILLWAY_ADMIN_TOKEN is empty, so the"
        + " admin API and the dashboard's data are off");
  }

  @Test
  void theShippedTwoRouteExampleIsValidAndItsRouteKeysAreMasked() throws IOException {
    Path example = Path.of("..", "config", "routes.example.yaml");
    Result result = runWith(EXPORTED, "check-config", "--config", example.toString());
    assertThat(result.err()).isEmpty();
    assertThat(result.exit()).isZero();
    assertThat(result.out()).contains("name: openai").contains("name: azure-eu").contains("kind: azure");
  }

  @Test
  void checkConfigNamesTheRouteAndKeyOfARouteProblem() throws IOException {
    Path config = dir.resolve("routes.yaml");
    Files.writeString(config, """
        cloud:
          routes:
            - { name: openai, baseUrl: "https://api.openai.com/v1", apiKey: sk-route-one-secret }
            - { name: azure-eu, kind: azure, baseUrl: "https://eu.openai.azure.com", models: { gpt-4o: eu } }
        """);
    Result result = run("", "check-config", "--config", config.toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains(config.toString()).contains("cloud.routes[1].apiVersion")
        .doesNotContain("sk-route-one-secret");
  }

  @Test
  void checkConfigWarnsWhenTheCloudIsTheGatewaysOwnListener() throws IOException {
    Path config = dir.resolve("self.yaml");
    Files.writeString(config, """
        server: { port: 8080 }
        cloud: { baseUrl: "http://localhost:8080/v1" }
        local: { baseUrl: "http://0.0.0.0:8080" }
        """);
    Result result = run("", "check-config", "--config", config.toString());
    assertThat(result.exit()).as("a warning, not an error").isZero();
    assertThat(result.err().lines().toList()).hasSize(2).allSatisfy(line -> assertThat(line)
        .startsWith("spillway: warning: ").contains("points at this gateway's own listener (port 8080)"));
    assertThat(result.err()).contains("cloud.baseUrl (http://localhost:8080/v1)", "SPILLWAY_CLOUD_BASE_URL",
        "local.baseUrl (http://0.0.0.0:8080)");
  }

  @Test
  void checkConfigDoesNotWarnForAnotherPortOrHost() throws IOException {
    Path config = dir.resolve("fine.yaml");
    Files.writeString(config, """
        server: { port: 8080 }
        cloud: { baseUrl: "http://127.0.0.1:8081/v1" }
        local: { baseUrl: "http://gpu-box:8080" }
        """);
    Result result = run("", "check-config", "--config", config.toString());
    assertThat(result.exit()).isZero();
    assertThat(result.err()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve", "check-config", "hash-key", "simulate"})
  void everyCommandExplainsItselfWithHelp(String command) {
    Result result = run("", command, "--help");
    assertThat(result.exit()).isZero();
    assertThat(result.err()).isEmpty();
    assertThat(result.out()).contains("Usage: spillway " + command).contains("--help");
  }

  @Test
  void demoHelpNamesItsOptions() {
    assertThat(run("", "demo", "--help").out()).contains("--port", "--healthy-for", "--capacity-for", "--local-for");
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve"})
  void aPortInUseGetsOneLineNamingThePortAndTheOption(String command) throws IOException {
    Path config = dir.resolve("loopback.yaml");
    Files.writeString(config, "server: { host: 127.0.0.1 }\nstore: memory\n");
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        LogCapture logs = new LogCapture()) {
      String port = String.valueOf(taken.getLocalPort());
      Result result = command.equals("demo")
          ? run("", "demo", "--port", port)
          : run("", "serve", "--config", config.toString(), "--port", port);

      assertThat(result.exit()).isNotZero();
      assertThat(result.err().lines().toList()).singleElement().asString()
          .contains("port " + port, "already in use", "--port");
      assertThat(logs.events()).noneMatch(event -> event.getThrowableProxy() != null);
    }
  }
}
