package io.spillway.app.admin;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.Headers;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * {@code GET /dashboard/runbook}: docs/operations.md as shipped in this jar (the build copies it),
 * so that the dashboard's "what you can do" links to the runbook of the version that runs, with no
 * network. Each heading gets the anchor GitHub gives it ({@code ## Runbook: SpillwayCapacityStorm}
 * is {@code #runbook-spillwaycapacitystorm}); the text between headings is shown as written, in
 * Markdown. Like the dashboard, it holds no data and no secret; it is on when the dashboard is.
 */
public final class RunbookPage implements HttpService {
  static final String RESOURCE = "/io/spillway/app/admin/docs/operations.md";
  private static final String CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
      + "form-action 'none'; frame-ancestors 'none'";

  /** The rendered page, or null when this build left the runbook out (the page then answers 404). */
  private final byte[] page;

  public RunbookPage() {
    try (InputStream in = RunbookPage.class.getResourceAsStream(RESOURCE)) {
      page = in == null ? null
          : render(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    if (page == null) {
      throw ErrorKind.NOT_FOUND.exception("This build of Spillway does not include its runbook: read"
          + " docs/operations.md of the same version");
    }
    return GatewayResponse.buffered(200, Headers.of(
        "content-type", "text/html; charset=utf-8",
        "cache-control", "no-cache",
        "content-security-policy", CSP,
        "x-frame-options", "DENY",
        "x-content-type-options", "nosniff",
        "referrer-policy", "no-referrer"), page);
  }

  /** Headings as headings with their anchors; every other line as written, escaped. */
  static String render(String markdown) {
    StringBuilder html = new StringBuilder(markdown.length() + 2048);
    html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Spillway runbook</title>"
        + "<style>body{margin:0 auto;max-width:60rem;padding:1rem 1.5rem;font:15px/1.5 system-ui,sans-serif;"
        + "background:#0f1419;color:#e6e9ec}h1,h2,h3{margin:1.6rem 0 .4rem}h2:target{color:#58a6ff}"
        + "pre{white-space:pre-wrap;font:14px/1.5 ui-monospace,monospace;margin:0}a{color:#58a6ff}</style>"
        + "</head><body><p><a href=\"/dashboard\">← dashboard</a></p>\n");
    boolean inFence = false;
    StringBuilder text = new StringBuilder();
    for (String line : markdown.split("\n", -1)) {
      if (line.startsWith("```")) {
        inFence = !inFence;
      }
      int level = inFence ? 0 : headingLevel(line);
      if (level == 0) {
        text.append(escape(line)).append('\n');
        continue;
      }
      flush(html, text);
      String title = line.substring(level).trim();
      html.append("<h").append(level).append(" id=\"").append(slug(title)).append("\">")
          .append(escape(title)).append("</h").append(level).append(">\n");
    }
    flush(html, text);
    return html.append("</body></html>\n").toString();
  }

  private static void flush(StringBuilder html, StringBuilder text) {
    if (!text.toString().isBlank()) {
      html.append("<pre>").append(text.toString().strip()).append("</pre>\n");
    }
    text.setLength(0);
  }

  private static int headingLevel(String line) {
    int level = 0;
    while (level < line.length() && line.charAt(level) == '#') {
      level++;
    }
    return level >= 1 && level <= 6 && level < line.length() && line.charAt(level) == ' ' ? level : 0;
  }

  /** GitHub's anchor of a heading: lower case, spaces to '-', everything but letters, digits, '-' and '_' dropped. */
  static String slug(String title) {
    StringBuilder out = new StringBuilder();
    for (char c : title.toLowerCase(Locale.ROOT).toCharArray()) {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        out.append(c);
      } else if (c == ' ') {
        out.append('-');
      }
    }
    return out.toString();
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
