package io.spillway.routing.breaker;

import io.spillway.redis.RedisScript;

/**
 * The fleet breaker's one Lua script ({@code fleet-breaker.lua} beside this class): every change to the shared breaker is one atomic step in
 * Redis, so capacity answers from any replica count toward one streak and only one replica ever
 * holds the half-open probe.
 *
 * <p>Keys: {@code KEYS[1]} the state hash (fields {@code state since until streak retryAfter probe
 * probeUntil version reason epoch}), {@code KEYS[2]} the history list
 * ({@code from|to|atMillis|reason}, oldest first). Arguments: now (ms, from the calling replica's
 * clock), history size, the channel changes are published on, the operation, the operation's own
 * arguments, and last an epoch candidate: a hash created afresh (first use, or after Redis lost or
 * evicted it) takes it as its {@code epoch}, so replicas can tell "an older version" from "a new
 * beginning" and follow the latter. The operations:
 *
 * <ul>
 *   <li>{@code read}: nothing (the open → half-open step is still taken when due);
 *   <li>{@code probe id leaseMs}: take the half-open probe if nobody holds it or its lease ran out;
 *   <li>{@code capacity retryAfterMs streakToOpen localForMs maxLocalForMs rule openWords}: one capacity
 *       answer ({@code openWords} begins the reason's last part, before the open time:
 *       {@link BreakerSettings#openWords()});
 *   <li>{@code success}: a cloud success while closed: the streak starts again;
 *   <li>{@code verdict id success|reopen|other retryAfterMs localForMs maxLocalForMs description openWords}:
 *       the probe's answer, counted only from the replica that holds the probe;
 *   <li>{@code release id}: the probe ended without an answer: the next request may probe;
 *   <li>{@code override open|closed|auto}.
 * </ul>
 *
 * Every change increments {@code version} and publishes the new state, in the same form as the
 * reply: {@code granted, state, since, until, streak, probe, probeUntil, version, epoch, reason} (the
 * publication without {@code granted}, joined by {@code |}, reason last).
 */
final class FleetScript {
  static final RedisScript SCRIPT = RedisScript.load(FleetScript.class, "fleet-breaker.lua");

  private FleetScript() {}
}
