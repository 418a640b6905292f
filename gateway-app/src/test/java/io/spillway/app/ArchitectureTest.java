package io.spillway.app;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.spillway.app.architecture.ArchitectureRules;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The allowed arrows between the modules (DESIGN.md, "Modules"): dependencies point toward
 * {@code gateway-core}; Netty stays in the front end, OkHttp in the HTTP clients, YAML in the config;
 * no stage imports another stage; the backends know nothing of the server. The app (wiring) may see
 * everything. Production classes of every module on this test's classpath are checked, tests are not.
 * The rules that look further than one import are {@link ArchitectureRules}, each shown failing on a
 * planted violation by {@code ArchitectureRulesTest}.
 */
class ArchitectureTest {

  /** The reactor's root: the tests run in gateway-app. */
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  private static final JavaClasses CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .withImportOption(location -> !location.contains("-tests.jar")) // other modules' test fixtures
      .importPackages("io.spillway");

  /** The stages of the pipeline and the terminal backends, one module each. */
  private static final List<String> STAGES = List.of(
      "io.spillway.shaping..", "io.spillway.cache..", "io.spillway.quota..",
      "io.spillway.routing..", "io.spillway.local..");

  /** The reactor's modules that ship in the jar, read from the root pom: a new module cannot be forgotten. */
  private static final Map<String, String> MODULES = ArchitectureRules.shippedModules(ROOT);

  @Test
  void everyModuleIsSeen() {
    assertThat(MODULES.keySet()).as("read from the root pom").contains("gateway-core", "gateway-trim", "gateway-redis", "gateway-app");
    assertThat(ArchitectureRules.unseen(MODULES, CLASSES)).as("modules with no class imported").isEmpty();
  }

  /** A dependency only a test uses is in test scope, so Maven (which refuses cycles) guards the edge. */
  @Test
  void everyCompileDependencyBetweenOurModulesIsUsedByMainCode() {
    assertThat(ArchitectureRules.unusedCompileDependencies(
            ArchitectureRules.compileDependencies(ROOT, MODULES.keySet()), CLASSES))
        .as("compile dependencies no main class uses").isEmpty();
  }

  @Test
  void onlyTheErrorMapperWritesAnOpenAiErrorBody() {
    ArchitectureRules.onlyTheErrorMapperWritesAnOpenAiErrorBody().forEach(rule -> rule.check(CLASSES));
  }

  @Test
  void everyStageIsNamedAnInterceptor() {
    ArchitectureRules.everyStageIsAnInterceptor().check(CLASSES);
  }

  @Test
  void coreImportsNothingOfOursAndNoNettyOkHttpOrYaml() {
    noClasses().that().resideInAPackage("io.spillway.core..")
        .should().dependOnClassesThat(resideInAPackage("io.spillway..")
            .and(not(resideInAPackage("io.spillway.core.."))))
        .orShould().dependOnClassesThat()
        .resideInAnyPackage("io.netty..", "okhttp3..", "com.fasterxml.jackson.dataformat.yaml..")
        .check(CLASSES);
  }

  @Test
  void nettyStaysInTheServer() {
    noClasses().that().resideOutsideOfPackage("io.spillway.server..")
        .should().dependOnClassesThat().resideInAPackage("io.netty..")
        .check(CLASSES);
  }

  /** The upstream client, and the local backend's own Ollama and OpenAI-kind calls. */
  @Test
  void okHttpStaysInTheUpstreamClientAndTheLocalBackend() {
    noClasses().that().resideOutsideOfPackages("io.spillway.upstream..", "io.spillway.local..")
        .should().dependOnClassesThat().resideInAPackage("okhttp3..")
        .check(CLASSES);
  }

  @Test
  void yamlStaysInTheConfig() {
    noClasses().that().resideOutsideOfPackage("io.spillway.config..")
        .should().dependOnClassesThat().resideInAPackage("com.fasterxml.jackson.dataformat.yaml..")
        .check(CLASSES);
  }

