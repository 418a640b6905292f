package io.spillway.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The local backend used while the cloud is at capacity.
 *
 * @param kind {@code ollama} (native {@code /api/*}) or {@code openai} (any OpenAI-compatible server)
 * @param models requested model → local model (a name, or a name with its context window); the
 *     {@code default} entry serves everything else
 * @param keepWarmEvery how often a tiny request keeps the mapped models loaded
 * @param checkEvery how often readiness (server up, models present) is checked
 * @param keepAlive how long Ollama keeps a model loaded after each request Spillway sends (its
 *     {@code keep_alive}); longer than {@code keepWarmEvery} so the model never unloads in between
 * @param responsesApi for {@code kind: openai}: how {@code /v1/responses} reaches the server,
 *     {@code chat} (translated to {@code /v1/chat/completions}, which every OpenAI-compatible server
 *     has) or {@code native} (forwarded to the server's own {@code /v1/responses})
 * @param context how requests are fitted to the local model's context window
 * @param servers several GPU servers, each with its name, kind and base URL; empty when the
 *     one-server shorthand ({@code kind} and {@code baseUrl}) is used. {@link #serverList()} gives
 *     the servers either way
 * @param serverBreaker the failure-rate breaker each server has of its own
 */
public record LocalConfig(
    Boolean enabled,
    String kind,
    String baseUrl,
    Map<String, LocalModel> models,
    Duration keepWarmEvery,
    Duration checkEvery,
    Duration timeout,
    Duration keepAlive,
    String responsesApi,
    LocalContextConfig context,
    List<LocalServerConfig> servers,
    LocalServerBreakerConfig serverBreaker) {

  /** What {@code keepAlive} adds to {@code keepWarmEvery} when it is not set (declared before DEFAULTS). */
  public static final Duration KEEP_ALIVE_MARGIN = Duration.ofMinutes(5);

  public static final LocalConfig DEFAULTS =
      new LocalConfig(null, null, null, null, null, null, null, null, null, null, null, null);

  /** {@code responsesApi}: translate the Responses API to chat completions (the default). */
  public static final String RESPONSES_VIA_CHAT = "chat";

  /** {@code responsesApi}: forward the Responses API to the server's own {@code /v1/responses}. */
  public static final String RESPONSES_NATIVE = "native";

  public LocalConfig {
    enabled = enabled != null ? enabled : true;
    kind = kind != null ? kind : "ollama";
    servers = servers == null ? List.of() : List.copyOf(servers);
    if (baseUrl == null && !servers.isEmpty() && servers.get(0).baseUrl() != null) {
      // Code that knows one server only (and log lines) see the first of the list.
      baseUrl = servers.get(0).baseUrl();
    }
    baseUrl = baseUrl != null ? CloudConfig.stripTrailingSlash(baseUrl) : "http://127.0.0.1:11434";
    serverBreaker = serverBreaker != null ? serverBreaker : LocalServerBreakerConfig.DEFAULTS;
    if (models == null) {
      models = new LinkedHashMap<>();
      models.put("default", LocalModel.named("qwen2.5-coder:7b"));
    } else if (!models.containsKey("default")) {
      models = new LinkedHashMap<>(models);
      models.put("default", LocalModel.named("qwen2.5-coder:7b"));
    }
    models = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(models));
    keepWarmEvery = keepWarmEvery != null ? keepWarmEvery : Duration.ofMinutes(15);
    checkEvery = checkEvery != null ? checkEvery : Duration.ofMinutes(1);
    timeout = timeout != null ? timeout : Duration.ofSeconds(300);
    keepAlive = keepAlive != null ? keepAlive : keepWarmEvery.plus(KEEP_ALIVE_MARGIN);
    responsesApi = responsesApi != null ? responsesApi : RESPONSES_VIA_CHAT;
    context = context != null ? context : LocalContextConfig.DEFAULTS;
  }

  /** One server ({@code kind}, {@code baseUrl}) with the default per-server breaker. */
  public LocalConfig(
      Boolean enabled,
      String kind,
      String baseUrl,
      Map<String, LocalModel> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive,
      String responsesApi,
      LocalContextConfig context) {
    this(enabled, kind, baseUrl, models, keepWarmEvery, checkEvery, timeout, keepAlive, responsesApi, context,
        null, null);
  }

  /**
   * The servers to use: {@code local.servers} (each without a kind taking {@code local.kind}), or
   * for the one-server shorthand a list of one named {@value LocalServerConfig#SHORTHAND_NAME}.
   */
  public List<LocalServerConfig> serverList() {
    if (servers.isEmpty()) {
      return List.of(new LocalServerConfig(LocalServerConfig.SHORTHAND_NAME, kind, baseUrl));
    }
    return servers.stream().map(s -> s.withKind(kind)).toList();
  }

  /**
   * This config as one server sees it: {@code kind} and {@code baseUrl} are the server's, and the
   * list is empty. Everything else (models, timeouts, context fitting) is shared.
   */
  public LocalConfig forServer(LocalServerConfig server) {
    LocalServerConfig resolved = server.withKind(kind);
    return new LocalConfig(enabled, resolved.kind(), resolved.baseUrl(), models, keepWarmEvery, checkEvery, timeout,
        keepAlive, responsesApi, context, null, serverBreaker);
  }

  /** Models given by name only; {@code responsesApi} and context fitting by their defaults. */
  public LocalConfig(
      Boolean enabled,
      String kind,
      String baseUrl,
      Map<String, String> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive) {
    this(enabled, kind, baseUrl, models, keepWarmEvery, checkEvery, timeout, keepAlive, null);
  }

  /** Models given by name only; context fitting by its defaults. */
  public LocalConfig(
      Boolean enabled,
      String kind,
      String baseUrl,
      Map<String, String> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive,
      String responsesApi) {
    this(enabled, kind, baseUrl, named(models), keepWarmEvery, checkEvery, timeout, keepAlive, responsesApi, null);
  }

  private static Map<String, LocalModel> named(Map<String, String> models) {
    if (models == null) {
      return null;
    }
    Map<String, LocalModel> out = new LinkedHashMap<>();
    models.forEach((requested, local) -> out.put(requested, LocalModel.named(local)));
    return out;
  }

  /** Requested model → local model name, {@code default} included. */
  public Map<String, String> modelNames() {
    Map<String, String> names = new LinkedHashMap<>();
    models.forEach((requested, local) -> names.put(requested, local == null ? null : local.model()));
    return java.util.Collections.unmodifiableMap(names);
  }

  /**
   * The context window configured for a local model ({@code contextTokens} on any entry that maps to
   * it), or null when none is.
   */
  public Integer contextTokens(String localModel) {
    for (LocalModel entry : models.values()) {
      if (entry != null && entry.contextTokens() != null && entry.model().equals(localModel)) {
        return entry.contextTokens();
      }
    }
    return null;
  }


  /** The local model for a requested one: its mapping, else {@code default}. */
  public String mapModel(String requested) {
    LocalModel mapped = requested == null ? null : models.get(requested);
    return mapped != null ? mapped.model() : models.get("default").model();
  }
}
