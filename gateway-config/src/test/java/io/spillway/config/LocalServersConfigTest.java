package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code local.servers} and {@code local.serverBreaker}: the list, the one-server shorthand, and their checks. */
class LocalServersConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void theOneServerShorthandIsAListOfOneNamedLocal() {
    LocalConfig local = loader.parse("test", "local:\n  kind: openai\n  baseUrl: http://gpu:8000/\n").local();

    assertThat(local.servers()).isEmpty();
    assertThat(local.serverList()).containsExactly(new LocalServerConfig("local", LocalConfig.Kind.OPENAI, "http://gpu:8000"));
  }

  @Test
  void eachServerTakesLocalKindUnlessItNamesItsOwn() {
    LocalConfig local = loader.parse("test", """
        local:
          kind: ollama
          servers:
            - { name: gpu-a, baseUrl: "http://gpu-a:11434/" }
            - { name: gpu-b, kind: openai, baseUrl: "http://gpu-b:8000" }
        """).local();

    assertThat(local.serverList()).containsExactly(
        new LocalServerConfig("gpu-a", LocalConfig.Kind.OLLAMA, "http://gpu-a:11434"),
        new LocalServerConfig("gpu-b", LocalConfig.Kind.OPENAI, "http://gpu-b:8000"));
    assertThat(local.baseUrl()).as("code that knows one server sees the first").isEqualTo("http://gpu-a:11434");
    LocalConfig second = local.forServer(local.serverList().get(1));
    assertThat(second.kind()).isEqualTo(LocalConfig.Kind.OPENAI);
    assertThat(second.baseUrl()).isEqualTo("http://gpu-b:8000");
    assertThat(second.models()).isEqualTo(local.models());
  }

  @Test
  void thePrintedConfigReadsBackWithTheSameServers() {
    GatewayConfig config = loader.parse("test", """
        local:
          servers:
            - { name: gpu-a, baseUrl: "http://gpu-a:11434" }
            - { name: gpu-b, kind: openai, baseUrl: "http://gpu-b:8000" }
        """);

    GatewayConfig again = loader.parse("printed", ConfigPrinter.toMaskedYaml(config));

    assertThat(again.local().serverList()).isEqualTo(config.local().serverList());
  }

  @Test
  void baseUrlAndServersTogetherAreRejectedWithTheKeyPath() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", """
        local:
          baseUrl: http://gpu-a:11434
          servers:
            - { name: gpu-b, baseUrl: "http://gpu-b:11434" }
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.yaml")
        .hasMessageContaining("key 'local.servers'")
        .hasMessageContaining("local.baseUrl");
  }

  @Test
  void eachServerIsCheckedByItsIndex() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", """
        local:
          servers:
            - { name: gpu-a, baseUrl: "http://gpu-a:11434" }
            - { name: gpu-b, baseUrl: "gpu-b:11434" }
            - { name: gpu-a, kind: vllm }
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'local.servers[1].baseUrl'")
        .hasMessageContaining("key 'local.servers[2].name': 'gpu-a' names two servers")
        .hasMessageContaining("key 'local.servers[2].kind'")
        .hasMessageContaining("key 'local.servers[2].baseUrl': every server needs a baseUrl");
  }

  @Test
  void aServerWithoutANameIsRejected() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  servers:\n    - { baseUrl: \"http://gpu:11434\" }\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'local.servers[0].name'");
  }

  @Test
  void eachServerSpeaksH2cWhenLocalH2cSaysUnlessItsEntrySaysOtherwise() {
    LocalConfig local = loader.parse("test", """
        local:
          h2c: true
          poolIdleTimeout: 2s
          servers:
            - { name: vllm-behind-h2c-proxy, kind: openai, baseUrl: "http://gpu-a:8000" }
            - { name: ollama, baseUrl: "http://gpu-b:11434", h2c: false }
        """).local();

    assertThat(local.forServer(local.serverList().get(0)).h2c()).isTrue();
    assertThat(local.forServer(local.serverList().get(1)).h2c()).isFalse();
    assertThat(local.forServer(local.serverList().get(1)).poolIdleTimeout()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void localServersSpeakHttp1AndCloseIdleConnectionsBeforeUvicornDoesByDefault() {
    assertThat(LocalConfig.DEFAULTS.h2c()).isFalse();
    assertThat(LocalConfig.DEFAULTS.poolIdleTimeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(LocalConfig.DEFAULTS.forServer(LocalConfig.DEFAULTS.serverList().get(0)).h2c()).isFalse();

    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  poolIdleTimeout: 0s\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'local.poolIdleTimeout'");
  }

  @Test
  void theServerBreakerHasDefaultsAndChecks() {
    LocalServerBreakerConfig defaults = LocalConfig.DEFAULTS.serverBreaker();
    assertThat(defaults).isEqualTo(new LocalServerBreakerConfig(50, 10, Duration.ofSeconds(30), 2));

    LocalServerBreakerConfig set = loader.parse("test",
        "local:\n  serverBreaker: { failureRateThreshold: 25, window: 20, waitInOpen: 1m, halfOpenCalls: 3 }\n")
        .local().serverBreaker();
    assertThat(set).isEqualTo(new LocalServerBreakerConfig(25, 20, Duration.ofMinutes(1), 3));

    assertThatThrownBy(() -> loader.parse("gateway.yaml",
        "local:\n  serverBreaker: { failureRateThreshold: 0, window: 0, waitInOpen: 0s, halfOpenCalls: 0 }\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.serverBreaker.failureRateThreshold")
        .hasMessageContaining("local.serverBreaker.window")
        .hasMessageContaining("local.serverBreaker.waitInOpen")
        .hasMessageContaining("local.serverBreaker.halfOpenCalls");
  }

  @Test
  void aServerPointingAtTheGatewayItselfIsWarnedAboutByItsIndex() {
    GatewayConfig config = loader.parse("test", """
        server: { port: 8080 }
        local:
          servers:
            - { name: gpu-a, baseUrl: "http://gpu-a:11434" }
            - { name: self, baseUrl: "http://127.0.0.1:8080" }
        """);

    List<String> warnings = SelfReference.warnings(config, 8080);

    assertThat(warnings).singleElement().asString().contains("local.servers[1].baseUrl");
  }
}
