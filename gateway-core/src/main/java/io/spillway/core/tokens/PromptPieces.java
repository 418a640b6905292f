package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The pieces of recent request bodies, remembered by their bytes: an agent's every turn sends its
 * instructions, tool definitions and earlier messages again, byte for byte, and the parse and the
 * memo keys of those are what a turn's cost grew with. The body reader asks here, at the start of
 * each item of a top-level array, whether a remembered piece's bytes are the ones that follow; if
 * so the item is that piece's tree, taken without reading its bytes further (one compare of memory
 * with memory, far cheaper than a parse). A remembered piece is a whole JSON value, so bytes that
 * start with it hold exactly that value there.
 *
 * <p>Found by a hash of an item's first {@value #PROBE} bytes, up to {@value #CANDIDATES} pieces
 * sharing it, so items shorter than that are not remembered (parsing them costs little). An item is
 * remembered the second time it is seen, not the first: an agent repeats its turn's new message in
 * the next turn, but most first sightings are never seen again (a one-off request, the last message
 * of a conversation), and remembering those would only fill the memo and give the young generation
 * trees to copy. The first sighting leaves a mark, a hash of the item's bytes, in a table of plain
 * longs with a slot for every {@value #MARK_BYTES} bytes of the memo's bound: a mark is no object, so
 * a stream of one-off items gives the collector nothing to copy or trace, and a newer mark in the
 * same slot only makes an older item wait for its third sighting. Bounded by the heap the pieces
 * take ({@code server.pieceMemory}, estimated per piece: {@link PromptPiece#heapBytes}), least
 * recently used first out. Content-addressed: a piece is shared by whoever sends the same bytes,
 * and nothing in it is anyone's but what those bytes say. Thread-safe.
 */
public final class PromptPieces {
  /** Bytes hashed to find a piece; the shortest piece remembered. */
  public static final int PROBE = 64;

  /** Pieces kept per probe hash, most recent first. */
  static final int CANDIDATES = 4;

  /** The memo's bound, over this, is how many first sightings are marked (a power of two). */
  static final int MARK_BYTES = 1024;

  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long K = 0x9e3779b97f4a7c15L;
  private static final PromptPieces OFF = new PromptPieces(null, null);

  private final Cache<Long, PromptPiece[]> pieces;
  /** Hashes of items seen once, in the slot their hash picks; the second sighting remembers the item. */
  private final AtomicLongArray seenOnce;

  private PromptPieces(Cache<Long, PromptPiece[]> pieces, AtomicLongArray seenOnce) {
    this.pieces = pieces;
    this.seenOnce = seenOnce;
  }

  /**
   * A memo whose pieces take up to {@code maxHeapBytes} of heap, as {@link PromptPiece#heapBytes}
   * estimates it; 0 keeps none (see {@link #off}).
   */
  public static PromptPieces keeping(long maxHeapBytes) {
    if (maxHeapBytes <= 0) {
      return OFF;
    }
    long marks = Long.highestOneBit(Math.clamp(maxHeapBytes / MARK_BYTES, 1, 1 << 24));
    return new PromptPieces(Caffeine.newBuilder()
        .maximumWeight(maxHeapBytes)
        .<Long, PromptPiece[]>weigher((hash, bucket) -> {
          long bytes = 0;
          for (PromptPiece piece : bucket) {
            bytes += piece.heapBytes();
          }
          return (int) Math.min(Integer.MAX_VALUE, bytes);
        })
        .executor(Runnable::run)
        .build(),
        new AtomicLongArray((int) marks));
  }

  /** No memo: every body is parsed whole. */
  public static PromptPieces off() {
    return OFF;
  }

  public boolean isOff() {
    return pieces == null;
  }

  /** The remembered piece whose bytes are those of {@code body} from {@code at}, or null. */
  public PromptPiece find(byte[] body, int at) {
    if (pieces == null || body.length - at < PROBE) {
      return null;
    }
    PromptPiece[] bucket = pieces.getIfPresent(probe(body, at));
    if (bucket == null) {
      return null;
    }
    for (PromptPiece piece : bucket) {
      byte[] bytes = piece.bytes();
      if (bytes.length <= body.length - at && Arrays.equals(bytes, 0, bytes.length, body, at, at + bytes.length)) {
        assert readsAsItsBytes(piece) : "a stage changed a shared request piece in place";
        return piece;
      }
    }
    return null;
  }

  /**
   * Remembers {@code body[from, to)}, an item just parsed as {@code node}, the second time it is
   * seen, and returns it as a piece (with its keys taken); null the first time, when the memo is off,
   * or when the item is shorter than {@value #PROBE} bytes.
   */
  public PromptPiece remember(byte[] body, int from, int to, JsonNode node) {
    if (pieces == null || to - from < PROBE) {
      return null;
    }
    long whole = hash(body, from, to) | 1; // never 0, which marks an empty slot
    int slot = (int) (whole >>> 1) & (seenOnce.length() - 1);
    if (!seenOnce.compareAndSet(slot, whole, 0)) {
      seenOnce.set(slot, whole);
      return null;
    }
    PromptPiece piece = PromptPiece.of(Arrays.copyOfRange(body, from, to), node);
    pieces.asMap().merge(probe(body, from), new PromptPiece[] {piece}, PromptPieces::withNewest);
    return piece;
  }

  private static PromptPiece[] withNewest(PromptPiece[] bucket, PromptPiece[] newest) {
    PromptPiece[] merged = new PromptPiece[Math.min(CANDIDATES, bucket.length + 1)];
    merged[0] = newest[0];
    System.arraycopy(bucket, 0, merged, 1, merged.length - 1);
    return merged;
  }

  /** The heap the remembered pieces take now, as {@link PromptPiece#heapBytes} estimates it. */
  public long heapBytes() {
    if (pieces == null) {
      return 0;
    }
    pieces.cleanUp();
    return pieces.policy().eviction().orElseThrow().weightedSize().orElseThrow();
  }

  /** A hash of the {@value #PROBE} bytes from {@code at}. */
  static long probe(byte[] body, int at) {
    return hash(body, at, at + PROBE);
  }

  /** A hash of all of {@code body[from, to)}. */
  static long hash(byte[] body, int from, int to) {
    long h = to - from;
    int i = from;
    for (; i + Long.BYTES <= to; i += Long.BYTES) {
      h = Long.rotateLeft(h ^ (long) LONGS.get(body, i) * K, 29) * K;
    }
    for (; i < to; i++) {
      h = Long.rotateLeft(h ^ body[i] * K, 29) * K;
    }
    return h ^ h >>> 32;
  }

  private static boolean readsAsItsBytes(PromptPiece piece) {
    try {
      return Json.parse(piece.bytes()).equals(piece.node());
    } catch (IOException e) {
      return false;
    }
  }
}
