package io.spillway.config;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The problems found while a config is bound, each naming its key path. Record constructors report
 * into it through {@link #at(String)}: while {@link ConfigLoader} binds YAML, the reporter's path is
 * where the record sits in the file ({@code quota.tiers.gold}) and every problem is collected, so
 * {@code check-config} lists them all at once; a record built in code outside binding throws
 * {@link ConfigException} on its first problem instead, as a builder would.
 *
 * <p>The binding in progress is kept per thread only for the length of {@link #collect}; the loader's
 * Jackson binder sets the path of each record it is about to build (see {@link BindingPaths}).
 */
public final class ConfigProblems {
  private static final ThreadLocal<ConfigProblems> BINDING = new ThreadLocal<>();

  private final List<String> problems = new ArrayList<>();
  private String path = "";

  private ConfigProblems() {}

  /** Runs {@code binding} collecting the problems its constructors report; returns both. */
  static <T, E extends Exception> Bound<T> collect(Binding<T, E> binding) throws E {
    ConfigProblems outer = BINDING.get();
    ConfigProblems problems = new ConfigProblems();
    BINDING.set(problems);
    try {
      return new Bound<>(binding.bind(), List.copyOf(problems.problems));
    } finally {
      if (outer == null) {
        BINDING.remove();
      } else {
        BINDING.set(outer);
      }
    }
  }

  /** A bound value and the problems found on the way. */
  record Bound<T>(T value, List<String> problems) {}

  /** Runs {@code body} with the current path set to {@code here} (called by the binder). */
  static <T, E extends Exception> T within(String here, Binding<T, E> body) throws E {
    ConfigProblems problems = BINDING.get();
    if (problems == null) {
      return body.bind();
    }
    String outer = problems.path;
    problems.path = here;
    try {
      return body.bind();
    } finally {
      problems.path = outer;
    }
  }

  /** One step of binding that may throw what Jackson throws. */
  interface Binding<T, E extends Exception> {
    T bind() throws E;
  }

  /**
   * A reporter for the record being built. {@code section} is where the record sits when it is built
   * outside binding (in code): it only names the key in the exception.
   */
  public static Reporter at(String section) {
    ConfigProblems problems = BINDING.get();
    return problems == null ? new Reporter(null, section) : new Reporter(problems, problems.path);
  }

  /** Reports problems of one record under its path. */
  public static final class Reporter {
    private final ConfigProblems problems;
    private final String base;

    private Reporter(ConfigProblems problems, String base) {
      this.problems = problems;
      this.base = base;
    }

    /** The full path of {@code key} below this record ({@code ""}: the record itself). */
    public String path(String key) {
      if (key.isEmpty()) {
        return base;
      }
      if (base.isEmpty()) {
        return key;
      }
      return key.startsWith("[") ? base + key : base + "." + key;
    }

    /** A reporter for the entry {@code key} below this record (a map entry or list element). */
    public Reporter below(String key) {
      return new Reporter(problems, path(key));
    }

    /** Reports {@code key 'path': message}. */
    public void problem(String key, String message) {
      raw("key '" + path(key) + "': " + message);
    }

    /** Reports a message written out whole (it names its keys itself). */
    public void raw(String message) {
      if (problems == null) {
        throw new ConfigException(message);
      }
      problems.problems.add(message);
    }

    public void atLeast(String key, long value, long min) {
      if (value < min) {
        problem(key, "must be at least " + min);
      }
    }

    /** An optional limit: null means none, else at least 1. */
    public void limit(String key, Integer value) {
      if (value != null && value < 1) {
        problem(key, "must be at least 1 (leave it out for no limit)");
      }
    }

    public void between(String key, double value, double min, double max) {
      if (!(value >= min && value <= max)) {
        problem(key, "must be between " + min + " and " + max);
      }
    }

    /** {@code value} must be longer than zero; {@code message} says so in the section's own words. */
    public void positive(String key, Duration value, String message) {
      if (value.isZero() || value.isNegative()) {
        problem(key, message);
      }
    }

    /** An http(s) URL with a host. */
    public void url(String key, String url) {
      try {
        URI uri = URI.create(url);
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
          problem(key, "'" + url + "' is not an http(s) URL");
        }
      } catch (IllegalArgumentException e) {
        problem(key, "'" + url + "' is not a URL");
      }
    }
  }
}
