import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A bounded soak run of the real Spillway jar under mixed load with injected faults. Not part of
 * CI. Run it through {@code bench/soak.sh}; see docs/operations-soak.md.
 *
 * <p>It starts a fake OpenAI upstream in this process (normal answers, streams, and faults chosen
 * per request: reset before the first byte, a hang past the gateway's timeout, an upstream 500, a
 * stream cut in the middle), starts the gateway jar as a child process with Netty's leak detector
 * at PARANOID, and drives it with concurrent clients (buffered and streamed chats, model lists,
 * bad JSON, wrong keys, slow readers, clients that hang up mid-stream). Every answer is checked
 * against what its scenario should get; anything else is an unexpected error. At the end it
 * compares the gateway's heap after a full GC before and after the load and greps the gateway's
 * log for LEAK reports. Exit code 0 only when there were no unexpected errors, no leak reports and
 * the heap stayed flat.
 */
public final class Soak {
  static final String KEY = "sk-soak-gold-key";
  static final String CLOUD_KEY = "sk-soak-cloud-key";
  static final Duration UPSTREAM_TIMEOUT = Duration.ofSeconds(2);

  enum Scenario {
    CHAT(36), STREAM(22), MODELS(5), RESET(5), HANG(3), UPSTREAM_500(5), CUT_STREAM(5),
    BAD_JSON(5), WRONG_KEY(4), SLOW_READER(5), HANG_UP(5);

    final int weight;

    Scenario(int weight) {
      this.weight = weight;
    }
  }

  record Outcome(Scenario scenario, boolean expected, String detail) {}

