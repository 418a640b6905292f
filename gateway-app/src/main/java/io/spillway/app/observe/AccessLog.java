package io.spillway.app.observe;

import com.fasterxml.jackson.core.JsonGenerator;
import io.spillway.config.GatewayConfig;
import io.spillway.config.LoggingConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.json.Json;
import io.spillway.core.redact.Redactor;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line per request on the SLF4J logger {@value #LOGGER}: a JSON object (or {@code key=value}
 * text with {@code logging.json: false}) with the request id, team, tier, backend, model, status,
 * latency, tokens, degraded steps and cache status.
 *
 * <p>What is never in it: the client's key or any header (only a non-secret key id, keyed for a
 * config key: see {@link LogKeyIds}), nor a control, separator or bidirectional-format character
 * as itself (see {@link LogText}).
 * Prompts and completions appear only with {@code logging.payloads: true}. The setting follows
 * config reloads. Every line passes through the gateway's {@link Redactor}: an upstream that puts
 * the cloud key into an error code or a completion does not put it into the log.
 */
public final class AccessLog implements Reloadable {
  public static final String LOGGER = "spillway.access";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private final Redactor redactor;
  private volatile LoggingConfig config;
  private volatile LogKeyIds keyIds;

  public AccessLog(LoggingConfig config) {
    this(config, Redactor.NONE);
  }

  public AccessLog(LoggingConfig config, Redactor redactor) {
    this.config = config;
    this.redactor = redactor;
    this.keyIds = new LogKeyIds(config.keyIdSalt());
  }

  /** The id this log writes for a key id (see {@link LogKeyIds}). */
  public String logId(String keyId) {
    return keyIds.of(keyId);
  }

  /** Whether prompts and completions are to be captured for the log. */
  boolean payloads() {
    return config.payloads();
  }

  void write(Exchange exchange) {
    if (!log.isInfoEnabled()) {
      return;
    }
    String keyId = keyIds.of(exchange.keyId());
    log.info(redactor.redact(config.json() ? json(exchange, keyId) : text(exchange)));
  }

  /** The JSON line, written field by field (no tree: this runs once per request). */
  static String json(Exchange e, String keyId) {
    StringWriter out = new StringWriter(384);
    try (JsonGenerator line = Json.MAPPER.createGenerator(out)) {
      line.setCharacterEscapes(LogText.JSON_ESCAPES);
      line.writeStartObject();
      line.writeStringField("ts", e.at().toString());
      line.writeStringField("requestId", e.requestId());
      if (e.traceId() != null) {
        line.writeStringField("traceId", e.traceId());
      }
      line.writeStringField("route", e.route());
      line.writeStringField("team", e.team());
      line.writeStringField("tier", e.tier());
      line.writeStringField("keyId", keyId);
      line.writeStringField("backend", e.backend());
      line.writeStringField("model", e.model());
      line.writeNumberField("status", e.status());
      line.writeStringField("outcome", e.outcome());
      line.writeBooleanField("stream", e.stream());
      line.writeNumberField("latencyMs", millis(e.totalNanos()));
      line.writeNumberField("gatewayMs", millis(e.gatewayNanos()));
      line.writeNumberField("upstreamMs", millis(e.upstreamNanos()));
      if (e.ttfbNanos() >= 0) {
        line.writeNumberField("ttfbMs", millis(e.ttfbNanos()));
      }
      if (e.promptTokens() >= 0) {
        line.writeNumberField("promptTokens", e.promptTokens());
      }
      if (e.completionTokens() >= 0) {
        line.writeNumberField("completionTokens", e.completionTokens());
      }
      if (e.promptTokens() >= 0 || e.completionTokens() >= 0) {
        line.writeNumberField("totalTokens", Math.max(0, e.promptTokens()) + Math.max(0, e.completionTokens()));
      }
      if (e.costUsd() != null) {
        line.writeNumberField("costUsd", e.costUsd());
      }
      line.writeArrayFieldStart("degraded");
      for (String step : e.degraded()) {
        line.writeString(step);
      }
      line.writeEndArray();
      line.writeStringField("cache", e.cache());
      if (e.error() != null) {
        line.writeStringField("error", e.error());
      }
      if (e.prompt() != null) {
        line.writeFieldName("prompt");
        line.writeTree(e.prompt());
      }
      if (e.completion() != null) {
        line.writeStringField("completion", e.completion());
      }
      line.writeEndObject();
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible); // a StringWriter does not fail
    }
    return out.toString();
  }

  static String text(Exchange e) {
    StringBuilder out = new StringBuilder(256);
    out.append("requestId=").append(e.requestId());
    if (e.traceId() != null) {
      out.append(" traceId=").append(e.traceId());
    }
    out.append(" route=").append(e.route())
        .append(" team=").append(LogText.escaped(e.team()))
        .append(" tier=").append(e.tier())
        .append(" backend=").append(e.backend())
        .append(" model=").append(LogText.escaped(e.model()))
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
    if (e.costUsd() != null) {
      out.append(" costUsd=").append(e.costUsd());
    }
    if (!e.degraded().isEmpty()) {
      out.append(" degraded=").append(LogText.escaped(String.join(",", e.degraded())));
    }
    out.append(" cache=").append(e.cache());
    if (e.error() != null) {
      out.append(" error=").append(LogText.escaped(e.error()));
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
    if (!java.util.Objects.equals(next.logging().keyIdSalt(), config.keyIdSalt())) {
      keyIds = new LogKeyIds(next.logging().keyIdSalt());
    }
    config = next.logging();
  }
}
