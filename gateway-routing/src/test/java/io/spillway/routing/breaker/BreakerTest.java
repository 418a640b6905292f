package io.spillway.routing.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.config.FailoverConfig;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker.OverrideMode;
import io.spillway.routing.breaker.Breaker.State;
import io.spillway.routing.breaker.Breaker.Target;
import io.spillway.routing.breaker.Breaker.Ticket;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every transition of the capacity breaker, driven by a fake clock. */
class BreakerTest {
  static final Duration LOCAL_FOR = Duration.ofMinutes(5);
  static final Duration MAX_LOCAL_FOR = Duration.ofMinutes(30);

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final BreakerSettings config = BreakerSettings.from(new FailoverConfig(3, LOCAL_FOR, MAX_LOCAL_FOR, true, 4, null, null, null));
  Breaker breaker;
  TransitionLog told;

  @BeforeEach
  void create() {
    breaker = new ReplicaBreaker(config, clock);
    told = TransitionLog.on(breaker);
  }

  static Verdict verdict(Outcome outcome) {
    return new Verdict(outcome, outcome.tag(), null);
  }

  static Verdict capacity(Duration retryAfter) {
    return new Verdict(Outcome.CAPACITY, "at_capacity_message", retryAfter);
  }

  void answer(Outcome outcome) {
    Ticket ticket = breaker.acquire();
    assertThat(ticket.cloud()).as("request went to the cloud").isTrue();
    breaker.record(ticket, verdict(outcome));
  }

