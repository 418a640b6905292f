package io.spillway.app.reload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReloadableStagesTest {
  private static GatewayConfig config(String degrade) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", "shaping:\n  degrade: " + degrade + "\n");
  }

  /** A stage that stamps its answer with its name and the {@code shaping.degrade} it was built from. */
  private static Interceptor stamp(String name, GatewayConfig config) {
    return chain -> chain.proceed(chain.request())
        .thenApply(response -> response.withHeader("x-" + name, config.shaping().degrade().spelling()));
  }

  private static List<Interceptor> build(GatewayConfig config, int count) {
    List<Interceptor> stages = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      stages.add(stamp("stage-" + i, config));
    }
    return stages;
  }

  private static GatewayResponse send(Pipeline pipeline) {
    return pipeline.execute(GatewayRequest.create("req-1", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(),
        "{}".getBytes(StandardCharsets.UTF_8), Instant.EPOCH));
  }

  @Test
  void aReloadRebuildsEveryStageOfTheRunForTheNextRequest() {
    ReloadableStages stages = new ReloadableStages("shaping", config("never"), next -> build(next, 3));
    Pipeline pipeline = new Pipeline(stages.stages(), Terminal.blocking(request -> GatewayResponse.json(200, new byte[0])));
    assertThat(send(pipeline).headers().get("x-stage-2")).isEqualTo("never");

    stages.reload(config("always"));

    GatewayResponse response = send(pipeline);
    assertThat(stages.stages()).hasSize(3);
    assertThat(List.of(response.headers().get("x-stage-0"), response.headers().get("x-stage-1"),
        response.headers().get("x-stage-2"))).containsOnly("always");
  }

  @Test
  void aFactoryThatChangesTheNumberOfStagesIsRefusedAndTheRunningOnesStay() {
    int[] count = {2};
    ReloadableStages stages = new ReloadableStages("shaping", config("never"), next -> build(next, count[0]));
    Pipeline pipeline = new Pipeline(stages.stages(), Terminal.blocking(request -> GatewayResponse.json(200, new byte[0])));
    count[0] = 3;

    assertThatThrownBy(() -> stages.reload(config("always"))).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("shaping");
    assertThat(send(pipeline).headers().get("x-stage-1")).isEqualTo("never");
  }
}
