package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.crypto.CertificateAuthority;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Helm chart ({@code deploy/helm/warmmetal}) through the real Helm (3.21, helm-java's native
 * library from Maven Central: no helm binary needed): it lints, refuses to render without the API's
 * secrets, and what it renders is {@code deploy/}'s — with the release named warmmetal in
 * warmmetal-system, every resource of deploy/api.yaml and deploy/controller.yaml has its twin with
 * the same RBAC rules, pod spec, Service ports and Secret keys; its crds/ and monitoring/ are
 * deploy/'s files byte for byte. Non-default values (existing Secrets, monitoring on, another
 * release and namespace, the controller alone) render what they say. Its README's values table is
 * values.yaml's, comments and defaults. Its kubeVersion is the e2e tier's Kubernetes minor and Helm
 * holds to it; its images have no default repository (none is published); its README's CA, {@code
 * helm template} and {@code helm lint} commands work.
 */
class HelmChartTest {
  private static final Path DEPLOY = Path.of("..", "deploy");
  private static final Path CHART = DEPLOY.resolve("helm").resolve("warmmetal");

  /**
   * The Kubernetes the e2e tier runs, the one the chart is tested on: {@code ControlPlane.VERSION},
   * which ControlPlaneTest checks against the real API server (read from its source: this module
   * cannot depend on e2e).
   */
  static final String TESTED_KUBERNETES = testedKubernetes();

  private static String caCert;
  private static String caKey;

  @BeforeAll
  static void aRealCa() throws Exception {
    Path dir = Files.createTempDirectory("helm-ca");
    CertificateAuthority.ensure(
        dir.resolve("ca.crt"), dir.resolve("ca.key")); // what init-ca writes
    caCert = Files.readString(dir.resolve("ca.crt"));
    caKey = Files.readString(dir.resolve("ca.key"));
  }

