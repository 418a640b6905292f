package io.spillway.quota.accounting;

import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.CallerInterceptor;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.EventUsage;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.quota.pool.PoolSnapshot;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.ratelimit.ResetFormat;
import java.util.concurrent.CompletionStage;

/**
 * What the client is told about tokens. Every response carries the caller's pool the way OpenAI
 * reports token limits: {@code x-ratelimit-limit-tokens} (the pool's ceiling: limit plus
 * overdraft), {@code x-ratelimit-remaining-tokens} (ceiling minus used minus reserved) and
 * {@code x-ratelimit-reset-tokens} (time until the month resets). A stream's reported usage is noted
 * in the {@link RequestOutcome} (for the access log, metrics and traces) as it passes, and a
 * chat/completions or completions stream then loses the usage-only chunk that quota accounting asked
 * the upstream for when the client did not ask for it itself ({@link StreamUsageOption}).
 *
 * <p>Placed right after authentication, ahead of the response cache, the request rate limits and
 * token accounting: their answers (cache hits and 429s included) get the headers, and the cache
 * records a stream with its usage chunk (it counts the tokens a hit saves) while each client still
 * gets exactly the stream it asked for. A {@link GatewayException} from a later stage is turned
 * into its error response here (as the front end would render it). Reads the pools' cached view, so
 * it costs no store call. The model list does not pass here.
 */
public final class TokenReportInterceptor extends CallerInterceptor {
  public static final String LIMIT = "x-ratelimit-limit-tokens";
  public static final String REMAINING = "x-ratelimit-remaining-tokens";
  public static final String RESET = "x-ratelimit-reset-tokens";

  private final QuotaPools pools;

  public TokenReportInterceptor(QuotaPools pools) {
    this.pools = pools;
  }

  @Override
  protected CompletionStage<GatewayResponse> intercept(Chain chain, Caller caller) {
    GatewayRequest request = chain.request();
    return chain.proceedAnswering(request).thenApply(answer -> {
      GatewayResponse response = answer;
      if (response.isStream()) {
        RequestOutcome outcome = RequestOutcome.of(request);
        EventStream noted = new UsageNotingStream(response.stream(), outcome, pools.maxReportedTokens());
        response = response.withStream(StreamUsageOption.addedBySpillway(request) ? new UsageChunkFilter(noted) : noted);
      }
      PoolSnapshot pool = pools.snapshot(caller.tier());
      return response.withHeaders(response.headers().toBuilder()
          .set(LIMIT, Long.toString(pool.ceiling()))
          .set(REMAINING, Long.toString(pool.remaining()))
          .set(RESET, ResetFormat.format(pools.calendar().untilReset()))
          .build());
    });
  }

  @Override
  public boolean mayBlock() {
    return pools.mayBlock();
  }

  /**
   * Notes each usage a stream reports in the outcome, before any usage chunk is taken out; a report
   * with a count past {@code quota.maxReportedTokens}, negative, fractional or a string is not noted.
   */
  private static final class UsageNotingStream extends ForwardingEventStream {
    private final RequestOutcome outcome;
    private final long maxReportedTokens;

    UsageNotingStream(EventStream delegate, RequestOutcome outcome, long maxReportedTokens) {
      super(delegate);
      this.outcome = outcome;
      this.maxReportedTokens = maxReportedTokens;
    }

    @Override
    public SseEvent poll() {
      SseEvent event = delegate.poll();
      if (event != null && event != SseEvent.PENDING) {
        RequestOutcome.Usage usage = EventUsage.of(event, maxReportedTokens);
        if (usage != null) {
          outcome.reported(usage);
        }
      }
      return event;
    }
  }

  @Override
  public String toString() {
    return "TokenReportInterceptor";
  }
}
