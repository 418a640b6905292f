package io.spillway.app.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * No Docker engine runs here, so the deployment files are checked for what can be checked without
 * one: they parse, every file they build from or mount exists, every variable the config needs is
 * given, and the config they run passes the real {@link ConfigLoader}.
 */
class DeploymentFilesTest {
  static final Path ROOT = RepositoryFiles.root();
  static final Path DOCKER = ROOT.resolve("docker");
  static final Pattern REQUIRED_VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
  static final YAMLMapper YAML = new YAMLMapper();

  /** Loads a config as the container would, with placeholder values for the variables it is given. */
  static GatewayConfig load(String source, String yaml, Iterable<String> variablesGiven) {
    Map<String, String> env = new HashMap<>();
    variablesGiven.forEach(name -> env.put(name, name.endsWith("_URL")
        ? "http://" + name.toLowerCase().replace('_', '-') + ":11434"
        : "value-of-" + name.toLowerCase()));
    env.put("SPILLWAY_STORE", "redis://redis:6379");
    env.put("SPILLWAY_CLOUD_BASE_URL", "https://api.openai.com/v1");
    env.put("OLLAMA_URL", "http://ollama:11434");
    return new ConfigLoader(env::get).parse(source, yaml);
  }

  static List<String> requiredVariables(String yaml) {
    List<String> names = new ArrayList<>();
    Matcher m = REQUIRED_VARIABLE.matcher(yaml);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  @Test
  void composeBuildsFromFilesThatExistAndMountsAConfigThatLoads() throws IOException {
    JsonNode compose = YAML.readTree(DOCKER.resolve("compose.yaml").toFile());
    JsonNode spillway = compose.path("services").path("spillway");

    Path context = DOCKER.resolve(spillway.path("build").path("context").asText()).normalize();
    assertThat(context).isEqualTo(ROOT);
    assertThat(context.resolve(spillway.path("build").path("dockerfile").asText())).isRegularFile();

    Path config = null;
    for (JsonNode service : compose.path("services")) {
      for (JsonNode volume : service.path("volumes")) {
        String[] parts = volume.asText().split(":");
        if (parts[0].startsWith(".")) {
          Path source = DOCKER.resolve(parts[0]).normalize();
          assertThat(source).as(volume.asText()).exists();
          if (parts[1].equals("/etc/spillway/gateway.yaml")) {
            config = source;
          }
        } else {
          assertThat(compose.path("volumes").has(parts[0])).as("named volume " + parts[0]).isTrue();
        }
      }
    }
    assertThat(config).as("compose mounts a config at /etc/spillway/gateway.yaml").isNotNull();
    List<String> given = new ArrayList<>();
    spillway.path("environment").fieldNames().forEachRemaining(given::add);
    String yaml = Files.readString(config);
    assertThat(given).as("every ${VAR} without a default in " + config.getFileName() + " is set by compose")
        .containsAll(requiredVariables(yaml));

    GatewayConfig loaded = load(config.toString(), yaml, given);
    assertThat(loaded.store()).isEqualTo(Store.parse("redis://redis:6379"));
    assertThat(loaded.local().baseUrl()).isEqualTo("http://ollama:11434");
    assertThat(loaded.server().port()).isEqualTo(8080);
  }

  @Test
  void composeRunsOllamaOnTheGpuAndWaitsForRedis() throws IOException {
    JsonNode compose = YAML.readTree(DOCKER.resolve("compose.yaml").toFile());

    JsonNode devices = compose.at("/services/ollama/deploy/resources/reservations/devices/0");
    assertThat(devices.path("driver").asText()).isEqualTo("nvidia");
    assertThat(devices.path("capabilities").toString()).contains("gpu");
    assertThat(compose.at("/services/spillway/depends_on/redis/condition").asText()).isEqualTo("service_healthy");
    assertThat(compose.at("/services/redis/healthcheck/test").toString()).contains("redis-cli");
  }

  /**
   * The build stage copies the whole context, so a new module reaches it without a line of its own;
   * this fails when a module, or what the Maven build itself needs, is left out (by the Dockerfile
   * or by .dockerignore).
   */
  @Test
  void everyReactorModuleReachesTheImageBuild() throws IOException {
    List<String> build = new ArrayList<>();
    int stages = 0;
    for (String line : Files.readAllLines(DOCKER.resolve("Dockerfile"))) {
      if (line.startsWith("FROM ") && ++stages > 1) {
        break;
      }
      if (stages == 1) {
        build.add(line);
      }
    }
    assertThat(build).as("the build stage copies the whole context").contains("COPY . .");
    List<java.nio.file.PathMatcher> ignored = new ArrayList<>();
    for (String line : Files.readAllLines(ROOT.resolve(".dockerignore"))) {
      String pattern = line.trim();
      if (!pattern.isEmpty() && !pattern.startsWith("#")) {
        assertThat(pattern).as(".dockerignore exceptions are not used here").doesNotStartWith("!");
        ignored.add(ROOT.getFileSystem().getPathMatcher("glob:" + pattern));
        ignored.add(ROOT.getFileSystem().getPathMatcher("glob:" + pattern + "/**"));
      }
    }
    List<String> needed = new ArrayList<>(List.of("pom.xml", "mvnw", ".mvn/wrapper/maven-wrapper.properties",
        "docker/gateway.docker.yaml", "docs/operations.md"));
    Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(ROOT.resolve("pom.xml")));
    while (module.find()) {
      needed.add(module.group(1) + "/pom.xml");
      needed.add(module.group(1) + "/src/main/java");
    }
    assertThat(needed).hasSizeGreaterThan(4);
    for (String path : needed) {
      if (!path.endsWith("src/main/java") || Files.isDirectory(ROOT.resolve(path))) {
        assertThat(ROOT.resolve(path)).as(path).exists();
      }
      assertThat(ignored).as("%s reaches the image build (not in .dockerignore)", path)
          .noneMatch(matcher -> matcher.matches(Path.of(path)));
    }
  }

