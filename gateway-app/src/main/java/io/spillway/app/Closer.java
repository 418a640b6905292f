package io.spillway.app;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the parts of a gateway in order, every one of them even when one fails: a part that throws
 * is logged and the next is closed anyway; afterwards the first failure is thrown with the others
 * suppressed, so a shutdown never leaves a thread pool, a connection or a file open behind a
 * failure before it. Not thread-safe: one closer per {@code close()}.
 */
final class Closer {
  private static final Logger log = LoggerFactory.getLogger(Closer.class);

  /** One part to close: what it is (for the log) and how. */
  record Part(String name, AutoCloseable close) {}

  private final List<Part> parts = new ArrayList<>();

  /** Adds {@code close} as the next part to close; {@code null} (a part not built) is skipped. */
  Closer then(String name, AutoCloseable close) {
    if (close != null) {
      parts.add(new Part(name, close));
    }
    return this;
  }

  /**
   * Closes every part in the order added.
   *
   * @throws IllegalStateException when any part failed: the first failure's cause, naming the
   *     part, with every later failure suppressed
   */
  void closeAll() {
    IllegalStateException failed = null;
    for (Part part : parts) {
      try {
        part.close().close();
      } catch (Exception | Error e) {
        log.warn("closing {} failed; closing the rest", part.name(), e);
        IllegalStateException failure = new IllegalStateException("closing " + part.name() + " failed", e);
        if (failed == null) {
          failed = failure;
        } else {
          failed.addSuppressed(failure);
        }
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  /**
   * After a build that failed with {@code failure}: closes every part added so far, the last added
   * first (as try-with-resources would), each even when one fails; their failures are added to
   * {@code failure} as suppressed, which the caller then throws.
   */
  void unwindAfter(Throwable failure) {
    for (Part part : parts.reversed()) {
      try {
        part.close().close();
      } catch (Exception | Error e) {
        failure.addSuppressed(new IllegalStateException("closing " + part.name() + " failed", e));
      }
    }
  }
}
