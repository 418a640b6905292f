package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.GatewayRequest;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys of one request's prompt texts, for every stage that reads them (signal scoring, the trim
 * decision, the quota estimate, {@code count_tokens}): the {@link TextKey} of each text and of each
 * JSON value measured whole (tool definitions). The texts themselves come from the request's one
 * walk over its prompt ({@link io.spillway.core.prompt.PromptWalk}); a text is hashed once per
 * request, however many stages look at it, and the memos those stages keep across requests (token
 * counts in {@link TokenCounter}, signal scores in shaping) are looked up with these keys. Travels on
 * the request ({@link #of}); keyed by the very string (or node) the parse produced, so a stage that
 * rewrote a text sees its own. The keys of pieces the parse took from {@link PromptPieces} come with
 * them ({@link #take}), so a repeated prefix is not hashed again either.
 *
 * <p>Not thread-safe, like the request's other attributes: one thread at a time works on a request.
 */
public final class PromptKeys {
  private static final Attribute<PromptKeys> ATTRIBUTE = Attribute.of("promptKeys");

  private final Map<String, TextKey> texts = new IdentityHashMap<>();
  private final Map<JsonNode, TextKey> values = new IdentityHashMap<>();
  private List<PromptPiece> pieces = List.of();
  private int lastPiece;

  /** The request's keys, made on first use and shared by every copy of the request. */
  public static PromptKeys of(GatewayRequest request) {
    PromptKeys keys = request.attribute(ATTRIBUTE);
    if (keys == null) {
      keys = new PromptKeys();
      request.setAttribute(ATTRIBUTE, keys);
    }
    return keys;
  }

  /**
   * Takes the keys {@code pieces} carry (pieces of this request's body, as the parse read them):
   * looked up in the pieces themselves, in the order the body holds them, not copied.
   */
  public void take(List<PromptPiece> pieces) {
    this.pieces = pieces;
    for (PromptPiece piece : pieces) {
      values.put(piece.node(), piece.structure());
    }
  }

  /** The key of {@code text}, hashed on first use. */
  public TextKey key(String text) {
    TextKey key = texts.get(text);
    if (key == null) {
      key = pieceKey(text);
      if (key == null) {
        key = TextKey.of(text);
      }
      texts.put(text, key);
    }
    return key;
  }

  /**
   * The key a piece of the body holds for {@code text}, or null. Stages read the texts in body
   * order, so the search starts at the piece the last text was found in.
   */
  private TextKey pieceKey(String text) {
    int n = pieces.size();
    for (int i = 0; i < n; i++) {
      int at = (lastPiece + i) % n;
      TextKey key = pieces.get(at).textKeys().get(text);
      if (key != null) {
        lastPiece = at;
        return key;
      }
    }
    return null;
  }

  /** The key of the JSON value {@code node}, taken on first use (see {@link TextKey#ofJson}). */
  public TextKey key(JsonNode node) {
    TextKey key = values.get(node);
    if (key == null) {
      key = TextKey.ofJson(node, values::get);
      values.put(node, key);
    }
    return key;
  }
}
