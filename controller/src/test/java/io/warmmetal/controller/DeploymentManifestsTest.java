package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.karpenter.GoDuration;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The manifests in {@code deploy/} stay true to the code: the CRDs, the controller's settings, the
 * example.
 */
class DeploymentManifestsTest {
  private static final Path DEPLOY = Path.of("..", "deploy");

  private static List<HasMetadata> read(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      Object parsed = Serialization.unmarshal(in);
      return parsed instanceof List<?> docs
          ? docs.stream().map(HasMetadata.class::cast).toList()
          : parsed instanceof KubernetesList list ? list.getItems() : List.of((HasMetadata) parsed);
    }
  }

  @Test
  void theShippedNodeClassCrdIsTheOneGeneratedFromTheModel() throws IOException {
    Path generated = Path.of("target", "classes", "META-INF", "fabric8");
    try (Stream<Path> crds = Files.list(generated)) {
      List<Path> files = crds.filter(p -> p.toString().endsWith(".yml")).sorted().toList();
      assertThat(files).hasSize(1); // NodePool and NodeClaim are Karpenter's own CRDs
      for (Path crd : files) {
        assertThat(DEPLOY.resolve("crds").resolve(crd.getFileName()))
            .as("deploy/crds/%s is stale: copy it from %s", crd.getFileName(), crd)
            .hasSameTextualContentAs(crd);
      }
    }
  }

  @Test
  void theDeploymentSetsOnlySettingsTheControllerReads() throws IOException {
    Deployment deployment =
        read(DEPLOY.resolve("controller.yaml")).stream()
            .filter(Deployment.class::isInstance)
            .map(Deployment.class::cast)
            .findFirst()
            .orElseThrow();
    List<String> known =
        Stream.concat(
                Arrays.stream(Main.class.getDeclaredFields())
                    .map(f -> f.getAnnotation(CommandLine.Option.class))
                    .filter(o -> o != null)
                    .map(CommandLine.Option::defaultValue)
                    .filter(d -> d.startsWith("${env:"))
                    .map(d -> d.substring(6, d.indexOf(":-"))),
                Stream.of(Leadership.POD_NAME_VARIABLE))
            .toList();
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getEnv())
        .extracting(EnvVar::getName)
        .isNotEmpty()
        .allMatch(known::contains);
    for (EnvVar env : container.getEnv()) {
      if (env.getName().endsWith("_IDLE") || env.getName().endsWith("_MAX")) {
        assertThat(Duration.parse(env.getValue())).isPositive(); // ISO-8601, as the flag wants
      }
    }
    String[] args = container.getArgs().toArray(String[]::new);
    new CommandLine(new Main()).parseArgs(args); // the flags exist
  }

  @Test
  void theExampleNodePoolAndNodeClassReadIntoTheModel() throws IOException {
    String text = Files.readString(DEPLOY.resolve("examples").resolve("nodepool.yaml"));
    List<String> docs =
        Arrays.stream(text.split("(?m)^---$")).filter(d -> d.contains("kind:")).toList();
    NodePool pool =
        Serialization.unmarshal(
            docs.stream().filter(d -> d.contains("kind: NodePool")).findFirst().orElseThrow(),
            NodePool.class);
    WarmMetalNodeClass nodeClass =
        Serialization.unmarshal(
            docs.stream()
                .filter(d -> d.contains("kind: WarmMetalNodeClass"))
                .findFirst()
                .orElseThrow(),
            WarmMetalNodeClass.class);
    assertThat(pool.getSpec().template.spec.nodeClassRef.name)
        .isEqualTo(nodeClass.getMetadata().getName());
    assertThat(pool.getSpec().template.spec.requirements).hasSize(2);
    assertThat(pool.getSpec().disruption.budgets).hasSize(2);
    assertThat(GoDuration.parse(pool.getSpec().disruption.consolidateAfter, null)).hasMinutes(1);
    assertThat(GoDuration.parse(nodeClass.getSpec().registrationTimeout, null)).hasMinutes(2);
    Matcher secret = Pattern.compile("name: (\\S+)\\n\\s+namespace: (\\S+)").matcher(docs.get(0));
    assertThat(secret.find()).isTrue();
    assertThat(nodeClass.getSpec().credentialsSecretRef.name).isEqualTo(secret.group(1));
    assertThat(nodeClass.getSpec().credentialsSecretRef.namespace).isEqualTo(secret.group(2));
  }
}
