package io.spillway.redis;

/**
 * Redis did not answer: no connection, a connection lost, a reply not within the owner's timeout,
 * a server still loading its data or busy in a script. The caller's outage rule applies (fall back,
 * queue, or refuse). Any other error Redis answers with is a {@link RedisCommandException}, not an
 * outage.
 */
public final class RedisUnavailableException extends RuntimeException {
  public RedisUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
