package io.spillway.quota.spend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.quota.pool.TokenUsage;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the money figures stand on, counted by this replica since it started: per team the settled
 * requests and their tokens (cloud and local), and the cloud models that had no price, by name, so
 * that an operator sees which entry to add rather than a silent $0. Thread-safe; the names of
 * unpriced models are bounded ({@value #MAX_UNPRICED_MODELS}; more are counted under
 * {@value #OTHER}).
 */
final class SpendActivity {
  static final int MAX_UNPRICED_MODELS = 30;
  static final String OTHER = "other";

  private record Counts(LongAdder requests, LongAdder input, LongAdder output) {
    Counts() {
      this(new LongAdder(), new LongAdder(), new LongAdder());
    }
  }

  private final Map<String, Counts> teams = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> unpriced = new ConcurrentHashMap<>();

  /** One settled request of {@code team}; {@code unpricedModel} when the cloud served a model with no price. */
  void record(String team, TokenUsage usage, String unpricedModel) {
    Counts counts = teams.computeIfAbsent(team, name -> new Counts());
    counts.requests().increment();
    counts.input().add(Math.max(0, usage.input()));
    counts.output().add(Math.max(0, usage.output()));
    if (unpricedModel != null) {
      String name = unpriced.containsKey(unpricedModel) || unpriced.size() < MAX_UNPRICED_MODELS
          ? unpricedModel : OTHER;
      unpriced.computeIfAbsent(name, key -> new LongAdder()).increment();
    }
  }

  /**
   * Adds to the spend report: {@code unpricedModels} (model → requests) at its root, and
   * {@code sinceStart} ({@code requests}, {@code inputTokens}, {@code outputTokens}) to each team,
   * creating the teams that spent nothing.
   */
  void addTo(ObjectNode report, ObjectNode teamsNode) {
    ObjectNode models = report.putObject("unpricedModels");
    new TreeMap<>(unpriced).forEach((model, count) -> models.put(model, count.sum()));
    new TreeMap<>(teams).forEach((team, counts) -> {
      ObjectNode node = teamsNode.has(team) ? (ObjectNode) teamsNode.get(team) : teamsNode.putObject(team);
      if (!node.has("usd")) {
        node.put("usd", 0.0);
      }
      node.putObject("sinceStart")
          .put("requests", counts.requests().sum())
          .put("inputTokens", counts.input().sum())
          .put("outputTokens", counts.output().sum());
    });
  }
}