  void open() {
    for (int i = 0; i < config.capacityStreak(); i++) {
      answer(Outcome.CAPACITY);
    }
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void withoutALocalBackendTheReasonsForOpeningSayRequestsStillGoToTheCloud() {
    breaker = new ReplicaBreaker(config.withLocalBackend(false), clock);
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();
    breaker.record(probe, capacity(null));

    List<String> reasons = breaker.status().history().stream().map(Breaker.HistoryEntry::reason)
        .filter(reason -> reason != null && reason.contains("open for")).toList();
    assertThat(reasons).hasSize(2).allSatisfy(reason -> assertThat(reason)
        .contains("no local backend (local.enabled: false), so requests still go to the cloud and get its own"
            + " Retry-After; open for 5m")
        .doesNotContain("local for"));
  }

  @Test
  void capacityAnswersOpenBreakerAfterThreeInARow() {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    assertThat(breaker.streak()).isEqualTo(2);

    answer(Outcome.CAPACITY);

    assertThat(breaker.state()).isEqualTo(State.OPEN);
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
  }

  @Test
  void aSuccessResetsTheStreak() {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    answer(Outcome.SUCCESS);
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);

    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    assertThat(breaker.streak()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(value = Outcome.class, names = {"RATE_LIMIT", "QUOTA", "FINAL", "TRANSIENT"})
  void answersThatSayNothingAboutCapacityNeitherCountNorReset(Outcome outcome) {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    for (int i = 0; i < 10; i++) {
      answer(outcome);
    }
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    assertThat(breaker.streak()).isEqualTo(2);

    answer(Outcome.CAPACITY);

    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void openSendsEveryRequestLocalUntilLocalForHasPassed() {
    open();

    clock.advance(LOCAL_FOR.minusSeconds(1));
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
    assertThat(breaker.state()).isEqualTo(State.OPEN);

    clock.advance(Duration.ofSeconds(1));
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void afterLocalForExactlyOneProbeGoesToTheCloud() {
    open();
    clock.advance(LOCAL_FOR);

    Ticket probe = breaker.acquire();

    assertThat(probe.target()).isEqualTo(Target.PROBE);
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
  }

  @Test
  void concurrentRequestsInHalfOpenGetExactlyOneProbe() throws Exception {
    open();
    clock.advance(LOCAL_FOR);
    int threads = 16;
    CountDownLatch go = new CountDownLatch(1);
    ConcurrentLinkedQueue<Target> targets = new ConcurrentLinkedQueue<>();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        futures.add(pool.submit(() -> {
          go.await();
          targets.add(breaker.acquire().target());
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : futures) {
        f.get();
      }
    }

    assertThat(targets).hasSize(threads);
    assertThat(targets.stream().filter(t -> t == Target.PROBE)).hasSize(1);
  }

  @Test
  void probeSuccessClosesTheBreaker() {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();

    breaker.record(probe, verdict(Outcome.SUCCESS));

    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    assertThat(breaker.streak()).isZero();
    assertThat(breaker.acquire().target()).isEqualTo(Target.CLOUD);
  }

  @ParameterizedTest
  @EnumSource(value = Outcome.class, names = {"CAPACITY", "TRANSIENT"})
  void probeThatFailsOpensTheBreakerForAnotherLocalFor(Outcome outcome) {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();

    breaker.record(probe, verdict(outcome));

    assertThat(breaker.state()).isEqualTo(State.OPEN);
    clock.advance(LOCAL_FOR.minusMillis(1));
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
    clock.advance(Duration.ofMillis(1));
    assertThat(breaker.acquire().target()).isEqualTo(Target.PROBE);
  }

  @ParameterizedTest
  @EnumSource(value = Outcome.class, names = {"RATE_LIMIT", "QUOTA", "FINAL"})
  void probeWithAnAnswerThatSaysNothingAboutCapacityHandsTheProbeOn(Outcome outcome) {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();

    breaker.record(probe, verdict(outcome));

    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    assertThat(breaker.acquire().target()).isEqualTo(Target.PROBE);
  }

  @Test
  void aReleasedProbeGoesToTheNextRequest() {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();

    breaker.release(probe);

    assertThat(breaker.acquire().target()).isEqualTo(Target.PROBE);
  }

  @Test
  void retryAfterLongerThanLocalForExtendsTheOpenPeriod() {
    answer(Outcome.CAPACITY);
    breaker.record(breaker.acquire(), capacity(Duration.ofMinutes(12)));
    answer(Outcome.CAPACITY);
    assertThat(breaker.state()).isEqualTo(State.OPEN);

    clock.advance(Duration.ofMinutes(11));
    assertThat(breaker.state()).isEqualTo(State.OPEN);
    assertThat(breaker.status().toJson().get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:12:00Z");

    clock.advance(Duration.ofMinutes(1));
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void retryAfterIsCappedAtMaxLocalFor() {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    breaker.record(breaker.acquire(), capacity(Duration.ofHours(6)));

    clock.advance(MAX_LOCAL_FOR.minusSeconds(1));
    assertThat(breaker.state()).isEqualTo(State.OPEN);
    clock.advance(Duration.ofSeconds(1));
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void retryAfterShorterThanLocalForDoesNotShortenIt() {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    breaker.record(breaker.acquire(), capacity(Duration.ofSeconds(10)));

    clock.advance(LOCAL_FOR.minusSeconds(1));
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void retryAfterOfAFailedProbeExtendsTheNextOpenPeriod() {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();

    breaker.record(probe, capacity(Duration.ofMinutes(20)));

    clock.advance(Duration.ofMinutes(19));
    assertThat(breaker.state()).isEqualTo(State.OPEN);
    clock.advance(Duration.ofMinutes(1));
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void forcedOpenSendsEverythingLocalAndNeverProbes() {
    breaker.override(OverrideMode.OPEN);

    clock.advance(Duration.ofHours(3));

    assertThat(breaker.state()).isEqualTo(State.FORCED_OPEN);
    assertThat(breaker.acquire().target()).isEqualTo(Target.LOCAL);
    assertThat(breaker.currentOverride()).isEqualTo(OverrideMode.OPEN);
  }

  @Test
  void onlyATicketOfAForcedOpenBreakerIsForcedLocal() {
    open();
    Ticket openedOnItsOwn = breaker.acquire();
    breaker.override(OverrideMode.OPEN);
    Ticket forced = breaker.acquire();

    assertThat(openedOnItsOwn.target()).isEqualTo(Target.LOCAL);
    assertThat(openedOnItsOwn.forcedLocal()).as("the router may try the cloud when local fails").isFalse();
    assertThat(forced.target()).isEqualTo(Target.LOCAL);
    assertThat(forced.forcedLocal()).isTrue();
  }

  @Test
  void aLocalTicketsVerdictChangesNothing() {
    open();
    String nextProbe = breaker.status().toJson().get("nextProbeAt").asText();
    Ticket local = breaker.acquire();

    breaker.record(local, verdict(Outcome.CAPACITY));
    breaker.record(local, verdict(Outcome.SUCCESS));

    assertThat(breaker.state()).isEqualTo(State.OPEN);
    assertThat(breaker.status().toJson().get("nextProbeAt").asText()).isEqualTo(nextProbe);
  }

  @Test
  void forcedClosedSendsEverythingToTheCloudAndCountsNothing() {
    breaker.override(OverrideMode.CLOSED);

    for (int i = 0; i < 10; i++) {
      answer(Outcome.CAPACITY);
    }

    assertThat(breaker.state()).isEqualTo(State.FORCED_CLOSED);
    assertThat(breaker.streak()).isZero();
    assertThat(breaker.acquire().target()).isEqualTo(Target.CLOUD);
  }

  @Test
  void autoAfterForcedOpenLetsOneProbeDecide() {
    breaker.override(OverrideMode.OPEN);

    breaker.override(OverrideMode.AUTO);

    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    Ticket probe = breaker.acquire();
    assertThat(probe.target()).isEqualTo(Target.PROBE);
    breaker.record(probe, verdict(Outcome.SUCCESS));
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void autoAfterForcedClosedStartsClosedWithAnEmptyStreak() {
    open();
    breaker.override(OverrideMode.CLOSED);

    breaker.override(OverrideMode.AUTO);

    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    assertThat(breaker.streak()).isZero();
    assertThat(breaker.currentOverride()).isEqualTo(OverrideMode.AUTO);
  }

  @Test
  void autoWhileAutoChangesNothing() {
    answer(Outcome.CAPACITY);

    assertThat(breaker.override(OverrideMode.AUTO)).isEqualTo(State.CLOSED);

    assertThat(breaker.streak()).isEqualTo(1);
    assertThat(breaker.history()).isEmpty();
  }

  @Test
  void forcedOpenCanBeSwitchedStraightToForcedClosed() {
    breaker.override(OverrideMode.OPEN);

    breaker.override(OverrideMode.CLOSED);

    assertThat(breaker.state()).isEqualTo(State.FORCED_CLOSED);
    assertThat(breaker.history()).extracting(Breaker.HistoryEntry::to)
        .containsExactly(State.FORCED_OPEN, State.FORCED_CLOSED);
  }

  @Test
  void lateAnswersFromBeforeATransitionAreIgnored() {
    Ticket early = breaker.acquire();
    open();

    breaker.record(early, verdict(Outcome.SUCCESS));

    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void aStaleProbeResultDoesNotOverrideAManualDecision() {
    open();
    clock.advance(LOCAL_FOR);
    Ticket probe = breaker.acquire();
    breaker.override(OverrideMode.OPEN);

    breaker.record(probe, verdict(Outcome.SUCCESS));

    assertThat(breaker.state()).isEqualTo(State.FORCED_OPEN);
  }

  @Test
  void localTicketsRecordNothing() {
    open();
    Ticket local = breaker.acquire();

    breaker.record(local, verdict(Outcome.SUCCESS));

    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void theFirstCapacityAnswerOfAStreakTellsListenersOnce() {
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    assertThat(told.streaksStarted).hasValue(1);

    answer(Outcome.SUCCESS);
    answer(Outcome.CAPACITY);
    assertThat(told.streaksStarted).hasValue(2);
  }

  @Test
  void eachTransitionIsToldToListenersOnceWithItsRoute() {
    open();
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), verdict(Outcome.CAPACITY));
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), verdict(Outcome.SUCCESS));

    assertThat(told.count(State.CLOSED, State.OPEN)).isEqualTo(1);
    assertThat(told.count(State.OPEN, State.HALF_OPEN)).isEqualTo(2);
    assertThat(told.count(State.HALF_OPEN, State.OPEN)).isEqualTo(1);
    assertThat(told.count(State.HALF_OPEN, State.CLOSED)).isEqualTo(1);
    assertThat(told.transitions).hasSize(5).allSatisfy(t -> assertThat(t.route()).isEqualTo(Breaker.DEFAULT_ROUTE));
  }

  @Test
  void historyKeepsTheLatestTransitionsUpToHistorySize() {
    open();
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), verdict(Outcome.CAPACITY));
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), verdict(Outcome.SUCCESS));

    List<Breaker.HistoryEntry> history = breaker.history();

    assertThat(history).hasSize(config.historySize());
    assertThat(history).extracting(e -> e.from() + ">" + e.to())
        .containsExactly("OPEN>HALF_OPEN", "HALF_OPEN>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED");
    assertThat(history.get(3).at()).isEqualTo(Instant.parse("2026-11-10T10:10:00Z"));
  }

  @Test
  void clientsAreToldToComeBackAtTheNextProbe() {
    assertThat(breaker.retryAfter(null)).isEqualTo(Duration.ofSeconds(1));
    assertThat(breaker.retryAfter(Duration.ofSeconds(20))).isEqualTo(Duration.ofSeconds(20));
    open();
    clock.advance(Duration.ofMinutes(2));
    assertThat(breaker.retryAfter(null)).isEqualTo(Duration.ofMinutes(3));
    clock.advance(Duration.ofMinutes(3));
    assertThat(breaker.retryAfter(null)).isEqualTo(Duration.ofSeconds(1));
    breaker.override(OverrideMode.OPEN);
    assertThat(breaker.retryAfter(null)).isEqualTo(LOCAL_FOR);
  }

  @Test
  void snapshotShowsStateSinceStreakNextProbeAndHistory() {
    answer(Outcome.CAPACITY);
    JsonNode closed = breaker.status().toJson();
    assertThat(closed.get("state").asText()).isEqualTo("closed");
    assertThat(closed.get("override").asText()).isEqualTo("auto");
    assertThat(closed.get("streak").asInt()).isEqualTo(1);
    assertThat(closed.get("nextProbeAt").isNull()).isTrue();

    clock.advance(Duration.ofSeconds(30));
    answer(Outcome.CAPACITY);
    answer(Outcome.CAPACITY);
    JsonNode open = breaker.status().toJson();

    assertThat(open.get("state").asText()).isEqualTo("open");
    assertThat(open.get("since").asText()).isEqualTo("2026-11-10T10:00:30Z");
    assertThat(open.get("streak").asInt()).isZero();
    assertThat(open.get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:05:30Z");
    JsonNode entry = open.get("history").get(0);
    assertThat(entry.get("from").asText()).isEqualTo("closed");
    assertThat(entry.get("to").asText()).isEqualTo("open");
    assertThat(entry.get("at").asText()).isEqualTo("2026-11-10T10:00:30Z");
    assertThat(entry.get("reason").asText()).contains("3 capacity answers in a row").contains("local for 5m");

    breaker.override(OverrideMode.OPEN);
    JsonNode forced = breaker.status().toJson();
    assertThat(forced.get("state").asText()).isEqualTo("open");
    assertThat(forced.get("override").asText()).isEqualTo("open");
    assertThat(forced.get("nextProbeAt").isNull()).isTrue();
    assertThat(forced.get("history").get(1).get("to").asText()).isEqualTo("forced_open");
  }

  @Test
  void everyNamedTransitionIsReachable() {
    open();                                        // CLOSED_TO_OPEN
    clock.advance(LOCAL_FOR);
    breaker.state();                               // OPEN_TO_HALF_OPEN
    breaker.record(breaker.acquire(), verdict(Outcome.CAPACITY)); // HALF_OPEN_TO_OPEN
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), verdict(Outcome.SUCCESS));  // HALF_OPEN_TO_CLOSED
    breaker.override(OverrideMode.OPEN);           // CLOSED_TO_FORCED_OPEN
    breaker.override(OverrideMode.CLOSED);         // FORCED_OPEN_TO_FORCED_CLOSED
    breaker.override(OverrideMode.OPEN);           // FORCED_CLOSED_TO_FORCED_OPEN
    breaker.override(OverrideMode.AUTO);           // FORCED_OPEN_TO_HALF_OPEN
    breaker.override(OverrideMode.CLOSED);         // HALF_OPEN_TO_FORCED_CLOSED
    breaker.override(OverrideMode.AUTO);           // FORCED_CLOSED_TO_CLOSED
    breaker.override(OverrideMode.CLOSED);         // CLOSED_TO_FORCED_CLOSED
    breaker.override(OverrideMode.AUTO);           // FORCED_CLOSED_TO_CLOSED
    open();                                        // CLOSED_TO_OPEN
    breaker.override(OverrideMode.CLOSED);         // OPEN_TO_FORCED_CLOSED
    breaker.override(OverrideMode.AUTO);
    open();
    breaker.override(OverrideMode.OPEN);           // OPEN_TO_FORCED_OPEN
    breaker.override(OverrideMode.AUTO);           // FORCED_OPEN_TO_HALF_OPEN
    breaker.override(OverrideMode.OPEN);           // HALF_OPEN_TO_FORCED_OPEN

    assertThat(told.transitions).extracting(t -> Breaker.Transition.find(t.from(), t.to()))
        .containsAll(List.of(Breaker.Transition.values()));
  }
}
