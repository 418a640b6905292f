package io.spillway.app.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.deploy.RepositoryFiles;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walk of docs/quickstart.md ("Rehearse it with the simulators") run as a newcomer would paste
 * it, in bash: the simulated Ollama and cloud, the exports, {@code check-config}, {@code serve}, a
 * request with the team's key. Only two things are swapped: {@code java -jar spillway.jar} for this
 * build's classes, and the three fixed ports for free ones. What {@code serve} prints on start and on
 * stop is checked line by line.
 */
class NewcomerWalkTest {
  private static final String JAR_COMMAND = "java --enable-native-access=ALL-UNNAMED -jar gateway-app/target/spillway.jar";

  @TempDir Path dir;
  private Process walk;

  @AfterEach
  void stopEverythingTheWalkStarted() {
    if (walk != null) {
      walk.descendants().forEach(ProcessHandle::destroyForcibly);
      walk.destroyForcibly();
    }
  }

  static String rehearsal() throws IOException {
    String doc = Files.readString(RepositoryFiles.root().resolve("docs/quickstart.md"));
    int section = doc.indexOf("### Rehearse it with the simulators");
    assertThat(section).as("quickstart has the rehearsal").isPositive();
    Matcher block = Pattern.compile("```bash\n(.*?)```", Pattern.DOTALL).matcher(doc);
    assertThat(block.find(section)).isTrue();
    return block.group(1);
  }

  @Test
  void theQuickstartWalkReachesAWorkingServeForTheTeam() throws Exception {
    String script = rehearsal();
    assertThat(script).contains(JAR_COMMAND + " serve --config config/gateway.yaml");
    int gateway = freePort();
    int cloud = freePort();
    int ollama = freePort();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String walked = script
        .replace(JAR_COMMAND, "\"$WALK_JAVA\" --enable-native-access=ALL-UNNAMED -Xmx256m -XX:TieredStopAtLevel=1"
            + " -cp \"$WALK_CLASSPATH\" io.spillway.app.Main")
        .replace("8080", String.valueOf(gateway))
        .replace("8081", String.valueOf(cloud))
        .replace("11434", String.valueOf(ollama));
    // After the walk: stop serve as the page says (its stop lines), then the simulators.
    walked = "set -e\n" + walked + "\necho WALK-DONE\nkill %3\nwait %3 || true\nkill %1 %2\n";
    Files.createDirectories(dir.resolve("config"));
    Files.copy(RepositoryFiles.root().resolve("config/gateway.yaml"), dir.resolve("config/gateway.yaml"));
    Path output = dir.resolve("walk.log");
    ProcessBuilder builder = new ProcessBuilder("bash", "-c", walked).directory(dir.toFile())
        .redirectErrorStream(true).redirectOutput(output.toFile());
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(name -> name.startsWith("SPILLWAY_") || name.startsWith("OLLAMA") || name.startsWith("OPENAI"));
    env.put("SPILLWAY_PORT", String.valueOf(gateway)); // config/gateway.yaml reads its port from here
    env.put("WALK_JAVA", java);
    env.put("WALK_CLASSPATH", System.getProperty("java.class.path"));
    env.put("PATH", Path.of(java).getParent() + ":" + System.getenv("PATH"));
    walk = builder.start();

    boolean finished = walk.waitFor(150, TimeUnit.SECONDS);
    String log = Files.readString(output, StandardCharsets.UTF_8);
    assertThat(finished).as("the walk ends; its output:\n" + log).isTrue();
    assertThat(walk.exitValue()).as(log).isZero();

    String base = "http://127.0.0.1:" + gateway;
    assertThat(log).as("the request with the team's key was answered").contains("\"chat.completion\"")
        .contains("WALK-DONE");
    List<String> serveLines = new ArrayList<>(log.lines().filter(line -> line.startsWith("Spillway ")
        || line.startsWith("spillway: ")).toList());
    assertThat(serveLines).containsSubsequence(
        "Spillway " + io.spillway.core.Version.VERSION + " serving " + base + "/v1 (listening on 0.0.0.0:" + gateway
            + "; clients use that as their OpenAI base URL)",
        "spillway: dashboard: " + base + "/dashboard (paste the admin token); admin API on at " + base + "/admin/",
        "spillway: cloud route 'cloud': http://127.0.0.1:" + cloud + "/v1, API key set, ready (breaker closed)",
        "spillway: local: ollama at http://127.0.0.1:" + ollama + ", ready (models qwen2.5-coder:7b, llama3.2:3b)",
        "spillway: keys: 1 from the config for team ci",
        "spillway: ready; Ctrl-C stops (requests in flight get up to 30s to finish)",
        "spillway: stopping: draining 0 requests in flight (up to 30s)",
        "spillway: stopped");
    assertThat(serveLines).anySatisfy(line -> assertThat(line).startsWith("spillway: connections: up to "));
    assertThat(log).as("the default config starts without a warning").doesNotContain(" WARN ")
        .doesNotContain("warning:").doesNotContain("Exception");
  }

  @Test
  void theReadmeExportsTheSameVariablesAsTheQuickstartWalk() throws IOException {
    String readme = Files.readString(RepositoryFiles.root().resolve("README.md"));
    String use = readme.substring(readme.indexOf("## Use it"), readme.indexOf("## Documentation"));
    Pattern export = Pattern.compile("(?m)^export (\\w+)=");
    List<String> inReadme = export.matcher(use).results().map(m -> m.group(1)).toList();
    List<String> inWalk = export.matcher(rehearsal()).results().map(m -> m.group(1))
        .filter(name -> !name.equals("SPILLWAY_CLOUD_BASE_URL") && !name.equals("OLLAMA_URL")).toList();
    assertThat(inReadme).containsExactlyInAnyOrderElementsOf(inWalk);
    assertThat(use).contains(JAR_COMMAND + " serve --config config/gateway.yaml")
        .contains("ollama pull qwen2.5-coder:7b").contains("ollama pull llama3.2:3b");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
