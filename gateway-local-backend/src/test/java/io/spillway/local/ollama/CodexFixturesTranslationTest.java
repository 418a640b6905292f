package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.request;
import static io.spillway.local.ollama.OllamaTesting.sentBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.CodexFixtures;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The request bodies the real Codex CLI sends (captured, in {@code fixtures/codex/}) are served by
 * Ollama, not refused, and become exactly the {@code /api/chat} bodies in the matching
 * {@code *.ollama.json} files.
 */
@ExtendWith(EventLoopClient.class)
class CodexFixturesTranslationTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), FakeClock.at("2026-12-01T10:00:00Z"));

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "first-turn                         | exec_command,write_stdin,request_user_input,apply_patch,view_image,get_goal,create_goal,update_goal | tools.custom.format,tools.tool_search,tools.web_search,reasoning,text.verbosity",
    "first-turn-gpt-4o-mini             | exec_command,write_stdin,request_user_input,view_image,multi_agent_v1__close_agent,multi_agent_v1__resume_agent,multi_agent_v1__send_input,multi_agent_v1__spawn_agent,multi_agent_v1__wait_agent,get_goal,create_goal,update_goal | tools.web_search,reasoning",
    "turn-with-function-call-output     | exec_command,write_stdin,request_user_input,apply_patch,view_image,get_goal,create_goal,update_goal | tools.custom.format,tools.tool_search,tools.web_search,reasoning,text.verbosity",
    "turn-with-custom-tool-call-output  | exec_command,write_stdin,request_user_input,apply_patch,view_image,get_goal,create_goal,update_goal | tools.custom.format,tools.tool_search,tools.web_search,reasoning,text.verbosity"
  })
  void codexRequestsBecomeTheseExactOllamaBodies(String fixture, String tools, String dropped) throws IOException {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamBody("qwen2.5-coder:7b", "stop", 10, 1, "ok"))));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.RESPONSES, CodexFixtures.read(fixture + ".json"))));
    OllamaTesting.drain(response);

    JsonNode sent = sentBody(ollama, "/api/chat");
    assertThat(sent).isEqualTo(Json.parse(CodexFixtures.read(fixture + ".ollama.json")));
    List<String> names = new ArrayList<>();
    sent.path("tools").forEach(tool -> names.add(tool.path("function").path("name").asText()));
    assertThat(String.join(",", names)).isEqualTo(tools);
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo(dropped);
  }
}
