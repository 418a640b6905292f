package io.spillway.core.pipeline;

/** The OpenAI endpoints Spillway serves: the model calls through the pipeline, the model list by its own service. */
public enum Route {
  COMPLETIONS("POST", "/v1/completions", "completions"),
  CHAT_COMPLETIONS("POST", "/v1/chat/completions", "chat"),
  RESPONSES("POST", "/v1/responses", "responses"),
  EMBEDDINGS("POST", "/v1/embeddings", "embeddings"),
  MODELS("GET", "/v1/models", "models");

  private final String method;
  private final String path;
  private final String tag;

  Route(String method, String path, String tag) {
    this.method = method;
    this.path = path;
    this.tag = tag;
  }

  /** The HTTP method clients call it with: {@code POST} with a JSON body, or {@code GET}. */
  public String method() {
    return method;
  }

  /** Whether requests carry a JSON body (the parse stage reads it). */
  public boolean hasBody() {
    return method.equals("POST");
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
