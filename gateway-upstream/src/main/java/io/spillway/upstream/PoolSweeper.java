package io.spillway.upstream;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import okhttp3.ConnectionPool;
import okhttp3.internal.concurrent.TaskRunner;
import okhttp3.internal.connection.ConnectionListener;

/**
 * Runs an OkHttp connection pool's housekeeping on a coarse tick instead of after every call.
 *
 * <p>OkHttp asks its pool's closer to run "now" each time a connection goes back to the pool. On
 * OkHttp's shared runner that wakes a thread, renames it, and scans every pooled connection under
 * its lock, once per upstream call: at 64 concurrent calls this was about a quarter of Spillway's
 * CPU per request (see docs/performance.md). Here the coordinator ignores those nudges and wakes
 * at most once per tick, so idle connections are still closed when their keep-alive runs out or
 * when more than {@code maxIdleConnections} are idle, at most one tick late. When the pool is
 * empty, nothing is scheduled and no thread wakes.
 *
 * <p>OkHttp offers no public way to give a pool its own scheduler; this uses its
 * {@code okhttp3.internal.concurrent.TaskRunner} API. The OkHttp version is pinned in the root pom,
 * and {@code PoolSweeperTest} checks the pool still closes idle connections.
 */
final class PoolSweeper implements TaskRunner.Backend {
  private final long tickNanos;
  private final ThreadPoolExecutor threads =
      new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
          Thread.ofPlatform().daemon().name("spillway-pool-sweeper").factory());

  private PoolSweeper(Duration tick) {
    this.tickNanos = tick.toNanos();
  }

  /** A connection pool whose closer runs at most once per {@code tick}. */
  static ConnectionPool pool(int maxIdleConnections, Duration keepAlive, Duration tick) {
    TaskRunner runner = new TaskRunner(new PoolSweeper(tick), Logger.getLogger(PoolSweeper.class.getName()));
    return new ConnectionPool(maxIdleConnections, keepAlive.toNanos(), TimeUnit.NANOSECONDS, runner,
        ConnectionListener.Companion.getNONE());
  }

  /** Real time on purpose (not the injected ticker): OkHttp schedules real-time waits with it. */
  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  /** "Run this now" from a returning connection: left for the next tick. */
  @Override
  public void coordinatorNotify(TaskRunner taskRunner) {}

  /**
   * Called with {@code taskRunner}'s monitor held, in a loop that re-checks its state after every
   * wake-up, as OkHttp's own backend is. An interrupt reaches OkHttp as the
   * {@link InterruptedException} its runner catches (it cancels its tasks), as with its own backend.
   */
  @Override
  public void coordinatorWait(TaskRunner taskRunner, long nanos) {
    long wait = Math.min(nanos, tickNanos);
    if (wait > 0) {
      try {
        taskRunner.wait(TimeUnit.NANOSECONDS.toMillis(wait), (int) (wait % 1_000_000));
      } catch (InterruptedException e) {
        throw PoolSweeper.<RuntimeException>sneaky(e);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable e) throws E {
    throw (E) e;
  }

  @Override
  public <T> BlockingQueue<T> decorate(BlockingQueue<T> queue) {
    return queue;
  }

  @Override
  public void execute(TaskRunner taskRunner, Runnable runnable) {
    threads.execute(runnable);
  }
}
