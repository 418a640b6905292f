package io.spillway.quota.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedUsageStoreTest {
  private static final Duration NEVER_DURING_THE_TEST = Duration.ofHours(1);
  private static final PoolKey BRONZE = new PoolKey("2026-11", Tier.BRONZE);
  private static final PoolKey GOLD = new PoolKey("2026-11", Tier.GOLD);

  @TempDir Path dir;

  private static void use(UsageStore store, PoolKey pool, String team, long tokens) {
    ReserveOutcome outcome = store.reserve(pool, team, tokens, Long.MAX_VALUE);
    store.settle(outcome.hold(), tokens);
  }

  @Test
  void gracefulRestartKeepsEveryTokenTeamUsageAndAnnouncedBands() {
    try (EmbeddedUsageStore store = EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST)) {
      use(store, BRONZE, "sandbox", 120);
      use(store, GOLD, "release", 7);
      use(store, GOLD, "release", 3);
      assertThat(store.claimAlert(GOLD, "alert")).isTrue();
      store.reserve(BRONZE, "sandbox", 50, Long.MAX_VALUE); // running at shutdown: not usage
    }

    try (EmbeddedUsageStore reopened = EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST)) {
      assertThat(reopened.usage(BRONZE)).isEqualTo(new PoolUsage(120, 0));
      assertThat(reopened.usage(GOLD)).isEqualTo(new PoolUsage(10, 0));
      assertThat(reopened.teamUsage("2026-11")).containsEntry("sandbox", 120L).containsEntry("release", 10L);
      assertThat(reopened.claimAlert(GOLD, "alert")).isFalse();
      assertThat(reopened.claimAlert(GOLD, "soft")).isTrue();
    }
  }

  @Test
  void gracefulRestartKeepsSpendPerTeamAndTierUnpricedCountsAndSpendBands() {
    try (EmbeddedUsageStore store = EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST)) {
      store.addSpend("2026-11", "web", Tier.SILVER, 30_000_000, false);
      store.addSpend("2026-11", "web", Tier.SILVER, 12, false);
      store.addSpend("2026-11", "a|b", Tier.GOLD, 7, false);
      store.addSpend("2026-10", "web", Tier.SILVER, 1, false);
      store.addSpend("2026-11", "sandbox", Tier.BRONZE, 0, true);
      assertThat(store.claimSpendAlert("2026-11", "web", "alert")).isTrue();
    }

    try (EmbeddedUsageStore reopened = EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST)) {
      MonthSpend spend = reopened.spend("2026-11");
      assertThat(spend.nanosByTeam().get("web")).containsExactly(java.util.Map.entry(Tier.SILVER, 30_000_012L));
      assertThat(spend.team("a|b")).isEqualTo(7);
      assertThat(spend.unpriced(Tier.BRONZE)).isEqualTo(1);
      assertThat(reopened.teamSpend("2026-10", "web")).isEqualTo(1);
      assertThat(reopened.claimSpendAlert("2026-11", "web", "alert")).isFalse();
      assertThat(reopened.claimSpendAlert("2026-11", "web", "soft")).isTrue();
    }
  }

  @Test
  void killMinusNineLosesOnlyWhatWasSettledSinceTheLastFlush() throws IOException {
    Path crashed = dir.resolve("after-kill");
    EmbeddedUsageStore store = EmbeddedUsageStore.open(dir.resolve("live"), NEVER_DURING_THE_TEST);
    try {
      use(store, BRONZE, "sandbox", 100);
      store.flush(); // what the flush thread does every quota.flushInterval
      use(store, BRONZE, "sandbox", 7);

      copyFiles(dir.resolve("live"), crashed); // the disk as a kill -9 leaves it: no close, no last flush
    } finally {
      store.close();
    }

    try (EmbeddedUsageStore recovered = EmbeddedUsageStore.open(crashed, NEVER_DURING_THE_TEST)) {
      assertThat(recovered.usage(BRONZE).used()).isEqualTo(100);
      assertThat(recovered.teamUsage("2026-11")).containsEntry("sandbox", 100L);
    }
  }

  @Test
  void theFlushThreadWritesUsageToDiskWithinOneInterval() {
    Path live = dir.resolve("live");
    try (EmbeddedUsageStore store = EmbeddedUsageStore.open(live, Duration.ofMillis(100))) {
      use(store, BRONZE, "sandbox", 42);

      await("usage on disk without close")
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> usedOnDiskAfterKill(live, BRONZE) == 42);
    }
  }

  @Test
  void aSecondGatewayOnTheSameDirectoryIsRefusedClearly() {
    try (EmbeddedUsageStore first = EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST)) {
      assertThatThrownBy(() -> EmbeddedUsageStore.open(dir, NEVER_DURING_THE_TEST))
          .hasMessageContaining("is another gateway using the same directory");
      assertThat(first.usage(BRONZE)).isEqualTo(PoolUsage.ZERO);
    }
  }

  private long usedOnDiskAfterKill(Path live, PoolKey pool) throws IOException {
    Path copy = Files.createTempDirectory(dir, "kill");
    copyFiles(live, copy);
    try (EmbeddedUsageStore recovered = EmbeddedUsageStore.open(copy, NEVER_DURING_THE_TEST)) {
      return recovered.usage(pool).used();
    }
  }

  private static void copyFiles(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path file : files.toList()) {
        Files.copy(file, to.resolve(file.getFileName()));
      }
    }
  }
}
