package io.spillway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Golden files: expected outputs recorded once from an earlier version of the code, kept under a
 * module's {@code src/test/resources/golden/}, and compared with what the code answers now. A golden
 * file is never regenerated from the current code to make a failing test pass: a changed answer is a
 * behaviour change to be judged.
 */
public final class Golden {
  private Golden() {}

  /** The golden file {@code name} from the test class path ({@code golden/name}). */
  public static ObjectNode read(String name) {
    try (InputStream in = Golden.class.getClassLoader().getResourceAsStream("golden/" + name)) {
      if (in == null) {
        throw new IllegalStateException("no golden file golden/" + name + " on the test class path");
      }
      return (ObjectNode) Json.parse(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A stable digest of texts in order (SHA-256 of each text's UTF-8 bytes after its length; 32 hex digits). */
  public static String digest(List<String> texts) {
    MessageDigest sha = sha256();
    for (String text : texts) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      sha.update((bytes.length + ":").getBytes(StandardCharsets.US_ASCII));
      sha.update(bytes);
    }
    return HexFormat.of().formatHex(sha.digest(), 0, 16);
  }

  /** A stable digest of a JSON value: of its compact text, whose field order is the insertion order. */
  public static String digest(JsonNode node) {
    return digest(List.of(node.toString()));
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
