package io.spillway.app;

import io.spillway.app.observe.DefaultLogging;
import io.spillway.app.reload.HangupSignal;
import io.spillway.app.sim.DemoCommand;
import io.spillway.app.sim.SimulateCommand;
import io.spillway.config.ConfigException;
import io.spillway.config.ConfigLoader;
import io.spillway.config.ConfigPrinter;
import io.spillway.config.GatewayConfig;
import io.spillway.config.SelfReference;
import io.spillway.core.Version;
import io.spillway.core.time.Ticker;
import io.spillway.quota.keys.KeyHashes;
import io.spillway.server.PortInUseException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code spillway.jar} command line. */
@Command(
    name = "spillway",
    mixinStandardHelpOptions = true,
    versionProvider = Main.VersionProvider.class,
    description = "OpenAI-compatible gateway with capacity failover, tiered quota and request shaping.",
    subcommands = {
      Main.Serve.class,
      Main.CheckConfig.class,
      Main.HashKey.class,
      DemoCommand.class,
      SimulateCommand.class
    })
public final class Main implements Callable<Integer> {
  @Option(names = "--config", description = "Config file for the default 'serve' command (default: ${DEFAULT-VALUE})")
  Path config = Path.of("config/gateway.yaml");

  public static void main(String[] args) {
    NettyDefaults.apply();
    ServeArguments serve = ServeArguments.parse(args);
    StartupWarmer.startFor(serve, args);
    System.exit(run(args));
  }

  /**
   * Runs the gateway without building picocli's model, for the arguments {@link ServeArguments}
   * reads, with the exit codes and messages picocli's handler below gives.
   */
  static int serve(ServeArguments arguments, PrintWriter err) {
    try {
      return new Serve(arguments.config(), arguments.port()).call();
    } catch (ConfigException e) {
      err.println(StartFailure.invalidConfig(e));
      return StartFailure.exitCode(e);
    } catch (PortInUseException e) {
      err.println(portInUse(e));
      return 1;
    } catch (Exception e) {
      return StartFailure.report(e, err);
    }
  }

  static int run(String... args) {
    return run(System.in, new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
  }

  /** Runs a command with the given standard streams (tests use this). */
  static int run(InputStream in, PrintWriter out, PrintWriter err, String... args) {
    return run(in, out, err, System::getenv, args);
  }

  /** Runs a command with the given standard streams and environment for {@code ${NAME}} in configs. */
  static int run(InputStream in, PrintWriter out, PrintWriter err, Function<String, String> environment,
      String... args) {
    ServeArguments serve = ServeArguments.parse(args);
    if (serve != null) {
      return serve(serve, err);
    }
    CommandLine.IFactory defaults = CommandLine.defaultFactory();
    CommandLine cli = new CommandLine(new Main(), new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> type) throws Exception {
        if (type == HashKey.class) {
          return type.cast(new HashKey(in));
        }
        if (type == CheckConfig.class) {
          return type.cast(new CheckConfig(environment));
        }
        return defaults.create(type);
      }
    });
    cli.setOut(out);
    cli.setErr(err);
    cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      if (e instanceof ConfigException config) {
        commandLine.getErr().println(StartFailure.invalidConfig(config));
        return StartFailure.exitCode(config);
      }
      if (e instanceof PortInUseException inUse) {
        commandLine.getErr().println(portInUse(inUse));
        return 1;
      }
      if (commandLine.getCommand() instanceof Serve || commandLine.getCommand() instanceof Main) {
        return StartFailure.report(e, commandLine.getErr());
      }
      throw e;
    });
    return cli.execute(args);
  }

  /** The one line a taken port gets, naming the option that picks another. */
  public static String portInUse(PortInUseException e) {
    return "spillway: cannot listen: " + e.getMessage() + "; stop what holds it, or choose another port with --port"
        + " (--port 0 picks a free one)";
  }

  @Override
  public Integer call() throws Exception {
    return new Serve(config).call();
  }

  @Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = "Run the gateway (the default command).")
  static final class Serve implements Callable<Integer> {
    @Option(names = "--config", description = "Config file (default: ${DEFAULT-VALUE})")
    Path config = Path.of("config/gateway.yaml");

    @Option(names = "--port", description = "Listen on this port instead of server.port (0 picks a free one)")
    Integer port;

    Serve() {}

    Serve(Path config) {
      this(config, null);
    }

    Serve(Path config, Integer port) {
      this.config = config;
      this.port = port;
    }

    @Override
    public Integer call() throws Exception {
      ConfigLoader loader = ConfigLoader.withSystemEnvironment();
      GatewayConfig loaded = loader.load(config);
      StartupWarmer.configLoaded(loaded);
      if (port != null) {
        loaded = loaded.withServer(loaded.server().withPort(port));
      }
      Gateway gateway = Gateway.start(loaded, Clock.systemUTC(), Ticker.system(), config);
      HangupSignal.install(gateway::reloadBySignal);
      CountDownLatch stopped = new CountDownLatch(1);
      PrintStream err = System.err;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        err.println("spillway: " + ServeReport.stopping(gateway.inFlightRequests(),
            gateway.config().server().drainTimeout()));
        gateway.close();
        DefaultLogging.stop(); // the last answers' access lines are written before the JVM exits
        err.println("spillway: " + ServeReport.STOPPED);
        err.flush();
        stopped.countDown();
      }, "spillway-shutdown"));
      ServeReport.started(gateway, loader.warnings()).forEach(line -> err.println(
          line.startsWith("Spillway ") ? line : "spillway: " + line));
      stopped.await();
      return 0;
    }
  }

  @Command(name = "check-config", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = "Validate a config and print it with secrets masked; warn when an upstream URL points"
          + " at this gateway's own listener.")
  static final class CheckConfig implements Callable<Integer> {
    @Option(names = "--config", description = "Config file (default: ${DEFAULT-VALUE})")
    Path config = Path.of("config/gateway.yaml");

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    private final Function<String, String> environment;

    CheckConfig() {
      this(System::getenv);
    }

    CheckConfig(Function<String, String> environment) {
      this.environment = environment;
    }

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try {
        ConfigLoader loader = new ConfigLoader(environment);
        GatewayConfig loaded = loader.load(config);
        out.println("# " + config + ": valid");
        out.print(ConfigPrinter.toMaskedYaml(loaded));
        out.flush();
        PrintWriter err = spec.commandLine().getErr();
        loader.warnings().forEach(w -> err.println("spillway: warning: " + w));
        SelfReference.warnings(loaded, loaded.server().port()).forEach(w -> err.println("spillway: warning: " + w));
        err.flush();
        return 0;
      } catch (ConfigException e) {
        spec.commandLine().getErr().println("spillway: invalid config: " + e.getMessage());
        return 2;
      }
    }
  }

  @Command(name = "hash-key", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = "Read a gateway key on stdin; print the keyHash to put in the config.")
  static final class HashKey implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    private final InputStream stdin;

    HashKey() {
      this(System.in);
    }

    HashKey(InputStream stdin) {
      this.stdin = stdin;
    }

    @Override
    public Integer call() throws IOException {
      BufferedReader in = new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8));
      String key = in.readLine();
      if (key == null || key.strip().isEmpty()) {
        spec.commandLine().getErr().println("spillway: hash-key reads the key from stdin; got nothing");
        return 2;
      }
      spec.commandLine().getOut().println(KeyHashes.hash(key.strip()));
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  public static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"spillway " + Version.VERSION};
    }
  }
}
