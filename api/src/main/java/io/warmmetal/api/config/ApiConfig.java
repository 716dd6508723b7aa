package io.warmmetal.api.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Typed server configuration. Every setting has a {@code WARMMETAL_*} environment variable and a
 * sane default; {@link io.warmmetal.api.Main} lets command-line flags override them.
 *
 * @param httpHost interface to listen on ({@code WARMMETAL_HTTP_HOST}, default 0.0.0.0)
 * @param httpPort API port ({@code WARMMETAL_HTTP_PORT}, default 8080; 0 picks a free port)
 * @param metricsHost interface of the management port ({@code WARMMETAL_METRICS_HOST}, default: the
 *     API's, {@code WARMMETAL_HTTP_HOST})
 * @param metricsPort the management port: Prometheus {@code /metrics}, {@code /healthz}, {@code
 *     /readyz}, no authentication ({@code WARMMETAL_METRICS_PORT}, default 9090; 0 picks a free
 *     port)
 * @param databaseUrl PostgreSQL URL ({@code WARMMETAL_DATABASE_URL}); empty starts an embedded
 *     server
 * @param dataDir state directory: embedded database, generated admin token and secret key ({@code
 *     WARMMETAL_DATA_DIR}, default ./warmmetal-data)
 * @param adminToken bootstrap admin token ({@code WARMMETAL_ADMIN_TOKEN}); generated when empty
 * @param secretKey base64 AES-256 key sealing launch secrets ({@code WARMMETAL_SECRET_KEY});
 *     generated in the data directory when empty
 * @param dbPoolSize connections to PostgreSQL ({@code WARMMETAL_DB_POOL_SIZE}, default 32; agents
 *     setting up their channels take half at most)
 * @param poolInterval how often the pool manager reconciles ({@code WARMMETAL_POOL_INTERVAL_MS},
 *     default 1000)
 * @param verticles HTTP event-loop verticles ({@code WARMMETAL_HTTP_VERTICLES}, default: cores)
 * @param agentHost interface of the agent port ({@code WARMMETAL_AGENT_HOST}, default 0.0.0.0)
 * @param agentPort the agents' TLS port: enrollment and the channel ({@code WARMMETAL_AGENT_PORT},
 *     default 8443; 0 picks a free port)
 * @param agentNames host names and IPs agents reach the API by, put in the agent port's certificate
 *     ({@code WARMMETAL_AGENT_NAMES}, comma-separated, default localhost,127.0.0.1)
 * @param caCertFile the CA certificate (PEM) if not the generated one ({@code
 *     WARMMETAL_CA_CERT_FILE})
 * @param caKeyFile its private key (PEM) ({@code WARMMETAL_CA_KEY_FILE})
 * @param agentCertValidity how long agents' client certificates last ({@code
 *     WARMMETAL_AGENT_CERT_DAYS}, 365)
 * @param heartbeat how often agents send heartbeats ({@code WARMMETAL_HEARTBEAT_SECONDS}, default
 *     10)
 * @param offlineAfter silence after which a machine is offline ({@code
 *     WARMMETAL_OFFLINE_AFTER_SECONDS}, 45)
 * @param joinTimeout how long a delivered join may go without a result ({@code
 *     WARMMETAL_JOIN_TIMEOUT_SECONDS}, 600)
 * @param agentUrl the agent port's URL as servers reach it, given to agents installed over SSH
 *     ({@code WARMMETAL_AGENT_URL}; default https://first-agent-name:agent-port)
 * @param agentJar the agent jar installed over SSH ({@code WARMMETAL_AGENT_JAR}; default: the one
 *     the build leaves in agent/target, looked for beside the API jar and in the working directory)
 * @param agentInstallDir where an SSH install puts the agent on a server ({@code
 *     WARMMETAL_AGENT_INSTALL_DIR}, default /opt/warmmetal-agent)
 * @param sshTimeout how long one command over SSH may run ({@code WARMMETAL_SSH_TIMEOUT_SECONDS},
 *     60; an upload of the agent gets ten times as long)
 * @param powerTimeout how long one power call (BMC or Wake-on-LAN) may take ({@code
 *     WARMMETAL_POWER_TIMEOUT_SECONDS}, 30)
 * @param bootTimeout how long a machine switched on may take to boot before its silence counts
 *     ({@code WARMMETAL_BOOT_TIMEOUT_SECONDS}, 600)
 * @param powerOffCommand what the ssh power driver runs to switch a server off ({@code
 *     WARMMETAL_SSH_POWEROFF_COMMAND}, default: systemctl poweroff, else poweroff)
 * @param bootDir the node images servers network-boot into, one directory each as
 *     images/node/build.sh installs them ({@code WARMMETAL_BOOT_DIR}, default: boot in the data
 *     directory)
 * @param bootCmdline kernel parameters the iPXE script adds ({@code WARMMETAL_BOOT_CMDLINE},
 *     default console=tty0 console=ttyS0,115200)
 * @param bootImage the image servers boot when their pool names none ({@code WARMMETAL_BOOT_IMAGE},
 *     default: the one the boot directory's {@code default} link points at, else the only one)
 * @param rebootCommand what {@code recover} runs over SSH to reboot a server ({@code
 *     WARMMETAL_SSH_REBOOT_COMMAND}, default: systemctl reboot, else reboot)
 * @param launchBatchMax the most launches one database call carries ({@code
 *     WARMMETAL_LAUNCH_BATCH_MAX}, default 32; 1 sends each launch alone)
 * @param launchesInFlight the most launch calls in the database at once; launches arriving
 *     meanwhile go together in the next ({@code WARMMETAL_LAUNCH_CALLS}, default 4)
 * @param powerObserveMinInterval a live power observation of a machine within this of the last one
 *     gets that one's answer, not a new BMC session ({@code
 *     WARMMETAL_POWER_OBSERVE_MIN_INTERVAL_MS}, 5000)
 * @param powerObserveWorkers threads of the live observations' own pool, and the most observations
 *     under way at once ({@code WARMMETAL_POWER_OBSERVE_WORKERS}, 4)
 * @param httpIdleTimeout an API connection with nothing sent either way this long is closed ({@code
 *     WARMMETAL_HTTP_IDLE_TIMEOUT_SECONDS}, default 60)
 * @param httpHeaderTimeout how long each request on an API connection may take to send its headers,
 *     from its first byte (a new connection's first request: from the connection), before the
 *     connection is closed ({@code WARMMETAL_HTTP_HEADER_TIMEOUT_SECONDS}, default 10)
 * @param httpBodyTimeout how long a request's body may take to arrive before it is answered 408
 *     ({@code WARMMETAL_HTTP_BODY_TIMEOUT_SECONDS}, default 30)
 * @param httpMaxConnections open API connections at most; one beyond is closed at once ({@code
 *     WARMMETAL_HTTP_MAX_CONNECTIONS}, default 4096)
 * @param httpMaxConnectionsPerAddress open API connections from one client address (IPv6: one /64)
 *     at most ({@code WARMMETAL_HTTP_MAX_CONNECTIONS_PER_ADDRESS}, default 1024; behind a proxy
 *     that does not keep client addresses, the proxy's)
 * @param agentIdleTimeout the agent port's idle timeout, until a connection becomes the channel's
 *     WebSocket ({@code WARMMETAL_AGENT_IDLE_TIMEOUT_SECONDS}, default 60)
 * @param agentHeaderTimeout the agent port's header timeout ({@code
 *     WARMMETAL_AGENT_HEADER_TIMEOUT_SECONDS}, 10)
 * @param agentBodyTimeout the agent port's body timeout ({@code
 *     WARMMETAL_AGENT_BODY_TIMEOUT_SECONDS}, 30)
 * @param agentHandshakeTimeout how long a connection to the agent port may take to complete its TLS
 *     handshake ({@code WARMMETAL_AGENT_HANDSHAKE_TIMEOUT_SECONDS}, default 10)
 * @param agentMaxConnections open agent-port connections at most, channels included ({@code
 *     WARMMETAL_AGENT_MAX_CONNECTIONS}, default 12288: 10,000 agents with room)
 * @param agentMaxConnectionsPerAddress open agent-port connections from one address that have not
 *     shown a client certificate (enrolling, or still in their TLS handshake) at most; agents with
 *     certificates count only toward the total ({@code
 *     WARMMETAL_AGENT_MAX_CONNECTIONS_PER_ADDRESS}, 1024)
 * @param agentMaxConnectionsPerCertificate open agent-port connections with one verified client
 *     certificate at most, counted from its handshake: an agent needs its channel and a few
 *     requests ({@code WARMMETAL_AGENT_MAX_CONNECTIONS_PER_CERTIFICATE}, 4)
 * @param metricsMaxConnections open management-port connections at most; its clocks are the API
 *     port's ({@code WARMMETAL_METRICS_MAX_CONNECTIONS}, 64: Prometheus, the probes, an operator)
 * @param metricsMaxConnectionsPerAddress and from one client address ({@code
 *     WARMMETAL_METRICS_MAX_CONNECTIONS_PER_ADDRESS}, 16), so one client cannot keep the kubelet's
 *     probes out
 * @param console serve the fleet console at /console/ ({@code WARMMETAL_CONSOLE}, default true)
 * @param bootHttpsPort the boot endpoints ({@code /v1/boot/…}) also over HTTPS on this port, with a
 *     certificate from the API's CA for the agent names ({@code WARMMETAL_BOOT_HTTPS_PORT}; unset:
 *     not at all; 0 picks a free port)
 * @param bootMintBurst enrollment tokens one boot token may mint at once ({@code
 *     WARMMETAL_BOOT_MINT_BURST}, 40)
 * @param bootMintsPerMinute and how many a minute after that ({@code
 *     WARMMETAL_BOOT_MINTS_PER_MINUTE}, 60)
 * @param demoMachines start the fleet simulator beside the API with this many simulated machines,
 *     for trying the product on one host ({@code WARMMETAL_DEMO_MACHINES}, flag {@code --demo};
 *     default 0: none)
 * @param fleetJar the fleet simulator's jar the demo runs ({@code WARMMETAL_FLEET_JAR}; default:
 *     the one the build leaves in fleet/target, looked for as the agent jar is)
 */
