package io.spillway.server;

import com.sun.management.UnixOperatingSystemMXBean;
import io.spillway.config.ServerConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * How many client connections the process can really hold: {@code server.maxConnections}, lowered
 * at start when the file-descriptor limit ({@code RLIMIT_NOFILE}) would run out first. Each client
 * connection may need {@value #DESCRIPTORS_PER_CONNECTION} descriptors (its own socket and one
 * upstream socket) while some upstream speaks HTTP/1.1; when every upstream is reached over HTTP/2
 * with prior knowledge (h2c), the requests of an event loop share one upstream connection and a
 * client connection needs only its own. That on top of those already open at start and
 * {@code server.reservedFileDescriptors} for everything else. Past the effective limit a client gets the documented 503; past the
 * descriptor limit it would get nothing at all ({@code accept} fails with "Too many open files").
 *
 * @param configured {@code server.maxConnections}
 * @param effective the limit the front end enforces
 * @param descriptorLimit the process's soft {@code RLIMIT_NOFILE}; -1 when unknown (then nothing is lowered)
 * @param openAtStart descriptors open when the budget was computed; -1 when unknown
 */
public record ConnectionBudget(
    int configured, int effective, long descriptorLimit, long openAtStart, int reserved, int perConnection) {
  /** A client socket plus the one upstream socket its request may hold. */
  public static final int DESCRIPTORS_PER_CONNECTION = 2;

  /** The process's descriptor limit and use, as the JDK reports them (no native code of ours). */
  public record Descriptors(long limit, long open) {
    public static final Descriptors UNKNOWN = new Descriptors(-1, -1);

    /** This process's, or {@link #UNKNOWN} on a platform that does not tell (Windows). */
    public static Descriptors ofThisProcess() {
      OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
      if (os instanceof UnixOperatingSystemMXBean unix) {
        return new Descriptors(unix.getMaxFileDescriptorCount(), unix.getOpenFileDescriptorCount());
      }
      return UNKNOWN;
    }
  }

  /** The budget for {@code config} in this process. */
  public static ConnectionBudget of(ServerConfig config) {
    return of(config, Descriptors.ofThisProcess());
  }

  /** The budget in this process when every upstream is multiplexed ({@code multiplexed}) or not. */
  public static ConnectionBudget of(ServerConfig config, boolean multiplexed) {
    return of(config, Descriptors.ofThisProcess(), multiplexed ? 1 : DESCRIPTORS_PER_CONNECTION);
  }

  public static ConnectionBudget of(ServerConfig config, Descriptors descriptors) {
    return of(config, descriptors, DESCRIPTORS_PER_CONNECTION);
  }

  /** @param perConnection descriptors one client connection may need (1 when upstreams are multiplexed) */
  public static ConnectionBudget of(ServerConfig config, Descriptors descriptors, int perConnection) {
    int configured = config.maxConnections();
    int reserved = config.reservedFileDescriptors();
    if (descriptors.limit() <= 0 || descriptors.open() < 0) {
      return new ConnectionBudget(configured, configured, -1, -1, reserved, perConnection);
    }
    long spare = descriptors.limit() - descriptors.open() - reserved;
    long fits = Math.max(1, spare / perConnection);
    int effective = (int) Math.min(configured, fits);
    return new ConnectionBudget(configured, effective, descriptors.limit(), descriptors.open(), reserved, perConnection);
  }

  /** Whether the descriptor limit lowered {@code server.maxConnections}. */
  public boolean lowered() {
    return effective < configured;
  }

  /** The one-line start-up warning when {@link #lowered()}. */
  public String warning() {
    long needed = openAtStart + reserved + (long) configured * perConnection;
    return "server.maxConnections " + configured + " needs about " + needed + " file descriptors but the limit"
        + " (RLIMIT_NOFILE) is " + descriptorLimit + "; accepting at most " + effective + " connections."
        + " Raise the limit (ulimit -n, LimitNOFILE=, docker --ulimit nofile=) or lower server.maxConnections";
  }
}
