package io.spillway.local;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.local.pool.PooledServer;
import io.spillway.local.pool.ServerSelection;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local backend as the router sees it: one or more local servers ({@code local.servers}, or the
 * one-server shorthand {@code local.baseUrl}), each a {@link LocalBackend} with its own readiness,
 * keep-warm and learned context windows, and its own failure-rate breaker.
 *
 * <p>Each request goes to one server, chosen by {@link ServerSelection}: among the ready servers
 * that have the mapped model, those with it loaded first, then the one with the fewest outstanding
 * requests. A server whose breaker is open gets no new requests; once {@code local.serverBreaker.waitInOpen}
 * has passed, {@code halfOpenCalls} requests try it. A request that could not connect to its server
 * never reached it, so it goes on to the next server; any other failure is the request's answer.
 * Streams stay on the server they began on. When no server can take a request, it fails as the
 * single local server's did (a connect failure), and the router decides as before.
 *
 * <p>Thread-safe.
 */
public final class LocalPool implements Backend, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalPool.class);

  private final List<PooledServer> servers;
  private final ModelMapping models;
  private final ServerSelection selection;
  private final Map<String, Counter> calls = new ConcurrentHashMap<>();
  private final MeterRegistry meters;

  LocalPool(List<PooledServer> servers, LocalConfig config, MeterRegistry meters) {
    this.servers = List.copyOf(servers);
    if (this.servers.isEmpty()) {
      throw new IllegalArgumentException("a local pool needs at least one server");
    }
    this.models = new ModelMapping(config);
    this.selection = new ServerSelection(this.servers);
    this.meters = meters;
    for (PooledServer server : this.servers) {
      Gauge.builder("spillway.local.server.outstanding", server, PooledServer::outstanding)
          .tag("server", server.name()).description("requests a local server is serving now, streams included")
          .register(meters);
      Gauge.builder("spillway.local.server.breaker", server, PooledServer::breakerLevel)
          .tag("server", server.name()).description("a local server's breaker: 0 closed, 1 half-open, 2 open")
          .register(meters);
      Gauge.builder("spillway.local.server.loaded.models", server, s -> s.backend().readiness().loaded().size())
          .tag("server", server.name()).description("mapped models a local server has loaded").register(meters);
    }
  }

  /** Starts every server's readiness and keep-warm schedule. */
  LocalPool start() {
    servers.forEach(server -> server.backend().start());
    return this;
  }

  @Override
  public BackendKind kind() {
    return BackendKind.LOCAL;
  }

  /** The answer of the server {@link ServerSelection} picks, through that server's own {@code callAsync}. */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    try {
      return selection.callAsync(request, models.map(request.model()), this::counted);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void counted(PooledServer server) {
    calls.computeIfAbsent(server.name(), name -> Counter.builder("spillway.local.server.calls").tag("server", name)
        .description("requests sent to a local server").register(meters)).increment();
  }

  /** Whether at least one server is ready. */
  @Override
  public boolean ready() {
    return servers.stream().anyMatch(s -> s.backend().ready());
  }

  @Override
  public void warmUp() {
    servers.forEach(server -> server.backend().warmUp());
  }

  /** The servers, in configured order. */
  public List<PooledServer> servers() {
    return servers;
  }

  /** The server named {@code name}; throws when there is none. */
  public LocalBackend server(String name) {
    return servers.stream().filter(s -> s.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no local server named " + name)).backend();
  }

  /** The mapping of requested to local models every server serves with. */
  public ModelMapping models() {
    return models;
  }

  /** Probes every server now (blocking) and returns the pool's snapshot. */
  public LocalReadiness checkNow() {
    servers.forEach(server -> server.backend().checkNow());
    return readiness();
  }

  /**
   * The pool as one snapshot: with one server, that server's; with several, reachable when any
   * is, missing a model when every reachable server lacks it (so {@link LocalReadiness#ready()} is
   * true when any server is ready), each problem prefixed with its server's name.
   */
  public LocalReadiness readiness() {
    if (servers.size() == 1) {
      return servers.get(0).backend().readiness();
    }
    List<LocalReadiness> all = servers.stream().map(s -> s.backend().readiness()).toList();
    List<LocalReadiness> reachable = all.stream().filter(LocalReadiness::reachable).toList();
    List<LocalReadiness.MissingModel> missing = new ArrayList<>();
    if (!reachable.isEmpty()) {
      for (LocalReadiness.MissingModel m : reachable.get(0).missing()) {
        if (reachable.stream().allMatch(r -> !r.has(m.model()) )) {
          missing.add(m);
        }
      }
    }
    List<String> problems = new ArrayList<>();
    List<String> loaded = new ArrayList<>();
    List<String> warmErrors = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      String name = servers.get(i).name();
      all.get(i).problems().forEach(p -> problems.add("server " + name + ": " + p));
      all.get(i).loaded().stream().filter(m -> !loaded.contains(m)).forEach(loaded::add);
      if (all.get(i).warmError() != null) {
        warmErrors.add("server " + name + ": " + all.get(i).warmError());
      }
    }
    String kind = all.stream().map(LocalReadiness::kind).distinct().count() == 1 ? all.get(0).kind() : "mixed";
    String version = all.stream().map(LocalReadiness::version).distinct().count() == 1 ? all.get(0).version() : null;
    boolean checked = all.stream().allMatch(LocalReadiness::checked);
    Instant checkedAt = checked ? all.stream().map(LocalReadiness::checkedAt).min(Comparator.naturalOrder()).orElse(null)
        : null;
    Instant lastWarm = all.stream().map(LocalReadiness::lastWarmAt).filter(Objects::nonNull)
        .max(Comparator.naturalOrder()).orElse(null);
    return new LocalReadiness(kind, null, !reachable.isEmpty(), version, all.get(0).models(), missing, problems,
        checkedAt, all.stream().anyMatch(LocalReadiness::keepWarm), lastWarm,
        warmErrors.isEmpty() ? null : String.join("; ", warmErrors), loaded);
  }

  /**
   * The pool as {@code /admin/status} and {@code /readyz} show it: the pool's snapshot, and under
   * {@code servers} each server's, with its name, breaker state and outstanding requests. Addresses
   * only with {@code withAddress} ({@code /readyz} needs no token).
   */
  public ObjectNode toJson(boolean withAddress) {
    ObjectNode out = readiness().toJson(withAddress && servers.size() == 1);
    ArrayNode list = out.putArray("servers");
    servers.forEach(server -> list.add(server.toJson(withAddress)));
    return out;
  }

  /** Stops every server's schedule; the scheduler itself belongs to the caller. */
  @Override
  public void close() {
    for (PooledServer server : servers) {
      try {
        server.backend().close();
      } catch (RuntimeException e) {
        log.debug("closing local server {} failed", server.name(), e);
      }
    }
  }
}
