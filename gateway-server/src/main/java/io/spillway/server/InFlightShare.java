package io.spillway.server;

import java.util.ArrayDeque;
import java.util.function.BooleanSupplier;

/**
 * One HTTP/2 connection's share of the requests being served ({@code
 * server.http2.maxInFlightPerConnection}): past it, a stream's request waits, in arrival order, for
 * one of the connection's requests to finish, so one connection with many streams cannot take the
 * whole of the backends' concurrency (and their admission queues) from every other client. A
 * waiting stream has sent its whole request; it holds no upstream call and no admission place.
 *
 * <p>Confined to the connection's event loop (every stream of a connection runs on it).
 */
final class InFlightShare {
  private final int max;
  private final ArrayDeque<BooleanSupplier> waiting = new ArrayDeque<>();
  private int inFlight;

  InFlightShare(int max) {
    this.max = max;
  }

  /**
   * Runs {@code start} now if the connection has a free place, or when one frees up. {@code start}
   * answers false when its stream is gone by then; its place goes to the next in line. Every start
   * that answered true is followed by exactly one {@link #leave}.
   */
  void enter(BooleanSupplier start) {
    if (inFlight < max) {
      inFlight++;
      if (!start.getAsBoolean()) {
        leave();
      }
    } else {
      waiting.add(start);
    }
  }

  /** One of the connection's requests finished: the next waiting one starts. */
  void leave() {
    inFlight--;
    BooleanSupplier next;
    while (inFlight < max && (next = waiting.poll()) != null) {
      inFlight++;
      if (next.getAsBoolean()) {
        return;
      }
      inFlight--;
    }
  }

  int inFlight() {
    return inFlight;
  }

  int waiting() {
    return waiting.size();
  }
}
