package io.spillway.core.pipeline;

import java.util.List;

/** Attributes that several stages share. Stage-private ones live with their stage. */
public final class RequestAttributes {
  /** Set by authentication: who is calling. Always present past the auth stage. */
  public static final Attribute<Caller> CALLER = Attribute.of("caller");

  /** Set by shaping: the steps applied, in order, as listed in {@code x-spillway-degraded}. */
  public static final Attribute<List<String>> DEGRADED = Attribute.of("degraded");

  /** Set by signal scoring: the request is low-signal and waits behind everyone else. */
  public static final Attribute<Boolean> LOW_SIGNAL = Attribute.of("lowSignal");

  /** Set by the router: the backend that served the request ({@code cloud} or {@code local}). */
  public static final Attribute<String> BACKEND = Attribute.of("backend");

  /** Set by the shaping ladder's last step: serve this request from the local backend. */
  public static final Attribute<Boolean> ROUTE_LOCAL = Attribute.of("routeLocal");

  /** The model after shaping picked a smaller one (the ladder's model step), for logs and metrics. */
  public static final Attribute<String> MODEL_REWRITTEN_FROM = Attribute.of("modelRewrittenFrom");

  /**
   * Set by the front end: signalled when the request's client goes away. Read it with
   * {@link ClientDisconnect#of}, which gives {@link ClientDisconnect#NEVER} when it is absent.
   */
  public static final Attribute<ClientDisconnect> CLIENT_DISCONNECT = Attribute.of("clientDisconnect");

  private RequestAttributes() {}
}
