package io.spillway.local;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.time.Instant;
import java.util.List;

/**
 * What Spillway last learned about the local backend: whether it answers, its version, which mapped
 * models it lacks (each with the command that fixes it) and when it last loaded them. Immutable; a
 * new snapshot replaces the old one after every check, keep-warm round or failed call.
 *
 * @param checkedAt when the server was last probed; null before the first probe
 * @param models the local models {@code local.models} maps to, {@code default} first
 * @param lastWarmAt when the models were last loaded; null when never
 * @param warmError why the last keep-warm round failed, or null
 * @param loaded the mapped models the server had loaded in memory at the last probe, plus those it
 *     served or loaded since
 */
public record LocalReadiness(
    String kind,
    String baseUrl,
    boolean reachable,
    String version,
    List<String> models,
    List<MissingModel> missing,
    List<String> problems,
    Instant checkedAt,
    boolean keepWarm,
    Instant lastWarmAt,
    String warmError,
    List<String> loaded) {

  /** A mapped model the server does not have, and how to get it there. */
  public record MissingModel(String model, String fix) {}

  public LocalReadiness {
    models = List.copyOf(models);
    missing = List.copyOf(missing);
    problems = List.copyOf(problems);
    loaded = List.copyOf(loaded);
  }

  /** Before the first probe: assumed ready, so traffic is not refused while the probe runs. */
  public static LocalReadiness unchecked(String kind, String baseUrl, List<String> models, boolean keepWarm) {
    return new LocalReadiness(kind, baseUrl, true, null, models, List.of(), List.of(), null, keepWarm, null, null, List.of());
  }

  /**
   * Whether local can serve: the server answered its last probe (or has not been probed yet) and the
   * {@code default} model is not known to be missing. A missing non-default model only fails the
   * requests for it, with a 404 that names the fix.
   */
  public boolean ready() {
    if (!reachable) {
      return false;
    }
    String defaultModel = models.isEmpty() ? null : models.get(0);
    return missing.stream().noneMatch(m -> m.model().equals(defaultModel));
  }

  public boolean checked() {
    return checkedAt != null;
  }

  public List<String> missingModels() {
    return missing.stream().map(MissingModel::model).toList();
  }

  LocalReadiness withProbe(LocalServer.Probe probe, Instant at) {
    return new LocalReadiness(kind, baseUrl, probe.reachable(), probe.version(), models, probe.missing(),
        probe.problems(), at, keepWarm, lastWarmAt, warmError, probe.reachable() ? probe.loaded() : List.of());
  }

  LocalReadiness withWarm(Instant at, String error, List<String> warmed) {
    return new LocalReadiness(kind, baseUrl, reachable, version, models, missing, problems, checkedAt, keepWarm,
        at, error, union(loaded, warmed));
  }

  /** With {@code model} loaded: the server just served or loaded it. */
  LocalReadiness withLoaded(String model) {
    return loaded.contains(model) ? this : new LocalReadiness(kind, baseUrl, reachable, version, models, missing,
        problems, checkedAt, keepWarm, lastWarmAt, warmError, union(loaded, List.of(model)));
  }

  private static List<String> union(List<String> a, List<String> b) {
    List<String> out = new java.util.ArrayList<>(a);
    b.stream().filter(m -> !out.contains(m)).forEach(out::add);
    return out;
  }

  /** Whether the server has {@code model} (not known to be missing). */
  public boolean has(String model) {
    return missing.stream().noneMatch(m -> m.model().equals(model));
  }

  /**
   * The snapshot as {@code /admin/status} and {@code /readyz} show it. The server's address is only
   * included on request ({@code /admin/status}, behind the admin token): {@code /readyz} is open.
   */
  public ObjectNode toJson(boolean withAddress) {
    ObjectNode out = Json.object();
    out.put("kind", kind);
    if (withAddress) {
      out.put("baseUrl", baseUrl);
    }
    out.put("ready", ready());
    out.put("checked", checked());
    out.put("reachable", reachable);
    out.put("version", version);
    ArrayNode modelList = out.putArray("models");
    models.forEach(modelList::add);
    ArrayNode missingList = out.putArray("missing");
    for (MissingModel m : missing) {
      missingList.addObject().put("model", m.model()).put("fix", m.fix());
    }
    ArrayNode problemList = out.putArray("problems");
    problems.forEach(problemList::add);
    ArrayNode loadedList = out.putArray("loaded");
    loaded.forEach(loadedList::add);
    out.put("checkedAt", checkedAt == null ? null : checkedAt.toString());
    ObjectNode warm = out.putObject("keepWarm");
    warm.put("enabled", keepWarm);
    warm.put("lastAt", lastWarmAt == null ? null : lastWarmAt.toString());
    warm.put("error", warmError);
    return out;
  }
}
