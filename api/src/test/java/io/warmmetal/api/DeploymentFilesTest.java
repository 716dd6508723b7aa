package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgConnectOptions;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.testing.ApiFixture;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.Yaml;
import picocli.CommandLine;

/**
 * What ships beside the code stays true to it: the API's cluster manifests ({@code
 * deploy/api.yaml}), {@code docker-compose.yml} and the images the build makes (Jib, in the
 * modules' poms) name only settings, flags, files, ports and images the code has.
 */
@ExtendWith(VertxExtension.class)
class DeploymentFilesTest {
  private static final Path ROOT = Path.of("..");

  /** What deploy/ and the chart's docs put where your registry goes. */
  static final String PLACEHOLDER_REGISTRY = "registry.example.com/warmmetal";

  private static Set<String> knownVariables() {
    Set<String> known = new HashSet<>(ApiConfig.variables());
    known.addAll(Main.LOGGING_VARIABLES);
    return known;
  }

  private static List<HasMetadata> manifests(String file) throws Exception {
    try (InputStream in = Files.newInputStream(ROOT.resolve("deploy").resolve(file))) {
      Object parsed = Serialization.unmarshal(in);
      return parsed instanceof List<?> docs
          ? docs.stream().map(HasMetadata.class::cast).toList()
          : ((KubernetesList) parsed).getItems();
    }
  }

  /** The jar {@code module}'s build makes, relative to the repository root. */
  static String jarOf(String module) throws Exception {
    String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
    return module
        + "/target/"
        + pom.replaceAll("(?s).*<finalName>(.+?)</finalName>.*", "$1")
        + ".jar";
  }

  /**
   * The agents' CA as {@code doc} says to make it — {@code java -jar JAR init-ca DIR}, then {@code
   * kubectl -n NS create secret generic NAME --from-file=…} — run as written: JAR is the API's, and
   * init-ca writes every file the Secret is made from. The Secret's name and keys.
   */
  static Map.Entry<String, Set<String>> documentedCaSecret(String doc) throws Exception {
    Matcher initCa = Pattern.compile("java -jar (\\S+) init-ca (\\S+)").matcher(doc);
    assertThat(initCa.find())
        .as("a `java -jar … init-ca DIR` in %s", doc.lines().findFirst().orElse(""))
        .isTrue();
    assertThat(initCa.group(1)).isEqualTo(jarOf("api"));
    Path workDir = Files.createTempDirectory("documented-ca");
    assertThat(
            new CommandLine(new Main())
                .execute("init-ca", workDir.resolve(initCa.group(2)).toString()))
        .isZero();
    Matcher secret =
        Pattern.compile("kubectl -n \\S+ create secret generic (\\S+)((?: --from-file=\\S+)+)")
            .matcher(doc);
    assertThat(secret.find())
        .as("a `kubectl create secret generic … --from-file=…` after init-ca")
        .isTrue();
    Set<String> keys = new TreeSet<>();
    for (String option : secret.group(2).strip().split(" ")) {
      Path file = workDir.resolve(option.substring("--from-file=".length()));
      assertThat(file).as("made by init-ca").isNotEmptyFile();
      keys.add(file.getFileName().toString());
    }
    return Map.entry(secret.group(1), keys);
  }

