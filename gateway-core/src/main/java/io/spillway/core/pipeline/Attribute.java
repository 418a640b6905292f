package io.spillway.core.pipeline;

/**
 * A typed key for per-request state that stages hand to each other. Compared by identity: declare
 * each as a {@code static final} constant.
 */
public final class Attribute<T> {
  private final String name;

  private Attribute(String name) {
    this.name = name;
  }

  public static <T> Attribute<T> of(String name) {
    return new Attribute<>(name);
  }

  @Override
  public String toString() {
    return name;
  }
}
