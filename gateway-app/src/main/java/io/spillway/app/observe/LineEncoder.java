package io.spillway.app.observe;

import ch.qos.logback.classic.pattern.ExtendedThrowableProxyConverter;
import ch.qos.logback.classic.pattern.TargetLengthBasedClassNameAbbreviator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Context;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.encoder.EncoderBase;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Map;

/**
 * The two lines {@link DefaultLogging} writes, formatted in code: what Logback's
 * {@code PatternLayout} makes of {@value DefaultLogging#DIAGNOSTIC_PATTERN} and of
 * {@value DefaultLogging#ACCESS_PATTERN}, without it. Its class set-up alone spins some 70 method
 * references, one per conversion word, and parsing a pattern builds a converter chain: about 60 ms
 * of start-up CPU for two fixed patterns. {@code DefaultLoggingTest} checks that the lines are the
 * same as {@code config/logback.xml}'s, which keeps the pattern layout.
 */
final class LineEncoder extends EncoderBase<ILoggingEvent> {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

  private final String pattern;
  private final boolean diagnostic;
  private final TargetLengthBasedClassNameAbbreviator loggerNames = new TargetLengthBasedClassNameAbbreviator(20);
  private final RedactedMessage message = new RedactedMessage();
  private final RedactedThrowable throwable = new RedactedThrowable();
  private final ExtendedThrowableProxyConverter plainThrowable = new ExtendedThrowableProxyConverter();

  private LineEncoder(Context context, String pattern, boolean diagnostic) {
    this.pattern = pattern;
    this.diagnostic = diagnostic;
    setContext(context);
    throwable.setContext(context);
    throwable.start();
    plainThrowable.setContext(context);
    plainThrowable.start();
    message.setContext(context);
    message.start();
  }

  /** {@value DefaultLogging#DIAGNOSTIC_PATTERN}. */
  static LineEncoder diagnostic(Context context) {
    return new LineEncoder(context, DefaultLogging.DIAGNOSTIC_PATTERN, true);
  }

  /** {@value DefaultLogging#ACCESS_PATTERN}. */
  static LineEncoder access(Context context) {
    return new LineEncoder(context, DefaultLogging.ACCESS_PATTERN, false);
  }

  /** The Logback pattern these lines follow. */
  String pattern() {
    return pattern;
  }

  @Override
  public byte[] headerBytes() {
    return null;
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    return line(event).getBytes();
  }

  @Override
  public byte[] footerBytes() {
    return null;
  }

  String line(ILoggingEvent event) {
    if (!diagnostic) {
      // A pattern without a throwable conversion gets one appended by the pattern layout.
      return event.getFormattedMessage() + CoreConstants.LINE_SEPARATOR + plainThrowable.convert(event);
    }
    StringBuilder line = new StringBuilder(128);
    line.append(TIME.format(Instant.ofEpochMilli(event.getTimeStamp()))).append(' ');
    String level = event.getLevel().toString();
    line.append(level).append(" ".repeat(Math.max(0, 5 - level.length()))).append(' ');
    line.append(loggerNames.abbreviate(event.getLoggerName())).append(" [");
    Map<String, String> mdc = event.getMDCPropertyMap();
    String requestId = mdc == null ? null : mdc.get("requestId");
    line.append(requestId != null ? requestId : "-").append("] - ");
    line.append(message.convert(event)).append(CoreConstants.LINE_SEPARATOR);
    line.append(throwable.convert(event));
    return line.toString();
  }
}
