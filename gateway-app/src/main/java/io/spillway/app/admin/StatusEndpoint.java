package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.Version;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /admin/status}: version, uptime, the backends and whether each is ready, then every
 * section registered in the {@link StatusRegistry} under its name ({@code breaker}, {@code admission},
 * {@code risk}, ...). A section whose snapshot fails shows {@code {"error": ...}} instead of failing
 * the whole status. Last comes {@code summary} ({@link OperatorSummary}): what Spillway is doing, what
 * the operator can do, and the runbook that covers it.
 */
public final class StatusEndpoint implements HttpService {
  private static final Logger log = LoggerFactory.getLogger(StatusEndpoint.class);

  private final Clock clock;
  private final Instant startedAt;
  private final Supplier<List<Backend>> backends;
  private final StatusRegistry sections;

  public StatusEndpoint(Clock clock, Supplier<List<Backend>> backends, StatusRegistry sections) {
    this.clock = clock;
    this.startedAt = clock.instant();
    this.backends = backends;
    this.sections = sections;
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    return AdminApi.ok(snapshot());
  }

  public ObjectNode snapshot() {
    Instant now = clock.instant();
    ObjectNode root = Json.object();
    root.put("version", Version.VERSION);
    root.put("now", now.toString());
    root.put("startedAt", startedAt.toString());
    root.put("uptimeSeconds", Math.max(0, Duration.between(startedAt, now).toSeconds()));
    ArrayNode list = root.putArray("backends");
    boolean anyReady = false;
    for (Backend backend : backends.get()) {
      boolean ready = ready(backend);
      anyReady |= ready;
      list.addObject().put("name", backend.kind().tag()).put("ready", ready);
    }
    root.put("ready", anyReady);
    for (Map.Entry<String, Supplier<JsonNode>> section : sections.sections().entrySet()) {
      root.set(section.getKey(), section(section.getKey(), section.getValue()));
    }
    root.set("summary", OperatorSummary.of(root, now));
    return root;
  }

  private static boolean ready(Backend backend) {
    try {
      return backend.ready();
    } catch (RuntimeException e) {
      log.warn("backend {} failed its readiness check: {}", backend.kind().tag(), e.toString());
      return false;
    }
  }

  private static JsonNode section(String name, Supplier<JsonNode> snapshot) {
    try {
      JsonNode node = snapshot.get();
      return node != null ? node : Json.MAPPER.nullNode();
    } catch (RuntimeException e) {
      log.warn("status section {} failed: {}", name, e.toString());
      return Json.object().put("error", e.getClass().getSimpleName());
    }
  }
}
