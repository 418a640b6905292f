package io.spillway.app.observe;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * The stack trace of a diagnostic line, passed through the same redaction as {@link RedactedMessage}
 * (an exception's message may quote what an upstream said). Thread-safe.
 */
public final class RedactedThrowable extends ThrowableProxyConverter {
  @Override
  public String convert(ILoggingEvent event) {
    return RedactedMessage.redact(super.convert(event));
  }
}
