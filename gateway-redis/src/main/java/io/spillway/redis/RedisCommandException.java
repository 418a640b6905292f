package io.spillway.redis;

/**
 * Redis answered, with an error (a script that raised, a value that is not an integer, a key of the
 * wrong type): the connection is fine and Redis is not away, so the caller must not treat it as an
 * outage. It is a defect or bad data, reported as such.
 */
public final class RedisCommandException extends RuntimeException {
  public RedisCommandException(String message, Throwable cause) {
    super(message, cause);
  }
}
