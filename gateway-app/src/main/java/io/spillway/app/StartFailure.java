package io.spillway.app;

import io.spillway.config.ConfigException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The start-up failures a user causes and can fix (a config that cannot be read, a data directory
 * another gateway holds, a port taken: see {@link Main#portInUse}) are told in one line each, without
 * a stack trace, with exit code 1; an invalid config exits 2. Anything else is a bug in Spillway, and
 * keeps its stack trace for the report.
 */
final class StartFailure {
  private static final Pattern STORE_FILE = Pattern.compile("cannot open the (?:key|usage) store (\\S+) \\(");

  private StartFailure() {}

  static String invalidConfig(ConfigException e) {
    return (e.unreadable() ? "spillway: cannot read the config: " : "spillway: invalid config: ") + e.getMessage();
  }

  /** 1 for a config that could not be read at all, 2 for one read and found invalid. */
  static int exitCode(ConfigException e) {
    return e.unreadable() ? 1 : 2;
  }

  /** Prints what {@code e} means for the user and returns the exit code. */
  static int report(Throwable e, PrintWriter err) {
    Optional<String> known = dataDirectoryInUse(e);
    if (known.isPresent()) {
      err.println(known.get());
      err.flush();
      return 1;
    }
    err.println("spillway: cannot start: " + e);
    e.printStackTrace(err);
    err.flush();
    return 1;
  }

  /** The one line for an embedded store whose files another process holds locked. */
  static Optional<String> dataDirectoryInUse(Throwable e) {
    boolean locked = false;
    String file = null;
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      String message = String.valueOf(cause.getMessage());
      locked |= message.contains("locked") || message.contains("another gateway");
      Matcher m = STORE_FILE.matcher(message);
      if (file == null && m.find()) {
        file = m.group(1);
      }
    }
    if (!locked || file == null) {
      return Optional.empty();
    }
    Path directory = Path.of(file).toAbsolutePath().getParent();
    return Optional.of("spillway: cannot start: the data directory " + directory + " is in use by another"
        + " Spillway (its store files are locked); stop that one, or give this one its own directory"
        + " (store: embedded:<dir>)");
  }
}
