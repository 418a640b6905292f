package io.spillway.app.architecture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import io.spillway.app.Foundation;
import io.spillway.app.architecture.planted.OpensItsOwnRedisLink;
import io.spillway.app.architecture.planted.TimesWithACall;
import io.spillway.app.architecture.planted.TimesWithAMethodReference;
import io.spillway.app.architecture.planted.UnsuffixedStage;
import io.spillway.app.architecture.planted.WritesAnErrorBodyByReference;
import io.spillway.app.architecture.planted.WritesItsOwnErrorBody;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.time.Ticker;
import io.spillway.trim.ContextTrimmer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The test of {@code ArchitectureTest}: each rule, pointed at a class planted in these test sources
 * that breaks it, fails and names the planted class; pointed at the classes it allows, it passes.
 */
class ArchitectureRulesTest {

  private static JavaClasses classes(Class<?>... planted) {
    return new ClassFileImporter().importClasses(planted);
  }

  private static void failsNaming(List<ArchRule> rules, JavaClasses classes, String planted) {
    assertThatThrownBy(() -> rules.forEach(rule -> rule.check(classes)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining(planted);
  }

  @Test
  void aClockReadThroughAMethodReferenceCountsAsACall() {
    failsNaming(ArchitectureRules.durationsComeFromTheInjectedTicker(), classes(TimesWithAMethodReference.class),
        TimesWithAMethodReference.class.getName());
  }

  @Test
  void aClockReadThroughAPlainCallIsCaughtToo() {
    failsNaming(ArchitectureRules.durationsComeFromTheInjectedTicker(), classes(TimesWithACall.class),
        TimesWithACall.class.getName());
  }

  @Test
  void theTickerItselfMayReadTheClock() {
    ArchitectureRules.durationsComeFromTheInjectedTicker().forEach(rule -> rule.check(classes(Ticker.class)));
  }

  @Test
  void anErrorBodyWrittenOutsideTheErrorMapperIsCaughtByCallAndByReference() {
    failsNaming(ArchitectureRules.onlyTheErrorMapperWritesAnOpenAiErrorBody(), classes(WritesItsOwnErrorBody.class),
        WritesItsOwnErrorBody.class.getName());
    failsNaming(ArchitectureRules.onlyTheErrorMapperWritesAnOpenAiErrorBody(),
        classes(WritesAnErrorBodyByReference.class), WritesAnErrorBodyByReference.class.getName());
  }

  @Test
  void theErrorMapperMayWriteTheBody() {
    ArchitectureRules.onlyTheErrorMapperWritesAnOpenAiErrorBody().forEach(rule -> rule.check(classes(ErrorMapper.class)));
  }

  @Test
  void aStageNamedOtherwiseThanInterceptorIsCaught() {
    failsNaming(List.of(ArchitectureRules.everyStageIsAnInterceptor()), classes(UnsuffixedStage.class),
        UnsuffixedStage.class.getName());
  }

  @Test
  void aRedisLinkOpenedOutsideTheFoundationIsCaught() {
    failsNaming(List.of(ArchitectureRules.onlyTheFoundationOpensTheRedisLink()), classes(OpensItsOwnRedisLink.class),
        OpensItsOwnRedisLink.class.getName());
  }

  @Test
  void theFoundationMayOpenTheRedisLink() {
    ArchitectureRules.onlyTheFoundationOpensTheRedisLink().check(classes(Foundation.class));
  }

  @Test
  void aModuleWithoutClassesOnTheClasspathIsReportedUnseen() {
    Map<String, String> modules = Map.of("gateway-trim", "io.spillway.trim", "gateway-nowhere", "io.spillway.nowhere");

    assertThat(ArchitectureRules.unseen(modules, classes(ContextTrimmer.class)))
        .containsExactly("gateway-nowhere (io.spillway.nowhere)");
  }

  @Test
  void aCompileDependencyTheMainCodeNeverUsesIsReported() {
    // The trimmer imports nothing of ours, so a compile dependency of gateway-trim on gateway-core is unused.
    Map<String, Set<String>> planted = Map.of("gateway-trim", Set.of("gateway-core"));

    assertThat(ArchitectureRules.unusedCompileDependencies(planted, classes(ContextTrimmer.class)))
        .containsExactly("gateway-trim → gateway-core");
  }

  @Test
  void aCompileDependencyTheMainCodeUsesIsFine() {
    Map<String, Set<String>> declared = Map.of("gateway-core", Set.of("gateway-core"));

    assertThat(ArchitectureRules.unusedCompileDependencies(declared, classes(ErrorMapper.class))).isEmpty();
  }

  @Test
  void modulesAreNamedByTheirPackages() {
    assertThat(ArchitectureRules.packageOf("gateway-local-backend")).isEqualTo("io.spillway.local");
    assertThat(ArchitectureRules.packageOf("gateway-trim")).isEqualTo("io.spillway.trim");
  }
}
