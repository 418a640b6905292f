package io.spillway.bench;

import io.spillway.core.api.RequestParser;
import io.spillway.core.config.KeyConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.quota.keys.AuthInterceptor;
import io.spillway.quota.keys.KeyRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
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
 * The gateway's own work for one typical request, without network: parse the body once, run it
 * through the pipeline stages, and hand the upstream bytes on. The terminal stage stands in for the
 * backend and returns a canned OpenAI answer.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class RequestPathBenchmark {
  private byte[] body;
  private byte[] answer;
  private Headers headers;
  private Pipeline pipeline;

  @Setup
  public void setUp() {
    body = resource("/chat-request.json");
    answer = resource("/chat-response.json");
    headers = Headers.of("authorization", "Bearer bench-key", "content-type", "application/json");
    KeyRegistry keys = KeyRegistry.from(List.of(new KeyConfig("bench-key", null, "bench", "gold")));
    pipeline = new Pipeline(List.of(new AuthInterceptor(() -> keys)), request -> {
      byte[] upstreamBytes = request.bodyBytes();
      if (upstreamBytes.length == 0) {
        throw new IllegalStateException();
      }
      return GatewayResponse.json(200, answer);
    });
  }

  @Benchmark
  public GatewayResponse parseRunPipelineAndSerialize() {
    GatewayRequest request = GatewayRequest.create("req_bench", Route.CHAT_COMPLETIONS, headers,
        RequestParser.parse(Route.CHAT_COMPLETIONS, "application/json", body), body, Instant.EPOCH);
    return pipeline.execute(request);
  }

  static byte[] resource(String name) {
    try (InputStream in = RequestPathBenchmark.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
