package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import io.spillway.app.deploy.RepositoryFiles;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The logging set up in code is the one {@code config/logback.xml} describes. */
class DefaultLoggingTest {
  private static final List<String> LOGGERS =
      List.of(Logger.ROOT_LOGGER_NAME, "spillway.access", "spillway.audit", "okhttp3", "io.netty", "io.spillway.app");

  @Test
  void theShippedLogbackFileConfiguresWhatTheBuiltInSetupDoes() throws Exception {
    LoggerContext fromFile = new LoggerContext();
    JoranConfigurator joran = new JoranConfigurator();
    joran.setContext(fromFile);
    joran.doConfigure(RepositoryFiles.root().resolve("config/logback.xml").toFile());
    LoggerContext inCode = new LoggerContext();
    new DefaultLogging().apply(inCode);

    for (String name : LOGGERS) {
      assertThat(describe(inCode, name)).as(name).isEqualTo(describe(fromFile, name));
    }
    assertThat(describe(inCode, Logger.ROOT_LOGGER_NAME)).contains("STDERR System.err " + DefaultLogging.DIAGNOSTIC_PATTERN);
  }

  @Test
  void levelsComeFromTheEnvironmentAndDefaultToInfo() {
    LoggerContext context = new LoggerContext();
    new DefaultLogging(Map.of("SPILLWAY_LOG_LEVEL", "warn")::get).apply(context);

    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.WARN);
    assertThat(context.getLogger("spillway.access").getLevel()).isEqualTo(Level.INFO);
    assertThat(context.getLogger("spillway.audit").getLevel()).isEqualTo(Level.INFO);
  }

  @Test
  void theAccessLogGoesToStdoutAloneAndDiagnosticsToStderr() {
    LoggerContext context = new LoggerContext();
    new DefaultLogging(Map.of("SPILLWAY_ACCESS_LOG_LEVEL", "WARN")::get).apply(context);

    Logger access = context.getLogger("spillway.access");
    assertThat(access.isAdditive()).isFalse();
    assertThat(access.getLevel()).isEqualTo(Level.WARN);
    assertThat(describe(context, "spillway.access")).contains("QueuedConsoleAppender ACCESS System.out %msg%n");
  }

  /** A logger's level, additivity and each appender's name, target and pattern. */
  private static String describe(LoggerContext context, String name) {
    Logger logger = context.getLogger(name);
    List<String> parts = new ArrayList<>(List.of(String.valueOf(logger.getLevel()), "additive=" + logger.isAdditive()));
    for (Iterator<Appender<ILoggingEvent>> it = logger.iteratorForAppenders(); it.hasNext(); ) {
      Appender<ILoggingEvent> appender = it.next();
      ConsoleAppender<ILoggingEvent> console = (ConsoleAppender<ILoggingEvent>) appender;
      parts.add(appender.getClass().getSimpleName() + " " + appender.getName() + " " + console.getTarget() + " "
          + ((PatternLayoutEncoder) console.getEncoder()).getPattern());
    }
    return String.join(" | ", parts);
  }
}
