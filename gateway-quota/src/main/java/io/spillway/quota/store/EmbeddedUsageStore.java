package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Durable usage and spend in one H2 MVStore file ({@code <dir>/usage.mv.db}), for a single gateway.
 *
 * <p>Requests count in memory (a {@link MemoryUsageStore}); a background thread writes the
 * settled counters (tokens, and spend in nano-dollars per month, team and tier) to the file every
 * {@code quota.flushInterval}, from one consistent {@link LedgerCut} (so the pool totals on disk are
 * always what their teams add up to), and {@link #close} writes them a last time. So a graceful stop loses nothing, and a {@code kill -9} loses at most the usage settled
 * since the last flush: one interval. Reservations of running requests are not written: after a
 * restart there are none.
 *
 * <p>The file is locked while open; a second gateway on the same directory fails at start.
 */
public final class EmbeddedUsageStore implements UsageStore {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedUsageStore.class);
  static final String FILE_NAME = "usage.mv.db";

  private final Path file;
  private final MVStore mv;
  private final MVMap<String, Long> poolUsed;
  private final MVMap<String, Long> teamUsed;
  private final MVMap<String, Boolean> alertsSent;
  private final MVMap<String, Long> spendNanos;
  private final MVMap<String, Long> spendUnpriced;
  private final MemoryUsageStore ledger = new MemoryUsageStore();
  private final ScheduledExecutorService flusher;
  private final Clock clock;
  private long flushedChanges = -1;
  private volatile Instant durableAsOf;
  private boolean closed;

  private EmbeddedUsageStore(Path file, MVStore mv, Duration flushInterval, Clock clock) {
    this.file = file;
    this.clock = clock;
    this.mv = mv;
    this.poolUsed = mv.openMap("poolUsed");
    this.teamUsed = mv.openMap("teamUsed");
    this.alertsSent = mv.openMap("alertsSent");
    this.spendNanos = mv.openMap("spendNanos");
    this.spendUnpriced = mv.openMap("spendUnpriced");
    load();
    this.flushedChanges = ledger.changes();
    this.flusher = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-usage-flush").daemon(true).factory());
    long every = Math.max(1, flushInterval.toMillis());
    flusher.scheduleWithFixedDelay(this::flushQuietly, every, every, TimeUnit.MILLISECONDS);
  }

  /** Opens (or creates) the store in {@code dir}, flushing every {@code flushInterval}. */
  public static EmbeddedUsageStore open(Path dir, Duration flushInterval) {
    return open(dir, flushInterval, Clock.systemUTC());
  }

  /**
   * Opens (or creates) the store in {@code dir}, flushing every {@code flushInterval}; {@code clock}
   * stamps {@link StoreStatus#durableAsOf()}.
   */
  public static EmbeddedUsageStore open(Path dir, Duration flushInterval, Clock clock) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the usage store directory " + dir, e);
    }
    Path file = dir.resolve(FILE_NAME);
    MVStore mv;
    try {
      mv = new MVStore.Builder().fileName(file.toString()).autoCommitDisabled().open();
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot open the usage store " + file
          + " (is another gateway using the same directory?): " + e.getMessage(), e);
    }
    return new EmbeddedUsageStore(file, mv, flushInterval, clock);
  }

  private void load() {
    poolUsed.forEach((key, used) -> {
      String[] parts = key.split("\\|", 2);
      ledger.addUsage(new PoolKey(parts[0], Tier.parse(parts[1])), null, used);
    });
    teamUsed.forEach((key, used) -> {
      String[] parts = key.split("\\|", 2);
      ledger.addTeamOnly(parts[0], parts[1], used);
    });
    alertsSent.keySet().forEach(ledger::markAlert);
    spendNanos.forEach((key, nanos) -> {
      // month|team|tier; a team name may itself contain '|'
      int first = key.indexOf('|');
      int last = key.lastIndexOf('|');
      ledger.addSpendOnly(key.substring(0, first), key.substring(first + 1, last), Tier.parse(key.substring(last + 1)),
          nanos);
    });
    spendUnpriced.forEach((key, count) -> {
      String[] parts = key.split("\\|", 2);
      ledger.addUnpriced(parts[0], Tier.parse(parts[1]), count);
    });
  }

  @Override
  public ReserveOutcome reserve(PoolKey pool, String team, long tokens, long ceiling) {
    return ledger.reserve(pool, team, tokens, ceiling);
  }

  @Override
  public PoolUsage settle(Hold hold, long actualTokens) {
    return ledger.settle(hold, actualTokens);
  }

  @Override
  public PoolUsage usage(PoolKey pool) {
    return ledger.usage(pool);
  }

  @Override
  public Map<String, Long> teamUsage(String month) {
    return ledger.teamUsage(month);
  }

  @Override
  public boolean claimAlert(PoolKey pool, String band) {
    return ledger.claimAlert(pool, band);
  }

  @Override
  public void addSpend(String month, String team, Tier tier, long nanos, boolean unpriced) {
    ledger.addSpend(month, team, tier, nanos, unpriced);
  }

  @Override
  public MonthSpend spend(String month) {
    return ledger.spend(month);
  }

  @Override
  public boolean claimSpendAlert(String month, String team, String band) {
    return ledger.claimSpendAlert(month, team, band);
  }

  /**
   * Writes the settled counters to the file and commits, if anything changed since the last flush.
   * Runs on the flush thread every interval and once more on close.
   */
  public synchronized void flush() {
    if (closed) {
      return;
    }
    // Taken before the cut: whatever settled before it is in this flush.
    Instant startedAt = clock.instant();
    if (ledger.changes() == flushedChanges) {
      // A change still under way is not counted yet either: the next flush takes it.
      durableAsOf = startedAt;
      return;
    }
    LedgerCut cut = ledger.cut();
    cut.poolUsed().forEach((key, used) -> poolUsed.put(key.month() + "|" + key.tier().tag(), used));
    cut.teamUsed().forEach((month, teams) -> teams.forEach((team, used) -> teamUsed.put(month + "|" + team, used)));
    cut.spendNanos().forEach((month, teams) -> teams.forEach((team, tiers) -> tiers.forEach((tier, nanos) ->
        spendNanos.put(month + "|" + team + "|" + tier.tag(), nanos))));
    cut.unpriced().forEach((month, tiers) -> tiers.forEach((tier, count) ->
        spendUnpriced.put(month + "|" + tier.tag(), count)));
    for (String alert : cut.alerts()) {
      alertsSent.putIfAbsent(alert, Boolean.TRUE);
    }
    mv.commit();
    mv.sync();
    flushedChanges = cut.changes();
    durableAsOf = startedAt;
  }

  private void flushQuietly() {
    try {
      flush();
    } catch (RuntimeException e) {
      log.error("writing quota usage to {} failed; will retry in the next interval", file, e);
    }
  }

  @Override
  public StoreStatus status() {
    return new StoreStatus("embedded", file.toString(), true, 0, durableAsOf);
  }

  @Override
  public void close() {
    flusher.shutdown();
    // A flush already running holds the monitor; this waits for it and then writes the rest.
    synchronized (this) {
      if (closed) {
        return;
      }
      flush();
      closed = true;
      mv.close();
    }
  }
}
