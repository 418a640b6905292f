package io.spillway.local;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.config.Durations;
import io.spillway.config.LocalConfig;
import io.spillway.config.LocalServerConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.trim.TrimSettings;
import io.spillway.local.context.ContextFitter;
import io.spillway.local.context.ContextWindows;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local backend as the router sees it: a {@link LocalServer} (Ollama or any OpenAI-compatible
 * server) kept ready and warm.
 *
 * <p>Every {@code local.checkEvery} it probes the server and which mapped models it has; every
 * {@code local.keepWarmEvery}, and at once on {@link #warmUp()}, it loads the mapped models so that a
 * switch-over does not pay a cold load. What it learned is the {@link #readiness()} snapshot that
 * {@link #ready()}, {@code /readyz} and {@code /admin/status} read. A missing model or an unreachable
 * server is logged at WARN once per change of state, not on every probe.
 *
 * <p>Every request is fitted to the mapped model's context window before it goes out (see
 * {@link ContextFitter}): its {@code num_ctx} is set in {@link ContextFitter#NUM_CTX} for Ollama, and
 * when anything was cut the request's {@link RequestOutcome} names {@value ContextFitter#STEP} among
 * its degraded steps (the headers stage writes them as {@code x-spillway-degraded}). A conversation that cannot
 * be made to fit is refused with 503 {@code unsupported_on_local}. Each model's window is asked of
 * the server by the readiness probe, once, off the request path.
 *
 * <p>Time comes from the injected {@link Clock}: the scheduler only calls {@link #tick()}, which does
 * whatever the clock says is due, so tests drive the schedule with a fake clock and {@code tick()},
 * or directly with {@link #checkNow()} and {@link #warmNow()}. Thread-safe.
 */
public final class LocalBackend implements Backend, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalBackend.class);
  /** The API a request came in on, as a refusal names it. */
  private static final Map<Route, String> API = Map.of(Route.CHAT_COMPLETIONS, "Chat Completions API",
      Route.COMPLETIONS, "Completions API", Route.RESPONSES, "Responses API");

  private final LocalServer server;
  /** The server's name in {@code local.servers} ({@code local} for the one-server shorthand). */
  private final String serverName;
  private final LocalConfig config;
  private final ModelMapping models;
  private final ContextFitter fitter;
  private final ContextWindows windows;
  /** Models whose window a request has asked to learn: once each; the probe retries after that. */
  private final Set<String> askedWindow = ConcurrentHashMap.newKeySet();
  /** The {@code num_ctx} last sent per local model, which keep-warm loads the model with. */
  private final Map<String, Integer> lastNumCtx = new ConcurrentHashMap<>();
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final AtomicReference<LocalReadiness> readiness;
  private final ReentrantLock checkLock = new ReentrantLock();
  private final ReentrantLock warmLock = new ReentrantLock();
  private final ReentrantLock tickLock = new ReentrantLock();
  private final Counter checksOk;
  private final Counter checksFailed;
  private final Counter warmsOk;
  private final Counter warmsFailed;
  private final Counter fitsCut;
  private final Counter fitsRefused;
  private Instant nextCheck;
  private Instant nextWarm;
  private volatile ScheduledFuture<?> ticking;

  /**
   * Builds the backend without starting its schedule (see {@link #start()}).
   *
   * @param scheduler runs {@link #tick()} and the asynchronous {@link #warmUp()}; owned by the caller
   */
  public LocalBackend(
      LocalServer server, LocalConfig config, Clock clock, ScheduledExecutorService scheduler, MeterRegistry meters) {
    this(server, config, TrimSettings.DEFAULTS, clock, scheduler, meters);
  }

  /**
   * Builds the backend without starting its schedule (see {@link #start()}).
   *
   * @param trim what the code-aware trimmer keeps of a tool output when a request is fitted
   * @param scheduler runs {@link #tick()} and the asynchronous {@link #warmUp()}; owned by the caller
   */
  public LocalBackend(LocalServer server, LocalConfig config, TrimSettings trim, Clock clock,
      ScheduledExecutorService scheduler, MeterRegistry meters) {
    this(LocalServerConfig.SHORTHAND_NAME, server, config, trim, clock, scheduler, meters);
  }

  /**
   * Builds the backend of the server named {@code serverName} in {@code local.servers} without
   * starting its schedule (see {@link #start()}); its gauges carry the tag {@code server}.
   *
   * @param config the config as this server sees it ({@link LocalConfig#forServer})
   */
  public LocalBackend(String serverName, LocalServer server, LocalConfig config, TrimSettings trim, Clock clock,
      ScheduledExecutorService scheduler, MeterRegistry meters) {
    this.server = Objects.requireNonNull(server);
    this.serverName = Objects.requireNonNull(serverName);
    this.config = config;
    this.models = new ModelMapping(config);
    this.fitter = new ContextFitter(config.context(), trim);
    this.windows = new ContextWindows(config);
    this.clock = clock;
    this.scheduler = scheduler;
    this.readiness = new AtomicReference<>(
        LocalReadiness.unchecked(server.kind(), config.baseUrl(), models.localModels(), server.keepsWarm()));
    Instant now = clock.instant();
    this.nextCheck = now;
    this.nextWarm = now;
    Gauge.builder("spillway.local.ready", this, b -> b.ready() ? 1 : 0).tag("server", serverName)
        .description("1 when the local server answers and has its default model").register(meters);
    Gauge.builder("spillway.local.models.missing", this, b -> b.readiness().missing().size()).tag("server", serverName)
        .description("mapped local models the local server does not have").register(meters);
    this.checksOk = Counter.builder("spillway.local.checks").tag("result", "ok").register(meters);
    this.checksFailed = Counter.builder("spillway.local.checks").tag("result", "unreachable").register(meters);
    this.warmsOk = Counter.builder("spillway.local.warmups").tag("result", "ok").register(meters);
    this.warmsFailed = Counter.builder("spillway.local.warmups").tag("result", "failed").register(meters);
    this.fitsCut = Counter.builder("spillway.local.context.fits").tag("result", "cut")
        .description("requests cut to fit the local model's context window").register(meters);
    this.fitsRefused = Counter.builder("spillway.local.context.fits").tag("result", "refused")
        .description("requests refused because they do not fit the local model's context window").register(meters);
  }

  /** Starts the schedule: a probe and a keep-warm round now, then as the config says. */
  public LocalBackend start() {
    Duration every = tickInterval(config);
    ticking = scheduler.scheduleWithFixedDelay(this::tickQuietly, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    log.info("local server {} ({}) at {}: checking every {}, keeping {} warm every {}", serverName, server.kind(),
        config.baseUrl(), Durations.format(config.checkEvery()), models.localModels(),
        server.keepsWarm() ? Durations.format(config.keepWarmEvery()) : "(not needed for this kind)");
    return this;
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

  @Override
  public String name() {
    return server.name();
  }

  /** The server's name in {@code local.servers} ({@code local} for the one-server shorthand). */
  public String serverName() {
    return serverName;
  }

  /** {@link #callAsync}, waited for on the calling (virtual) thread. */
  @Override
  public GatewayResponse call(GatewayRequest request) {
    return Blocking.await(callAsync(request));
  }

  /**
   * Fits the request (on this thread: CPU work only) and calls the server through its own
   * {@link LocalServer#callAsync}: an OpenAI-kind server over the data path's client answers
   * without a thread; one that blocks (Ollama) runs its call where blocking is allowed.
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    GatewayRequest outgoing = request;
    boolean cut = false;
    String localModel = models.map(request.model());
    CompletionStage<GatewayResponse> answer;
    try {
      if (request.route() != Route.EMBEDDINGS) {
        ContextFitter.Fit fit = fit(request);
        outgoing = fit.body() == request.body() ? request : request.withBody(fit.body());
        outgoing.setAttribute(ContextFitter.NUM_CTX, fit.numCtx());
        cut = fit.cut();
      }
      answer = server.callAsync(outgoing);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    boolean degraded = cut;
    return answer.whenComplete((response, failure) -> {
      if (failure != null) {
        if (Blocking.cause(failure) instanceof UpstreamException e
            && e.failure() == UpstreamException.Failure.CONNECT_FAILED) {
          markUnreachable(e.getMessage());
        }
        return;
      }
      answered(request, response, localModel, degraded);
    });
  }

  private void answered(GatewayRequest request, GatewayResponse response, String localModel, boolean cut) {
    if (!readiness.get().reachable()) {
      // The server answered although the last probe said it would not: find out now, not in a minute.
      runAsync(this::checkNow);
    }
    if (localModel != null && response.status() < 400 && !readiness.get().loaded().contains(localModel)) {
      readiness.updateAndGet(r -> r.withLoaded(localModel));
    }
    if (cut && response.status() < 400) {
      RequestOutcome.of(request).degrade(ContextFitter.STEP); // the headers stage writes x-spillway-degraded
    }
  }

  /**
   * Fits the request to its local model's window, or refuses it when it cannot be made to fit. A
   * window not yet learned is asked for in the background (once from the request path; the probe
   * asks again every {@code local.checkEvery} until it is known); this request uses the default.
   */
  private ContextFitter.Fit fit(GatewayRequest request) {
    String localModel = models.map(request.model());
    if (!windows.known(localModel)) {
      learnWindowAsync(localModel);
    }
    int window = windows.of(localModel);
    ContextFitter.Fit fit = fitter.fit(request.route(), request.body(), window);
    if (fit.fits()) {
      lastNumCtx.put(localModel, fit.numCtx());
    }
    if (!fit.fits()) {
      fitsRefused.increment();
      // No Retry-After of its own: the router answers the refusal (the cloud may serve it).
      throw new UnsupportedOnLocalException(List.of("a request of about " + fit.promptTokens()
              + " tokens plus room for the answer (the context window of the local model " + localModel + " has "
              + fit.window() + " tokens usable, and even with old tool outputs shortened and old turns dropped, the "
              + "instructions, tool definitions and latest message do not fit)"),
          API.getOrDefault(request.route(), "API"),
          request.route() == Route.COMPLETIONS ? "prompt" : request.route() == Route.RESPONSES ? "input" : "messages",
          "send a shorter request");
    }
    if (fit.cut()) {
      fitsCut.increment();
      log.info("request {}: fitted to the local model {} ({} tokens usable, window from {}): {}; about {} tokens "
          + "sent, num_ctx {}", request.id(), localModel, fit.window(), windows.source(localModel), fit.summary(),
          fit.promptTokens(), fit.numCtx());
    }
    return fit;
  }

  /** The context windows used for fitting (configured, learned or default). */
  public ContextWindows contextWindows() {
    return windows;
  }

  private void learnWindowAsync(String localModel) {
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

  @Override
  public boolean ready() {
    return readiness.get().ready();
  }

  /** Loads the mapped models in the background, unless a keep-warm round is already running. */
  @Override
  public void warmUp() {
    if (server.keepsWarm() && !warmLock.isLocked()) {
      runAsync(this::warmNow);
    }
  }

  /** The last snapshot; never null. */
  public LocalReadiness readiness() {
    return readiness.get();
  }

  /** The mapping of requested to local models this backend serves with. */
  public ModelMapping models() {
    return models;
  }

  /** Probes the server now (blocking) and returns the new snapshot. */
  public LocalReadiness checkNow() {
    checkLock.lock();
    try {
      LocalServer.Probe probe = server.probe(models.localModels());
      Instant now = clock.instant();
      LocalReadiness before = readiness.get();
      LocalReadiness after = readiness.updateAndGet(r -> r.withProbe(probe, now));
      (probe.reachable() ? checksOk : checksFailed).increment();
      logChange(before, after);
      if (after.reachable()) {
        for (String model : models.localModels()) {
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
  public void warmNow() {
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
      for (String model : models.localModels()) {
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
    return last != null ? last : fitter.usableWindow(windows.of(model));
  }

  /** Runs the probe and the keep-warm round if the clock says they are due. */
  public void tick() {
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

  private void markUnreachable(String why) {
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
    if (server instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        log.debug("closing the local server client failed", e);
      }
    }
  }
}
