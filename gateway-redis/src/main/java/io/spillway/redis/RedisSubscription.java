package io.spillway.redis;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A subscription to one Redis channel on a connection of its own. A subscription whose connection
 * was lost stays lost ({@link #open()} turns false); its owner subscribes again when Redis answers.
 */
public final class RedisSubscription implements AutoCloseable {
  private final StatefulRedisPubSubConnection<String, String> connection;

  private RedisSubscription(StatefulRedisPubSubConnection<String, String> connection) {
    this.connection = connection;
  }

  static RedisSubscription open(RedisLink link, String channel, Duration timeout, Consumer<String> onMessage) {
    StatefulRedisPubSubConnection<String, String> c = null;
    try {
      c = link.client().connectPubSub(link.uri(timeout));
      c.setTimeout(timeout);
      c.addListener(new RedisPubSubAdapter<>() {
        @Override
        public void message(String from, String message) {
          if (channel.equals(from)) {
            onMessage.accept(message);
          }
        }
      });
      c.sync().subscribe(channel);
      return new RedisSubscription(c);
    } catch (RuntimeException e) {
      if (c != null) {
        c.closeAsync();
      }
      throw RedisErrors.classify(link.location(), e);
    }
  }

  /** Whether the subscription's connection is still open. */
  public boolean open() {
    return connection.isOpen();
  }

  @Override
  public void close() {
    if (connection.isOpen()) {
      connection.closeAsync();
    }
  }
}
