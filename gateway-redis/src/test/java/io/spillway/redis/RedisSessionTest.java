package io.spillway.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.lettuce.core.ScriptOutputType;
import io.spillway.redis.testing.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one Redis link against a real redis-server: scripts, errors that are not outages, a hung Redis. */
class RedisSessionTest {
  /** Room for a loaded machine: the hung-Redis test does not depend on it being short. */
  static final Duration TIMEOUT = Duration.ofSeconds(2);
  static final RedisScript ADD = RedisScript.load(RedisSessionTest.class, "add.lua");

  RedisServer redis;
  RedisLink link;
  RedisSession session;

  @BeforeEach
  void connect() {
    redis = RedisServer.start();
    link = RedisLink.open(redis.uri(), TIMEOUT);
    session = link.session("test", TIMEOUT);
    session.connect();
  }

  @AfterEach
  void close() {
    if (session != null) {
      session.close();
    }
    if (link != null) {
      link.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  long add(long n) {
    return session.eval(ADD, ScriptOutputType.INTEGER, new String[] {"counter"}, Long.toString(n));
  }

  @Test
  void aScriptIsLoadedFromItsResourceAndSentAgainWhenRedisForgotIt() {
    assertThat(add(2)).isEqualTo(2);
    assertThat(redis.command("SCRIPT FLUSH")).isEqualTo("+OK");

    assertThat(add(3)).as("NOSCRIPT: the text is sent again").isEqualTo(5);
    assertThat(redis.command("SCRIPT EXISTS " + ADD.sha())).isEqualTo("*1");
  }

  @Test
  void anErrorRedisAnswersWithIsACommandErrorNotAnOutage() {
    session.call(r -> r.set("counter", String.valueOf(Long.MAX_VALUE)));

    assertThatThrownBy(() -> add(1)).isInstanceOf(RedisCommandException.class)
        .hasMessageContaining("overflow");
    assertThat(session.<String>call(r -> r.get("counter"))).as("the connection still serves")
        .isEqualTo(String.valueOf(Long.MAX_VALUE));
  }

  @Test
  void aHungRedisIsUnavailableOnceTheOwnersTimeoutRanOut() {
    redis.freeze();
    try {
      // Redis stays frozen until the call returned: only the session's timeout can end it.
      assertTimeoutPreemptively(Duration.ofSeconds(30), () ->
          assertThatThrownBy(() -> session.call(r -> r.get("counter"))).isInstanceOf(RedisUnavailableException.class));
    } finally {
      redis.thaw();
    }
  }

  @Test
  void aCallNeverConnectsItFailsAtOnceWhileDisconnected() {
    RedisSession other = link.session("other", TIMEOUT);

    assertThatThrownBy(() -> other.call(r -> r.ping())).isInstanceOf(RedisUnavailableException.class)
        .hasMessageContaining("not connected");
    other.connect();
    assertThat(other.<String>call(r -> r.ping())).isEqualTo("PONG");
    other.close();
  }

  @Test
  void aRedisThatWasDownIsReachedAgainByConnect() {
    redis.kill();
    assertThatThrownBy(() -> session.call(r -> r.ping())).isInstanceOf(RedisUnavailableException.class);
    assertThatThrownBy(session::connect).isInstanceOf(RedisUnavailableException.class);

    redis.startAgain();
    session.connect();

    assertThat(session.<String>call(r -> r.ping())).isEqualTo("PONG");
  }

  @Test
  void anErrorALibraryWrapsIsClassifiedByTheRedisCauseInside() {
    try (RedisLink link = RedisLink.open("redis://127.0.0.1:1", java.time.Duration.ofSeconds(1))) {
      assertThat(link.classify(new IllegalStateException("bucket4j",
          new io.lettuce.core.RedisCommandExecutionException("WRONGTYPE Operation against a key"))))
          .isInstanceOf(RedisCommandException.class).hasMessageContaining("WRONGTYPE");
      assertThat(link.classify(new IllegalStateException("bucket4j",
          new io.lettuce.core.RedisCommandTimeoutException("Command timed out after 1 second(s)"))))
          .isInstanceOf(RedisUnavailableException.class).hasMessageContaining("timed out");
      assertThat(link.classify(new IllegalStateException("no Redis cause"))).isInstanceOf(RedisUnavailableException.class);
    }
  }
}
