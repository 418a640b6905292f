package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import io.spillway.core.redact.Redactor;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The diagnostic log line (DefaultLogging's, as config/logback.xml writes it) shows no cloud key, in its message or its stack trace. */
class RedactedLogLineTest {
  static final String KEY = "sk-proj-diagnostic-0123456789";

  @AfterEach
  void forget() {
    RedactedMessage.use(Redactor.NONE);
  }

  @Test
  void aDiagnosticLineQuotingAnUpstreamThatEchoedTheKeyShowsItRedacted() {
    RedactedMessage.use(Redactor.of(List.of(KEY)));
    String escaped = KEY.replace("s", "\\u0073");

    String line = format("upstream said: {\"error\":\"bad key " + escaped + "\"}",
        new IllegalStateException("echo " + KEY));

    assertThat(line).contains("upstream said", Redactor.MARK, "IllegalStateException")
        .doesNotContain(KEY).doesNotContain(escaped);
  }

  private static String format(String message, Throwable thrown) {
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(new LogbackMDCAdapter());
    Logger logger = context.getLogger("test");
    LoggingEvent event = new LoggingEvent(Logger.class.getName(), logger, Level.WARN, message, thrown, null);
    return LineEncoder.diagnostic(context).line(event);
  }
}
