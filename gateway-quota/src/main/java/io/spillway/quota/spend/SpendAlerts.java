package io.spillway.quota.spend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.json.Json;
import io.spillway.quota.pool.AlertWebhook;
import io.spillway.quota.pool.Band;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces a team's money budget entering a band: a WARN log line, the
 * {@code spillway_spend_alerts_total} counter (by band only: teams are not a metric tag), and a JSON
 * POST to {@code quota.alertWebhook} when set, sent asynchronously. A failed POST is logged, not retried.
 */
final class SpendAlerts implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SpendAlerts.class);

  private final MeterRegistry meters;
  private final AlertWebhook webhook;

  SpendAlerts(MeterRegistry meters, String webhook, Duration timeout) {
    this.meters = meters;
    this.webhook = new AlertWebhook(webhook, timeout);
  }

  record Alert(String team, Band band, double threshold, String month, double spentUsd, double budgetUsd,
      Instant resetAt, Instant at) {}

  void announce(Alert alert) {
    log.warn("Team '{}' reached the {} band of its money budget for {}: {} of {} USD spent; resets at {}",
        alert.team(), alert.band().tag(), alert.month(), usd(alert.spentUsd()), usd(alert.budgetUsd()),
        alert.resetAt());
    Counter.builder("spillway.spend.alerts")
        .description("Team money-budget band crossings announced (once per team, band and month)")
        .tag("band", alert.band().tag())
        .register(meters)
        .increment();
    ObjectNode body = Json.object();
    body.put("type", "spillway.spend.band");
    body.put("team", alert.team());
    body.put("band", alert.band().tag());
    body.put("threshold", alert.threshold());
    body.put("month", alert.month());
    body.put("spentUsd", alert.spentUsd());
    body.put("budgetUsd", alert.budgetUsd());
    body.put("resetAt", alert.resetAt().toString());
    body.put("at", alert.at().toString());
    webhook.post(body, "team '" + alert.team() + "' band " + alert.band().tag());
  }

  static String usd(double amount) {
    return String.format(Locale.ROOT, "%.4f", amount);
  }

  @Override
  public void close() {
    webhook.close();
  }
}
