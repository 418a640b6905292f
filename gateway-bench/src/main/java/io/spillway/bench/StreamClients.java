package io.spillway.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Opens N concurrent streaming chat requests against a URL (one virtual thread and one socket each),
 * and reports time to first byte (p50/p99), completed streams and errors. Prints one machine-readable
 * line: {@code STREAMS n=.. ok=.. errors=.. ttfb_p50_ms=.. ttfb_p99_ms=..}.
 *
 * <pre>java -cp spillway-bench.jar io.spillway.bench.StreamClients --url http://127.0.0.1:8080/v1/chat/completions
 *     --streams 10000 --key bench-key --ramp-per-second 2000</pre>
 */
public final class StreamClients {
  private StreamClients() {}

  public static void main(String[] args) throws Exception {
    URI url = URI.create(Args.value(args, "--url", "http://127.0.0.1:8080/v1/chat/completions"));
    int streams = Args.intValue(args, "--streams", 1000);
    String key = Args.value(args, "--key", "bench-key");
    int rampPerSecond = Args.intValue(args, "--ramp-per-second", 2000);
    String label = Args.value(args, "--label", "gateway");

    byte[] body = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"count slowly\"}]}"
        .getBytes(StandardCharsets.UTF_8);
    byte[] request = ("POST " + url.getPath() + " HTTP/1.1\r\nHost: " + url.getHost() + "\r\nAuthorization: Bearer " + key
        + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);

    ConcurrentLinkedQueue<Long> ttfbNanos = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> errorSamples = new ConcurrentLinkedQueue<>();
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger errors = new AtomicInteger();
    AtomicInteger open = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(streams);
    long pauseNanos = 1_000_000_000L / Math.max(1, rampPerSecond);
    for (int i = 0; i < streams; i++) {
      Thread.ofVirtual().start(() -> {
        try {
          runOne(url, request, body, ttfbNanos, open);
          ok.incrementAndGet();
        } catch (Exception e) {
          errors.incrementAndGet();
          if (errorSamples.size() < 5) {
            errorSamples.add(e.toString());
          }
        } finally {
          done.countDown();
        }
      });
      LockSupport.parkNanos(pauseNanos);
    }
    System.out.println("all " + streams + " streams started; open now: " + open.get());
    done.await();
    List<Long> sorted = new ArrayList<>(ttfbNanos);
    Collections.sort(sorted);
    System.out.printf("STREAMS label=%s n=%d ok=%d errors=%d ttfb_p50_ms=%.2f ttfb_p99_ms=%.2f max_open=%d%n",
        label, streams, ok.get(), errors.get(), percentile(sorted, 50) / 1e6, percentile(sorted, 99) / 1e6, maxOpen);
    errorSamples.forEach(sample -> System.out.println("  error: " + sample));
  }

  private static volatile int maxOpen;

  private static void runOne(URI url, byte[] request, byte[] body, ConcurrentLinkedQueue<Long> ttfb, AtomicInteger open)
      throws IOException {
    long start = System.nanoTime();
    try (Socket socket = new Socket(url.getHost(), url.getPort())) {
      int now = open.incrementAndGet();
      if (now > maxOpen) {
        maxOpen = now;
      }
      socket.setSoTimeout(120_000);
      OutputStream out = socket.getOutputStream();
      out.write(request);
      out.write(body);
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String status = in.readLine();
      if (status == null || !status.startsWith("HTTP/1.1 200")) {
        throw new IOException("status: " + status);
      }
      boolean first = true;
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("data: ")) {
          if (first) {
            ttfb.add(System.nanoTime() - start);
            first = false;
          }
          if (line.contains("\"error\"")) {
            throw new IOException("error event: " + line);
          }
          if (line.equals("data: [DONE]")) {
            return;
          }
        }
      }
      throw new IOException("stream ended without [DONE]");
    } finally {
      open.decrementAndGet();
    }
  }

  private static double percentile(List<Long> sorted, int p) {
    if (sorted.isEmpty()) {
      return 0;
    }
    int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }
}
