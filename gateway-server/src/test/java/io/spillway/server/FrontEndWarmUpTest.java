package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FrontEndWarmUpTest {
  @Test
  void theWarmUpDecodesARequestAndEncodesAnAnswerInMemory() {
    assertThat(FrontEndWarmUp.run()).isEqualTo("HTTP/1.1 200 OK");
  }
}
