package io.spillway.quota.pool;

import io.spillway.redis.RedisLink;
import static io.spillway.quota.testing.QuotaTesting.BRONZE;
import static io.spillway.quota.testing.QuotaTesting.GOLD;
import static io.spillway.quota.testing.QuotaTesting.SILVER;
import static io.spillway.quota.testing.QuotaTesting.quota;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.store.MemoryUsageStore;
import io.spillway.quota.store.RedisUsageStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class QuotaPoolsTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final MemoryUsageStore store = new MemoryUsageStore();
  private QuotaPools pools;
  private HttpServer webhook;

  @AfterEach
  void tearDown() {
    if (pools != null) {
      pools.close();
    }
    if (webhook != null) {
      webhook.stop(0);
    }
  }

  private QuotaPools pools(String yaml) {
    pools = new QuotaPools(quota(yaml), store, clock, meters);
    return pools;
  }

  private void use(Caller caller, long tokens) {
    pools.reserve(caller, tokens).settle(new TokenUsage(tokens, 0));
  }

  @Test
  void monthlyTokensAreSplitIntoPoolsByTierShareWithGoldOverdraft() {
    pools("quota: {monthlyTokens: 1000000}");

    assertThat(pools.snapshot(Tier.GOLD)).extracting(PoolSnapshot::limit, PoolSnapshot::ceiling)
        .containsExactly(200_000L, 220_000L);
    assertThat(pools.snapshot(Tier.SILVER)).extracting(PoolSnapshot::limit, PoolSnapshot::ceiling)
        .containsExactly(500_000L, 500_000L);
    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::limit, PoolSnapshot::ceiling)
        .containsExactly(300_000L, 300_000L);
  }

  @Test
  void reloadRecomputesLimitsCeilingsAndBandsInPlaceAndKeepsTheMonthsUsage() {
    pools("quota: {monthlyTokens: 1000000}");
    use(SILVER, 1000);
    use(GOLD, 500);

    pools.reload(quota("quota: {monthlyTokens: 2000, alertAt: 0.5, softAt: 0.9, tiers: {gold: {overdraft: 0.5}}}"));

    assertThat(pools.snapshot(Tier.SILVER)).extracting(PoolSnapshot::limit, PoolSnapshot::used, PoolSnapshot::band)
        .containsExactly(1000L, 1000L, Band.HARD);
    assertThat(pools.snapshot(Tier.GOLD)).extracting(PoolSnapshot::limit, PoolSnapshot::ceiling, PoolSnapshot::used,
        PoolSnapshot::band).containsExactly(400L, 600L, 500L, Band.HARD);
    assertThat(pools.reserve(GOLD, 100)).as("gold's new overdraft still covers 100").isNotNull();
    GatewayException refused = catchThrowableOfType(GatewayException.class, () -> pools.reserve(SILVER, 1));
    assertThat(refused.code()).isEqualTo("insufficient_quota");
    assertThat(meters.get("spillway.quota.pool.limit.tokens").tag("tier", "silver").gauge().value()).isEqualTo(1000.0);
  }

  @Test
  void reloadMovesTheMonthBoundaryWithTheTimezone() {
    clock.set(Instant.parse("2026-11-30T20:00:00Z"));
    pools("quota: {monthlyTokens: 1000, timezone: UTC}");
    assertThat(pools.calendar().month().toString()).isEqualTo("2026-11");

    pools.reload(quota("quota: {monthlyTokens: 1000, timezone: Pacific/Auckland}"));

    assertThat(pools.calendar().month().toString()).as("already December in Auckland").isEqualTo("2026-12");
    assertThat(pools.report().get("timezone").asText()).isEqualTo("Pacific/Auckland");
  }

  @Test
  void reservationPastTheHardLimitGetsInsufficientQuotaWithRetryAfterUntilTheMonthResets() {
    pools("quota: {monthlyTokens: 1000}");
    use(BRONZE, 200);

    GatewayException refused = catchThrowableOfType(GatewayException.class, () -> pools.reserve(BRONZE, 150));

    assertThat(refused.status()).isEqualTo(429);
    assertThat(refused.code()).isEqualTo("insufficient_quota");
    assertThat(refused.toError().type()).isEqualTo("insufficient_quota");
    assertThat(refused.retryAfter()).isEqualTo(Duration.between(clock.instant(), Instant.parse("2026-12-01T00:00:00Z")));
    assertThat(refused.getMessage()).contains("bronze", "150", "100 of 300");
    pools.reserve(BRONZE, 100).settle(new TokenUsage(60, 40));
    assertThat(pools.snapshot(Tier.BRONZE).used()).isEqualTo(300);
    assertThat(catchThrowableOfType(GatewayException.class, () -> pools.reserve(BRONZE, 1)).getMessage())
        .contains("has used its token budget for 2026-11");
  }

  @Test
  void goldMayRunIntoItsOverdraftButNoFurther() {
    pools("quota: {monthlyTokens: 1000}");
    use(GOLD, 200);
    assertThat(pools.snapshot(Tier.GOLD).band()).isEqualTo(Band.HARD);

    use(GOLD, 20);

    assertThat(pools.snapshot(Tier.GOLD).used()).isEqualTo(220);
    assertThat(catchThrowableOfType(GatewayException.class, () -> pools.reserve(GOLD, 1)).status()).isEqualTo(429);
    assertThat(catchThrowableOfType(GatewayException.class, () -> pools.reserve(SILVER, 501)).status()).isEqualTo(429);
  }

  @Test
  void runningReservationsHoldTheirEstimateUntilSettledOrReleased() {
    pools("quota: {monthlyTokens: 1000}");
    Reservation running = pools.reserve(BRONZE, 300);
    assertThat(pools.snapshot(Tier.BRONZE).reserved()).isEqualTo(300);

    assertThat(catchThrowableOfType(GatewayException.class, () -> pools.reserve(BRONZE, 1)).status()).isEqualTo(429);
    running.release();

    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved)
        .containsExactly(0L, 0L);
    pools.reserve(BRONZE, 300).settle(new TokenUsage(10, 5));
    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved)
        .containsExactly(15L, 0L);
  }

  @Test
  void aReservationEndsExactlyOnce() {
    pools("quota: {monthlyTokens: 1000}");
    Reservation reservation = pools.reserve(SILVER, 100);

    assertThat(reservation.settle(new TokenUsage(30, 20))).isTrue();
    assertThat(reservation.settle(new TokenUsage(30, 20))).isFalse();
    assertThat(reservation.release()).isFalse();

    assertThat(pools.snapshot(Tier.SILVER)).extracting(PoolSnapshot::used, PoolSnapshot::reserved)
        .containsExactly(50L, 0L);
    assertThat(pools.teamUsage()).containsEntry("web", 50L);
  }

  @Test
  void bandsFollowSettledUsageAndTheSoftBandTurnsOnDegradation() {
    pools("quota: {monthlyTokens: 1000, alertAt: 0.80, softAt: 0.95}");
    use(BRONZE, 239);
    assertThat(pools.snapshot(Tier.BRONZE).band()).isEqualTo(Band.OK);
    assertThat(pools.pastSoftBand(Tier.BRONZE)).isFalse();

    use(BRONZE, 1);
    assertThat(pools.snapshot(Tier.BRONZE).band()).isEqualTo(Band.ALERT);
    assertThat(pools.pastSoftBand(Tier.BRONZE)).isFalse();

    use(BRONZE, 45);
    assertThat(pools.snapshot(Tier.BRONZE).band()).isEqualTo(Band.SOFT);
    assertThat(pools.pastSoftBand(Tier.BRONZE)).isTrue();
    assertThat(pools.pastSoftBand(Tier.SILVER)).isFalse();

    use(BRONZE, 15);
    assertThat(pools.snapshot(Tier.BRONZE).band()).isEqualTo(Band.HARD);
    assertThat(pools.pastSoftBand(Tier.BRONZE)).isTrue();
  }

  @Test
  void eachBandIsAnnouncedOncePerPoolAndMonthByLogMetricAndWebhook() throws IOException {
    List<JsonNode> posts = startWebhook();
    pools("quota: {monthlyTokens: 1000, alertWebhook: 'http://127.0.0.1:" + webhook.getAddress().getPort()
        + "/hook'}");

    for (int i = 0; i < 30; i++) {
      use(BRONZE, 10); // 10 .. 300 tokens: through alert (240), soft (285) and hard (300)
    }

    assertThat(alerts(Tier.BRONZE, Band.ALERT)).isEqualTo(1);
    assertThat(alerts(Tier.BRONZE, Band.SOFT)).isEqualTo(1);
    assertThat(alerts(Tier.BRONZE, Band.HARD)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> posts.size() == 3);
    assertThat(posts).extracting(p -> p.get("band").asText()).containsExactlyInAnyOrder("alert", "soft", "hard");
    JsonNode alert = posts.stream().filter(p -> p.get("band").asText().equals("alert")).findFirst().orElseThrow();
    assertThat(alert.get("tier").asText()).isEqualTo("bronze");
    assertThat(alert.get("month").asText()).isEqualTo("2026-11");
    assertThat(alert.get("used").asLong()).isEqualTo(240);
    assertThat(alert.get("limit").asLong()).isEqualTo(300);
    assertThat(alert.get("resetAt").asText()).isEqualTo("2026-12-01T00:00:00Z");

    clock.set(Instant.parse("2026-12-01T00:00:00Z"));
    assertThat(pools.snapshot(Tier.BRONZE).used()).isZero();
    assertThat(pools.pastSoftBand(Tier.BRONZE)).isFalse();
    for (int i = 0; i < 25; i++) {
      use(BRONZE, 10); // 250: alert again, in the new month only
    }

    assertThat(alerts(Tier.BRONZE, Band.ALERT)).isEqualTo(2);
    assertThat(alerts(Tier.BRONZE, Band.SOFT)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> posts.size() == 4);
    assertThat(posts.get(3).get("month").asText()).isEqualTo("2026-12");
  }

  @Test
  void aJumpAcrossSeveralBandsAnnouncesEachOfThem() {
    pools("quota: {monthlyTokens: 1000}");

    use(SILVER, 500);

    assertThat(alerts(Tier.SILVER, Band.ALERT)).isEqualTo(1);
    assertThat(alerts(Tier.SILVER, Band.SOFT)).isEqualTo(1);
    assertThat(alerts(Tier.SILVER, Band.HARD)).isEqualTo(1);
  }

  @Test
  void monthRolloverStartsEveryPoolFromZero() {
    pools("quota: {monthlyTokens: 1000}");
    clock.set(Instant.parse("2026-11-30T23:59:59Z"));
    use(BRONZE, 300);
    assertThat(catchThrowableOfType(GatewayException.class, () -> pools.reserve(BRONZE, 1)).retryAfter())
        .isEqualTo(Duration.ofSeconds(1));

    clock.advance(Duration.ofSeconds(1));

    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::month, PoolSnapshot::used)
        .containsExactly("2026-12", 0L);
    pools.reserve(BRONZE, 300).settle(new TokenUsage(1, 1));
    assertThat(pools.snapshot(Tier.BRONZE).resetAt()).isEqualTo(Instant.parse("2027-01-01T00:00:00Z"));
  }

  @Test
  void monthBoundariesFollowTheConfiguredTimeZone() {
    pools("quota: {monthlyTokens: 1000, timezone: America/New_York}");
    clock.set(Instant.parse("2026-12-01T03:00:00Z")); // still 30 November, 22:00 in New York
    use(BRONZE, 100);

    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::month, PoolSnapshot::used, PoolSnapshot::resetAt)
        .containsExactly("2026-11", 100L, Instant.parse("2026-12-01T05:00:00Z"));

    clock.advance(Duration.ofHours(2));

    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::month, PoolSnapshot::used)
        .containsExactly("2026-12", 0L);
  }

  @Test
  void withFailClosedAnUnreachableRedisRefusesWith503InsteadOfGuessing() throws IOException {
    int nobodyListens;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      nobodyListens = socket.getLocalPort();
    }
    try (RedisLink link = RedisLink.open("redis://127.0.0.1:" + nobodyListens, Duration.ofMillis(500));
        RedisUsageStore redis = new RedisUsageStore(link, Duration.ofMillis(500),
        Duration.ofMinutes(1), Duration.ofMinutes(40), true, clock)) {
      pools = new QuotaPools(quota("quota: {monthlyTokens: 1000, failClosed: true, flushInterval: 2s}"), redis, clock, meters);

      GatewayException refused = catchThrowableOfType(GatewayException.class, () -> pools.reserve(SILVER, 10));

      assertThat(refused.status()).isEqualTo(503);
      assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(2));
      assertThat(refused.getMessage()).contains("silver", "quota.failClosed");
      assertThat(meters.get("spillway.quota.store.healthy").gauge().value()).isZero();
    }
  }

  @Test
  void metricsShowEachPoolsUsageRatioBandAndSettledTokens() {
    pools("quota: {monthlyTokens: 1000}");
    pools.reserve(BRONZE, 100).settle(new TokenUsage(200, 40));

    assertThat(meters.get("spillway.quota.pool.usage.ratio").tag("tier", "bronze").gauge().value()).isEqualTo(0.8);
    assertThat(meters.get("spillway.quota.band").tag("tier", "bronze").gauge().value()).isEqualTo(1.0);
    assertThat(meters.get("spillway.quota.tokens").tag("tier", "bronze").tag("direction", "input").counter().count())
        .isEqualTo(200.0);
    assertThat(meters.get("spillway.quota.tokens").tag("tier", "bronze").tag("direction", "output").counter().count())
        .isEqualTo(40.0);
    assertThat(meters.get("spillway.quota.pool.usage.ratio").tag("tier", "gold").gauge().value()).isZero();
  }

  @Test
  void reportListsEveryPoolAndTeam() {
    pools("quota: {monthlyTokens: 1000}");
    use(GOLD, 30);
    use(BRONZE, 12);
    Reservation running = pools.reserve(SILVER, 70);

    JsonNode report = pools.report();

    assertThat(report.get("month").asText()).isEqualTo("2026-11");
    assertThat(report.get("resetAt").asText()).isEqualTo("2026-12-01T00:00:00Z");
    assertThat(report.at("/pools/gold/used").asLong()).isEqualTo(30);
    assertThat(report.at("/pools/gold/ceiling").asLong()).isEqualTo(220);
    assertThat(report.at("/pools/silver/reserved").asLong()).isEqualTo(70);
    assertThat(report.at("/pools/bronze/band").asText()).isEqualTo("ok");
    assertThat(report.at("/teams/release/used").asLong()).isEqualTo(30);
    assertThat(report.at("/teams/sandbox/used").asLong()).isEqualTo(12);
    assertThat(report.at("/store/kind").asText()).isEqualTo("memory");
    running.release();
  }

  private double alerts(Tier tier, Band band) {
    var counter = meters.find("spillway.quota.alerts").tag("tier", tier.tag()).tag("band", band.tag()).counter();
    return counter == null ? 0 : counter.count();
  }

  private List<JsonNode> startWebhook() throws IOException {
    List<JsonNode> posts = new CopyOnWriteArrayList<>();
    webhook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    webhook.createContext("/hook", exchange -> {
      posts.add(Json.parse(exchange.getRequestBody().readAllBytes()));
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    webhook.start();
    return posts;
  }
}
