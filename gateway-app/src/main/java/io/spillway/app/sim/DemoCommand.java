package io.spillway.app.sim;

import io.spillway.app.Main;
import io.spillway.app.observe.DefaultLogging;
import io.spillway.config.Durations;
import io.spillway.server.PortInUseException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code spillway.jar demo}: the gateway with a simulated cloud and a simulated Ollama, on loopback. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    versionProvider = Main.VersionProvider.class,
    description = "Run the gateway on loopback with a simulated cloud (at capacity on a schedule) and a "
        + "simulated Ollama; print the URL, demo keys and curl lines that show a failover. No network, no GPU.")
public final class DemoCommand implements Callable<Integer> {
  @Option(names = "--port", description = "Gateway port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
  int port = Demo.Options.defaults().port();

  @Option(names = "--healthy-for", converter = DurationConverter.class,
      description = "How long the simulated cloud answers before it goes at capacity (default: 20s)")
  Duration healthyFor = Demo.Options.defaults().healthyFor();

  @Option(names = "--capacity-for", converter = DurationConverter.class,
      description = "How long it then answers 'Selected model is at capacity' (default: 25s)")
  Duration atCapacityFor = Demo.Options.defaults().atCapacityFor();

  @Option(names = "--local-for", converter = DurationConverter.class,
      description = "failover.localFor for the demo (default: 30s)")
  Duration localFor = Demo.Options.defaults().localFor();

  @Option(names = "--access-log", description = "Where the access log (one JSON line per request) goes, so that"
      + " the terminal shows the story (default: ${DEFAULT-VALUE}; '-' for stdout)")
  String accessLog = Path.of(System.getProperty("java.io.tmpdir"), "spillway-demo-access.log").toString();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    if (!accessLog.equals("-")) {
      DefaultLogging.accessLogTo(Path.of(accessLog));
    }
    Demo demo;
    try {
      demo = Demo.start(new Demo.Options(port, healthyFor, atCapacityFor, localFor,
          Demo.Options.defaults().tokenPause()), Clock.systemUTC());
    } catch (PortInUseException e) {
      spec.commandLine().getErr().println(Main.portInUse(e));
      return 1;
    } catch (RuntimeException e) {
      spec.commandLine().getErr().println("spillway demo: could not start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      demo.close();
      DefaultLogging.stop();
      stopped.countDown();
    }, "spillway-demo-shutdown"));
    PrintWriter out = spec.commandLine().getOut();
    out.println(demo.instructions());
    out.println(accessLog.equals("-") ? "  Access log        on stdout, one JSON line per request"
        : "  Access log        " + accessLog + "   (tail -f it in another terminal; --access-log - for stdout)");
    out.flush();
    stopped.await();
    return 0;
  }

  /** Durations written as in the config ({@code 20s}, {@code 1m}). */
  public static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return Durations.parse(value);
    }
  }
}
