package io.spillway.app.observe;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.config.GatewayConfig;
import io.spillway.core.config.LoggingConfig;
import io.spillway.core.config.Reloadable;
import io.spillway.core.json.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line per request on the SLF4J logger {@value #LOGGER}: a JSON object (or {@code key=value}
 * text with {@code logging.json: false}) with the request id, team, tier, backend, model, status,
 * latency, tokens, degraded steps and cache status.
 *
 * <p>What is never in it: the client's key or any header (only the key's non-secret fingerprint).
 * Prompts and completions appear only with {@code logging.payloads: true}. The setting follows
 * config reloads.
 */
public final class AccessLog implements Reloadable {
  public static final String LOGGER = "spillway.access";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private volatile LoggingConfig config;

  public AccessLog(LoggingConfig config) {
    this.config = config;
  }

  /** Whether prompts and completions are to be captured for the log. */
  boolean payloads() {
    return config.payloads();
  }

  void write(Exchange exchange) {
    if (!log.isInfoEnabled()) {
      return;
    }
    log.info(config.json() ? json(exchange) : text(exchange));
  }

  static String json(Exchange e) {
    ObjectNode line = Json.object();
    line.put("ts", e.at().toString());
    line.put("requestId", e.requestId());
    line.put("route", e.route());
    line.put("team", e.team());
    line.put("tier", e.tier());
    line.put("keyId", e.keyId());
    line.put("backend", e.backend());
    line.put("model", e.model());
    line.put("status", e.status());
    line.put("outcome", e.outcome());
    line.put("stream", e.stream());
    line.put("latencyMs", millis(e.totalNanos()));
    line.put("gatewayMs", millis(e.gatewayNanos()));
    line.put("upstreamMs", millis(e.upstreamNanos()));
    if (e.ttfbNanos() >= 0) {
      line.put("ttfbMs", millis(e.ttfbNanos()));
    }
    if (e.promptTokens() >= 0) {
      line.put("promptTokens", e.promptTokens());
    }
    if (e.completionTokens() >= 0) {
      line.put("completionTokens", e.completionTokens());
    }
    if (e.promptTokens() >= 0 || e.completionTokens() >= 0) {
      line.put("totalTokens", Math.max(0, e.promptTokens()) + Math.max(0, e.completionTokens()));
    }
    ArrayNode degraded = line.putArray("degraded");
    e.degraded().forEach(degraded::add);
    line.put("cache", e.cache());
    if (e.error() != null) {
      line.put("error", e.error());
    }
    if (e.prompt() != null) {
      line.set("prompt", e.prompt());
    }
    if (e.completion() != null) {
      line.put("completion", e.completion());
    }
    return Json.toString(line);
  }

  static String text(Exchange e) {
    StringBuilder out = new StringBuilder(256);
    out.append("requestId=").append(e.requestId())
        .append(" route=").append(e.route())
        .append(" team=").append(e.team())
        .append(" tier=").append(e.tier())
        .append(" backend=").append(e.backend())
        .append(" model=").append(e.model())
        .append(" status=").append(e.status())
        .append(" outcome=").append(e.outcome())
        .append(" latencyMs=").append(millis(e.totalNanos()))
        .append(" upstreamMs=").append(millis(e.upstreamNanos()));
    if (e.ttfbNanos() >= 0) {
      out.append(" ttfbMs=").append(millis(e.ttfbNanos()));
    }
    if (e.promptTokens() >= 0 || e.completionTokens() >= 0) {
      out.append(" tokens=").append(Math.max(0, e.promptTokens()) + Math.max(0, e.completionTokens()));
    }
    if (!e.degraded().isEmpty()) {
      out.append(" degraded=").append(String.join(",", e.degraded()));
    }
    out.append(" cache=").append(e.cache());
    if (e.error() != null) {
      out.append(" error=").append(e.error());
    }
    if (e.prompt() != null) {
      out.append(" prompt=").append(Json.toString(e.prompt()));
    }
    if (e.completion() != null) {
      out.append(" completion=").append(Json.toString(Json.MAPPER.getNodeFactory().textNode(e.completion())));
    }
    return out.toString();
  }

  private static double millis(long nanos) {
    return Math.round(nanos / 10_000.0) / 100.0;
  }

  @Override
  public void reload(GatewayConfig next) {
    config = next.logging();
  }
}
