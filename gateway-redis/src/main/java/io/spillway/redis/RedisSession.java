package io.spillway.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.function.Function;

/**
 * One owner's connection to Redis over a {@link RedisLink}: every command bounded by the owner's
 * timeout, scripts sent by SHA and again as text on {@code NOSCRIPT}, every failure reported as
 * either {@link RedisUnavailableException} (Redis is away or slow: the owner's outage rule) or
 * {@link RedisCommandException} (Redis answered with an error: not an outage).
 *
 * <p>{@link #call} never connects: while the connection is down it fails at once, so a request
 * never waits for a connect; the owner reconnects with {@link #connect} on its own schedule.
 *
 * <p>Thread-safe: commands of several threads share the one connection.
 */
public final class RedisSession implements AutoCloseable {
  private final RedisLink link;
  private final String owner;
  private final Duration timeout;
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;

  RedisSession(RedisLink link, String owner, Duration timeout) {
    this.link = link;
    this.owner = owner;
    this.timeout = timeout;
  }

  /** The Redis's {@code host:port}. */
  public String location() {
    return link.location();
  }

  /** What every command of this session may take at most. */
  public Duration timeout() {
    return timeout;
  }

  /** Whether a connection is open (it may still be slow). */
  public boolean connected() {
    StatefulRedisConnection<String, String> c = connection;
    return c != null && c.isOpen();
  }

  /**
   * Opens a connection unless one is open, and checks it with {@code PING}.
   *
   * @throws RedisUnavailableException when Redis does not answer within the timeout
   */
  public synchronized void connect() {
    if (closed) {
      throw new RedisUnavailableException(owner + ": the session is closed", null);
    }
    try {
      StatefulRedisConnection<String, String> c = connection;
      if (c == null || !c.isOpen()) {
        // A connection no longer open has released its channel: start a new one.
        c = link.client().connect(link.uri(timeout));
        c.setTimeout(timeout);
        connection = c;
      }
      c.sync().ping();
    } catch (RuntimeException e) {
      throw RedisErrors.classify(link.location(), e);
    }
  }

  /**
   * Runs {@code operation} on the open connection.
   *
   * @throws RedisUnavailableException when no connection is open, or Redis does not answer in time
   * @throws RedisCommandException when Redis answers with an error
   */
  public <T> T call(Function<RedisCommands<String, String>, T> operation) {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null || !c.isOpen()) {
      throw new RedisUnavailableException(owner + ": not connected to Redis at " + link.location(), null);
    }
    try {
      return operation.apply(c.sync());
    } catch (RuntimeException e) {
      throw RedisErrors.classify(link.location(), e);
    }
  }

  /** Like {@link #call}, connecting first when no connection is open (bounded by the timeout too). */
  public <T> T connectAndCall(Function<RedisCommands<String, String>, T> operation) {
    if (!connected()) {
      connect();
    }
    return call(operation);
  }

  /**
   * Runs {@code script} with {@code EVALSHA}, and with {@code EVAL} when Redis does not know it
   * ({@code NOSCRIPT}: a Redis that restarted has an empty script cache).
   */
  public <T> T eval(RedisScript script, ScriptOutputType type, String[] keys, String... args) {
    return call(redis -> {
      try {
        return redis.evalsha(script.sha(), type, keys, args);
      } catch (RedisNoScriptException e) {
        return redis.eval(script.text(), type, keys, args);
      }
    });
  }

  /** Closes the connection; the session cannot connect again. */
  @Override
  public synchronized void close() {
    closed = true;
    StatefulRedisConnection<String, String> c = connection;
    connection = null;
    if (c != null && c.isOpen()) {
      c.closeAsync();
    }
  }
}
