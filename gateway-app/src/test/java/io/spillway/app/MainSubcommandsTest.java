package io.spillway.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The demo and simulate commands are part of the command line. */
class MainSubcommandsTest {
  @Test
  void demoAndSimulateAreSubcommands() {
    CommandLine cli = new CommandLine(new Main());

    assertThat(cli.getSubcommands()).containsKeys("demo", "simulate");
  }

  @Test
  void simulateRefusesAnUnknownKind() {
    CommandLine cli = new CommandLine(new Main());
    StringWriter err = new StringWriter();
    cli.setErr(new PrintWriter(err));

    int exit = cli.execute("simulate", "gpu");

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).contains("cloud").contains("ollama");
  }
}
