package io.spillway.core.pipeline;

/** The OpenAI endpoints Spillway serves through its pipeline. */
public enum Route {
  COMPLETIONS("/v1/completions", "completions"),
  CHAT_COMPLETIONS("/v1/chat/completions", "chat"),
  RESPONSES("/v1/responses", "responses"),
  EMBEDDINGS("/v1/embeddings", "embeddings"),
  MODELS("/v1/models", "models");

  private final String path;
  private final String tag;

  Route(String path, String tag) {
    this.path = path;
    this.tag = tag;
  }

  /** The path below the host, as clients call it. */
  public String path() {
    return path;
  }

  /** A short, bounded name for metrics and logs. */
  public String tag() {
    return tag;
  }

  /** The path relative to an OpenAI base URL that already ends in {@code /v1}. */
  public String upstreamPath() {
    return path.substring("/v1".length());
  }

  public static Route forPath(String path) {
    for (Route route : values()) {
      if (route.path.equals(path)) {
        return route;
      }
    }
    return null;
  }
}
