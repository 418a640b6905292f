package io.spillway.local.pool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.spillway.core.config.LocalServerBreakerConfig;
import io.spillway.local.LocalBackend;
import java.time.Clock;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One server of the local pool: its {@link LocalBackend} (readiness, keep-warm, context windows),
 * its failure-rate breaker, and how many requests it is serving now (streams count until they end).
 * Thread-safe.
 */
public final class PooledServer {
  private final LocalBackend backend;
  private final CircuitBreaker breaker;
  private final AtomicInteger outstanding = new AtomicInteger();

  public PooledServer(LocalBackend backend, LocalServerBreakerConfig breakerConfig, Clock clock) {
    this.backend = backend;
    this.breaker = ServerBreakers.create(backend.serverName(), breakerConfig, clock);
  }

  public String name() {
    return backend.serverName();
  }

  public LocalBackend backend() {
    return backend;
  }

  /** Requests sent to this server that have not ended yet. */
  public int outstanding() {
    return outstanding.get();
  }

  /** {@code closed}, {@code open} or {@code half_open}. */
  public String breakerState() {
    return breaker.getState().name().toLowerCase(Locale.ROOT);
  }

  /** For the gauge: 0 closed, 1 half-open, 2 open (and the other Resilience4j states). */
  public int breakerLevel() {
    return switch (breaker.getState()) {
      case CLOSED -> 0;
      case HALF_OPEN -> 1;
      default -> 2;
    };
  }

  boolean ready() {
    return backend.ready();
  }

  boolean has(String localModel) {
    return backend.readiness().has(localModel);
  }

  boolean loaded(String localModel) {
    return backend.readiness().loaded().contains(localModel);
  }

  /** Asks the breaker for a call; true means the caller must report the outcome. */
  boolean tryAcquire() {
    return breaker.tryAcquirePermission();
  }

  void begin() {
    outstanding.incrementAndGet();
  }

  void end() {
    outstanding.decrementAndGet();
  }

  void succeeded(long startNanos) {
    breaker.onSuccess(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
  }

  void failed(long startNanos, Throwable cause) {
    breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS, cause);
  }

  /** The server as {@code /admin/status} and {@code /readyz} show it. */
  public ObjectNode toJson(boolean withAddress) {
    ObjectNode out = backend.readiness().toJson(withAddress);
    ObjectNode named = out.objectNode().put("name", name());
    named.setAll(out);
    named.put("breaker", breakerState());
    named.put("outstanding", outstanding());
    return named;
  }
}
