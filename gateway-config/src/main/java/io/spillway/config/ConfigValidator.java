package io.spillway.config;

import io.spillway.core.pipeline.Tier;
import java.net.URI;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Checks that a bound config is usable as a whole: ranges, contradictions, references. */
final class ConfigValidator {
  private ConfigValidator() {}

  static List<String> problems(GatewayConfig c) {
    List<String> problems = new ArrayList<>();
    checkUrl(problems, "local.baseUrl", c.local().baseUrl());
    if (!Set.of("ollama", "openai").contains(c.local().kind())) {
      problems.add("key 'local.kind': '" + c.local().kind() + "' is not one of ollama, openai");
    }
    checkLocal(problems, c.local());
    return problems;
  }



  private static void checkLocal(List<String> problems, LocalConfig local) {
    if (!Set.of(LocalConfig.RESPONSES_VIA_CHAT, LocalConfig.RESPONSES_NATIVE).contains(local.responsesApi())) {
      problems.add("key 'local.responsesApi': '" + local.responsesApi() + "' is not one of chat, native");
    }
    java.time.Duration second = java.time.Duration.ofSeconds(1);
    if (local.keepWarmEvery().compareTo(second) < 0) {
      problems.add("key 'local.keepWarmEvery': must be at least 1s");
    }
    if (local.checkEvery().compareTo(second) < 0) {
      problems.add("key 'local.checkEvery': must be at least 1s");
    }
    if (local.timeout().compareTo(second) < 0) {
      problems.add("key 'local.timeout': must be at least 1s");
    }
    if (local.keepAlive().compareTo(local.keepWarmEvery()) <= 0) {
      problems.add("key 'local.keepAlive': must be longer than local.keepWarmEvery ("
          + Durations.format(local.keepWarmEvery()) + "), or the model unloads between keep-warm requests");
    }
    local.models().forEach((requested, target) -> {
      String name = target == null ? null : target.model();
      if (requested == null || requested.isBlank() || name == null || name.isBlank()) {
        problems.add("key 'local.models': every entry needs a requested model and a local model ('"
            + requested + ": " + name + "')");
      } else if (target.contextTokens() != null && target.contextTokens() < MIN_CONTEXT_TOKENS) {
        problems.add("key 'local.models." + requested + ".contextTokens': " + target.contextTokens()
            + " is below " + MIN_CONTEXT_TOKENS + "; give the model's real window (Ollama: `ollama show "
            + name + "`, context length)");
      }
    });
    checkContext(problems, local.context());
  }

  /** The smallest context window Spillway accepts for a local model. */
  private static final int MIN_CONTEXT_TOKENS = 1024;

  private static void checkContext(List<String> problems, LocalContextConfig c) {
    if (c.defaultTokens() < MIN_CONTEXT_TOKENS) {
      problems.add("key 'local.context.defaultTokens': must be at least " + MIN_CONTEXT_TOKENS);
    }
    if (c.minTokens() < MIN_CONTEXT_TOKENS) {
      problems.add("key 'local.context.minTokens': must be at least " + MIN_CONTEXT_TOKENS);
    }
    if (c.maxTokens() < c.minTokens()) {
      problems.add("key 'local.context.maxTokens': " + c.maxTokens() + " is below local.context.minTokens ("
          + c.minTokens() + ")");
    }
    if (c.outputReserveTokens() < 1) {
      problems.add("key 'local.context.outputReserveTokens': must be at least 1");
    }
    if (c.toolOutputTokens() < 16) {
      problems.add("key 'local.context.toolOutputTokens': must be at least 16");
    }
    if (c.estimateMargin() < 0 || c.estimateMargin() >= 1) {
      problems.add("key 'local.context.estimateMargin': must be at least 0 and below 1 (a fraction, e.g. 0.10)");
    }
  }





  private static void checkUrl(List<String> problems, String key, String url) {
    try {
      URI uri = URI.create(url);
      if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
        problems.add("key '" + key + "': '" + url + "' is not an http(s) URL");
      }
    } catch (IllegalArgumentException e) {
      problems.add("key '" + key + "': '" + url + "' is not a URL");
    }
  }

}
