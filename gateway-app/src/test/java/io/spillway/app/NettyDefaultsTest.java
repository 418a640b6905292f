package io.spillway.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NettyDefaultsTest {
  private final String before = System.getProperty(NettyDefaults.JFR);

  @AfterEach
  void restore() {
    if (before == null) {
      System.clearProperty(NettyDefaults.JFR);
    } else {
      System.setProperty(NettyDefaults.JFR, before);
    }
  }

  @Test
  void nettyAllocatorJfrEventsAreOffUnlessTheCommandLineAsks() {
    System.clearProperty(NettyDefaults.JFR);
    NettyDefaults.apply();
    assertThat(System.getProperty(NettyDefaults.JFR)).isEqualTo("false");

    System.setProperty(NettyDefaults.JFR, "true");
    NettyDefaults.apply();
    assertThat(System.getProperty(NettyDefaults.JFR)).isEqualTo("true");
  }
}
