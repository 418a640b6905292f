package io.spillway.cache;

import io.spillway.cache.CachePolicy.Decision;
import io.spillway.cache.InFlightCall.Outcome;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.RequestOutcome.CacheStatus;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The cache stage. Right after authentication, it answers a repeat of a deterministic request from
 * the cache, or joins it to an identical call already in flight; only the first of a burst goes on
 * through shaping, quota, admission and the router. Every response that passes through it carries
 * {@code x-spillway-cache}: {@code hit} (answered without an upstream call of its own: from the
 * cache, or shared from an identical call in flight), {@code miss} (went upstream; a successful,
 * complete answer is stored) or {@code bypass} (not cacheable, or opted out).
 */
final class CacheInterceptor implements Interceptor {
  private final ResponseCache cache;

  CacheInterceptor(ResponseCache cache) {
    this.cache = cache;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Caller caller = request.attribute(RequestAttributes.CALLER);
    Decision decision = cache.policy.decide(request, caller);
    return switch (decision.mode()) {
      case BYPASS -> {
        cache.metrics.bypass(decision.reason(), request.route());
        yield chain.proceedAnswering(request).thenApply(response -> tagged(request, response, CacheStatus.BYPASS));
      }
      case REFRESH -> {
        cache.metrics.request("refresh", request.route());
        yield lead(chain, request, caller, decision.key(), null);
      }
      case LOOKUP -> lookup(chain, request, caller, decision.key());
    };
  }

  private CompletionStage<GatewayResponse> lookup(Chain chain, GatewayRequest request, Caller caller, CacheKey key) {
    CachedAnswer answer = cache.get(key);
    if (answer != null) {
      return CompletableFuture.completedFuture(hit(request, caller, answer));
    }
    InFlightCall mine = new InFlightCall();
    InFlightCall running = cache.inFlight.putIfAbsent(key, mine);
    if (running != null) {
      return join(chain, request, caller, key, running);
    }
    // A leader stores its answer before it unregisters, so a miss above may have raced a store.
    answer = cache.get(key);
    if (answer != null) {
      mine.complete(new Outcome.Cached(answer));
      cache.inFlight.remove(key, mine);
      return CompletableFuture.completedFuture(hit(request, caller, answer));
    }
    cache.metrics.request("miss", request.route());
    return lead(chain, request, caller, key, mine);
  }

  private GatewayResponse hit(GatewayRequest request, Caller caller, CachedAnswer answer) {
    cache.metrics.request("hit", request.route());
    cache.metrics.tokensSaved(caller, answer.tokens());
    RequestOutcome.of(request).cache(CacheStatus.HIT);
    return answer.replay(cache.clock.instant());
  }

  /** Waits (without a thread) for the leader's outcome, then answers from it. */
  private CompletionStage<GatewayResponse> join(
      Chain chain, GatewayRequest request, Caller caller, CacheKey key, InFlightCall call) {
    call.joined(caller);
    return call.outcome().thenCompose(outcome -> answerJoiner(chain, request, caller, key, outcome));
  }

  private CompletionStage<GatewayResponse> answerJoiner(
      Chain chain, GatewayRequest request, Caller caller, CacheKey key, Outcome outcome) {
    switch (outcome) {
      case Outcome.Cached cached -> {
        return CompletableFuture.completedFuture(hit(request, caller, cached.answer()));
      }
      case Outcome.Buffered buffered -> {
        boolean ok = buffered.status() >= 200 && buffered.status() < 300;
        cache.metrics.request("coalesced", request.route());
        if (ok) {
          cache.metrics.tokensSaved(caller, CachedAnswer.bufferedTokens(buffered.body()));
        }
        return CompletableFuture.completedFuture(tagged(request,
            GatewayResponse.buffered(buffered.status(), buffered.headers(), buffered.body()),
            ok ? CacheStatus.HIT : CacheStatus.MISS));
      }
      case Outcome.Streamed streamed -> {
        EventStream subscription = streamed.stream().subscribe();
        if (subscription != null) {
          cache.metrics.request("coalesced", request.route());
          return CompletableFuture.completedFuture(tagged(request,
              GatewayResponse.streamed(streamed.status(), streamed.headers(), subscription), CacheStatus.HIT));
        }
      }
      case Outcome.Failed failed -> {
        cache.metrics.request("coalesced", request.route());
        return CompletableFuture.completedFuture(
            tagged(request, ErrorMapper.toResponse(failed.error()), CacheStatus.MISS));
      }
      case Outcome.Alone alone -> {}
    }
    cache.metrics.request("miss", request.route());
    return lead(chain, request, caller, key, null);
  }


