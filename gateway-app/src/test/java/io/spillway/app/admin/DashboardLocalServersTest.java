package io.spillway.app.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's "Local servers" section, checked in Chromium against the {@code local} part of
 * {@code /admin/status} in the shape {@link io.spillway.local.LocalPool#toJson} gives it: each GPU
 * server with ready, breaker state, requests in flight and loaded models.
 */
class DashboardLocalServersTest {
  static final String TOKEN = "render-token";

  static final String STATUS = """
      {"version":"9.9.9","uptimeSeconds":60,"ready":true,
       "backends":[{"name":"cloud","ready":true},{"name":"local","ready":true}],
       "traffic":{"requests":77,"capacityRate":0.0,"capacityWindow":"5m"},
       "breaker":{"mode":"local","state":"closed","history":[]},
       "local":{"kind":"ollama","ready":true,"servers":[
         {"name":"gpu-a","kind":"ollama","ready":true,"breaker":"closed","outstanding":3,
          "loaded":["qwen2.5-coder:7b","llama3.2:3b"]},
         {"name":"gpu-b","kind":"ollama","ready":false,"breaker":"open","outstanding":0,"loaded":[]}]}}
      """;

  static HttpServer serve() throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      byte[] body;
      String type = "application/json";
      int status = 200;
      if (path.equals("/dashboard")) {
        try (InputStream in = DashboardLocalServersTest.class.getResourceAsStream(Dashboard.RESOURCE)) {
          body = in.readAllBytes();
        }
        type = "text/html; charset=utf-8";
      } else if (!("Bearer " + TOKEN).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
        status = 401;
        body = "{}".getBytes(StandardCharsets.UTF_8);
      } else {
        // The other sections get empty answers: they show "not available".
        body = (path.equals("/admin/status") ? STATUS : "{}").getBytes(StandardCharsets.UTF_8);
      }
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    return server;
  }

  @Test
  void eachLocalServerShowsReadinessBreakerInFlightAndLoadedModels() throws Exception {
    HttpServer server = serve();
    try (HeadlessChromium chromium = HeadlessChromium.start()) {
      chromium.navigate("http://127.0.0.1:" + server.getAddress().getPort() + "/dashboard#token=" + TOKEN);
      await().atMost(Duration.ofSeconds(15)).until(() -> "77".equals(
          chromium.eval("(document.getElementById('requests-total') || {}).textContent")));

      assertThat(chromium.eval("Array.from(document.querySelectorAll('#local-servers li'))"
          + ".map(li => li.className + ': ' + li.textContent).join('\\n')")).isEqualTo(
          "ok: gpu-a — ready · breaker closed · 3 in flight · loaded: qwen2.5-coder:7b, llama3.2:3b\n"
              + "bad: gpu-b — not ready · breaker open · 0 in flight · loaded: none");
      assertThat(chromium.errors()).isEmpty();
    } finally {
      server.stop(0);
    }
  }
}
