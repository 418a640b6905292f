package io.spillway.core.pipeline;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

/** Attributes that several stages share. Stage-private ones live with their stage. */
public final class RequestAttributes {
  /**
   * Set by the first stage (the parse stage of a model call, the query stage of the model list) once
   * the request is read and well-formed: the request as the client sent it, body parsed. Stages
   * outside it (the observer) read the client's model and body from here. Absent for a request
   * refused as malformed.
   */
  public static final Attribute<GatewayRequest> PARSED = Attribute.of("parsed");

  /** Set by authentication: who is calling. Always present past the auth stage. */
  public static final Attribute<Caller> CALLER = Attribute.of("caller");

  /** Set by signal scoring: the request is low-signal and waits behind everyone else. */
  public static final Attribute<Boolean> LOW_SIGNAL = Attribute.of("lowSignal");

  // What became of the request (backend, fallback, cache, degraded steps, dropped parameters, usage)
  // is not an attribute of its own: see RequestOutcome.

  /**
   * Set by the shaping ladder's last step: serve this request from the local backend rather than the
   * cloud. A preference, not an order: the router still asks the breaker first, and a request the
   * breaker makes its half-open probe goes to the cloud whatever this says, so shaping never keeps
   * the cloud from being probed. If local cannot serve it, the cloud is tried (unless an operator
   * forced traffic local).
   */
  public static final Attribute<Boolean> PREFER_LOCAL = Attribute.of("preferLocal");

  /** The model after shaping picked a smaller one (the ladder's model step), for logs and metrics. */
  public static final Attribute<String> MODEL_REWRITTEN_FROM = Attribute.of("modelRewrittenFrom");

  /**
   * Set by the front end: signalled when the request's client goes away. Read it with
   * {@link ClientDisconnect#of}, which gives {@link ClientDisconnect#NEVER} when it is absent.
   */
  public static final Attribute<ClientDisconnect> CLIENT_DISCONNECT = Attribute.of("clientDisconnect");

  /**
   * Set by the front end: the client connection's event loop, on which a backend runs the request's
   * upstream exchange so one thread carries it from socket to socket. Absent for requests that came
   * from no connection.
   */
  public static final Attribute<Executor> CONNECTION_LOOP = Attribute.of("connectionLoop");

  /**
   * Set by quota accounting before the call: filled, once the request's usage is settled (on
   * whichever thread settles it, hence the atomic holder), with what it cost in USD by the price
   * table (0 on the local backend and for a model without a price). Absent, or empty, when nothing
   * was settled (refused, failed, a cache hit).
   */
  public static final Attribute<AtomicReference<Double>> COST_USD = Attribute.of("costUsd");

  /**
   * Set by tracing around each backend attempt: the W3C trace-context headers ({@code traceparent},
   * and {@code tracestate} when there is one) naming that attempt's span. A backend sends them
   * upstream in place of any the client sent. Absent when tracing is off.
   */
  public static final Attribute<Map<String, String>> TRACE_CONTEXT = Attribute.of("traceContext");

  private RequestAttributes() {}
}
