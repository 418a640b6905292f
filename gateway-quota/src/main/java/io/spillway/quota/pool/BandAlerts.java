package io.spillway.quota.pool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.json.Json;
import java.time.Duration;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces band crossings: a WARN log line, the {@code spillway_quota_alerts_total} counter, and,
 * when {@code quota.alertWebhook} is set, a JSON POST sent asynchronously so that no request ever
 * waits for it. A webhook that fails or times out is logged, not retried.
 */
final class BandAlerts implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BandAlerts.class);

  private final MeterRegistry meters;
  private final AlertWebhook webhook;

  BandAlerts(MeterRegistry meters, String webhook, Duration webhookTimeout) {
    this.meters = meters;
    this.webhook = new AlertWebhook(webhook, webhookTimeout);
  }

  void announce(BandAlert alert) {
    log.warn("Quota pool '{}' reached the {} band for {}: {} of {} tokens used ({}); resets at {}",
        alert.tier().tag(), alert.band().tag(), alert.month(), alert.used(), alert.limit(),
        percent(alert), alert.resetAt());
    Counter.builder("spillway.quota.alerts")
        .description("Band crossings announced (once per pool, band and month)")
        .tag("tier", alert.tier().tag())
        .tag("band", alert.band().tag())
        .register(meters)
        .increment();
    post(alert);
  }

  private void post(BandAlert alert) {
    ObjectNode body = Json.object();
    body.put("type", "spillway.quota.band");
    body.put("tier", alert.tier().tag());
    body.put("band", alert.band().tag());
    body.put("threshold", alert.threshold());
    body.put("month", alert.month());
    body.put("used", alert.used());
    body.put("limit", alert.limit());
    body.put("usageRatio", alert.limit() == 0 ? 1.0 : (double) alert.used() / alert.limit());
    body.put("resetAt", alert.resetAt().toString());
    body.put("at", alert.at().toString());
    webhook.post(body, "pool '" + alert.tier().tag() + "' band " + alert.band().tag());
  }

  private static String percent(BandAlert alert) {
    double ratio = alert.limit() == 0 ? 1.0 : (double) alert.used() / alert.limit();
    return String.format(Locale.ROOT, "%.1f %%", ratio * 100);
  }

  @Override
  public void close() {
    webhook.close();
  }
}