  @Test
  void dockerfileCopiesFilesThatExistRunsAsNonRootAndChecksHealth() throws IOException {
    List<String> lines = Files.readAllLines(DOCKER.resolve("Dockerfile"));
    String text = String.join("\n", lines);

    for (String line : lines) {
      if (line.startsWith("COPY ") && !line.contains("--from=")) {
        String[] parts = line.substring(5).trim().split("\\s+");
        for (int i = 0; i < parts.length - 1; i++) {
          assertThat(ROOT.resolve(parts[i])).as(line).exists();
        }
      }
    }
    assertThat(text).contains("FROM eclipse-temurin:25-jdk AS build", "./mvnw", "-DskipTests package",
        "FROM eclipse-temurin:25-jre", "--enable-native-access=ALL-UNNAMED");
    assertThat(text).as("the image is trained into an AOT cache and starts from it")
        .contains("-XX:AOTCacheOutput=/app/spillway.aot", "\"-XX:AOTCache=/app/spillway.aot\"");
    assertThat(text).containsPattern("(?m)^USER 10001");
    assertThat(text).containsPattern("(?m)^HEALTHCHECK .*\\n?.*curl -fsS http://127.0.0.1:\\$\\{SPILLWAY_PORT:-8080}/healthz");
    assertThat(text).contains("cp gateway-app/target/spillway.jar");
    assertThat(Files.readString(ROOT.resolve("gateway-app/pom.xml"))).contains("<finalName>spillway</finalName>");
    assertThat(Files.readString(ROOT.resolve(".dockerignore"))).contains("**/target");
  }

