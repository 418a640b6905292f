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
  /** Heap a tree node takes with its share of the maps, strings and keys that hold it (estimated). */
  static final int HEAP_PER_NODE = 96;

  /** Heap a piece takes besides its bytes and nodes: itself, its key map and its memo entry (estimated). */
  static final int HEAP_PER_PIECE = 512;

  private final byte[] bytes;
  private final JsonNode node;
  private final Map<String, TextKey> textKeys;
  private final TextKey structure;
  private final int heapBytes;

  private PromptPiece(byte[] bytes, JsonNode node, Map<String, TextKey> textKeys, TextKey structure, int nodes) {
    this.bytes = bytes;
    this.node = node;
    this.textKeys = textKeys;
    this.structure = structure;
    this.heapBytes = (int) Math.min(Integer.MAX_VALUE, 3L * bytes.length + (long) HEAP_PER_NODE * nodes + HEAP_PER_PIECE);
  }

  /** A piece of {@code bytes} (kept, not copied) parsed as {@code node}, its keys taken now. */
  static PromptPiece of(byte[] bytes, JsonNode node) {
    Map<String, TextKey> keys = new IdentityHashMap<>();
    int nodes = keyTexts(node, keys);
    return new PromptPiece(bytes, node, Collections.unmodifiableMap(keys), TextKey.ofJson(node), nodes);
  }

  /** Takes the key of every string in {@code node}; answers how many nodes it has. */
  private static int keyTexts(JsonNode node, Map<String, TextKey> keys) {
    if (node.isTextual()) {
      keys.put(node.textValue(), TextKey.of(node.textValue()));
    } else if (node.isContainerNode()) {
      int nodes = 1;
      for (JsonNode child : node) {
        nodes += keyTexts(child, keys);
      }
      return nodes;
    }
    return 1;
  }

  /** The tree, shared by every request that carried these bytes: never change it. */
  public JsonNode node() {
    return node;
  }

  /** How many bytes of the client's body this piece is. */
  public int length() {
    return bytes.length;
  }

  /**
   * The heap this piece takes, estimated: three times its bytes (the bytes kept, the tree's strings,
   * their keys), a share for each node of the tree (the node, its map entry, its string) and one for
   * the piece (itself, its key map, its memo entry). Fitted to heap measured after a full collection
   * (20,000 pieces each): a 2.5 KB Codex tool definition or message takes about four times its
   * bytes, a 100-byte chat message ten times.
   */
  public int heapBytes() {
    return heapBytes;
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
