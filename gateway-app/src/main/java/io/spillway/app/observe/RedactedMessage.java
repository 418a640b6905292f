package io.spillway.app.observe;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.spillway.core.redact.Redactor;

/**
 * {@code %msg} for the diagnostic log, passed through the gateway's {@link Redactor}: a line that
 * quotes what an upstream said (an error message echoing the cloud key, however escaped) shows
 * {@code [redacted]} instead. Logback builds converters itself, so the running gateway hands its
 * redactor over through {@link #use}; before that, and in a process without a gateway, nothing is
 * redacted. Thread-safe.
 */
public final class RedactedMessage extends MessageConverter {
  private static volatile Redactor redactor = Redactor.NONE;

  /** Redacts with {@code current} from now on (the gateway calls it once at start). */
  public static void use(Redactor current) {
    redactor = current;
  }

  @Override
  public String convert(ILoggingEvent event) {
    return redact(super.convert(event));
  }

  static String redact(String text) {
    return redactor.redact(text);
  }
}
