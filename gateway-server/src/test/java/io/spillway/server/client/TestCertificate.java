package io.spillway.server.client;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for localhost made by the JDK's own {@code keytool} (as the front end's
 * TLS test does: no BouncyCastle needed), with the key managers a test server serves it with and
 * the trust managers a client that trusts it uses.
 */
final class TestCertificate {
  private final KeyStore store;

  private TestCertificate(KeyStore store) {
    this.store = store;
  }

  static TestCertificate create(Path dir) throws Exception {
    Path file = dir.resolve("upstream.p12");
    Process keytool = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
            "-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
            "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass", "test-pass", "-keypass", "test-pass")
        .redirectErrorStream(true).start();
    String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
      throw new IllegalStateException("keytool failed: " + output);
    }
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      store.load(in, "test-pass".toCharArray());
    }
    return new TestCertificate(store);
  }

  KeyManagerFactory keyManagers() throws Exception {
    KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    factory.init(store, "test-pass".toCharArray());
    return factory;
  }

  TrustManagerFactory trustManagers() throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("upstream", store.getCertificate("upstream"));
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    return factory;
  }
}
