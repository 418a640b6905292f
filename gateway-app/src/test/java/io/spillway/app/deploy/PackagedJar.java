package io.spillway.app.deploy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;

/**
 * The fat jar users run, {@code gateway-app/target/spillway.jar}. Tests that run it are tagged
 * {@code packaged} and run after {@code package} ({@code ./mvnw verify}; see gateway-app/pom.xml).
 */
public final class PackagedJar {
  private PackagedJar() {}

  public static Path path() {
    Path jar = RepositoryFiles.root().resolve("gateway-app/target/spillway.jar");
    if (!Files.isRegularFile(jar)) {
      Assertions.fail(jar + " does not exist: these tests run after package (./mvnw verify, or "
          + "./mvnw -pl gateway-app -am verify -Dtest=<Test> -Dsurefire.failIfNoSpecifiedTests=false)");
    }
    return jar;
  }

  /** The java launcher of the JDK running the tests (Java 21 or newer, like the jar needs). */
  public static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