  @Test
  void theApiDeploymentSetsOnlySettingsTheApiReadsAndItsProbesAnswer(Vertx vertx) throws Exception {
    List<HasMetadata> docs = manifests("api.yaml");
    Deployment deployment =
        docs.stream()
            .filter(Deployment.class::isInstance)
            .map(Deployment.class::cast)
            .findFirst()
            .orElseThrow();
    Container api = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    Secret settings =
        docs.stream()
            .filter(Secret.class::isInstance)
            .map(Secret.class::cast)
            .filter(
                s ->
                    s.getMetadata()
                        .getName()
                        .equals(api.getEnvFrom().get(0).getSecretRef().getName()))
            .findFirst()
            .orElseThrow();
    Map<String, String> env = new HashMap<>(settings.getStringData());
    api.getEnv().forEach(e -> env.put(e.getName(), e.getValue()));
    assertThat(env.keySet())
        .isSubsetOf(knownVariables())
        .contains("WARMMETAL_DATABASE_URL", "WARMMETAL_ADMIN_TOKEN", "WARMMETAL_SECRET_KEY");
    ApiConfig config = ApiConfig.fromEnv(env); // every value is one the API accepts
    assertThat(api.getPorts())
        .extracting(p -> p.getContainerPort())
        .containsExactlyInAnyOrder(config.httpPort(), config.agentPort(), config.metricsPort());
    Map<String, Integer> ports = new HashMap<>();
    api.getPorts().forEach(p -> ports.put(p.getName(), p.getContainerPort()));

    // Prometheus finds /metrics on the management port, by the pod's annotations and by the metrics
    // Service.
    Map<String, String> annotations =
        deployment.getSpec().getTemplate().getMetadata().getAnnotations();
    assertThat(annotations)
        .containsEntry("prometheus.io/port", String.valueOf(config.metricsPort()))
        .containsEntry("prometheus.io/path", "/metrics");
    Service metrics =
        docs.stream()
            .filter(Service.class::isInstance)
            .map(Service.class::cast)
            .filter(s -> s.getMetadata().getName().equals("warmmetal-api-metrics"))
            .findFirst()
            .orElseThrow();
    assertThat(metrics.getSpec().getType())
        .as("the metrics Service stays inside the cluster")
        .isNull();
    assertThat(metrics.getSpec().getPorts())
        .singleElement()
        .satisfies(
            p ->
                assertThat(ports.get(p.getTargetPort().getStrVal()))
                    .isEqualTo(config.metricsPort()));
    // No other Service reaches the management port.
    docs.stream()
        .filter(Service.class::isInstance)
        .map(Service.class::cast)
        .filter(s -> s != metrics)
        .flatMap(s -> s.getSpec().getPorts().stream())
        .forEach(
            p ->
                assertThat(ports.get(p.getTargetPort().getStrVal()))
                    .isNotEqualTo(config.metricsPort()));

    // The CA files are the two init-ca writes, in the volume of the CA Secret the file's own
    // commands make; the
    // deploy README gives the same commands.
    Map.Entry<String, Set<String>> documented =
        documentedCaSecret(Files.readString(ROOT.resolve("deploy/api.yaml")));
    assertThat(documentedCaSecret(Files.readString(ROOT.resolve("deploy/README.md"))))
        .isEqualTo(documented);
    Volume caVolume =
        deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(
                v ->
                    v.getSecret() != null
                        && v.getSecret().getSecretName().equals(documented.getKey()))
            .findFirst()
            .orElseThrow();
    VolumeMount mount =
        api.getVolumeMounts().stream()
            .filter(m -> m.getName().equals(caVolume.getName()))
            .findFirst()
            .orElseThrow();
    Set<String> read = new TreeSet<>();
    for (Path file : List.of(config.caCertFile().orElseThrow(), config.caKeyFile().orElseThrow())) {
      assertThat(file.getParent().toString()).isEqualTo(mount.getMountPath());
      read.add(file.getFileName().toString());
    }
    assertThat(read)
        .as("the files the API reads are the Secret's keys")
        .isEqualTo(documented.getValue());

    // The probes' paths answer on a running API, on the port they name; /metrics on the management
    // port only.
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      for (Probe probe : List.of(api.getReadinessProbe(), api.getLivenessProbe())) {
        String path = probe.getHttpGet().getPath();
        assertThat(ports.get(probe.getHttpGet().getPort().getStrVal()))
            .as(path)
            .isEqualTo(config.httpPort());
        assertThat(fx.client.get(path, null).status()).as(path).isEqualTo(200);
      }
      assertThat(fx.management.get(annotations.get("prometheus.io/path"), null).status())
          .isEqualTo(200);
      assertThat(fx.client.get(annotations.get("prometheus.io/path"), null).status())
          .isEqualTo(404);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> compose() throws Exception {
    return new Yaml().load(Files.readString(ROOT.resolve("docker-compose.yml")));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> service(Map<String, Object> compose, String name) {
    return (Map<String, Object>) ((Map<String, Object>) compose.get("services")).get(name);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> environment(Map<String, Object> service) {
    Map<String, String> env = new HashMap<>();
    ((Map<String, Object>) service.getOrDefault("environment", Map.of()))
        .forEach((k, v) -> env.put(k, String.valueOf(v)));
    return env;
  }

  @SuppressWarnings("unchecked")
  private static List<String> command(Map<String, Object> service) {
    return (List<String>) service.get("command");
  }

  /** Where {@code service} mounts the named volume. */
  @SuppressWarnings("unchecked")
  private static String mountOf(Map<String, Object> service, String volume) {
    for (String spec : (List<String>) service.get("volumes")) {
      String[] parts = spec.split(":");
      if (parts[0].equals(volume)) {
        return parts[1];
      }
    }
    throw new AssertionError("no volume " + volume + " in " + service);
  }

  @Test
  @SuppressWarnings("unchecked")
  void theComposeFileWiresTheServicesTheWayTheCodeReadsThem() throws Exception {
    Map<String, Object> compose = compose();
    Map<String, String> postgres = environment(service(compose, "postgres"));
    Map<String, Object> apiService = service(compose, "api");
    Map<String, String> api = environment(apiService);
    assertThat(api.keySet()).isSubsetOf(knownVariables());
    ApiConfig config = ApiConfig.fromEnv(api);
    // The API and the agents' port for everyone; the management port (/metrics) for this host only.
    assertThat((List<String>) apiService.get("ports"))
        .containsExactlyInAnyOrder(
            config.httpPort() + ":" + config.httpPort(),
            config.agentPort() + ":" + config.agentPort(),
            "127.0.0.1:" + config.metricsPort() + ":" + config.metricsPort());

    PgConnectOptions db = Database.connectOptions(api.get("WARMMETAL_DATABASE_URL"));
    assertThat(db.getHost()).isEqualTo("postgres");
    assertThat(db.getUser()).isEqualTo(postgres.get("POSTGRES_USER"));
    assertThat(db.getPassword()).isEqualTo(postgres.get("POSTGRES_PASSWORD"));
    assertThat(db.getDatabase()).isEqualTo(postgres.get("POSTGRES_DB"));

    // One CA: made by init-ca into the volume, read by the API, trusted by the agents by its
    // certificate.
    Map<String, Object> ca = service(compose, "ca");
    assertThat(command(ca).get(0)).isEqualTo("init-ca");
    String caDir = command(ca).get(1);
    String volume = ((List<String>) ca.get("volumes")).get(0).split(":")[0];
    assertThat(caDir).isEqualTo(mountOf(ca, volume));
    assertThat(config.caCertFile().orElseThrow())
        .isEqualTo(Path.of(mountOf(apiService, volume), "ca.crt"));
    assertThat(config.caKeyFile().orElseThrow())
        .isEqualTo(Path.of(mountOf(apiService, volume), "ca.key"));

    // The simulated fleet: flags the simulator has, the API's agent port by a name in its
    // certificate, the CA and
    // the token.
    Map<String, Object> simulator = service(compose, "fleet");
    CommandLine.ParseResult fleet =
        new CommandLine(new io.warmmetal.fleet.Main())
            .parseArgs(command(simulator).toArray(String[]::new));
    URI agentPort = URI.create(fleet.matchedOptionValue("--api", ""));
    assertThat(agentPort.getHost()).isEqualTo("api").isIn(config.agentNames());
    assertThat(agentPort.getPort()).isEqualTo(config.agentPort());
    assertThat(Path.of(fleet.matchedOptionValue("--ca-file", Path.of("")).toString()))
        .isEqualTo(Path.of(mountOf(simulator, volume), "ca.crt"));
    Map<String, Object> token = service(compose, "token");
    String script = String.join(" ", command(token));
    assertThat(environment(token).get("ADMIN_TOKEN")).isEqualTo(api.get("WARMMETAL_ADMIN_TOKEN"));
    assertThat(script).contains("http://api:" + config.httpPort() + "/v1/enrollment-tokens");
    String tokenFile = fleet.matchedOptionValue("--token-file", Path.of("")).toString();
    assertThat(script).contains("> " + mountOf(token, "shared") + "/token");
    assertThat(tokenFile).isEqualTo(mountOf(simulator, "shared") + "/token");

    // The controller's flags exist.
    new CommandLine(new io.warmmetal.controller.Main())
        .parseArgs(command(service(compose, "controller")).toArray(String[]::new));
  }

  /** The root pom's property {@code name}. */
  static String rootProperty(String name) {
    try {
      Matcher m =
          Pattern.compile("<" + name + ">([^<]+)</" + name + ">")
              .matcher(Files.readString(ROOT.resolve("pom.xml")));
      assertThat(m.find()).as("the root pom's %s", name).isTrue();
      return m.group(1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The image the build makes for {@code module} (Jib, -Pimages): its reference. */
  static String builtImage(String module) {
    return rootProperty("images.registry")
        + "/warmmetal-"
        + module
        + ":"
        + rootProperty("images.tag");
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyImageNamedIsOneTheBuildMakesAndSaysHowItIsBuilt() throws Exception {
    String appVersion =
        (String)
            new Yaml()
                .<Map<String, Object>>load(
                    Files.readString(ROOT.resolve("deploy/helm/warmmetal/Chart.yaml")))
                .get("appVersion");
    assertThat(rootProperty("images.tag"))
        .as("the images' tag is the chart's")
        .isEqualTo(appVersion);
    // Each image's program is its module's: Jib's main class is the jar's.
    for (String module : List.of("api", "controller", "fleet")) {
      String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
      assertThat(pom).contains("<artifactId>jib-maven-plugin</artifactId>");
      Matcher main = Pattern.compile("<mainClass>([^<]+)</mainClass>").matcher(pom);
      Set<String> mains = new TreeSet<>();
      while (main.find()) {
        mains.add(main.group(1));
      }
      assertThat(mains).as("%s's image and jar run one program", module).hasSize(1);
    }
    // The controller's runs as the user deploy/controller.yaml runs it as; the API's has the agent
    // jar where WARMMETAL_AGENT_JAR says.
    String controllerPom = Files.readString(ROOT.resolve("controller/pom.xml"));
    Matcher user = Pattern.compile("<user>(\\d+)</user>").matcher(controllerPom);
    assertThat(user.find()).isTrue();
    assertThat(Files.readString(ROOT.resolve("deploy/controller.yaml")))
        .contains("runAsUser: " + user.group(1));
    String apiPom = Files.readString(ROOT.resolve("api/pom.xml"));
    assertThat(apiPom)
        .contains("<WARMMETAL_AGENT_JAR>/opt/warmmetal/warmmetal-agent.jar</WARMMETAL_AGENT_JAR>")
        .contains("<into>/opt/warmmetal</into>")
        .contains("<includes>" + Path.of(jarOf("agent")).getFileName() + "</includes>");
    // docker-compose.yml runs the build's images and never pulls one: none is published.
    Set<String> composed = new TreeSet<>();
    ((Map<String, Map<String, Object>>) compose().get("services"))
        .forEach(
            (name, service) -> {
              String image = (String) service.get("image");
              if (image.contains("warmmetal-")) {
                assertThat(service).as("%s", name).doesNotContainKey("build");
                assertThat(service.get("pull_policy"))
                    .as("%s never pulls", name)
                    .isEqualTo("never");
                composed.add(image);
              }
            });
    assertThat(composed)
        .containsExactlyInAnyOrder(
            builtImage("api"), builtImage("fleet"), builtImage("controller"));
    assertThat(Files.readString(ROOT.resolve("docker-compose.yml")))
        .contains("mvn -B package -Pimages -DskipTests")
        .contains("docker load -i $m/target/jib-image.tar");
    // deploy/'s manifests: a placeholder registry for yours, and how the image is made, above it.
    for (String file : List.of("api.yaml", "controller.yaml")) {
      String text = Files.readString(ROOT.resolve("deploy").resolve(file));
      assertThat(text).doesNotContain("ghcr.io");
      Matcher m =
          Pattern.compile(
                  "(?m)^ +image: "
                      + Pattern.quote(PLACEHOLDER_REGISTRY)
                      + "/warmmetal-([a-z]+):(\\S+)$")
              .matcher(text);
      assertThat(m.find()).as("a %s image in %s", PLACEHOLDER_REGISTRY, file).isTrue();
      assertThat(m.group(2)).isEqualTo(appVersion);
      assertThat(text)
          .contains("mvn -B package -Pimages: " + m.group(1) + "/target/jib-image.tar")
          .contains("no public");
    }
    // How to push them, to the registry deploy/ names.
    assertThat(Files.readString(ROOT.resolve("deploy/README.md")))
        .contains("skopeo copy \"docker-archive:$m/target/jib-image.tar\"")
        .contains("REGISTRY=" + PLACEHOLDER_REGISTRY);
  }
}
