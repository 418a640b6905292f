package io.spillway.app.architecture.planted;

import io.spillway.redis.RedisLink;
import java.time.Duration;

/** Planted for ArchitectureRulesTest: opens a second Redis link of its own instead of sharing the foundation's. */
public final class OpensItsOwnRedisLink {
  private OpensItsOwnRedisLink() {}

  public static RedisLink link(String uri) {
    return RedisLink.open(uri, Duration.ofSeconds(1));
  }
}
