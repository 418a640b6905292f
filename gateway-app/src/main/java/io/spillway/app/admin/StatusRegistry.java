package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The sections of {@code GET /admin/status}: each feature registers a named snapshot supplier
 * (breaker, backends, admission, risk, ...). Registration happens while the gateway is wired;
 * reading happens per request.
 */
public final class StatusRegistry {
  private final Map<String, Supplier<JsonNode>> sections = new LinkedHashMap<>();

  public synchronized void register(String name, Supplier<JsonNode> snapshot) {
    sections.put(name, snapshot);
  }

  public synchronized Map<String, Supplier<JsonNode>> sections() {
    return Map.copyOf(sections);
  }
}
