package io.spillway.app.architecture;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import io.spillway.core.error.ErrorDialect;
import io.spillway.core.error.OpenAiError;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.redis.RedisLink;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The architecture rules that look further than one import: a call is a call whether it is written
 * as {@code System.nanoTime()} or as {@code System::nanoTime}; a module's compile dependencies on
 * our other modules are used by its main code (a dependency only a test uses is in test scope, so
 * Maven guards the edge); every module of the reactor is seen; only the error mapper writes an
 * OpenAI error body; every stage says it is one. {@code ArchitectureTest} checks them on the
 * production classes, {@code ArchitectureRulesTest} shows each one failing on a planted violation.
 */
public final class ArchitectureRules {
  private static final Pattern MODULE = Pattern.compile("<module>(gateway-[\\w-]+)</module>");
  private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);
  private static final Pattern ARTIFACT = Pattern.compile("<artifactId>(gateway-[\\w-]+)</artifactId>");
  /** Benchmarks are not part of the jar: they may import what they measure. */
  private static final Set<String> NOT_SHIPPED = Set.of("gateway-bench");

  private ArchitectureRules() {}

  /** No class outside {@code allowed} calls {@code owner.method}, by a call or a method reference. */
  public static ArchRule noOneButCalls(Class<?> owner, String method, String... allowed) {
    Set<String> exempt = Set.of(allowed);
    return ArchRuleDefinition.classes().that(new com.tngtech.archunit.base.DescribedPredicate<JavaClass>(
            "are not " + exempt) {
          @Override
          public boolean test(JavaClass c) {
            return !exempt.contains(c.getName()) && !exempt.contains(outermost(c).getName());
          }
        })
        .should(neverCallOrReference(owner, method))
        .allowEmptyShould(true);
  }

  /** The JVM's clocks are read only by {@code Ticker.system()} and the server's shutdown drain. */
  public static List<ArchRule> durationsComeFromTheInjectedTicker() {
    String[] allowed = {"io.spillway.core.time.Ticker", "io.spillway.server.ConnectionTracker"};
    return List.of(noOneButCalls(System.class, "nanoTime", allowed),
        noOneButCalls(System.class, "currentTimeMillis", allowed));
  }

  /**
   * Only {@link ErrorMapper} turns an {@link OpenAiError} into the body a client reads (the record
   * writes itself), and {@link ErrorDialect}, which renders the mapper's failure in the API the client
   * speaks (OpenAI's or Anthropic's shape) for it.
   */
  public static List<ArchRule> onlyTheErrorMapperWritesAnOpenAiErrorBody() {
    String mapper = ErrorMapper.class.getName();
    String itself = OpenAiError.class.getName();
    String dialect = ErrorDialect.class.getName();
    return List.of(noOneButCalls(OpenAiError.class, "toJson", mapper, itself, dialect),
        noOneButCalls(OpenAiError.class, "toBytes", mapper, itself, dialect));
  }

  /**
   * The one Redis link of a process is opened by the foundation every surface shares (issue 27,
   * item 4), so the quota store, the breaker, the keys and the response store all ride on it.
   */
  public static ArchRule onlyTheFoundationOpensTheRedisLink() {
    return noOneButCalls(RedisLink.class, "open", "io.spillway.app.Foundation");
  }

  /** Every class that implements {@link Interceptor} is named {@code …Interceptor} (docs/architecture.md, "Names"). */
  public static ArchRule everyStageIsAnInterceptor() {
    return ArchRuleDefinition.classes().that().implement(Interceptor.class)
        .and().areNotAnonymousClasses().and().areNotMemberClasses()
        .should().haveSimpleNameEndingWith("Interceptor")
        .allowEmptyShould(true);
  }

  /** The reactor's modules that ship in the jar, from the root pom, each with its package. */
  public static Map<String, String> shippedModules(Path root) {
    Map<String, String> modules = new LinkedHashMap<>();
    Matcher m = MODULE.matcher(read(root.resolve("pom.xml")));
    while (m.find()) {
      if (!NOT_SHIPPED.contains(m.group(1))) {
        modules.put(m.group(1), packageOf(m.group(1)));
      }
    }
    return modules;
  }

  /** {@code gateway-local-backend} → {@code io.spillway.local}, {@code gateway-core} → {@code io.spillway.core}. */
  static String packageOf(String module) {
    String name = module.substring("gateway-".length());
    int dash = name.indexOf('-');
    return "io.spillway." + (dash < 0 ? name : name.substring(0, dash));
  }

  /** Each module's compile-scope dependencies on our other modules, from its pom. */
  public static Map<String, Set<String>> compileDependencies(Path root, Set<String> modules) {
    Map<String, Set<String>> all = new LinkedHashMap<>();
    for (String module : modules) {
      Set<String> deps = new LinkedHashSet<>();
      Matcher d = DEPENDENCY.matcher(read(root.resolve(module).resolve("pom.xml")));
      while (d.find()) {
        String body = d.group(1);
        Matcher artifact = ARTIFACT.matcher(body);
        if (artifact.find() && !body.contains("<scope>") && !body.contains("<type>test-jar</type>")) {
          deps.add(artifact.group(1));
        }
      }
      all.put(module, deps);
    }
    return all;
  }

  /** The packages of {@code modules} of which {@code classes} holds no class: each should be empty. */
  public static List<String> unseen(Map<String, String> modules, JavaClasses classes) {
    return modules.entrySet().stream()
        .filter(e -> classes.stream().noneMatch(c -> c.getPackageName().startsWith(e.getValue())))
        .map(e -> e.getKey() + " (" + e.getValue() + ")")
        .toList();
  }

  /**
   * Compile dependencies between our modules that the depending module's main code never uses: each
   * belongs in test scope (or nowhere), or Maven stops guarding the edge. Empty when all are used.
   */
  public static List<String> unusedCompileDependencies(Map<String, Set<String>> declared, JavaClasses classes) {
    List<String> unused = new ArrayList<>();
    declared.forEach((module, dependencies) -> {
      String from = packageOf(module);
      for (String dependency : dependencies) {
        String to = packageOf(dependency);
        boolean used = classes.stream()
            .filter(c -> inPackage(c, from))
            .flatMap(c -> c.getDirectDependenciesFromSelf().stream())
            .anyMatch(d -> inPackage(d.getTargetClass(), to));
        if (!used) {
          unused.add(module + " → " + dependency);
        }
      }
    });
    return unused;
  }

  private static boolean inPackage(JavaClass c, String pkg) {
    String name = c.getPackageName();
    return name.equals(pkg) || name.startsWith(pkg + ".");
  }

  private static ArchCondition<JavaClass> neverCallOrReference(Class<?> owner, String method) {
    String target = owner.getName() + "." + method;
    return new ArchCondition<>("never call or reference " + target) {
      @Override
      public void check(JavaClass c, ConditionEvents events) {
        Stream.concat(c.getMethodCallsFromSelf().stream(), c.getMethodReferencesFromSelf().stream())
            .filter(access -> access.getTargetOwner().getName().equals(owner.getName())
                && access.getTarget().getName().equals(method))
            .forEach(access -> events.add(SimpleConditionEvent.violated(access, describe(access))));
      }
    };
  }

  private static String describe(JavaAccess<?> access) {
    return access.getDescription();
  }

  private static JavaClass outermost(JavaClass c) {
    JavaClass outer = c;
    while (outer.getEnclosingClass().isPresent()) {
      outer = outer.getEnclosingClass().get();
    }
    return outer;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
