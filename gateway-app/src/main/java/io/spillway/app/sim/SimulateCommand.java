package io.spillway.app.sim;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code spillway.jar simulate cloud|ollama}: one simulator alone, for users' own CI game days. */
@Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    versionProvider = io.spillway.app.Main.VersionProvider.class,
    description = "Run one simulator alone: 'cloud' (OpenAI-shaped, at capacity on a schedule) or 'ollama' "
        + "(Ollama's native API). For CI game days against your own Spillway config.")
public final class SimulateCommand implements Callable<Integer> {
  enum Kind { cloud, ollama }

  @Parameters(index = "0", description = "cloud or ollama")
  Kind kind;

  @Option(names = "--host", description = "Address to listen on (default: ${DEFAULT-VALUE})")
  String host = "127.0.0.1";

  @Option(names = "--port", description = "Port (default: 8081 for cloud, 11434 for ollama; 0 picks a free one)")
  Integer port;

  @Option(names = "--healthy-for", converter = DemoCommand.DurationConverter.class,
      description = "cloud: how long it answers before it goes at capacity (default: 20s)")
  Duration healthyFor = Duration.ofSeconds(20);

  @Option(names = "--capacity-for", converter = DemoCommand.DurationConverter.class,
      description = "cloud: how long it then answers 503 'Selected model is at capacity' (default: 40s; 0s = never)")
  Duration atCapacityFor = Duration.ofSeconds(40);

  @Option(names = "--api-key", description = "cloud: the only key it accepts (default: any)")
  String apiKey;

  @Option(names = "--models", split = ",",
      description = "ollama: the models it has (default: qwen2.5-coder:7b,llama3.2:3b)")
  List<String> models = Arrays.asList("qwen2.5-coder:7b", "llama3.2:3b");

  @Option(names = "--token-delay", converter = DemoCommand.DurationConverter.class,
      description = "Pause between streamed pieces (default: 40ms)")
  Duration tokenDelay = Duration.ofMillis(40);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    Clock clock = Clock.systemUTC();
    SimServer server;
    String description;
    try {
      if (kind == Kind.cloud) {
        SimulatedCloud cloud = new SimulatedCloud(host, port != null ? port : 8081, clock,
            CapacitySchedule.startingNow(clock, healthyFor, atCapacityFor), apiKey, tokenDelay).start();
        server = cloud;
        description = "Simulated cloud at " + cloud.baseUrl() + " (healthy for " + healthyFor.toSeconds()
            + "s, then at capacity for " + atCapacityFor.toSeconds() + "s, repeating; state at "
            + cloud.baseUrl().replace("/v1", "/sim/status") + ")";
      } else {
        SimulatedOllama ollama = new SimulatedOllama(host, port != null ? port : 11434, clock, models, tokenDelay).start();
        server = ollama;
        description = "Simulated Ollama at " + ollama.baseUrl() + " with " + String.join(", ", models);
      }
    } catch (RuntimeException e) {
      spec.commandLine().getErr().println("spillway simulate: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      stopped.countDown();
    }, "spillway-simulate-shutdown"));
    PrintWriter out = spec.commandLine().getOut();
    out.println(description + ". Ctrl-C stops it.");
    out.flush();
    stopped.await();
    return 0;
  }
}
