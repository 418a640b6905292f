package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.CLOUD_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.http.Fault;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.config.CloudConfig;
import io.spillway.config.ConfigLoader;
import io.spillway.config.KeyConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.server.testing.EventLoopClient;
import io.spillway.upstream.OpenAiHttpBackend;
import io.spillway.upstream.UpstreamSettings;
import io.spillway.quota.keys.KeyRegistry;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The company's cloud key and the teams' gateway keys stay secret: keys are kept only as hashes,
 * the cloud key never appears in a log line or an error body and never goes to the local backend,
 * and prompts and completions are not logged.
 */
@ExtendWith(EventLoopClient.class)
class SecretHandlingTest {
  static final String PROMPT = "prompt-text-that-must-stay-private-4471";
  static final String COMPLETION = "completion-text-that-must-stay-private-9902";
  static final String WRONG_KEY = "sk-someone-elses-key-5150";

  @Test
  void keyRegistryHoldsOnlyHashesOfGatewayKeys() {
    KeyRegistry registry = KeyRegistry.from(List.of(
        new KeyConfig(GOLD_KEY, null, "release", "gold"), new KeyConfig(SILVER_KEY, null, "web", "silver")));

    assertThat(registry.authenticate(GOLD_KEY)).isNotNull();
    assertThat(secretsReachableFrom(registry, List.of(GOLD_KEY, SILVER_KEY))).isEmpty();
  }

