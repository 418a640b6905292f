package io.spillway.bench;

/** Minimal {@code --name value} argument lookup for the bench tools. */
final class Args {
  private Args() {}

  static String value(String[] args, String name, String defaultValue) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return defaultValue;
  }

  static int intValue(String[] args, String name, int defaultValue) {
    return Integer.parseInt(value(args, name, Integer.toString(defaultValue)));
  }
}
