package io.spillway.config;

import java.nio.file.Path;

/**
 * Where the gateway keeps its state (usage, spend, keys, stored responses; with Redis also the
 * fleet's breakers, risk counts and rate limits): the {@code store} config value, parsed once when
 * the config is read. Each part that opens a store switches over these three kinds; none reads the
 * spelling again.
 */
public sealed interface Store {
  /** The default: {@code embedded:./data}. */
  Store DEFAULT = new Embedded(Path.of("./data"));

  /** {@code memory}: this process only, gone at exit (tests, demos). */
  record Memory() implements Store {
    @Override
    public String toString() {
      return "memory";
    }
  }

  /** {@code embedded:<dir>}: files in {@code dir} (H2 MVStore), durable, one gateway. */
  record Embedded(Path dir) implements Store {
    /** The file {@code name} in the store's directory. */
    public Path file(String name) {
      return dir.resolve(name);
    }

    @Override
    public String toString() {
      return "embedded:" + dir;
    }
  }

  /** {@code redis://host:port[/db]} or {@code rediss://...} (TLS): shared by every replica. */
  record Redis(String uri) implements Store {
    /** The URI with any password masked, for logs. */
    @Override
    public String toString() {
      return uri.replaceAll("//[^@/]*@", "//***@");
    }
  }

  /**
   * Parses a {@code store} value.
   *
   * @throws IllegalArgumentException naming the three spellings, for anything else
   */
  static Store parse(String spelling) {
    if (spelling.equals("memory")) {
      return new Memory();
    }
    if (spelling.startsWith("embedded:") && spelling.length() > "embedded:".length()) {
      return new Embedded(Path.of(spelling.substring("embedded:".length())));
    }
    if ((spelling.startsWith("redis://") || spelling.startsWith("rediss://")) && !spelling.endsWith("//")) {
      return new Redis(spelling);
    }
    throw new IllegalArgumentException("'" + spelling + "' is not embedded:<dir>, redis://host:port or memory");
  }

  /** The value as written in the config ({@code memory}, {@code embedded:<dir>}, the Redis URI). */
  default String spelling() {
    return switch (this) {
      case Memory memory -> "memory";
      case Embedded embedded -> "embedded:" + embedded.dir();
      case Redis redis -> redis.uri();
    };
  }
}
