package io.spillway.app.admin;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real headless Chromium, driven over the DevTools protocol with {@code java.net.http}'s
 * WebSocket: navigate, evaluate JavaScript, and collect every console message, uncaught exception
 * and browser log entry. Started on an ephemeral loopback port with a throwaway profile.
 */
final class HeadlessChromium implements AutoCloseable {
  private static final List<String> CANDIDATES = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
      "/usr/bin/google-chrome");

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
  private final List<JsonNode> events = new CopyOnWriteArrayList<>();

  private HeadlessChromium(Process process, Path profile, WebSocket socket) {
    this.process = process;
    this.profile = profile;
    this.socket = socket;
  }

  /** Starts Chromium, or skips the test when it is not installed (fails instead when {@code CI=true}). */
  static HeadlessChromium start() throws IOException {
    String binary = System.getenv("CHROMIUM");
    if (binary == null) {
      binary = CANDIDATES.stream().filter(p -> Files.isExecutable(Path.of(p))).findFirst().orElse(null);
    }
    if (binary == null) {
      String reason = "chromium is not installed (apt-get install -y chromium, or set CHROMIUM=/path/to/chrome)";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(reason);
      }
      Assumptions.abort(reason);
    }
    Path profile = Files.createTempDirectory("spillway-chromium-");
    ProcessBuilder builder = new ProcessBuilder(binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--user-data-dir=" + profile, "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0", "--window-size=1280,900", "about:blank");
    // The page shows wall times in the browser's zone: UTC here, so that tests can name them.
    builder.environment().put("TZ", "UTC");
    Process process = builder
        .redirectErrorStream(true)
        .redirectOutput(profile.resolve("chromium.log").toFile())
        .start();
    try {
      Path portFile = profile.resolve("DevToolsActivePort");
      await("Chromium's DevTools port").atMost(Duration.ofSeconds(30)).until(() -> Files.exists(portFile)
          && Files.readAllLines(portFile).size() >= 2);
      int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
      HttpClient http = HttpClient.newHttpClient();
      String pageSocket = await("a page target").atMost(Duration.ofSeconds(10)).until(() -> {
        String list = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
            HttpResponse.BodyHandlers.ofString()).body();
        for (JsonNode target : Json.parse(list)) {
          if ("page".equals(target.path("type").asText())) {
            return target.path("webSocketDebuggerUrl").asText();
          }
        }
        return null;
      }, url -> url != null);
      HeadlessChromium[] self = new HeadlessChromium[1];
      WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(pageSocket), new WebSocket.Listener() {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
          text.append(data);
          if (last) {
            String message = text.toString();
            text.setLength(0);
            self[0].received(message);
          }
          webSocket.request(1);
          return null;
        }
      }).get(10, TimeUnit.SECONDS);
      HeadlessChromium chromium = new HeadlessChromium(process, profile, socket);
      self[0] = chromium;
      chromium.call("Runtime.enable", Json.object());
      chromium.call("Log.enable", Json.object());
      chromium.call("Page.enable", Json.object());
      return chromium;
    } catch (Exception e) {
      stopProcess(process);
      throw new IOException("could not start Chromium: " + e + "; its log: " + log(profile), e);
    }
  }

  private void received(String message) {
    try {
      JsonNode node = Json.parse(message);
      if (node.has("id")) {
        CompletableFuture<JsonNode> future = pending.remove(node.get("id").asInt());
        if (future != null) {
          future.complete(node);
        }
      } else {
        events.add(node);
      }
    } catch (IOException e) {
      throw new IllegalStateException("DevTools sent something that is not JSON: " + message, e);
    }
  }

  JsonNode call(String method, ObjectNode params) {
    int id = ids.incrementAndGet();
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    pending.put(id, answer);
    ObjectNode message = Json.object().put("id", id).put("method", method);
    message.set("params", params);
    socket.sendText(Json.toString(message), true).join();
    JsonNode result;
    try {
      result = answer.get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(method + " got no answer", e);
    }
    if (result.has("error")) {
      throw new IllegalStateException(method + " failed: " + result.get("error"));
    }
    return result.get("result");
  }

  /** Navigates and waits until the new document has loaded (its scripts have run). */
  void navigate(String url) {
    call("Page.navigate", Json.object().put("url", url));
    int hash = url.indexOf('#');
    String target = hash < 0 ? url : url.substring(0, hash);
    await("load of " + target).atMost(Duration.ofSeconds(15)).until(() -> "true".equals(eval(
        "String(document.readyState === 'complete' && (location.origin + location.pathname + location.search) === "
            + Json.MAPPER.getNodeFactory().textNode(target) + ")")));
  }

  /** Evaluates a JavaScript expression in the page and returns its value as a string. */
  String eval(String expression) {
    JsonNode result = call("Runtime.evaluate", Json.object().put("expression", expression).put("returnByValue", true));
    if (result.has("exceptionDetails")) {
      throw new IllegalStateException("page threw: " + result.get("exceptionDetails"));
    }
    JsonNode value = result.path("result").path("value");
    return value.isMissingNode() || value.isNull() ? null : value.asText();
  }

  /**
   * A PNG of the whole page (not only the window) at 1280 px wide, written to {@code file} for
   * people to look at; returns its bytes.
   */
  byte[] screenshot(Path file) throws IOException {
    int height = Integer.parseInt(eval("String(Math.ceil(document.documentElement.scrollHeight))"));
    call("Emulation.setDeviceMetricsOverride", Json.object().put("width", 1280).put("height", Math.max(600, height))
        .put("deviceScaleFactor", 1).put("mobile", false));
    try {
      JsonNode shot = call("Page.captureScreenshot", Json.object().put("format", "png"));
      byte[] png = java.util.Base64.getDecoder().decode(shot.path("data").asText());
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.write(file, png);
      return png;
    } finally {
      call("Emulation.clearDeviceMetricsOverride", Json.object());
    }
  }

  /** Console errors, uncaught exceptions and browser log entries at error level, as readable lines. */
  List<String> errors() {
    return events.stream().flatMap(event -> {
      String method = event.path("method").asText();
      JsonNode params = event.path("params");
      return switch (method) {
        case "Runtime.exceptionThrown" -> Stream.of("exception: " + params.path("exceptionDetails"));
        case "Runtime.consoleAPICalled" -> java.util.Set.of("error", "assert").contains(params.path("type").asText())
            ? Stream.of("console." + params.path("type").asText() + ": " + params.path("args"))
            : Stream.empty();
        case "Log.entryAdded" -> "error".equals(params.path("entry").path("level").asText())
            ? Stream.of("log: " + params.path("entry").path("text").asText() + " " + params.path("entry").path("url").asText())
            : Stream.empty();
        default -> Stream.empty();
      };
    }).toList();
  }

  void forgetEvents() {
    events.clear();
  }

  private static String log(Path profile) {
    try {
      return Files.readString(profile.resolve("chromium.log"));
    } catch (IOException e) {
      return "(none)";
    }
  }

  private static void stopProcess(Process process) {
    List<ProcessHandle> children = process.descendants().toList();
    process.destroy();
    children.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public void close() throws IOException {
    socket.abort();
    stopProcess(process);
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
