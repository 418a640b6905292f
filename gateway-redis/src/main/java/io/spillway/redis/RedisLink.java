package io.spillway.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A process's one link to the Redis named by {@code store: redis://...}: one Lettuce client and one
 * set of client resources (its I/O and computation threads), shared by every part that keeps state
 * there: the usage ledger, the keys, the rate limits, the fleet's breakers and risk counts. Open it
 * once, hand it to each, close it last.
 *
 * <p>Each part takes a {@link RedisSession} (a connection of its own, every command bounded by that
 * part's timeout) or a {@link RedisSubscription}. The client fails fast by design: no automatic
 * reconnect and no command queued while disconnected, so a caller learns at once that Redis is away
 * and applies its own outage rule; each part reconnects on its own schedule ({@link RedisSession#connect}).
 *
 * <p>Thread-safe.
 */
public final class RedisLink implements AutoCloseable {
  private final RedisURI uri;
  private final String location;
  private final ClientResources resources;
  private final RedisClient client;

  private RedisLink(RedisURI uri, Duration connectTimeout) {
    this.uri = uri;
    this.location = uri.getHost() + ":" + uri.getPort();
    this.resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
    this.client = RedisClient.create(resources, uri);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(false)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
        // Each connection's own timeout (its session's) bounds its commands.
        .timeoutOptions(TimeoutOptions.enabled())
        .build());
  }

  /**
   * A link to the Redis at {@code uri} ({@code redis://host:port[/db]}, {@code rediss://} for TLS).
   * Connects nothing yet: each session connects when its owner asks.
   *
   * @param connectTimeout the longest a TCP connect (and TLS handshake) may take
   */
  public static RedisLink open(String uri, Duration connectTimeout) {
    return new RedisLink(RedisURI.create(uri), connectTimeout);
  }

  /** {@code host:port}, for logs and status. */
  public String location() {
    return location;
  }

  /** The database index the URI names (pub/sub channels are not per database, so names carry it). */
  public int database() {
    return uri.getDatabase();
  }

  /**
   * A connection of its own for {@code owner} (a name for logs), every command (and the connect
   * itself) bounded by {@code timeout}. Not connected yet: the owner calls {@link RedisSession#connect}.
   */
  public RedisSession session(String owner, Duration timeout) {
    return new RedisSession(this, owner, timeout);
  }

  /**
   * Subscribes to {@code channel} on a connection of its own; each message is handed to
   * {@code onMessage} on Lettuce's thread (hand it on at once, never block there).
   *
   * @throws RedisUnavailableException when Redis does not answer within {@code timeout}
   */
  public RedisSubscription subscribe(String channel, Duration timeout, Consumer<String> onMessage) {
    return RedisSubscription.open(this, channel, timeout, onMessage);
  }

  /**
   * A connection with byte-array keys and values (for Bucket4j's Lettuce proxy), commands bounded by
   * {@code timeout}; closed by the caller.
   *
   * @throws RedisUnavailableException when Redis does not answer within {@code timeout}
   */
  public StatefulRedisConnection<byte[], byte[]> connectBinary(Duration timeout) {
    try {
      StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, uri(timeout));
      c.setTimeout(timeout);
      return c;
    } catch (RuntimeException e) {
      throw RedisErrors.classify(location, e);
    }
  }

  /**
   * What {@code e}, thrown by a command on a connection of this link (directly or wrapped by a
   * library such as Bucket4j), says: a {@link RedisCommandException} when Redis answered with an
   * error, else a {@link RedisUnavailableException} (the caller's outage rule applies).
   */
  public RuntimeException classify(RuntimeException e) {
    return RedisErrors.classifyCauses(location, e);
  }

  RedisClient client() {
    return client;
  }

  /** The link's URI with {@code timeout} as its command timeout (which also bounds the handshake). */
  RedisURI uri(Duration timeout) {
    return RedisURI.builder(uri).withTimeout(timeout).build();
  }

  /** Shuts the client and its threads down; close the sessions first (their owners do). */
  @Override
  public void close() {
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
  }
}
