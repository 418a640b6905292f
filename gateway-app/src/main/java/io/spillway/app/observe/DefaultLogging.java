package io.spillway.app.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * Spillway's logging, set up in code (Logback finds it as a {@link Configurator} service): the same
 * appenders, lines and levels as {@code config/logback.xml}, without Logback reading XML, which
 * cost start-up about a tenth of a second of CPU (an XML parser and Logback's configuration model,
 * some 400 classes), and with the two patterns formatted by {@link LineEncoder} rather than
 * Logback's pattern layout (about 60 ms more). With {@code -Dlogback.configurationFile=} (or a {@code logback-test.xml} on the
 * class path) Logback reads that file instead, as before.
 *
 * <ul>
 *   <li>diagnostics on stderr, {@value #DIAGNOSTIC_PATTERN}: messages and stack traces pass the
 *       gateway's redaction ({@link RedactedMessage}, {@link RedactedThrowable}); root level from
 *       {@code SPILLWAY_LOG_LEVEL} (default {@code INFO});
 *   <li>the access log, logger {@code spillway.access}, alone on stdout as {@value #ACCESS_PATTERN},
 *       written by a thread of its own ({@link QueuedConsoleAppender}: a request's event loop never
 *       waits on stdout); level from {@code SPILLWAY_ACCESS_LOG_LEVEL} (default {@code INFO}, {@code WARN} turns it off);
 *   <li>the audit log, {@code spillway.audit}, always at {@code INFO}; {@code okhttp3} and
 *       {@code io.netty} at {@code WARN}.
 * </ul>
 * A level is read as a system property first, then as an environment variable (as Logback's
 * {@code ${NAME:-INFO}} is); a value that is no level reads as {@code DEBUG}, as Logback reads it.
 */
public final class DefaultLogging extends ContextAwareBase implements Configurator {
  static final String DIAGNOSTIC_PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{20} [%X{requestId:--}] - %redactedMsg%n%redactedEx";
  static final String ACCESS_PATTERN = "%msg%n";

  private final Function<String, String> settings;

  public DefaultLogging() {
    this(name -> {
      String property = System.getProperty(name);
      return property != null ? property : System.getenv(name);
    });
  }

  DefaultLogging(Function<String, String> settings) {
    this.settings = settings;
  }

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null
        || DefaultLogging.class.getClassLoader().getResource("logback-test.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    apply(context);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Sets {@code context} up as described above. */
  void apply(LoggerContext context) {
    Logger access = context.getLogger("spillway.access");
    access.setLevel(level("SPILLWAY_ACCESS_LOG_LEVEL"));
    access.setAdditive(false);
    access.addAppender(console(context, new QueuedConsoleAppender<>(), "ACCESS", "System.out", LineEncoder.access(context)));
    context.getLogger("spillway.audit").setLevel(Level.INFO);
    context.getLogger("okhttp3").setLevel(Level.WARN);
    context.getLogger("io.netty").setLevel(Level.WARN);
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(level("SPILLWAY_LOG_LEVEL"));
    root.addAppender(console(context, new ConsoleAppender<>(), "STDERR", "System.err", LineEncoder.diagnostic(context)));
  }

  private Level level(String name) {
    String value = settings.apply(name);
    return value == null || value.isEmpty() ? Level.INFO : Level.toLevel(value.strip(), Level.DEBUG);
  }

  /**
   * Writes what is still queued and stops logging: after the gateway's last answer, before the JVM
   * exits. A no-op when Logback is not the logging in use.
   */
  public static void stop() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.stop();
    }
  }

  /**
   * Sends the access log to {@code file} (appended) instead of stdout, so that a terminal shows what
   * the command prints (the demo does this). A no-op when Logback is not the logging in use. Closing
   * the returned handle puts the earlier appenders back (tests do).
   */
  public static AutoCloseable accessLogTo(java.nio.file.Path file) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return () -> { };
    }
    Logger access = context.getLogger("spillway.access");
    java.util.List<ch.qos.logback.core.Appender<ILoggingEvent>> earlier = new java.util.ArrayList<>();
    access.iteratorForAppenders().forEachRemaining(earlier::add);
    earlier.forEach(access::detachAppender);
    LineEncoder encoder = LineEncoder.access(context);
    encoder.start();
    ch.qos.logback.core.FileAppender<ILoggingEvent> appender = new ch.qos.logback.core.FileAppender<>();
    appender.setContext(context);
    appender.setName("ACCESS-FILE");
    appender.setFile(file.toString());
    appender.setAppend(true);
    appender.setEncoder(encoder);
    appender.start();
    access.addAppender(appender);
    return () -> {
      access.detachAppender(appender);
      appender.stop();
      earlier.forEach(access::addAppender);
    };
  }

  private static ConsoleAppender<ILoggingEvent> console(LoggerContext context, ConsoleAppender<ILoggingEvent> appender,
      String name, String target, LineEncoder encoder) {
    encoder.start();
    appender.setContext(context);
    appender.setName(name);
    appender.setTarget(target);
    appender.setEncoder(encoder);
    appender.start();
    return appender;
  }
}
