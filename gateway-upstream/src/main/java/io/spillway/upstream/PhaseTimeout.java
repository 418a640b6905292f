package io.spillway.upstream;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okio.AsyncTimeout;

/**
 * Cancels an upstream call when one phase of it outlasts its limit: the wait for the whole response
 * head, or for one whole event of a stream. A socket read timeout cannot do this: every byte that
 * arrives resets it, so an upstream that trickles one byte at a time would never reach it.
 *
 * <p>Runs on okio's watchdog thread, the one OkHttp's own timeouts use, so a phase costs a queue
 * insertion and removal, no thread and no scheduler task. {@link #begin} and {@link #end} alternate
 * on the thread that reads the call; the cancel action runs on the watchdog and must be quick.
 */
public final class PhaseTimeout {
  private final Timer timer;

  /** @param limit the longest one phase may take; null or zero: no limit */
  public PhaseTimeout(Duration limit, Runnable cancel) {
    this.timer = limit == null || limit.isZero() ? null : new Timer(cancel);
    if (timer != null) {
      timer.timeout(limit.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** Starts a phase: unless {@link #end} comes first, the call is cancelled when the limit passes. */
  public void begin() {
    if (timer != null) {
      timer.enter();
    }
  }

  /** Ends the phase; true when its limit passed and the call was cancelled. */
  public boolean end() {
    return timer != null && timer.exit();
  }

  private static final class Timer extends AsyncTimeout {
    private final Runnable cancel;

    Timer(Runnable cancel) {
      this.cancel = cancel;
    }

    @Override
    protected void timedOut() {
      cancel.run();
    }
  }
}
