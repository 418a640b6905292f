package io.spillway.app.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Captures every log event (the access log and all others) while a test runs. */
public final class LogCapture implements AutoCloseable {
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final Logger root;
  private final Logger access;
  private final Level accessLevel;
  private final boolean accessAdditive;

  public LogCapture() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    access = context.getLogger(AccessLog.LOGGER);
    accessLevel = access.getLevel();
    accessAdditive = access.isAdditive();
    access.setLevel(Level.INFO);
    // Each event reaches the root's appenders exactly once, whatever Logback file is in force.
    access.setAdditive(true);
    appender.setContext(context);
    appender.start();
    root.addAppender(appender);
  }

  /** Every message, formatted, including the MDC request id. */
  public synchronized List<String> lines() {
    return appender.list.stream()
        .map(e -> e.getLevel() + " " + e.getLoggerName() + " [" + e.getMDCPropertyMap().get("requestId") + "] "
            + e.getFormattedMessage() + (e.getThrowableProxy() != null ? " " + e.getThrowableProxy().getMessage() : ""))
        .toList();
  }

  /** The access-log lines only. */
  public List<String> accessLines() {
    return appender.list.stream()
        .filter(e -> e.getLoggerName().equals(AccessLog.LOGGER))
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  public List<ILoggingEvent> events() {
    return List.copyOf(appender.list);
  }

  @Override
  public void close() {
    root.detachAppender(appender);
    access.setLevel(accessLevel);
    access.setAdditive(accessAdditive);
    appender.stop();
  }
}
