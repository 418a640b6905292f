package io.spillway.quota.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ResetFormatTest {
  @ParameterizedTest(name = "{0} is written {1}")
  @CsvSource({
      "PT0S, 0s",
      "PT0.0004S, 1ms",
      "PT0.25S, 250ms",
      "PT1S, 1s",
      "PT1.2S, 1.2s",
      "PT17.28S, 17.28s",
      "PT59.999S, 59.999s",
      "PT6M, 6m0s",
      "PT6M30.5S, 6m30.5s",
      "PT1H, 1h0m0s",
      "PT1H2M3S, 1h2m3s",
      "PT26H, 26h0m0s",
  })
  void resetIsWrittenLikeOpenAi(Duration duration, String expected) {
    assertThat(ResetFormat.format(duration)).isEqualTo(expected);
  }
}
