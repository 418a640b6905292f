package io.spillway.server;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;

/** What both ends of the gateway say in TLS's ALPN: HTTP/2 first, then HTTP/1.1. */
public final class Alpn {
  /** h2, then http/1.1; a peer that offers neither gets HTTP/1.1 all the same. */
  public static final ApplicationProtocolConfig H2_THEN_HTTP_1_1 = new ApplicationProtocolConfig(
      ApplicationProtocolConfig.Protocol.ALPN,
      ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
      ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
      ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1);

  private Alpn() {}
}
