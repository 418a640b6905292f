package io.spillway.core.error;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;

/** Classifies an I/O failure talking to a backend into one {@link UpstreamException.Failure}. */
public final class UpstreamFailures {
  private UpstreamFailures() {}

  /** A failure before any response byte arrived. */
  public static UpstreamException beforeResponse(String backend, IOException e) {
    UpstreamException.Failure failure;
    String what;
    if (e instanceof ConnectException || e instanceof UnknownHostException || e instanceof NoRouteToHostException) {
      failure = UpstreamException.Failure.CONNECT_FAILED;
      what = "could not connect to the " + backend + " backend";
    } else if (e instanceof SocketTimeoutException || e instanceof InterruptedIOException) {
      failure = UpstreamException.Failure.TIMEOUT;
      what = "the " + backend + " backend did not answer in time";
    } else {
      failure = UpstreamException.Failure.RESET_BEFORE_RESPONSE;
      what = "the " + backend + " backend closed the connection before answering";
    }
    return new UpstreamException(backend, failure, capitalize(what), e);
  }

  /** A failure after a streamed response had started. */
  public static UpstreamException midStream(String backend, IOException e) {
    boolean timeout = e instanceof SocketTimeoutException || e instanceof InterruptedIOException;
    return new UpstreamException(backend,
        timeout ? UpstreamException.Failure.TIMEOUT : UpstreamException.Failure.RESET_MID_STREAM,
        timeout
            ? "The " + backend + " backend stopped sending in the middle of the stream"
            : "The " + backend + " backend's stream broke off before it was complete",
        e);
  }

  /** A failure while reading a buffered (non-streamed) answer whose head had arrived. */
  public static UpstreamException midBody(String backend, IOException e) {
    boolean timeout = e instanceof SocketTimeoutException || e instanceof InterruptedIOException;
    return new UpstreamException(backend,
        timeout ? UpstreamException.Failure.TIMEOUT : UpstreamException.Failure.RESET_MID_STREAM,
        timeout
            ? "The " + backend + " backend did not finish its answer in time"
            : "The " + backend + " backend's answer broke off before it was complete",
        e);
  }

  private static String capitalize(String s) {
    return Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }
}
