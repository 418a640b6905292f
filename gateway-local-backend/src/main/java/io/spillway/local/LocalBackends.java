package io.spillway.local;

import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.config.LocalServerConfig;
import io.spillway.local.pool.PooledServer;
import java.util.ArrayList;
import java.util.List;
import io.spillway.trim.TrimSettings;
import io.spillway.local.ollama.OllamaBackend;
import io.spillway.local.openai.OpenAiLocalBackend;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;

/** Builds the local backend that {@code local.kind} names, started and kept ready and warm. */
public final class LocalBackends {
  private LocalBackends() {}

  /**
   * The local backend for {@code local}, every server's readiness probe and keep-warm schedule
   * started; every server makes its data calls over {@code http}, the data path's client on the
   * front end's event loops, and its probes and keep-warm loads over OkHttp.
   *
   * @param cloud supplies the connect timeout and the response size limit; its key is never used
   * @param trim what the code-aware trimmer keeps when a request is fitted to the local model's
   *     window (the {@code shaping.trim} settings)
   * @param ticker the gateway's, for durations
   * @param scheduler runs the schedule and background keep-warm rounds; owned by the caller, who
   *     shuts it down after {@link LocalPool#close()}
   * @throws IllegalArgumentException for a {@code local.kind} other than ollama or openai
   */
  public static LocalPool create(
      LocalConfig local,
      CloudConfig cloud,
      TrimSettings trim,
      Clock clock,
      Ticker ticker,
      ScheduledExecutorService scheduler,
      MeterRegistry meters,
      UpstreamHttp http) {
    List<PooledServer> servers = new ArrayList<>();
    for (LocalServerConfig server : local.serverList()) {
      LocalConfig own = local.forServer(server);
      LocalBackend backend = new LocalBackend(server.name(), server(own, cloud, clock, meters, http), own, trim, clock,
          scheduler, meters);
      servers.add(new PooledServer(backend, local.serverBreaker(), clock, ticker));
    }
    return new LocalPool(servers, local, meters).start();
  }

  /**
   * The bare server for {@code local.kind}, without schedule, making its data calls over {@code http}
   * (the data path's client).
   */
  public static LocalServer server(LocalConfig local, CloudConfig cloud, Clock clock, MeterRegistry meters,
      UpstreamHttp http) {
    return switch (local.kind()) {
      case OLLAMA -> new OllamaBackend(local, cloud, clock, meters, http);
      case OPENAI -> new OpenAiLocalBackend(local, cloud, clock, meters, http);
    };
  }
}
