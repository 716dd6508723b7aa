package io.warmmetal.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warmmetal.e2e.cluster.Commands;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.NodeHost;
import io.warmmetal.e2e.cluster.RealCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * WarmMetal's container images as a node's containerd runs them: the tarballs the build makes with
 * Jib ({@code -Pimages}, and the cluster tier, build them) import into containerd, and each runs
 * its program from its own entrypoint — on the runtime and classpath inside the image — as the user
 * it names (never root).
 */
@ExtendWith(RealCluster.class)
@Tag("cluster")
class ImagesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path REPO =
      Files.isDirectory(Path.of("..", "api")) ? Path.of("..") : Path.of(".");

  /** An image: the module that builds it, its program's name, the user it runs as. */
  private record Image(String module, String program, String user) {}

  private static final List<Image> IMAGES =
      List.of(
          new Image("api", "warmmetal-api", "10001"),
          new Image("controller", "warmmetal-controller", "65532"),
          new Image("fleet", "warmmetal-fleet", "10001"));

  @Test
  void eachImageRunsItsProgramFromItsEntrypointAsItsOwnUser(ControlPlane cluster) throws Exception {
    try (NodeHost host = NodeHost.create(cluster, "images")) {
      for (Image image : IMAGES) {
        Path tarball =
            REPO.resolve(image.module()).resolve("target/jib-image.tar").toAbsolutePath();
        assertThat(tarball)
            .as("%s: built by mvn -B package -Pimages (root), or the cluster tier", image.module())
            .exists();
        String ref =
            JSON.readTree(tarball.resolveSibling("jib-image.json").toFile()).path("image").asText();
        assertThat(ref).isEqualTo("localhost/warmmetal/" + image.program() + ":0.1.0");
        JsonNode config =
            JSON.readTree(Commands.run("tar", "-xOf", tarball.toString(), "config.json"));

        ok(
            host.run(
                "ctr",
                "-n",
                "k8s.io",
                "images",
                "import",
                "--snapshotter",
                "native",
                tarball.toString()));
        assertThat(ok(host.run("ctr", "-n", "k8s.io", "images", "ls", "-q"))).contains(ref);

        String user = ok(run(host, ref, image.module() + "-user", List.of("id", "-u")));
        assertThat(user.strip()).as("%s's user", image.module()).isEqualTo(image.user());

        List<String> help = new ArrayList<>();
        config.path("config").path("Entrypoint").forEach(e -> help.add(e.asText()));
        assertThat(help).as("%s's entrypoint", image.module()).startsWith("java");
        help.add("--help");
        assertThat(ok(run(host, ref, image.module() + "-help", help)))
            .as("%s's program, run from the image", image.module())
            .startsWith("Usage: " + image.program());
      }
    }
  }

  /** {@code command} in a container of {@code ref} on the host's containerd, removed after. */
  private static Commands.Result run(NodeHost host, String ref, String id, List<String> command) {
    List<String> ctr =
        new ArrayList<>(
            List.of("ctr", "-n", "k8s.io", "run", "--rm", "--snapshotter", "native", ref, id));
    ctr.addAll(command);
    return host.run(ctr.toArray(String[]::new));
  }

  private static String ok(Commands.Result result) {
    assertThat(result.ok()).as(result.output()).isTrue();
    return result.output();
  }
}
