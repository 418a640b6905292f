package io.spillway.config;

/**
 * How requests are fitted to the local model's context window (see {@code docs/local-backend.md}).
 *
 * @param defaultTokens the window assumed for a local model whose window is neither configured
 *     ({@code local.models.<model>.contextTokens}) nor learned from the server
 * @param maxTokens the largest {@code num_ctx} ever sent, and the largest window a request is fitted
 *     to, whatever the model could take: the context's memory must fit next to the weights
 * @param minTokens the smallest {@code num_ctx} sent; sizes are powers of two from here up, so that
 *     Ollama, which reloads a model whenever {@code num_ctx} changes, sees few different values
 * @param outputReserveTokens room kept for the answer when the request names no
 *     {@code max_tokens}/{@code max_output_tokens}/{@code max_completion_tokens}
 * @param toolOutputTokens what an old tool output is cut to when the code-aware trimmer alone does
 *     not make the conversation fit (its first and last lines, with a marker between)
 * @param estimateMargin added to every token estimate (a fraction): the local model's tokenizer is
 *     not the one Spillway counts with, and chat templates add tokens of their own
 */
public record LocalContextConfig(
    Integer defaultTokens,
    Integer maxTokens,
    Integer minTokens,
    Integer outputReserveTokens,
    Integer toolOutputTokens,
    Double estimateMargin) {

  public static final LocalContextConfig DEFAULTS = new LocalContextConfig(null, null, null, null, null, null);

  public LocalContextConfig {
    defaultTokens = defaultTokens != null ? defaultTokens : 32768;
    maxTokens = maxTokens != null ? maxTokens : 32768;
    minTokens = minTokens != null ? minTokens : 4096;
    outputReserveTokens = outputReserveTokens != null ? outputReserveTokens : 4096;
    toolOutputTokens = toolOutputTokens != null ? toolOutputTokens : 400;
    estimateMargin = estimateMargin != null ? estimateMargin : 0.10;
    ConfigProblems.Reporter at = ConfigProblems.at("local.context");
    at.atLeast("defaultTokens", defaultTokens, LocalConfig.MIN_CONTEXT_TOKENS);
    at.atLeast("minTokens", minTokens, LocalConfig.MIN_CONTEXT_TOKENS);
    if (maxTokens < minTokens) {
      at.problem("maxTokens", maxTokens + " is below " + at.path("minTokens") + " (" + minTokens + ")");
    }
    at.atLeast("outputReserveTokens", outputReserveTokens, 1);
    at.atLeast("toolOutputTokens", toolOutputTokens, 16);
    if (estimateMargin < 0 || estimateMargin >= 1) {
      at.problem("estimateMargin", "must be at least 0 and below 1 (a fraction, e.g. 0.10)");
    }
  }
}
