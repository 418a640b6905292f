package io.spillway.core.upstream;

/**
 * The HTTP client backends make their calls with. The transport implements it (on the front end's
 * event loops, pooled per loop); backends see no transport types.
 */
@FunctionalInterface
public interface UpstreamHttp {
  /** Sends {@code request} now; never blocks. Failures arrive through the exchange. */
  UpstreamExchange send(OutboundRequest request);
}
