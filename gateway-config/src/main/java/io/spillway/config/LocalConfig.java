package io.spillway.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 * @param h2c speak HTTP/2 with prior knowledge to a plain-HTTP server (vLLM behind an h2c proxy,
 *     say); the default for every server of {@code servers}
 * @param poolIdleTimeout how long an idle connection to a local server is kept for reuse: shorter
 *     than the server's own keep-alive, so the gateway closes it first
 * @param messages how Anthropic's Messages API is served locally (native or over chat, pings)
 */
public record LocalConfig(
    Boolean enabled,
    Kind kind,
    String baseUrl,
    Map<String, LocalModel> models,
    Duration keepWarmEvery,
    Duration checkEvery,
    Duration timeout,
    Duration keepAlive,
    ResponsesApi responsesApi,
    LocalContextConfig context,
    List<LocalServerConfig> servers,
    LocalServerBreakerConfig serverBreaker,
    Boolean h2c,
    Duration poolIdleTimeout,
    LocalMessagesConfig messages) {

  /** What {@code keepAlive} adds to {@code keepWarmEvery} when it is not set (declared before DEFAULTS). */
  public static final Duration KEEP_ALIVE_MARGIN = Duration.ofMinutes(5);

  public static final LocalConfig DEFAULTS =
      new LocalConfig(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);

  public LocalConfig {
    enabled = enabled != null ? enabled : true;
    kind = kind != null ? kind : Kind.OLLAMA;
    servers = servers == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(servers));
    if (baseUrl == null && !servers.isEmpty() && servers.get(0) != null && servers.get(0).baseUrl() != null) {
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
    responsesApi = responsesApi != null ? responsesApi : ResponsesApi.CHAT;
    context = context != null ? context : LocalContextConfig.DEFAULTS;
    h2c = h2c != null ? h2c : false;
    // Below uvicorn's (vLLM's) 5 s keep-alive, so an idle connection is closed by the gateway first.
    poolIdleTimeout = poolIdleTimeout != null ? poolIdleTimeout : Duration.ofSeconds(4);
    messages = messages != null ? messages : LocalMessagesConfig.DEFAULTS;
    ConfigProblems.at("local").positive("poolIdleTimeout", poolIdleTimeout, "must be longer than zero");
    check(ConfigProblems.at("local"), servers, baseUrl, models, keepWarmEvery, checkEvery, timeout, keepAlive);
  }

  /** The smallest context window Spillway accepts for a local model. */
  static final int MIN_CONTEXT_TOKENS = 1024;

  private static void check(ConfigProblems.Reporter at, List<LocalServerConfig> servers, String baseUrl,
      Map<String, LocalModel> models, Duration keepWarmEvery, Duration checkEvery, Duration timeout,
      Duration keepAlive) {
    if (servers.isEmpty()) {
      at.url("baseUrl", baseUrl); // with servers, each is checked by its index
    }
    Duration second = Duration.ofSeconds(1);
    if (keepWarmEvery.compareTo(second) < 0) {
      at.problem("keepWarmEvery", "must be at least 1s");
    }
    if (checkEvery.compareTo(second) < 0) {
      at.problem("checkEvery", "must be at least 1s");
    }
    if (timeout.compareTo(second) < 0) {
      at.problem("timeout", "must be at least 1s");
    }
    if (keepAlive.compareTo(keepWarmEvery) <= 0) {
      at.problem("keepAlive", "must be longer than " + at.path("keepWarmEvery") + " ("
          + Durations.format(keepWarmEvery) + "), or the model unloads between keep-warm requests");
    }
    models.forEach((requested, target) -> {
      String name = target == null ? null : target.model();
      if (requested == null || requested.isBlank() || name == null || name.isBlank()) {
        at.problem("models", "every entry needs a requested model and a local model ('" + requested + ": " + name
            + "')");
      } else if (target.contextTokens() != null && target.contextTokens() < MIN_CONTEXT_TOKENS) {
        at.problem("models." + requested + ".contextTokens", target.contextTokens() + " is below "
            + MIN_CONTEXT_TOKENS + "; give the model's real window (Ollama: `ollama show " + name
            + "`, context length)");
      }
    });
    Set<String> names = new HashSet<>();
    for (int i = 0; i < servers.size(); i++) {
      LocalServerConfig server = servers.get(i);
      if (server == null) {
        at.problem("servers[" + i + "]", "an empty entry; each server needs name and baseUrl");
      } else if (server.name() != null && !server.name().isBlank() && !names.add(server.name())) {
        at.problem("servers[" + i + "].name", "'" + server.name() + "' names two servers");
      }
    }
  }

  /** What API a local server speaks. */
  public enum Kind implements Choice {
    /** Ollama's native {@code /api/*}. */
    OLLAMA,
    /** Any OpenAI-compatible server. */
    OPENAI;
  }

  /** How {@code /v1/responses} reaches an OpenAI-kind server. */
  public enum ResponsesApi implements Choice {
    /** Translated to {@code /v1/chat/completions} (the default). */
    CHAT,
    /** Forwarded to the server's own {@code /v1/responses}. */
    NATIVE;
  }

  /** One server ({@code kind}, {@code baseUrl}) with the default per-server breaker. */
  public LocalConfig(
      Boolean enabled,
      Kind kind,
      String baseUrl,
      Map<String, LocalModel> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive,
      ResponsesApi responsesApi,
      LocalContextConfig context) {
    this(enabled, kind, baseUrl, models, keepWarmEvery, checkEvery, timeout, keepAlive, responsesApi, context,
        null, null);
  }

  /** Several servers, over HTTP/1.1 (or whatever TLS negotiates) with the default idle timeout. */
  public LocalConfig(
      Boolean enabled,
      Kind kind,
      String baseUrl,
      Map<String, LocalModel> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive,
      ResponsesApi responsesApi,
      LocalContextConfig context,
      List<LocalServerConfig> servers,
      LocalServerBreakerConfig serverBreaker) {
    this(enabled, kind, baseUrl, models, keepWarmEvery, checkEvery, timeout, keepAlive, responsesApi, context,
        servers, serverBreaker, null, null, null);
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
   * This config as one server sees it: {@code kind}, {@code baseUrl} and {@code h2c} are the
   * server's, and the list is empty. Everything else (models, timeouts, context fitting) is shared.
   */
  public LocalConfig forServer(LocalServerConfig server) {
    LocalServerConfig resolved = server.withKind(kind);
    return new LocalConfig(enabled, resolved.kind(), resolved.baseUrl(), models, keepWarmEvery, checkEvery, timeout,
        keepAlive, responsesApi, context, null, serverBreaker, resolved.h2c() != null ? resolved.h2c() : h2c,
        poolIdleTimeout, messages);
  }

  /** Models given by name only; {@code responsesApi} and context fitting by their defaults. */
  public LocalConfig(
      Boolean enabled,
      Kind kind,
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
      Kind kind,
      String baseUrl,
      Map<String, String> models,
      Duration keepWarmEvery,
      Duration checkEvery,
      Duration timeout,
      Duration keepAlive,
      ResponsesApi responsesApi) {
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
