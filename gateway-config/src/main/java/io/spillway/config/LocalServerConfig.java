package io.spillway.config;

/**
 * One GPU server of {@code local.servers}. The servers share {@code local.models} and every other
 * {@code local.*} setting; each is checked, kept warm and chosen on its own.
 *
 * @param name how the server is named in {@code /admin/status}, {@code /readyz}, logs and the
 *     {@code server} tag of metrics; required, unique
 * @param kind {@code ollama} or {@code openai}; null means {@code local.kind}
 * @param baseUrl where the server listens; required
 * @param h2c HTTP/2 with prior knowledge to this plain-HTTP server; null means {@code local.h2c}
 */
public record LocalServerConfig(String name, LocalConfig.Kind kind, String baseUrl, Boolean h2c) {
  /** The name the one-server shorthand ({@code local.baseUrl}) gives its server. */
  public static final String SHORTHAND_NAME = "local";

  public LocalServerConfig {
    baseUrl = baseUrl != null ? CloudConfig.stripTrailingSlash(baseUrl) : null;
    ConfigProblems.Reporter at = ConfigProblems.at("local.servers[]");
    if (name == null || name.isBlank()) {
      at.problem("name", "every server needs a name (it names the server in status and metrics)");
    }
    if (baseUrl == null) {
      at.problem("baseUrl", "every server needs a baseUrl");
    } else {
      at.url("baseUrl", baseUrl);
    }
  }

  /** A server that speaks what {@code local.h2c} says. */
  public LocalServerConfig(String name, LocalConfig.Kind kind, String baseUrl) {
    this(name, kind, baseUrl, null);
  }

  LocalServerConfig withKind(LocalConfig.Kind defaultKind) {
    return kind != null ? this : new LocalServerConfig(name, defaultKind, baseUrl, h2c);
  }
}
