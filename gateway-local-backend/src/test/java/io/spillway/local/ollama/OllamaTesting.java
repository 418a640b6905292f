package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.server.testing.EventLoopClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Shared set-up for tests against an Ollama stand-in: config, requests, reading answers back. */
public final class OllamaTesting {
  public static final String CLOUD_KEY = "sk-company-cloud-secret";

  private OllamaTesting() {}

  public static LocalConfig config(String baseUrl) {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    models.put("gpt-4o-mini", "llama3.2:3b");
    return new LocalConfig(true, LocalConfig.Kind.OLLAMA, baseUrl, models, Duration.ofMinutes(15), Duration.ofMinutes(1),
        Duration.ofSeconds(10), null);
  }

  public static CloudConfig cloud() {
    return new CloudConfig("https://api.openai.com/v1", CLOUD_KEY, null, null, null, null);
  }

  /**
   * A backend that makes its data calls over the event loops' client ({@link EventLoopClient}: the
   * test class must extend with it), as the gateway does.
   */
  public static OllamaBackend backend(String baseUrl, FakeClock clock) {
    return new OllamaBackend(config(baseUrl), cloud(), clock, new SimpleMeterRegistry(), EventLoopClient.http());
  }

  public static GatewayRequest request(Route route, String json) {
    try {
      ObjectNode body = route == Route.MODELS ? Json.object() : (ObjectNode) Json.parse(json);
      byte[] raw = route == Route.MODELS ? null : json.getBytes(StandardCharsets.UTF_8);
      return GatewayRequest.create("req_client_1", route,
          Headers.of("authorization", "Bearer sk-gateway-key-of-the-client", "content-type", "application/json"),
          body, raw, java.time.Instant.parse("2026-11-10T10:00:00Z"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static JsonNode json(GatewayResponse response) {
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every event of a stream, read to its end. */
  public static List<SseEvent> drain(GatewayResponse response) {
    List<SseEvent> events = new ArrayList<>();
    try (EventStream stream = response.stream()) {
      SseEvent event;
      while ((event = stream.next()) != null) {
        events.add(event);
      }
    }
    return events;
  }

  public static JsonNode data(SseEvent event) {
    try {
      return Json.parse(event.data());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The body Spillway sent to {@code path}, the only such request. */
  public static JsonNode sentBody(WireMockExtension ollama, String path) {
    List<LoggedRequest> requests = ollama.findAll(postRequestedFor(urlEqualTo(path)));
    if (requests.size() != 1) {
      throw new AssertionError("expected one request to " + path + ", got " + requests.size());
    }
    try {
      return Json.parse(requests.get(0).getBodyAsString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static LoggedRequest sentRequest(WireMockExtension ollama, String path) {
    return ollama.findAll(postRequestedFor(urlEqualTo(path))).get(0);
  }
}
