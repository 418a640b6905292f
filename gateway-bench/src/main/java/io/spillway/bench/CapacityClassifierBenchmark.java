package io.spillway.bench;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.SseEvent;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Verdict;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The capacity classifier on the answers it sees most: a success (every request pays this), the
 * 503 "Selected model is at capacity" body it exists for, a 429 rate-limit body with its reset
 * headers, and a stream's first event (a chunk, and an error chunk).
 *
 * <pre>java -jar gateway-bench/target/spillway-bench.jar CapacityClassifierBenchmark -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CapacityClassifierBenchmark {
  private CapacityClassifier classifier;
  private GatewayResponse success;
  private GatewayResponse atCapacity;
  private GatewayResponse rateLimited;
  private SseEvent firstChunk;
  private SseEvent errorChunk;

  @Setup
  public void setUp() {
    classifier = new CapacityClassifier(Clock.systemUTC());
    success = GatewayResponse.buffered(200, Headers.of("content-type", "application/json"),
        BenchGateway.resource("/chat-response.json"));
    atCapacity = GatewayResponse.buffered(503, Headers.of("content-type", "application/json"), bytes(
        "{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
            + "\"type\":\"server_error\",\"param\":null,\"code\":null}}"));
    rateLimited = GatewayResponse.buffered(429, Headers.of("content-type", "application/json",
        "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s", "retry-after-ms", "1000"), bytes(
        "{\"error\":{\"message\":\"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): "
            + "Limit 500, Used 500, Requested 1.\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"));
    firstChunk = SseEvent.data("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,"
        + "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
        + "\"finish_reason\":null}]}");
    errorChunk = SseEvent.data("{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
        + "\"type\":\"server_error\",\"param\":null,\"code\":null}}");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public Verdict success() {
    return classifier.classify(success);
  }

  @Benchmark
  public Verdict atCapacity503() {
    return classifier.classify(atCapacity);
  }

  @Benchmark
  public Verdict rateLimited429() {
    return classifier.classify(rateLimited);
  }

  @Benchmark
  public Verdict streamFirstChunk() {
    return classifier.classifyFirstEvent(firstChunk);
  }

  @Benchmark
  public Verdict streamErrorChunk() {
    return classifier.classifyFirstEvent(errorChunk);
  }
}