  @Test
  void kubernetesExampleRunsTwoReplicasSharingRedisWithAConfigThatLoads() throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(DOCKER.resolve("k8s/spillway.yaml").toFile())) {
      it.forEachRemaining(documents::add);
    }
    JsonNode configMap = kind(documents, "ConfigMap", "spillway-config");
    JsonNode deployment = kind(documents, "Deployment", "spillway");
    JsonNode container = deployment.at("/spec/template/spec/containers/0");

    assertThat(deployment.at("/spec/replicas").asInt()).isEqualTo(2);
    assertThat(deployment.at("/spec/template/spec/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
    assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/healthz");

    String configPath = null;
    JsonNode args = container.path("args");
    for (int i = 0; i < args.size() - 1; i++) {
      if (args.get(i).asText().equals("--config")) {
        configPath = args.get(i + 1).asText();
      }
    }
    assertThat(configPath).isNotNull();
    String mountedVolume = null;
    for (JsonNode mount : container.path("volumeMounts")) {
      if (configPath.startsWith(mount.path("mountPath").asText() + "/")) {
        mountedVolume = mount.path("name").asText();
      }
    }
    assertThat(mountedVolume).as("the --config path is inside a mounted volume").isNotNull();
    String volumeName = mountedVolume;
    JsonNode volume = null;
    for (JsonNode v : deployment.at("/spec/template/spec/volumes")) {
      if (v.path("name").asText().equals(volumeName)) {
        volume = v;
      }
    }
    assertThat(volume).isNotNull();
    assertThat(volume.at("/configMap/name").asText()).isEqualTo("spillway-config");
    String fileName = configPath.substring(configPath.lastIndexOf('/') + 1);
    String yaml = configMap.path("data").path(fileName).asText();
    assertThat(yaml).as("the ConfigMap holds " + fileName).isNotBlank();

    List<String> fromSecret = List.of("SPILLWAY_CLOUD_API_KEY", "SPILLWAY_ADMIN_TOKEN", "SPILLWAY_CI_KEY");
    assertThat(container.at("/envFrom/0/secretRef/name").asText()).isEqualTo("spillway-secrets");
    assertThat(fromSecret).containsAll(requiredVariables(yaml));
    GatewayConfig loaded = load("k8s ConfigMap spillway-config", yaml, fromSecret);
    assertThat(loaded.store()).isInstanceOf(Store.Redis.class);
    String redisHost = loaded.store().spelling().substring("redis://".length()).split(":")[0];
    assertThat(kind(documents, "Service", redisHost)).as("a Service named after the store's host").isNotNull();
    assertThat(loaded.keys()).hasSize(2);
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"config/gateway.yaml", "docker/gateway.docker.yaml",
      "docker/compose.yaml", "docker/Dockerfile", "docker/k8s/spillway.yaml", "docker/gateway.fleet.yaml",
      "docker/fleet-compose.yaml", "docker/k8s-fleet.yaml"})
  void shippedFilesReadTheCloudFromSpillwayVariablesNeverFromTheClientsOpenAiOnes(String file) throws Exception {
    String text = java.nio.file.Files.readString(ROOT.resolve(file));
    assertThat(text).as("clients export OPENAI_*; a gateway reading them would call itself")
        .doesNotContain("${OPENAI_")
        .doesNotContainPattern("(?m)(-e OPENAI_|OPENAI_[A-Z_]+=|^\\s*OPENAI_[A-Z_]+:)");
    assertThat(text).contains("SPILLWAY_CLOUD_API_KEY");
  }

  @Test
  void fleetComposeRunsThreeReplicasBehindNginxOnOneRedisAndTwoGpuServers() throws IOException {
    JsonNode compose = YAML.readTree(DOCKER.resolve("fleet-compose.yaml").toFile());
    JsonNode services = compose.path("services");
    List<String> replicas = List.of("spillway-1", "spillway-2", "spillway-3");

    for (String name : replicas) {
      JsonNode replica = services.path(name);
      assertThat(replica.path("image").asText()).as(name).isEqualTo("spillway:local");
      assertThat(replica.at("/environment/SPILLWAY_STORE").asText()).as(name).isEqualTo("redis://redis:6379");
      assertThat(replica.at("/depends_on/redis/condition").asText()).as(name).isEqualTo("service_healthy");
      assertThat(replica.path("volumes").get(0).asText()).as("every replica mounts the same config")
          .isEqualTo("./gateway.fleet.yaml:/etc/spillway/gateway.yaml:ro");
      assertThat(replica.has("ports")).as(name + " is reached through nginx only").isFalse();
    }
    Path context = DOCKER.resolve(services.at("/spillway-1/build/context").asText()).normalize();
    assertThat(context).isEqualTo(ROOT);
    assertThat(context.resolve(services.at("/spillway-1/build/dockerfile").asText())).isRegularFile();
    for (JsonNode service : services) {
      for (JsonNode volume : service.path("volumes")) {
        String source = volume.asText().split(":")[0];
        if (source.startsWith(".")) {
          assertThat(DOCKER.resolve(source).normalize()).as(volume.asText()).exists();
        } else {
          assertThat(compose.path("volumes").has(source)).as("named volume " + source).isTrue();
        }
      }
    }
    String nginx = Files.readString(DOCKER.resolve("nginx-fleet.conf"));
    for (String name : replicas) {
      assertThat(nginx).contains("server " + name + ":8080");
    }
    assertThat(nginx).contains("proxy_buffering off");
    assertThat(services.at("/nginx/ports/0").asText()).isEqualTo("8080:8080");
    assertThat(services.at("/gpu-1/deploy/resources/reservations/devices/0/device_ids/0").asText()).isEqualTo("0");
    assertThat(services.at("/gpu-2/deploy/resources/reservations/devices/0/device_ids/0").asText()).isEqualTo("1");
    assertThat(services.at("/redis/command").toString()).contains("--appendonly");

    String yaml = Files.readString(DOCKER.resolve("gateway.fleet.yaml"));
    List<String> given = new ArrayList<>();
    services.path("spillway-1").path("environment").fieldNames().forEachRemaining(given::add);
    assertThat(given).containsAll(requiredVariables(yaml));
    for (JsonNode server : YAML.readTree(yaml).at("/local/servers")) {
      String host = server.path("baseUrl").asText().replaceAll(".*:-http://([^:]+):.*", "$1");
      assertThat(services.has(host)).as("local server " + server.path("name").asText() + " runs in compose").isTrue();
    }
    assertThat(YAML.readTree(yaml).at("/local/servers")).hasSize(2);
    assertLoadsAsAFleet("docker/gateway.fleet.yaml", yaml, given);
  }

  @Test
  void kubernetesFleetRunsThreeReplicasOnOneRedisAndTwoGpuBoxes() throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(DOCKER.resolve("k8s-fleet.yaml").toFile())) {
      it.forEachRemaining(documents::add);
    }
    JsonNode deployment = kind(documents, "Deployment", "spillway");
    JsonNode container = deployment.at("/spec/template/spec/containers/0");
    assertThat(deployment.at("/spec/replicas").asInt()).isEqualTo(3);
    assertThat(deployment.at("/spec/template/spec/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
    assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/healthz");
    assertThat(container.at("/envFrom/0/secretRef/name").asText()).isEqualTo("spillway-secrets");
    assertThat(deployment.at("/spec/template/spec/volumes/0/configMap/name").asText()).isEqualTo("spillway-fleet-config");
    assertThat(kind(documents, "PodDisruptionBudget", "spillway").at("/spec/minAvailable").asInt()).isEqualTo(2);

    String yaml = kind(documents, "ConfigMap", "spillway-fleet-config").at("/data/gateway.yaml").asText();
    JsonNode config = YAML.readTree(yaml);
    String redisHost = config.path("store").asText().substring("redis://".length()).split(":")[0];
    assertThat(kind(documents, "Service", redisHost)).as("a Service named after the store's host").isNotNull();
    JsonNode servers = config.at("/local/servers");
    assertThat(servers).hasSize(2);
    for (JsonNode server : servers) {
      String host = server.path("baseUrl").asText().replaceAll("http://([^:]+):.*", "$1");
      JsonNode service = kind(documents, "Service", host);
      JsonNode gpuBox = kind(documents, "StatefulSet", host);
      assertThat(gpuBox.at("/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu").asInt()).isEqualTo(1);
      assertThat(service.path("spec").path("selector")).isEqualTo(gpuBox.at("/spec/template/metadata/labels"));
    }
    List<String> fromSecret = List.of("SPILLWAY_CLOUD_API_KEY", "SPILLWAY_ADMIN_TOKEN", "SPILLWAY_CI_KEY");
    assertThat(fromSecret).containsAll(requiredVariables(yaml));
    assertLoadsAsAFleet("k8s ConfigMap spillway-fleet-config", yaml, fromSecret);
  }

  /** The fleet examples load as every replica would load them: shared Redis, both GPU boxes. */
  private static void assertLoadsAsAFleet(String source, String yaml, List<String> given) {
    GatewayConfig loaded = load(source, yaml, given);
    assertThat(loaded.local().serverList()).hasSize(2);
    assertThat(loaded.store()).isInstanceOf(Store.Redis.class);
    assertThat(loaded.server().port()).isEqualTo(8080);
  }

  private static JsonNode kind(List<JsonNode> documents, String kind, String name) {
    return documents.stream()
        .filter(d -> d.path("kind").asText().equals(kind) && d.at("/metadata/name").asText().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " named " + name));
  }
}
