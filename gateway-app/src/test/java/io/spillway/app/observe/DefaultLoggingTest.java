package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.encoder.Encoder;
import io.spillway.core.redact.Redactor;
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
  void theBuiltInLinesAreTheLinesTheShippedFileWrites() throws Exception {
    LoggerContext fromFile = new LoggerContext();
    fromFile.setMDCAdapter(new LogbackMDCAdapter());
    JoranConfigurator joran = new JoranConfigurator();
    joran.setContext(fromFile);
    joran.doConfigure(RepositoryFiles.root().resolve("config/logback.xml").toFile());
    LoggerContext inCode = new LoggerContext();
    inCode.setMDCAdapter(new LogbackMDCAdapter());
    new DefaultLogging(name -> null).apply(inCode);
    RedactedMessage.use(Redactor.of(List.of("sk-secret-in-a-log-line")));
    try {
      for (String appender : List.of("STDERR", "ACCESS")) {
        String logger = appender.equals("STDERR") ? Logger.ROOT_LOGGER_NAME : "spillway.access";
        Encoder<ILoggingEvent> expected = encoder(fromFile, logger, appender);
        Encoder<ILoggingEvent> actual = encoder(inCode, logger, appender);
        for (LoggingEvent event : samples(inCode)) {
          assertThat(new String(actual.encode(event))).as(appender + " " + event)
              .isEqualTo(new String(expected.encode(event)));
        }
      }
    } finally {
      RedactedMessage.use(Redactor.NONE);
    }
  }

  /** Every level, short and long logger names, with and without a request id, a stack trace, a secret. */
  private static List<LoggingEvent> samples(LoggerContext context) {
    List<LoggingEvent> events = new ArrayList<>();
    String[] loggers = {"io.spillway.server.GatewayServer", "io.spillway.app.observe.VeryLongClassNameForAbbreviation",
        "Gateway", Logger.ROOT_LOGGER_NAME, "spillway.access"};
    Level[] levels = {Level.TRACE, Level.DEBUG, Level.INFO, Level.WARN, Level.ERROR};
    for (int i = 0; i < loggers.length; i++) {
      Throwable thrown = i == 1 ? new IllegalStateException("failed with sk-secret-in-a-log-line") : null;
      LoggingEvent event = new LoggingEvent(Logger.class.getName(), context.getLogger(loggers[i]), levels[i],
          "message {} with sk-secret-in-a-log-line", thrown, new Object[] {i});
      if (i % 2 == 0) {
        event.setMDCPropertyMap(Map.of("requestId", "req_" + i));
      }
      events.add(event);
    }
    LoggingEvent empty = new LoggingEvent(Logger.class.getName(), context.getLogger("x"), Level.INFO, "", null, null);
    empty.setMDCPropertyMap(Map.of("requestId", ""));
    events.add(empty);
    return events;
  }

  private static Encoder<ILoggingEvent> encoder(LoggerContext context, String logger, String appender) {
    return ((ConsoleAppender<ILoggingEvent>) context.getLogger(logger).getAppender(appender)).getEncoder();
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
      String pattern = console.getEncoder() instanceof LineEncoder lines
          ? lines.pattern() : ((PatternLayoutEncoder) console.getEncoder()).getPattern();
      parts.add(appender.getClass().getSimpleName() + " " + appender.getName() + " " + console.getTarget() + " "
          + pattern);
    }
    return String.join(" | ", parts);
  }
}
