package io.spillway.routing.breaker;

import io.spillway.core.fleet.FleetMode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.Durations;
import io.spillway.core.json.Json;
import io.spillway.routing.breaker.Breaker.HistoryEntry;
import io.spillway.routing.breaker.Breaker.OverrideMode;
import io.spillway.routing.breaker.Breaker.State;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * One breaker as read at one moment, for {@code /admin/breaker}, {@code /admin/status} and the
 * dashboard; {@link #toJson} writes it. The breakers fill it in ({@link Breaker#status()}) and know
 * nothing of its JSON.
 *
 * @param state the breaker's state (forced or not); the JSON's {@code state} is what routing does
 * @param nextProbeAt when the next probe may go (null when none is planned)
 * @param history the transitions so far, oldest first
 * @param fleet where the fleet's breaker lives, or null for a replica's own breaker
 */
public record BreakerStatus(String route, FleetMode mode, State state, OverrideMode override, Instant since, int streak,
    int capacityStreak, Instant nextProbeAt, boolean probeInFlight, Duration localFor, Duration maxLocalFor,
    List<HistoryEntry> history, Fleet fleet) {

  /** The shared store of the fleet's breaker, as this replica sees it. */
  public record Fleet(String location, boolean reachable, Instant awaySince, Duration timeout, Duration probeLease) {}

  public BreakerStatus {
    history = List.copyOf(history);
  }

  /** The same status, said to be decided in {@code mode} and carrying {@code fleet}. */
  BreakerStatus as(FleetMode mode, Fleet fleet) {
    return new BreakerStatus(route, mode, state, override, since, streak, capacityStreak, nextProbeAt, probeInFlight,
        localFor, maxLocalFor, history, fleet);
  }

  /**
   * {@code route}, {@code mode} (local, fleet, local-fallback), {@code state} (closed, open,
   * half_open: what routing does), {@code override} (auto, open, closed), {@code since},
   * {@code streak}, {@code capacityStreak}, {@code nextProbeAt} (null when none is planned),
   * {@code probeInFlight}, {@code localFor}, {@code maxLocalFor}, {@code history} [{from, to, at,
   * reason}] oldest first, and for the fleet's breaker {@code fleet} {store, location, reachable,
   * awaySince, timeout, probeLease}.
   */
  public ObjectNode toJson() {
    ObjectNode json = Json.object();
    json.put("route", route);
    json.put("mode", mode.tag());
    json.put("state", state.effective().tag());
    json.put("override", override.tag());
    json.put("since", since.toString());
    json.put("streak", streak);
    json.put("capacityStreak", capacityStreak);
    json.put("nextProbeAt", nextProbeAt == null ? null : nextProbeAt.toString());
    json.put("probeInFlight", probeInFlight);
    json.put("localFor", Durations.format(localFor));
    json.put("maxLocalFor", Durations.format(maxLocalFor));
    ArrayNode entries = json.putArray("history");
    for (HistoryEntry entry : history) {
      ObjectNode e = entries.addObject();
      e.put("from", entry.from().tag());
      e.put("to", entry.to().tag());
      e.put("at", entry.at().toString());
      e.put("reason", entry.reason());
    }
    if (fleet != null) {
      ObjectNode f = json.putObject("fleet");
      f.put("store", "redis");
      f.put("location", fleet.location());
      f.put("reachable", fleet.reachable());
      f.put("awaySince", fleet.awaySince() == null ? null : fleet.awaySince().toString());
      f.put("timeout", Durations.format(fleet.timeout()));
      f.put("probeLease", Durations.format(fleet.probeLease()));
    }
    return json;
  }
}
