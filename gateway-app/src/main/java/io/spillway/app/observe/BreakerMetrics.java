package io.spillway.app.observe;

import io.spillway.core.fleet.FleetMode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.Breaker.State;
import io.spillway.routing.breaker.BreakerListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The breakers' meters, bound from outside: gauges that read a breaker when scraped, and a counter
 * fed by its {@link BreakerListener} events. The breaker itself knows no meter.
 *
 * <ul>
 *   <li>{@code spillway_breaker_state{route}}: 0 closed (cloud), 1 half-open (probing), 2 open (local),
 *       forced states counted as what routing does;
 *   <li>{@code spillway_breaker_override{route}}: 0 while the breaker decides by itself, 1 while an
 *       operator holds it open (everything local), 2 while one holds it closed (everything to the cloud);
 *   <li>{@code spillway_breaker_capacity_streak{route}}: consecutive capacity answers while closed;
 *   <li>{@code spillway_breaker_mode{mode}}: 1 for the mode in force ({@code local}; or {@code fleet}
 *       and {@code local-fallback} for the fleet's breaker, one of them 1);
 *   <li>{@code spillway_breaker_transitions_total{from,to,route}}: each transition as the breaker
 *       tells it (a fleet replica counts each change of the shared breaker it sees).
 * </ul>
 */
public final class BreakerMetrics implements BreakerListener {
  private final MeterRegistry meters;
  private final Map<List<State>, Counter> transitions = new ConcurrentHashMap<>();

  private BreakerMetrics(MeterRegistry meters) {
    this.meters = meters;
  }

  /** Registers {@code breaker}'s gauges in {@code meters} and counts its transitions there from now on. */
  public static void bind(Breaker breaker, MeterRegistry meters) {
    if (breaker.mode() == FleetMode.REPLICA) {
      Gauge.builder("spillway.breaker.mode", () -> 1)
          .description("Who decides the breaker: 1 for the mode in force (local, fleet, local-fallback)")
          .tag("mode", FleetMode.REPLICA.tag())
          .register(meters);
    }
    Gauge.builder("spillway.breaker.state", breaker, b -> stateValue(b.state()))
        .description("Breaker state per cloud route: 0 closed (cloud), 1 half-open (probing), 2 open (local)")
        .tag("route", breaker.route())
        .register(meters);
    Gauge.builder("spillway.breaker.override", breaker, b -> overrideValue(b.state()))
        .description("The operator's override per cloud route: 0 none (auto), 1 forced open (local), 2 forced closed (cloud)")
        .tag("route", breaker.route())
        .register(meters);
    Gauge.builder("spillway.breaker.capacity.streak", breaker, Breaker::streak)
        .description("Consecutive capacity answers while closed (the breaker opens at failover.capacityStreak)")
        .tag("route", breaker.route())
        .register(meters);
    if (breaker.mode() != FleetMode.REPLICA) {
      for (FleetMode mode : List.of(FleetMode.FLEET, FleetMode.REPLICA_FALLBACK)) {
        Gauge.builder("spillway.breaker.mode", breaker, b -> b.mode() == mode ? 1 : 0)
            .description("Who decides the breaker: 1 for the mode in force (local, fleet, local-fallback)")
            .tag("mode", mode.tag())
            .register(meters);
      }
    }
    breaker.addListener(new BreakerMetrics(meters));
  }

  /** The value of the {@code spillway_breaker_state} gauge: 0 closed, 1 half-open, 2 open. */
  static int stateValue(State state) {
    return switch (state.effective()) {
      case CLOSED -> 0;
      case HALF_OPEN -> 1;
      default -> 2;
    };
  }

  /** The value of the {@code spillway_breaker_override} gauge: 0 auto, 1 forced open, 2 forced closed. */
  static int overrideValue(State state) {
    return switch (state) {
      case FORCED_OPEN -> 1;
      case FORCED_CLOSED -> 2;
      default -> 0;
    };
  }

  @Override
  public void onTransition(String route, State from, State to, String reason) {
    // One listener per breaker, so the route is always the same one.
    transitions.computeIfAbsent(List.of(from, to), key -> Counter.builder("spillway.breaker.transitions")
            .description("Breaker transitions")
            .tags("from", from.tag(), "to", to.tag(), "route", route)
            .register(meters))
        .increment();
  }
}
