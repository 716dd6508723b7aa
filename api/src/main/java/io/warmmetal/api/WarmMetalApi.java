package io.warmmetal.api;

import com.sun.management.UnixOperatingSystemMXBean;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.AccessKeys;
import io.warmmetal.api.auth.AuthHandler;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.auth.TokenRoutes;
import io.warmmetal.api.auth.TokenStore;
import io.warmmetal.api.boot.BootImages;
import io.warmmetal.api.boot.NetworkBoot;
import io.warmmetal.api.channel.AgentChannel;
import io.warmmetal.api.channel.AgentPortVerticle;
import io.warmmetal.api.commands.CommandRoutes;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.config.BuiltJar;
import io.warmmetal.api.console.ConsoleRoutes;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.db.Database;
import io.warmmetal.api.db.EmbeddedPostgres;
import io.warmmetal.api.ec2.Ec2Endpoint;
import io.warmmetal.api.enrollment.AgentEndpoint;
import io.warmmetal.api.enrollment.EnrollmentRoutes;
import io.warmmetal.api.enrollment.EnrollmentTokens;
import io.warmmetal.api.events.EventRoutes;
import io.warmmetal.api.hardware.HardwareRecords;
import io.warmmetal.api.hardware.HardwareRoutes;
import io.warmmetal.api.http.ApiVerticle;
import io.warmmetal.api.http.HttpLimits;
import io.warmmetal.api.http.ManagementVerticle;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.SlowClients;
import io.warmmetal.api.instances.InstanceRoutes;
import io.warmmetal.api.instances.LaunchLatencyRoutes;
import io.warmmetal.api.lifecycle.LaunchBatching;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.machines.MachineRoutes;
import io.warmmetal.api.metrics.FleetMetrics;
import io.warmmetal.api.pools.PoolManager;
import io.warmmetal.api.pools.PoolRoutes;
import io.warmmetal.api.power.MachinePower;
import io.warmmetal.api.power.PowerRoutes;
import io.warmmetal.api.projects.ProjectRoutes;
import io.warmmetal.api.shapes.ShapeRoutes;
import io.warmmetal.api.ssh.AgentInstaller;
import io.warmmetal.api.ssh.Recovery;
import io.warmmetal.api.ssh.SshEnrollments;
import io.warmmetal.api.ssh.SshKeys;
import io.warmmetal.api.ssh.SshRoutes;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.protocol.CaPin;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API server, assembled: database (embedded unless a URL is given), migrations, the admin
 * token, the lifecycle, the pool manager and one HTTP verticle per core. {@link #start} and {@link
 * #stop} are all a caller needs.
 */
public final class WarmMetalApi {
  private static final Logger LOG = LoggerFactory.getLogger(WarmMetalApi.class);
  public static final String CONTRACT = "openapi.yaml";
  public static final String AGENT_CONTRACT = "agent-api.yaml";

  /** Jars, logs, the embedded database's files, SSH and BMC sessions: a generous allowance. */
  private static final int DESCRIPTORS_BESIDES_CONNECTIONS = 512;

  private final Vertx vertx;
  private final ApiConfig config;
  private EmbeddedPostgres embedded;
  private Pool db;
  private PoolManager poolManager;
  private String deploymentId;
  private String bootHttpsDeploymentId;
  private int port;
  private int bootHttpsPort = -1;
  private String managementDeploymentId;
  private int metricsPort;
  private int agentPort;
  private String agentDeploymentId;
  private CertificateAuthority ca;
  private AgentChannel channel;
  private PgConnectOptions connectOptions;
  private EnrollmentTokens enrollmentTokens;
  private HardwareRecords hardware;
  private BootImages bootImages;
  private Lifecycle lifecycle;
  private Ec2Endpoint ec2;
  private SshRunner ssh;
  private SshKeys sshKeys;
  private SshEnrollments sshEnrollments;
  private Recovery recovery;
  private MachinePower machinePower;
  private Optional<Path> agentJar = Optional.empty();
  private long cleanupTimer = -1;
  private DemoFleet demoFleet;

  private WarmMetalApi(Vertx vertx, ApiConfig config) {
    this.vertx = vertx;
    this.config = config;
  }

  public static Future<WarmMetalApi> start(Vertx vertx, ApiConfig config) {
    WarmMetalApi api = new WarmMetalApi(vertx, config);
    return api.startAll()
        .map(api)
        .recover(err -> api.stop().transform(x -> Future.failedFuture(err)));
  }

  private Future<Void> startAll() {
    FleetMetrics metrics = new FleetMetrics();
    return vertx
        .executeBlocking(this::connectOptions, false)
        .compose(options -> Database.migrate(vertx, options).map(options))
        .compose(
            options -> {
              connectOptions = options;
              db = Database.pool(vertx, options, config.dbPoolSize());
              return vertx.executeBlocking(
                  () ->
                      CertificateAuthority.loadOrCreate(
                          config.dataDir(), config.caCertFile(), config.caKeyFile()),
                  false);
            })
        .compose(
            authority -> {
              ca = authority;
              return vertx.executeBlocking(
                  () -> {
                    agentJar =
                        BuiltJar.locate(
                            config.agentJar(),
                            "agent",
                            AgentInstaller.JAR); // file lookups: off the loop
                    return DataDir.secretBox(config);
                  },
                  false);
            })
        .compose(
            secrets -> {
              enrollmentTokens = new EnrollmentTokens(vertx, db);
              hardware = new HardwareRecords(db);
              bootImages = new BootImages(vertx, config.bootDir(), config.bootImage());
              lifecycle =
                  Lifecycle.create(
                      vertx,
                      db,
                      secrets,
                      metrics,
                      ca,
                      config.agentCertValidity(),
                      enrollmentTokens,
                      hardware,
                      new LaunchBatching(config.launchBatchMax(), config.launchesInFlight()));
              startSsh(secrets);
              machinePower =
                  new MachinePower(
                      vertx,
                      db,
                      secrets,
                      sshKeys,
                      ssh,
                      config.powerTimeout(),
                      config.powerOffCommand(),
                      config.powerObserveMinInterval(),
                      config.powerObserveWorkers());
              poolManager =
                  new PoolManager(vertx, db, lifecycle, machinePower, config.poolInterval());
              // Agents reconnecting all at once (their replica died) may take half the database
              // pool, launches the rest.
              channel =
                  new AgentChannel(
                      vertx,
                      db,
                      new PgConnectOptions(connectOptions),
                      lifecycle,
                      secrets,
                      new AgentChannel.Timing(
                          config.heartbeat(),
                          config.offlineAfter(),
                          config.joinTimeout(),
                          config.bootTimeout()),
                      Math.max(2, config.dbPoolSize() / 2));
              metrics.agentsConnected(channel::connectedAgents);
              TokenStore tokens = new TokenStore(vertx, db, secrets);
              ec2 =
                  new Ec2Endpoint(
                      db, lifecycle, new AccessKeys(vertx, db, secrets, Clock.systemUTC()));
              return AdminToken.install(vertx, config, tokens)
                  .compose(x -> OpenAPIContract.from(vertx, CONTRACT))
                  .compose(
                      contract ->
                          deploy(contract, tokens, metrics)
                              .compose(x -> deployBootHttps(contract, tokens, metrics)))
                  .compose(x -> deployManagementPort(metrics))
                  .compose(x -> channel.start())
                  .compose(x -> deployAgentPort(metrics))
                  .compose(
                      x -> sshEnrollments.failInterrupted(config.sshTimeout().multipliedBy(20)))
                  .compose(
                      x -> DemoFleet.start(vertx, config, enrollmentTokens, agentPort, ca.pin()))
                  .onSuccess(fleet -> demoFleet = fleet)
                  .<Void>mapEmpty();
            })
        .onSuccess(
            x -> {
              warnIfCapsExceedDescriptors();
              poolManager.start();
              // Enrollment tokens pile up (one per network boot): those a week past their end go,
              // hourly.
              cleanupTimer =
                  vertx.setPeriodic(
                      60_000,
                      3_600_000,
                      id ->
                          enrollmentTokens
                              .deleteStale(Duration.ofDays(7))
                              .onFailure(
                                  err ->
                                      LOG.warn(
                                          "Deleting stale enrollment tokens failed: {}",
                                          err.getMessage())));
              LOG.info(
                  "WarmMetal API listening on {}:{}; agent port {}:{} (CA pin {}); management port {}:{}",
                  config.httpHost(),
                  port,
                  config.agentHost(),
                  agentPort,
                  ca.pin(),
                  config.metricsHost(),
                  metricsPort);
            });
  }

  /**
   * The connection caps are what keeps a flood of connections from using up the process's file
   * descriptors (which would stop the ports, and the database pool): they are no use above the
   * process's limit.
   */
  private void warnIfCapsExceedDescriptors() {
    if (!(ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean os)) {
      return;
    }
    long limit = os.getMaxFileDescriptorCount();
    long needed =
        (long) config.httpMaxConnections()
            + config.agentMaxConnections()
            + config.metricsMaxConnections()
            + config.dbPoolSize()
            + DESCRIPTORS_BESIDES_CONNECTIONS;
    if (needed > limit) {
      LOG.warn(
          "The connection caps (WARMMETAL_HTTP_MAX_CONNECTIONS {} + WARMMETAL_AGENT_MAX_CONNECTIONS {} + "
              + "WARMMETAL_METRICS_MAX_CONNECTIONS {}) with the database pool and open files need about {} file "
              + "descriptors, but this process may open {}: raise its limit (ulimit -n, LimitNOFILE, the "
              + "container's nofile) or lower the caps, or a flood of connections can use them all up and stop "
              + "the ports",
          config.httpMaxConnections(),
          config.agentMaxConnections(),
          config.metricsMaxConnections(),
          needed,
          limit);
    }
  }

  /** SSH: stored keys, installing agents over SSH, recovery. */
  private void startSsh(SecretBox secrets) {
    ssh = SshRunner.create(vertx);
    sshKeys = new SshKeys(vertx, db, secrets);
    AgentInstaller installer =
        new AgentInstaller(vertx, ssh, agentJar, config.agentInstallDir(), config.sshTimeout());
    sshEnrollments =
        new SshEnrollments(
            db,
            sshKeys,
            enrollmentTokens,
            installer,
            config.agentInstallDir(),
            () -> new AgentEndpoint(agentUrl(), ca.pin().value()));
    recovery = new Recovery(db, sshKeys, installer, config.rebootCommand());
  }

  /** The agents' port as servers reach it: configured, or the first of its certificate's names. */
  private String agentUrl() {
    return config.agentUrl().orElse("https://" + config.agentNames().get(0) + ":" + agentPort);
  }

  private PgConnectOptions connectOptions() throws Exception {
    DataDir.create(config.dataDir());
    if (config.databaseUrl().isPresent()) {
      return Database.connectOptions(config.databaseUrl().get().value());
    }
    embedded = EmbeddedPostgres.start(config.dataDir());
    embedded.ensureDatabase("warmmetal");
    return Database.connectOptions(embedded.url("warmmetal"));
  }

  private Future<Void> deploy(OpenAPIContract contract, TokenStore tokens, FleetMetrics metrics) {
    AuthHandler auth = new AuthHandler(contract, tokens);
    AtomicReference<ApiVerticle> first = new AtomicReference<>();
    SlowClients slowClients =
        new SlowClients(
            "API port",
            new HttpLimits(
                config.httpIdleTimeout(),
                config.httpHeaderTimeout(),
                config.httpBodyTimeout(),
                config.httpMaxConnections(),
                config.httpMaxConnectionsPerAddress()));
    metrics.connections("api", slowClients.connections()::open, slowClients.connections()::refused);
    return vertx
        .deployVerticle(
            () -> {
              ApiVerticle v =
                  new ApiVerticle(
                      contract,
                      config.httpHost(),
                      config.httpPort(),
                      auth,
                      auth::guard,
                      ops -> mountOperations(ops, tokens, metrics),
                      router -> mountOperational(router, slowClients),
                      slowClients);
              first.compareAndSet(null, v);
              return v;
            },
            new DeploymentOptions().setInstances(config.verticles()))
        .onSuccess(
            id -> {
              deploymentId = id;
              port = first.get().actualPort();
            })
        .mapEmpty();
  }

  /**
   * The boot endpoints over HTTPS, if configured: a certificate from the CA for the names servers
   * reach the API by (an iPXE built to trust the CA verifies it), TLS 1.2 and 1.3, {@code
   * /v1/boot/} only.
   */
  private Future<Void> deployBootHttps(
      OpenAPIContract contract, TokenStore tokens, FleetMetrics metrics) {
    if (config.bootHttpsPort().isEmpty()) {
      return Future.succeededFuture();
    }
    AuthHandler auth = new AuthHandler(contract, tokens);
    SlowClients slowClients =
        new SlowClients(
            "boot HTTPS port",
            new HttpLimits(
                config.httpIdleTimeout(),
                config.httpHeaderTimeout(),
                config.httpBodyTimeout(),
                config.httpMaxConnections(),
                config.httpMaxConnectionsPerAddress()));
    AtomicReference<ApiVerticle> verticle = new AtomicReference<>();
    return vertx
        .executeBlocking(
            () -> {
              CertificateAuthority.Issued server =
                  ca.issueServer(config.agentNames(), Duration.ofDays(825));
              return new ApiVerticle.Tls(
                  CertificateAuthority.pem(server.key()),
                  CertificateAuthority.pem(server.certificate())
                      + CertificateAuthority.pem(ca.certificate()),
                  "/v1/boot/");
            },
            false)
        .compose(
            tls ->
                vertx.deployVerticle(
                    () -> {
                      ApiVerticle v =
                          new ApiVerticle(
                              contract,
                              config.httpHost(),
                              config.bootHttpsPort().getAsInt(),
                              auth,
                              auth::guard,
                              ops -> mountOperations(ops, tokens, metrics),
                              router -> {},
                              slowClients,
                              tls);
                      verticle.compareAndSet(null, v);
                      return v;
                    },
                    new DeploymentOptions().setInstances(1)))
        .onSuccess(
            id -> {
              bootHttpsDeploymentId = id;
              bootHttpsPort = verticle.get().actualPort();
            })
        .mapEmpty();
  }

  /**
   * Health, readiness and (unless switched off) the fleet console's static files; no metrics on the
   * API port.
   */
  private void mountOperational(Router router, SlowClients slowClients) {
    // Ahead of the JSON API's root handlers (which take JSON bodies and bearer tokens only), just
    // behind the body timer; once its body is read, a request is timed and logged as theirs are.
    List<Handler<RoutingContext>> edge = new ArrayList<>(slowClients.rootHandlers());
    edge.add(ApiVerticle::accessLog);
    ec2.mount(router, Integer.MIN_VALUE + 2, ApiVerticle.BODY_LIMIT, edge);
    OperationalRoutes.mountProbes(router, db);
    if (config.console()) {
      ConsoleRoutes.mount(router);
    }
  }

  /**
   * The management port: {@code /metrics} and the probes, for Prometheus and the kubelet inside the
   * cluster.
   */
  private Future<Void> deployManagementPort(FleetMetrics metrics) {
    SlowClients slowClients =
        new SlowClients(
            "management port",
            new HttpLimits(
                config.httpIdleTimeout(),
                config.httpHeaderTimeout(),
                config.httpBodyTimeout(),
                config.metricsMaxConnections(),
                config.metricsMaxConnectionsPerAddress()));
    metrics.connections(
        "management", slowClients.connections()::open, slowClients.connections()::refused);
    ManagementVerticle verticle =
        new ManagementVerticle(
            config.metricsHost(),
            config.metricsPort(),
            slowClients,
            router -> OperationalRoutes.mountManagement(router, db, metrics));
    return vertx
        .deployVerticle(verticle)
        .onSuccess(
            id -> {
              managementDeploymentId = id;
              metricsPort = verticle.actualPort();
            })
        .mapEmpty();
  }

  /**
   * The agents' TLS port, with a server certificate issued now by the CA for the configured names.
   */
  private Future<Void> deployAgentPort(FleetMetrics metrics) {
    return vertx
        .executeBlocking(
            () -> {
              CertificateAuthority.Issued server =
                  ca.issueServer(config.agentNames(), Duration.ofDays(825));
              String caPem = CertificateAuthority.pem(ca.certificate());
              return new AgentPortVerticle.TlsMaterial(
                  CertificateAuthority.pem(server.key()),
                  CertificateAuthority.pem(server.certificate()) + caPem,
                  caPem);
            },
            false)
        .compose(
            tls ->
                OpenAPIContract.from(vertx, AGENT_CONTRACT)
                    .compose(
                        contract -> {
                          SlowClients limits =
                              AgentPortVerticle.limits(
                                  new HttpLimits(
                                      config.agentIdleTimeout(),
                                      config.agentHeaderTimeout(),
                                      config.agentBodyTimeout(),
                                      config.agentMaxConnections(),
                                      config.agentMaxConnectionsPerAddress()),
                                  config.agentMaxConnectionsPerCertificate());
                          metrics.connections(
                              "agents", limits.connections()::open, limits.connections()::refused);
                          // As many event loops as the API port's: 10,000 agents' frames,
                          // handshakes and set-ups on one loop left
                          // it the bottleneck of a replica taking over a dead one's agents.
                          AtomicReference<AgentPortVerticle> first = new AtomicReference<>();
                          return vertx
                              .deployVerticle(
                                  () -> {
                                    AgentPortVerticle verticle =
                                        new AgentPortVerticle(
                                            contract,
                                            config.agentHost(),
                                            config.agentPort(),
                                            tls,
                                            limits,
                                            config.agentHandshakeTimeout(),
                                            ops -> EnrollmentRoutes.mountAgentPort(ops, lifecycle),
                                            channel.handshakeHandler());
                                    first.compareAndSet(null, verticle);
                                    return verticle;
                                  },
                                  new DeploymentOptions().setInstances(config.verticles()))
                              .onSuccess(
                                  id -> {
                                    agentDeploymentId = id;
                                    agentPort = first.get().actualPort();
                                  });
                        }))
        .mapEmpty();
  }

  private void mountOperations(Operations ops, TokenStore tokens, FleetMetrics metrics) {
    InstanceRoutes.mount(ops, db, lifecycle);
    LaunchLatencyRoutes.mount(ops, metrics);
    MachineRoutes.mount(ops, db, lifecycle);
    CommandRoutes.mount(ops, db, lifecycle);
    ShapeRoutes.mount(ops, db);
    PoolRoutes.mount(ops, db, poolManager, bootImages);
    EventRoutes.mount(ops, db);
    ProjectRoutes.mount(ops, db);
    TokenRoutes.mount(ops, tokens, db);
    EnrollmentRoutes.mountAdmin(ops, enrollmentTokens);
    HardwareRoutes.mount(ops, hardware);
    SshRoutes.mount(ops, sshKeys, sshEnrollments, recovery);
    PowerRoutes.mount(
        ops,
        machinePower,
        poolManager::nudge,
        ctx -> AuthHandler.grants(ctx, Permission.OUT_OF_BAND));
    new NetworkBoot(
            db,
            enrollmentTokens,
            bootImages,
            config.bootCmdline(),
            () -> new AgentEndpoint(agentUrl(), ca.pin().value()),
            config.bootMintBurst(),
            config.bootMintsPerMinute(),
            () -> port)
        .mount(ops);
  }

  /** The port serving the boot endpoints over HTTPS, or -1 if none is configured. */
  public int bootHttpsPort() {
    return bootHttpsPort;
  }

  /** The agents' TLS port (enrollment and the channel). */
  public int agentPort() {
    return agentPort;
  }

  /** The pin agents verify the API by. */
  public CaPin caPin() {
    return ca.pin();
  }

  /** The port the API listens on (the configured one, or the one picked for port 0). */
  public int port() {
    return port;
  }

  /**
   * The management port ({@code /metrics}, {@code /healthz}, {@code /readyz}): configured, or
   * picked for 0.
   */
  public int metricsPort() {
    return metricsPort;
  }

  /**
   * The lifecycle service, for components in the same process (the agent channel reports results
   * through it).
   */
  public Lifecycle lifecycle() {
    return lifecycle;
  }

  public Pool database() {
    return db;
  }

  /** The agent channel of this replica. */
  public AgentChannel channel() {
    return channel;
  }

  public Future<Void> stop() {
    if (poolManager != null) {
      poolManager.stop();
    }
    if (ssh != null) {
      ssh.close();
    }
    if (cleanupTimer >= 0) {
      vertx.cancelTimer(cleanupTimer);
    }
    Future<Void> fleetStopped =
        demoFleet == null ? Future.succeededFuture() : demoFleet.stop(vertx);
    Future<Void> channelStopped =
        fleetStopped.transform(
            x -> channel == null ? Future.<Void>succeededFuture() : channel.stop());
    Future<Void> undeployed =
        channelStopped
            .transform(
                x ->
                    agentDeploymentId == null
                        ? Future.<Void>succeededFuture()
                        : vertx.undeploy(agentDeploymentId))
            .compose(
                x ->
                    deploymentId == null
                        ? Future.<Void>succeededFuture()
                        : vertx.undeploy(deploymentId))
            .compose(
                x ->
                    bootHttpsDeploymentId == null
                        ? Future.<Void>succeededFuture()
                        : vertx.undeploy(bootHttpsDeploymentId))
            .compose(
                x ->
                    managementDeploymentId == null
                        ? Future.<Void>succeededFuture()
                        : vertx.undeploy(managementDeploymentId));
    return undeployed
        .compose(x -> db == null ? Future.<Void>succeededFuture() : db.close())
        .eventually(
            () ->
                embedded == null
                    ? Future.succeededFuture()
                    : vertx.executeBlocking(
                        () -> {
                          embedded.close();
                          return null;
                        },
                        false));
  }
}
