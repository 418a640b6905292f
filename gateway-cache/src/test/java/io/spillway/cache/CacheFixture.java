package io.spillway.cache;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.CacheConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The cache stage in a pipeline whose terminal is whatever the test says the upstream does, with a
 * fake clock and a simple meter registry. Counts the requests that got past the cache.
 */
final class CacheFixture {
  static final Caller RELEASE = new Caller("release", Tier.GOLD, "k-release");
  static final Caller WEB = new Caller("web", Tier.SILVER, "k-web");

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final ResponseCache cache;
  final AtomicInteger upstreamCalls = new AtomicInteger();
  private final Pipeline pipeline;
  volatile Function<GatewayRequest, GatewayResponse> upstream;

  CacheFixture() {
    this(CacheConfig.DEFAULTS);
  }

  CacheFixture(CacheConfig config) {
    cache = ResponseCache.builder(config).clock(clock).meters(meters).streamTimeLimit(Duration.ofMinutes(30)).build();
    pipeline = new Pipeline(List.of(cache.interceptor()), Terminal.blocking(request -> {
      upstreamCalls.incrementAndGet();
      return upstream.apply(request);
    }));
  }

  GatewayResponse send(Caller caller, Route route, String json, String... headers) {
    return send(caller, route, json, ClientDisconnect.NEVER, headers);
  }

  /** Sends a request whose client's leaving {@code disconnect} signals. */
  GatewayResponse send(Caller caller, Route route, String json, ClientDisconnect disconnect, String... headers) {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    ObjectNode body;
    try {
      body = (ObjectNode) Json.parse(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    GatewayRequest request = GatewayRequest.create("req", route, Headers.of(headers), body, bytes, clock.instant());
    request.setAttribute(RequestAttributes.CALLER, caller);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);
    try {
      return pipeline.execute(request);
    } catch (GatewayException e) {
      return ErrorMapper.toResponse(e);
    }
  }

  GatewayResponse chat(Caller caller, String prompt, String... headers) {
    return send(caller, Route.CHAT_COMPLETIONS, chatBody(prompt, false), headers);
  }

  static String chatBody(String prompt, boolean stream) {
    return "{\"model\":\"gpt-4o\",\"temperature\":0,\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
  }

  static GatewayResponse chatAnswer(String content) {
    String body = """
        {"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o",
         "choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],
         "usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}""".formatted(content);
    return GatewayResponse.buffered(200,
        Headers.of("content-type", "application/json", "x-spillway-backend", "cloud",
            "x-ratelimit-remaining-requests", "41"),
        body.getBytes(StandardCharsets.UTF_8));
  }

  static SseEvent chunk(String content) {
    return SseEvent.data("{\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
        + "\"delta\":{\"content\":\"" + content + "\"},\"finish_reason\":null}]}");
  }

  static SseEvent usageChunk(int total) {
    return SseEvent.data("{\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
        + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":" + (total - 12) + ",\"total_tokens\":" + total + "}}");
  }

  static GatewayResponse streamed(EventStream stream) {
    return GatewayResponse.streamed(200, Headers.of("x-spillway-backend", "cloud"), stream);
  }

  static String body(GatewayResponse response) {
    return new String(response.body(), StandardCharsets.UTF_8);
  }

  /** Reads a streamed response to its end; a failure is returned as the last element's message. */
  static List<String> drain(GatewayResponse response) {
    List<String> out = new ArrayList<>();
    try (EventStream stream = response.stream()) {
      SseEvent event;
      while ((event = stream.next()) != null) {
        out.add(event.event() == null ? event.data() : event.event() + ":" + event.data());
      }
    } catch (GatewayException e) {
      out.add("error:" + e.status());
    }
    return out;
  }

  double count(String result) {
    return meters.find("spillway.cache.requests").tag("result", result).counters().stream()
        .mapToDouble(c -> c.count()).sum();
  }

  int joiners() {
    return cache.inFlight.values().stream().mapToInt(call -> call.joiners().size()).sum();
  }

  static <T> T get(java.util.concurrent.Future<T> future) {
    try {
      return future.get(20, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
