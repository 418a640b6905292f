package io.spillway.quota.pool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.Version;
import io.spillway.core.json.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code quota.alertWebhook}: band alerts (token pools and money budgets) POSTed as JSON,
 * asynchronously, so that no request ever waits for it. No redirects are followed; a webhook that
 * fails or times out is logged with its host only, not retried. Thread-safe.
 */
public final class AlertWebhook implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AlertWebhook.class);

  private final URI webhook;
  private final Duration timeout;
  private final HttpClient http;

  /** @param webhook the URL, or null/blank for none (then {@link #post} does nothing) */
  public AlertWebhook(String webhook, Duration timeout) {
    this.webhook = webhook == null || webhook.isBlank() ? null : URI.create(webhook);
    this.timeout = timeout;
    this.http = this.webhook == null ? null : HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  /**
   * Sends {@code body}; {@code what} names the alert in a failure's log line (e.g. "pool 'silver'
   * band soft").
   */
  public void post(ObjectNode body, String what) {
    if (http == null) {
      return;
    }
    HttpRequest request = HttpRequest.newBuilder(webhook)
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("User-Agent", Version.USER_AGENT)
        .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)))
        .build();
    http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
      if (error != null) {
        log.warn("Alert webhook {} failed for {}: {}", webhook.getHost(), what, error.toString());
      } else if (response.statusCode() >= 300) {
        log.warn("Alert webhook {} answered {} for {}", webhook.getHost(), response.statusCode(), what);
      }
    });
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
    }
  }
}
