package io.spillway.local.context;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.LocalContextConfig;
import org.junit.jupiter.api.Test;

/** How {@code num_ctx} is sized from the request and capped. */
class ContextSizeTest {
  final LocalContextConfig defaults = LocalContextConfig.DEFAULTS;

  @Test
  void numCtxIsPromptPlusAnswerRoundedUpToAPowerOfTwo() {
    assertThat(ContextSize.numCtx(3000, 4096, 32768, defaults)).isEqualTo(8192);
    assertThat(ContextSize.numCtx(4096, 4096, 32768, defaults)).isEqualTo(8192);
    assertThat(ContextSize.numCtx(4097, 4096, 32768, defaults)).isEqualTo(16384);
    assertThat(ContextSize.numCtx(20000, 4096, 131072, defaults)).isEqualTo(32768);
  }

  @Test
  void numCtxNeverGoesBelowTheConfiguredMinimum() {
    assertThat(ContextSize.numCtx(10, 16, 32768, defaults)).isEqualTo(4096);
    assertThat(ContextSize.numCtx(10, 16, 2048, defaults)).as("unless the window is smaller").isEqualTo(2048);
  }

  @Test
  void numCtxIsCappedByTheModelWindowAndByMaxTokens() {
    int window = ContextSize.usableWindow(131072, defaults);
    assertThat(window).isEqualTo(32768);
    assertThat(ContextSize.numCtx(60000, 4096, window, defaults)).isEqualTo(32768);
    assertThat(ContextSize.numCtx(20000, 4096, ContextSize.usableWindow(24000, defaults), defaults)).isEqualTo(24000);
    LocalContextConfig big = new LocalContextConfig(null, 65536, null, null, null, null);
    assertThat(ContextSize.numCtx(40000, 4096, ContextSize.usableWindow(131072, big), big)).isEqualTo(65536);
  }

  @Test
  void theAnswersRoomIsWhatTheRequestAsksOrTheReserveAndAtMostHalfTheWindow() {
    assertThat(ContextSize.outputReserve(null, 32768, defaults)).isEqualTo(4096);
    assertThat(ContextSize.outputReserve(500, 32768, defaults)).isEqualTo(500);
    assertThat(ContextSize.outputReserve(30000, 32768, defaults)).isEqualTo(16384);
    assertThat(ContextSize.outputReserve(null, 4096, defaults)).isEqualTo(2048);
  }
}
