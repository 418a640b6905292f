package io.spillway.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ViaTest {
  @Test
  void countsSpillwayEntriesAcrossFieldLinesWhateverTheirVersionCaseOrComment() {
    Headers headers = Headers.builder()
        .add("Via", "1.1 edge, 1.1 spillway")
        .add("via", "HTTP/2 Spillway (Spillway/0.1),1.0 squid")
        .build();

    assertThat(Via.spillwayHops(headers)).isEqualTo(2);
  }

  @Test
  void otherProxiesAndMalformedEntriesAreNotCounted() {
    assertThat(Via.spillwayHops(Headers.of("Via", "1.1 spillway-edge, spillway, 1.1 notspillway"))).isZero();
    assertThat(Via.spillwayHops(Headers.EMPTY)).isZero();
  }

  @Test
  void forwardingAppendsSpillwaysEntryAfterThoseTheRequestCameWith() {
    assertThat(Via.forwarded(Headers.EMPTY)).isEqualTo("1.1 spillway");
    assertThat(Via.forwarded(Headers.builder().add("Via", "1.1 a").add("Via", " 1.1 b ").build()))
        .isEqualTo("1.1 a, 1.1 b, 1.1 spillway");
  }

  @Test
  void aValueThatIsNotVisibleAsciiIsNotCarriedOn() {
    assertThat(Via.forwarded(Headers.of("Via", "1.1 caf\u00e9"))).isEqualTo("1.1 spillway");
  }
}
