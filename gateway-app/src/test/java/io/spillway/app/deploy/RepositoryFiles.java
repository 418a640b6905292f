package io.spillway.app.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds files of the repository (docs, docker) from a test running in any module. */
public final class RepositoryFiles {
  private RepositoryFiles() {}

  public static Path root() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null) {
      if (Files.exists(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("gateway-core"))) {
        return dir;
      }
      dir = dir.getParent();
    }
    throw new IllegalStateException("not inside the Spillway repository: " + Path.of("").toAbsolutePath());
  }
}
