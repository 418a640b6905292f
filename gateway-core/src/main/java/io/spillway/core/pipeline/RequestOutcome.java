package io.spillway.core.pipeline;

import java.util.ArrayList;
import java.util.List;

/**
 * What became of one request, written by the stages that decide it and read by those that report it:
 * the router (and the model list's service) say which kind of backend and which cloud route served,
 * why the cloud was tried instead of local, and whether shaping's preference for local was taken, the cache whether it answered, shaping and the local backend what they degraded
 * and dropped, token reporting the usage a stream reported. The observer, the cache and the
 * {@code x-spillway-*} headers stage read it; no stage reads another's response headers.
 *
 * <p>One per request, shared by all its copies: get it with {@link #of}. Written on the request's
 * thread, except the usage, which a stream reports on whichever thread reads it; every field is
 * safe to read from any thread.
 */
public final class RequestOutcome {
  private static final Attribute<RequestOutcome> KEY = Attribute.of("outcome");

  /** The cache's part: {@code hit}, {@code miss} or {@code bypass}; null when the cache did not run. */
  public enum CacheStatus {
    HIT, MISS, BYPASS;

    /** The value of {@code x-spillway-cache} and of the access log's {@code cache} field. */
    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** Tokens a stream reported in its usage chunk. */
  public record Usage(long promptTokens, long completionTokens) {}

  /**
   * Shaping's local step as the degraded steps spell it: listed while the router sends a request
   * shaping preferred local to the local backend (see {@link #localByPreference}).
   */
  public static final String LOCAL_STEP = "local";

  private volatile BackendKind backend;
  private volatile boolean localByPreference;
  private volatile String route;
  private volatile String fallback;
  private volatile CacheStatus cache;
  private volatile List<String> degraded = List.of();
  private volatile List<String> droppedParams = List.of();
  private volatile Usage usage;

  /** The request's outcome, made on first use. */
  public static RequestOutcome of(GatewayRequest request) {
    RequestOutcome outcome = request.attribute(KEY);
    if (outcome == null) {
      outcome = new RequestOutcome();
      request.setAttribute(KEY, outcome);
    }
    return outcome;
  }

  /** The kind of backend that served (or refused) the request; null when none ran. */
  public BackendKind backend() {
    return backend;
  }

  /**
   * Who answered: the {@link #backend()} that served, or {@link BackendKind#CACHE} for an answer the
   * cache gave without any backend running; null when neither did.
   */
  public BackendKind answeredBy() {
    BackendKind served = backend;
    return served != null ? served : cache == CacheStatus.HIT ? BackendKind.CACHE : null;
  }

  /**
   * Records the kind of backend that served (or refused) the request. Any kind but
   * {@link BackendKind#LOCAL} also ends {@link #localByPreference}: the request went elsewhere after all.
   */
  public void servedBy(BackendKind backend) {
    this.backend = backend;
    if (backend != BackendKind.LOCAL) {
      localByPreference(false);
    }
  }

  /**
   * Whether the router took the request to the local backend while shaping preferred local
   * ({@link RequestAttributes#PREFER_LOCAL}): then shaping's local step applied, and
   * {@link #degraded()} lists {@link #LOCAL_STEP}. Written only by the router.
   */
  public boolean localByPreference() {
    return localByPreference;
  }

  /**
   * The router's record: {@code true} when it sends a request shaping preferred local to the local
   * backend (the step is listed, in order, before what the local backend adds); it ends when the
   * request is then served by another kind of backend after all ({@link #servedBy}), which takes
   * the step back out.
   */
  public void localByPreference(boolean taken) {
    if (taken == localByPreference) {
      return;
    }
    localByPreference = taken;
    if (taken) {
      degrade(LOCAL_STEP);
    } else {
      undo(LOCAL_STEP);
    }
  }

  /** The cloud route that served (or, for an error, was tried last), by its name; null when none did. */
  public String route() {
    return route;
  }

  public void route(String name) {
    this.route = name;
  }

  /** Why the cloud was tried because local could not serve ({@code local_not_ready}, ...), or null. */
  public String fallback() {
    return fallback;
  }

  public void fellBack(String cause) {
    this.fallback = cause;
  }

  public CacheStatus cache() {
    return cache;
  }

  public void cache(CacheStatus status) {
    this.cache = status;
  }

  /** The shaping steps applied to the request, in order (also the local backend's context cut). */
  public List<String> degraded() {
    return degraded;
  }

  /** Appends {@code steps} to {@link #degraded()}. */
  public void degrade(List<String> steps) {
    if (steps.isEmpty()) {
      return;
    }
    List<String> all = new ArrayList<>(degraded);
    all.addAll(steps);
    degraded = List.copyOf(all);
  }

  public void degrade(String step) {
    degrade(List.of(step));
  }

  /** Takes {@code step} back out of {@link #degraded()}: it turned out not to apply. */
  private void undo(String step) {
    List<String> all = new ArrayList<>(degraded);
    all.remove(step);
    degraded = List.copyOf(all);
  }

  /** The request fields the local backend could not honour and left out, in the order found. */
  public List<String> droppedParams() {
    return droppedParams;
  }

  public void dropped(List<String> params) {
    this.droppedParams = List.copyOf(params);
  }

  /** The usage a stream reported, or null (a buffered answer carries its own in its body). */
  public Usage usage() {
    return usage;
  }

  /**
   * Notes the usage a stream reported; a count it lacks (-1) keeps the one reported before, since
   * Anthropic's streams tell the input in their first event and the output in a later one.
   */
  public void reported(Usage usage) {
    Usage before = this.usage;
    if (before != null && (usage.promptTokens() < 0 || usage.completionTokens() < 0)) {
      usage = new Usage(usage.promptTokens() < 0 ? before.promptTokens() : usage.promptTokens(),
          usage.completionTokens() < 0 ? before.completionTokens() : usage.completionTokens());
    }
    this.usage = usage;
  }
}
