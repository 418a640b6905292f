package io.spillway.local;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.config.LocalConfig;
import io.spillway.config.LocalServerConfig;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.json.Json;
import io.spillway.local.anthropic.LocalMessages;
import io.spillway.trim.TrimSettings;
import io.spillway.local.context.ContextFitter;
import io.spillway.local.context.ContextWindows;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local backend as the router sees it: a {@link LocalServer} (Ollama or any OpenAI-compatible
 * server) kept ready and warm.
 *
 * <p>This class is the request path; the schedule is {@link LocalUpkeep}'s: every
 * {@code local.checkEvery} it probes the server and which mapped models it has; every
 * {@code local.keepWarmEvery}, and at once on {@link #warmUp()}, it loads the mapped models so that a
 * switch-over does not pay a cold load. What it learned is the {@link #readiness()} snapshot that
 * {@link #ready()}, {@code /readyz} and {@code /admin/status} read.
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
  /** Readiness, keep-warm and learning windows: the schedule, off the request path. */
  private final LocalUpkeep upkeep;
  private final Counter fitsCut;
  private final Counter fitsRefused;
  /** Anthropic's Messages API on this server: its own endpoint or the translation, and pings. */
  private final LocalMessages messages;

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
    this.upkeep = new LocalUpkeep(serverName, server, config, models.localModels(), windows, fitter::usableWindow,
        clock, scheduler, meters);
    Gauge.builder("spillway.local.ready", this, b -> b.ready() ? 1 : 0).tag("server", serverName)
        .description("1 when the local server answers and has its default model").register(meters);
    Gauge.builder("spillway.local.models.missing", this, b -> b.readiness().missing().size()).tag("server", serverName)
        .description("mapped local models the local server does not have").register(meters);
    this.fitsCut = Counter.builder("spillway.local.context.fits").tag("result", "cut")
        .description("requests cut to fit the local model's context window").register(meters);
    this.fitsRefused = Counter.builder("spillway.local.context.fits").tag("result", "refused")
        .description("requests refused because they do not fit the local model's context window").register(meters);
    this.messages = new LocalMessages(config.messages(), scheduler, TranslatedRequest.droppedCounter(meters));
  }

  /** Starts the schedule: a probe and a keep-warm round now, then as the config says. */
  public LocalBackend start() {
    upkeep.start();
    return this;
  }

  /** How often the scheduler asks the clock whether work is due (see {@link LocalUpkeep#tickInterval}). */
  static Duration tickInterval(LocalConfig config) {
    return LocalUpkeep.tickInterval(config);
  }

  @Override
  public BackendKind kind() {
    return BackendKind.LOCAL;
  }

  /** The server's name in {@code local.servers} ({@code local} for the one-server shorthand). */
  public String serverName() {
    return serverName;
  }

  /**
   * Fits the request (on this thread: CPU work only) and calls the server through its own
   * {@link LocalServer#callAsync}: an OpenAI-kind server over the data path's client answers
   * without a thread; one that blocks (Ollama) runs its call where blocking is allowed.
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    if (request.route() == Route.MESSAGES) {
      try {
        return messages.call(request, server.servesMessages() ? this::callServer : null, this::callAsync,
            this::fitsAsSent);
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
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
          upkeep.markUnreachable(e.getMessage());
        }
        return;
      }
      answered(request, response, localModel, degraded);
    });
  }

  /**
   * A Messages request passed to the server's own {@code /v1/messages} as it came (see
   * {@link LocalMessages}): nothing to fit, the server's answer judged as any other.
   */
  private CompletionStage<GatewayResponse> callServer(GatewayRequest request) {
    String localModel = models.map(request.model());
    return server.callAsync(request).whenComplete((response, failure) -> {
      if (failure != null) {
        if (Blocking.cause(failure) instanceof UpstreamException e
            && e.failure() == UpstreamException.Failure.CONNECT_FAILED) {
          upkeep.markUnreachable(e.getMessage());
        }
        return;
      }
      answered(request, response, localModel, false);
    });
  }

  /** Whether a chat body (a Messages request as the translation writes it) fits its model's window uncut. */
  private boolean fitsAsSent(com.fasterxml.jackson.databind.node.ObjectNode chatBody) {
    String localModel = models.map(Json.text(chatBody, "model"));
    if (!windows.known(localModel)) {
      upkeep.learnWindowAsync(localModel);
    }
    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, chatBody, windows.of(localModel));
    return fit.fits() && !fit.cut();
  }

  private void answered(GatewayRequest request, GatewayResponse response, String localModel, boolean cut) {
    // An answer although the last probe said none would come: the upkeep finds out now, not in a minute.
    upkeep.answered(localModel, response.status() < 400);
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
      upkeep.learnWindowAsync(localModel);
    }
    int window = windows.of(localModel);
    ContextFitter.Fit fit = fitter.fit(request.route(), request.body(), window);
    if (fit.fits()) {
      upkeep.used(localModel, fit.numCtx());
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

  @Override
  public boolean ready() {
    return upkeep.readiness().ready();
  }

  /** Loads the mapped models in the background, unless a keep-warm round is already running. */
  @Override
  public void warmUp() {
    upkeep.warmUp();
  }

  /** The last snapshot; never null. */
  public LocalReadiness readiness() {
    return upkeep.readiness();
  }

  /** The mapping of requested to local models this backend serves with. */
  public ModelMapping models() {
    return models;
  }

  /** Probes the server now (blocking) and returns the new snapshot. */
  public LocalReadiness checkNow() {
    return upkeep.checkNow();
  }

  /** Loads every mapped model the server has (blocking); skipped while the server is unreachable. */
  public void warmNow() {
    upkeep.warmNow();
  }

  /** The context size a keep-warm round loads {@code model} with (see {@link LocalUpkeep#warmContext}). */
  int warmContext(String model) {
    return upkeep.warmContext(model);
  }

  /** Runs the probe and the keep-warm round if the clock says they are due. */
  public void tick() {
    upkeep.tick();
  }

  /** Stops the schedule; the scheduler itself belongs to the caller. */
  @Override
  public void close() {
    upkeep.close();
    if (server instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        log.debug("closing the local server client failed", e);
      }
    }
  }
}
