package io.spillway.app.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Captures every log event of the gateway's own process (everything but the WireMock stand-ins),
 * at DEBUG and above, with messages, arguments and whole exception chains rendered as text. The
 * access log, quiet in tests (.ci/logback-test.xml), is raised to INFO while capturing.
 */
public final class LogCapture implements AutoCloseable {
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private final Level previous = root.getLevel();
  private final Logger access = (Logger) LoggerFactory.getLogger("spillway.access");
  private final Level accessLevel = access.getLevel();
  private final boolean accessAdditive = access.isAdditive();
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  public LogCapture() {
    appender.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
    appender.start();
    root.addAppender(appender);
    root.setLevel(Level.DEBUG);
    access.setLevel(Level.INFO);
    access.setAdditive(true);
  }

  /** Each captured event as one text: level, logger, formatted message, exception chain. */
  public List<String> lines() {
    List<String> lines = new ArrayList<>();
    for (ILoggingEvent event : List.copyOf(appender.list)) {
      if (fromStandIn(event.getLoggerName())) {
        continue;
      }
      StringBuilder text = new StringBuilder()
          .append(event.getLevel()).append(' ').append(event.getLoggerName()).append(" [")
          .append(event.getThreadName()).append("] ").append(event.getFormattedMessage());
      for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
        text.append("\n caused by ").append(t.getClassName()).append(": ").append(t.getMessage());
        for (StackTraceElementProxy frame : t.getStackTraceElementProxyArray()) {
          text.append("\n  ").append(frame.getSTEAsString());
        }
      }
      lines.add(text.toString());
    }
    return lines;
  }

  private static boolean fromStandIn(String logger) {
    return logger.startsWith("wiremock") || logger.startsWith("com.github.tomakehurst")
        || logger.startsWith("WireMock") || logger.startsWith("org.eclipse.jetty");
  }

  @Override
  public void close() {
    root.detachAppender(appender);
    root.setLevel(previous);
    access.setLevel(accessLevel);
    access.setAdditive(accessAdditive);
    appender.stop();
  }
}
