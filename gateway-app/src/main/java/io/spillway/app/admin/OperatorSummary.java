package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code summary} of {@code GET /admin/status}, the line at the top of the dashboard: what
 * Spillway is doing now, in one sentence, what the operator can do about it, and which runbook of
 * docs/operations.md covers it ({@code runbook} is that section's anchor; the dashboard links to
 * {@code /dashboard/runbook#<anchor>}).
 *
 * <p>Read from the rest of the status (backends, cloud routes and their breakers, the local
 * backend, the quota pools), so it says nothing the other sections do not show. The first matching
 * situation wins, worst first: nothing can serve; an operator forced the breaker; the cloud is at
 * capacity; a route is; the local backend is down; a pool is used up; else all is well.
 *
 * <p>{@code level} is {@code ok}, {@code warn} or {@code bad}. Stateless.
 */
public final class OperatorSummary {
  static final String RUNBOOKS = "runbooks";

  private OperatorSummary() {}

  /** The summary of {@code status} (the rest of {@code /admin/status}) at {@code now}. */
  public static ObjectNode of(JsonNode status, Instant now) {
    List<Route> routes = routes(status);
    boolean hasLocal = false;
    boolean localReady = false;
    for (JsonNode backend : status.path("backends")) {
      if ("local".equals(backend.path("name").asText())) {
        hasLocal = true;
        localReady = backend.path("ready").asBoolean(false);
      }
    }
    List<Route> forcedOpen = routes.stream().filter(r -> r.override.equals("open")).toList();
    List<Route> forcedClosed = routes.stream().filter(r -> r.override.equals("closed")).toList();
    List<Route> away = routes.stream().filter(r -> !r.state.equals("closed")).toList();
    Route serving = routes.stream().filter(r -> r.state.equals("closed")).findFirst().orElse(null);
    boolean allAway = !routes.isEmpty() && serving == null;

    if (!forcedOpen.isEmpty() && forcedOpen.size() == routes.size()) {
      if (!hasLocal) {
        return summary("bad", "An operator forced the cloud's breaker open and there is no local backend"
            + " (local.enabled: false): every request is refused with 503.",
            "Hand the decision back with POST /admin/breaker {\"state\":\"auto\"}.", "runbook-spillwaybreakerforcedopen");
      }
      return summary(localReady ? "warn" : "bad", "An operator forced all traffic to the local backend"
          + (localReady ? "" : ", and the local backend is not ready: requests get 503") + ".",
          "When the cloud should take traffic again: POST /admin/breaker {\"state\":\"auto\"}.",
          "runbook-spillwaybreakerforcedopen");
    }
    if (allAway) {
      Route first = away.get(0);
      String probe = probeWords(first, now);
      if (!hasLocal) {
        return summary("warn", "The cloud is at capacity and there is no local backend (local.enabled: false):"
            + " requests still go to the cloud, and those it refuses get 503 with the cloud's own Retry-After.",
            "Nothing to switch; clients retry after the cloud's hint. If it lasts, check the provider's status.",
            "runbook-spillwaycloudatcapacity");
      }
      if (!localReady) {
        return summary("bad", "The cloud is at capacity and the local backend is not ready: requests are"
            + " tried on the cloud once more, and get 503 when it refuses them.",
            "Bring a local server back (see the local servers below).", "runbook-spillwayoutage");
      }
      if (first.state.equals("half_open")) {
        return summary("warn", "The cloud was at capacity; Spillway is trying it again with one probe request"
            + " while the rest go to the local backend.", "Nothing to do: the next answer decides.",
            "runbook-spillwaycapacitystorm");
      }
      return summary("warn", "The cloud is at capacity: requests go to the local backend"
          + (probe.isEmpty() ? "" : ", and Spillway tries the cloud again " + probe) + ".",
          "Nothing to do; if it lasts, or local cannot keep up, see the runbook.", "runbook-spillwaycapacitystorm");
    }
    if (!away.isEmpty()) {
      List<String> names = away.stream().map(r -> r.name).toList();
      return summary("warn", "Cloud route " + String.join(", ", names) + (names.size() == 1 ? " is" : " are")
          + " at capacity; requests go to route " + serving.name + ".",
          "Nothing to do; traffic comes back on its own after the probe.", "runbook-spillwaycloudatcapacity");
    }
    if (hasLocal && !localReady) {
      return summary("warn", "Serving from the cloud" + routeWords(serving, routes)
          + "; the local backend is not ready, so a capacity storm would have nowhere to go.",
          "Check the local servers below before the cloud needs them.", "runbook-spillwaylocalbackenddown");
    }
    String pool = exhaustedPool(status);
    if (pool != null) {
      return summary("warn", "Serving from the cloud" + routeWords(serving, routes) + "; the " + pool
          + " pool has used its monthly tokens (and any overdraft), so its requests get 429 until the month resets.",
          "Raise quota.monthlyTokens or the tier's share, or wait for the reset.", "runbook-spillwaypoolexhausted");
    }
    if (!forcedClosed.isEmpty()) {
      return summary("ok", "Serving from the cloud" + routeWords(serving, routes) + "; an operator forced it"
          + " closed, so capacity answers do not move traffic to local.",
          "Hand the decision back with POST /admin/breaker {\"state\":\"auto\"}.", "runbook-spillwaybreakerforcedopen");
    }
    return summary("ok", "Serving from the cloud" + routeWords(serving, routes)
        + (hasLocal ? "; the local backend is ready for a capacity storm." : "; there is no local backend."),
        "Nothing to do.", RUNBOOKS);
  }

  private static ObjectNode summary(String level, String doing, String youCan, String runbook) {
    return Json.object().put("level", level).put("doing", doing).put("youCan", youCan).put("runbook", runbook);
  }

  /** " (route openai)" when there are several routes to choose from. */
  private static String routeWords(Route serving, List<Route> routes) {
    return serving != null && routes.size() > 1 ? " (route " + serving.name + ")" : "";
  }

  /** "in 4m 10s" until the route's next probe, or "" when none is planned. */
  private static String probeWords(Route route, Instant now) {
    if (route.nextProbeAt == null) {
      return "";
    }
    Duration left = Duration.between(now, route.nextProbeAt);
    if (left.isNegative() || left.isZero()) {
      return "with the next request";
    }
    long s = (left.toMillis() + 999) / 1000;
    return "in " + (s >= 3600 ? s / 3600 + "h " + (s % 3600) / 60 + "m"
        : s >= 60 ? s / 60 + "m " + s % 60 + "s" : s + "s");
  }

  /** The first pool with nothing left (past 100 % and its overdraft), or null. */
  private static String exhaustedPool(JsonNode status) {
    JsonNode pools = status.path("quota").path("pools");
    var names = pools.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      JsonNode pool = pools.path(name);
      if ("hard".equals(pool.path("band").asText()) && pool.path("remaining").asLong(1) <= 0) {
        return name;
      }
    }
    return null;
  }

  private record Route(String name, String state, String override, Instant nextProbeAt) {}

  /** The cloud routes of {@code routes}, or the one breaker of {@code breaker} when there is no list. */
  private static List<Route> routes(JsonNode status) {
    List<Route> routes = new ArrayList<>();
    JsonNode list = status.path("routes");
    if (list.isArray() && !list.isEmpty()) {
      for (JsonNode route : list) {
        routes.add(route(route.path("name").asText("cloud"), route.path("breaker")));
      }
    } else if (status.path("breaker").isObject()) {
      routes.add(route(status.path("breaker").path("route").asText("cloud"), status.path("breaker")));
    }
    return routes;
  }

  private static Route route(String name, JsonNode breaker) {
    Instant probe = null;
    String at = Json.text(breaker, "nextProbeAt");
    if (at != null) {
      try {
        probe = Instant.parse(at);
      } catch (DateTimeParseException e) {
        probe = null;
      }
    }
    return new Route(name, breaker.path("state").asText("closed"), breaker.path("override").asText("auto"), probe);
  }
}
