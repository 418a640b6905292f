package io.spillway.app.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Counts this machine's established TCP connections to a loopback port, from the kernel's own
 * table ({@code /proc/net/tcp}, {@code /proc/net/tcp6}): a connection leak shows up here whatever
 * pool or library holds it.
 */
public final class LoopbackSockets {
  private static final String ESTABLISHED = "01";

  private LoopbackSockets() {}

  public static void assumeAvailable() {
    boolean ci = "true".equals(System.getenv("CI"));
    if (!ci) {
      Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")),
          "needs /proc/net/tcp (Linux) to count connections");
    }
  }

  /** Established connections whose remote end is {@code port}: clients connected to that server. */
  public static int establishedTo(int port) {
    return count(Path.of("/proc/net/tcp"), port) + count(Path.of("/proc/net/tcp6"), port);
  }

  private static int count(Path table, int port) {
    if (!Files.isReadable(table)) {
      return 0;
    }
    try {
      List<String> lines = Files.readAllLines(table);
      int n = 0;
      for (int i = 1; i < lines.size(); i++) {
        String[] fields = lines.get(i).trim().split("\\s+");
        String remote = fields[2];
        int remotePort = Integer.parseInt(remote.substring(remote.indexOf(':') + 1), 16);
        if (remotePort == port && ESTABLISHED.equals(fields[3])) {
          n++;
        }
      }
      return n;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
