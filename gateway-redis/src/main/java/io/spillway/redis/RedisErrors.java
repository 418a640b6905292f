package io.spillway.redis;

import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisLoadingException;

/** Tells a Redis that is away from a Redis that answered with an error. */
final class RedisErrors {
  private RedisErrors() {}

  /** {@code e} as the one of the two exceptions of this package that says what happened. */
  static RuntimeException classify(String location, RuntimeException e) {
    if (e instanceof RedisUnavailableException || e instanceof RedisCommandException) {
      return e;
    }
    if (e instanceof RedisCommandExecutionException
        && !(e instanceof RedisLoadingException) && !(e instanceof RedisBusyException)) {
      return new RedisCommandException("Redis at " + location + " refused a command: " + e.getMessage(), e);
    }
    return new RedisUnavailableException("Redis at " + location + " did not answer: " + e, e);
  }

  /**
   * {@code e}, thrown by a library on top of a connection of this link (Bucket4j wraps what Lettuce
   * throws), classified by the first cause that says what happened.
   */
  static RuntimeException classifyCauses(String location, RuntimeException e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof RedisUnavailableException || cause instanceof RedisCommandException
          || cause instanceof io.lettuce.core.RedisException) {
        return classify(location, (RuntimeException) cause);
      }
    }
    return new RedisUnavailableException("Redis at " + location + " did not answer: " + e, e);
  }
}
