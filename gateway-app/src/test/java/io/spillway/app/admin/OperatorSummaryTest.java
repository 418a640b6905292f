package io.spillway.app.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one line at the top of the dashboard, for each situation, and the runbook it points at. */
class OperatorSummaryTest {
  static final Instant NOW = Instant.parse("2026-11-10T10:01:00Z");

  static String route(String name, String state, String override, String nextProbeAt) {
    return """
        {"name":"%s","kind":"openai","breaker":{"route":"%s","state":"%s","override":"%s","nextProbeAt":%s}}
        """.formatted(name, name, state, override, nextProbeAt == null ? "null" : "\"" + nextProbeAt + "\"");
  }

  static JsonNode status(String routes, Boolean localReady, String quota) throws IOException {
    String backends = "{\"name\":\"cloud\",\"ready\":true}"
        + (localReady == null ? "" : ",{\"name\":\"local\",\"ready\":" + localReady + "}");
    return Json.parse("{\"backends\":[" + backends + "],\"routes\":[" + routes + "]"
        + (quota == null ? "" : ",\"quota\":" + quota) + "}");
  }

  static final String CLOSED = route("openai", "closed", "auto", null);
  static final String OPEN = route("openai", "open", "auto", "2026-11-10T10:05:00Z");

  /** Every situation the summary tells apart, by name. */
  static Map<String, JsonNode> situations() throws IOException {
    Map<String, JsonNode> all = new LinkedHashMap<>();
    all.put("healthy", status(CLOSED, true, null));
    all.put("storm", status(OPEN, true, null));
    all.put("probing", status(route("openai", "half_open", "auto", null), true, null));
    all.put("storm, local down", status(OPEN, false, null));
    all.put("storm, no local", status(OPEN, null, null));
    all.put("forced open", status(route("openai", "open", "open", null), true, null));
    all.put("forced open, no local", status(route("openai", "open", "open", null), null, null));
    all.put("forced closed", status(route("openai", "closed", "closed", null), true, null));
    all.put("one route of two", status(OPEN.replace("openai", "first") + "," + CLOSED.replace("openai", "second"),
        true, null));
    all.put("local down", status(CLOSED, false, null));
    all.put("pool used up", status(CLOSED, true,
        "{\"pools\":{\"gold\":{\"band\":\"ok\",\"remaining\":5},\"bronze\":{\"band\":\"hard\",\"remaining\":0}}}"));
    all.put("no local", status(CLOSED, null, null));
    return all;
  }

  static JsonNode summary(String situation) throws IOException {
    return OperatorSummary.of(situations().get(situation), NOW);
  }

  @Test
  void healthySaysTheCloudServesAndThereIsNothingToDo() throws IOException {
    JsonNode s = summary("healthy");
    assertThat(s.get("level").asText()).isEqualTo("ok");
    assertThat(s.get("doing").asText()).isEqualTo("Serving from the cloud; the local backend is ready for a capacity storm.");
    assertThat(s.get("youCan").asText()).isEqualTo("Nothing to do.");
    assertThat(s.get("runbook").asText()).isEqualTo("runbooks");
  }

  @Test
  void aStormSaysTrafficIsLocalAndWhenTheCloudIsTriedAgain() throws IOException {
    JsonNode s = summary("storm");
    assertThat(s.get("level").asText()).isEqualTo("warn");
    assertThat(s.get("doing").asText()).isEqualTo(
        "The cloud is at capacity: requests go to the local backend, and Spillway tries the cloud again in 4m 0s.");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwaycapacitystorm");
    assertThat(summary("probing").get("doing").asText()).contains("trying it again with one probe request");
  }

  @Test
  void aStormWithLocalDownIsAnOutage() throws IOException {
    JsonNode s = summary("storm, local down");
    assertThat(s.get("level").asText()).isEqualTo("bad");
    assertThat(s.get("doing").asText()).contains("the local backend is not ready", "get 503");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwayoutage");
  }

  @Test
  void withoutALocalBackendAStormSaysRequestsStillGoToTheCloudWithItsOwnRetryAfter() throws IOException {
    JsonNode s = summary("storm, no local");
    assertThat(s.get("doing").asText()).isEqualTo("The cloud is at capacity and there is no local backend"
        + " (local.enabled: false): requests still go to the cloud, and those it refuses get 503 with the cloud's"
        + " own Retry-After.");
    assertThat(s.get("doing").asText()).doesNotContain("local for", "go to the local backend");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwaycloudatcapacity");
  }

  @Test
  void forcedOpenNamesTheOperatorAndHowToHandItBack() throws IOException {
    JsonNode s = summary("forced open");
    assertThat(s.get("doing").asText()).isEqualTo("An operator forced all traffic to the local backend.");
    assertThat(s.get("youCan").asText()).contains("POST /admin/breaker {\"state\":\"auto\"}");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwaybreakerforcedopen");
    JsonNode noLocal = summary("forced open, no local");
    assertThat(noLocal.get("level").asText()).isEqualTo("bad");
    assertThat(noLocal.get("doing").asText()).contains("every request is refused with 503");
    assertThat(summary("forced closed").get("doing").asText()).contains("an operator forced it closed");
  }

  @Test
  void oneRouteAtCapacityNamesItAndTheRouteThatServes() throws IOException {
    assertThat(summary("one route of two").get("doing").asText())
        .isEqualTo("Cloud route first is at capacity; requests go to route second.");
  }

  @Test
  void localDownWhileTheCloudServesIsAWarning() throws IOException {
    JsonNode s = summary("local down");
    assertThat(s.get("level").asText()).isEqualTo("warn");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwaylocalbackenddown");
  }

  @Test
  void aPoolWithNothingLeftIsNamed() throws IOException {
    JsonNode s = summary("pool used up");
    assertThat(s.get("doing").asText()).contains("the bronze pool has used its monthly tokens");
    assertThat(s.get("runbook").asText()).isEqualTo("runbook-spillwaypoolexhausted");
    assertThat(summary("no local").get("doing").asText()).isEqualTo("Serving from the cloud; there is no local backend.");
  }

  @Test
  void everyRunbookTheSummaryLinksToIsAHeadingOfTheShippedRunbook() throws IOException {
    String runbook;
    try (InputStream in = RunbookPage.class.getResourceAsStream(RunbookPage.RESOURCE)) {
      assertThat(in).as("docs/operations.md is in the jar").isNotNull();
      runbook = RunbookPage.render(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    for (Map.Entry<String, JsonNode> situation : situations().entrySet()) {
      String anchor = OperatorSummary.of(situation.getValue(), NOW).get("runbook").asText();
      assertThat(runbook).as(situation.getKey()).contains(" id=\"" + anchor + "\"");
    }
  }

  @Test
  void runbookAnchorsAreGitHubs() {
    assertThat(RunbookPage.slug("Runbook: SpillwayCapacityStorm")).isEqualTo("runbook-spillwaycapacitystorm");
    assertThat(RunbookPage.slug("File descriptors")).isEqualTo("file-descriptors");
    assertThat(RunbookPage.render("# A <b>\n```\n# not a heading\n```\ntext & more\n"))
        .contains("<h1 id=\"a-b\">A &lt;b&gt;</h1>", "# not a heading", "text &amp; more");
  }
}
