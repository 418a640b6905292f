package io.spillway.local;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The captured Codex CLI requests in {@code src/test/resources/fixtures/codex/} (see its README). */
public final class CodexFixtures {
  private CodexFixtures() {}

  /** The text of {@code fixtures/codex/<name>}. */
  public static String read(String name) {
    try (InputStream in = CodexFixtures.class.getResourceAsStream("/fixtures/codex/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing fixture " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