  public static void main(String[] args) throws Exception {
    Duration duration = Duration.ofMinutes(3);
    int concurrency = 16;
    Path jar = Path.of("gateway-app/target/spillway.jar");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> duration = Duration.ofSeconds(20);
        case "--duration" -> duration = parseDuration(args[++i]);
        case "--concurrency" -> concurrency = Integer.parseInt(args[++i]);
        case "--jar" -> jar = Path.of(args[++i]);
        default -> {
          System.err.println("usage: Soak [--quick | --duration 3m] [--concurrency 16] [--jar path]");
          System.exit(2);
        }
      }
    }
    if (duration.compareTo(Duration.ofMinutes(10)) > 0) {
      System.err.println("soak: a run is bounded to 10 minutes");
      System.exit(2);
    }
    if (!Files.isRegularFile(jar)) {
      System.err.println("soak: no jar at " + jar + " (build it: ./mvnw -q -DskipTests package)");
      System.exit(2);
    }
    System.exit(new Soak().run(jar, duration, concurrency) ? 0 : 1);
  }

  private final AtomicLong upstreamCalls = new AtomicLong();

  boolean run(Path jar, Duration duration, int concurrency) throws Exception {
    HttpServer upstream = fakeUpstream();
    Path work = Files.createTempDirectory("spillway-soak");
    int port = freePort();
    Path config = work.resolve("soak.yaml");
    Files.writeString(config, """
        server:
          host: 127.0.0.1
          port: %d
          idleTimeout: 10s
          requestReadTimeout: 5s
          streamTimeLimit: 60s
        admin:
          token: soak-admin-token
        cloud:
          baseUrl: http://127.0.0.1:%d/v1
          apiKey: %s
          timeout: %ds
        local:
          enabled: false
        keys:
          - { key: %s, team: soak, tier: gold }
        store: memory
        """.formatted(port, upstream.getAddress().getPort(), CLOUD_KEY, UPSTREAM_TIMEOUT.toSeconds(), KEY));
    Path log = work.resolve("gateway.log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process gateway = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
            "-Dio.netty.leakDetection.level=paranoid", "-jar", jar.toString(), "serve", "--config", config.toString())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    String base = "http://127.0.0.1:" + port;
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    boolean ok = false;
    try {
      awaitHealthy(client, base, gateway, log);
      System.out.printf("soak: gateway pid %d on %s, upstream on %d, %s with %d clients, log %s%n",
          gateway.pid(), base, upstream.getAddress().getPort(), duration, concurrency, log);
      warmUp(client, base);
      long heapBefore = heapAfterGc(gateway.pid());

      Map<Scenario, AtomicLong> counts = new ConcurrentHashMap<>();
      ConcurrentLinkedQueue<Outcome> unexpected = new ConcurrentLinkedQueue<>();
      long deadline = System.nanoTime() + duration.toNanos();
      try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
        for (int i = 0; i < concurrency; i++) {
          clients.submit(() -> {
            while (System.nanoTime() < deadline) {
              Scenario scenario = pick();
              Outcome outcome = attempt(client, base, scenario);
              counts.computeIfAbsent(scenario, s -> new AtomicLong()).incrementAndGet();
              if (!outcome.expected()) {
                unexpected.add(outcome);
              }
            }
            return null;
          });
        }
      }

      // let hung-up and slow streams settle, then make the leak detector look at freed buffers
      Thread.sleep(UPSTREAM_TIMEOUT.toMillis() + 1_000);
      heapAfterGc(gateway.pid());
      warmUp(client, base);
      long heapAfter = heapAfterGc(gateway.pid());
      warmUp(client, base);

      long total = counts.values().stream().mapToLong(AtomicLong::get).sum();
      System.out.println("soak: requests by scenario:");
      for (Scenario scenario : Scenario.values()) {
        System.out.printf("  %-13s %8d%n", scenario, counts.getOrDefault(scenario, new AtomicLong()).get());
      }
      System.out.printf("soak: %d requests, %d upstream calls, %d unexpected%n", total, upstreamCalls.get(),
          unexpected.size());
      unexpected.stream().limit(20).forEach(o -> System.out.println("  unexpected " + o.scenario() + ": " + o.detail()));

      gateway.destroy();
      gateway.waitFor(30, TimeUnit.SECONDS);
      List<String> lines = Files.readAllLines(log);
      long leaks = lines.stream().filter(line -> line.contains("LEAK:")).count();
      long errors = lines.stream().filter(line -> line.contains(" ERROR ")).count();
      boolean keyLogged = lines.stream().anyMatch(line -> line.contains(KEY) || line.contains(CLOUD_KEY));
      long growth = heapAfter - heapBefore;
      boolean flat = growth < Math.max(32L << 20, heapBefore / 2);
      System.out.printf("soak: heap after GC before %d KiB, after %d KiB (%+d KiB) -> %s%n",
          heapBefore >> 10, heapAfter >> 10, growth >> 10, flat ? "flat" : "GREW");
      System.out.printf("soak: gateway log: %d LEAK reports, %d ERROR lines, keys logged: %s%n", leaks, errors,
          keyLogged ? "YES" : "no");
      ok = total > 0 && unexpected.isEmpty() && leaks == 0 && errors == 0 && !keyLogged && flat;
      System.out.println(ok ? "soak: PASS" : "soak: FAIL (gateway log kept at " + log + ")");
      return ok;
    } finally {
      if (gateway.isAlive()) {
        gateway.destroyForcibly();
      }
      upstream.stop(0);
      if (ok) {
        try (var files = Files.list(work)) {
          for (Path file : files.toList()) {
            Files.deleteIfExists(file);
          }
        }
        Files.deleteIfExists(work);
      }
    }
  }

  static Scenario pick() {
    int total = 0;
    for (Scenario s : Scenario.values()) {
      total += s.weight;
    }
    int roll = ThreadLocalRandom.current().nextInt(total);
    for (Scenario s : Scenario.values()) {
      roll -= s.weight;
      if (roll < 0) {
        return s;
      }
    }
    return Scenario.CHAT;
  }

  static String chat(String marker, boolean stream) {
    // a nonce per request: a cache in front must not turn the soak into a cache benchmark
    return "{\"model\":\"gpt-4o-mini\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\""
        + marker + " " + ThreadLocalRandom.current().nextLong() + "\"}]}";
  }

  Outcome attempt(HttpClient client, String base, Scenario scenario) {
    try {
      return switch (scenario) {
        case CHAT -> expect(scenario, post(client, base, KEY, chat("normal", false)), 200, "soak-answer");
        case STREAM -> {
          HttpResponse<String> r = post(client, base, KEY, chat("normal", true));
          boolean good = r.statusCode() == 200 && r.body().contains("soak-piece") && r.body().trim().endsWith("data: [DONE]")
              && !r.body().contains("\"error\"");
          yield new Outcome(scenario, good, r.statusCode() + " " + tail(r.body()));
        }
        case MODELS -> expect(scenario, client.send(HttpRequest.newBuilder(URI.create(base + "/v1/models"))
            .header("Authorization", "Bearer " + KEY).timeout(Duration.ofSeconds(30)).GET().build(),
            HttpResponse.BodyHandlers.ofString()), 200, "gpt-4o-mini");
        case RESET -> expect(scenario, post(client, base, KEY, chat("fault-reset", false)), 502, "\"error\"");
        case HANG -> expect(scenario, post(client, base, KEY, chat("fault-hang", false)), 504, "upstream_timeout");
        case UPSTREAM_500 -> expect(scenario, post(client, base, KEY, chat("fault-500", false)), 500, "soak upstream failure");
        case CUT_STREAM -> {
          HttpResponse<String> r = post(client, base, KEY, chat("fault-cut", true));
          boolean good = r.statusCode() == 200 && r.body().contains("soak-piece") && r.body().contains("\"error\"");
          yield new Outcome(scenario, good, r.statusCode() + " " + tail(r.body()));
        }
        case BAD_JSON -> expect(scenario, post(client, base, KEY, "{\"model\":\"gpt-4o-mini\",\"messages\":[{"), 400,
            "invalid_request_error");
        case WRONG_KEY -> expect(scenario, post(client, base, "sk-not-a-key", chat("normal", false)), 401,
            "invalid_api_key");
        case SLOW_READER -> slowReader(client, base, scenario);
        case HANG_UP -> hangUp(client, base, scenario);
      };
    } catch (Exception e) {
      return new Outcome(scenario, false, "client saw " + e);
    }
  }

  static Outcome expect(Scenario scenario, HttpResponse<String> response, int status, String contains) {
    boolean good = response.statusCode() == status && response.body().contains(contains);
    return new Outcome(scenario, good, response.statusCode() + " " + tail(response.body()));
  }

  static HttpResponse<String> post(HttpClient client, String base, String key, String body) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  static Outcome slowReader(HttpClient client, String base, Scenario scenario) throws Exception {
    HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(chat("big", true))).build(), HttpResponse.BodyHandlers.ofInputStream());
    StringBuilder text = new StringBuilder();
    try (InputStream in = r.body()) {
      byte[] sip = new byte[16 * 1024];
      int n;
      while ((n = in.read(sip)) > 0) {
        text.append(new String(sip, 0, n, StandardCharsets.ISO_8859_1));
        Thread.sleep(5);
      }
    }
    boolean good = r.statusCode() == 200 && text.toString().trim().endsWith("data: [DONE]");
    return new Outcome(scenario, good, r.statusCode() + " " + tail(text.toString()));
  }

  static Outcome hangUp(HttpClient client, String base, Scenario scenario) throws Exception {
    HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(chat("big", true))).build(), HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream in = r.body()) {
      boolean started = in.read(new byte[64]) > 0;
      return new Outcome(scenario, r.statusCode() == 200 && started, "status " + r.statusCode());
    }
  }

  static String tail(String body) {
    String flat = body.replace('\n', ' ');
    return flat.length() <= 160 ? flat : "…" + flat.substring(flat.length() - 160);
  }

  // ---- the fake upstream ----

  HttpServer fakeUpstream() throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/v1/chat/completions", this::chatCompletions);
    server.createContext("/v1/models", exchange -> json(exchange, 200,
        "{\"object\":\"list\",\"data\":[{\"id\":\"gpt-4o-mini\",\"object\":\"model\",\"created\":1,\"owned_by\":\"soak\"}]}"));
    server.start();
    return server;
  }

  private void chatCompletions(HttpExchange exchange) throws IOException {
    upstreamCalls.incrementAndGet();
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    if (!("Bearer " + CLOUD_KEY).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
      json(exchange, 401, "{\"error\":{\"message\":\"soak upstream: wrong key\",\"type\":\"invalid_request_error\","
          + "\"param\":null,\"code\":\"invalid_api_key\"}}");
      return;
    }
    boolean stream = body.contains("\"stream\":true");
    try {
      if (body.contains("fault-reset")) {
        exchange.close(); // closes the connection without any answer
      } else if (body.contains("fault-hang")) {
        Thread.sleep(UPSTREAM_TIMEOUT.toMillis() * 3);
        json(exchange, 200, completion("too late"));
      } else if (body.contains("fault-500")) {
        json(exchange, 500, "{\"error\":{\"message\":\"soak upstream failure\",\"type\":\"server_error\","
            + "\"param\":null,\"code\":null}}");
      } else if (stream) {
        int events = body.contains("big") ? 2_000 : 20;
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
          String pad = body.contains("big") ? "x".repeat(512) : "";
          for (int i = 0; i < events; i++) {
            out.write(("data: {\"id\":\"chatcmpl-soak\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                + "\"delta\":{\"content\":\"soak-piece " + i + pad + "\"},\"finish_reason\":null}]}\n\n")
                .getBytes(StandardCharsets.UTF_8));
            if (body.contains("fault-cut") && i == 3) {
              out.flush();
              return; // the stream ends without [DONE]
            }
          }
          out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        }
      } else {
        json(exchange, 200, completion("soak-answer"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException clientWentAway) {
      // the gateway cancelled the call (a client hung up): expected in this soak
    } finally {
      exchange.close();
    }
  }

  static String completion(String content) {
    return "{\"id\":\"chatcmpl-soak\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-4o-mini\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},"
        + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}";
  }

  static void json(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  // ---- process plumbing ----

  static void awaitHealthy(HttpClient client, String base, Process gateway, Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!gateway.isAlive()) {
        throw new IllegalStateException("the gateway exited; see " + log + ":\n" + Files.readString(log));
      }
      try {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(base + "/healthz"))
            .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // still starting
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the gateway did not become healthy within 60 s; see " + log);
  }

  static void warmUp(HttpClient client, String base) throws Exception {
    for (int i = 0; i < 50; i++) {
      post(client, base, KEY, chat("normal", i % 2 == 0));
    }
  }

  /** Bytes of heap in use right after a full GC, from {@code jcmd GC.heap_info}. */
  static long heapAfterGc(long pid) throws Exception {
    jcmd(pid, "GC.run");
    String info = jcmd(pid, "GC.heap_info");
    Matcher used = Pattern.compile("used (\\d+)K").matcher(info);
    if (!used.find()) {
      throw new IllegalStateException("cannot read heap use from jcmd:\n" + info);
    }
    return Long.parseLong(used.group(1)) * 1024;
  }

  static String jcmd(long pid, String command) throws Exception {
    Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
        Long.toString(pid), command).redirectErrorStream(true).start();
    String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
      throw new IllegalStateException("jcmd " + command + " failed:\n" + out);
    }
    return out;
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  static Duration parseDuration(String text) {
    Matcher m = Pattern.compile("(\\d+)(s|m)").matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("durations look like 90s or 3m, not " + text);
    }
    long n = Long.parseLong(m.group(1));
    return m.group(2).equals("s") ? Duration.ofSeconds(n) : Duration.ofMinutes(n);
  }
}
