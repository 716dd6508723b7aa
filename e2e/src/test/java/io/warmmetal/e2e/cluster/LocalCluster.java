package io.warmmetal.e2e.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Starts the fixture's control plane by hand, for poking at it: writes its admin kubeconfig to the
 * path given (default {@code ./e2e-kubeconfig}), prints how to reach it, and keeps it running until
 * this program is stopped (Ctrl-C), which removes it again.
 *
 * <pre>
 * mvn -B -q install -DskipTests && mvn -B -q -pl e2e exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.e2e.cluster.LocalCluster
 * </pre>
 */
public final class LocalCluster {
  private LocalCluster() {}

  public static void main(String[] args) throws Exception {
    Path kubeconfig = Path.of(args.length > 0 ? args[0] : "e2e-kubeconfig").toAbsolutePath();
    ControlPlane cp = ControlPlane.start();
    Runtime.getRuntime().addShutdownHook(new Thread(cp::close, "control-plane-teardown"));
    Files.copy(
        cp.sandbox().dir.resolve("kubeconfig/admin.conf"),
        kubeconfig,
        StandardCopyOption.REPLACE_EXISTING);
    System.out.printf(
        """
        Control plane %s up at https://%s (network namespace %s, files in %s).
          kubectl --kubeconfig %s get --raw /readyz
          nsenter --net=/var/run/netns/%s -- <command>    # run something inside its network
        Ctrl-C stops and removes it.
        """,
        ControlPlane.VERSION,
        cp.endpoint(),
        cp.network().name(),
        cp.sandbox().dir,
        kubeconfig,
        cp.network().name());
    Thread.currentThread().join();
  }
}
