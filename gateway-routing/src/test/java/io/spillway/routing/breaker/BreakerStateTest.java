package io.spillway.routing.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which states keep traffic off a route: what shaping's pressure rule reads from each breaker. */
class BreakerStateTest {
  @Test
  void openHalfOpenAndForcedOpenAreDegradedClosedAndForcedClosedAreNot() {
    assertThat(Breaker.State.OPEN.degraded()).isTrue();
    assertThat(Breaker.State.HALF_OPEN.degraded()).isTrue();
    assertThat(Breaker.State.FORCED_OPEN.degraded()).isTrue();
    assertThat(Breaker.State.CLOSED.degraded()).isFalse();
    assertThat(Breaker.State.FORCED_CLOSED.degraded()).isFalse();
  }
}
