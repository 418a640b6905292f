package io.spillway.app;

/**
 * Netty settings whose library default costs start-up and that {@code spillway.jar} changes unless
 * the command line sets them ({@code -Dname=value} wins).
 *
 * <p>{@code io.netty.jfr.enabled=false}: Netty 4.2's buffer allocator registers JDK Flight Recorder
 * event types when it allocates its first chunk, which is on the event loop, for the first request:
 * loading JFR's metadata there cost the first answer about a tenth of a second. Spillway emits no
 * JFR events of its own and JFR recordings work as before (the JVM's own events); only Netty's
 * allocator events are off. {@code -Dio.netty.jfr.enabled=true} brings them back.
 */
final class NettyDefaults {
  static final String JFR = "io.netty.jfr.enabled";

  private NettyDefaults() {}

  static void apply() {
    if (System.getProperty(JFR) == null) {
      System.setProperty(JFR, "false");
    }
  }
}
