package io.warmmetal.controller;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The controller's dependency direction, package by package — Karpenter's shape: the API types
 * ({@code karpenter}) and the one seam to the fleet ({@code cloudprovider}, as upstream's) at the
 * bottom, its WarmMetal implementation ({@code instances}) known only to the composition root;
 * scheduling a pure function of its inputs; cluster state over them; the per-concern controllers on
 * top, disruption using the provisioner's simulation and termination as upstream's does; the
 * composition root ({@code Controller}, {@code Main}) wiring everything, used by nothing.
 * docs/architecture.md shows the same table.
 */
class ArchitectureTest {
  private static final String ROOT = "io.warmmetal.controller";

  /**
   * Each package, and the packages of this module it may use (besides itself and anything outside
   * the module).
   */
  static final Map<String, Set<String>> ALLOWED = new LinkedHashMap<>();

  static {
    ALLOWED.put("karpenter", Set.of());
    // The cluster-state gauges read pods' requests as the scheduler does; the cloud provider's
    // calls are timed by a decorator of its seam.
    ALLOWED.put(
        "metrics", Set.of("karpenter", "scheduling", "state", "cloudprovider", "nodeclass"));
    ALLOWED.put("queue", Set.of());
    ALLOWED.put("scheduling", Set.of("karpenter"));
    ALLOWED.put("events", Set.of("karpenter"));
    ALLOWED.put("nodeclass", Set.of("karpenter"));
    ALLOWED.put("cloudprovider", Set.of("karpenter", "nodeclass", "scheduling"));
    ALLOWED.put("claims", Set.of("karpenter", "nodeclass"));
    ALLOWED.put("state", Set.of("karpenter", "cloudprovider", "nodeclass", "scheduling"));
    ALLOWED.put(
        "instances", Set.of("karpenter", "cloudprovider", "nodeclass", "scheduling", "state"));
    ALLOWED.put("pools", Set.of("karpenter", "metrics", "nodeclass", "state"));
    ALLOWED.put(
        "provisioning",
        Set.of(
            "karpenter",
            "claims",
            "cloudprovider",
            "metrics",
            "events",
            "nodeclass",
            "pools",
            "scheduling",
            "state"));
    ALLOWED.put("buffers", Set.of("karpenter", "events", "scheduling", "state"));
    // Registration puts termination's finalizer on the Node.
    ALLOWED.put(
        "registration", Set.of("karpenter", "claims", "metrics", "pools", "state", "termination"));
    // Node repair, as upstream's node.health: the provider's policies, the claim deleted, told and
    // counted as upstream does.
    ALLOWED.put("health", Set.of("karpenter", "claims", "cloudprovider", "events", "metrics"));
    // Each claim's lifecycle also asks node repair about its Node.
    ALLOWED.put(
        "lifecycle",
        Set.of(
            "karpenter",
            "claims",
            "events",
            "health",
            "nodeclass",
            "pools",
            "provisioning",
            "queue",
            "registration",
            "state",
            "termination"));
    ALLOWED.put("standby", Set.of("karpenter", "cloudprovider", "events", "nodeclass"));
    // NodeOverlays change the instance types of the seam's answers, as upstream's decorator of it.
    ALLOWED.put("nodeoverlay", Set.of("karpenter", "cloudprovider", "nodeclass", "scheduling"));
    ALLOWED.put(
        "termination",
        Set.of(
            "karpenter",
            "claims",
            "cloudprovider",
            "metrics",
            "events",
            "nodeclass",
            "scheduling",
            "state"));
    ALLOWED.put(
        "disruption",
        Set.of(
            "karpenter",
            "claims",
            "metrics",
            "events",
            "nodeclass",
            "provisioning",
            "scheduling",
            "state",
            "termination"));
  }

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(ROOT);
  }

  private static String[] packages(Stream<String> names) {
    return names.map(p -> ROOT + "." + p + "..").toArray(String[]::new);
  }

  @Test
  void everyPackageIsInTheTable() {
    classes()
        .should()
        .resideInAnyPackage(
            Stream.concat(Stream.of(ROOT), Stream.of(packages(ALLOWED.keySet().stream())))
                .toArray(String[]::new))
        .as("every package of the controller has a row in the table of allowed dependencies")
        .check(classes);
  }

  @Test
  void eachPackageUsesOnlyWhatTheTableAllows() {
    List<ArchRule> rules = new ArrayList<>();
    ALLOWED.forEach(
        (pkg, allowed) ->
            rules.add(
                classes()
                    .that()
                    .resideInAPackage(ROOT + "." + pkg + "..")
                    .should()
                    .onlyDependOnClassesThat(
                        not(resideInAPackage(ROOT + ".."))
                            .or(
                                resideInAnyPackage(
                                    packages(Stream.concat(Stream.of(pkg), allowed.stream())))))
                    .as(pkg + " uses only " + (allowed.isEmpty() ? "itself" : allowed))));
    CompositeArchRule.of(rules).check(classes);
  }

  @Test
  void schedulingIsAPureFunctionOfItsInputs() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + ".scheduling..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fabric8.kubernetes.client..", "java.net..", "java.net.http..", "io.vertx..")
        .as("scheduling reads no cluster and calls no API: it decides over what it is given")
        .check(classes);
  }

  @Test
  void onlyTheInstancesSeamTalksToTheFleet() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ROOT + ".instances..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("java.net.http..", "io.warmmetal.api..")
        .as(
            "the WarmMetal API is reached only by the instances package, the cloud provider's"
                + " implementation")
        .check(classes);
  }

  @Test
  void onlyTheCompositionRootKnowsTheImplementation() {
    noClasses()
        .that()
        .resideOutsideOfPackages(ROOT + ".instances..")
        .and()
        .resideOutsideOfPackage(ROOT)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(ROOT + ".instances..")
        .as("controllers use the cloudprovider seam; only Controller wires its implementation")
        .check(classes);
  }

  @Test
  void nodeClaimsAreWrittenByTheirOneWriterOnly() throws Exception {
    // What the informer-and-overlay view reads back must be every write: none goes around it.
    try (var sources = Files.walk(Path.of("src/main/java/io/warmmetal/controller"))) {
      assertThat(
              sources
                  .filter(p -> p.toString().endsWith(".java"))
                  .filter(p -> !p.toString().contains("/claims/"))
                  .filter(
                      p -> {
                        try {
                          return Files.readString(p)
                              .replace("resources(NodeClaim.class).runnableInformer", "")
                              .contains("resources(NodeClaim.class)");
                        } catch (IOException e) {
                          throw new UncheckedIOException(e);
                        }
                      })
                  .toList())
          .as("NodeClaims are written through claims.NodeClaimWriter")
          .isEmpty();
    }
  }

  @Test
  void packagesHaveNoCycles() {
    slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(classes);
  }
}
