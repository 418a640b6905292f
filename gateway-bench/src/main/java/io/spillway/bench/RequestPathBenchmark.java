package io.spillway.bench;

import io.spillway.core.api.RequestParser;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import java.time.Instant;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The gateway's own work for one typical request, without network: parse the body once, run it
 * through the model pipeline as {@code serve} wires it ({@link BenchGateway}), and hand the upstream
 * bytes on. The upstream answers at once with a canned OpenAI answer. The front end's share (HTTP
 * decode, header conversion, response encode) is {@code io.spillway.server.FrontEndBenchmark}.
 *
 * <pre>java -jar gateway-bench/target/spillway-bench.jar RequestPathBenchmark -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RequestPathBenchmark {
  private BenchGateway gateway;
  private Headers headers;

  @Setup
  public void setUp() {
    gateway = new BenchGateway();
    headers = Headers.of("authorization", "Bearer " + BenchGateway.KEY, "content-type", "application/json",
        "host", "127.0.0.1:8080", "user-agent", "OpenAI/Python 1.54.0", "accept", "application/json");
  }

  @TearDown
  public void tearDown() {
    gateway.close();
  }

  @Benchmark
  public GatewayResponse parseRunPipelineAndSerialize() {
    byte[] body = gateway.requestBody;
    GatewayRequest request = GatewayRequest.create("req_bench", Route.CHAT_COMPLETIONS, headers,
        RequestParser.parse(Route.CHAT_COMPLETIONS, "application/json", body), body, Instant.EPOCH);
    return gateway.pipeline.execute(request);
  }
}
