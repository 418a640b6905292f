package io.spillway.routing.breaker;

import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisSubscription;
import io.spillway.redis.RedisUnavailableException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * The subscription to one fleet breaker's change channel: each publication is handed at once to
 * the breaker's own thread (never run on Lettuce's). A lost subscription is noticed by
 * {@link #open()} and made again by {@link #subscribe()} once Redis answers.
 *
 * <p>Thread-safe.
 */
final class FleetChanges implements AutoCloseable {
  private final RedisLink link;
  private final String channel;
  private final Duration timeout;
  private final Executor worker;
  private final Consumer<String> onChange;
  private volatile RedisSubscription subscription;
  private volatile boolean closed;

  FleetChanges(RedisLink link, String channel, Duration timeout, Executor worker, Consumer<String> onChange) {
    this.link = link;
    this.channel = channel;
    this.timeout = timeout;
    this.worker = worker;
    this.onChange = onChange;
  }

  String channel() {
    return channel;
  }

  /** Subscribes unless subscribed. @throws RedisUnavailableException when Redis does not answer in time */
  synchronized void subscribe() {
    RedisSubscription current = subscription;
    if (current != null && current.open()) {
      return;
    }
    if (current != null) {
      current.close();
    }
    subscription = link.subscribe(channel, timeout, this::hand);
  }

  /** Whether the subscription is up. */
  boolean open() {
    RedisSubscription current = subscription;
    return current != null && current.open();
  }

  private void hand(String message) {
    if (closed) {
      return;
    }
    try {
      worker.execute(() -> onChange.accept(message));
    } catch (RejectedExecutionException e) {
      // Closing: nobody routes with this breaker any more.
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    RedisSubscription current = subscription;
    if (current != null) {
      current.close();
    }
  }
}
