package io.spillway.core.fleet;

/**
 * Whose state a replica acts on, for each piece of state the fleet may share in Redis (the capacity
 * breakers, the risk index's counts): its own ({@code local}, the default without Redis), the
 * fleet's ({@code fleet}), or its own because the fleet's Redis did not answer in time
 * ({@code local-fallback}, until it does).
 */
public enum FleetMode {
  /** This replica's own state, the default without Redis. */
  LOCAL,
  /** The fleet's state in Redis. */
  FLEET,
  /** Redis is configured but did not answer in time: this replica decides alone until it does. */
  LOCAL_FALLBACK;

  /** How {@code /readyz}, {@code /admin/status} and the metrics spell it. */
  public String tag() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
