package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.function.Function;

/**
 * Identifies a text, or a JSON value, without keeping it: what Spillway's memos key on (token counts,
 * signal scores). Three independent parts: Java's string hash, a 64-bit multiply-xor hash over the
 * UTF-16 code units taken four at a time, and the length. Two different texts sharing all three is
 * vanishingly unlikely, and would cost one wrong estimate or score, which the settlement with the
 * backend's usage corrects. A JSON value's key ({@link #ofJson}) is taken over its structure (kinds,
 * field names, values) as read, so two values that would be written as the same JSON text share it,
 * without the value being written out. An array's key is made of its items' keys, so the key of a
 * {@code tools} array whose definitions were keyed before (they came from {@link PromptPieces}) costs
 * a step per definition, not a walk over each.
 */
public record TextKey(long mix, int hash, int length) {
  private static final long K = 0x9e3779b97f4a7c15L;

  /** The key of {@code text}. */
  public static TextKey of(String text) {
    int n = text.length();
    long h = n;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      long word = text.charAt(i) | (long) text.charAt(i + 1) << 16
          | (long) text.charAt(i + 2) << 32 | (long) text.charAt(i + 3) << 48;
      h = Long.rotateLeft(h ^ word * K, 29) * K;
    }
    for (; i < n; i++) {
      h = Long.rotateLeft(h ^ text.charAt(i) * K, 29) * K;
    }
    return new TextKey(h ^ h >>> 32, text.hashCode(), n);
  }

  /**
   * The key of a JSON value, taken over what was parsed (never written back to text). Keys of JSON
   * values and of plain texts are never compared with each other (a memo holds one kind).
   */
  public static TextKey ofJson(JsonNode node) {
    return ofJson(node, item -> null);
  }

  /**
   * The key of a JSON value, as {@link #ofJson(JsonNode)} takes it, with the keys of array items
   * already known taken from {@code known} (null for an item not known) instead of walking them: the
   * result is the same either way.
   */
  public static TextKey ofJson(JsonNode node, Function<JsonNode, TextKey> known) {
    Walk walk = new Walk(known);
    walk.value(node);
    return new TextKey(walk.mix ^ walk.mix >>> 32, (int) (walk.hash ^ walk.hash >>> 32), walk.length);
  }

  /** Two running hashes over the value's kinds, names and contents. */
  private static final class Walk {
    private final Function<JsonNode, TextKey> known;
    long mix = 0x6a09e667f3bcc908L;
    long hash = 17;
    int length;

    Walk(Function<JsonNode, TextKey> known) {
      this.known = known;
    }

    void value(JsonNode node) {
      switch (node.getNodeType()) {
        case OBJECT -> {
          tag('{');
          for (Map.Entry<String, JsonNode> field : node.properties()) {
            text(field.getKey());
            value(field.getValue());
          }
          tag('}');
        }
        case ARRAY -> {
          tag('[');
          for (JsonNode item : node) {
            TextKey key = known.apply(item);
            key(key != null ? key : ofJson(item, known));
          }
          tag(']');
        }
        case STRING -> {
          tag('"');
          text(node.textValue());
        }
        case NUMBER -> {
          tag('#');
          text(node.asText());
        }
        case BOOLEAN -> tag(node.booleanValue() ? 't' : 'f');
        case NULL -> tag('n');
        default -> {
          tag('?');
          text(node.asText());
        }
      }
    }

    /** An array item, by its own key (see {@link #ofJson(JsonNode, Function)}). */
    private void key(TextKey item) {
      mix = Long.rotateLeft(mix ^ item.mix * K, 29) * K;
      mix = Long.rotateLeft(mix ^ ((long) item.hash << 32 | item.length) * K, 29) * K;
      hash = 31 * hash + item.hash;
      length += item.length;
    }

    private void tag(char c) {
      mix = Long.rotateLeft(mix ^ (c | 0x1_0000L) * K, 29) * K;
      hash = 31 * hash + c;
      length++;
    }

    private void text(String s) {
      int n = s.length();
      long h = mix ^ n * K;
      int i = 0;
      for (; i + 4 <= n; i += 4) {
        long word = s.charAt(i) | (long) s.charAt(i + 1) << 16
            | (long) s.charAt(i + 2) << 32 | (long) s.charAt(i + 3) << 48;
        h = Long.rotateLeft(h ^ word * K, 29) * K;
      }
      for (; i < n; i++) {
        h = Long.rotateLeft(h ^ s.charAt(i) * K, 29) * K;
      }
      mix = Long.rotateLeft(h, 29) * K;
      hash = 31 * hash + s.hashCode();
      length += n + 1;
    }
  }
}
