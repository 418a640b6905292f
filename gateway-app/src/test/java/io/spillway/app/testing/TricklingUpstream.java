package io.spillway.app.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw-socket upstream that answers every request with a fixed text: the first {@code fast} bytes
 * at once, then one byte per tick (on a timer, never a sleeping thread), so a connection is never
 * idle for long but an answer takes as long as the test wants. Counts how many of its connections
 * the gateway closed before the answer was complete.
 */
public final class TricklingUpstream implements AutoCloseable {
  private final ServerSocket server;
  private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
  private final byte[] answer;
  private final int fast;
  private final Duration tick;
  /** Counted down once per connection the gateway closed before the answer was written. */
  public final CountDownLatch cutByTheGateway = new CountDownLatch(1);
  public final AtomicInteger requests = new AtomicInteger();

  public TricklingUpstream(String answer, int fast, Duration tick) throws IOException {
    this.answer = answer.getBytes(StandardCharsets.UTF_8);
    this.fast = Math.min(fast, this.answer.length);
    this.tick = tick;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::acceptLoop);
  }

  /** The answer of an SSE stream: its head, then {@code events} (already in wire form). */
  public static String streamAnswer(String events) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + events;
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
  }

  /** The Ollama-style base URL (no {@code /v1}). */
  public String rootUrl() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        Thread.ofVirtual().start(() -> serve(socket));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try {
      InputStream in = socket.getInputStream();
      int length = RequestHeads.contentLength(RequestHeads.requireHead(in));
      in.readNBytes(length);
      requests.incrementAndGet();
      OutputStream out = socket.getOutputStream();
      out.write(answer, 0, fast);
      out.flush();
      AtomicInteger next = new AtomicInteger(fast);
      ScheduledFuture<?>[] task = new ScheduledFuture<?>[1];
      task[0] = ticks.scheduleAtFixedRate(() -> {
        int at = next.getAndIncrement();
        try {
          if (at >= answer.length) {
            socket.close();
            task[0].cancel(false);
            return;
          }
          out.write(answer[at]);
          out.flush();
        } catch (IOException e) {
          cutByTheGateway.countDown();
          closeQuietly(socket);
          task[0].cancel(false);
        }
      }, tick.toNanos(), tick.toNanos(), TimeUnit.NANOSECONDS);
    } catch (IOException e) {
      closeQuietly(socket);
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // already gone
    }
  }



  @Override
  public void close() throws IOException {
    server.close();
    ticks.shutdownNow();
  }
}
