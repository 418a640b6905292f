package io.spillway.core.config;

import io.spillway.core.pipeline.Tier;
import java.net.URI;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Checks that a bound config is usable as a whole: ranges, contradictions, references. */
final class ConfigValidator {
  private ConfigValidator() {}

  static List<String> problems(GatewayConfig c) {
    List<String> problems = new ArrayList<>();
    ServerConfig s = c.server();
    if (s.port() < 0 || s.port() > 65535) {
      problems.add("key 'server.port': " + s.port() + " is not a port (0-65535)");
    }
    if (s.maxRequestSize().bytes() < 1024) {
      problems.add("key 'server.maxRequestSize': must be at least 1KiB");
    }
    if (s.maxConnections() < 1) {
      problems.add("key 'server.maxConnections': must be at least 1");
    }
    checkPositive(problems, "server.idleTimeout", s.idleTimeout());
    checkPositive(problems, "server.requestReadTimeout", s.requestReadTimeout());
    checkPositive(problems, "server.streamTimeLimit", s.streamTimeLimit());
    if (s.tls() != null && (s.tls().certFile() == null || s.tls().keyFile() == null)) {
      problems.add("key 'server.tls': needs both certFile and keyFile");
    }
    checkUrl(problems, "cloud.baseUrl", c.cloud().baseUrl());
    checkUrl(problems, "local.baseUrl", c.local().baseUrl());
    if (!Set.of("ollama", "openai").contains(c.local().kind())) {
      problems.add("key 'local.kind': '" + c.local().kind() + "' is not one of ollama, openai");
    }
    if (c.failover().capacityStreak() < 1) {
      problems.add("key 'failover.capacityStreak': must be at least 1");
    }
    for (int i = 0; i < c.keys().size(); i++) {
      KeyConfig k = c.keys().get(i);
      String at = "key 'keys[" + i + "]";
      boolean plain = k.key() != null && !k.key().isEmpty();
      boolean hashed = k.keyHash() != null && !k.keyHash().isEmpty();
      boolean disabled = k.key() != null && k.key().isEmpty() && !hashed;
      if (plain == hashed && !disabled) {
        problems.add(at + "': set exactly one of 'key' and 'keyHash'");
      }
      if (hashed && !k.keyHash().matches("sha256:[0-9a-f]{64}")) {
        problems.add(at + ".keyHash': expected sha256:<64 lowercase hex digits> (see `spillway.jar hash-key`)");
      }
      if (k.team() == null || k.team().isBlank()) {
        problems.add(at + ".team': missing");
      }
      try {
        Tier.parse(k.tier());
      } catch (IllegalArgumentException e) {
        problems.add(at + ".tier': " + e.getMessage());
      }
    }
    QuotaConfig q = c.quota();
    if (q.monthlyTokens() < 0) {
      problems.add("key 'quota.monthlyTokens': must not be negative");
    }
    if (!(q.alertAt() > 0 && q.alertAt() <= q.softAt() && q.softAt() <= 1.0)) {
      problems.add("key 'quota.alertAt'/'quota.softAt': need 0 < alertAt <= softAt <= 1");
    }
    double shares = q.tiers().gold().share() + q.tiers().silver().share() + q.tiers().bronze().share();
    if (shares > 1.0 + 1e-9) {
      problems.add("key 'quota.tiers': shares add up to " + shares + ", more than 1");
    }
    try {
      ZoneId.of(q.timezone());
    } catch (RuntimeException e) {
      problems.add("key 'quota.timezone': '" + q.timezone() + "' is not a time zone");
    }
    if (!Set.of("never", "pressure", "always").contains(c.shaping().degrade())) {
      problems.add("key 'shaping.degrade': '" + c.shaping().degrade() + "' is not one of never, pressure, always");
    }
    String store = c.store();
    if (!(store.startsWith("embedded:") || store.startsWith("redis://") || store.startsWith("rediss://")
        || store.equals("memory"))) {
      problems.add("key 'store': '" + store + "' is not embedded:<dir>, redis://host:port or memory");
    }
    return problems;
  }

  private static void checkPositive(List<String> problems, String key, java.time.Duration value) {
    if (value.isNegative() || value.isZero()) {
      problems.add("key '" + key + "': must be longer than 0");
    }
  }

  private static void checkUrl(List<String> problems, String key, String url) {
    try {
      URI uri = URI.create(url);
      if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
        problems.add("key '" + key + "': '" + url + "' is not an http(s) URL");
      }
    } catch (IllegalArgumentException e) {
      problems.add("key '" + key + "': '" + url + "' is not a URL");
    }
  }
}
