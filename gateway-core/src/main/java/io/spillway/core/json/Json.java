package io.spillway.core.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.core.util.RecyclerPool;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one shared Jackson mapper and small tree helpers. The mapper is configured once, thread-safe,
 * and must not be reconfigured after start.
 *
 * <p>A request is parsed on an event loop or, once a stage may block, on a short-lived virtual
 * thread, so Jackson's default per-thread buffer recycling would often hand it fresh parser and
 * generator buffers; {@link #RECYCLER} shares them across threads instead.
 */
public final class Json {
  /** Nesting deeper than this is refused before it can exhaust a stack. */
  public static final int MAX_DEPTH = 64;

  /** Parser and generator buffers, shared by every thread (use it for any other JsonFactory too). */
  public static final RecyclerPool<BufferRecycler> RECYCLER = JsonRecyclerPools.sharedConcurrentDequePool();

  public static final ObjectMapper MAPPER = mapper(MAX_DEPTH);

  /**
   * Reads one value from a parser already inside a document (the parser stays where the value ends):
   * what readers that pick a few fields out of a larger document build their small trees with.
   */
  public static final ObjectReader VALUE_READER = MAPPER.reader().without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private Json() {}

  private static ObjectMapper mapper(int maxDepth) {
    return JsonMapper.builder(
            JsonFactory.builder()
                .recyclerPool(RECYCLER)
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(maxDepth).build())
                .build())
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
        .build();
  }

  /**
   * A reader of one whole value that sits {@code depth} levels deep in a document {@link #MAPPER}
   * reads: the same rules, with {@code depth} fewer levels of nesting left for the value itself.
   */
  public static ObjectReader readerAtDepth(int depth) {
    return mapper(MAX_DEPTH - depth).reader();
  }

  public static JsonNode parse(byte[] bytes) throws IOException {
    return MAPPER.readTree(bytes);
  }

  public static JsonNode parse(String text) throws IOException {
    return MAPPER.readTree(text);
  }

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static byte[] toBytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String toString(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The text of {@code field}, or null when it is absent or not a string. */
  public static String text(JsonNode node, String field) {
    JsonNode value = node == null ? null : node.get(field);
    return value != null && value.isTextual() ? value.textValue() : null;
  }
}
