package io.spillway.quota.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.spillway.config.QuotaConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The interceptor without Netty: a pipeline whose first stage plays authentication. */
class RateLimitInterceptorTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
  private final AtomicInteger reachedTerminal = new AtomicInteger();

  @Test
  void overTheLimitAnswers429WithRetryAfterAndHeadersWithoutGoingFurther() {
    Pipeline pipeline = pipeline(ok());
    for (int i = 0; i < 50; i++) {
      pipeline.execute(request(Tier.SILVER));
    }

    GatewayException thrown = catchThrowableOfType(GatewayException.class,
        () -> pipeline.execute(request(Tier.SILVER)));
    // The stage throws; the one mapper renders the answer, the rate-limit headers with it.
    GatewayResponse refused = ErrorMapper.toResponse(thrown);

    assertThat(refused.status()).isEqualTo(429);
    assertThat(refused.headers().get("retry-after")).isEqualTo("2");
    assertThat(refused.headers().get("x-ratelimit-limit-requests")).isEqualTo("50");
    assertThat(refused.headers().get("x-ratelimit-remaining-requests")).isEqualTo("0");
    assertThat(refused.headers().get("x-ratelimit-reset-requests")).isEqualTo("1m0s");
    String body = new String(refused.body(), StandardCharsets.UTF_8);
    assertThat(body).contains("\"code\":\"rate_limit_exceeded\"", "\"type\":\"requests\"",
        "Rate limit reached for team web on requests per min (RPM): Limit 50, Used 50, Requested 1",
        "Please try again in 1.2s");
    assertThat(reachedTerminal).hasValue(50);
  }

  @Test
  void successfulAnswersCarryTheRequestHeaders() {
    GatewayResponse answer = pipeline(ok()).execute(request(Tier.BRONZE));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.headers().get("x-ratelimit-limit-requests")).isEqualTo("200");
    assertThat(answer.headers().get("x-ratelimit-remaining-requests")).isEqualTo("199");
    assertThat(answer.headers().get("x-ratelimit-reset-requests")).isEqualTo("18s");
  }

  @Test
  void errorsFromLaterStagesCarryTheHeadersToo() {
    Terminal failing = request -> {
      reachedTerminal.incrementAndGet();
      throw ErrorKind.CAPACITY.exception("at capacity").withRetryAfter(Duration.ofSeconds(7));
    };

    GatewayResponse answer = pipeline(failing).execute(request(Tier.SILVER));

    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.headers().get("retry-after")).isEqualTo("7");
    assertThat(answer.headers().get("x-ratelimit-remaining-requests")).isEqualTo("49");
  }

  @Test
  void goldGetsNoRequestHeaders() {
    GatewayResponse answer = pipeline(ok()).execute(request(Tier.GOLD));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.headers().contains("x-ratelimit-limit-requests")).isFalse();
    assertThat(answer.headers().contains("x-ratelimit-remaining-requests")).isFalse();
    assertThat(answer.headers().contains("x-ratelimit-reset-requests")).isFalse();
  }

  private Terminal ok() {
    return Terminal.blocking(request -> {
      reachedTerminal.incrementAndGet();
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    });
  }

  private Pipeline pipeline(Terminal terminal) {
    Interceptor fakeAuth = chain -> chain.proceed(chain.request());
    return new Pipeline(List.of(fakeAuth, new RateLimitInterceptor(limiter)), terminal);
  }

  private static GatewayRequest request(Tier tier) {
    GatewayRequest request = GatewayRequest.create("req", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(), null,
        java.time.Instant.parse("2026-11-10T10:00:00Z"));
    String team = switch (tier) {
      case GOLD -> "release";
      case SILVER -> "web";
      case BRONZE -> "sandbox";
    };
    request.setAttribute(RequestAttributes.CALLER, new Caller(team, tier, "key"));
    return request;
  }
}