  @Test
  void configServerAndUpstreamImportNoStageNoBackendAndNoApp() {
    String[] above = concat(STAGES, "io.spillway.app..");
    noClasses().that().resideInAPackage("io.spillway.config..")
        .should().dependOnClassesThat().resideInAnyPackage(
            concat(List.of(above), "io.spillway.server..", "io.spillway.upstream.."))
        .check(CLASSES);
    noClasses().that().resideInAnyPackage("io.spillway.server..")
        .should().dependOnClassesThat().resideInAnyPackage(concat(List.of(above), "io.spillway.upstream.."))
        .check(CLASSES);
    noClasses().that().resideInAnyPackage("io.spillway.upstream..")
        .should().dependOnClassesThat().resideInAnyPackage(concat(List.of(above), "io.spillway.server.."))
        .check(CLASSES);
  }

  @Test
  void noStageImportsAnotherStage() {
    for (String stage : STAGES) {
      List<String> others = STAGES.stream().filter(s -> !s.equals(stage)).toList();
      noClasses().that().resideInAPackage(stage)
          .should().dependOnClassesThat().resideInAnyPackage(others.toArray(String[]::new))
          .check(CLASSES);
    }
  }

  /** The code-aware trimmer is a library that shaping and the local backend share: it needs nothing of ours. */
  @Test
  void theTrimmerImportsNothingOfOurs() {
    noClasses().that().resideInAPackage("io.spillway.trim..")
        .should().dependOnClassesThat().resideOutsideOfPackages("io.spillway.trim..", "java..")
        .check(CLASSES);
  }

  /**
   * The Redis link is a library every Redis user goes through (issue 27, item 1): it needs nothing
   * of ours, and only it makes Lettuce clients and client resources (one set per process).
   */
  @Test
  void onlyTheRedisLinkConnectsToRedis() {
    noClasses().that().resideInAPackage("io.spillway.redis..")
        .should().dependOnClassesThat(resideInAPackage("io.spillway..").and(not(resideInAPackage("io.spillway.redis.."))))
        .check(CLASSES);
    noClasses().that().resideOutsideOfPackage("io.spillway.redis..")
        .should().dependOnClassesThat().haveFullyQualifiedName("io.lettuce.core.RedisClient")
        .orShould().dependOnClassesThat().resideInAPackage("io.lettuce.core.resource..")
        .orShould().dependOnClassesThat().resideInAPackage("io.lettuce.core.pubsub..")
        .check(CLASSES);
  }

  /**
   * The wiring by surface (issue 27, item 4): the one Redis link is opened by the foundation every
   * surface shares. (The {@code store} value is parsed once, while the config is read: {@code
   * Store.parse} is package-private to the config, so the compiler keeps that rule.)
   */
  @Test
  void theRedisLinkIsOpenedOnce() {
    ArchitectureRules.onlyTheFoundationOpensTheRedisLink().check(CLASSES);
  }

  @Test
  void backendsDoNotImportTheServer() {
    noClasses().that().resideInAnyPackage("io.spillway.routing..", "io.spillway.local..")
        .should().dependOnClassesThat().resideInAPackage("io.spillway.server..")
        .check(CLASSES);
  }

  /** The breakers and the router emit events to listeners; the app binds their meters (issue 14, item 7). */
  @Test
  void theRouterAndTheBreakersBuildNoMeters() {
    noClasses().that().resideInAPackage("io.spillway.routing..")
        .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
        .check(CLASSES);
  }

  /**
   * Durations come from the injected {@code Ticker}: only {@code Ticker.system()} reads the JVM's
   * monotonic clock, plus a real-time wait that measures nothing (the server's shutdown drain). A
   * method reference ({@code System::nanoTime}) counts as a call.
   */
  @Test
  void durationsComeFromTheInjectedTicker() {
    ArchitectureRules.durationsComeFromTheInjectedTicker().forEach(rule -> rule.check(CLASSES));
  }

  @Test
  void onlyTheAppImportsTheApp() {
    noClasses().that().resideOutsideOfPackage("io.spillway.app..")
        .should().dependOnClassesThat().resideInAPackage("io.spillway.app..")
        .check(CLASSES);
  }

  private static String[] concat(List<String> packages, String... more) {
    return Stream.concat(packages.stream(), Arrays.stream(more)).toArray(String[]::new);
  }
}
