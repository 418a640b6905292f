package io.spillway.routing;

import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A non-blocking stream the test pushes events into from a thread of its choice, as an upstream's
 * event loop would: a poll with nothing there answers {@link SseEvent#PENDING}, and a push runs the
 * waiting {@link #onReady} callback on the pushing thread. Records the threads it was polled on.
 */
final class PushedStream implements EventStream {
  private static final SseEvent END = new SseEvent("end", "");

  private final Queue<SseEvent> queue = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Runnable> waiting = new AtomicReference<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  final Queue<Thread> pollers = new ConcurrentLinkedQueue<>();
  private volatile boolean started;

  void push(SseEvent event) {
    queue.add(event);
    Runnable ready = waiting.getAndSet(null);
    if (ready != null) {
      ready.run();
    }
  }

  void end() {
    push(END);
  }

  boolean closed() {
    return closed.get();
  }

  @Override
  public SseEvent poll() {
    pollers.add(Thread.currentThread());
    SseEvent event = queue.peek();
    if (event == null) {
      return SseEvent.PENDING;
    }
    if (event == END) {
      return null;
    }
    queue.poll();
    started = true;
    return event;
  }

  @Override
  public void onReady(Runnable action) {
    waiting.set(action);
    if (!queue.isEmpty() && waiting.compareAndSet(action, null)) {
      action.run();
    }
  }

  @Override
  public boolean nonBlocking() {
    return true;
  }

  @Override
  public void close() {
    closed.set(true);
  }

  @Override
  public boolean started() {
    return started;
  }
}