  private static Helm helm() {
    try {
      return new Helm(CHART);
    } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
      throw new AssertionError(
          "Helm's native library (com.marcnuri.helm-java:linux-amd64) did not load; the chart "
              + "tests need Linux on amd64",
          e);
    }
  }

  private static String testedKubernetes() {
    try {
      String source =
          Files.readString(
              Path.of(
                  "..",
                  "e2e",
                  "src",
                  "test",
                  "java",
                  "io",
                  "warmmetal",
                  "e2e",
                  "cluster",
                  "ControlPlane.java"));
      Matcher version =
          Pattern.compile("String VERSION = \"v(\\d+\\.\\d+\\.\\d+)\";").matcher(source);
      if (!version.find()) {
        throw new AssertionError("no VERSION = \"vX.Y.Z\" in e2e's ControlPlane.java");
      }
      return version.group(1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The chart rendered for the tested Kubernetes, with no value set. */
  private static TemplateCommand bare(String release, String namespace) {
    return helm()
        .template()
        .withName(release)
        .withNamespace(namespace)
        .withKubeVersion(TESTED_KUBERNETES);
  }

  /** As {@link #bare}, with the images deploy/ names (pushed to the placeholder registry). */
  private static TemplateCommand template(String release, String namespace) {
    return bare(release, namespace)
        .set("api.image.repository", imageRepository("api"))
        .set("controller.image.repository", imageRepository("controller"));
  }

  private static String imageRepository(String component) {
    return DeploymentFilesTest.PLACEHOLDER_REGISTRY + "/warmmetal-" + component;
  }

  /** The values a real install needs at least: the API's database and secrets, and its CA. */
  private static TemplateCommand withSecrets(TemplateCommand command) {
    return command
        .set("api.database.url", "postgresql://warmmetal:pw@postgres.example:5432/warmmetal")
        .set("api.adminToken", "helm-admin-token-0123456789")
        .set("api.secretKey", Base64.getEncoder().encodeToString(new byte[32]))
        .set("api.ca.cert", caCert)
        .set("api.ca.key", caKey);
  }

  private static List<HasMetadata> parse(String yaml) {
    Object parsed = Serialization.unmarshal(yaml);
    return parsed instanceof List<?> docs
        ? docs.stream().filter(d -> d != null).map(HasMetadata.class::cast).toList()
        : parsed instanceof KubernetesList list ? list.getItems() : List.of((HasMetadata) parsed);
  }

  private static List<HasMetadata> deployed(String file) throws Exception {
    try (InputStream in = Files.newInputStream(DEPLOY.resolve(file))) {
      Object parsed = Serialization.unmarshal(in);
      return parsed instanceof List<?> docs
          ? docs.stream().map(HasMetadata.class::cast).toList()
          : ((KubernetesList) parsed).getItems();
    }
  }

  private static <T extends HasMetadata> T find(
      List<HasMetadata> docs, Class<T> kind, String name) {
    return docs.stream()
        .filter(kind::isInstance)
        .map(kind::cast)
        .filter(d -> d.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no " + kind.getSimpleName() + " " + name + " in " + names(docs)));
  }

  private static <T extends HasMetadata> List<T> all(List<HasMetadata> docs, Class<T> kind) {
    return docs.stream().filter(kind::isInstance).map(kind::cast).toList();
  }

  private static List<String> names(List<HasMetadata> docs) {
    return docs.stream()
        .map(
            d ->
                d.getKind()
                    + "/"
                    + d.getMetadata().getNamespace()
                    + "/"
                    + d.getMetadata().getName())
        .sorted()
        .toList();
  }

  private static Map<String, String> secretData(Secret secret) {
    Map<String, String> data = new HashMap<>();
    if (secret.getStringData() != null) {
      data.putAll(secret.getStringData());
    }
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (k, v) ->
                  data.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
    }
    return data;
  }

  /** A pod spec as deploy/ writes it: the chart also sets each container's pull policy. */
  private static PodSpec comparable(Deployment deployment) {
    PodSpec spec = Serialization.clone(deployment.getSpec().getTemplate().getSpec());
    spec.getContainers().forEach(c -> c.setImagePullPolicy(null));
    return spec;
  }

  @Test
  void itLintsStrictly() {
    LintResult lint = helm().lint().strict().call();
    assertThat(lint.isFailed()).as("%s", lint.getMessages()).isFalse();
    assertThat(lint.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
  }

  @Test
  void withItsDefaultValuesItRefusesAndSaysWhichSecretIsMissing() {
    assertThatThrownBy(() -> template("warmmetal", "warmmetal-system").call())
        .hasMessageContaining("api.database.url is required unless api.existingSecret");
    assertThatThrownBy(
            () ->
                template("warmmetal", "warmmetal-system").set("api.existingSecret", "mine").call())
        .hasMessageContaining("api.ca.cert is required unless api.ca.existingSecret");
    assertThatThrownBy(
            () ->
                withSecrets(template("warmmetal", "warmmetal-system"))
                    .set("api.adminToken", "short")
                    .call())
        .hasMessageContaining("api.adminToken must be 16 characters or more");
  }

  @Test
  void releasedAsWarmmetalItRendersWhatDeployHas() throws Exception {
    List<HasMetadata> chart = parse(withSecrets(template("warmmetal", "warmmetal-system")).call());
    assertThat(chart)
        .extracting(HasMetadata::getKind)
        .containsExactlyInAnyOrder(
            "Secret",
            "Secret",
            "ServiceAccount",
            "ServiceAccount",
            "Deployment",
            "Deployment",
            "Service",
            "Service",
            "Service",
            "Service",
            "PodDisruptionBudget",
            "PodDisruptionBudget",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "Role",
            "RoleBinding",
            "RoleBinding"); // no ServiceMonitor, dashboards or rules by default

    List<HasMetadata> deploy = new ArrayList<>(deployed("api.yaml"));
    deploy.addAll(deployed("controller.yaml"));
    for (HasMetadata theirs : deploy) {
      if (theirs.getKind().equals("Namespace")) {
        continue; // helm install --create-namespace
      }
      HasMetadata ours = find(chart, theirs.getClass(), theirs.getMetadata().getName());
      String what = theirs.getKind() + " " + theirs.getMetadata().getName();
      assertThat(ours.getMetadata().getNamespace())
          .as(what)
          .isEqualTo(theirs.getMetadata().getNamespace());
      if (theirs instanceof ClusterRole role) {
        assertThat(((ClusterRole) ours).getRules()).as(what).isEqualTo(role.getRules());
      } else if (theirs instanceof Role role) {
        assertThat(((Role) ours).getRules()).as(what).isEqualTo(role.getRules());
      } else if (theirs instanceof ClusterRoleBinding binding) {
        assertThat(((ClusterRoleBinding) ours).getRoleRef())
            .as(what)
            .isEqualTo(binding.getRoleRef());
        assertThat(((ClusterRoleBinding) ours).getSubjects())
            .as(what)
            .isEqualTo(binding.getSubjects());
      } else if (theirs instanceof RoleBinding binding) {
        assertThat(((RoleBinding) ours).getRoleRef()).as(what).isEqualTo(binding.getRoleRef());
        assertThat(((RoleBinding) ours).getSubjects()).as(what).isEqualTo(binding.getSubjects());
      } else if (theirs instanceof Deployment deployment) {
        Deployment mine = (Deployment) ours;
        assertThat(mine.getSpec().getReplicas())
            .as(what)
            .isEqualTo(deployment.getSpec().getReplicas());
        // The whole pod: images, args, env, ports, probes, resources, security contexts, volumes,
        // tolerations.
        assertThat(comparable(mine)).as(what).isEqualTo(comparable(deployment));
        assertThat(mine.getSpec().getTemplate().getMetadata().getAnnotations())
            .as(what)
            .isEqualTo(deployment.getSpec().getTemplate().getMetadata().getAnnotations());
      } else if (theirs instanceof Service service) {
        assertThat(((Service) ours).getSpec().getType())
            .as(what) // unset is ClusterIP
            .isEqualTo(Optional.ofNullable(service.getSpec().getType()).orElse("ClusterIP"));
        assertThat(((Service) ours).getSpec().getPorts())
            .as(what)
            .isEqualTo(service.getSpec().getPorts());
      } else if (theirs instanceof Secret secret) {
        assertThat(secretData((Secret) ours).keySet())
            .as(what)
            .isEqualTo(secretData(secret).keySet());
      } else if (theirs instanceof ServiceAccount account) {
        assertThat(((ServiceAccount) ours).getAutomountServiceAccountToken())
            .as(what)
            .isEqualTo(account.getAutomountServiceAccountToken());
      } else {
        throw new AssertionError("no comparison for " + what);
      }
    }
    // The CA Secret deploy/ leaves to kubectl: the chart's holds the CA the API loads and issues
    // from.
    Map<String, String> ca = secretData(find(chart, Secret.class, "warmmetal-ca"));
    Path dir = Files.createTempDirectory("helm-ca-out");
    Files.writeString(dir.resolve("ca.crt"), ca.get("ca.crt"));
    Files.writeString(dir.resolve("ca.key"), ca.get("ca.key"));
    CertificateAuthority loaded =
        CertificateAuthority.loadOrCreate(
            dir, Optional.of(dir.resolve("ca.crt")), Optional.of(dir.resolve("ca.key")));
    assertThat(
            loaded
                .issueServer(List.of("warmmetal-agents.example.com"), Duration.ofDays(1))
                .certificate())
        .isNotNull();
    wiredTogether(chart);
  }

  /**
   * What the API's Deployment sets is what ApiConfig reads; Services and budgets select the pods
   * they are for.
   */
  private static void wiredTogether(List<HasMetadata> chart) {
    for (Deployment deployment : all(chart, Deployment.class)) {
      Map<String, String> pods = deployment.getSpec().getTemplate().getMetadata().getLabels();
      assertThat(pods).containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
      Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
      if (container.getName().equals("api")) {
        Map<String, String> env = new HashMap<>();
        String secretName = container.getEnvFrom().get(0).getSecretRef().getName();
        all(chart, Secret.class).stream()
            .filter(s -> s.getMetadata().getName().equals(secretName))
            .findFirst()
            .ifPresent(s -> env.putAll(secretData(s)));
        container.getEnv().forEach(e -> env.put(e.getName(), e.getValue()));
        Set<String> known = new TreeSet<>(ApiConfig.variables());
        known.addAll(Main.LOGGING_VARIABLES);
        assertThat(env.keySet()).isSubsetOf(known);
        ApiConfig config = ApiConfig.fromEnv(env);
        assertThat(container.getPorts())
            .extracting(p -> p.getContainerPort())
            .containsExactlyInAnyOrder(config.httpPort(), config.agentPort(), config.metricsPort());
      }
    }
    for (Service service : all(chart, Service.class)) {
      assertThat(all(chart, Deployment.class))
          .as("pods for %s", service.getMetadata().getName())
          .anySatisfy(
              d -> {
                assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
                    .containsAllEntriesOf(service.getSpec().getSelector());
                assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
                    .extracting(p -> p.getName())
                    .containsAll(
                        service.getSpec().getPorts().stream()
                            .map(p -> p.getTargetPort().getStrVal())
                            .toList());
              });
    }
    List<HasMetadata> budgets =
        chart.stream().filter(d -> d.getKind().equals("PodDisruptionBudget")).toList();
    assertThat(budgets).as("a budget per Deployment").hasSameSizeAs(all(chart, Deployment.class));
    for (HasMetadata budget : budgets) {
      Map<String, String> selected = selectorOf(budget);
      assertThat(all(chart, Deployment.class))
          .anySatisfy(
              d ->
                  assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
                      .containsAllEntriesOf(selected));
    }
  }

  /** A PodDisruptionBudget's matchLabels, whichever policy API it is. */
  @SuppressWarnings("unchecked")
  private static Map<String, String> selectorOf(HasMetadata budget) {
    Map<String, Object> spec =
        (Map<String, Object>)
            Serialization.jsonMapper().convertValue(budget, Map.class).get("spec");
    return (Map<String, String>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
  }

  @Test
  void itsCrdsAndMonitoringFilesAreDeploysByteForByte() throws Exception {
    for (String dir : List.of("crds", "monitoring")) {
      Path ours = CHART.resolve(dir);
      Path theirs = DEPLOY.resolve(dir);
      assertThat(listing(ours))
          .as("%s: copy deploy/%s/ into the chart", ours, dir)
          .isEqualTo(listing(theirs));
      for (String file : listing(theirs)) {
        assertThat(ours.resolve(file))
            .as("%s is stale: copy %s over it", ours.resolve(file), theirs.resolve(file))
            .hasSameBinaryContentAs(theirs.resolve(file));
      }
    }
  }

  private static List<String> listing(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void existingSecretsMonitoringAndAnotherReleaseRenderWhatTheySay() throws Exception {
    List<HasMetadata> chart =
        parse(
            template("edge", "infra")
                .set("api.existingSecret", "edge-api-settings")
                .set("api.ca.existingSecret", "edge-ca")
                .set("api.env.WARMMETAL_DB_POOL_SIZE", "64")
                .set("controller.launchParallelism", "8")
                .set("serviceMonitor.enabled", true)
                .set("serviceMonitor.labels.release", "prometheus")
                .set("dashboards.enabled", true)
                .set("prometheusRule.enabled", true)
                .call());
    assertThat(all(chart, Secret.class)).isEmpty(); // both come from Secrets that exist
    Deployment api = find(chart, Deployment.class, "edge-warmmetal-api");
    PodSpec pod = api.getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers().get(0).getEnvFrom().get(0).getSecretRef().getName())
        .isEqualTo("edge-api-settings");
    assertThat(pod.getVolumes())
        .anySatisfy(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("edge-ca"));
    assertThat(pod.getContainers().get(0).getEnv())
        .contains(new EnvVar("WARMMETAL_DB_POOL_SIZE", "64", null));
    Deployment controller = find(chart, Deployment.class, "edge-warmmetal-controller");
    Container container = controller.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getArgs())
        .containsExactly("--namespace", "infra"); // its Lease, where its Role grants it
    assertThat(container.getEnv())
        .contains(new EnvVar("WARMMETAL_CONTROLLER_LAUNCH_PARALLELISM", "8", null));
    assertThat(find(chart, Role.class, "edge-warmmetal-controller").getMetadata().getNamespace())
        .isEqualTo("infra");
    assertThat(
            find(chart, Role.class, "edge-warmmetal-controller-bootstrap-tokens")
                .getMetadata()
                .getNamespace())
        .isEqualTo("kube-system");
    for (RoleBinding binding : all(chart, RoleBinding.class)) {
      assertThat(binding.getSubjects())
          .singleElement()
          .satisfies(
              s -> {
                assertThat(s.getName()).isEqualTo("edge-warmmetal-controller");
                assertThat(s.getNamespace()).isEqualTo("infra");
              });
    }
    wiredTogether(chart);

    // A ServiceMonitor per component, selecting a Service of the release with the port it names.
    List<GenericKubernetesResource> monitors =
        all(chart, GenericKubernetesResource.class).stream()
            .filter(r -> r.getKind().equals("ServiceMonitor"))
            .toList();
    assertThat(monitors).hasSize(2);
    List<Service> scraped = new ArrayList<>();
    for (GenericKubernetesResource monitor : monitors) {
      assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
      assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
      Map<String, Object> spec =
          (Map<String, Object>) monitor.getAdditionalProperties().get("spec");
      Map<String, String> selector =
          (Map<String, String>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
      String port = (String) ((List<Map<String, Object>>) spec.get("endpoints")).get(0).get("port");
      List<Service> selected =
          all(chart, Service.class).stream()
              .filter(s -> s.getMetadata().getLabels().entrySet().containsAll(selector.entrySet()))
              .toList();
      assertThat(selected)
          .as("Services %s selects", monitor.getMetadata().getName())
          .singleElement()
          .satisfies(
              s -> assertThat(s.getSpec().getPorts()).extracting(p -> p.getName()).contains(port));
      scraped.add(selected.get(0));
    }
    // The API's is its management port, never the API's own; the alerts' `up` jobs (a
    // ServiceMonitor's job is the
    // Service's name) are these Services.
    Service apiMetrics = find(chart, Service.class, "edge-warmmetal-api-metrics");
    assertThat(scraped)
        .contains(apiMetrics)
        .doesNotContain(find(chart, Service.class, "edge-warmmetal-api"));
    assertThat(apiMetrics.getSpec().getType()).isEqualTo("ClusterIP");
    Matcher job =
        Pattern.compile("up\\{job=~\"([^\"]+)\"}")
            .matcher(read("monitoring/warmmetal-alerts.yaml"));
    List<String> jobs = new ArrayList<>();
    while (job.find()) {
      jobs.add(job.group(1));
    }
    assertThat(jobs)
        .isNotEmpty()
        .allSatisfy(
            regex ->
                assertThat(scraped)
                    .as("a Service for job=~%s", regex)
                    .anySatisfy(
                        service -> assertThat(service.getMetadata().getName()).matches(regex)));
    // The dashboards, labelled for Grafana's sidecar, and the alerts as a PrometheusRule:
    // deploy/monitoring's.
    List<ConfigMap> dashboards = all(chart, ConfigMap.class);
    assertThat(dashboards)
        .hasSize(2)
        .allSatisfy(
            c -> {
              assertThat(c.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
              c.getData()
                  .forEach(
                      (file, json) ->
                          assertThat(json.strip()).isEqualTo(read("monitoring/" + file).strip()));
            });
    GenericKubernetesResource rule =
        all(chart, GenericKubernetesResource.class).stream()
            .filter(r -> r.getKind().equals("PrometheusRule"))
            .findFirst()
            .orElseThrow();
    Map<String, Object> alerts = new Yaml().load(read("monitoring/warmmetal-alerts.yaml"));
    assertThat(
            Serialization.jsonMapper()
                .convertValue(rule.getAdditionalProperties().get("spec"), Map.class))
        .isEqualTo(Serialization.jsonMapper().convertValue(alerts, Map.class));
  }

  @Test
  void theControllerAloneNeedsNoApiSecretsNorImage() {
    List<HasMetadata> chart =
        parse(
            bare("warmmetal", "warmmetal-system")
                .set("api.enabled", false)
                .set("controller.image.repository", imageRepository("controller"))
                .call());
    assertThat(names(chart))
        .noneMatch(n -> n.contains("-api") || n.contains("-agents") || n.contains("-ca"));
    assertThat(all(chart, Deployment.class))
        .extracting(d -> d.getMetadata().getName())
        .containsExactly("warmmetal-controller");
  }

  private static String read(String deployFile) {
    try {
      return Files.readString(DEPLOY.resolve(deployFile));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * values.yaml's leaves (a key with its value on its line): each one's default and the comment
   * lines right above it, joined (empty if none).
   */
  static Map<String, String[]> valuesLeaves() throws Exception {
    Map<String, String[]> leaves = new LinkedHashMap<>();
    Deque<Object[]> parents = new ArrayDeque<>(); // {indent, key}
    String comment = "";
    Pattern key = Pattern.compile("^( *)([A-Za-z][\\w.-]*):(.*)$");
    for (String line : Files.readAllLines(CHART.resolve("values.yaml"))) {
      Matcher m = key.matcher(line);
      if (m.matches()) {
        int indent = m.group(1).length();
        while (!parents.isEmpty() && (int) parents.peek()[0] >= indent) {
          parents.pop();
        }
        List<String> path = new ArrayList<>();
        parents.descendingIterator().forEachRemaining(p -> path.add((String) p[1]));
        path.add(m.group(2));
        String value = m.group(3).strip();
        if (value.isEmpty()) {
          parents.push(new Object[] {indent, m.group(2)});
        } else {
          leaves.put(String.join(".", path), new String[] {value, comment});
        }
      }
      comment = line.strip().startsWith("#") ? (comment + " " + line.strip()).strip() : "";
    }
    return leaves;
  }

  @Test
  void everyValueIsCommentedAndInTheReadmeTableWithItsDefault() throws Exception {
    Map<String, String[]> leaves = valuesLeaves();
    assertThat(leaves).hasSizeGreaterThan(50);
    leaves.forEach(
        (path, v) ->
            assertThat(v[1]).as("a comment right above %s in values.yaml", path).startsWith("#"));

    Map<String, String> table = new LinkedHashMap<>();
    Matcher row =
        Pattern.compile("(?m)^\\| `([^`]+)` \\| `([^`]*)` \\| (.+) \\|$")
            .matcher(Files.readString(CHART.resolve("README.md")));
    while (row.find()) {
      assertThat(leaves).as("values.yaml").containsKey(row.group(1));
      assertThat(row.group(3).strip())
          .as("meaning of %s: its comment in values.yaml", row.group(1))
          .isEqualTo(leaves.get(row.group(1))[1].replaceAll("\\s*#\\s*", " ").strip());
      table.put(row.group(1), row.group(2));
    }
    assertThat(table.keySet())
        .as("the README's values table")
        .containsExactlyElementsOf(leaves.keySet());
    leaves.forEach(
        (path, v) ->
            assertThat(table.get(path))
                .as("default of %s in the README", path)
                .isEqualTo(v[0].replaceAll("\\s+#.*$", "")));

    // And values.yaml is what Helm reads: every leaf is a value of the parsed file.
    Map<String, Object> parsed = new Yaml().load(Files.readString(CHART.resolve("values.yaml")));
    UnaryOperator<String> lookup =
        path -> {
          Object at = parsed;
          for (String part : path.split("\\.")) {
            assertThat(at).as(path).isInstanceOf(Map.class);
            at = ((Map<?, ?>) at).get(part);
          }
          return String.valueOf(at);
        };
    leaves.keySet().forEach(path -> assertThat(lookup.apply(path)).as(path).isNotEqualTo("null"));
  }

  @Test
  void itsKubeVersionStartsAtTheTestedMinor() throws Exception {
    String[] tested = TESTED_KUBERNETES.split("\\.");
    int major = Integer.parseInt(tested[0]);
    int minor = Integer.parseInt(tested[1]);
    String range = ">=%d.%d.0-0".formatted(major, minor);
    Map<String, Object> chart = new Yaml().load(Files.readString(CHART.resolve("Chart.yaml")));
    assertThat(chart.get("kubeVersion"))
        .as("Chart.yaml's kubeVersion: from the e2e tier's minor version")
        .isEqualTo(range);
    String older = major + "." + (minor - 1) + ".0";
    assertThatThrownBy(
            () ->
                withSecrets(template("warmmetal", "warmmetal-system"))
                    .withKubeVersion(older)
                    .call())
        .as("Kubernetes %s", older)
        .hasMessageContaining("incompatible with Kubernetes v" + older);
    // The README states it, and its helm template command renders for the tested version.
    assertThat(Files.readString(CHART.resolve("README.md")))
        .contains("`kubeVersion: \"" + range + "\"`")
        .contains("--kube-version " + TESTED_KUBERNETES);
  }

  @Test
  void itsDisruptionBudgetsAreThePolicyApiTheClusterServes() throws Exception {
    assertThat(budgetApis(withSecrets(template("warmmetal", "warmmetal-system")).call()))
        .as("on the tested %s", TESTED_KUBERNETES)
        .containsExactly("policy/v1beta1", "policy/v1beta1");
    // A cluster that serves only policy/v1 (v1beta1 went in 1.25).
    String rendered =
        withSecrets(template("warmmetal", "warmmetal-system").withKubeVersion("1.25.0")).call();
    assertThat(budgetApis(rendered)).containsExactly("policy/v1", "policy/v1");
    wiredTogether(parse(rendered));
  }

  private static List<String> budgetApis(String rendered) {
    return parse(rendered).stream()
        .filter(d -> d.getKind().equals("PodDisruptionBudget"))
        .map(HasMetadata::getApiVersion)
        .toList();
  }

  @Test
  void byDefaultItRunsTheImagesTheBuildMakes() throws Exception {
    List<HasMetadata> chart = parse(withSecrets(bare("warmmetal", "warmmetal-system")).call());
    assertThat(all(chart, Deployment.class))
        .extracting(d -> d.getSpec().getTemplate().getSpec().getContainers().get(0))
        .allSatisfy(c -> assertThat(c.getImagePullPolicy()).isEqualTo("IfNotPresent"))
        .extracting(Container::getImage)
        .containsExactlyInAnyOrder(
            DeploymentFilesTest.builtImage("api"), DeploymentFilesTest.builtImage("controller"));
    // values.yaml says where the image comes from; no published registry is named anywhere.
    Map<String, String[]> leaves = valuesLeaves();
    for (String component : List.of("api", "controller")) {
      String[] repository = leaves.get(component + ".image.repository");
      assertThat(DeploymentFilesTest.builtImage(component)).startsWith(repository[0] + ":");
      assertThat(repository[1])
          .contains("no public image exists")
          .contains("mvn -B package -Pimages: " + component + "/target/jib-image.tar");
    }
    assertThat(Files.readString(CHART.resolve("values.yaml"))).doesNotContain("ghcr.io");
    try (Stream<Path> templates = Files.list(CHART.resolve("templates"))) {
      for (Path template : templates.toList()) {
        assertThat(Files.readString(template)).as("%s", template).doesNotContain("ghcr.io");
      }
    }
    // Emptied, it says what to name.
    assertThatThrownBy(
            () ->
                withSecrets(bare("warmmetal", "warmmetal-system"))
                    .set("api.image.repository", "")
                    .call())
        .hasMessageContaining("api.image.repository is required: the image the build makes");
  }

  @Test
  void theReadmesCaCommandsMakeTheSecretTheChartMounts() throws Exception {
    String readme = Files.readString(CHART.resolve("README.md"));
    Map.Entry<String, Set<String>> documented = DeploymentFilesTest.documentedCaSecret(readme);
    assertThat(readme).contains("--set api.ca.existingSecret=" + documented.getKey());
    List<HasMetadata> chart =
        parse(
            template("warmmetal", "warmmetal-system")
                .set("api.existingSecret", "warmmetal-api")
                .set("api.ca.existingSecret", documented.getKey())
                .call());
    PodSpec pod = find(chart, Deployment.class, "warmmetal-api").getSpec().getTemplate().getSpec();
    String volume =
        pod.getVolumes().stream()
            .filter(
                v ->
                    v.getSecret() != null
                        && v.getSecret().getSecretName().equals(documented.getKey()))
            .findFirst()
            .orElseThrow()
            .getName();
    String mountPath =
        pod.getContainers().get(0).getVolumeMounts().stream()
            .filter(m -> m.getName().equals(volume))
            .findFirst()
            .orElseThrow()
            .getMountPath();
    Set<String> read = new TreeSet<>();
    for (EnvVar env : pod.getContainers().get(0).getEnv()) {
      if (env.getName().startsWith("WARMMETAL_CA_")) {
        Path file = Path.of(env.getValue());
        assertThat(file.getParent().toString()).isEqualTo(mountPath);
        read.add(file.getFileName().toString());
      }
    }
    assertThat(read)
        .as("the files the API reads are the Secret's keys")
        .isEqualTo(documented.getValue());
  }

  @Test
  void theReadmesHelmTemplateCommandRendersAndItsLintIsTheTestedOne() throws Exception {
    String readme = Files.readString(CHART.resolve("README.md"));
    assertThat(readme).contains("helm lint --strict deploy/helm/warmmetal\n"); // itLintsStrictly
    Matcher block =
        Pattern.compile("helm template (\\S+) deploy/helm/warmmetal ((?:.|\\\\\n)*?) > ")
            .matcher(readme);
    assertThat(block.find()).as("a helm template command in the README").isTrue();
    String options = block.group(2).replace("\\\n", " ");
    Matcher namespace = Pattern.compile("--namespace (\\S+)").matcher(options);
    Matcher kubeVersion = Pattern.compile("--kube-version (\\S+)").matcher(options);
    assertThat(namespace.find() && kubeVersion.find()).as(options).isTrue();
    TemplateCommand command =
        helm()
            .template()
            .withName(block.group(1))
            .withNamespace(namespace.group(1))
            .withKubeVersion(kubeVersion.group(1));
    Matcher set = Pattern.compile("--set (\\S+?)=(\\S+)").matcher(options);
    while (set.find()) {
      command.set(set.group(1), set.group(2));
    }
    List<HasMetadata> chart = parse(command.call());
    assertThat(all(chart, Deployment.class))
        .extracting(d -> d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .containsExactlyInAnyOrder(
            imageRepository("api") + ":0.1.0", imageRepository("controller") + ":0.1.0");
    wiredTogether(chart);
  }
}
