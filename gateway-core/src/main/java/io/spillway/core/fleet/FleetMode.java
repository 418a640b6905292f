package io.spillway.core.fleet;

/**
 * Whose state a replica acts on, for each piece of state the fleet may share in Redis (the capacity
 * breakers, the risk index's counts): its own ({@code local}, the default without Redis), the
 * fleet's ({@code fleet}), or its own because the fleet's Redis did not answer in time
 * ({@code local-fallback}, until it does).
 */
public enum FleetMode {
  /** This replica's own state, the default without Redis. */
  REPLICA("local"),
  /** The fleet's state in Redis. */
  FLEET("fleet"),
  /** Redis is configured but did not answer in time: this replica decides alone until it does. */
  REPLICA_FALLBACK("local-fallback");

  private final String tag;

  FleetMode(String tag) {
    this.tag = tag;
  }

  /**
   * How {@code /readyz}, {@code /admin/status} and the metrics spell it: the wire keeps its first
   * spelling ({@code local}, {@code local-fallback}) though the code says "replica" for it.
   */
  public String tag() {
    return tag;
  }
}
