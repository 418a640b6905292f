package io.spillway.local;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.Durations;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.local.context.ContextWindows;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local server's upkeep, apart from the request path: every {@code local.checkEvery} it probes
 * the server and which mapped models it has, every {@code local.keepWarmEvery} (and at once on
 * {@link #warmUp()}) it loads them, and it learns each model's context window off the request
 * path. What it learned is the {@link #readiness()} snapshot. A missing model or an unreachable
 * server is logged at WARN once per change of state, not on every probe.
 *
 * <p>Time comes from the injected {@link Clock}: the scheduler only calls {@link #tick()}, which
 * does whatever the clock says is due. Thread-safe.
 */
final class LocalUpkeep implements AutoCloseable {
  /** Under the backend's name: operators read these lines as the local backend's. */
  private static final Logger log = LoggerFactory.getLogger(LocalBackend.class);

  private final LocalServer server;
  private final String serverName;
  private final LocalConfig config;
  private final List<String> localModels;
  private final ContextWindows windows;
  /** A model's usable window for its window, what a keep-warm round loads it with before any request. */
  private final IntUnaryOperator usableWindow;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final AtomicReference<LocalReadiness> readiness;
  /** Models whose window a request has asked to learn: once each; the probe retries after that. */
  private final Set<String> askedWindow = ConcurrentHashMap.newKeySet();
  /** The {@code num_ctx} last sent per local model, which keep-warm loads the model with. */
  private final Map<String, Integer> lastNumCtx = new ConcurrentHashMap<>();
  private final ReentrantLock checkLock = new ReentrantLock();
  private final ReentrantLock warmLock = new ReentrantLock();
  private final ReentrantLock tickLock = new ReentrantLock();
  private final Counter checksOk;
  private final Counter checksFailed;
  private final Counter warmsOk;
  private final Counter warmsFailed;
  private Instant nextCheck;
  private Instant nextWarm;
  private volatile ScheduledFuture<?> ticking;

  LocalUpkeep(String serverName, LocalServer server, LocalConfig config, List<String> localModels,
      ContextWindows windows, IntUnaryOperator usableWindow, Clock clock, ScheduledExecutorService scheduler,
      MeterRegistry meters) {
    this.server = server;
    this.serverName = serverName;
    this.config = config;
    this.localModels = localModels;
    this.windows = windows;
    this.usableWindow = usableWindow;
    this.clock = clock;
    this.scheduler = scheduler;
    this.readiness = new AtomicReference<>(
        LocalReadiness.unchecked(server.serverKind(), config.baseUrl(), localModels, server.keepsWarm()));
    Instant now = clock.instant();
    this.nextCheck = now;
    this.nextWarm = now;
    this.checksOk = Counter.builder("spillway.local.checks").tag("result", "ok").register(meters);
    this.checksFailed = Counter.builder("spillway.local.checks").tag("result", "unreachable").register(meters);
    this.warmsOk = Counter.builder("spillway.local.warmups").tag("result", "ok").register(meters);
    this.warmsFailed = Counter.builder("spillway.local.warmups").tag("result", "failed").register(meters);
  }

  /** Starts the schedule: a probe and a keep-warm round now, then as the config says. */
  void start() {
    Duration every = tickInterval(config);
    ticking = scheduler.scheduleWithFixedDelay(this::tickQuietly, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    log.info("local server {} ({}) at {}: checking every {}, keeping {} warm every {}", serverName, server.serverKind(),
        config.baseUrl(), Durations.format(config.checkEvery()), localModels,
        server.keepsWarm() ? Durations.format(config.keepWarmEvery()) : "(not needed for this kind)");
  }

  /**
   * How often the scheduler asks the clock whether work is due: a tenth of the shorter period, so a
   * probe or keep-warm round runs at most that late, kept between 100ms and 10s.
   */
  static Duration tickInterval(LocalConfig config) {
    Duration shortest = config.checkEvery().compareTo(config.keepWarmEvery()) < 0
        ? config.checkEvery() : config.keepWarmEvery();
    Duration tenth = shortest.dividedBy(10);
    Duration min = Duration.ofMillis(100);
    Duration max = Duration.ofSeconds(10);
    return tenth.compareTo(min) < 0 ? min : tenth.compareTo(max) > 0 ? max : tenth;
  }

  /** The last snapshot; never null. */
  LocalReadiness readiness() {
    return readiness.get();
  }

  /**
   * What an answer of the server tells the upkeep: it answers after all (probe now if the last probe
   * said otherwise), and a model that answered successfully is loaded.
   */
  void answered(String localModel, boolean success) {
    if (!readiness.get().reachable()) {
      runAsync(this::checkNow);
    }
    if (localModel != null && success && !readiness.get().loaded().contains(localModel)) {
      readiness.updateAndGet(r -> r.withLoaded(localModel));
    }
  }

  /** A request sent {@code numCtx} for {@code localModel}: keep-warm loads it with the same. */
  void used(String localModel, int numCtx) {
    lastNumCtx.put(localModel, numCtx);
  }

  /** Asks the server for {@code localModel}'s window in the background, once from the request path. */
  void learnWindowAsync(String localModel) {
    if (askedWindow.add(localModel)) {
      runAsync(() -> learnWindow(localModel));
    }
  }

  private void learnWindow(String localModel) {
    if (windows.known(localModel)) {
      return;
    }
    windows.learned(localModel, server.contextWindow(localModel));
    if (windows.known(localModel)) {
      log.info("local backend: model {} has a context window of {} tokens", localModel, windows.of(localModel));
    }
  }

  /** Loads the mapped models in the background, unless a keep-warm round is already running. */
  void warmUp() {
    if (server.keepsWarm() && !warmLock.isLocked()) {
      runAsync(this::warmNow);
    }
  }

  /** Probes the server now (blocking) and returns the new snapshot. */
  LocalReadiness checkNow() {
    checkLock.lock();
    try {
      LocalServer.Probe probe = server.probe(localModels);
      Instant now = clock.instant();
      LocalReadiness before = readiness.get();
      LocalReadiness after = readiness.updateAndGet(r -> r.withProbe(probe, now));
      (probe.reachable() ? checksOk : checksFailed).increment();
      logChange(before, after);
      if (after.reachable()) {
        for (String model : localModels) {
          if (!after.missingModels().contains(model)) {
            learnWindow(model);
          }
        }
      }
      if (server.keepsWarm() && before.checked() && after.reachable()
          && (!before.reachable() || !after.missingModels().containsAll(before.missingModels()))) {
        // The server came back, or a model was pulled: load now rather than at the next round.
        warmUp();
      }
      return after;
    } finally {
      checkLock.unlock();
    }
  }

  /**
   * Loads every mapped model the server has (blocking), one after the other, so that each stays
   * loaded for {@code local.keepAlive}. Skipped while the server is unreachable.
   */
  void warmNow() {
    if (!server.keepsWarm()) {
      return;
    }
    warmLock.lock();
    try {
      LocalReadiness current = readiness.get();
      if (!current.reachable()) {
        log.debug("local backend unreachable; keep-warm round skipped");
        return;
      }
      List<String> failures = new ArrayList<>();
      List<String> warmed = new ArrayList<>();
      List<String> missing = current.missingModels();
      for (String model : localModels) {
        if (missing.contains(model)) {
          continue;
        }
        try {
          server.load(model, warmContext(model));
          warmed.add(model);
        } catch (GatewayException e) {
          failures.add(model + ": " + e.getMessage());
          if (e instanceof UpstreamException upstream
              && upstream.failure() == UpstreamException.Failure.CONNECT_FAILED) {
            markUnreachable(e.getMessage());
            break;
          }
        }
      }
      Instant now = clock.instant();
      String error = failures.isEmpty() ? null : String.join("; ", failures);
      LocalReadiness before = readiness.getAndUpdate(r -> r.withWarm(now, error, warmed));
      if (error == null) {
        warmsOk.increment();
        if (before.warmError() != null) {
          log.info("local backend: keep-warm works again");
        }
      } else {
        warmsFailed.increment();
        if (!error.equals(before.warmError())) {
          log.warn("local backend: keep-warm failed: {}", error);
        }
      }
    } finally {
      warmLock.unlock();
    }
  }

  /**
   * The context size a keep-warm round loads {@code model} with: what requests for it last used, or
   * before any, its usable window (the size a long agent conversation gets), so that neither a
   * keep-warm round nor the first request after a switch-over makes Ollama reload the model.
   */
  int warmContext(String model) {
    Integer last = lastNumCtx.get(model);
    return last != null ? last : usableWindow.applyAsInt(windows.of(model));
  }

  /** Runs the probe and the keep-warm round if the clock says they are due. */
  void tick() {
    tickLock.lock();
    try {
      Instant now = clock.instant();
      if (!now.isBefore(nextCheck)) {
        nextCheck = now.plus(config.checkEvery());
        checkNow();
      }
      if (server.keepsWarm() && !now.isBefore(nextWarm)) {
        nextWarm = now.plus(config.keepWarmEvery());
        warmNow();
      }
    } finally {
      tickLock.unlock();
    }
  }

  private void tickQuietly() {
    try {
      tick();
    } catch (RuntimeException e) {
      // A failing round must not cancel the schedule.
      log.warn("local backend: readiness/keep-warm round failed", e);
    }
  }

  private void runAsync(Runnable task) {
    try {
      scheduler.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          log.warn("local backend: background task failed", e);
        }
      });
    } catch (RejectedExecutionException e) {
      log.debug("local backend: scheduler is shut down; {} not run", task);
    }
  }

  /** The server could not be reached by a request or a load: unreachable until the next probe says otherwise. */
  void markUnreachable(String why) {
    Instant now = clock.instant();
    LocalReadiness before = readiness.get();
    LocalReadiness after = readiness.updateAndGet(
        r -> r.withProbe(LocalServer.Probe.unreachable(why), now));
    logChange(before, after);
  }

  private void logChange(LocalReadiness before, LocalReadiness after) {
    if (before.reachable() && !after.reachable()) {
      log.warn("local server {} ({}) is unreachable: {}", serverName, after.kind(),
          String.join("; ", after.problems()));
    } else if (!before.reachable() && after.reachable()) {
      log.info("local server {} ({}) answers again{}", serverName, after.kind(),
          after.version() != null ? " (version " + after.version() + ")" : "");
    } else if (!before.checked() && after.checked() && after.reachable()) {
      log.info("local server {} ({}) answers{}", serverName, after.kind(),
          after.version() != null ? " (version " + after.version() + ")" : "");
    }
    if (after.reachable() && !after.missingModels().equals(before.missingModels())) {
      if (after.missing().isEmpty()) {
        log.info("local backend: every mapped model is present: {}", after.models());
      } else {
        for (LocalReadiness.MissingModel missing : after.missing()) {
          log.warn("local server {}: model '{}' is missing; fix: {}", serverName, missing.model(), missing.fix());
        }
      }
    }
  }

  /** Stops the schedule; the scheduler itself belongs to the caller. */
  @Override
  public void close() {
    ScheduledFuture<?> future = ticking;
    if (future != null) {
      future.cancel(false);
    }
  }
}
