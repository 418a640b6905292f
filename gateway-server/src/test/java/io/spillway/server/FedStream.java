package io.spillway.server;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * A non-blocking stream the test feeds from its own thread, the way an upstream's event loop would:
 * a poll with nothing queued answers {@link SseEvent#PENDING}, and feeding runs the waiting
 * {@link #onReady} callback on the feeding thread. Or, {@link #endless}, one that always has an
 * event. Records its polls (and whether any ran on a virtual thread) and each close with its cause.
 */
final class FedStream implements EventStream {
  private static final Object END = new Object();

  private final Queue<Object> queue = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Runnable> waiting = new AtomicReference<>();
  private final AtomicInteger polls = new AtomicInteger();
  private final AtomicInteger virtualPolls = new AtomicInteger();
  private final List<CloseCause> closes = new CopyOnWriteArrayList<>();
  private final IntFunction<SseEvent> endless;
  private volatile boolean closed;
  private volatile boolean started;

  FedStream() {
    this(null);
  }

  private FedStream(IntFunction<SseEvent> endless) {
    this.endless = endless;
  }

  /** A stream whose every poll has an event: the {@code n}th poll's. */
  static FedStream endless(IntFunction<SseEvent> event) {
    return new FedStream(event);
  }

  FedStream send(SseEvent event) {
    queue.add(event);
    wake();
    return this;
  }

  FedStream end() {
    queue.add(END);
    wake();
    return this;
  }

  /** The next poll throws {@code e}, as a stream out of memory would. */
  FedStream breakWith(Error e) {
    queue.add(e);
    wake();
    return this;
  }

  FedStream fail(GatewayException e) {
    queue.add(e);
    wake();
    return this;
  }

  private void wake() {
    Runnable action = waiting.getAndSet(null);
    if (action != null) {
      action.run();
    }
  }

  @Override
  public SseEvent poll() {
    int n = polls.incrementAndGet();
    if (Thread.currentThread().isVirtual()) {
      virtualPolls.incrementAndGet();
    }
    if (closed) {
      return null;
    }
    if (endless != null) {
      started = true;
      return endless.apply(n);
    }
    Object item = queue.peek();
    if (item == null) {
      return SseEvent.PENDING;
    }
    if (item == END) {
      return null;
    }
    queue.poll();
    if (item instanceof GatewayException e) {
      throw e;
    }
    if (item instanceof Error e) {
      throw e;
    }
    started = true;
    return (SseEvent) item;
  }

  @Override
  public void onReady(Runnable action) {
    waiting.set(action);
    if (closed || !queue.isEmpty() || endless != null) {
      wake();
    }
  }

  @Override
  public boolean nonBlocking() {
    return true;
  }

  @Override
  public void close() {
    closes.add(CloseCause.current());
    closed = true;
    wake();
  }

  @Override
  public boolean started() {
    return started;
  }

  int polls() {
    return polls.get();
  }

  int virtualPolls() {
    return virtualPolls.get();
  }

  List<CloseCause> closes() {
    return closes;
  }
}
