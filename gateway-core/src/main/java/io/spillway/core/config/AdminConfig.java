package io.spillway.core.config;

/** The admin API and dashboard. With no token configured, {@code /admin/*} is switched off. */
public record AdminConfig(String token) {
  public static final AdminConfig DEFAULTS = new AdminConfig(null);

  public AdminConfig {
    token = token == null || token.isBlank() ? null : token;
  }

  public boolean enabled() {
    return token != null;
  }
}
