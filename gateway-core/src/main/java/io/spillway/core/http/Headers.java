package io.spillway.core.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * An immutable, ordered list of HTTP header fields with case-insensitive lookup.
 *
 * <p>Pipeline stages see headers only through this type, never through Netty's. Names are kept as
 * given; lookups ignore case. Instances are safe to share between threads.
 */
public final class Headers {
  public static final Headers EMPTY = new Headers(List.of());

  private final List<String> namesAndValues;

  private Headers(List<String> namesAndValues) {
    this.namesAndValues = namesAndValues;
  }

  public static Headers of(String... namesAndValues) {
    if (namesAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("expected name/value pairs");
    }
    Builder builder = builder();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      builder.add(namesAndValues[i], namesAndValues[i + 1]);
    }
    return builder.build();
  }

  public static Headers fromMap(Map<String, String> map) {
    Builder builder = builder();
    map.forEach(builder::add);
    return builder.build();
  }

  /** The first value of {@code name}, or null. */
  public String get(String name) {
    for (int i = 0; i < namesAndValues.size(); i += 2) {
      if (namesAndValues.get(i).equalsIgnoreCase(name)) {
        return namesAndValues.get(i + 1);
      }
    }
    return null;
  }

  public List<String> values(String name) {
    List<String> result = new ArrayList<>(2);
    for (int i = 0; i < namesAndValues.size(); i += 2) {
      if (namesAndValues.get(i).equalsIgnoreCase(name)) {
        result.add(namesAndValues.get(i + 1));
      }
    }
    return Collections.unmodifiableList(result);
  }

  public boolean contains(String name) {
    return get(name) != null;
  }

  public int size() {
    return namesAndValues.size() / 2;
  }

  public String name(int index) {
    return namesAndValues.get(index * 2);
  }

  public String value(int index) {
    return namesAndValues.get(index * 2 + 1);
  }

  public void forEach(BiConsumer<String, String> action) {
    for (int i = 0; i < namesAndValues.size(); i += 2) {
      action.accept(namesAndValues.get(i), namesAndValues.get(i + 1));
    }
  }

  /** A copy in which {@code name} has exactly one value. */
  public Headers with(String name, String value) {
    return toBuilder().set(name, value).build();
  }

  public Headers without(String name) {
    return toBuilder().remove(name).build();
  }

  public Builder toBuilder() {
    Builder builder = new Builder();
    builder.namesAndValues.addAll(namesAndValues);
    return builder;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder("Headers{");
    for (int i = 0; i < namesAndValues.size(); i += 2) {
      String name = namesAndValues.get(i);
      String lower = name.toLowerCase(Locale.ROOT);
      boolean secret = lower.equals("authorization") || lower.contains("api-key") || lower.contains("token");
      out.append(name).append('=').append(secret ? "██" : namesAndValues.get(i + 1));
      if (i + 2 < namesAndValues.size()) {
        out.append(", ");
      }
    }
    return out.append('}').toString();
  }

  /** Builds {@link Headers}; rejects CR, LF and NUL in names and values so nothing can be injected. */
  public static final class Builder {
    private final List<String> namesAndValues = new ArrayList<>();

    public Builder add(String name, String value) {
      checkName(name);
      checkValue(name, value);
      namesAndValues.add(name);
      namesAndValues.add(value);
      return this;
    }

    public Builder set(String name, String value) {
      remove(name);
      return add(name, value);
    }

    public Builder remove(String name) {
      for (int i = namesAndValues.size() - 2; i >= 0; i -= 2) {
        if (namesAndValues.get(i).equalsIgnoreCase(name)) {
          namesAndValues.remove(i + 1);
          namesAndValues.remove(i);
        }
      }
      return this;
    }

    public Headers build() {
      return namesAndValues.isEmpty() ? EMPTY : new Headers(List.copyOf(namesAndValues));
    }

    private static void checkName(String name) {
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException("header name is empty");
      }
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c <= ' ' || c >= 0x7f || c == ':') {
          throw new IllegalArgumentException("invalid character in header name");
        }
      }
    }

    private static void checkValue(String name, String value) {
      if (value == null) {
        throw new IllegalArgumentException("header " + name + " has no value");
      }
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c == '\r' || c == '\n' || c == 0) {
          throw new IllegalArgumentException("invalid character in value of header " + name);
        }
      }
    }
  }
}
