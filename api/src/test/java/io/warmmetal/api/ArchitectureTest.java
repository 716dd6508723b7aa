package io.warmmetal.api;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The api module's dependency direction, package by package (a package includes its {@code impl}).
 * Rings, inside out — each may use only rings inside it:
 *
 * <ol>
 *   <li>base: {@code config}, {@code crypto}, {@code db}, {@code metrics} — use no other package;
 *   <li>core: {@code lifecycle} — the domain and every state transition; knows no edge;
 *   <li>HTTP edge: {@code http} — routers, validation, the one error shape (maps the core's
 *       refusals);
 *   <li>edges: the routes and adapters of each concept, each allowed the few others it names below;
 *   <li>the composition root, {@code io.warmmetal.api} itself, which wires everything and which
 *       nothing uses.
 * </ol>
 *
 * docs/architecture.md shows the same table.
 */
class ArchitectureTest {
  private static final String API = "io.warmmetal.api";

  /**
   * Each package, and the packages of this module it may use (besides itself and anything outside
   * the module).
   */
  static final Map<String, Set<String>> ALLOWED = new LinkedHashMap<>();

  static {
    ALLOWED.put("config", Set.of());
    ALLOWED.put("crypto", Set.of());
    ALLOWED.put("db", Set.of());
    ALLOWED.put("metrics", Set.of());
    ALLOWED.put("lifecycle", Set.of("crypto", "metrics"));
    ALLOWED.put("http", Set.of("lifecycle", "db"));
    ALLOWED.put("auth", Set.of("http", "crypto", "lifecycle"));
    ALLOWED.put("events", Set.of("http", "db", "auth"));
    ALLOWED.put("shapes", Set.of("http", "db", "auth"));
    ALLOWED.put("machines", Set.of("http", "db", "lifecycle", "auth"));
    ALLOWED.put("commands", Set.of("http", "db", "lifecycle"));
    ALLOWED.put("instances", Set.of("http", "db", "lifecycle", "auth", "metrics"));
    ALLOWED.put("enrollment", Set.of("http", "crypto", "lifecycle", "machines"));
    ALLOWED.put("channel", Set.of("http", "crypto", "lifecycle"));
    ALLOWED.put("ssh", Set.of("http", "crypto", "enrollment"));
    ALLOWED.put("power", Set.of("http", "crypto", "ssh"));
    ALLOWED.put("pools", Set.of("http", "lifecycle", "shapes", "power", "boot"));
    ALLOWED.put("boot", Set.of("http", "enrollment", "auth"));
    ALLOWED.put("hardware", Set.of("http", "db", "lifecycle"));
    ALLOWED.put("projects", Set.of("http", "db", "auth"));
    ALLOWED.put("console", Set.of());
    ALLOWED.put("ec2", Set.of("http", "db", "lifecycle", "auth", "shapes"));
  }

  /** What the core must never reach: every package outside the base rings. */
  private static final List<String> EDGES =
      List.of(
          "http",
          "auth",
          "events",
          "shapes",
          "machines",
          "commands",
          "instances",
          "enrollment",
          "channel",
          "ssh",
          "power",
          "pools",
          "boot",
          "hardware",
          "projects",
          "console",
          "ec2");

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(API);
  }

  @Test
  void everyPackageIsInTheTable() {
    String[] listed =
        Stream.concat(Stream.of(API), ALLOWED.keySet().stream().map(p -> API + "." + p + ".."))
            .toArray(String[]::new);
    classes()
        .should()
        .resideInAnyPackage(listed)
        .as("every package of the api module has a row in the table of allowed dependencies")
        .check(classes);
  }

  @Test
  void eachPackageUsesOnlyWhatTheTableAllows() {
    List<ArchRule> rules = new ArrayList<>();
    ALLOWED.forEach(
        (pkg, allowed) -> {
          String[] mayUse =
              Stream.concat(Stream.of(pkg), allowed.stream())
                  .map(p -> API + "." + p + "..")
                  .toArray(String[]::new);
          rules.add(
              classes()
                  .that()
                  .resideInAPackage(API + "." + pkg + "..")
                  .should()
                  .onlyDependOnClassesThat(
                      not(resideInAPackage(API + "..")).or(resideInAnyPackage(mayUse)))
                  .as(pkg + " uses only " + (allowed.isEmpty() ? "itself" : allowed)));
        });
    CompositeArchRule.of(rules).check(classes);
  }

  @Test
  void theCoreKnowsNoEdge() {
    noClasses()
        .that()
        .resideInAPackage(API + ".lifecycle..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(EDGES.stream().map(p -> API + "." + p + "..").toArray(String[]::new))
        .as("lifecycle imports no edge package")
        .check(classes);
  }

  @Test
  void packagesHaveNoCycles() {
    slices().matching(API + ".(*)..").should().beFreeOfCycles().check(classes);
  }
}
