package io.spillway.quota.accounting;

import io.spillway.config.QuotaConfig;
import static io.spillway.quota.testing.QuotaTesting.BRONZE;
import static io.spillway.quota.testing.QuotaTesting.quota;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.pool.PoolSnapshot;
import io.spillway.quota.pool.QuotaPools;
import io.spillway.quota.pool.Reservation;
import io.spillway.quota.store.MemoryUsageStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A polled (non-blocking) stream is read on an event loop, which must not wait for the usage
 * store: its usage settles on another thread, and its end (or failure) is given only after that.
 */
class MeteredEventStreamTest {
  private static final String USAGE_CHUNK =
      "{\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}";

  private final QuotaPools pools = new QuotaPools(quota("quota: {monthlyTokens: 100000}"), new MemoryUsageStore(),
      FakeClock.at("2026-11-10T10:00:00Z"), new SimpleMeterRegistry());
  private final AtomicReference<Thread> settledOn = new AtomicReference<>();

  @AfterEach
  void tearDown() {
    pools.close();
  }

  private MeteredEventStream metered(EventStream upstream) {
    Reservation reservation = pools.reserve(BRONZE, 500).onSettled(usage -> settledOn.set(Thread.currentThread()));
    return new MeteredEventStream(upstream, reservation, 12, text -> 1,
        new UsageReader(QuotaConfig.DEFAULT_MAX_REPORTED_TOKENS, reason -> { }));
  }

  @Test
  void aPolledStreamSettlesOffThePollingThreadBeforeItsEndIsGiven() throws Exception {
    MeteredEventStream stream = metered(ScriptedEventStream.nonBlocking(
        List.of(SseEvent.data("{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}"), SseEvent.data(USAGE_CHUNK),
            SseEvent.DONE), null));

    List<SseEvent> events = pollToTheEnd(stream);

    assertThat(stream.nonBlocking()).isTrue();
    assertThat(events).hasSize(3).last().isEqualTo(SseEvent.DONE);
    assertThat(pools.snapshot(Tier.BRONZE)).as("settled when the end was given")
        .extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(15L, 0L);
    assertThat(settledOn.get()).isNotSameAs(Thread.currentThread());
    assertThat(settledOn.get().isVirtual()).isTrue();
  }

  @Test
  void aPolledStreamThatFailsSettlesBeforeTheFailureIsGiven() throws Exception {
    GatewayException reset = ErrorKind.BAD_GATEWAY.exception("reset");
    MeteredEventStream stream = metered(ScriptedEventStream.nonBlocking(
        List.of(SseEvent.data("{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}")), reset));

    assertThat(stream.poll()).isNotNull();
    assertThatThrownBy(() -> pollToTheEnd(stream)).isSameAs(reset);

    assertThat(pools.snapshot(Tier.BRONZE)).extracting(PoolSnapshot::used, PoolSnapshot::reserved)
        .containsExactly(13L, 0L);
    assertThat(settledOn.get().isVirtual()).isTrue();
  }

  @Test
  void aBlockingStreamSettlesOnItsReadingThread() {
    MeteredEventStream stream = metered(new ScriptedEventStream(List.of(SseEvent.data(USAGE_CHUNK)), null));

    assertThat(stream.next()).isNotNull();
    assertThat(stream.next()).isNull();

    assertThat(settledOn.get()).isSameAs(Thread.currentThread());
    assertThat(pools.snapshot(Tier.BRONZE).used()).isEqualTo(15L);
  }

  /** Polls as the event loop would: on PENDING, waits for the stream's readiness callback. */
  @Test
  void anAnthropicStreamSettlesItsInputWithCacheReadsAndWritesFromMessageStartAndItsOutputFromMessageDelta()
      throws Exception {
    MeteredEventStream stream = metered(ScriptedEventStream.nonBlocking(List.of(
        new SseEvent("message_start", "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,"
            + "\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":300,\"output_tokens\":1}}}"),
        new SseEvent("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}"),
        new SseEvent("message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}"),
        new SseEvent("message_stop", "{\"type\":\"message_stop\"}")), null));

    pollToTheEnd(stream);

    assertThat(pools.snapshot(Tier.BRONZE)).as("420 input (uncached, cache writes, cache reads) and 7 output")
        .extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(427L, 0L);
  }

  @Test
  void anAnthropicBodysUsageCountsCacheReadsAsCachedInput() throws Exception {
    UsageReader reader = new UsageReader(QuotaConfig.DEFAULT_MAX_REPORTED_TOKENS, reason -> { });

    var usage = reader.fromBody(io.spillway.core.json.Json.parse("{\"type\":\"message\",\"usage\":{"
        + "\"input_tokens\":20,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":300,\"output_tokens\":7}}"));

    assertThat(usage.input()).isEqualTo(420);
    assertThat(usage.cachedInput()).isEqualTo(300);
    assertThat(usage.cacheWrites()).isEqualTo(100);
    assertThat(usage.output()).isEqualTo(7);
  }

  @Test
  void aLongStreamKeepsAtMostItsBoundOfEventsAndStillCountsEveryText() {
    List<SseEvent> chunks = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      chunks.add(SseEvent.data("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token " + i + "\"}}]}"));
    }
    MeteredEventStream stream = metered(new ScriptedEventStream(chunks, null));

    int mostKept = 0;
    while (stream.next() != null) {
      mostKept = Math.max(mostKept, stream.keptBytes());
    }

    assertThat(mostKept).as("bytes kept at once").isPositive().isLessThanOrEqualTo(MeteredEventStream.MAX_PENDING_BYTES);
    assertThat(stream.keptBytes()).isZero();
    assertThat(pools.snapshot(Tier.BRONZE)).as("the prompt estimate (12) and one token for each of the 500 texts")
        .extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(512L, 0L);
  }

  @Test
  void aLongStreamCountedOnTheWayIsStillSettledWithTheUsageItReportsAtItsEnd() {
    List<SseEvent> events = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      events.add(SseEvent.data("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token " + i + "\"}}]}"));
    }
    events.add(SseEvent.data(USAGE_CHUNK));
    events.add(SseEvent.DONE);
    MeteredEventStream stream = metered(new ScriptedEventStream(events, null));

    while (stream.next() != null) {
      // the client reads it all
    }

    assertThat(pools.snapshot(Tier.BRONZE)).as("the reported 15, not the 512 counted on the way")
        .extracting(PoolSnapshot::used, PoolSnapshot::reserved).containsExactly(15L, 0L);
  }

  private static List<SseEvent> pollToTheEnd(EventStream stream) throws InterruptedException {
    List<SseEvent> events = new ArrayList<>();
    while (true) {
      SseEvent event = stream.poll();
      if (event == null) {
        return events;
      }
      if (event == SseEvent.PENDING) {
        CountDownLatch ready = new CountDownLatch(1);
        stream.onReady(ready::countDown);
        assertThat(ready.await(5, TimeUnit.SECONDS)).as("readiness callback").isTrue();
        continue;
      }
      events.add(event);
    }
  }
}
