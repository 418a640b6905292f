package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CloudRoutesConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.of("AZURE_KEY", "azure-secret-key-1")::get);

  private static final String TWO_ROUTES = """
      cloud:
        timeout: 90s
        routes:
          - name: openai
            kind: openai
            baseUrl: https://api.openai.com/v1/
            apiKey: sk-openai-secret
          - name: azure-eu
            kind: azure
            baseUrl: https://spillway-eu.openai.azure.com
            apiKey: ${AZURE_KEY}
            apiVersion: 2024-10-21
            models:
              gpt-4o: gpt4o-eu
            timeout: 30s
      """;

  @Test
  void routesAreReadInOrderWithTheirOwnSettings() {
    CloudConfig cloud = loader.parse("c.yaml", TWO_ROUTES).cloud();

    assertThat(cloud.effectiveRoutes()).extracting(CloudRouteConfig::name).containsExactly("openai", "azure-eu");
    CloudRouteConfig openai = cloud.effectiveRoutes().get(0);
    assertThat(openai.kind()).isEqualTo(CloudRouteConfig.Kind.OPENAI);
    assertThat(openai.baseUrl()).isEqualTo("https://api.openai.com/v1");
    assertThat(openai.timeout()).as("cloud.timeout when the route has none").isEqualTo(Duration.ofSeconds(90));
    CloudRouteConfig azure = cloud.effectiveRoutes().get(1);
    assertThat(azure.azure()).isTrue();
    assertThat(azure.apiKey()).isEqualTo("azure-secret-key-1");
    assertThat(azure.apiVersion()).isEqualTo("2024-10-21");
    assertThat(azure.models()).containsExactly(Map.entry("gpt-4o", "gpt4o-eu"));
    assertThat(azure.timeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theOneRouteShorthandIsAListOfOneRouteNamedCloud() {
    CloudConfig cloud = loader.parse("c.yaml", "cloud:\n  baseUrl: https://example.test/v1\n  apiKey: sk-one\n").cloud();

    assertThat(cloud.routes()).isEmpty();
    assertThat(cloud.effectiveRoutes()).singleElement().satisfies(route -> {
      assertThat(route.name()).isEqualTo(CloudConfig.SHORTHAND_ROUTE).isEqualTo("cloud");
      assertThat(route.kind()).isEqualTo(CloudRouteConfig.Kind.OPENAI);
      assertThat(route.baseUrl()).isEqualTo("https://example.test/v1");
      assertThat(route.apiKey()).isEqualTo("sk-one");
      assertThat(route.timeout()).isEqualTo(Duration.ofSeconds(120));
    });
  }

  @Test
  void theShorthandBesideRoutesIsAnErrorNamingBoth() {
    assertThatThrownBy(() -> loader.parse("c.yaml", """
        cloud:
          baseUrl: https://api.openai.com/v1
          routes:
            - { name: a, baseUrl: https://a.test/v1 }
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("c.yaml: key 'cloud'")
        .hasMessageContaining("cloud.baseUrl and cloud.apiKey (one route) cannot be combined with cloud.routes");
    assertThatThrownBy(() -> loader.parse("c.yaml", """
        cloud:
          apiKey: sk-x
          routes:
            - { name: a, baseUrl: https://a.test/v1 }
        """))
        .hasMessageContaining("cannot be combined with cloud.routes");
  }

  @Test
  void everyRouteProblemIsReportedWithItsKeyPath() {
    assertThatThrownBy(() -> loader.parse("c.yaml", """
        cloud:
          routes:
            - { kind: openai, baseUrl: https://a.test/v1 }
            - { name: eu, kind: azure, baseUrl: https://eu.openai.azure.com }
            - { name: eu, kind: bedrock, baseUrl: not a url }
            - { name: "bad name!", baseUrl: https://b.test/v1, apiVersion: 2024-10-21, timeout: 0s }
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'cloud.routes[0].name': missing")
        .hasMessageContaining("key 'cloud.routes[1].apiVersion': missing")
        .hasMessageContaining("key 'cloud.routes[1].models': an azure route needs at least one entry")
        .hasMessageContaining("key 'cloud.routes[2].name': 'eu' is used by an earlier route")
        .hasMessageContaining("key 'cloud.routes[2].kind': 'bedrock' is not one of openai, azure, anthropic")
        .hasMessageContaining("key 'cloud.routes[2].baseUrl'")
        .hasMessageContaining("key 'cloud.routes[3].name': 'bad name!' must be")
        .hasMessageContaining("key 'cloud.routes[3].apiVersion': only an azure or anthropic route takes an api-version")
        .hasMessageContaining("key 'cloud.routes[3].timeout': must be longer than zero");
  }

  @Test
  void anAnthropicRouteTakesItsBaseUrlWithoutV1AndSendsAnthropicVersion20230601ByDefault() {
    GatewayConfig config = loader.parse("c.yaml", """
        cloud:
          routes:
            - { name: claude, kind: anthropic, baseUrl: https://api.anthropic.com, apiKey: k }
            - { name: claude-beta, kind: anthropic, baseUrl: https://b.test, apiKey: k, apiVersion: 2024-01-01 }
        """);

    assertThat(config.cloud().routes().get(0).kind()).isEqualTo(CloudRouteConfig.Kind.ANTHROPIC);
    assertThat(config.cloud().routes().get(0).apiVersion()).isEqualTo("2023-06-01");
    assertThat(config.cloud().routes().get(1).apiVersion()).isEqualTo("2024-01-01");
    assertThatThrownBy(() -> loader.parse("c.yaml", """
        cloud:
          routes:
            - { name: claude, kind: anthropic, baseUrl: https://api.anthropic.com/v1 }
        """)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'cloud.routes[0].baseUrl': an anthropic route's baseUrl has no /v1");
  }

  @Test
  void anUnknownRouteKeyIsAnErrorWithItsPath() {
    assertThatThrownBy(() -> loader.parse("c.yaml", """
        cloud:
          routes:
            - { name: a, baseUrl: https://a.test/v1, deployment: x }
        """))
        .hasMessageContaining("unknown key 'cloud.routes[0].deployment'");
  }

  @Test
  void checkConfigMasksTheKeyOfEveryRoute() {
    String printed = ConfigPrinter.toMaskedYaml(loader.parse("c.yaml", TWO_ROUTES));

    assertThat(printed).doesNotContain("sk-openai-secret").doesNotContain("azure-secret-key-1");
    assertThat(printed).contains("name: azure-eu").contains("apiVersion: 2024-10-21").contains("gpt-4o: gpt4o-eu");
  }

  @Test
  void aRouteThatPointsAtTheGatewayItselfIsWarnedAbout() {
    GatewayConfig config = loader.parse("c.yaml", """
        server: { port: 8080 }
        cloud:
          routes:
            - { name: a, baseUrl: https://api.openai.com/v1 }
            - { name: b, baseUrl: http://127.0.0.1:8080/v1 }
        """);

    assertThat(SelfReference.warnings(config, 8080)).singleElement()
        .satisfies(warning -> assertThat(warning).startsWith("cloud.routes[1].baseUrl (http://127.0.0.1:8080/v1)"));
  }
}