  /**
   * Makes the upstream call for {@code key}; publishes the outcome to {@code call}'s joiners (when
   * registered) and stores a successful, complete answer.
   */
  private CompletionStage<GatewayResponse> lead(
      Chain chain, GatewayRequest request, Caller caller, CacheKey key, InFlightCall call) {
    long generation = cache.generation(caller.team());
    ClientDisconnect leaderGone = ClientDisconnect.of(request);
    ClientDisconnect everyoneGone = call == null ? leaderGone : sharedDisconnect(leaderGone, call);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, everyoneGone);
    return chain.proceed(request).handle((response, failure) -> {
      request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, leaderGone);
      if (failure == null) {
        return led(request, caller, key, call, response, everyoneGone, generation);
      }
      Throwable cause = Blocking.cause(failure);
      if (cause instanceof GatewayException e) {
        if (call != null) {
          boolean failedForAll = e instanceof UpstreamException && !everyoneGone.happened();
          call.complete(failedForAll ? new Outcome.Failed(e) : new Outcome.Alone());
          cache.inFlight.remove(key, call);
        }
        return tagged(request, ErrorMapper.toResponse(e), CacheStatus.MISS);
      }
      if (call != null) {
        call.complete(new Outcome.Alone());
        cache.inFlight.remove(key, call);
      }
      throw Blocking.rethrow(cause);
    });
  }

  /** The leader's answer: stored when it may be, published to the joiners, tagged a miss. */
  private GatewayResponse led(GatewayRequest request, Caller caller, CacheKey key, InFlightCall call,
      GatewayResponse response, ClientDisconnect everyoneGone, long generation) {
    boolean storable = response.isSuccessful() && !degraded(request);
    // A call given up because its client left says nothing about the joiners' requests.
    boolean shared = !everyoneGone.happened()
        && (response.isSuccessful() || RequestOutcome.of(request).backend() != null);
    if (!response.isStream()) {
      if (storable && CachedAnswer.completeBuffered(request.route(), response.body())) {
        cache.put(key, CachedAnswer.buffered(response.status(), storedHeaders(response.headers()),
            response.body(), caller.team(), cache.clock.instant()), generation);
      }
      if (call != null) {
        call.complete(shared
            ? new Outcome.Buffered(response.status(), sharedHeaders(response.headers()), response.body())
            : new Outcome.Alone());
        cache.inFlight.remove(key, call);
      }
      return tagged(request, response, CacheStatus.MISS);
    }
    if (!storable && call == null) {
      return tagged(request, response, CacheStatus.MISS);
    }
    SharedStream stream = new SharedStream(response.stream(), cache.config.maxEntrySize().bytes(), storable,
        cache.clock, cache.streamTimeLimit,
        new StreamListener(request.route(), caller, key, call, response, storable, generation));
    EventStream own = stream.subscribe();
    if (call != null) {
      call.complete(shared
          ? new Outcome.Streamed(response.status(), sharedHeaders(response.headers()), stream)
          : new Outcome.Alone());
    }
    stream.start();
    return tagged(request, response.withStream(own), CacheStatus.MISS);
  }

  /**
   * The signal the shared call obeys: the leader's client left while nobody had joined. A call
   * that others joined runs on for them when the leader's client leaves.
   */
  private static ClientDisconnect sharedDisconnect(ClientDisconnect leaderGone, InFlightCall call) {
    ClientDisconnect shared = ClientDisconnect.create();
    leaderGone.onDisconnect(() -> {
      if (call.joiners().isEmpty()) {
        shared.signal();
      }
    });
    return shared;
  }

  /** Stores a stream once it completed normally, and unregisters the call. */
  private final class StreamListener implements SharedStream.Listener {
    private final Route route;
    private final Caller caller;
    private final CacheKey key;
    private final InFlightCall call;
    private final int status;
    private final Headers headers;
    private final boolean storable;
    private final long generation;

    StreamListener(Route route, Caller caller, CacheKey key, InFlightCall call, GatewayResponse response,
        boolean storable, long generation) {
      this.route = route;
      this.caller = caller;
      this.key = key;
      this.call = call;
      this.status = response.status();
      this.headers = storedHeaders(response.headers());
      this.storable = storable;
      this.generation = generation;
    }

    @Override
    public void overflowed() {
      unregister();
    }

    @Override
    public void finished(List<SseEvent> events) {
      try {
        if (events != null && CachedAnswer.completeStream(route, events)) {
          CachedAnswer answer = CachedAnswer.streamed(status, headers, events, caller.team(), cache.clock.instant());
          if (storable) {
            cache.put(key, answer, generation);
          }
          if (call != null) {
            for (Caller joiner : call.joiners()) {
              cache.metrics.tokensSaved(joiner, answer.tokens());
            }
          }
        }
      } finally {
        unregister();
      }
    }

    private void unregister() {
      if (call != null) {
        cache.inFlight.remove(key, call);
      }
    }
  }

  /** Shaping changed the request, so the answer is not the one the client's request asks for. */
  private static boolean degraded(GatewayRequest request) {
    List<String> steps = RequestOutcome.of(request).degraded();
    return (steps != null && !steps.isEmpty())
        || Boolean.TRUE.equals(request.attribute(RequestAttributes.PREFER_LOCAL))
        || request.attribute(RequestAttributes.MODEL_REWRITTEN_FROM) != null;
  }

  /** Notes the cache's part in the request's outcome and says it in {@value ResponseCache#HEADER}. */
  private static GatewayResponse tagged(GatewayRequest request, GatewayResponse response, CacheStatus status) {
    RequestOutcome.of(request).cache(status);
    return response.withHeader(ResponseCache.HEADER, status.tag());
  }

  /** What a joiner may see of the leader's answer: not the leader's own rate-limit state. */
  private static Headers sharedHeaders(Headers headers) {
    Headers.Builder out = Headers.builder();
    headers.forEach((name, value) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (!lower.startsWith("x-ratelimit-") && !lower.equals(ResponseCache.HEADER)) {
        out.add(name, value);
      }
    });
    return out.build();
  }

  /** What a stored 2xx answer replays: no per-call state (rate limits, retry hints). */
  private static Headers storedHeaders(Headers headers) {
    Headers.Builder out = Headers.builder();
    sharedHeaders(headers).forEach((name, value) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (!lower.startsWith("retry-after") && !lower.equals("age") && !lower.equals(OutcomeHeadersInterceptor.DEGRADED)) {
        out.add(name, value);
      }
    });
    return out.build();
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "CacheInterceptor";
  }
}
