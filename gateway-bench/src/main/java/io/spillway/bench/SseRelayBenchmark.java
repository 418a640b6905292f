package io.spillway.bench;

import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.EventUsage;
import io.spillway.core.sse.InputStreamEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.sse.SseParser;
import io.spillway.core.sse.UpstreamEvents;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okio.Okio;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The per-event work of relaying a stream, over a typical chat completion stream (scores are per
 * event). {@link #readAndEncodePerEvent}: the upstream's {@code text/event-stream} bytes through
 * the same kind of stream OkHttp hands out (an okio buffered source), parsed by {@code SseReader}
 * inside {@code InputStreamEventStream} (which copies each event out of its reused read buffer),
 * and handed to the writer ({@link SseEvent#wire}; {@link SseEvent#encode} before events kept their
 * bytes). {@link #parseChunksAndWritePerEvent}: the data path's relay, from the
 * transport's reads to the bytes the front end writes ({@link SseEvent#wire}).
 *
 * <pre>java -jar gateway-bench/target/spillway-bench.jar SseRelayBenchmark -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SseRelayBenchmark {
  /** Content chunks per stream; the stream also has a role chunk, a finish chunk and [DONE]. */
  static final int EVENTS = 100;

  /**
   * How the upstream's bytes arrive for {@link #parseChunksAndWritePerEvent}: {@code event}, one
   * event per read (a live stream: each token is sent as it is made); {@code 512}, reads of 512
   * bytes, so most events span two reads.
   */
  @Param({"event", "512"})
  public String reads;

  private byte[] stream;
  private List<byte[]> chunks;

  @Setup
  public void setUp() {
    StringBuilder out = new StringBuilder();
    String prefix = "data: {\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\","
        + "\"created\":1741570283,\"model\":\"gpt-4o-mini-2024-07-18\",\"service_tier\":\"default\","
        + "\"system_fingerprint\":\"fp_b376dfbbd5\",\"choices\":[{\"index\":0,\"delta\":";
    out.append(prefix).append("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,"
        + "\"finish_reason\":null}]}\n\n");
    for (int i = 0; i < EVENTS - 3; i++) {
      out.append(prefix).append("{\"content\":\" token").append(i).append("\"},\"logprobs\":null,"
          + "\"finish_reason\":null}]}\n\n");
    }
    out.append(prefix).append("{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n");
    out.append("data: [DONE]\n\n");
    stream = out.toString().getBytes(StandardCharsets.UTF_8);
    chunks = new ArrayList<>();
    if (reads.equals("event")) {
      for (String event : out.toString().split("(?<=\n\n)")) {
        chunks.add(event.getBytes(StandardCharsets.UTF_8));
      }
    } else {
      int size = Integer.parseInt(reads);
      for (int at = 0; at < stream.length; at += size) {
        chunks.add(java.util.Arrays.copyOfRange(stream, at, Math.min(stream.length, at + size)));
      }
    }
  }

  /**
   * The relay's path since session 5: the upstream's reads (fresh arrays, as the transport hands
   * them over) through the incremental parser, the checks every upstream event gets (a JSON
   * object; the terminal event) and the usage check metering makes, then the bytes for the client.
   */
  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public void parseChunksAndWritePerEvent(Blackhole sink) throws IOException {
    SseParser parser = new SseParser(4 * 1024 * 1024, () -> {}, true, true);
    for (byte[] chunk : chunks) {
      parser.feed(chunk, 0, chunk.length, event -> relay(event, sink));
    }
  }

  private static void relay(SseEvent event, Blackhole sink) {
    sink.consume(event.isDone() || event.dataLooksLikeJsonObject());
    sink.consume(UpstreamEvents.isTerminal(event));
    sink.consume(EventUsage.of(event, Long.MAX_VALUE));
    sink.consume(event.wire(WRITE));
  }

  /** What the front end hands Netty to wrap (the wrapper itself is left out, as before). */
  private static final SseEvent.Bytes<byte[]> WRITE = (array, offset, length) -> array;

  /** Parse and re-encode every event of one stream; the score is per event. */
  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public void readAndEncodePerEvent(Blackhole sink) {
    InputStream body = Okio.buffer(Okio.source(new ByteArrayInputStream(stream))).inputStream();
    EventStream events = new InputStreamEventStream("cloud", body, () -> {});
    SseEvent event;
    while ((event = events.next()) != null) {
      sink.consume(event.wire(WRITE));
    }
  }
}
