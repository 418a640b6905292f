package io.spillway.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP/2 connection's budget of stream resets, whoever sends them: the client's
 * {@code RST_STREAM} and every reset the server itself sends. A server reset is always provoked by
 * the client (a stream it left with a zero flow-control window, a protocol error on a stream, a
 * stream over a limit), so a client that makes the server reset streams for it ("MadeYouReset")
 * spends the same budget as one that resets them itself (rapid reset). Past {@code max} resets in
 * one window the connection is closed with {@code GOAWAY ENHANCE_YOUR_CALM}.
 *
 * <p>Netty's own guards count the two directions apart, and its outbound one skips {@code CANCEL},
 * the very code a stream channel sends when it gives up; hence this one. Its window runs on the
 * event loop's ticker (transport time, like the idle timeouts). Confined to the connection's event
 * loop.
 */
final class Http2ResetBudget {
  private final int max;
  private final long windowMillis;
  private final Ticker ticker;
  private long windowStart = Long.MIN_VALUE;
  private int inWindow;
  private boolean tripped;

  Http2ResetBudget(int max, Duration window, Ticker ticker) {
    this.max = max;
    this.windowMillis = window.toMillis();
    this.ticker = ticker;
  }

  /**
   * Counts one reset on the connection whose frame codec's context is {@code codec}; the one that
   * goes past the budget closes the connection (after the frame being handled now).
   */
  void reset(ChannelHandlerContext codec) {
    if (tripped) {
      return;
    }
    long now = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime());
    if (windowStart == Long.MIN_VALUE || now - windowStart >= windowMillis) {
      windowStart = now;
      inWindow = 0;
    }
    if (++inWindow > max) {
      tripped = true;
      // Not from inside the codec's read or write of this frame: on the next turn of the loop.
      codec.executor().execute(() -> close(codec));
    }
  }

  boolean tripped() {
    return tripped;
  }

  private void close(ChannelHandlerContext codec) {
    if (!codec.channel().isActive()) {
      return;
    }
    Http2Exception calm = Http2Exception.connectionError(Http2Error.ENHANCE_YOUR_CALM,
        "More than %d stream resets within %d s (server.http2.maxResetsPerWindow)", max, windowMillis / 1000);
    ((Http2ConnectionHandler) codec.handler()).onError(codec, false, calm);
  }
}
