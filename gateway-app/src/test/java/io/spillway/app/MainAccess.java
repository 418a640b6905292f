package io.spillway.app;

import java.io.InputStream;
import java.io.PrintWriter;

/** Lets tests in other packages run the command line with their own streams. */
public final class MainAccess {
  private MainAccess() {}

  public static int run(InputStream in, PrintWriter out, PrintWriter err, String... args) {
    return Main.run(in, out, err, args);
  }
}
