package io.spillway.app;

import java.nio.file.Path;
import java.util.List;

/**
 * The command lines that only start the gateway, read without picocli: {@code serve} (or no
 * command) with at most one {@code --config} and, after {@code serve}, at most one {@code --port}.
 * Building picocli's model of the five commands (annotations, reflection, proxies: about 170
 * classes) takes a tenth of a second of a cold start, and a sidecar starts with exactly these
 * arguments. Anything else, a help or version request, another command, a repeated or malformed
 * option, an {@code @file} argument, goes to picocli, which reads and reports it as before.
 *
 * @param config the config file ({@code config/gateway.yaml} when not given)
 * @param port the port that replaces {@code server.port}, or null
 */
record ServeArguments(Path config, Integer port) {
  private static final Path DEFAULT_CONFIG = Path.of("config/gateway.yaml");

  /** The serve command these arguments ask for, or null when picocli should read them. */
  static ServeArguments parse(String... args) {
    List<String> rest = List.of(args);
    boolean serve = !rest.isEmpty() && rest.get(0).equals("serve");
    if (serve) {
      rest = rest.subList(1, rest.size());
    }
    String config = null;
    String port = null;
    for (int i = 0; i < rest.size(); i++) {
      String arg = rest.get(i);
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      String value;
      if (arg.contains("=")) {
        value = arg.substring(arg.indexOf('=') + 1);
      } else if (i + 1 < rest.size()) {
        value = rest.get(++i);
      } else {
        return null;
      }
      if (value.isEmpty() || value.startsWith("-") || value.startsWith("@")) {
        return null;
      }
      if (name.equals("--config") && config == null) {
        config = value;
      } else if (name.equals("--port") && serve && port == null && value.matches("[0-9]{1,5}")) {
        port = value;
      } else {
        return null;
      }
    }
    return new ServeArguments(config == null ? DEFAULT_CONFIG : Path.of(config),
        port == null ? null : Integer.valueOf(port));
  }
}
