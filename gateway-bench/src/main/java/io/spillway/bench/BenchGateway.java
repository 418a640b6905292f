package io.spillway.bench;

import io.spillway.app.Backends;
import io.spillway.app.Foundation;
import io.spillway.app.ModelPipeline;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.http.HttpService;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.time.Ticker;
import io.spillway.server.HttpRoutes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Map;

/**
 * Spillway's model pipeline exactly as {@code serve} wires it ({@link ModelPipeline}, the one
 * factory of it, over {@link Backends} from the same config), in front of an upstream that answers
 * at once with a canned chat completion ({@link CannedUpstream}). The config is the defaults with
 * one gold key, the store in memory and no local backend: every stage a cloud request crosses runs,
 * nothing waits on a disk or a network.
 */
public final class BenchGateway implements AutoCloseable {
  public static final String KEY = "bench-key";
  private static final String CONFIG = """
      cloud:
        baseUrl: http://127.0.0.1:9/v1
        apiKey: sk-bench
      local:
        enabled: false
      keys:
        - { key: %s, team: bench, tier: gold }
      store: memory
      """.formatted(KEY);

  public final byte[] requestBody = resource("/chat-request.json");
  public final byte[] answer = resource("/chat-response.json");
  public final Pipeline pipeline;
  /** The OpenAI endpoints over {@link #pipeline}, as the front end routes them. */
  public final HttpService routes;
  private final Foundation base;
  private final Backends backends;
  private final ModelPipeline models;

  public BenchGateway() {
    GatewayConfig config = new ConfigLoader(Map.<String, String>of()::get).parse("bench config", CONFIG);
    CannedUpstream upstream = new CannedUpstream(answer);
    this.base = Foundation.open(config, Clock.systemUTC(), Ticker.system(), null);
    this.backends = Backends.create(base, upstream, upstream);
    this.models = ModelPipeline.create(base, backends);
    this.pipeline = models.modelCalls();
    HttpRoutes.Builder builder = HttpRoutes.builder();
    for (Route route : Route.values()) {
      if (route.hasBody() && route.api() == Route.Api.OPENAI) {
        builder.route(route.method(), route.path(), new OpenAiEndpoint(route, pipeline));
      }
    }
    this.routes = builder.build();
  }

  static byte[] resource(String name) {
    try (InputStream in = BenchGateway.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try (base; backends; models) {
      // closed in reverse: the pipeline's parts, the backends, then what they share
    }
  }
}
