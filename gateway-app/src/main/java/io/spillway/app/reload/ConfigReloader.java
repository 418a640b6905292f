package io.spillway.app.reload;

import io.spillway.core.config.ConfigException;
import io.spillway.core.config.GatewayConfig;
import io.spillway.core.config.Reloadable;
import io.spillway.quota.keys.KeyHashes;
import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-reads the config file and hands the new config to every registered {@link Reloadable} (keys
 * first, then limits, shaping, logging, in registration order). An unreadable or invalid file is
 * rejected with one clear log line and changes nothing. Requests in flight and open connections are
 * not touched: each component swaps its state atomically.
 *
 * <p>Each reloadable is registered with the config sections it applies ({@code keys},
 * {@code quota}, ...). A changed section that no registered component applies ({@code server},
 * {@code cloud}, ...) is reported as needing a restart. Reloads are serialized. Thread-safe.
 */
public final class ConfigReloader {
  private static final Logger log = LoggerFactory.getLogger(ConfigReloader.class);

  private final Path file;
  private final Function<Path, GatewayConfig> loader;
  private final List<Registration> reloadables = new CopyOnWriteArrayList<>();
  private volatile GatewayConfig current;

  /**
   * @param file the config file to read again; null when the gateway was started from a config in
   *     memory, and then every reload is refused
   * @param loader reads and validates a file, throwing {@link ConfigException} with a precise message
   */
  public ConfigReloader(Path file, Function<Path, GatewayConfig> loader, GatewayConfig initial) {
    this.file = file;
    this.loader = loader;
    this.current = withoutPlainKeys(initial);
  }

  private record Registration(Reloadable reloadable, Set<String> sections) {}

  /**
   * Adds a component that applies the named top-level sections of a new config (e.g.
   * {@code "quota"}); components are called in registration order.
   */
  public void register(Reloadable reloadable, String... sections) {
    Set<String> names = Set.of(sections);
    for (String name : names) {
      if (!SECTIONS.contains(name)) {
        throw new IllegalArgumentException("'" + name + "' is not a config section (" + SECTIONS + ")");
      }
    }
    reloadables.add(new Registration(Objects.requireNonNull(reloadable), names));
  }

  /** The running config, keys as hashes only: a plain key is not kept past the registry build. */
  private static GatewayConfig withoutPlainKeys(GatewayConfig config) {
    return config.withKeys(config.keys().stream().map(KeyHashes::hashed).toList());
  }

  public GatewayConfig current() {
    return current;
  }

  /** The outcome of one reload, as {@code POST /admin/reload} reports it. */
  public record Result(boolean ok, String error, List<String> restartNeeded, List<String> failed) {
    static Result rejected(String error) {
      return new Result(false, error, List.of(), List.of());
    }
  }

  public synchronized Result reload() {
    if (file == null) {
      String error = "this gateway was started without a config file, so there is nothing to reload";
      log.warn("config reload refused: {}", error);
      return Result.rejected(error);
    }
    GatewayConfig next;
    try {
      next = loader.apply(file);
    } catch (ConfigException e) {
      log.error("config reload rejected, keeping the running config: {}", e.getMessage());
      return Result.rejected(e.getMessage());
    } catch (RuntimeException e) {
      log.error("config reload rejected, keeping the running config: {}: {}", file, e.toString());
      return Result.rejected(file + ": " + e);
    }
    GatewayConfig previous = current;
    List<String> failed = new ArrayList<>();
    for (Registration registration : reloadables) {
      try {
        registration.reloadable().reload(next);
      } catch (RuntimeException e) {
        log.error("config reload: {} failed to apply the new config", registration.reloadable(), e);
        failed.add(String.valueOf(registration.reloadable()));
      }
    }
    current = withoutPlainKeys(next);
    List<String> restartNeeded = restartNeeded(previous, next);
    if (restartNeeded.isEmpty()) {
      log.info("config reloaded from {} ({} keys)", file, next.keys().size());
    } else {
      log.warn("config reloaded from {} ({} keys); changes to {} take effect only after a restart",
          file, next.keys().size(), String.join(", ", restartNeeded));
    }
    return new Result(failed.isEmpty(), failed.isEmpty() ? null : "some components failed to reload",
        restartNeeded, failed);
  }

  /** Changed sections that no registered component applies. */
  List<String> restartNeeded(GatewayConfig before, GatewayConfig after) {
    Set<String> applied = new HashSet<>();
    reloadables.forEach(r -> applied.addAll(r.sections()));
    List<String> sections = new ArrayList<>();
    for (RecordComponent component : GatewayConfig.class.getRecordComponents()) {
      if (!applied.contains(component.getName())
          && !Objects.equals(value(component, before), value(component, after))) {
        sections.add(component.getName());
      }
    }
    return sections;
  }

  private static final List<String> SECTIONS = Arrays.stream(GatewayConfig.class.getRecordComponents())
      .map(RecordComponent::getName).toList();

  private static Object value(RecordComponent component, GatewayConfig config) {
    try {
      return component.getAccessor().invoke(config);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
