package io.spillway.core.pipeline;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells whoever serves a request that its client has gone away (closed or reset the connection)
 * before the answer was complete, so that work nobody will receive stops at once: an upstream call
 * in progress is cancelled, a wait in the admission queue is given up, and no failover attempt is
 * started. The front end creates one per request and {@link #signal signals} it when the
 * connection closes; stages find it with {@link #of(GatewayRequest)}.
 *
 * <p>Thread-safe. Actions run on the thread that signals (the connection's event loop), so they must
 * be quick and must not block: cancelling an OkHttp call or interrupting a thread is fine.
 */
public final class ClientDisconnect {
  private static final Logger log = LoggerFactory.getLogger(ClientDisconnect.class);

  /** For requests that have no client connection (tests, benchmarks, internal calls): never signals. */
  public static final ClientDisconnect NEVER = new ClientDisconnect(false);

  /** Undoes an {@link #onDisconnect} registration; closing it twice is harmless. */
  @FunctionalInterface
  public interface Registration extends AutoCloseable {
    Registration NONE = () -> {};

    @Override
    void close();
  }

  private final boolean signallable;
  private final List<Runnable> actions = new ArrayList<>(2);
  private volatile boolean happened;

  private ClientDisconnect(boolean signallable) {
    this.signallable = signallable;
  }

  /** A signal for one request of a client connection. */
  public static ClientDisconnect create() {
    return new ClientDisconnect(true);
  }

  /** The signal of {@code request}, or {@link #NEVER} when it has none. */
  public static ClientDisconnect of(GatewayRequest request) {
    return request.attribute(RequestAttributes.CLIENT_DISCONNECT, NEVER);
  }

  /** Whether the client has gone away. */
  public boolean happened() {
    return happened;
  }

  /**
   * Runs {@code action} when the client goes away; at once (on this thread) when it already has.
   * Close the registration when the work it would stop is over.
   */
  public Registration onDisconnect(Runnable action) {
    if (!signallable) {
      return Registration.NONE;
    }
    synchronized (this) {
      if (!happened) {
        actions.add(action);
        return () -> {
          synchronized (this) {
            actions.remove(action);
          }
        };
      }
    }
    action.run();
    return Registration.NONE;
  }

  /** The client has gone: runs every registered action once. Later calls do nothing. */
  public void signal() {
    if (!signallable) {
      return;
    }
    List<Runnable> toRun;
    synchronized (this) {
      if (happened) {
        return;
      }
      happened = true;
      toRun = List.copyOf(actions);
      actions.clear();
    }
    for (Runnable action : toRun) {
      try {
        action.run();
      } catch (RuntimeException e) {
        log.debug("stopping work for a client that went away failed: {}", e.toString());
      }
    }
  }
}
