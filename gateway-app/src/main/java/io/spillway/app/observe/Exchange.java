package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/**
 * One request as the access log and the request metrics see it once it is over. Holds no key and,
 * unless payload logging is on, no prompt or completion.
 *
 * @param promptTokens -1 when the backend reported no usage (likewise {@code completionTokens})
 * @param ttfbNanos -1 for a buffered answer
 * @param prompt the request's prompt fields, only with {@code logging.payloads}
 * @param completion the answer's text, only with {@code logging.payloads}
 * @param costUsd what the settled request cost by the price table; null when nothing was settled
 * @param traceId the request's trace id, only with tracing on
 */
record Exchange(
    Instant at,
    String requestId,
    String route,
    String team,
    String tier,
    String keyId,
    String backend,
    String model,
    int status,
    String outcome,
    boolean stream,
    long totalNanos,
    long gatewayNanos,
    long upstreamNanos,
    long ttfbNanos,
    long promptTokens,
    long completionTokens,
    List<String> degraded,
    String cache,
    String error,
    JsonNode prompt,
    String completion,
    Double costUsd,
    String traceId) {}
