package io.spillway.quota.pool;

import io.spillway.core.pipeline.Tier;
import java.time.Instant;

/**
 * A pool entered a band for the first time this month.
 *
 * @param threshold the share of the limit that marks the band (0.80, 0.95, 1.0 by default)
 */
public record BandAlert(
    Tier tier, Band band, String month, long used, long limit, double threshold, Instant resetAt, Instant at) {}
