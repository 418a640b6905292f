package io.spillway.local.context;

import io.spillway.config.LocalContextConfig;

/**
 * The numbers of one fitting: the window a request is fitted to, the room kept for the answer, and
 * the {@code num_ctx} sent to Ollama. Pure functions of the request's sizes and {@code local.context}.
 *
 * <p>{@code num_ctx} is the estimated prompt plus the answer's room, rounded up to a power of two
 * (at least {@code local.context.minTokens}), and never above the usable window: Ollama reloads a
 * model whenever {@code num_ctx} changes, so few different sizes mean few reloads, and a power of two
 * wastes at most half of what is asked for.
 */
final class ContextSize {
  private ContextSize() {}

  /** The model's window, capped by {@code local.context.maxTokens}. */
  static int usableWindow(int modelWindow, LocalContextConfig config) {
    return Math.min(modelWindow, config.maxTokens());
  }

  /**
   * Room kept for the answer: what the request asks for ({@code requested}, or the configured
   * reserve when it names none), at most half of the usable window so a prompt always has room.
   */
  static int outputReserve(Integer requested, int usableWindow, LocalContextConfig config) {
    int wanted = requested != null && requested > 0 ? requested : config.outputReserveTokens();
    return Math.min(wanted, usableWindow / 2);
  }

  /** {@code num_ctx} for a prompt of {@code promptTokens} (estimated) and an answer of {@code output}. */
  static int numCtx(int promptTokens, int output, int usableWindow, LocalContextConfig config) {
    long needed = (long) promptTokens + output;
    long size = Long.highestOneBit(Math.max(1, needed));
    if (size < needed) {
      size <<= 1;
    }
    size = Math.max(size, config.minTokens());
    return (int) Math.min(size, usableWindow);
  }
}
