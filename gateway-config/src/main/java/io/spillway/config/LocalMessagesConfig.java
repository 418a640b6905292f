package io.spillway.config;

import java.time.Duration;

/**
 * How Anthropic's Messages API ({@code /v1/messages}, Claude Code) is served on local servers
 * ({@code local.messages}).
 *
 * @param api {@code auto}: an Ollama server that has its own {@code /v1/messages} (0.14 and later;
 *     learned by the readiness probe) gets the request as it came, with the model mapped; any other
 *     server gets it translated to chat. {@code chat}: always translated
 * @param pingEvery how long a local Messages stream may stay silent (before its first content, or
 *     between two events, while a slow model thinks) before Spillway sends Anthropic's
 *     {@code ping} event to keep the client and any proxy in between from giving up
 */
public record LocalMessagesConfig(Api api, Duration pingEvery) {
  public static final LocalMessagesConfig DEFAULTS = new LocalMessagesConfig(null, null);

  public LocalMessagesConfig {
    api = api != null ? api : Api.AUTO;
    pingEvery = pingEvery != null ? pingEvery : Duration.ofSeconds(10);
    ConfigProblems.at("local.messages").positive("pingEvery", pingEvery, "must be longer than zero");
  }

  /** Which way a Messages request reaches a local server. */
  public enum Api implements Choice {
    /** The server's own {@code /v1/messages} where the probe found one, else chat. */
    AUTO,
    /** Always translated to chat. */
    CHAT;
  }
}
