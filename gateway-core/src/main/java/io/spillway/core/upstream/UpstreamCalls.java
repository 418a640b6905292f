package io.spillway.core.upstream;

import io.spillway.core.sse.ReadyWait;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reading an exchange: its head, and a whole buffered body, either by waiting on a virtual thread
 * ({@link #head}, {@link #readAll}) or as a stage completed on the thread the data arrived on
 * ({@link #readAllAsync}), which parks no thread.
 */
public final class UpstreamCalls {
  private UpstreamCalls() {}

  /** The exchange's head; its failure (an {@link io.spillway.core.error.UpstreamException}) is thrown. */
  public static UpstreamHead head(UpstreamExchange exchange) {
    try {
      return exchange.head().join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException failure) {
        throw failure;
      }
      throw e;
    }
  }

  /**
   * The whole body, or null when it is longer than {@code limit} bytes (the body is then closed,
   * which cancels the exchange). A failure of the body is thrown. Blocks the calling (virtual)
   * thread while the body is arriving.
   */
  public static byte[] readAll(BodySource body, long limit) {
    Whole whole = new Whole(limit);
    while (true) {
      byte[] chunk = body.poll();
      if (chunk == BodySource.PENDING) {
        ReadyWait.await(body::onReady);
        continue;
      }
      if (!whole.add(body, chunk)) {
        return whole.bytes();
      }
    }
  }

  /**
   * The whole body as a stage, never blocking: completed (on the thread the last chunk arrived on,
   * or here when the body is already in) with the bytes, with null when it is longer than
   * {@code limit} bytes (the body is then closed, which cancels the exchange), or exceptionally
   * with the body's failure.
   */
  public static CompletableFuture<byte[]> readAllAsync(BodySource body, long limit) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    new AsyncRead(body, new Whole(limit), result).run();
    return result;
  }

  /** Polls what is there, then waits for more with {@link BodySource#onReady} (no thread parked). */
  private record AsyncRead(BodySource body, Whole whole, CompletableFuture<byte[]> result) implements Runnable {
    @Override
    public void run() {
      try {
        while (true) {
          byte[] chunk = body.poll();
          if (chunk == BodySource.PENDING) {
            body.onReady(this);
            return;
          }
          if (!whole.add(body, chunk)) {
            result.complete(whole.bytes());
            return;
          }
        }
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
      }
    }
  }

  /** The chunks of one body so far, up to a limit. */
  private static final class Whole {
    private final long limit;
    private byte[] first;
    private ByteArrayOutputStream more;
    private long total;
    private boolean tooLarge;

    Whole(long limit) {
      this.limit = limit;
    }

    /** Takes {@code chunk} (null: the end); false once the body is complete or over the limit. */
    boolean add(BodySource body, byte[] chunk) {
      if (chunk == null) {
        return false;
      }
      total += chunk.length;
      if (total > limit) {
        body.close();
        tooLarge = true;
        return false;
      }
      if (first == null) {
        first = chunk;
      } else {
        if (more == null) {
          more = new ByteArrayOutputStream((int) Math.min(limit, 2L * total));
          more.writeBytes(first);
        }
        more.writeBytes(chunk);
      }
      return true;
    }

    /** The whole body, or null when it was over the limit. */
    byte[] bytes() {
      if (tooLarge) {
        return null;
      }
      if (more != null) {
        return more.toByteArray();
      }
      return first != null ? first : new byte[0];
    }
  }
}
