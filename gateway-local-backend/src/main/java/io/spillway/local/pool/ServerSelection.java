package io.spillway.local.pool;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

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
   * Sends {@code request} to the best server that takes it, without blocking: each server is
   * called through its own {@link io.spillway.core.pipeline.Backend#callAsync}, and the next one is
   * tried when the answer says the last could not be reached.
   *
   * @param sent told which server each attempt went to
   * @return the answer; it fails with {@link UpstreamException} {@code CONNECT_FAILED} when no
   *     server could be reached or every breaker refused, with the failure of the call otherwise
   */
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request, String localModel, Consumer<PooledServer> sent) {
    return next(request, candidates(localModel).iterator(), sent, null, new ArrayList<>());
  }

  private CompletionStage<GatewayResponse> next(GatewayRequest request, Iterator<PooledServer> servers,
      Consumer<PooledServer> sent, UpstreamException lastConnectFailure, List<String> refused) {
    while (servers.hasNext()) {
      PooledServer server = servers.next();
      if (!server.tryAcquire()) {
        refused.add(server.name());
        continue;
      }
      sent.accept(server);
      long start = server.begin();
      CompletionStage<GatewayResponse> answer;
      try {
        answer = server.backend().callAsync(request);
      } catch (RuntimeException e) {
        answer = CompletableFuture.failedFuture(e);
      }
      return answer.handle((response, failure) -> {
        if (failure == null) {
          return CompletableFuture.completedFuture(answered(server, start, response));
        }
        server.end();
        if (Blocking.cause(failure) instanceof UpstreamException e) {
          server.failed(start, e);
          if (e.failure() == UpstreamException.Failure.CONNECT_FAILED) {
            server.takeOut();
            return next(request, servers, sent, e, refused);
          }
          return CompletableFuture.<GatewayResponse>failedFuture(e);
        }
        // A refusal before the call (the request does not fit, or cannot be translated): not the server's fault.
        server.released();
        return CompletableFuture.<GatewayResponse>failedFuture(Blocking.cause(failure));
      }).thenCompose(Function.identity());
    }
    if (lastConnectFailure != null) {
      return CompletableFuture.failedFuture(lastConnectFailure);
    }
    return CompletableFuture.failedFuture(new UpstreamException("local", UpstreamException.Failure.CONNECT_FAILED,
        "No local server takes requests now: the breaker of every ready server is open (" + String.join(", ", refused)
            + ")", null));
  }

  private static GatewayResponse answered(PooledServer server, long start, GatewayResponse response) {
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

  /** What the breaker records for an HTTP 5xx answer. */
  static final class ServerFailed extends RuntimeException {
    ServerFailed(String server, int status) {
      super("local server " + server + " answered HTTP " + status, null, false, false);
    }
  }
}
