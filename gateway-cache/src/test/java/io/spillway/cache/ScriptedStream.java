package io.spillway.cache;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** An upstream stream the test feeds event by event, to see exactly when readers get what. */
final class ScriptedStream implements EventStream {
  private static final Object END = new Object();

  private final BlockingQueue<Object> script = new LinkedBlockingQueue<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger closes = new AtomicInteger();
  private volatile boolean started;

  ScriptedStream send(SseEvent... events) {
    for (SseEvent event : events) {
      script.add(event);
    }
    return this;
  }

  ScriptedStream end() {
    script.add(END);
    return this;
  }

  ScriptedStream fail(GatewayException e) {
    script.add(e);
    return this;
  }

  @Override
  public SseEvent poll() {
    if (closed.get()) {
      return null;
    }
    Object item;
    try {
      item = script.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    if (item == END) {
      script.add(END);
      return null;
    }
    if (item instanceof GatewayException e) {
      throw e;
    }
    started = true;
    return (SseEvent) item;
  }

  @Override
  public void close() {
    closes.incrementAndGet();
    if (closed.compareAndSet(false, true)) {
      script.add(END);
    }
  }

  boolean closed() {
    return closed.get();
  }

  int closeCalls() {
    return closes.get();
  }

  @Override
  public boolean started() {
    return started;
  }
}
