package io.spillway.core.config;

/**
 * One gateway key: either {@code key} (plain, usually {@code ${ENV}}) or {@code keyHash}
 * ({@code sha256:<hex>}), and the team and tier it names.
 */
public record KeyConfig(String key, String keyHash, String team, String tier) {}
