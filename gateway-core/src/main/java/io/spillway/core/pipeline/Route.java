package io.spillway.core.pipeline;

/**
 * The endpoints Spillway serves, each in the API ({@link Api}) its clients speak: OpenAI's model
 * calls through the pipeline, the model list by its own service, and Anthropic's Messages API
 * (Claude Code) with its token count.
 */
public enum Route {
  COMPLETIONS("POST", "/v1/completions", "completions", Api.OPENAI),
  CHAT_COMPLETIONS("POST", "/v1/chat/completions", "chat", Api.OPENAI),
  RESPONSES("POST", "/v1/responses", "responses", Api.OPENAI),
  EMBEDDINGS("POST", "/v1/embeddings", "embeddings", Api.OPENAI),
  MODELS("GET", "/v1/models", "models", Api.OPENAI),
  /** Anthropic's Messages API: a model call, streamed or not. */
  MESSAGES("POST", "/v1/messages", "messages", Api.ANTHROPIC),
  /** Anthropic's token count of a Messages request: answered by the gateway, no model runs. */
  MESSAGES_COUNT_TOKENS("POST", "/v1/messages/count_tokens", "count_tokens", Api.ANTHROPIC);

  /** The wire API a route's clients speak: its request and answer shapes, and its error dialect. */
  public enum Api {
    OPENAI,
    ANTHROPIC
  }

  private final String method;
  private final String path;
  private final String tag;
  private final Api api;

  Route(String method, String path, String tag, Api api) {
    this.method = method;
    this.path = path;
    this.tag = tag;
    this.api = api;
  }

  /** The API the route's clients speak. */
  public Api api() {
    return api;
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
