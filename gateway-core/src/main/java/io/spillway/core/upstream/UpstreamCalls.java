package io.spillway.core.upstream;

import io.spillway.core.sse.ReadyWait;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.CompletionException;

/** Waiting for an exchange from a virtual thread: its head, and a whole buffered body. */
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
   * which cancels the exchange). A failure of the body is thrown.
   */
  public static byte[] readAll(BodySource body, long limit) {
    byte[] first = null;
    ByteArrayOutputStream more = null;
    long total = 0;
    while (true) {
      byte[] chunk = body.poll();
      if (chunk == BodySource.PENDING) {
        ReadyWait.await(body::onReady);
        continue;
      }
      if (chunk == null) {
        if (more != null) {
          return more.toByteArray();
        }
        return first != null ? first : new byte[0];
      }
      total += chunk.length;
      if (total > limit) {
        body.close();
        return null;
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
    }
  }
}
