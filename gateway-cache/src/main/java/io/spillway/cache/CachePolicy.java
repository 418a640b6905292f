package io.spillway.cache;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.CacheConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Decides, from the request as the client sent it, whether the cache may answer it and under which
 * key. Only answers meant to be reproducible are cached: {@code temperature} 0 or a fixed
 * {@code seed}, one choice ({@code n} absent or 1), no tool the config names as uncacheable, and no
 * server-side state that a replay would skip (Responses API {@code background} runs and
 * {@code conversation}s). Chat completions, completions, the Responses API and Anthropic's Messages
 * API are cached, each under its own route. Stateless and thread-safe.
 */
final class CachePolicy {
  /** Headers that change what the upstream answers, and so belong in the key. */
  private static final String OPENAI_BETA = "openai-beta";
  private static final String ANTHROPIC_BETA = "anthropic-beta";
  private static final String ANTHROPIC_VERSION = "anthropic-version";

  enum Mode {
    /** Neither read nor write the cache, nor join an in-flight call. */
    BYPASS,
    /** Answer from the cache or an identical in-flight call; otherwise call upstream and store. */
    LOOKUP,
    /** {@code Cache-Control: no-cache}: call upstream regardless, and store the fresh answer. */
    REFRESH
  }

  /** The outcome; {@code reason} is a short, bounded tag for the bypass metric. */
  record Decision(Mode mode, CacheKey key, String reason) {
    static Decision bypass(String reason) {
      return new Decision(Mode.BYPASS, null, reason);
    }
  }

  private final CacheConfig config;
  private final Set<String> uncacheableTools;

  CachePolicy(CacheConfig config) {
    this.config = config;
    Set<String> tools = new HashSet<>();
    for (String tool : config.uncacheableTools()) {
      tools.add(tool.trim().toLowerCase(Locale.ROOT));
    }
    this.uncacheableTools = Set.copyOf(tools);
  }

  Decision decide(GatewayRequest request, Caller caller) {
    if (!config.enabled()) {
      return Decision.bypass("disabled");
    }
    Route route = request.route();
    if (route != Route.CHAT_COMPLETIONS && route != Route.COMPLETIONS && route != Route.RESPONSES
        && route != Route.MESSAGES) {
      return Decision.bypass("route");
    }
    if (caller == null || !config.enabledFor(caller.tier())) {
      return Decision.bypass("tier");
    }
    CacheControl control = CacheControl.parse(request.headers().get("cache-control"),
        request.headers().get("pragma"));
    if (control == CacheControl.NO_STORE) {
      return Decision.bypass("no-store");
    }
    ObjectNode body = request.body();
    if (!deterministic(body)) {
      return Decision.bypass("sampling");
    }
    JsonNode n = body.get("n");
    if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.asLong() == 1)) {
      return Decision.bypass("n");
    }
    if (hasUncacheableTool(body.get("tools"))) {
      return Decision.bypass("tools");
    }
    if (route == Route.RESPONSES && (isTrue(body.get("background")) || present(body.get("conversation")))) {
      return Decision.bypass("stateful");
    }
    // The route is part of the key, so a Messages answer never answers a chat request or the other
    // way round; Anthropic's version and beta headers change its answer as openai-beta does OpenAI's.
    byte[] digest = route == Route.MESSAGES
        ? CanonicalJson.sha256(body, request.headers().get(ANTHROPIC_BETA), request.headers().get(ANTHROPIC_VERSION))
        : CanonicalJson.sha256(body, request.headers().get(OPENAI_BETA));
    CacheKey key = CacheKey.of(scope(caller), route, request.model(), digest);
    return new Decision(control == CacheControl.NO_CACHE ? Mode.REFRESH : Mode.LOOKUP, key, null);
  }

  private String scope(Caller caller) {
    return switch (config.scope()) {
      case GLOBAL -> "global";
      case TIER -> "tier:" + caller.tier().tag();
      case TEAM -> "team:" + caller.team();
    };
  }

  /** {@code temperature} exactly 0, or an integer {@code seed}. */
  static boolean deterministic(ObjectNode body) {
    JsonNode temperature = body.get("temperature");
    if (temperature != null && temperature.isNumber() && temperature.decimalValue().compareTo(BigDecimal.ZERO) == 0) {
      return true;
    }
    JsonNode seed = body.get("seed");
    return seed != null && seed.isIntegralNumber();
  }

  private boolean hasUncacheableTool(JsonNode tools) {
    if (tools == null || !tools.isArray() || uncacheableTools.isEmpty()) {
      return false;
    }
    for (JsonNode tool : tools) {
      if (named(tool.get("type")) || named(tool.get("name"))
          || (tool.get("function") != null && named(tool.get("function").get("name")))) {
        return true;
      }
    }
    return false;
  }

  private boolean named(JsonNode name) {
    return name != null && name.isTextual() && uncacheableTools.contains(name.textValue().toLowerCase(Locale.ROOT));
  }

  private static boolean isTrue(JsonNode node) {
    return node != null && node.asBoolean(false);
  }

  private static boolean present(JsonNode node) {
    return node != null && !node.isNull();
  }

  /** The request directives Spillway honours. */
  enum CacheControl {
    DEFAULT,
    NO_CACHE,
    NO_STORE;

    /**
     * {@code no-store} wins over {@code no-cache}; {@code max-age=0} means {@code no-cache};
     * {@code Pragma: no-cache} counts only without a {@code Cache-Control} header (RFC 9111 5.4).
     */
    static CacheControl parse(String cacheControl, String pragma) {
      if (cacheControl == null) {
        return pragma != null && pragma.toLowerCase(Locale.ROOT).contains("no-cache") ? NO_CACHE : DEFAULT;
      }
      CacheControl result = DEFAULT;
      for (String part : cacheControl.split(",")) {
        String directive = part.trim().toLowerCase(Locale.ROOT);
        int eq = directive.indexOf('=');
        String name = eq < 0 ? directive : directive.substring(0, eq).trim();
        String value = eq < 0 ? null : directive.substring(eq + 1).trim().replace("\"", "");
        if (name.equals("no-store")) {
          return NO_STORE;
        }
        if (name.equals("no-cache") || (name.equals("max-age") && "0".equals(value))) {
          result = NO_CACHE;
        }
      }
      return result;
    }
  }
}
