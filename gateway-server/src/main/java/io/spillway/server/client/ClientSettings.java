package io.spillway.server.client;

import java.time.Duration;

/**
 * How the upstream client keeps its connections.
 *
 * @param idleTimeout how long an idle HTTP/1.1 connection (or an HTTP/2 connection with no stream)
 *     is kept for reuse; shorter than servers' own keep-alive, so the client closes first
 * @param maxIdlePerOrigin idle HTTP/1.1 connections kept per origin on each event loop
 * @param bodyHighWater bytes of an answer read ahead of its reader, past which reading stops
 */
public record ClientSettings(Duration idleTimeout, int maxIdlePerOrigin, int bodyHighWater) {
  public static final ClientSettings DEFAULTS = new ClientSettings(Duration.ofSeconds(30), 64, 64 * 1024);
}
