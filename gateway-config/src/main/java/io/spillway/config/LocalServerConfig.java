package io.spillway.config;

/**
 * One GPU server of {@code local.servers}. The servers share {@code local.models} and every other
 * {@code local.*} setting; each is checked, kept warm and chosen on its own.
 *
 * @param name how the server is named in {@code /admin/status}, {@code /readyz}, logs and the
 *     {@code server} tag of metrics; required, unique
 * @param kind {@code ollama} or {@code openai}; null means {@code local.kind}
 * @param baseUrl where the server listens; required
 */
public record LocalServerConfig(String name, String kind, String baseUrl) {
  /** The name the one-server shorthand ({@code local.baseUrl}) gives its server. */
  public static final String SHORTHAND_NAME = "local";

  public LocalServerConfig {
    baseUrl = baseUrl != null ? CloudConfig.stripTrailingSlash(baseUrl) : null;
  }

  LocalServerConfig withKind(String defaultKind) {
    return kind != null ? this : new LocalServerConfig(name, defaultKind, baseUrl);
  }
}