  @Test
  void aRunningGatewayHoldsNoPlainGatewayKeyAnywhereInItsObjects() {
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      assertThat(harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false)).statusCode())
          .isEqualTo(200);

      assertThat(secretsReachableFrom(harness.gateway(), List.of(GOLD_KEY, SILVER_KEY, BRONZE_KEY))).isEmpty();
      assertThat(harness.gateway().config().keys()).allSatisfy(key -> assertThat(key.key()).isNull());
    }
  }

  @Test
  void logsCarryNoKeyTokenPromptOrCompletionThroughAFullRunIncludingErrors() throws Exception {
    List<String> lines;
    try (LogCapture logs = new LogCapture();
        GatewayHarness harness = GatewayHarness.start("cloud:\n  timeout: 2s\nserver:\n  maxRequestSize: 64KiB")) {
      var cloud = harness.cloud;
      cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(COMPLETION)));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("stream\":true"))
          .willReturn(OpenAiStubs.chatStream(true, COMPLETION)));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("upstream-401"))
          .willReturn(upstreamRejectsTheCloudKey()));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("upstream-500"))
          .willReturn(OpenAiStubs.json(500, "{\"error\":{\"message\":\"boom " + CLOUD_KEY
              + "\",\"type\":\"server_error\",\"param\":null,\"code\":null}}")));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("upstream-slow"))
          .willReturn(OpenAiStubs.chatCompletion(COMPLETION).withFixedDelay(5_000)));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("upstream-reset"))
          .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
      cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("upstream-garbage"))
          .willReturn(aResponse().withStatus(200).withBody("<html>" + COMPLETION)));

      harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROMPT, false));
      harness.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", PROMPT, true));
      for (String fault : List.of("upstream-401", "upstream-500", "upstream-slow", "upstream-reset", "upstream-garbage")) {
        harness.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", PROMPT + " " + fault, false));
      }
      harness.post("/v1/chat/completions", WRONG_KEY, chatBody("gpt-4o", PROMPT, false));
      harness.post("/v1/chat/completions", GOLD_KEY, "{\"model\":\"gpt-4o\",\"messages\":[{\"content\":\"" + PROMPT);
      harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROMPT + "x".repeat(100_000), false));
      harness.get("/admin/status", WRONG_KEY);
      harness.get("/v1/" + PROMPT, GOLD_KEY);
      try (RawHttp raw = new RawHttp(harness.gateway().port())) {
        raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROMPT, false),
            "X-Secret-Token: " + ADMIN_TOKEN + "\u00e9"));
        raw.read();
      }
      try (RawHttp raw = new RawHttp(harness.gateway().port())) {
        raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROMPT, false),
            "X-Injected: " + GOLD_KEY + "\rX-More: 1"));
        raw.read();
      }
      lines = logs.lines();
    }

    assertThat(lines).as("the capture saw the gateway's own logging").isNotEmpty();
    for (String secret : List.of(CLOUD_KEY, GOLD_KEY, SILVER_KEY, BRONZE_KEY, ADMIN_TOKEN, WRONG_KEY, PROMPT, COMPLETION)) {
      assertThat(lines).as("log lines containing " + secret).noneMatch(line -> line.contains(secret));
    }
  }

  @Test
  void upstreamRefusingTheCloudKeyIsA502ThatQuotesNoPartOfIt() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(upstreamRejectsTheCloudKey()));

      HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(response.statusCode()).isEqualTo(502);
      assertThat(UpstreamFaultsTest.openAiError(response).get("code").asText()).isEqualTo("upstream_auth_failed");
      assertThat(response.body()).doesNotContain("sk-compa").doesNotContain("cret").doesNotContain(CLOUD_KEY);
    }
  }

  @Test
  void upstreamErrorThatEchoesTheCloudKeyReachesTheClientRedacted() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(400,
          "{\"error\":{\"message\":\"bad header Authorization: Bearer " + CLOUD_KEY
              + "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}")));
      harness.cloud.stubFor(post("/v1/completions").willReturn(aResponse().withStatus(500)
          .withHeader("Content-Type", "text/plain").withBody("upstream debug: key=" + CLOUD_KEY)));

      HttpResponse<String> json = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
      HttpResponse<String> text = harness.post("/v1/completions", GOLD_KEY,
          "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":\"hi\"}");

      assertThat(json.statusCode()).isEqualTo(400);
      assertThat(json.body()).doesNotContain(CLOUD_KEY).contains("[redacted]");
      assertThat(text.statusCode()).isEqualTo(500);
      assertThat(text.body()).doesNotContain(CLOUD_KEY);
      UpstreamFaultsTest.openAiError(text);
    }
  }

  @Test
  void localOpenAiCompatibleBackendNeverReceivesTheCloudKeyNorTheClientsKey() {
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("local answer")));
      CloudConfig cloud = harness.config().cloud();
      assertThat(cloud.apiKey()).isEqualTo(CLOUD_KEY);
      LocalConfig local = new ConfigLoader(Map.<String, String>of()::get)
          .parse("local.yaml", "local:\n  kind: openai\n  baseUrl: " + harness.ollama.baseUrl()).local();
      OpenAiHttpBackend backend = new OpenAiHttpBackend(BackendKind.LOCAL, UpstreamSettings.from(local, cloud),
          EventLoopClient.http());
      byte[] body = chatBody("llama3.2:3b", "hi", false).getBytes(StandardCharsets.UTF_8);
      GatewayRequest request = GatewayRequest.create("req_local_1", Route.CHAT_COMPLETIONS,
          Headers.of("Authorization", "Bearer " + GOLD_KEY, "api-key", GOLD_KEY, "x-api-key", GOLD_KEY,
              "Content-Type", "application/json"),
          (ObjectNode) parse(body), body, Instant.now());

      GatewayResponse response = Blocking.await(backend.callAsync(request));

      assertThat(response.status()).isEqualTo(200);
      harness.ollama.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
          .withHeader("Authorization", absent())
          .withHeader("api-key", absent())
          .withHeader("x-api-key", absent())
          .withRequestBody(equalTo(new String(body, StandardCharsets.UTF_8))));
      assertThat(harness.ollama.getAllServeEvents()).allSatisfy(event ->
          assertThat(event.getRequest().getHeaders().all()).noneMatch(h -> h.values().stream()
              .anyMatch(v -> v.contains(CLOUD_KEY) || v.contains(GOLD_KEY))));
    }
  }

  /** OpenAI's answer to a wrong key: it quotes the key's first and last characters. */
  static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder upstreamRejectsTheCloudKey() {
    String masked = CLOUD_KEY.substring(0, 8) + "*".repeat(8) + CLOUD_KEY.substring(CLOUD_KEY.length() - 4);
    return OpenAiStubs.json(401, "{\"error\":{\"message\":\"Incorrect API key provided: " + masked
        + ". You can find your API key at https://platform.openai.com/account/api-keys.\","
        + "\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}");
  }

  private static Object parse(byte[] body) {
    try {
      return Json.parse(body);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Walks every object reachable from {@code root} through Spillway's own classes and the JDK's
   * collections, and returns a description of each place where one of {@code secrets} is held in
   * plain text (as a String, or as bytes or chars).
   */
  static List<String> secretsReachableFrom(Object root, List<String> secrets) {
    List<String> found = new ArrayList<>();
    Map<Object, Boolean> seen = new IdentityHashMap<>();
    List<Object[]> work = new ArrayList<>();
    work.add(new Object[] {root, root.getClass().getSimpleName()});
    while (!work.isEmpty()) {
      Object[] item = work.remove(work.size() - 1);
      Object value = item[0];
      String path = (String) item[1];
      if (value == null || seen.put(value, Boolean.TRUE) != null || path.length() > 2_000) {
        continue;
      }
      if (value instanceof CharSequence text) {
        for (String secret : secrets) {
          if (text.toString().contains(secret)) {
            found.add(path);
          }
        }
      } else if (value instanceof byte[] bytes) {
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        for (String secret : secrets) {
          if (text.contains(secret)) {
            found.add(path);
          }
        }
      } else if (value instanceof char[] chars) {
        for (String secret : secrets) {
          if (new String(chars).contains(secret)) {
            found.add(path);
          }
        }
      } else if (value.getClass().isArray()) {
        for (int i = 0; i < Array.getLength(value); i++) {
          work.add(new Object[] {Array.get(value, i), path + "[" + i + "]"});
        }
      } else if (value instanceof Map<?, ?> map) {
        map.forEach((k, v) -> {
          work.add(new Object[] {k, path + ".key"});
          work.add(new Object[] {v, path + "[" + k + "]"});
        });
      } else if (value instanceof Collection<?> collection) {
        int i = 0;
        for (Object element : collection) {
          work.add(new Object[] {element, path + "[" + i++ + "]"});
        }
      } else if (value instanceof Optional<?> optional) {
        work.add(new Object[] {optional.orElse(null), path + ".get"});
      } else if (value instanceof AtomicReference<?> reference) {
        work.add(new Object[] {reference.get(), path + ".get"});
      } else if (value.getClass().getName().startsWith("io.spillway.")) {
        for (Class<?> type = value.getClass(); type != null && type.getName().startsWith("io.spillway."); type = type.getSuperclass()) {
          for (Field field : type.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()) {
              continue;
            }
            try {
              field.setAccessible(true);
              work.add(new Object[] {field.get(value), path + "." + field.getName()});
            } catch (ReflectiveOperationException | RuntimeException inaccessible) {
              found.add(path + "." + field.getName() + " (could not be inspected: " + inaccessible + ")");
            }
          }
        }
      }
    }
    return found;
  }
}
