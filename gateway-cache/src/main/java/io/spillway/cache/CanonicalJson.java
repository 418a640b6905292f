package io.spillway.cache;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One canonical text per JSON value, so that requests which mean the same thing hash the same:
 * object members sorted by name (UTF-16 code-unit order, as RFC 8785), no insignificant whitespace,
 * and every number written in one form ({@code 0}, {@code 0.0} and {@code 0e3} are all {@code 0};
 * {@code 100} and {@code 100.0} are both {@code 1E+2}). Strings, booleans, nulls and array order
 * are kept exactly. Stateless and thread-safe.
 */
final class CanonicalJson {
  private CanonicalJson() {}

  /** The canonical text of {@code node}, for tests and diagnostics. */
  static String text(JsonNode node) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    write(node, out);
    return out.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** SHA-256 over the canonical text of {@code node}, then each of {@code extras} (null-safe). */
  static byte[] sha256(JsonNode node, String... extras) {
    MessageDigest digest = sha256();
    write(node, new DigestSink(digest));
    for (String extra : extras) {
      digest.update((byte) 0);
      if (extra != null) {
        digest.update(extra.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    return digest.digest();
  }

  private static void write(JsonNode node, OutputStream out) {
    try (JsonGenerator generator = Json.MAPPER.getFactory().createGenerator(out)) {
      write(node, generator);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void write(JsonNode node, JsonGenerator out) throws IOException {
    switch (node.getNodeType()) {
      case OBJECT -> {
        List<String> names = new ArrayList<>(node.size());
        node.fieldNames().forEachRemaining(names::add);
        Collections.sort(names);
        out.writeStartObject();
        for (String name : names) {
          out.writeFieldName(name);
          write(node.get(name), out);
        }
        out.writeEndObject();
      }
      case ARRAY -> {
        out.writeStartArray();
        for (JsonNode element : node) {
          write(element, out);
        }
        out.writeEndArray();
      }
      case NUMBER -> out.writeNumber(canonicalNumber(node.decimalValue()));
      case STRING -> out.writeString(node.textValue());
      case BOOLEAN -> out.writeBoolean(node.booleanValue());
      case NULL, MISSING -> out.writeNull();
      default -> out.writeString(node.asText());
    }
  }

  /**
   * Scientific form after stripping trailing zeros: short and bounded even for {@code 1e999999999},
   * where the plain form would be a billion digits.
   */
  static String canonicalNumber(BigDecimal value) {
    return value.stripTrailingZeros().toString();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JVM has SHA-256", e);
    }
  }

  private static final class DigestSink extends OutputStream {
    private final MessageDigest digest;

    DigestSink(MessageDigest digest) {
      this.digest = digest;
    }

    @Override
    public void write(int b) {
      digest.update((byte) b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      digest.update(b, off, len);
    }
  }
}
