package io.spillway.cache;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One upstream stream read once and handed to every request that asked the same thing while it ran.
 *
 * <p>A pump on its own virtual thread reads the upstream and appends each event to a replay buffer;
 * each {@link #subscribe subscriber} reads the buffer from the start at its own pace (so a late
 * joiner first gets every event sent so far, then the rest as it arrives). A subscriber never
 * blocks ({@link EventStream#nonBlocking}): once it has caught up it answers
 * {@link SseEvent#PENDING}, and the pump runs its {@link EventStream#onReady} callback when the next
 * event, the end or a failure comes, so the front end relays it from its event loop without a
 * thread. A subscriber that fails or goes away never cancels the call for the others.
 *
 * <p>The buffer is bounded by {@code maxBytes} (the {@code cache.maxEntrySize}). While the stream
 * fits, the whole stream is kept, for late joiners and for the cache. Once it grows past the bound
 * it is closed to joiners and will not be cached; from then on events every subscriber has read are
 * dropped, and the pump waits while the unread rest is over the bound, so the stream then runs at
 * the pace of its slowest reader, exactly like an unshared stream.
 *
 * <p>When every subscriber has gone, the pump keeps reading to the end if the answer can still be
 * cached ({@code keepForCache}), bounded by the stream time limit; otherwise it cancels the upstream
 * at once. The upstream is closed exactly once, by whichever comes first. Thread-safe.
 */
final class SharedStream {
  private static final Logger log = LoggerFactory.getLogger(SharedStream.class);

  /** What the owner hears about the stream's life; called on the pump thread, outside the lock. */
  interface Listener {
    /** The stream grew past the bound: stop handing it to joiners. */
    void overflowed();

    /**
     * The pump is done. {@code events} is the whole stream when it ended normally and was kept
     * whole; null after a failure, a cancel or an overflow.
     */
    void finished(List<SseEvent> events);
  }

  private final EventStream upstream;
  private final long maxBytes;
  private final boolean keepForCache;
  private final Clock clock;
  private final Duration timeLimit;
  private final Instant deadline;
  private final Listener listener;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final AtomicBoolean upstreamClosed = new AtomicBoolean();
  private final List<SseEvent> events = new ArrayList<>();
  private final List<Subscriber> subscribers = new ArrayList<>();
  /** Callbacks of subscribers that caught up, run (outside the lock) when the stream moves on. */
  private List<Runnable> whenReady = new ArrayList<>();
  private long base;
  private long retainedBytes;
  private long totalBytes;
  private boolean overflowed;
  private boolean ended;
  private boolean cancelled;
  private GatewayException failure;

  SharedStream(
      EventStream upstream, long maxBytes, boolean keepForCache, Clock clock, Duration timeLimit, Listener listener) {
    this.upstream = upstream;
    this.maxBytes = maxBytes;
    this.keepForCache = keepForCache;
    this.clock = clock;
    this.timeLimit = timeLimit;
    this.deadline = clock.instant().plus(timeLimit);
    this.listener = listener;
  }

  /** Starts the pump. Subscribe the first reader before: the pump takes no audience for one that left. */
  void start() {
    Thread.ofVirtual().name("spillway-shared-stream").start(this::pump);
  }

  /**
   * A new reader that starts at the first event, or null when the stream no longer takes joiners
   * (it outgrew the bound, or was cancelled): the caller then makes its own call.
   */
  EventStream subscribe() {
    lock.lock();
    try {
      if (overflowed || cancelled) {
        return null;
      }
      Subscriber subscriber = new Subscriber(base);
      subscribers.add(subscriber);
      return subscriber;
    } finally {
      lock.unlock();
    }
  }

  private void pump() {
    boolean normalEnd = false;
    try {
      while (true) {
        SseEvent event;
        try {
          event = upstream.next();
        } catch (GatewayException e) {
          fail(e);
          return;
        }
        if (event == null) {
          normalEnd = end();
          return;
        }
        if (!append(event)) {
          return;
        }
        if (clock.instant().isAfter(deadline)) {
          fail(ErrorKind.GATEWAY_TIMEOUT.exception(
              "Stream ran longer than the gateway's limit (server.streamTimeLimit " + timeLimit + ")"));
          return;
        }
      }
    } catch (RuntimeException | Error e) {
      log.error("shared stream failed unexpectedly", e);
      fail(ErrorKind.INTERNAL.exception("Spillway failed while streaming a shared answer"));
      if (e instanceof Error error) {
        throw error;
      }
    } finally {
      closeUpstream();
      List<SseEvent> whole = null;
      List<Runnable> ready;
      lock.lock();
      try {
        if (normalEnd) {
          whole = overflowed ? null : List.copyOf(events);
        }
        ready = takeReady(); // a subscriber still waiting after a cancel hears that it is over
      } finally {
        lock.unlock();
      }
      ready.forEach(Runnable::run);
      listener.finished(whole);
    }
  }

  /**
   * Adds one event; false when the stream was cancelled and the pump should stop. Past the bound,
   * waits until the slowest subscriber has read enough.
   */
  private boolean append(SseEvent event) {
    boolean overflowNow = false;
    List<Runnable> ready;
    lock.lock();
    try {
      if (cancelled) {
        return false;
      }
      long weight = CachedAnswer.eventWeight(event);
      events.add(event);
      retainedBytes += weight;
      totalBytes += weight;
      if (!overflowed && totalBytes > maxBytes) {
        overflowed = true;
        overflowNow = true;
      }
      changed.signalAll();
      ready = takeReady();
    } finally {
      lock.unlock();
    }
    ready.forEach(Runnable::run);
    if (overflowNow) {
      listener.overflowed();
    }
    lock.lock();
    try {
      if (overflowed) {
        trim();
        while (retainedBytes > maxBytes && !subscribers.isEmpty() && !cancelled) {
          changed.await();
          trim();
        }
        if (subscribers.isEmpty()) {
          cancelled = true;
        }
      }
      return !cancelled;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      cancelled = true;
      return false;
    } finally {
      lock.unlock();
    }
  }

  /** After an overflow: drops the events every subscriber has read. Holds the lock. */
  private void trim() {
    long keepFrom = base + events.size();
    for (Subscriber s : subscribers) {
      keepFrom = Math.min(keepFrom, s.cursor);
    }
    int drop = (int) (keepFrom - base);
    if (drop > 0) {
      List<SseEvent> read = events.subList(0, drop);
      for (SseEvent event : read) {
        retainedBytes -= CachedAnswer.eventWeight(event);
      }
      read.clear();
      base = keepFrom;
    }
  }

  private boolean end() {
    List<Runnable> ready;
    lock.lock();
    try {
      if (cancelled) {
        return false;
      }
      ended = true;
      changed.signalAll();
      ready = takeReady();
    } finally {
      lock.unlock();
    }
    ready.forEach(Runnable::run);
    return true;
  }

  private void fail(GatewayException e) {
    List<Runnable> ready;
    lock.lock();
    try {
      if (failure == null && !ended) {
        failure = e;
      }
      changed.signalAll();
      ready = takeReady();
    } finally {
      lock.unlock();
    }
    ready.forEach(Runnable::run);
  }

  /** The waiting subscribers' callbacks, to run once the lock is let go. Holds the lock. */
  private List<Runnable> takeReady() {
    if (whenReady.isEmpty()) {
      return List.of();
    }
    List<Runnable> ready = whenReady;
    whenReady = new ArrayList<>();
    return ready;
  }

  private void closeUpstream() {
    if (upstreamClosed.compareAndSet(false, true)) {
      upstream.close();
    }
  }

  /** One reader's view: a cursor into the shared buffer. */
  private final class Subscriber implements EventStream {
    private long cursor;
    private boolean closed;
    private boolean started;

    Subscriber(long cursor) {
      this.cursor = cursor;
    }

    @Override
    public SseEvent poll() {
      lock.lock();
      try {
        if (closed) {
          return null;
        }
        int index = (int) (cursor - base);
        if (index < events.size()) {
          cursor++;
          started = true;
          if (overflowed) {
            changed.signalAll();
          }
          return events.get(index);
        }
        if (failure != null) {
          throw failure;
        }
        if (ended || cancelled) {
          return null;
        }
        return SseEvent.PENDING;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void onReady(Runnable action) {
      lock.lock();
      try {
        boolean caughtUp = !closed && cursor - base >= events.size() && failure == null && !ended && !cancelled;
        if (caughtUp) {
          whenReady.add(action);
          return;
        }
      } finally {
        lock.unlock();
      }
      action.run();
    }

    /** Reads only the shared buffer: the pump does the upstream's reading. */
    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public void close() {
      boolean cancelUpstream = false;
      lock.lock();
      try {
        if (closed) {
          return;
        }
        closed = true;
        subscribers.remove(this);
        boolean running = !ended && failure == null && !cancelled;
        if (running && subscribers.isEmpty() && (!keepForCache || overflowed)) {
          cancelled = true;
          cancelUpstream = true;
        } else if (overflowed) {
          trim();
        }
        changed.signalAll();
      } finally {
        lock.unlock();
      }
      if (cancelUpstream) {
        closeUpstream();
      }
    }

    @Override
    public boolean started() {
      lock.lock();
      try {
        return started;
      } finally {
        lock.unlock();
      }
    }
  }
}
