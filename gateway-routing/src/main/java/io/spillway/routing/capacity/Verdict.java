package io.spillway.routing.capacity;

import java.time.Duration;

/**
 * The classifier's decision about one upstream answer.
 *
 * @param outcome what the answer means for routing
 * @param rule the id of the table row that matched (bounded: safe as a metric tag)
 * @param retryAfter how long the upstream asked callers to wait, or null when it did not say
 */
public record Verdict(Outcome outcome, String rule, Duration retryAfter) {}
