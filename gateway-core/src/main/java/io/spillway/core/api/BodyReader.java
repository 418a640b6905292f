package io.spillway.core.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.spillway.core.json.Json;
import io.spillway.core.tokens.PromptPiece;
import io.spillway.core.tokens.PromptPieces;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a request body (a JSON object, already checked to be UTF-8) into the tree {@link Json#parse}
 * would make, taking each item of a top-level array ({@code messages}, {@code input}, {@code tools},
 * ...) that a recent request carried byte for byte from {@link PromptPieces} instead of parsing it:
 * an agent's turn repeats its instructions, tools and history, and this is how a repeated prefix
 * costs a memory compare instead of a parse and a hash of every text.
 *
 * <p>Only the top level is read here: the object's names, and where each value ends. Every value is
 * parsed by Jackson with the shared mapper's rules (a new item is parsed once, then remembered).
 * Whatever this reader does not take the plain way (a top-level name with an escape or a duplicate,
 * bytes that do not close, a value Jackson refuses) it gives up on, and the caller parses the body
 * whole, which answers exactly as it always did: the same tree, or the same error.
 */
final class BodyReader {
  /** The body's tree, and the pieces it was made of (found in the memo, or just remembered). */
  record Read(ObjectNode body, List<PromptPiece> pieces) {}

  private static final ObjectReader TOP_VALUES = Json.readerAtDepth(1);
  private static final ObjectReader ITEMS = Json.readerAtDepth(2);
  private static final JsonNodeFactory NODES = Json.MAPPER.getNodeFactory();
  /** Longer top-level names are left to the whole parse (and its name-length limit). */
  private static final int MAX_NAME = 1024;

  private final byte[] b;
  private final PromptPieces memo;
  private final List<PromptPiece> pieces = new ArrayList<>();

  private BodyReader(byte[] body, PromptPieces memo) {
    this.b = body;
    this.memo = memo;
  }

  /** The body read with {@code memo}'s pieces, or null when it must be parsed whole. */
  static Read read(byte[] body, PromptPieces memo) {
    try {
      BodyReader reader = new BodyReader(body, memo);
      ObjectNode tree = reader.object();
      return tree == null ? null : new Read(tree, reader.pieces);
    } catch (IOException | RuntimeException e) {
      return null; // Jackson refused a value (some refusals are unchecked): the whole parse says why
    }
  }

  private ObjectNode object() throws IOException {
    int i = space(0);
    if (i >= b.length || b[i] != '{') {
      return null;
    }
    ObjectNode object = NODES.objectNode();
    i = space(i + 1);
    if (i < b.length && b[i] == '}') {
      return space(i + 1) == b.length ? object : null;
    }
    while (true) {
      int nameEnd = plainStringEnd(i);
      if (nameEnd < 0 || nameEnd - i - 2 > MAX_NAME) {
        return null;
      }
      String name = new String(b, i + 1, nameEnd - i - 2, StandardCharsets.UTF_8);
      if (object.has(name)) {
        return null;
      }
      i = space(nameEnd);
      if (i >= b.length || b[i] != ':') {
        return null;
      }
      i = space(i + 1);
      if (i >= b.length) {
        return null;
      }
      int end;
      if (b[i] == '[') {
        ArrayNode items = NODES.arrayNode();
        end = items(i, items);
        object.set(name, items);
      } else {
        end = valueEnd(i);
        if (end < 0) {
          return null;
        }
        object.set(name, value(TOP_VALUES, i, end));
      }
      if (end < 0) {
        return null;
      }
      i = space(end);
      if (i >= b.length) {
        return null;
      }
      if (b[i] == '}') {
        return space(i + 1) == b.length ? object : null;
      }
      if (b[i] != ',') {
        return null;
      }
      i = space(i + 1);
    }
  }

  /** Reads the top-level array at {@code at} into {@code items}; where it ends, or -1. */
  private int items(int at, ArrayNode items) throws IOException {
    int i = space(at + 1);
    if (i < b.length && b[i] == ']') {
      return i + 1;
    }
    while (i < b.length) {
      PromptPiece piece = b[i] == '{' || b[i] == '[' ? memo.find(b, i) : null;
      int end;
      if (piece != null) {
        pieces.add(piece);
        items.add(piece.node());
        end = i + piece.length();
      } else {
        end = valueEnd(i);
        if (end < 0) {
          return -1;
        }
        JsonNode item = value(ITEMS, i, end);
        PromptPiece remembered = item.isContainerNode() ? memo.remember(b, i, end, item) : null;
        if (remembered != null) {
          pieces.add(remembered);
        }
        items.add(item);
      }
      i = space(end);
      if (i >= b.length) {
        return -1;
      }
      if (b[i] == ']') {
        return i + 1;
      }
      if (b[i] != ',') {
        return -1;
      }
      i = space(i + 1);
    }
    return -1;
  }

  /**
   * The value in {@code [from, to)}: a plain string, {@code true}, {@code false}, {@code null} or a
   * small integer made here exactly as Jackson makes them, anything else parsed by {@code reader}.
   */
  private JsonNode value(ObjectReader reader, int from, int to) throws IOException {
    byte first = b[from];
    if (first == '"' && plainStringEnd(from) == to) {
      return TextNode.valueOf(new String(b, from + 1, to - from - 2, StandardCharsets.UTF_8));
    }
    if (is(from, to, "true")) {
      return BooleanNode.TRUE;
    }
    if (is(from, to, "false")) {
      return BooleanNode.FALSE;
    }
    if (is(from, to, "null")) {
      return NullNode.getInstance();
    }
    int small = smallInteger(from, to);
    if (small >= 0) {
      return IntNode.valueOf(small);
    }
    JsonNode node = reader.readTree(b, from, to - from);
    if (node == null || node.isMissingNode()) {
      throw new IOException("no value");
    }
    return node;
  }

  private boolean is(int from, int to, String literal) {
    if (to - from != literal.length()) {
      return false;
    }
    for (int i = 0; i < literal.length(); i++) {
      if (b[from + i] != literal.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** A non-negative integer of at most nine digits without a leading zero; -1 for anything else. */
  private int smallInteger(int from, int to) {
    int length = to - from;
    if (length < 1 || length > 9 || (b[from] == '0' && length > 1)) {
      return -1;
    }
    int value = 0;
    for (int i = from; i < to; i++) {
      int digit = b[i] - '0';
      if (digit < 0 || digit > 9) {
        return -1;
      }
      value = value * 10 + digit;
    }
    return value;
  }

  /**
   * Where the string at {@code at} ends if it is a plain one (no escape, no control character, which
   * JSON refuses unescaped), or -1.
   */
  private int plainStringEnd(int at) {
    if (at >= b.length || b[at] != '"') {
      return -1;
    }
    for (int i = at + 1; i < b.length; i++) {
      int c = b[i] & 0xff;
      if (c == '"') {
        return i + 1;
      }
      if (c == '\\' || c < 0x20) {
        return -1;
      }
    }
    return -1;
  }

  /**
   * Where the value starting at {@code at} ends, by its brackets and quotes alone, or -1 where they
   * do not close. This does not check the value: the parse of the range does.
   */
  private int valueEnd(int at) {
    byte first = b[at];
    if (first == '"') {
      return stringEnd(at);
    }
    if (first == '{' || first == '[') {
      int depth = 0;
      for (int i = at; i < b.length; i++) {
        byte c = b[i];
        if (c == '"') {
          int end = stringEnd(i);
          if (end < 0) {
            return -1;
          }
          i = end - 1;
        } else if (c == '{' || c == '[') {
          depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          return i + 1;
        }
      }
      return -1;
    }
    int i = at;
    while (i < b.length && !ends(b[i])) {
      i++;
    }
    return i;
  }

  private int stringEnd(int at) {
    for (int i = at + 1; i < b.length; i++) {
      if (b[i] == '\\') {
        i++;
      } else if (b[i] == '"') {
        return i + 1;
      }
    }
    return -1;
  }

  private static boolean ends(byte c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }

  private int space(int i) {
    while (i < b.length && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
      i++;
    }
    return i;
  }
}
