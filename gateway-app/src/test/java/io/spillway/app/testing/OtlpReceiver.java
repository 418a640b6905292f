package io.spillway.app.testing;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A tiny OTLP/HTTP collector for tests: accepts {@code POST /v1/traces} (protobuf) on an ephemeral
 * loopback port and keeps every span it receives, decoded with the OTLP proto classes.
 */
public final class OtlpReceiver implements AutoCloseable {
  /** A received span with its resource's attributes. */
  public record Received(Span span, Resource resource) {
    public String traceId() {
      return HexFormat.of().formatHex(span.getTraceId().toByteArray());
    }

    public String spanId() {
      return HexFormat.of().formatHex(span.getSpanId().toByteArray());
    }

    public String parentSpanId() {
      return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
    }

    public String name() {
      return span.getName();
    }

    public Span.SpanKind kind() {
      return span.getKind();
    }

    /** An attribute's value as text (a number as digits, a list as {@code [a, b]}), or null. */
    public String attribute(String key) {
      return valueOf(span.getAttributesList(), key);
    }

    public List<String> attributeKeys() {
      return span.getAttributesList().stream().map(KeyValue::getKey).toList();
    }

    public String resourceAttribute(String key) {
      return valueOf(resource.getAttributesList(), key);
    }
  }

  private final HttpServer server;
  private final List<Received> spans = new CopyOnWriteArrayList<>();
  private final List<String> contentTypes = new CopyOnWriteArrayList<>();

  public OtlpReceiver() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    server.createContext("/v1/traces", exchange -> {
      try (exchange; InputStream body = exchange.getRequestBody()) {
        if (!"POST".equals(exchange.getRequestMethod())) {
          exchange.sendResponseHeaders(405, -1);
          return;
        }
        contentTypes.add(exchange.getRequestHeaders().getFirst("Content-Type"));
        ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body.readAllBytes());
        for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
          for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
            for (Span span : scopeSpans.getSpansList()) {
              spans.add(new Received(span, resourceSpans.getResource()));
            }
          }
        }
        byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
        exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
        if (answer.length > 0) {
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(answer);
          }
        }
      }
    });
    server.start();
  }

  /** The traces URL to put in {@code traces.endpoint}. */
  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/traces";
  }

  public List<Received> spans() {
    return List.copyOf(spans);
  }

  public List<String> contentTypes() {
    return List.copyOf(contentTypes);
  }

  private static String valueOf(List<KeyValue> attributes, String key) {
    for (KeyValue attribute : attributes) {
      if (attribute.getKey().equals(key)) {
        return text(attribute.getValue());
      }
    }
    return null;
  }

  private static String text(AnyValue value) {
    return switch (value.getValueCase()) {
      case STRING_VALUE -> value.getStringValue();
      case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
      case INT_VALUE -> Long.toString(value.getIntValue());
      case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
      case ARRAY_VALUE -> {
        List<String> items = new ArrayList<>();
        value.getArrayValue().getValuesList().forEach(item -> items.add(text(item)));
        yield items.toString();
      }
      default -> value.toString();
    };
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
