package io.spillway.core;

/** The running Spillway version, from the jar manifest when there is one. */
public final class Version {
  public static final String VERSION = version();
  public static final String USER_AGENT = "spillway/" + VERSION;

  private Version() {}

  private static String version() {
    String fromJar = Version.class.getPackage().getImplementationVersion();
    return fromJar != null ? fromJar : "0.1.0";
  }
}
