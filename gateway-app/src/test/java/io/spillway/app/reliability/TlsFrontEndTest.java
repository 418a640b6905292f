package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.config.ConfigException;
import io.spillway.core.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Optional TLS on the front end ({@code server.tls.certFile}/{@code keyFile}, PEM), with a
 * certificate made for the test by the JDK's own {@code keytool}: clients that trust it are served,
 * clients that do not are refused, and plain HTTP on the TLS port gets nothing. ALPN offers
 * {@code h2} and {@code http/1.1}: each client gets the protocol it asked for.
 */
class TlsFrontEndTest {
  @TempDir static Path dir;
  static Path certFile;
  static Path keyFile;
  static SSLContext trusting;
  static GatewayHarness harness;

  @BeforeAll
  static void start() throws Exception {
    Path store = dir.resolve("gateway.p12");
    Process keytool = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
            "-genkeypair", "-alias", "gateway", "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
            "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "test-pass", "-keypass", "test-pass")
        .redirectErrorStream(true).start();
    String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(output).isZero();

    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keyStore.load(in, "test-pass".toCharArray());
    }
    PrivateKey key = (PrivateKey) keyStore.getKey("gateway", "test-pass".toCharArray());
    Certificate certificate = keyStore.getCertificate("gateway");
    certFile = dir.resolve("cert.pem");
    keyFile = dir.resolve("key.pem");
    Files.writeString(certFile, pem("CERTIFICATE", certificate.getEncoded()));
    Files.writeString(keyFile, pem("PRIVATE KEY", key.getEncoded()));

    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("gateway", certificate);
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    trusting = SSLContext.getInstance("TLS");
    trusting.init(null, factory.getTrustManagers(), null);

    harness = GatewayHarness.start(tlsConfig(certFile, keyFile) + "  maxConnections: 2\n");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("over tls")));
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  static String tlsConfig(Path cert, Path key) {
    return "server:\n  tls:\n    certFile: " + cert + "\n    keyFile: " + key + "\n";
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  static HttpRequest chat() {
    return HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + harness.gateway().port() + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", false))).build();
  }

  @Test
  void clientThatTrustsTheCertificateIsServedOverTls() throws Exception {
    assertThat(harness.gateway().baseUrl()).startsWith("https://");
    try (HttpClient client = HttpClient.newBuilder().sslContext(trusting).build()) {
      HttpResponse<String> response = client.send(chat(), HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("over tls");
    }
  }

  @Test
  void clientOfferingH2ByAlpnIsServedOverHttp2() throws Exception {
    try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(trusting).build()) {
      HttpResponse<String> response = client.send(chat(), HttpResponse.BodyHandlers.ofString());
      assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("over tls");
    }
  }

  @Test
  void streamOverTlsH2ArrivesAsEvents() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions")
        .withRequestBody(com.github.tomakehurst.wiremock.client.WireMock.containing("\"stream\":true"))
        .atPriority(1)
        .willReturn(OpenAiStubs.chatStream(false, "one", "two")));
    HttpRequest streamed = HttpRequest.newBuilder(chat().uri())
        .timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", true))).build();
    try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(trusting).build()) {
      HttpResponse<java.util.stream.Stream<String>> response = client.send(streamed, HttpResponse.BodyHandlers.ofLines());
      assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream");
      java.util.List<String> events = response.body().filter(line -> line.startsWith("data: ")).toList();
      assertThat(events).anySatisfy(line -> assertThat(line).contains("\"one\""));
      assertThat(events).anySatisfy(line -> assertThat(line).contains("\"two\""));
      assertThat(events.getLast()).isEqualTo("data: [DONE]");
    }
  }

  @Test
  void clientOfferingOnlyHttp11ByAlpnIsServedOverHttp11() throws Exception {
    try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(trusting).build()) {
      HttpResponse<String> response = client.send(chat(), HttpResponse.BodyHandlers.ofString());
      assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
      assertThat(response.statusCode()).isEqualTo(200);
    }
  }

  @Test
  void clientThatDoesNotTrustTheCertificateIsRefused() {
    try (HttpClient client = HttpClient.newHttpClient()) {
      assertThatThrownBy(() -> client.send(chat(), HttpResponse.BodyHandlers.ofString()))
          .isInstanceOf(SSLHandshakeException.class);
    }
  }

  @Test
  void plainHttpOnTheTlsPortIsNeverAnswered() throws Exception {
    try (RawHttp plain = new RawHttp(harness.gateway().port())) {
      plain.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false)));
      byte[] answer = readUntilClosed(plain.input());
      assertThat(new String(answer, StandardCharsets.ISO_8859_1)).doesNotContain("HTTP/1.1").doesNotContain("over tls");
    }
  }

  @Test
  void refusalPastTheConnectionLimitIsItselfEncrypted() throws Exception {
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().openConnections() == 0);
    try (SSLSocket first = open(); SSLSocket second = open()) {
      first.startHandshake();
      second.startHandshake();
      await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().openConnections() == 2);
      try (SSLSocket third = open()) {
        third.startHandshake();
        RawAnswer refused = readAnswer(third);
        assertThat(refused.head()).startsWith("HTTP/1.1 503");
        assertThat(Json.parse(refused.body()).get("error").get("code").asText()).isEqualTo("too_many_connections");
      }
    }
  }

  @Test
  void unreadableKeyFileStopsTheStartWithAMessageNamingTheKey() {
    assertThatThrownBy(() -> GatewayHarness.start(tlsConfig(certFile, dir.resolve("missing.pem"))))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("server.tls");
  }

  private static SSLSocket open() throws IOException {
    SSLSocket socket = (SSLSocket) trusting.getSocketFactory().createSocket("127.0.0.1", harness.gateway().port());
    socket.setSoTimeout(15_000);
    return socket;
  }

  record RawAnswer(String head, String body) {}

  private static RawAnswer readAnswer(Socket socket) throws IOException {
    String all = new String(readUntilClosed(socket.getInputStream()), StandardCharsets.UTF_8);
    int split = all.indexOf("\r\n\r\n");
    return new RawAnswer(all.substring(0, split), all.substring(split + 4));
  }

  private static byte[] readUntilClosed(InputStream in) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[4096];
    try {
      int n;
      while ((n = in.read(buffer)) > 0) {
        out.write(buffer, 0, n);
      }
    } catch (IOException closedOrReset) {
      // either way the connection is over
    }
    return out.toByteArray();
  }
}
