package io.spillway.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.AttributeKey;
import java.util.concurrent.TimeUnit;

/**
 * Ends a connection after an error answer without losing the answer. Closing a socket while the
 * client is still sending (a body over the limit, a smuggled request behind a bad one) makes the
 * kernel send a reset, and the client then often never reads the answer that was already on its
 * way. Instead the gateway stops serving the connection, half-closes it once the answer is
 * written, reads and discards whatever still arrives for a short while, then closes.
 */
final class LingeringClose {
  /** Set on a connection that is being ended: nothing it sends is decoded or served any more. */
  static final AttributeKey<Boolean> DISCARDING = AttributeKey.valueOf("spillway.discarding");
  static final long LINGER_MILLIS = 2_000;

  private LingeringClose() {}

  static boolean discarding(Channel channel) {
    return channel.hasAttr(DISCARDING);
  }

  /** Ends {@code answer}'s connection once the answer is written. Safe from any thread. */
  static void after(ChannelFuture answer) {
    Channel channel = answer.channel();
    channel.attr(DISCARDING).set(Boolean.TRUE);
    answer.addListener(written -> {
      if (!channel.isActive()) {
        return;
      }
      if (!written.isSuccess() || !(channel instanceof DuplexChannel duplex)) {
        channel.close();
        return;
      }
      duplex.shutdownOutput().addListener(shut -> {
        channel.eventLoop().schedule(() -> channel.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
        channel.config().setAutoRead(true);
        channel.read();
      });
    });
  }
}
