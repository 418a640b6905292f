package io.spillway.local.pool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.spillway.config.LocalServerBreakerConfig;
import io.spillway.local.LocalBackend;
import java.time.Clock;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One server of the local pool: its {@link LocalBackend} (readiness, keep-warm, context windows),
 * its failure-rate breaker, and how many requests it is serving now (streams count until they end).
 * Thread-safe.
 */
public final class PooledServer {
  private static final Logger log = LoggerFactory.getLogger(PooledServer.class);

  private final LocalBackend backend;
  private final CircuitBreaker breaker;
  private final AtomicInteger outstanding = new AtomicInteger();

  public PooledServer(LocalBackend backend, LocalServerBreakerConfig breakerConfig, Clock clock) {
    this.backend = backend;
    this.breaker = ServerBreakers.create(backend.serverName(), breakerConfig, clock);
    breaker.getEventPublisher().onStateTransition(event -> {
      switch (event.getStateTransition().getToState()) {
        case OPEN -> log.warn("local server {} taken out of the selection (breaker open): {}", name(),
            breaker.getMetrics().getFailureRate() >= 0
                ? breaker.getMetrics().getFailureRate() + "% of its latest calls failed" : "it refused a connection");
        case HALF_OPEN -> log.info("local server {}: trying it again (breaker half-open)", name());
        case CLOSED -> log.info("local server {} is back in the selection (breaker closed)", name());
        default -> log.info("local server {}: breaker {}", name(), event.getStateTransition());
      }
    });
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

  /**
   * Takes the server out at once: it refused a connection, so it is down, not merely failing some
   * calls. It gets requests again through half-open trial calls once the wait in open has passed.
   */
  void takeOut() {
    if (breaker.getState() != CircuitBreaker.State.OPEN) {
      breaker.transitionToOpenState();
    }
  }

  /** The call was refused before it was sent: the breaker learns nothing from it. */
  void released() {
    breaker.releasePermission();
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
