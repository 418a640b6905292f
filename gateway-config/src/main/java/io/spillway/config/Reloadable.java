package io.spillway.config;

/**
 * A component that takes part in a config reload ({@code SIGHUP} or {@code POST /admin/reload}).
 *
 * <p>{@link #reload} is called with a config that has already been read and validated as a whole,
 * after the key registry was swapped. It runs on the reloading thread, never on an event loop, while
 * requests keep flowing: an implementation swaps its state atomically (one {@code volatile} or
 * {@code AtomicReference} write) so that a request sees either the old or the new settings, never a
 * mix. It must not throw for a config that passed validation; if it does, the failure is logged and
 * reported by the admin API, and the other components are still reloaded.
 */
@FunctionalInterface
public interface Reloadable {
  void reload(GatewayConfig next);
}
