package io.spillway.app.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spillway.jar demo} as a user starts it, in a process of its own with Spillway's own logging
 * (not the tests' quiet one): the terminal shows the banner and the story, while the access log
 * (one JSON line per request) goes to its file.
 */
class DemoTerminalTest {
  private static final Pattern BASE_URL = Pattern.compile("OpenAI base URL\\s+(http://127\\.0\\.0\\.1:\\d+/v1)");

  @TempDir Path dir;
  private Process demo;

  @AfterEach
  void stopTheDemo() throws InterruptedException {
    if (demo != null) {
      demo.destroy();
      if (!demo.waitFor(20, TimeUnit.SECONDS)) {
        demo.destroyForcibly();
      }
    }
  }

  @Test
  @Timeout(120)
  void theTerminalShowsTheBannerWhileEveryRequestsAccessLineGoesToTheFile() throws Exception {
    Path accessLog = dir.resolve("access.log");
    Path terminal = dir.resolve("terminal.txt");
    ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
        "-cp", mainClassPath(), "io.spillway.app.Main",
        "demo", "--port", "0", "--access-log", accessLog.toString())
        .redirectErrorStream(true).redirectOutput(terminal.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("SPILLWAY_"));
    demo = builder.start();

    Matcher base = BASE_URL.matcher("");
    await("the demo's banner").atMost(Duration.ofSeconds(60)).until(() -> {
      assertThat(demo.isAlive()).as(Files.readString(terminal)).isTrue();
      return base.reset(Files.readString(terminal)).find() && Files.readString(terminal).contains("Access log");
    });
    String url = base.group(1);
    HttpResponse<String> answer = SimHttp.post(url + "/chat/completions", Demo.GOLD_KEY,
        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}");
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    String requestId = answer.headers().firstValue("x-request-id").orElseThrow();

    await("the request's access line in the file").atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(accessLog) && Files.readString(accessLog).contains(requestId));
    String shown = Files.readString(terminal);
    assertThat(shown).as("the terminal").contains("Spillway demo is running", "[model_providers.spillway]",
        "Access log        " + accessLog).doesNotContain(requestId).doesNotContain("\"route\":\"chat\"");
    assertThat(shown.lines().filter(line -> line.startsWith("{"))).as("no JSON line on the terminal").isEmpty();
    assertThat(Files.readString(accessLog).lines().filter(line -> line.contains(requestId)).findFirst().orElseThrow())
        .startsWith("{").contains("\"backend\":\"cloud\"", "\"status\":200");
  }

  /**
   * This build's main classes and their libraries, without the test classes, whose Logback test
   * configuration would quiet the access log and so prove nothing.
   */
  private static String mainClassPath() throws IOException {
    List<String> entries = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !entry.endsWith("test-classes") && !entry.endsWith("-tests.jar")).toList();
    for (String entry : entries) {
      Path path = Path.of(entry);
      assertThat(Files.isDirectory(path) && Files.exists(path.resolve("logback-test.xml")))
          .as("no test logging on the demo's class path: " + entry).isFalse();
    }
    return entries.stream().collect(Collectors.joining(File.pathSeparator));
  }
}
