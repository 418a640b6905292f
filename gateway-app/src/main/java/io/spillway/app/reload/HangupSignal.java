package io.spillway.app.reload;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an action on {@code SIGHUP}, the Unix way to ask a server to reload its config. Uses
 * {@code sun.misc.Signal} where the JVM offers it; on a platform without {@code HUP} (Windows) or a
 * JVM started with {@code -Xrs}, installing does nothing but say so. The action runs on a fresh
 * virtual thread, never on the JVM's signal dispatcher.
 */
public final class HangupSignal implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HangupSignal.class);

  private final sun.misc.SignalHandler previous;

  private HangupSignal(sun.misc.SignalHandler previous) {
    this.previous = previous;
  }

  /**
   * Installs the handler; null (and a log line saying why) when this platform cannot, or when the
   * process was started with SIGHUP ignored, as {@code nohup} starts it.
   */
  public static HangupSignal install(Runnable action) {
    try {
      sun.misc.Signal hup = new sun.misc.Signal("HUP");
      sun.misc.SignalHandler previous = sun.misc.Signal.handle(hup,
          signal -> Thread.ofVirtual().name("spillway-sighup").start(action));
      if (previous == sun.misc.SignalHandler.SIG_IGN) {
        // The JVM installs no handler for a SIGHUP the process inherited as ignored (nohup does that).
        sun.misc.Signal.handle(hup, previous);
        log.warn("SIGHUP reload is off: this process was started with SIGHUP ignored (under nohup?);"
            + " use POST /admin/reload, or start it without nohup");
        return null;
      }
      return new HangupSignal(previous);
    } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
      log.info("SIGHUP reload is not available here ({}); use POST /admin/reload", e.toString());
      return null;
    }
  }

  /** Puts back the handler that was there before. */
  @Override
  public void close() {
    sun.misc.Signal.handle(new sun.misc.Signal("HUP"), previous);
  }
}
