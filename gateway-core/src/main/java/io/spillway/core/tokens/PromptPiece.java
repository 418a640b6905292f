package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One item of a request body's top-level array (a message, an input item, a tool definition) as the
 * client sent it and as it was parsed, with the memo keys of what is in it: what {@link PromptPieces}
 * remembers so that the next request carrying the same bytes is handed this tree and these keys
 * instead of parsing and hashing them again.
 *
 * <p>Shared by every request that carries the same bytes, so it is immutable, and so is its tree:
 * no stage changes a request's body in place (see {@link io.spillway.core.pipeline.GatewayRequest}),
 * and with assertions on (every test run) {@link PromptPieces} checks on each reuse that the tree
 * still reads as its bytes.
 */
public final class PromptPiece {
  private final byte[] bytes;
  private final JsonNode node;
  private final Map<String, TextKey> textKeys;
  private final TextKey structure;

  private PromptPiece(byte[] bytes, JsonNode node, Map<String, TextKey> textKeys, TextKey structure) {
    this.bytes = bytes;
    this.node = node;
    this.textKeys = textKeys;
    this.structure = structure;
  }

  /** A piece of {@code bytes} (kept, not copied) parsed as {@code node}, its keys taken now. */
  static PromptPiece of(byte[] bytes, JsonNode node) {
    Map<String, TextKey> keys = new IdentityHashMap<>();
    keyTexts(node, keys);
    return new PromptPiece(bytes, node, Collections.unmodifiableMap(keys), TextKey.ofJson(node));
  }

  private static void keyTexts(JsonNode node, Map<String, TextKey> keys) {
    if (node.isTextual()) {
      keys.put(node.textValue(), TextKey.of(node.textValue()));
    } else if (node.isContainerNode()) {
      for (JsonNode child : node) {
        keyTexts(child, keys);
      }
    }
  }

  /** The tree, shared by every request that carried these bytes: never change it. */
  public JsonNode node() {
    return node;
  }

  /** How many bytes of the client's body this piece is. */
  public int length() {
    return bytes.length;
  }

  byte[] bytes() {
    return bytes;
  }

  /** The {@link TextKey#of key} of every string value in the tree, by the string's identity. */
  Map<String, TextKey> textKeys() {
    return textKeys;
  }

  /** The tree's {@link TextKey#ofJson structural key}. */
  TextKey structure() {
    return structure;
  }
}
