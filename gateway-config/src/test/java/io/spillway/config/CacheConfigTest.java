package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheConfigTest {
  static GatewayConfig parse(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("gateway.yaml", yaml);
  }

  @Test
  void everyCacheKeyHasADefault() {
    CacheConfig cache = parse("").cache();

    assertThat(cache.enabled()).isTrue();
    assertThat(cache.maxSize()).isEqualTo(DataSize.ofMebibytes(256));
    assertThat(cache.ttl()).isEqualTo(Duration.ofMinutes(10));
    assertThat(cache.maxEntrySize()).isEqualTo(DataSize.ofMebibytes(4));
    assertThat(cache.scope()).isEqualTo(CacheConfig.Scope.TEAM);
    assertThat(List.of(Tier.values())).allMatch(cache::enabledFor);
    assertThat(cache.uncacheableTools()).contains("web_search", "mcp");
  }

  @Test
  void theWholeSectionBinds() {
    CacheConfig cache = parse("""
        cache:
          enabled: true
          maxSize: 64MiB
          ttl: 1h
          maxEntrySize: 512KiB
          scope: tier
          tiers: { bronze: false }
          uncacheableTools: [send_email, web_search]
        """).cache();

    assertThat(cache.maxSize()).isEqualTo(DataSize.ofMebibytes(64));
    assertThat(cache.ttl()).isEqualTo(Duration.ofHours(1));
    assertThat(cache.maxEntrySize()).isEqualTo(DataSize.ofKibibytes(512));
    assertThat(cache.scope()).isEqualTo(CacheConfig.Scope.TIER);
    assertThat(cache.enabledFor(Tier.BRONZE)).isFalse();
    assertThat(cache.enabledFor(Tier.SILVER)).isTrue();
    assertThat(cache.uncacheableTools()).containsExactly("send_email", "web_search");
  }

  @Test
  void contradictionsAndTyposAreErrorsThatNameTheKey() {
    assertThatThrownBy(() -> parse("cache: { scope: user }"))
        .hasMessageContaining("cache.scope").hasMessageContaining("team, tier, global");
    assertThatThrownBy(() -> parse("cache: { maxSize: 1MiB, maxEntrySize: 2MiB }"))
        .hasMessageContaining("cache.maxEntrySize");
    assertThatThrownBy(() -> parse("cache: { ttl: 0s }")).hasMessageContaining("cache.ttl");
    assertThatThrownBy(() -> parse("cache: { tiers: { platinum: true } }"))
        .hasMessageContaining("unknown key 'cache.tiers.platinum'");
    assertThatThrownBy(() -> parse("cache: { uncacheableTools: [''] }"))
        .hasMessageContaining("cache.uncacheableTools[0]");
  }
}
