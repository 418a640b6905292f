package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.spillway.bench.BenchGateway;
import io.spillway.config.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One keep-alive request through Spillway's real front end and model pipeline, without sockets:
 * the raw HTTP/1.1 bytes a client sends go into Netty's codec, Spillway's body aggregator and
 * request handler (serving on the calling thread instead of a virtual thread), the model
 * pipeline as {@code serve} wires it ({@link BenchGateway}), and the response comes out encoded. What this leaves out is the socket
 * I/O, the thread hand-offs and the upstream call, which {@code bench/run.sh} measures.
 *
 * <p>Lives in {@code io.spillway.server} to reach the package-private handlers.
 *
 * <pre>java -jar gateway-bench/target/spillway-bench.jar FrontEndBenchmark -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class FrontEndBenchmark {
  private BenchGateway gateway;
  private EmbeddedChannel channel;
  private ByteBuf request;

  @Setup(Level.Trial)
  public void setUp() {
    gateway = new BenchGateway();
    ServerConfig config = ServerConfig.DEFAULTS;
    HttpRequestHandler handler =
        new HttpRequestHandler(gateway.routes, new ConnectionTracker(1), config, Clock.systemUTC());
    channel = new EmbeddedChannel(new HttpServerCodec(),
        new RequestBodyAggregator(config.maxRequestSize().toIntBytes(), handler::answerPending), handler);
    byte[] body = gateway.requestBody;
    String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
        + "Authorization: Bearer " + BenchGateway.KEY + "\r\nContent-Type: application/json\r\n"
        + "User-Agent: OpenAI/Python 1.54.0\r\nAccept: application/json\r\n"
        + "Content-Length: " + body.length + "\r\n\r\n";
    byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
    request = Unpooled.unreleasableBuffer(Unpooled.directBuffer(headBytes.length + body.length)
        .writeBytes(headBytes).writeBytes(body));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    channel.finishAndReleaseAll();
    gateway.close();
  }

  @Benchmark
  public int requestThroughFrontEndAndPipeline() {
    channel.writeInbound(request.duplicate());
    int bytes = 0;
    Object out;
    while ((out = channel.readOutbound()) != null) {
      ByteBuf buf = (ByteBuf) out;
      bytes += buf.readableBytes();
      buf.release();
    }
    if (bytes == 0) {
      throw new IllegalStateException("no response");
    }
    return bytes;
  }
}
