package io.spillway.server.client;

import io.netty.handler.ssl.SslContext;
import io.spillway.server.Alpn;
import io.netty.handler.ssl.SslContextBuilder;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

/**
 * The client's TLS context (ALPN offering h2, then http/1.1), made on first use: setting up the
 * JDK's TLS costs a tenth of a second or more of CPU, which a gateway whose upstreams are plain HTTP
 * (a CI sidecar in front of a local model) never needs, and which should not delay the first
 * listen. It is made on a sending (virtual) thread or by {@link NettyUpstreamHttp#prepareTls}, never
 * on an event loop.
 */
final class ClientTls {
  private final TrustManagerFactory trust;
  private volatile SslContext context;

  ClientTls(TrustManagerFactory trust) {
    this.trust = trust;
  }

  SslContext get() {
    SslContext made = context;
    if (made == null) {
      synchronized (this) {
        made = context;
        if (made == null) {
          made = build();
          context = made;
        }
      }
    }
    return made;
  }

  private SslContext build() {
    try {
      return SslContextBuilder.forClient()
          .trustManager(trust)
          .applicationProtocolConfig(Alpn.H2_THEN_HTTP_1_1)
          .build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot set up TLS for upstream calls: " + e.getMessage(), e);
    }
  }
}
