package io.spillway.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Opens N concurrent streaming chat requests against a URL (one virtual thread and one socket each,
 * HTTP/1.1 with {@code Connection: close}), and reports time to first byte (p50/p99), completed
 * streams and errors, one machine-readable line per measured run:
 * {@code STREAMS label=.. n=.. ok=.. errors=.. ttfb_p50_ms=.. ttfb_p99_ms=.. max_open=..
 * early_p99_ms=.. later_p99_ms=..}: the last two split time to first byte by when the stream was
 * opened, in the phase's first {@code --early-seconds} (2) or after, which tells a cold gateway's
 * first seconds from its steady state.
 *
 * <p>Runs in up to three phases in one JVM, so the measured ones do not pay for this JVM's own
 * cold start (class loading, the virtual-thread scheduler, socket code): a warm-up of
 * {@code --warmup} streams to the first URL, each dropped at its first event and not measured;
 * then, with {@code --gateway-warmup}, as many streams to {@code --url}, dropped alike, for a
 * measurement that should not include the gateway's own warm-up either; then, with
 * {@code --baseline-url}, {@code --baseline-streams} measured streams there (label {@code direct});
 * then {@code --streams} measured streams to {@code --url} (label {@code --label}).
 * Each phase starts when the previous one has finished. When a phase has opened all its streams it
 * prints {@code all N streams started (label)}, and when each of them has had its first event (or
 * ended without one) {@code all N streams answered (label)}.
 *
 * <p>A stream costs one socket (one file descriptor) and a small read buffer, so one process holds
 * 10,000 streams within a 20,000-descriptor limit.
 *
 * <pre>java -cp spillway-bench.jar io.spillway.bench.StreamClients --url http://127.0.0.1:8080/v1/chat/completions
 *     --streams 10000 --key bench-key --ramp-per-second 150
 *     [--baseline-url http://127.0.0.1:18950/v1/chat/completions --baseline-streams 200] [--warmup 300]
 *     [--gateway-warmup 0]</pre>
 */
public final class StreamClients {
  private static final byte[] BODY =
      "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"count slowly\"}]}"
          .getBytes(StandardCharsets.UTF_8);

  /** How far behind the ramp may fall (a pause of this client) before it stops catching up in a burst. */
  private static final long MAX_CATCH_UP_NANOS = 100_000_000L;

  private StreamClients() {}

  /** What one phase measured. */
  record Result(String label, int streams, int ok, int errors, List<Long> ttfbNanos, List<Long> earlyNanos,
      List<Long> laterNanos, int maxOpen, List<String> errorSamples) {
    String line() {
      return String.format(Locale.ROOT, "STREAMS label=%s n=%d ok=%d errors=%d ttfb_p50_ms=%.2f ttfb_p99_ms=%.2f max_open=%d"
              + " early_p99_ms=%.2f later_p99_ms=%.2f",
          label, streams, ok, errors, percentile(ttfbNanos, 50) / 1e6, percentile(ttfbNanos, 99) / 1e6, maxOpen,
          percentile(earlyNanos, 99) / 1e6, percentile(laterNanos, 99) / 1e6);
    }

    private static double percentile(List<Long> sorted, int p) {
      if (sorted.isEmpty()) {
        return 0;
      }
      int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
      return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }
  }

  /** Streams opened in a phase's first this many nanoseconds count as early. */
  private static long earlyNanos = 2_000_000_000L;

  public static void main(String[] args) throws Exception {
    URI url = URI.create(Args.value(args, "--url", "http://127.0.0.1:8080/v1/chat/completions"));
    int streams = Args.intValue(args, "--streams", 1000);
    String key = Args.value(args, "--key", "bench-key");
    int rampPerSecond = Args.intValue(args, "--ramp-per-second", 2000);
    String label = Args.value(args, "--label", "gateway");
    String baseline = Args.value(args, "--baseline-url", null);
    int baselineStreams = Args.intValue(args, "--baseline-streams", 200);
    int warmup = Args.intValue(args, "--warmup", 300);
    int gatewayWarmup = Args.intValue(args, "--gateway-warmup", 0);
    earlyNanos = Args.intValue(args, "--early-seconds", 2) * 1_000_000_000L;

    URI first = baseline != null ? URI.create(baseline) : url;
    if (warmup > 0) {
      Result warm = run(first, key, warmup, Math.max(rampPerSecond, 1000), "warmup", true);
      System.out.println("warm-up: " + warm.ok() + " of " + warmup + " streams reached their first event");
    }
    if (gatewayWarmup > 0) {
      Result warm = run(url, key, gatewayWarmup, Math.max(rampPerSecond, 1000), "gateway-warmup", true);
      System.out.println("gateway warm-up: " + warm.ok() + " of " + gatewayWarmup + " streams reached their first event");
    }
    if (baseline != null) {
      report(run(URI.create(baseline), key, baselineStreams, rampPerSecond, "direct", false));
    }
    report(run(url, key, streams, rampPerSecond, label, false));
  }

  private static void report(Result result) {
    System.out.println(result.line());
    result.errorSamples().forEach(sample -> System.out.println("  error: " + sample));
    System.out.flush();
  }

  /**
   * Opens {@code streams} streams at {@code rampPerSecond}, waits for all to end and sums them up;
   * with {@code dropAtFirstEvent} each stream is closed as soon as its first event arrives.
   */
  static Result run(URI url, String key, int streams, int rampPerSecond, String label, boolean dropAtFirstEvent)
      throws InterruptedException {
    byte[] request = ("POST " + url.getPath() + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
        + "\r\nAuthorization: Bearer " + key + "\r\nContent-Type: application/json\r\nContent-Length: " + BODY.length
        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    ConcurrentLinkedQueue<Long> ttfbNanos = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Long> early = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Long> later = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> errorSamples = new ConcurrentLinkedQueue<>();
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger errors = new AtomicInteger();
    OpenCount open = new OpenCount();
    CountDownLatch done = new CountDownLatch(streams);
    CountDownLatch answered = new CountDownLatch(streams);
    long pauseNanos = 1_000_000_000L / Math.max(1, rampPerSecond);
    long begin = System.nanoTime();
    long next = begin;
    for (int i = 0; i < streams; i++) {
      ConcurrentLinkedQueue<Long> part = System.nanoTime() - begin < earlyNanos ? early : later;
      AtomicBoolean counted = new AtomicBoolean();
      Runnable firstByteOrEnd = () -> {
        if (counted.compareAndSet(false, true)) {
          answered.countDown();
        }
      };
      Thread.ofVirtual().start(() -> {
        try {
          runOne(url, request, ttfbNanos, part, open, dropAtFirstEvent, firstByteOrEnd);
          ok.incrementAndGet();
        } catch (Exception e) {
          errors.incrementAndGet();
          if (errorSamples.size() < 5) {
            errorSamples.add(e.toString());
          }
        } finally {
          firstByteOrEnd.run();
          done.countDown();
        }
      });
      next = Math.max(next + pauseNanos, System.nanoTime() - MAX_CATCH_UP_NANOS);
      LockSupport.parkNanos(next - System.nanoTime());
    }
    System.out.println("all " + streams + " streams started (" + label + "); open now: " + open.now());
    System.out.flush();
    answered.await();
    System.out.println("all " + streams + " streams answered (" + label + "); open now: " + open.now());
    System.out.flush();
    done.await();
    return new Result(label, streams, ok.get(), errors.get(), sorted(ttfbNanos), sorted(early), sorted(later),
        open.max(), List.copyOf(errorSamples));
  }

  private static List<Long> sorted(ConcurrentLinkedQueue<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted;
  }

  private static void runOne(URI url, byte[] request, ConcurrentLinkedQueue<Long> ttfb,
      ConcurrentLinkedQueue<Long> part, OpenCount open, boolean dropAtFirstEvent, Runnable firstByte)
      throws IOException {
    long start = System.nanoTime();
    try (Socket socket = new Socket(url.getHost(), url.getPort())) {
      open.opened();
      try {
        socket.setSoTimeout(120_000);
        socket.setTcpNoDelay(true);
        OutputStream out = socket.getOutputStream();
        byte[] whole = new byte[request.length + BODY.length];
        System.arraycopy(request, 0, whole, 0, request.length);
        System.arraycopy(BODY, 0, whole, request.length, BODY.length);
        out.write(whole);
        out.flush();
        readStream(new LineReader(socket.getInputStream()), start, ttfb, part, dropAtFirstEvent, firstByte);
      } finally {
        open.closed();
      }
    }
  }

  private static void readStream(LineReader in, long start, ConcurrentLinkedQueue<Long> ttfb,
      ConcurrentLinkedQueue<Long> part, boolean dropAtFirstEvent, Runnable firstByte) throws IOException {
    String status = in.readLine();
    if (status == null || !status.startsWith("HTTP/1.1 200")) {
      throw new IOException("status: " + status);
    }
    boolean first = true;
    String line;
    while ((line = in.readLine()) != null) {
      if (line.startsWith("data: ")) {
        if (first) {
          long nanos = System.nanoTime() - start;
          ttfb.add(nanos);
          part.add(nanos);
          firstByte.run();
          first = false;
          if (dropAtFirstEvent) {
            return;
          }
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
  }

  /** Streams open now and the most open at once. */
  private static final class OpenCount {
    private final AtomicInteger now = new AtomicInteger();
    private final AtomicInteger max = new AtomicInteger();

    void opened() {
      max.accumulateAndGet(now.incrementAndGet(), Math::max);
    }

    void closed() {
      now.decrementAndGet();
    }

    int now() {
      return now.get();
    }

    int max() {
      return max.get();
    }
  }

  /**
   * Reads lines with a 2 KB buffer (a BufferedReader over an InputStreamReader holds about 24 KB,
   * which at 10,000 streams is a quarter of a gigabyte of client heap). Lines here are ASCII HTTP
   * heads, chunk sizes and SSE lines; a line longer than the buffer is read on across refills.
   */
  private static final class LineReader {
    private final InputStream in;
    private final byte[] buffer = new byte[2048];
    private int position;
    private int limit;

    LineReader(InputStream in) {
      this.in = in;
    }

    String readLine() throws IOException {
      StringBuilder longLine = null;
      while (true) {
        for (int i = position; i < limit; i++) {
          if (buffer[i] == '\n') {
            int end = i > position && buffer[i - 1] == '\r' ? i - 1 : i;
            String part = new String(buffer, position, end - position, StandardCharsets.UTF_8);
            position = i + 1;
            return longLine == null ? part : withoutCr(longLine.append(part));
          }
        }
        if (limit > position) {
          if (longLine == null) {
            longLine = new StringBuilder();
          }
          longLine.append(new String(buffer, position, limit - position, StandardCharsets.UTF_8));
        }
        position = 0;
        limit = in.read(buffer);
        if (limit < 0) {
          limit = 0;
          return longLine == null ? null : longLine.toString();
        }
      }
    }

    /** A line that spanned refills may have had its {@code \r} at the end of one and its {@code \n} at the start of the next. */
    private static String withoutCr(StringBuilder line) {
      int length = line.length();
      return length > 0 && line.charAt(length - 1) == '\r' ? line.substring(0, length - 1) : line.toString();
    }
  }
}
