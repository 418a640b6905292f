package io.spillway.core.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What the memo of request pieces keeps: an item from its second sighting on, nothing of items
 * seen once, and no more heap than it is given, as each piece's estimate counts it.
 */
class PromptPiecesTest {
  private static byte[] message(int i) {
    return ("{\"role\":\"user\",\"content\":\"Turn " + i + ": run the failing test again and show me what it prints.\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static PromptPiece remember(PromptPieces memo, byte[] item) {
    return memo.remember(item, 0, item.length, parse(item));
  }

  private static JsonNode parse(byte[] item) {
    try {
      return Json.parse(item);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void anItemIsRememberedAtItsSecondSightingAndFoundAfterIt() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    byte[] item = message(1);

    assertThat(remember(memo, item)).as("first seen").isNull();
    assertThat(memo.find(item, 0)).isNull();
    PromptPiece piece = remember(memo, item);

    assertThat(piece).as("seen again").isNotNull();
    assertThat(memo.find(item.clone(), 0)).as("found").isSameAs(piece);
  }

  @Test
  void itemsSeenOnceLeaveNoPieceBehind() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);

    for (int i = 0; i < 20_000; i++) {
      assertThat(remember(memo, message(i))).isNull();
    }

    assertThat(memo.heapBytes()).isZero();
  }

  @Test
  void aMarkOverwrittenByAnotherItemOnlyDelaysTheFirstOnesPiece() {
    PromptPieces memo = PromptPieces.keeping(PromptPieces.MARK_BYTES); // one slot for marks
    byte[] first = message(1);
    byte[] second = message(2);

    remember(memo, first);
    remember(memo, second); // takes the one slot
    assertThat(remember(memo, first)).as("its mark was overwritten: a first sighting again").isNull();

    assertThat(remember(memo, first)).as("the sighting after that").isNotNull();
  }

  @Test
  void aPiecesHeapIsEstimatedFromItsBytesAndTheNodesOfItsTree() {
    byte[] item = message(1); // an object with two strings: three nodes
    PromptPiece piece = PromptPiece.of(item, parse(item));

    assertThat(piece.heapBytes())
        .isEqualTo(3 * item.length + 3 * PromptPiece.HEAP_PER_NODE + PromptPiece.HEAP_PER_PIECE);
  }

  @Test
  void theMemoKeepsNoMoreHeapThanItIsGivenHoweverManyItemsRepeat() {
    int bound = 64 * 1024;
    PromptPieces memo = PromptPieces.keeping(bound);

    for (int i = 0; i < 5_000; i++) {
      remember(memo, message(i));
      remember(memo, message(i));
    }

    assertThat(memo.heapBytes()).isPositive().isLessThanOrEqualTo(bound);
  }
}
