package io.spillway.routing.breaker;

import io.spillway.routing.breaker.Breaker.State;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The fleet breaker's state as Redis last told this replica: Redis is the truth, and each
 * replica keeps the newest version it saw (a publication, a script's reply, or the periodic re-read).
 */
record FleetState(State state, Instant since, Instant until, int streak, String probe, Instant probeUntil,
    long version, String epoch, String reason) {

  static final FleetState INITIAL =
      new FleetState(State.CLOSED, Instant.EPOCH, Instant.EPOCH, 0, "", Instant.EPOCH, 0, "", "");

  /** Whether this state replaces {@code current}: a later version, or a hash Redis created afresh. */
  boolean replaces(FleetState current) {
    return !epoch.equals(current.epoch()) || version >= current.version();
  }

  /** The state routing acts on at {@code now}: open turns half-open once its time has run out. */
  State at(Instant now) {
    return state == State.OPEN && !now.isBefore(until) ? State.HALF_OPEN : state;
  }

  /** Whether another request holds the probe at {@code now}. */
  boolean probeOut(Instant now) {
    return state == State.HALF_OPEN && !probe.isEmpty() && now.isBefore(probeUntil);
  }

  /** From the script's reply or a publication: state, since, until, streak, probe, probeUntil, version, epoch, reason. */
  static FleetState parse(List<String> f) {
    return new FleetState(State.valueOf(f.get(0).toUpperCase(Locale.ROOT)), Instant.ofEpochMilli(Long.parseLong(f.get(1))),
        Instant.ofEpochMilli(Long.parseLong(f.get(2))), Integer.parseInt(f.get(3)), f.get(4),
        Instant.ofEpochMilli(Long.parseLong(f.get(5))), Long.parseLong(f.get(6)), f.get(7), f.get(8));
  }
}
