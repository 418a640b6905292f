package io.spillway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.UpstreamException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The body buffer between the transport and the body's reader: the transport stops reading once the
 * unread bytes reach the high-water mark and is asked to read again when the reader has taken them
 * down to half; the reader sees every chunk before the end or the failure; closing the body early
 * cancels the exchange, closing it after a clean end does not.
 */
class BodyBufferTest {
  final AtomicInteger resumes = new AtomicInteger();
  final AtomicInteger cancels = new AtomicInteger();
  final BodyBuffer buffer = new BodyBuffer(100, resumes::incrementAndGet, cancels::incrementAndGet);

  @Test
  void offerAsksToStopReadingOnceTheUnreadBytesReachTheHighWaterMark() {
    assertThat(buffer.offer(new byte[60])).isTrue();
    assertThat(buffer.offer(new byte[40])).isFalse();
  }

  @Test
  void readingResumesOnceTheReaderHasTakenTheQueueDownToHalf() {
    buffer.offer(new byte[30]);
    buffer.offer(new byte[30]);
    assertThat(buffer.offer(new byte[50])).isFalse();

    buffer.poll();
    assertThat(resumes).hasValue(0); // 80 unread: above half
    buffer.poll();
    assertThat(resumes).hasValue(1); // 50 unread: half
    buffer.poll();
    assertThat(resumes).hasValue(1); // asked once
  }

  @Test
  void chunksStillArrivingAfterReadingStoppedKeepItStoppedUntilTheReaderCatchesUp() {
    for (int i = 0; i < 3; i++) {
      buffer.offer(new byte[30]);
    }
    assertThat(buffer.offer(new byte[30])).isFalse(); // 120 unread: stop
    buffer.poll(); // 90 unread

    // Already decoded when reading stopped, a small chunk still comes: reading stays stopped.
    assertThat(buffer.offer(new byte[5])).isFalse();

    buffer.poll(); // 65
    assertThat(resumes).hasValue(0);
    buffer.poll(); // 35: half or less
    assertThat(resumes).hasValue(1);
  }

  @Test
  void aReaderThatPollsFromItsWakeUpLeavesReadingOn() {
    // The reader runs on the transport's thread, inside offer: it takes the chunk at once, so the
    // transport must not stop reading (no resume would ever come).
    buffer.onReady(() -> buffer.poll());

    assertThat(buffer.offer(new byte[150])).isTrue();
  }

  @Test
  void pollAnswersPendingThenEachChunkThenNullAtTheEnd() {
    assertThat(buffer.poll()).isSameAs(BodySource.PENDING);
    buffer.offer(new byte[] {1});
    buffer.offer(new byte[] {2});
    buffer.end();

    assertThat(buffer.poll()).containsExactly(1);
    assertThat(buffer.poll()).containsExactly(2);
    assertThat(buffer.poll()).isNull();
  }

  @Test
  void onReadyRunsOnceWhenSomethingArrives() {
    AtomicInteger woken = new AtomicInteger();
    buffer.onReady(woken::incrementAndGet);
    assertThat(woken).hasValue(0);

    buffer.offer(new byte[1]);
    buffer.offer(new byte[1]);

    assertThat(woken).hasValue(1);
  }

  @Test
  void aFailureIsThrownAfterTheChunksThatCameBeforeIt() {
    UpstreamException reset = new UpstreamException("cloud", UpstreamException.Failure.RESET_MID_STREAM, "broke", null);
    AtomicInteger woken = new AtomicInteger();
    buffer.offer(new byte[] {7});
    buffer.fail(reset);
    buffer.onReady(woken::incrementAndGet);

    assertThat(woken).hasValue(1);
    assertThat(buffer.poll()).containsExactly(7);
    assertThatThrownBy(buffer::poll).isSameAs(reset);
  }

  @Test
  void closingBeforeTheEndCancelsTheExchangeOnce() {
    buffer.offer(new byte[10]);

    buffer.close();
    buffer.close();

    assertThat(cancels).hasValue(1);
    assertThat(buffer.offer(new byte[1])).isFalse();
  }

  @Test
  void closingAfterACleanEndCancelsNothing() {
    buffer.offer(new byte[10]);
    buffer.end();
    buffer.poll();

    buffer.close();

    assertThat(cancels).hasValue(0);
  }
}
