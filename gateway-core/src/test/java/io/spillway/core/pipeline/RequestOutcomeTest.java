package io.spillway.core.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.http.Headers;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RequestOutcomeTest {
  private final RequestOutcome outcome = RequestOutcome.of(
      GatewayRequest.create("req-1", Route.CHAT_COMPLETIONS, Headers.EMPTY, null, new byte[0], Instant.EPOCH));

  @Test
  void theLocalStepIsListedWhereTheRouterTookThePreferenceBeforeWhatTheLocalBackendAdds() {
    outcome.degrade("temperature");
    outcome.servedBy(BackendKind.LOCAL);
    outcome.localByPreference(true);
    outcome.degrade("context_fit");

    assertThat(outcome.degraded()).containsExactly("temperature", RequestOutcome.LOCAL_STEP, "context_fit");
    assertThat(outcome.localByPreference()).isTrue();
  }

  @Test
  void anotherBackendServingAfterAllTakesTheLocalStepBackOut() {
    outcome.degrade("temperature");
    outcome.localByPreference(true);
    outcome.servedBy(BackendKind.CLOUD);

    assertThat(outcome.degraded()).containsExactly("temperature");
    assertThat(outcome.localByPreference()).isFalse();
  }

  @Test
  void theLocalStepIsListedOnceHoweverOftenTheRouterSaysSo() {
    outcome.localByPreference(true);
    outcome.localByPreference(true);
    outcome.servedBy(BackendKind.LOCAL);

    assertThat(outcome.degraded()).containsExactly(RequestOutcome.LOCAL_STEP);
  }

  @Test
  void aCacheHitIsAnsweredByTheCacheAndAServedRequestByItsBackend() {
    assertThat(outcome.answeredBy()).isNull();

    outcome.cache(RequestOutcome.CacheStatus.HIT);
    assertThat(outcome.answeredBy()).isEqualTo(BackendKind.CACHE);
    assertThat(outcome.backend()).as("no backend ran").isNull();

    outcome.servedBy(BackendKind.CLOUD);
    assertThat(outcome.answeredBy()).isEqualTo(BackendKind.CLOUD);
  }

  @Test
  void eachKindIsSpelledOnTheWireAsBefore() {
    assertThat(BackendKind.CLOUD.tag()).isEqualTo("cloud");
    assertThat(BackendKind.LOCAL.tag()).isEqualTo("local");
    assertThat(BackendKind.CACHE.tag()).isEqualTo("cache");
  }
}
