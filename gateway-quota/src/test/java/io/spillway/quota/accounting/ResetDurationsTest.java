package io.spillway.quota.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ResetDurationsTest {
  @ParameterizedTest
  @CsvSource({
      "PT0.02S, 20ms",
      "PT6S, 6s",
      "PT6M, 6m0s",
      "PT1H2M3S, 1h2m3s",
      "P20DT14H, 494h0m0s",
      "PT0S, 0s"
  })
  void formatsLikeOpenAisRateLimitHeaders(Duration duration, String expected) {
    assertThat(ResetDurations.format(duration)).isEqualTo(expected);
  }
}
