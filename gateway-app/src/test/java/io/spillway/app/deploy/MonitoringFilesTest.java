package io.spillway.app.deploy;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus alert rules and the Grafana dashboard Spillway ships (deploy/): Prometheus's own
 * tools accept them, every metric they read is one a real gateway's {@code /metrics} exposes, and
 * every alert has its runbook in docs/operations.md.
 */
class MonitoringFilesTest {
  static final Path ROOT = RepositoryFiles.root();
  static final Path PROMETHEUS = ROOT.resolve("deploy/prometheus");
  static final Path RULES = PROMETHEUS.resolve("spillway-alerts.yaml");
  static final Path DASHBOARD = ROOT.resolve("deploy/grafana/spillway-dashboard.json");
  static final Pattern METRIC = Pattern.compile("\\b(spillway_[a-z0-9_]+)\\b(\\s*\\{([^}]*)})?");
  static final Pattern LABEL_MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
  static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})?\\s");
  static final Pattern SAMPLE_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");

  @Test
  void promtoolAcceptsTheRules() {
    Path promtool = ExternalTool.require("promtool", "prometheus");

    ExternalTool.Result check = ExternalTool.run(PROMETHEUS, Duration.ofSeconds(60), promtool.toString(), "check", "rules", RULES.toString());

    assertThat(check.exitCode()).as(check.output()).isZero();
    assertThat(check.output()).contains("SUCCESS: " + alerts().size() + " rules found");
  }

  @Test
  void theRulesPassTheirUnitTests() {
    Path promtool = ExternalTool.require("promtool", "prometheus");

    ExternalTool.Result test = ExternalTool.run(PROMETHEUS, Duration.ofSeconds(60), promtool.toString(), "test", "rules", "spillway-alerts.test.yaml");

    assertThat(test.exitCode()).as(test.output()).isZero();
    assertThat(test.output()).contains("SUCCESS");
  }

  @Test
  void everyAlertHasAUnitTestThatSeesItFire() throws IOException {
    JsonNode tests = new YAMLMapper().readTree(PROMETHEUS.resolve("spillway-alerts.test.yaml").toFile());
    Set<String> seenFiring = new TreeSet<>();
    for (JsonNode test : tests.path("tests")) {
      for (JsonNode check : test.path("alert_rule_test")) {
        if (!check.path("exp_alerts").isEmpty()) {
          seenFiring.add(check.path("alertname").asText());
        }
      }
    }

    assertThat(seenFiring).containsExactlyInAnyOrderElementsOf(alerts().keySet());
  }

  @Test
  void everyAlertHasARunbookSectionInTheOperationsGuide() throws IOException {
    Set<String> anchors = new HashSet<>();
    for (String line : Files.readAllLines(ROOT.resolve("docs/operations.md"))) {
      if (line.startsWith("#")) {
        anchors.add(slug(line.replaceFirst("^#+\\s*", "")));
      }
    }

    alerts().forEach((name, rule) -> {
      String runbook = rule.path("annotations").path("runbook").asText();
      assertThat(runbook).as(name).isEqualTo("docs/operations.md#" + slug("Runbook: " + name));
      assertThat(anchors).as("docs/operations.md has a heading 'Runbook: %s'", name).contains(slug("Runbook: " + name));
    });
  }

  @Test
  void everyPanelOfTheDashboardQueriesPrometheus() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());

    assertThat(dashboard.path("uid").asText()).isEqualTo("spillway");
    assertThat(dashboard.path("panels")).isNotEmpty();
    for (JsonNode panel : dashboard.path("panels")) {
      assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
      for (JsonNode target : panel.path("targets")) {
        assertThat(target.path("expr").asText()).as(panel.path("title").asText()).isNotBlank();
      }
    }
  }

  /**
   * The names are checked against a scrape of a real gateway that has served through a capacity
   * storm (cloud, then local, buffered and streamed): a renamed meter fails this test, not an
   * operator's pager.
   */
  @Test
  void everyMetricTheRulesAndTheDashboardReadIsOneARealGatewayExposes() throws IOException {
    Map<String, Set<String>> used = new TreeMap<>();
    alerts().forEach((name, rule) -> collectMetrics(rule.path("expr").asText(), used));
    for (String expr : dashboardExpressions()) {
      collectMetrics(expr, used);
    }
    assertThat(used).as("the files read Spillway's metrics").isNotEmpty();

    Map<String, Set<String>> exposed;
    try (GatewayHarness h = GatewayHarness.start("local:\n  kind: openai\n")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      h.ollama.stubFor(post("/v1/chat/completions").atPriority(1)
          .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
          .willReturn(OpenAiStubs.chatStream(true, "Served ", "locally")));
      h.ollama.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(OpenAiStubs.chatCompletion("Served locally")));
      for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
        for (boolean stream : List.of(false, true)) {
          assertThat(h.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", stream)).statusCode())
              .isEqualTo(200);
        }
      }
      var scrape = h.get("/metrics", null);
      assertThat(scrape.statusCode()).isEqualTo(200);
      exposed = exposedMetrics(scrape.body());
    }

    used.forEach((metric, labels) -> {
      assertThat(exposed).as("/metrics exposes %s", metric).containsKey(metric);
      assertThat(exposed.get(metric)).as("labels of %s", metric).containsAll(labels);
    });
  }

  static Map<String, JsonNode> alerts() {
    try {
      Map<String, JsonNode> alerts = new TreeMap<>();
      for (JsonNode group : new YAMLMapper().readTree(RULES.toFile()).path("groups")) {
        for (JsonNode rule : group.path("rules")) {
          alerts.put(rule.path("alert").asText(), rule);
        }
      }
      return alerts;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static List<String> dashboardExpressions() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
    List<String> exprs = new ArrayList<>();
    dashboard.findValues("expr").forEach(expr -> exprs.add(expr.asText()));
    return exprs;
  }

  /** The spillway_ metrics an expression reads, each with the label names its matchers use. */
  static void collectMetrics(String expr, Map<String, Set<String>> into) {
    Matcher metric = METRIC.matcher(expr);
    while (metric.find()) {
      Set<String> labels = into.computeIfAbsent(metric.group(1), k -> new TreeSet<>());
      if (metric.group(3) != null) {
        Matcher label = LABEL_MATCHER.matcher(metric.group(3));
        while (label.find()) {
          labels.add(label.group(1));
        }
      }
    }
  }

  /** Every sample name of a scrape, with the label names it carries. */
  static Map<String, Set<String>> exposedMetrics(String scrape) {
    Map<String, Set<String>> exposed = new TreeMap<>();
    for (String line : scrape.split("\n")) {
      Matcher sample = SAMPLE.matcher(line);
      if (line.startsWith("#") || !sample.find()) {
        continue;
      }
      Set<String> labels = exposed.computeIfAbsent(sample.group(1), k -> new TreeSet<>());
      if (sample.group(3) != null) {
        Matcher label = SAMPLE_LABEL.matcher(sample.group(3));
        while (label.find()) {
          labels.add(label.group(1));
        }
      }
    }
    return exposed;
  }

  /** A heading's anchor as GitHub makes it: lower case, spaces to dashes, punctuation dropped. */
  static String slug(String heading) {
    return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
  }
}
