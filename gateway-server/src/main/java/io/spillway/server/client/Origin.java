package io.spillway.server.client;

import java.net.URI;

/** Where connections go: scheme, host and port, and whether plain HTTP speaks HTTP/2 (h2c). */
record Origin(boolean tls, String host, int port, boolean h2c) {
  static Origin of(URI uri, boolean h2c) {
    boolean tls = "https".equalsIgnoreCase(uri.getScheme());
    int port = uri.getPort() >= 0 ? uri.getPort() : tls ? 443 : 80;
    return new Origin(tls, uri.getHost(), port, h2c && !tls);
  }

  /** The {@code Host} header (and HTTP/2 {@code :authority}) for this origin. */
  String authority() {
    boolean defaultPort = tls ? port == 443 : port == 80;
    String name = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    return defaultPort ? name : name + ":" + port;
  }
}
