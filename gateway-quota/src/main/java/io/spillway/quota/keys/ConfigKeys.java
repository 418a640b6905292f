package io.spillway.quota.keys;

import io.spillway.config.GatewayConfig;
import io.spillway.config.KeyConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.pipeline.Caller;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The config file's keys ({@code keys:}), swapped whole on reload. A team that lost a key on reload
 * is told to every {@link #onTeamRevoked} listener (the response cache drops that team's answers), so
 * what a revoked key cached cannot be read back through another key of the team that kept its name.
 *
 * <p>Thread-safe: {@link #get} is one volatile read.
 */
public final class ConfigKeys implements Supplier<KeyRegistry>, Reloadable {
  private final AtomicReference<KeyRegistry> current;
  private final List<Consumer<String>> revoked = new CopyOnWriteArrayList<>();

  public ConfigKeys(List<KeyConfig> keys) {
    this.current = new AtomicReference<>(KeyRegistry.from(keys));
  }

  /** The registry in force. */
  @Override
  public KeyRegistry get() {
    return current.get();
  }

  /** Adds {@code listener}, told the name of each team that lost a key on a reload. */
  public void onTeamRevoked(Consumer<String> listener) {
    revoked.add(listener);
  }

  /** Swaps in {@code next}'s keys, then tells the listeners which teams lost one. */
  @Override
  public void reload(GatewayConfig next) {
    KeyRegistry previous = current.getAndSet(KeyRegistry.from(next.keys()));
    teamsThatLostAKey(previous, current.get()).forEach(team -> revoked.forEach(listener -> listener.accept(team)));
  }

  /** The teams of {@code before} with a key that {@code after} no longer has, each once. */
  static List<String> teamsThatLostAKey(KeyRegistry before, KeyRegistry after) {
    Set<String> stillValid = new HashSet<>();
    after.callers().forEach(caller -> stillValid.add(caller.keyId()));
    return before.callers().stream()
        .filter(caller -> !stillValid.contains(caller.keyId()))
        .map(Caller::team)
        .distinct()
        .toList();
  }

  @Override
  public String toString() {
    return "keys";
  }
}
