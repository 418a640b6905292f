package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The failover section: defaults from DESIGN.md, and contradictions refused with the key named. */
class FailoverConfigTest {
  final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void defaultsAreThreeCapacityAnswersAndFiveMinutesLocal() {
    FailoverConfig failover = loader.parse("test", "cloud:\n  baseUrl: https://api.openai.com/v1\n").failover();

    assertThat(failover.capacityStreak()).isEqualTo(3);
    assertThat(failover.localFor()).isEqualTo(Duration.ofMinutes(5));
    assertThat(failover.maxLocalFor()).isEqualTo(Duration.ofHours(1));
    assertThat(failover.retryLocally()).isTrue();
    assertThat(failover.historySize()).isEqualTo(50);
    assertThat(failover.fleetTimeout()).isEqualTo(Duration.ofMillis(200));
    assertThat(failover.fleetRefresh()).isEqualTo(Duration.ofMillis(500));
    assertThat(failover.probeLease()).isEqualTo(Duration.ofMinutes(3));
  }

  @Test
  void contractKeysAreReadAsWritten() {
    FailoverConfig failover = loader.parse("test", "failover:\n  capacityStreak: 5\n  localFor: 90s\n").failover();

    assertThat(failover.capacityStreak()).isEqualTo(5);
    assertThat(failover.localFor()).isEqualTo(Duration.ofSeconds(90));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{capacityStreak: 0}|failover.capacityStreak",
      "{localFor: 0s}|failover.localFor",
      "{localFor: 10m, maxLocalFor: 5m}|failover.maxLocalFor",
      "{historySize: 0}|failover.historySize",
      "{fleetTimeout: 0s}|failover.fleetTimeout",
      "{fleetRefresh: 0s}|failover.fleetRefresh",
      "{probeLease: 0s}|failover.probeLease"})
  void contradictionsAreRefusedNamingTheKey(String failover, String key) {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "failover: " + failover + "\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.yaml")
        .hasMessageContaining("'" + key + "'");
  }
}
