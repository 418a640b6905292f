package io.spillway.app.sim;

import io.spillway.app.Gateway;
import io.spillway.config.ConfigLoader;
import io.spillway.config.Durations;
import io.spillway.config.GatewayConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Spillway's demo: on loopback, a simulated cloud that goes "at capacity" on a schedule, a simulated
 * Ollama, and a real gateway in front of both with demo keys, an admin token, and a shortened
 * {@code failover.localFor} so a failover and the move back both happen within a minute or two.
 */
public final class Demo implements AutoCloseable {
  public static final String GOLD_KEY = "sk-demo-gold";
  public static final String SILVER_KEY = "sk-demo-silver";
  public static final String BRONZE_KEY = "sk-demo-bronze";
  public static final String ADMIN_TOKEN = "demo-admin-token";
  static final String CLOUD_KEY = "sk-demo-company-cloud-key";
  static final List<String> LOCAL_MODELS = List.of("qwen2.5-coder:7b", "llama3.2:3b");

  /**
   * @param port the gateway's port (0 picks a free one); the simulators always take free ports
   * @param tokenPause the simulators' pause between streamed pieces
   */
  public record Options(int port, Duration healthyFor, Duration atCapacityFor, Duration localFor, Duration tokenPause) {
    public static Options defaults() {
      return new Options(8080, Duration.ofSeconds(20), Duration.ofSeconds(25), Duration.ofSeconds(30),
          Duration.ofMillis(40));
    }
  }

  private final Options options;
  private final SimulatedCloud cloud;
  private final SimulatedOllama ollama;
  private final Gateway gateway;

  private Demo(Options options, SimulatedCloud cloud, SimulatedOllama ollama, Gateway gateway) {
    this.options = options;
    this.cloud = cloud;
    this.ollama = ollama;
    this.gateway = gateway;
  }

  public static Demo start(Options options, Clock clock) {
    SimulatedCloud cloud = null;
    SimulatedOllama ollama = null;
    try {
      cloud = new SimulatedCloud("127.0.0.1", 0, clock,
          CapacitySchedule.startingNow(clock, options.healthyFor(), options.atCapacityFor()), CLOUD_KEY,
          options.tokenPause()).start();
      ollama = new SimulatedOllama("127.0.0.1", 0, clock, LOCAL_MODELS, options.tokenPause()).start();
      Gateway gateway = Gateway.start(config(options, cloud, ollama), clock);
      // The schedule counts from when the user can send requests, not from when the JVM began.
      cloud.restartSchedule();
      return new Demo(options, cloud, ollama, gateway);
    } catch (RuntimeException e) {
      if (cloud != null) {
        cloud.close();
      }
      if (ollama != null) {
        ollama.close();
      }
      throw e;
    }
  }

  /** The gateway's config, built here and checked like any config file. */
  static GatewayConfig config(Options options, SimulatedCloud cloud, SimulatedOllama ollama) {
    String yaml = """
        server:
          host: 127.0.0.1
          port: %d
          drainTimeout: 2s
          maxConnections: 1000
        admin:
          token: %s
        cloud:
          baseUrl: %s
          apiKey: %s
          timeout: 30s
        local:
          kind: ollama
          baseUrl: %s
          models:
            default: %s
            gpt-4o-mini: %s
        failover:
          localFor: %s
        keys:
          - { key: %s, team: demo-release, tier: gold }
          - { key: %s, team: demo-web, tier: silver }
          - { key: %s, team: demo-sandbox, tier: bronze }
        store: memory
        """.formatted(options.port(), ADMIN_TOKEN, cloud.baseUrl(), CLOUD_KEY, ollama.baseUrl(),
        LOCAL_MODELS.get(0), LOCAL_MODELS.get(1), Durations.format(options.localFor()),
        GOLD_KEY, SILVER_KEY, BRONZE_KEY);
    return new ConfigLoader(Map.<String, String>of()::get).parse("demo config", yaml);
  }

  public Gateway gateway() {
    return gateway;
  }

  public SimulatedCloud cloud() {
    return cloud;
  }

  public SimulatedOllama ollama() {
    return ollama;
  }

  /** What the demo prints: URLs, keys, and curl lines to paste. */
  public String instructions() {
    String base = gateway.baseUrl();
    String origin = base.substring(0, base.length() - "/v1".length());
    String chat = "curl -s " + base + "/chat/completions -H 'Authorization: Bearer " + GOLD_KEY + "' "
        + "-H 'Content-Type: application/json' ";
    String ask = "-d '{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'";
    String stream = "-d '{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\","
        + "\"content\":\"Tell me a story\"}]}'";
    String ping = "-d '{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}'";
    return """
        Spillway demo is running on loopback. Ctrl-C stops everything.

          OpenAI base URL   %s
          Dashboard         %s/dashboard
          Readiness         %s/readyz
          Admin token       %s   (curl -H 'Authorization: Bearer %s' %s/admin/status)
          Demo keys         gold   %s
                            silver %s
                            bronze %s

          Simulated cloud   %s   healthy for %s, then "Selected model is at capacity" for %s, repeating
          Simulated Ollama  %s        models %s
          failover.localFor %s (shortened for the demo; the default is 5m)

        Ask once:

          %s%s

        Stream an answer:

          %s-N %s

        Watch a failover: one request a second; within %s the cloud goes at capacity, the backend moves
        to local without a failed call, and about %s later Spillway probes the cloud and moves back:

          while true; do printf '%%s ' "$(date +%%T)"; %s-o /dev/null -D - %s | tr -d '\\r' | grep -iE '^(HTTP/|x-spillway-backend)' | tr '\\n' ' '; echo; sleep 1; done

        Point an OpenAI SDK at it:  OPENAI_BASE_URL=%s OPENAI_API_KEY=%s

        Point the Codex CLI at it (it ignores OPENAI_BASE_URL): in ~/.codex/config.toml (or $CODEX_HOME/config.toml)

          model = "gpt-5.5"
          model_provider = "spillway"

          [model_providers.spillway]
          name = "Spillway demo"
          base_url = "%s"
          env_key = "SPILLWAY_KEY"
          wire_api = "responses"

        then:  SPILLWAY_KEY=%s codex
        """.formatted(
        base, origin, origin, ADMIN_TOKEN, ADMIN_TOKEN, origin, GOLD_KEY, SILVER_KEY, BRONZE_KEY,
        cloud.baseUrl(), Durations.format(options.healthyFor()), Durations.format(options.atCapacityFor()),
        ollama.baseUrl(), String.join(", ", LOCAL_MODELS), Durations.format(options.localFor()),
        chat, ask, chat, stream,
        Durations.format(options.healthyFor()), Durations.format(options.localFor()),
        chat, ping, base, GOLD_KEY, base, GOLD_KEY);
  }

  @Override
  public void close() {
    try {
      gateway.close();
    } finally {
      cloud.close();
      ollama.close();
    }
  }
}
