package io.spillway.core.pipeline;

/**
 * Who is calling, as resolved from a gateway key. {@code keyId} is a short, non-secret fingerprint
 * of the key, safe to log.
 */
public record Caller(String team, Tier tier, String keyId) {}
