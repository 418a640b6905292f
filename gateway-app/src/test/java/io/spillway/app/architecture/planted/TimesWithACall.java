package io.spillway.app.architecture.planted;

/** Planted for ArchitectureRulesTest: reads the wall clock with a plain call. */
public final class TimesWithACall {
  private TimesWithACall() {}

  public static long now() {
    return System.currentTimeMillis();
  }
}
