package io.spillway.local.pool;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Which local server serves a request, and the bookkeeping around the call.
 *
 * <p>The candidates are the ready servers (all servers when none is ready: the call then fails as
 * the one server's would); of those, the ones that have the mapped model, unless none has it (then
 * the server's own "model not found" answer, with its fix, reaches the client). They are tried in
 * this order: model loaded first, then fewest outstanding requests, ties taken in turn. A server
 * whose breaker refuses the call is skipped. A call that could not connect never reached the server
 * and goes on to the next candidate, and takes that server out at once (its breaker opens); anything
 * else is the answer. The breaker learns every outcome: timeouts, broken streams and HTTP 5xx are
 * failures; a stream's outcome is known when it ends.
 * Thread-safe.
 */
public final class ServerSelection {
  private final List<PooledServer> servers;
  private final AtomicInteger turn = new AtomicInteger();

  public ServerSelection(List<PooledServer> servers) {
    this.servers = List.copyOf(servers);
  }

  /** The servers to try for {@code localModel}, best first. */
  List<PooledServer> candidates(String localModel) {
    List<PooledServer> ready = servers.stream().filter(PooledServer::ready).toList();
    if (ready.isEmpty()) {
      ready = servers;
    }
    List<PooledServer> having = ready.stream().filter(s -> s.has(localModel)).toList();
    List<PooledServer> pool = new ArrayList<>(having.isEmpty() ? ready : having);
    // Rotate before the stable sort so equal servers take turns.
    int start = Math.floorMod(turn.getAndIncrement(), pool.size());
    java.util.Collections.rotate(pool, -start);
    pool.sort(Comparator.comparing((PooledServer s) -> !s.loaded(localModel))
        .thenComparingInt(PooledServer::outstanding));
    return pool;
  }

  /**
   * Sends {@code request} to the best server that takes it.
   *
   * @param sent told which server each attempt went to
   * @throws UpstreamException {@code CONNECT_FAILED} when no server could be reached or every
   *     breaker refused; the failure of the call otherwise
   */
  public GatewayResponse call(GatewayRequest request, String localModel, Consumer<PooledServer> sent) {
    UpstreamException lastConnectFailure = null;
    List<String> refused = new ArrayList<>();
    for (PooledServer server : candidates(localModel)) {
      if (!server.tryAcquire()) {
        refused.add(server.name());
        continue;
      }
      sent.accept(server);
      server.begin();
      long start = System.nanoTime();
      GatewayResponse response;
      try {
        response = server.backend().call(request);
      } catch (UpstreamException e) {
        server.end();
        server.failed(start, e);
        if (e.failure() == UpstreamException.Failure.CONNECT_FAILED) {
          server.takeOut();
          lastConnectFailure = e;
          continue;
        }
        throw e;
      } catch (RuntimeException e) {
        // A refusal before the call (the request does not fit, or cannot be translated): not the server's fault.
        server.end();
        server.released();
        throw e;
      }
      if (response.isStream()) {
        return response.withStream(new CountedStream(response.stream(), server, start));
      }
      server.end();
      if (response.status() >= 500) {
        server.failed(start, new ServerFailed(server.name(), response.status()));
      } else {
        server.succeeded(start);
      }
      return response;
    }
    if (lastConnectFailure != null) {
      throw lastConnectFailure;
    }
    throw new UpstreamException("local", UpstreamException.Failure.CONNECT_FAILED,
        "No local server takes requests now: the breaker of every ready server is open (" + String.join(", ", refused)
            + ")", null);
  }

  /** What the breaker records for an HTTP 5xx answer. */
  static final class ServerFailed extends RuntimeException {
    ServerFailed(String server, int status) {
      super("local server " + server + " answered HTTP " + status, null, false, false);
    }
  }
}
