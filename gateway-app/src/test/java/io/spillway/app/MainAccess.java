package io.spillway.app;

import java.io.InputStream;
import java.io.PrintWriter;
import java.util.function.Function;

/** Lets tests in other packages run the command line with their own streams. */
public final class MainAccess {
  private MainAccess() {}

  public static int run(InputStream in, PrintWriter out, PrintWriter err, String... args) {
    return Main.run(in, out, err, args);
  }

  /** The same with the environment {@code ${NAME}} in configs is read from. */
  public static int run(InputStream in, PrintWriter out, PrintWriter err, Function<String, String> environment,
      String... args) {
    return Main.run(in, out, err, environment, args);
  }
}
