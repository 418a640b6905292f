package io.spillway.quota.spend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.Version;
import io.spillway.core.json.Json;
import io.spillway.quota.pool.Band;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
  private final URI webhook;
  private final Duration timeout;
  private final HttpClient http;

  SpendAlerts(MeterRegistry meters, String webhook, Duration timeout) {
    this.meters = meters;
    this.webhook = webhook == null || webhook.isBlank() ? null : URI.create(webhook);
    this.timeout = timeout;
    this.http = this.webhook == null ? null
        : HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
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
    if (http == null) {
      return;
    }
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
    HttpRequest request = HttpRequest.newBuilder(webhook)
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("User-Agent", Version.USER_AGENT)
        .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)))
        .build();
    http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
      if (error != null) {
        log.warn("Spend alert webhook {} failed for team '{}' band {}: {}", webhook.getHost(), alert.team(),
            alert.band().tag(), error.toString());
      } else if (response.statusCode() >= 300) {
        log.warn("Spend alert webhook {} answered {} for team '{}' band {}", webhook.getHost(),
            response.statusCode(), alert.team(), alert.band().tag());
      }
    });
  }

  static String usd(double amount) {
    return String.format(Locale.ROOT, "%.4f", amount);
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
    }
  }
}
