package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A secret that resolves to nothing is refused, or warned about where the file allowed it on purpose. */
class EmptySecretsTest {
  private static final String CONFIG = """
      admin: { token: "${SPILLWAY_ADMIN_TOKEN:-}" }
      cloud: { apiKey: "${SPILLWAY_CLOUD_API_KEY}" }
      keys:
        - { key: "${SPILLWAY_CI_KEY}", team: ci, tier: gold }
      """;

  @Test
  void anUnsetRequiredCloudKeyIsAnErrorNamingTheVariableAndTheKey() {
    ConfigLoader loader = new ConfigLoader(Map.of("SPILLWAY_CI_KEY", "ci-key")::get);
    assertThatThrownBy(() -> loader.parse("gateway.yaml", CONFIG))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.yaml").hasMessageContaining("cloud.apiKey")
        .hasMessageContaining("SPILLWAY_CLOUD_API_KEY is not set");
  }

  @Test
  void aRequiredSecretExportedEmptyIsAnErrorNotASilentlyMissingKey() {
    ConfigLoader loader = new ConfigLoader(Map.of("SPILLWAY_CI_KEY", "", "SPILLWAY_CLOUD_API_KEY", "sk-x")::get);
    assertThatThrownBy(() -> loader.parse("gateway.yaml", CONFIG))
        .hasMessageContaining("keys[0].key").hasMessageContaining("SPILLWAY_CI_KEY is set but empty");
  }

  @Test
  void aSecretAllowedEmptyOnPurposeIsAWarningNamingTheVariableAndWhatFollows() {
    ConfigLoader loader = new ConfigLoader(Map.of("SPILLWAY_CI_KEY", "ci-key", "SPILLWAY_CLOUD_API_KEY", "sk-x")::get);
    GatewayConfig config = loader.parse("gateway.yaml", CONFIG);
    assertThat(config.admin().enabled()).isFalse();
    assertThat(loader.warnings()).containsExactly(
        "admin.token: SPILLWAY_ADMIN_TOKEN is empty, so the admin API and the dashboard's data are off");
  }

  @Test
  void anEmptyOptionalCloudKeyAndGatewayKeyAreEachWarnedAbout() {
    ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);
    loader.parse("gateway.yaml", """
        cloud: { apiKey: "${SPILLWAY_CLOUD_API_KEY:-}" }
        keys:
          - { key: "${SPILLWAY_CI_KEY:-}", team: ci, tier: gold }
        """);
    assertThat(loader.warnings()).containsExactly(
        "cloud.apiKey: SPILLWAY_CLOUD_API_KEY is empty, so the cloud is called without an API key and will refuse"
            + " every request",
        "keys[0].key: SPILLWAY_CI_KEY is empty, so this key is disabled and admits nobody");
  }

  @Test
  void aRouteKeyIsASecretToo() {
    ConfigLoader loader = new ConfigLoader(Map.of("AZURE_KEY", " ")::get);
    assertThatThrownBy(() -> loader.parse("gateway.yaml", """
        cloud:
          routes:
            - { name: eu, kind: azure, baseUrl: "https://eu.openai.azure.com", apiKey: "${AZURE_KEY}", apiVersion: 2024-10-21 }
        """)).hasMessageContaining("cloud.routes[0].apiKey").hasMessageContaining("AZURE_KEY is set but empty");
  }

  @Test
  void aWarningDoesNotOutliveTheNextLoad() {
    ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);
    loader.parse("a.yaml", "admin: { token: \"${SPILLWAY_ADMIN_TOKEN:-}\" }\n");
    loader.parse("b.yaml", "admin: { token: set }\n");
    assertThat(loader.warnings()).isEmpty();
  }

  @Test
  void checkConfigShowsAMissingSecretAsEmptyAndAPresentOneMasked() {
    GatewayConfig config = new ConfigLoader(Map.of("SPILLWAY_CLOUD_API_KEY", "sk-secret")::get).parse("gateway.yaml", """
        admin: { token: "${SPILLWAY_ADMIN_TOKEN:-}" }
        cloud: { apiKey: "${SPILLWAY_CLOUD_API_KEY}" }
        keys:
          - { key: "${SPILLWAY_CI_KEY:-}", team: ci, tier: gold }
          - { keyHash: "sha256:%s", team: web, tier: silver }
        """.formatted("a".repeat(64)));
    String printed = ConfigPrinter.toMaskedYaml(config);
    assertThat(printed).contains("apiKey: '****'").contains("token: (empty)").doesNotContain("sk-secret")
        .doesNotContain("apiKey: null").doesNotContain("token: null");
    assertThat(printed.lines().filter(line -> line.contains("key: (empty)")).count()).as("only the empty key").isOne();
  }
}
