package io.spillway.quota.accounting;

import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.CallerInterceptor;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.tokens.TokenTally;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.pool.Reservation;
import io.spillway.quota.pool.TokenUsage;
import io.spillway.quota.spend.SpendLedger;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Token accounting for every model call: estimates the request ({@link TokenEstimator}), reserves
 * the estimate in the caller's pool (or answers 429 {@code insufficient_quota}), and settles the
 * reservation with the usage the backend reports: from the body of a buffered answer, from the
 * stream of a streamed one ({@link MeteredEventStream}). A call that fails releases its reservation.
 *
 * <p>For chat/completions and completions streams it asks the upstream for usage
 * ({@code stream_options.include_usage: true}) when the client did not;
 * {@link TokenReportInterceptor}, further out, drops that extra chunk before the client sees it
 * and adds the {@code x-ratelimit-*-tokens} headers. Its own refusal (429
 * {@code insufficient_quota}) and errors of later stages are returned as error responses.
 *
 * <p>With a {@link SpendLedger} it also refuses a team whose money budget is used up (429
 * {@code insufficient_quota}) and, when the usage is settled, records what the request cost and sets
 * {@link RequestAttributes#COST_USD}.
 *
 * <p>Runs after authentication (it needs {@link RequestAttributes#CALLER}). The model list
 * does not pass here (it has its own service).
 */
public final class QuotaInterceptor extends CallerInterceptor {
  private final QuotaPools pools;
  private final TokenEstimator estimator;
  private final SpendLedger spend;

  public QuotaInterceptor(QuotaPools pools, TokenEstimator estimator) {
    this(pools, estimator, null);
  }

  /** @param spend prices settled requests and checks money budgets; null for tokens only */
  public QuotaInterceptor(QuotaPools pools, TokenEstimator estimator, SpendLedger spend) {
    this.pools = pools;
    this.estimator = estimator;
    this.spend = spend;
  }

  @Override
  protected CompletionStage<GatewayResponse> intercept(Chain chain, Caller caller) {
    GatewayRequest request = chain.request();
    TokenEstimator.Estimate estimate = estimator.estimate(request);
    Reservation reservation;
    try {
      if (spend != null) {
        spend.checkBudget(caller);
      }
      reservation = pools.reserve(caller, estimate.total());
    } catch (GatewayException e) {
      return CompletableFuture.completedFuture(ErrorMapper.toResponse(e));
    }
    AtomicReference<BackendKind> backend = new AtomicReference<>();
    if (spend != null) {
      String model = request.model();
      AtomicReference<Double> cost = new AtomicReference<>();
      request.setAttribute(RequestAttributes.COST_USD, cost);
      // The router sets BACKEND before the answer (or its stream) comes back; a stream may settle on another thread.
      reservation.onSettled(usage -> cost.set(spend.record(caller, backend.get(), model, usage)));
    }

    // Token reporting takes the usage chunk out again by the same rule.
    GatewayRequest upstream = StreamUsageOption.addedBySpillway(request)
        ? request.withBody(StreamUsageOption.askingForUsage(request.body()))
        : request;

    return chain.proceed(upstream).handle((response, failure) -> {
      if (failure != null) {
        reservation.release();
        if (Blocking.cause(failure) instanceof GatewayException e) {
          return ErrorMapper.toResponse(e);
        }
        throw Blocking.rethrow(Blocking.cause(failure));
      }
      backend.set(RequestOutcome.of(request).backend());
      return settle(response, reservation, estimate, request);
    });
  }

  @Override
  public boolean mayBlock() {
    return pools.mayBlock();
  }

  /** The answer as the client gets it, its reservation settled (or handed to its stream to settle). */
  private GatewayResponse settle(GatewayResponse response, Reservation reservation, TokenEstimator.Estimate estimate,
      GatewayRequest request) {
    if (!response.isSuccessful()) {
      if (response.isStream()) {
        // An error status with an event stream is not a normal answer; still meter what it reports.
        return response.withStream(metered(response, reservation, estimate, request));
      }
      reservation.release();
      return response;
    }
    if (response.isStream()) {
      return response.withStream(metered(response, reservation, estimate, request));
    }
    // Null when not JSON, when the backend reported none, or reported nonsense: settle with the estimate.
    TokenUsage usage = usageReader().fromUsage(response.summary().usage());
    reservation.settle(usage != null ? usage : new TokenUsage(estimate.promptTokens(), estimate.maxOutputTokens()));
    return response;
  }

  private MeteredEventStream metered(GatewayResponse response, Reservation reservation,
      TokenEstimator.Estimate estimate, GatewayRequest request) {
    // A stream without reported usage is counted as it passes, within the same bound as the prompt.
    TokenTally completion = estimator.tally(request.model());
    return new MeteredEventStream(response.stream(), reservation, estimate.promptTokens(), text -> {
      synchronized (completion) {
        return completion.count(text);
      }
    }, usageReader());
  }

  /** Reads usage within the pools' current {@code quota.maxReportedTokens}, counting refusals there. */
  private UsageReader usageReader() {
    return new UsageReader(pools.maxReportedTokens(), pools::usageRefused);
  }

  @Override
  public String toString() {
    return "QuotaInterceptor";
  }
}
