package io.spillway.app.reload;

import io.spillway.config.ConfigException;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.quota.keys.KeyHashes;
import java.lang.reflect.RecordComponent;
import java.io.IOException;
import java.nio.file.Files;
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
 * Re-reads the config file and hands the new config to every registered {@link Reloadable}, in
 * registration order (keys first). An unreadable or invalid file is
 * rejected with one clear log line and changes nothing. Requests in flight and open connections are
 * not touched: each component swaps its state atomically.
 *
 * <p>Each reloadable is registered with the config keys it applies: whole sections ({@code keys},
 * {@code logging}) or keys inside one ({@code server.maxHops}, {@code shaping.risk.tiers}). Whatever
 * changed that no registered component applies is reported as needing a restart, in
 * {@link Result#restartNeeded()} and in the log: a section none of whose keys apply on reload by its
 * name ({@code cloud}), a key of a section that applies in part by its dotted path
 * ({@code server.port}, {@code quota.admission}). So a new config key needs a restart until a
 * component says otherwise. Reloads are serialized. Thread-safe.
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

  private record Registration(Reloadable reloadable, Set<String> keys) {}

  /**
   * Adds a component that applies the named config keys of a new config: top-level sections
   * ({@code "quota"}) or dotted keys inside them ({@code "server.maxHops"}); components are called in
   * registration order.
   *
   * @throws IllegalArgumentException for a key the config model does not have
   */
  public void register(Reloadable reloadable, String... keys) {
    Set<String> names = Set.of(keys);
    for (String name : names) {
      requireKey(name);
    }
    reloadables.add(new Registration(Objects.requireNonNull(reloadable), names));
  }

  /**
   * As {@link #register(Reloadable, String...)}, for a step that {@code name} names in the log and in
   * {@code failed} of the reload answer.
   */
  public void register(String name, Reloadable reloadable, String... keys) {
    Objects.requireNonNull(reloadable);
    register(new Reloadable() {
      @Override
      public void reload(GatewayConfig next) {
        reloadable.reload(next);
      }

      @Override
      public String toString() {
        return name;
      }
    }, keys);
  }

  /**
   * The dotted keys of {@code section} (e.g. {@code "quota"}) except the named ones: for a component
   * that applies all of a section but a few keys.
   */
  public static String[] keysOf(String section, String... except) {
    Class<?> type = requireKey(section);
    Set<String> skipped = Set.of(except);
    return Arrays.stream(type.getRecordComponents())
        .map(RecordComponent::getName)
        .filter(name -> !skipped.contains(name))
        .map(name -> section + "." + name)
        .toArray(String[]::new);
  }

  /** The type a dotted key names, walking the config records. */
  private static Class<?> requireKey(String key) {
    Class<?> type = GatewayConfig.class;
    for (String part : key.split("\\.")) {
      RecordComponent found = type.isRecord()
          ? Arrays.stream(type.getRecordComponents()).filter(c -> c.getName().equals(part)).findFirst().orElse(null)
          : null;
      if (found == null) {
        throw new IllegalArgumentException("'" + key + "' is not a config key (sections: " + SECTIONS + ")");
      }
      type = found.getType();
    }
    return type;
  }

  /** The running config, keys as hashes only: a plain key is not kept past the registry build. */
  private static GatewayConfig withoutPlainKeys(GatewayConfig config) {
    return config.withKeys(config.keys().stream().map(KeyHashes::hashed).toList());
  }

  public GatewayConfig current() {
    return current;
  }

  /** The outcome of one reload, as {@code POST /admin/reload} reports it. */
  /**
   * @param changed the dotted config keys whose value changed (sections when a whole section was
   *     added or removed); never values
   */
  public record Result(boolean ok, String error, List<String> changed, List<String> restartNeeded,
      List<String> failed) {
    static Result rejected(String error) {
      return new Result(false, error, List.of(), List.of(), List.of());
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
      if (blank(file)) {
        String error = file + ": the file is empty (or only comments); a reload would drop every key and"
            + " the admin token, so it is refused and the running config stays";
        log.error("config reload rejected: {}", error);
        return Result.rejected(error);
      }
      next = loader.apply(file);
    } catch (ConfigException e) {
      log.error("config reload rejected, keeping the running config: {}", e.getMessage());
      return Result.rejected(e.getMessage());
    } catch (RuntimeException e) {
      log.error("config reload rejected, keeping the running config: {}: {}", file, e.toString());
      return Result.rejected(file + ": " + e);
    }
    if (next.keys().isEmpty() && next.admin().token() == null) {
      String error = file + ": the new config has no keys and no admin.token: every client would get 401 and"
          + " the admin API would be gone (a truncated or half-written file?); refused, the running config stays";
      log.error("config reload rejected: {}", error);
      return Result.rejected(error);
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
      log.warn("config reloaded from {} ({} keys); changes to {} take effect only after a restart"
              + " (docs/operations.md lists what reload applies)",
          file, next.keys().size(), String.join(", ", restartNeeded));
    }
    return new Result(failed.isEmpty(), failed.isEmpty() ? null : "some components failed to reload",
        changed(previous, current), restartNeeded, failed);
  }

  /** Whether a config file holds nothing but blank lines and comments (or cannot be read: the loader says why). */
  private static boolean blank(Path file) {
    try {
      return Files.readAllLines(file).stream().map(String::strip).allMatch(line -> line.isEmpty() || line.startsWith("#"));
    } catch (IOException | java.io.UncheckedIOException e) {
      return false;
    }
  }

  /** Every dotted key whose value differs, walking into sections and nested records. */
  static List<String> changed(GatewayConfig before, GatewayConfig after) {
    List<String> keys = new ArrayList<>();
    for (RecordComponent component : GatewayConfig.class.getRecordComponents()) {
      changed(component.getName(), value(component, before), value(component, after), keys);
    }
    return keys;
  }

  private static void changed(String key, Object before, Object after, List<String> out) {
    if (Objects.equals(before, after)) {
      return;
    }
    if (before != null && after != null && after.getClass().isRecord() && before.getClass() == after.getClass()
        && after.getClass().getRecordComponents().length > 1) { // a one-value record (a size) is a value
      for (RecordComponent component : after.getClass().getRecordComponents()) {
        changed(key + "." + component.getName(), value(component, before), value(component, after), out);
      }
    } else {
      out.add(key);
    }
  }

  /** Changed keys that no registered component applies, most general first. */
  List<String> restartNeeded(GatewayConfig before, GatewayConfig after) {
    Set<String> applied = new HashSet<>();
    reloadables.forEach(r -> applied.addAll(r.keys()));
    List<String> keys = new ArrayList<>();
    for (RecordComponent component : GatewayConfig.class.getRecordComponents()) {
      changedButNotApplied(component.getName(), value(component, before), value(component, after), applied, keys);
    }
    return keys;
  }

  private static void changedButNotApplied(
      String key, Object before, Object after, Set<String> applied, List<String> out) {
    if (Objects.equals(before, after) || applied.contains(key)) {
      return;
    }
    boolean appliesInPart = applied.stream().anyMatch(a -> a.startsWith(key + "."));
    if (appliesInPart && before != null && after != null && after.getClass().isRecord()) {
      for (RecordComponent component : after.getClass().getRecordComponents()) {
        changedButNotApplied(key + "." + component.getName(), value(component, before), value(component, after),
            applied, out);
      }
    } else {
      out.add(key);
    }
  }

  private static final List<String> SECTIONS = Arrays.stream(GatewayConfig.class.getRecordComponents())
      .map(RecordComponent::getName).toList();

  private static Object value(RecordComponent component, Object config) {
    try {
      return component.getAccessor().invoke(config);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
