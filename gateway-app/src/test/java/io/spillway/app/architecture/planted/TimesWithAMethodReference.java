package io.spillway.app.architecture.planted;

import java.util.function.LongSupplier;

/** Planted for ArchitectureRulesTest: reads the JVM's clock through a method reference, as StartupWarmer once did. */
public final class TimesWithAMethodReference {
  public static final LongSupplier CLOCK = System::nanoTime;

  private TimesWithAMethodReference() {}
}