public record ApiConfig(
    String httpHost,
    int httpPort,
    String metricsHost,
    int metricsPort,
    Optional<Secret> databaseUrl,
    Path dataDir,
    Optional<Secret> adminToken,
    Optional<Secret> secretKey,
    int dbPoolSize,
    Duration poolInterval,
    int verticles,
    String agentHost,
    int agentPort,
    List<String> agentNames,
    Optional<Path> caCertFile,
    Optional<Path> caKeyFile,
    Duration agentCertValidity,
    Duration heartbeat,
    Duration offlineAfter,
    Duration joinTimeout,
    Optional<String> agentUrl,
    Optional<Path> agentJar,
    String agentInstallDir,
    Duration sshTimeout,
    String rebootCommand,
    Duration powerTimeout,
    Duration bootTimeout,
    String powerOffCommand,
    Path bootDir,
    String bootCmdline,
    String bootImage,
    int launchBatchMax,
    int launchesInFlight,
    Duration powerObserveMinInterval,
    int powerObserveWorkers,
    Duration httpIdleTimeout,
    Duration httpHeaderTimeout,
    Duration httpBodyTimeout,
    int httpMaxConnections,
    int httpMaxConnectionsPerAddress,
    Duration agentIdleTimeout,
    Duration agentHeaderTimeout,
    Duration agentBodyTimeout,
    Duration agentHandshakeTimeout,
    int agentMaxConnections,
    int agentMaxConnectionsPerAddress,
    int agentMaxConnectionsPerCertificate,
    int metricsMaxConnections,
    int metricsMaxConnectionsPerAddress,
    boolean console,
    OptionalInt bootHttpsPort,
    int bootMintBurst,
    int bootMintsPerMinute,
    int demoMachines,
    Optional<Path> fleetJar) {

  /**
   * Two listeners of one Vert.x on one port would share its socket and split its connections
   * between them: the management port would answer API requests and the other way round. So the
   * ports must differ (0 picks free ones).
   */
  public ApiConfig {
    Map<String, Integer> ports = new LinkedHashMap<>();
    ports.put("WARMMETAL_HTTP_PORT", httpPort);
    ports.put("WARMMETAL_METRICS_PORT", metricsPort);
    ports.put("WARMMETAL_AGENT_PORT", agentPort);
    Map<Integer, String> seen = new HashMap<>();
    ports.forEach(
        (name, port) -> {
          String other = port == 0 ? null : seen.putIfAbsent(port, name);
          if (other != null) {
            throw new IllegalArgumentException(
                name + " must differ from " + other + ", both are " + port);
          }
        });
  }

  public static ApiConfig fromEnv() {
    return fromEnv(System.getenv());
  }

  /**
   * The names of every variable the configuration reads (for checking deployment manifests against
   * the code).
   */
  public static Set<String> variables() {
    EnvReader r = new EnvReader(Map.of());
    read(r);
    return r.asked();
  }

  public static ApiConfig fromEnv(Map<String, String> env) {
    return read(new EnvReader(env));
  }

  private static ApiConfig read(EnvReader r) {
    return new ApiConfig(
        r.string("WARMMETAL_HTTP_HOST", "0.0.0.0"),
        r.integer("WARMMETAL_HTTP_PORT", 8080, 0, 65535),
        r.string("WARMMETAL_METRICS_HOST", r.string("WARMMETAL_HTTP_HOST", "0.0.0.0")),
        r.integer("WARMMETAL_METRICS_PORT", 9090, 0, 65535),
        r.optional("WARMMETAL_DATABASE_URL").map(Secret::new),
        Path.of(r.string("WARMMETAL_DATA_DIR", "warmmetal-data")).toAbsolutePath().normalize(),
        r.optional("WARMMETAL_ADMIN_TOKEN").map(Secret::new),
        r.optional("WARMMETAL_SECRET_KEY").map(Secret::new),
        r.integer("WARMMETAL_DB_POOL_SIZE", 32, 1, 1000),
        Duration.ofMillis(r.integer("WARMMETAL_POOL_INTERVAL_MS", 1000, 10, 3_600_000)),
        r.integer("WARMMETAL_HTTP_VERTICLES", Runtime.getRuntime().availableProcessors(), 1, 256),
        r.string("WARMMETAL_AGENT_HOST", "0.0.0.0"),
        r.integer("WARMMETAL_AGENT_PORT", 8443, 0, 65535),
        List.of(r.string("WARMMETAL_AGENT_NAMES", "localhost,127.0.0.1").split("\\s*,\\s*")),
        r.optional("WARMMETAL_CA_CERT_FILE").map(Path::of),
        r.optional("WARMMETAL_CA_KEY_FILE").map(Path::of),
        Duration.ofDays(r.integer("WARMMETAL_AGENT_CERT_DAYS", 365, 1, 3650)),
        Duration.ofSeconds(r.integer("WARMMETAL_HEARTBEAT_SECONDS", 10, 1, 3600)),
        Duration.ofSeconds(r.integer("WARMMETAL_OFFLINE_AFTER_SECONDS", 45, 2, 86400)),
        Duration.ofSeconds(r.integer("WARMMETAL_JOIN_TIMEOUT_SECONDS", 600, 1, 86400)),
        r.optional("WARMMETAL_AGENT_URL"),
        r.optional("WARMMETAL_AGENT_JAR").map(Path::of),
        r.string("WARMMETAL_AGENT_INSTALL_DIR", "/opt/warmmetal-agent"),
        Duration.ofSeconds(r.integer("WARMMETAL_SSH_TIMEOUT_SECONDS", 60, 1, 3600)),
        r.string("WARMMETAL_SSH_REBOOT_COMMAND", "systemctl reboot || reboot"),
        Duration.ofSeconds(r.integer("WARMMETAL_POWER_TIMEOUT_SECONDS", 30, 1, 3600)),
        Duration.ofSeconds(r.integer("WARMMETAL_BOOT_TIMEOUT_SECONDS", 600, 1, 86400)),
        r.string("WARMMETAL_SSH_POWEROFF_COMMAND", "systemctl poweroff || poweroff"),
        r.optional("WARMMETAL_BOOT_DIR")
            .map(Path::of)
            .orElse(Path.of(r.string("WARMMETAL_DATA_DIR", "warmmetal-data"), "boot"))
            .toAbsolutePath()
            .normalize(),
        r.string("WARMMETAL_BOOT_CMDLINE", "console=tty0 console=ttyS0,115200"),
        r.optional("WARMMETAL_BOOT_IMAGE").orElse(null),
        r.integer("WARMMETAL_LAUNCH_BATCH_MAX", 32, 1, 1000),
        r.integer("WARMMETAL_LAUNCH_CALLS", 4, 1, 1000),
        Duration.ofMillis(r.integer("WARMMETAL_POWER_OBSERVE_MIN_INTERVAL_MS", 5000, 0, 3_600_000)),
        r.integer("WARMMETAL_POWER_OBSERVE_WORKERS", 4, 1, 64),
        Duration.ofSeconds(r.integer("WARMMETAL_HTTP_IDLE_TIMEOUT_SECONDS", 60, 1, 86400)),
        Duration.ofSeconds(r.integer("WARMMETAL_HTTP_HEADER_TIMEOUT_SECONDS", 10, 1, 3600)),
        Duration.ofSeconds(r.integer("WARMMETAL_HTTP_BODY_TIMEOUT_SECONDS", 30, 1, 3600)),
        r.integer("WARMMETAL_HTTP_MAX_CONNECTIONS", 4096, 1, 1_000_000),
        r.integer("WARMMETAL_HTTP_MAX_CONNECTIONS_PER_ADDRESS", 1024, 1, 1_000_000),
        Duration.ofSeconds(r.integer("WARMMETAL_AGENT_IDLE_TIMEOUT_SECONDS", 60, 1, 86400)),
        Duration.ofSeconds(r.integer("WARMMETAL_AGENT_HEADER_TIMEOUT_SECONDS", 10, 1, 3600)),
        Duration.ofSeconds(r.integer("WARMMETAL_AGENT_BODY_TIMEOUT_SECONDS", 30, 1, 3600)),
        Duration.ofSeconds(r.integer("WARMMETAL_AGENT_HANDSHAKE_TIMEOUT_SECONDS", 10, 1, 3600)),
        r.integer("WARMMETAL_AGENT_MAX_CONNECTIONS", 12288, 1, 1_000_000),
        r.integer("WARMMETAL_AGENT_MAX_CONNECTIONS_PER_ADDRESS", 1024, 1, 1_000_000),
        r.integer("WARMMETAL_AGENT_MAX_CONNECTIONS_PER_CERTIFICATE", 4, 1, 1024),
        r.integer("WARMMETAL_METRICS_MAX_CONNECTIONS", 64, 1, 1_000_000),
        r.integer("WARMMETAL_METRICS_MAX_CONNECTIONS_PER_ADDRESS", 16, 1, 1_000_000),
        r.bool("WARMMETAL_CONSOLE", true),
        r.optional("WARMMETAL_BOOT_HTTPS_PORT").isEmpty()
            ? OptionalInt.empty()
            : OptionalInt.of(r.integer("WARMMETAL_BOOT_HTTPS_PORT", 0, 0, 65535)),
        r.integer("WARMMETAL_BOOT_MINT_BURST", 40, 1, 100_000),
        r.integer("WARMMETAL_BOOT_MINTS_PER_MINUTE", 60, 1, 1_000_000),
        r.integer("WARMMETAL_DEMO_MACHINES", 0, 0, 1000),
        r.optional("WARMMETAL_FLEET_JAR").map(Path::of));
  }

  /**
   * A secret setting (it may hold a password): its value never appears in {@code toString}, so
   * configs can be logged.
   */
  public record Secret(String value) {
    @Override
    public String toString() {
      return "<redacted>";
    }
  }
}
