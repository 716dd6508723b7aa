package io.warmmetal.e2e.cluster;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.warmmetal.api.testing.RequiredTool;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A real Kubernetes control plane — etcd, kube-apiserver, kube-controller-manager, kube-scheduler —
 * in a network namespace of its own, set up as {@code kubeadm init} would (its certificate,
 * kubeconfig, upload-config and bootstrap-token phases) without systemd or static pods.
 * kube-apiserver listens on {@link #endpoint()}, reachable from this host; nodes join it with
 * bootstrap tokens (TLS bootstrap, CSRs approved and signed by kube-controller-manager). {@link
 * #close()} stops everything and removes the namespace, mounts and files.
 */
public final class ControlPlane implements AutoCloseable {
  public static final String VERSION = "v1.20.2";
  private static final String CRI_SOCKET = "/run/containerd/containerd.sock";

  private final Sandbox sandbox;
  private final NetworkNamespace network;
  private final List<Daemon> daemons = new ArrayList<>();
  private final List<KubernetesClient> clients = new ArrayList<>();
  private KubernetesClient admin;

  private ControlPlane(Sandbox sandbox, NetworkNamespace network) {
    this.sandbox = sandbox;
    this.network = network;
  }

  /** Starts a control plane (building the binaries first if this machine has none cached). */
  public static ControlPlane start() throws Exception {
    RequiredTool.root("A real control plane (its network namespace, mounts and cgroups)");
    RequiredTool.onPath("ip", "iproute2");
    Path bin = KubeBinaries.dir();
    Sandbox sandbox = Sandbox.create();
    ControlPlane cp = null;
    try {
      cp = new ControlPlane(sandbox, NetworkNamespace.create(sandbox));
      cp.bootstrap(bin);
      return cp;
    } catch (Throwable t) {
      if (cp != null) {
        cp.close();
      } else {
        sandbox.close();
      }
      throw t;
    }
  }

  private void bootstrap(Path bin) throws Exception {
    Path dir = sandbox.dir;
    Path config = dir.resolve("kubeadm.yaml");
    Files.writeString(config, kubeadmConfig());
    Path kubeconfigs = dir.resolve("kubeconfig");
    Commands.run(
        network.enter(
            List.of(
                bin.resolve("kubeadm").toString(),
                "init",
                "phase",
                "certs",
                "all",
                "--config",
                config.toString())));
    Commands.run(
        network.enter(
            List.of(
                bin.resolve("kubeadm").toString(),
                "init",
                "phase",
                "kubeconfig",
                "all",
                "--config",
                config.toString(),
                "--kubeconfig-dir",
                kubeconfigs.toString())));

    // etcd on a tmpfs: the cluster is thrown away, and fsyncs on a shared disk would dominate every
    // write.
    Path etcdData = dir.resolve("etcd");
    Files.createDirectories(etcdData);
    Commands.run("mount", "-t", "tmpfs", "-o", "size=2g,mode=0700", "tmpfs", etcdData.toString());
    Path pki = pki();
    daemon(
        "etcd",
        List.of(
            "etcd",
            "--name",
            "e2e",
            "--data-dir",
            etcdData.resolve("data").toString(),
            "--listen-client-urls",
            "http://127.0.0.1:2379",
            "--advertise-client-urls",
            "http://127.0.0.1:2379",
            "--listen-peer-urls",
            "http://127.0.0.1:2380",
            "--initial-advertise-peer-urls",
            "http://127.0.0.1:2380",
            "--initial-cluster",
            "e2e=http://127.0.0.1:2380",
            "--logger",
            "zap",
            "--log-outputs",
            "stderr"));
    daemon(
        "kube-apiserver",
        List.of(
            bin.resolve("kube-apiserver").toString(),
            "--advertise-address=" + network.address(),
            "--bind-address=0.0.0.0",
            "--secure-port=6443",
            "--insecure-port=0",
            "--etcd-servers=http://127.0.0.1:2379",
            "--allow-privileged=true",
            "--client-ca-file=" + pki.resolve("ca.crt"),
            "--tls-cert-file=" + pki.resolve("apiserver.crt"),
            "--tls-private-key-file=" + pki.resolve("apiserver.key"),
            "--kubelet-client-certificate=" + pki.resolve("apiserver-kubelet-client.crt"),
            "--kubelet-client-key=" + pki.resolve("apiserver-kubelet-client.key"),
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            "--proxy-client-cert-file=" + pki.resolve("front-proxy-client.crt"),
            "--proxy-client-key-file=" + pki.resolve("front-proxy-client.key"),
            "--requestheader-client-ca-file=" + pki.resolve("front-proxy-ca.crt"),
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-username-headers=X-Remote-User",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=" + pki.resolve("sa.pub"),
            "--service-account-signing-key-file=" + pki.resolve("sa.key"),
            "--service-cluster-ip-range=10.96.0.0/12",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            "--enable-bootstrap-token-auth=true"));
    awaitDaemon(
        "kube-apiserver ready",
        () ->
            curl("https://" + endpoint() + "/readyz", "--cacert", pki.resolve("ca.crt").toString())
                .equals("ok"),
        60_000);

    daemon(
        "kube-controller-manager",
        List.of(
            bin.resolve("kube-controller-manager").toString(),
            "--kubeconfig=" + kubeconfigs.resolve("controller-manager.conf"),
            "--authentication-kubeconfig=" + kubeconfigs.resolve("controller-manager.conf"),
            "--authorization-kubeconfig=" + kubeconfigs.resolve("controller-manager.conf"),
            "--bind-address=127.0.0.1",
            "--port=10252",
            "--leader-elect=false",
            "--client-ca-file=" + pki.resolve("ca.crt"),
            "--root-ca-file=" + pki.resolve("ca.crt"),
            "--cluster-signing-cert-file=" + pki.resolve("ca.crt"),
            "--cluster-signing-key-file=" + pki.resolve("ca.key"),
            "--requestheader-client-ca-file=" + pki.resolve("front-proxy-ca.crt"),
            "--service-account-private-key-file=" + pki.resolve("sa.key"),
            "--use-service-account-credentials=true",
            "--controllers=*,bootstrapsigner,tokencleaner",
            "--allocate-node-cidrs=true",
            "--cluster-cidr=10.244.0.0/16",
            "--node-cidr-mask-size=24",
            "--service-cluster-ip-range=10.96.0.0/12"));
    daemon(
        "kube-scheduler",
        List.of(
            bin.resolve("kube-scheduler").toString(),
            "--kubeconfig=" + kubeconfigs.resolve("scheduler.conf"),
            "--authentication-kubeconfig=" + kubeconfigs.resolve("scheduler.conf"),
            "--authorization-kubeconfig=" + kubeconfigs.resolve("scheduler.conf"),
            "--bind-address=127.0.0.1",
            "--port=10251",
            "--leader-elect=false"));

    admin = client(Config.fromKubeconfig(Files.readString(kubeconfigs.resolve("admin.conf"))));
    // What kubeadm init uploads for joining nodes. Its kubelet step ends by annotating the
    // control-plane's Node,
    // which this control plane does not run: a placeholder Node (with the hostname label kubeadm
    // waits for) takes the
    // annotation and goes again.
    String placeholder = "warmmetal-e2e-control-plane";
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(placeholder)
                .withLabels(Map.of("kubernetes.io/hostname", placeholder))
                .endMetadata()
                .build())
        .create();
    Path adminConf = kubeconfigs.resolve("admin.conf");
    Commands.run(
        network.enter(
            List.of(
                bin.resolve("kubeadm").toString(),
                "init",
                "phase",
                "upload-config",
                "all",
                "--config",
                config.toString(),
                "--kubeconfig",
                adminConf.toString())),
        Map.of(),
        60);
    admin.nodes().withName(placeholder).delete();
    Commands.run(
        network.enter(
            List.of(
                bin.resolve("kubeadm").toString(),
                "init",
                "phase",
                "bootstrap-token",
                "--config",
                config.toString(),
                "--kubeconfig",
                adminConf.toString())));

    awaitDaemon(
        "kube-controller-manager healthy",
        () -> curl("http://127.0.0.1:10252/healthz").equals("ok"),
        60_000);
    awaitDaemon(
        "kube-scheduler healthy",
        () -> curl("http://127.0.0.1:10251/healthz").equals("ok"),
        60_000);
    // Its controllers are running once the token controller has given the default ServiceAccount a
    // token.
    awaitDaemon(
        "service account tokens",
        () -> {
          var sa = admin.serviceAccounts().inNamespace("default").withName("default").get();
          return sa != null && sa.getSecrets() != null && !sa.getSecrets().isEmpty();
        },
        60_000);
  }

  private String kubeadmConfig() {
    String a = network.address();
    return """
        apiVersion: kubeadm.k8s.io/v1beta2
        kind: InitConfiguration
        localAPIEndpoint: {advertiseAddress: %1$s, bindPort: 6443}
        nodeRegistration: {name: warmmetal-e2e-control-plane, criSocket: %2$s}
        ---
        apiVersion: kubeadm.k8s.io/v1beta2
        kind: ClusterConfiguration
        kubernetesVersion: %3$s
        clusterName: warmmetal-e2e
        certificatesDir: %4$s
        controlPlaneEndpoint: "%1$s:6443"
        apiServer: {certSANs: ["%1$s", "%5$s", "127.0.0.1"]}
        networking: {podSubnet: 10.244.0.0/16, serviceSubnet: 10.96.0.0/12, dnsDomain: cluster.local}
        ---
        apiVersion: kubelet.config.k8s.io/v1beta1
        kind: KubeletConfiguration
        cgroupDriver: cgroupfs
        failSwapOn: false
        # Where kubeadm join puts the cluster's CA on every node (kubeadm would default it to this control plane's
        # certificatesDir, which only kubelets on this host could read).
        authentication: {x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}}
        clusterDNS: [10.96.0.10]
        clusterDomain: cluster.local
        """
        .formatted(a, CRI_SOCKET, VERSION, pki(), network.nodeAddress());
  }

  private void daemon(String name, List<String> command) {
    daemons.add(
        Daemon.start(name, network.enter(command), sandbox.dir.resolve(name + ".log"), Map.of()));
  }

  /**
   * Waits for {@code condition}, failing early (with its log) if a daemon of the control plane
   * exits.
   */
  private void awaitDaemon(String what, BooleanSupplier condition, long timeoutMillis)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (true) {
      daemons.forEach(Daemon::checkAlive);
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException notYet) {
        // not answering yet
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  /**
   * An HTTP GET from inside the namespace (the components' health ports listen on its loopback).
   */
  private String curl(String url, String... options) {
    List<String> cmd = new ArrayList<>(List.of("curl", "-s", "--max-time", "2"));
    cmd.addAll(List.of(options));
    cmd.add(url);
    return Commands.attempt(network.enter(cmd), Map.of(), 10).output().strip();
  }

  private KubernetesClient client(Config config) {
    KubernetesClient c = new KubernetesClientBuilder().withConfig(config).build();
    clients.add(c);
    return c;
  }

  /** kubeadm's admin.conf: cluster-admin, the API server at {@link #endpoint()} (for Helm, say). */
  public Path adminKubeconfig() {
    return sandbox.dir.resolve("kubeconfig").resolve("admin.conf");
  }

  /** A client with cluster-admin rights (kubeadm's admin.conf). */
  public KubernetesClient admin() {
    return admin;
  }

  /** A client for a bearer token (a ServiceAccount's, say), trusting the cluster's CA. */
  public KubernetesClient clientWithToken(String token, String userAgent) {
    return client(
        new ConfigBuilder(Config.empty())
            .withMasterUrl("https://" + endpoint())
            .withCaCertData(admin.getConfiguration().getCaCertData())
            .withOauthToken(token)
            .withUserAgent(userAgent)
            .build());
  }

  /**
   * kube-apiserver's address, host:port, reachable from this host and from inside the namespace.
   */
  public String endpoint() {
    return network.address() + ":6443";
  }

  public NetworkNamespace network() {
    return network;
  }

  public Sandbox sandbox() {
    return sandbox;
  }

  public Path pki() {
    return sandbox.dir.resolve("pki");
  }

  /** The cluster CA's hash as kubeadm's discovery pins it: sha256 of its SubjectPublicKeyInfo. */
  public String caCertHash() throws Exception {
    try (InputStream in = Files.newInputStream(pki().resolve("ca.crt"))) {
      X509Certificate ca =
          (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      return "sha256:"
          + HexFormat.of()
              .formatHex(
                  MessageDigest.getInstance("SHA-256").digest(ca.getPublicKey().getEncoded()));
    }
  }

  @Override
  public void close() {
    clients.forEach(KubernetesClient::close);
    for (int i = daemons.size() - 1; i >= 0; i--) {
      daemons.get(i).close();
    }
    sandbox.close();
  }
}
