package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.pipeline.Tier;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Shaping's pressure rule: the cloud is degraded only while every cloud route is. */
class PressureSignalsTest {
  @Test
  void theCloudIsDegradedOnlyWhileEveryRouteIs() {
    AtomicBoolean first = new AtomicBoolean(true);
    AtomicBoolean second = new AtomicBoolean(false);
    PressureSignals pressure = PressureSignals.of(List.<BooleanSupplier>of(first::get, second::get), tier -> false);

    assertThat(pressure.cloudDegraded()).as("one route still takes traffic").isFalse();
    second.set(true);
    assertThat(pressure.cloudDegraded()).as("no route takes traffic").isTrue();
    first.set(false);
    assertThat(pressure.cloudDegraded()).isFalse();
  }

  @Test
  void eachTiersPoolIsAskedAboutItself() {
    PressureSignals pressure = PressureSignals.of(List.<BooleanSupplier>of(() -> false), tier -> tier == Tier.BRONZE);

    assertThat(pressure.poolPastSoftBand(Tier.GOLD)).isFalse();
    assertThat(pressure.poolPastSoftBand(Tier.SILVER)).isFalse();
    assertThat(pressure.poolPastSoftBand(Tier.BRONZE)).isTrue();
  }

  @Test
  void aGatewayWithoutACloudRouteIsAMistake() {
    assertThatThrownBy(() -> PressureSignals.of(List.of(), tier -> false)).isInstanceOf(IllegalArgumentException.class);
  }
}
